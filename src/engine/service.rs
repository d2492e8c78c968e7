//! The service face: what every transport (HTTP, MCP, the command line)
//! asks of the engine, decided here once: the caller's access, the result
//! limit (default and maximum), whether explanations and parameters are
//! built (only when asked), the prompt rendering, and the outcomes an
//! operator subsystem hears of (a decomposed verb is a capability gap).
//! Every answer comes from one snapshot.

use super::Snapshot;
use super::requests::{
    DEFAULT_LIMIT, MAX_LIMIT, MAX_PROMPT_CONTEXT, MAX_PROMPT_TOKENS, MAX_TEXT, MAX_VERB, Prompt,
    PromptRequest, SelectRequest,
};
use super::{Decision, Engine, Match, Resolution, ResolveRequest, SearchRequest, SearchResponse};
use crate::error::{Error, Field, Result};
use crate::policy::{Access, Caller};
use crate::rank::Mode;
use crate::scope::Scope;
use crate::select::{self, Ranking, Selection, Strategy};

/// How much a bare follow-up lifts the conversation's last tool.
const FOLLOW_UP_BOOST: f32 = 1.3;

/// Hears of outcomes the engine sees while it answers (the airlock's gap
/// log subscribes, so that resolving a verb needs no airlock).
pub trait Observer: Send + Sync + std::fmt::Debug {
    /// `resolve` found no tool to substitute for `verb`, for `reason`.
    fn decomposed(&self, verb: &str, reason: &str);
}

/// The number of matches a request asks for: 0 is the default, more than
/// [`MAX_LIMIT`] is refused.
pub(crate) fn checked_limit(limit: usize, field: Field) -> Result<usize> {
    match limit {
        0 => Ok(DEFAULT_LIMIT),
        l if l > MAX_LIMIT => Err(Error::invalid_field(
            field,
            format!("limit is at most {MAX_LIMIT} (got {l})"),
        )),
        l => Ok(l),
    }
}

/// `Ok` when `text` is at most `max` bytes.
fn bounded(text: Option<&str>, max: usize, field: Field) -> Result<()> {
    match text {
        Some(t) if t.len() > max => Err(Error::invalid_field(
            field,
            format!("at most {max} bytes (got {})", t.len()),
        )),
        _ => Ok(()),
    }
}

impl Engine {
    /// Subscribes `observer` to the engine's outcomes (replacing the one
    /// before: one operator subsystem per engine).
    pub fn observe(&self, observer: std::sync::Arc<dyn Observer>) {
        *self
            .observer
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(observer);
    }

    /// Ranks the tools the caller may see (and, with `candidates`, only
    /// those) for a request. Other tools never reach ranking, counts,
    /// explanations, clarify questions or dependency lists.
    pub fn search(&self, req: &SearchRequest) -> Result<SearchResponse> {
        self.search_with(req, None)
    }

    /// [`Engine::search`] with the request's embedding computed already
    /// (evaluation runs embed their queries in batches).
    pub(crate) fn search_with(
        &self,
        req: &SearchRequest,
        vector: Option<Vec<f32>>,
    ) -> Result<SearchResponse> {
        let limit = checked_limit(req.limit, Field::SearchLimit)?;
        self.search_up_to(req, vector, Some(limit))
    }

    /// Every tool in the request's scope, ranked (the evaluation harness's
    /// channel features; no transport reaches it).
    pub(crate) fn search_everything(
        &self,
        req: &SearchRequest,
        vector: Option<Vec<f32>>,
    ) -> Result<SearchResponse> {
        self.search_up_to(req, vector, None)
    }

    /// A search on the current snapshot, at most `limit` matches (`None`:
    /// every tool in scope).
    fn search_up_to(
        &self,
        req: &SearchRequest,
        vector: Option<Vec<f32>>,
        limit: Option<usize>,
    ) -> Result<SearchResponse> {
        let snap = self.snapshot();
        let access = self.access(&snap, &req.caller)?;
        let limit = limit.unwrap_or_else(|| snap.catalog.len().max(1));
        if req.caller.session.is_none() {
            return self.search_in(&snap, access, req, vector, limit, None);
        }
        // In a conversation: a search that brings no context gets its
        // earlier turns, and is remembered as the latest one.
        let key = self.session_key(&req.caller);
        let session = self.sessions.get(&key);
        let turns = session.turns;
        let remembered;
        let with_turns = match req.context {
            None if !turns.is_empty() => {
                remembered = SearchRequest {
                    context: Some(turns.join("\n")),
                    ..req.clone()
                };
                &remembered
            }
            _ => req,
        };
        let last = session.recent_tools.first().map(String::as_str);
        let response = self.search_in(&snap, access, with_turns, vector, limit, last)?;
        self.sessions.update(&key, |s| s.remember_turn(&req.text));
        Ok(response)
    }

    /// A search within one snapshot and the caller's access to it (`last`:
    /// the tool the caller's conversation called last, which a bare
    /// follow-up likely asks for again).
    fn search_in(
        &self,
        snap: &Snapshot,
        access: Access,
        req: &SearchRequest,
        vector: Option<Vec<f32>>,
        limit: usize,
        last: Option<&str>,
    ) -> Result<SearchResponse> {
        bounded(Some(&req.text), MAX_TEXT, Field::SearchText)?;
        bounded(req.verb.as_deref(), MAX_VERB, Field::SearchVerb)?;
        bounded(req.context.as_deref(), MAX_TEXT, Field::SearchContext)?;
        if req.text.trim().is_empty() && req.verb.as_deref().is_none_or(|v| v.trim().is_empty()) {
            return Err(Error::invalid_field(
                Field::SearchText,
                "a search needs a text or a verb",
            ));
        }
        let limit = access.cap.map_or(limit, |cap| limit.min(cap));
        let catalog = &snap.catalog;
        let scope = match &req.candidates {
            Some(names) => catalog.named(&access.scope, names)?,
            None => access.scope.clone(),
        };
        let (query, mut ranked) = if access.boosts.is_empty() {
            self.rank(catalog, &scope, req, vector, limit)?
        } else {
            // A goal's boosts can lift a tool from anywhere in its (small,
            // capped) scope: rank it all, boost, keep the best `limit`.
            let (query, mut ranked) = self.rank(catalog, &scope, req, vector, scope.len())?;
            crate::rank::pipeline::boost(&mut ranked, &access.boosts, limit);
            (query, ranked)
        };
        if let Some(idx) = last.and_then(|n| catalog.find(n))
            && query.is_bare_follow_up()
            && ranked.tools.iter().any(|t| t.idx == idx)
        {
            let why = "the conversation's last tool: a follow-up that names no verb".to_string();
            crate::rank::pipeline::boost_marked(
                &mut ranked,
                &[(idx, FOLLOW_UP_BOOST, why)],
                limit,
                |d, b| d.conversation_boost = Some(b),
            );
        }
        let ambiguous = ranked.clarify.is_some();
        let matches = ranked
            .tools
            .into_iter()
            .filter_map(|r| {
                let t = catalog.tool(r.idx)?;
                Some(Match {
                    tool: t.name.clone(),
                    id: t.id.clone(),
                    score: r.details.fused,
                    confidence: r.confidence,
                    description: t.description.clone(),
                    categories: t.categories.iter().map(|c| c.label.to_string()).collect(),
                    details: r.details,
                    prerequisites: catalog.names_of(&r.prerequisites),
                    plan: r.plan,
                    requires_approval: access.approval.contains(r.idx),
                    input_schema: req.with_parameters.then(|| t.input_schema()),
                })
            })
            .collect();
        Ok(SearchResponse {
            matches,
            ambiguous,
            clarify: ranked.clarify,
            abstain: ranked.abstain,
            mentions: query.mentions(),
            mode: req.mode,
            warnings: access.warnings,
        })
    }

    /// Novel-verb resolver: substitute a catalog tool when one does the verb
    /// confidently, else advise decomposition with the nearest tools (the
    /// observer hears of it: a capability gap).
    pub fn resolve(&self, req: &ResolveRequest) -> Result<Resolution> {
        bounded(Some(&req.verb), MAX_VERB, Field::ResolveVerb)?;
        bounded(
            req.description.as_deref(),
            MAX_TEXT,
            Field::ResolveDescription,
        )?;
        bounded(req.context.as_deref(), MAX_TEXT, Field::ResolveContext)?;
        if req.verb.trim().is_empty() {
            return Err(Error::invalid_field(
                Field::ResolveVerb,
                "resolve needs a verb",
            ));
        }
        let text = [req.description.as_deref(), req.context.as_deref()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(". ");
        let response = self.search(&SearchRequest {
            text,
            verb: Some(req.verb.clone()),
            limit: 3,
            caller: req.caller.clone(),
            explain: false,
            ..SearchRequest::default()
        })?;
        let resolution = decide(req, response, self.rank.substitute_above);
        if resolution.decision == Decision::Decompose {
            let observer = self
                .observer
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone();
            if let Some(o) = observer {
                o.decomposed(&req.verb, &resolution.reason);
            }
        }
        Ok(resolution)
    }

    /// The tools for one conversation turn: whole domains the message is
    /// about kept in recency order, or keyword intents; always within what
    /// the caller may see.
    pub fn select(&self, req: &SelectRequest) -> Result<Selection> {
        bounded(
            Some(&req.session),
            crate::policy::MAX_NAME,
            Field::SelectSession,
        )?;
        bounded(Some(&req.message), MAX_TEXT, Field::SelectMessage)?;
        if req.session.trim().is_empty() {
            return Err(Error::invalid_field(
                Field::SelectSession,
                "select needs a session id",
            ));
        }
        let snap = self.snapshot();
        let catalog = &snap.catalog;
        let caller = Caller {
            session: Some(req.session.clone()),
            ..req.caller.clone()
        };
        let access = self.access(&snap, &caller)?;
        let key = self.session_key(&caller);
        let session = self.sessions.get(&key);
        let strategy = req
            .strategy
            .or_else(|| access.strategy.as_deref().and_then(Strategy::named))
            .unwrap_or_default();
        let mut selection = match strategy {
            Strategy::Domains => {
                let request = SearchRequest {
                    text: req.message.clone(),
                    mode: Mode::Joint,
                    explain: false,
                    ..SearchRequest::default()
                };
                let (query, ranked) = self.rank(catalog, &access.scope, &request, None, 5)?;
                let order: Vec<usize> = ranked.tools.iter().map(|t| t.idx).collect();
                let contenders: Vec<usize> = ranked
                    .clarify
                    .iter()
                    .flat_map(|c| c.contenders.iter().map(|ct| ct.idx))
                    .collect();
                let mentions = query.mentions();
                let ranking = Ranking {
                    ranked: &order,
                    contenders: &contenders,
                    abstain: ranked.abstain,
                    mentions: &mentions,
                };
                let (selection, recency) = select::by_domains(
                    catalog,
                    &access.scope,
                    &ranking,
                    &session.domains,
                    req.max_tools.unwrap_or(select::MAX_TOOLS),
                    req.max_domains.unwrap_or(select::MAX_DOMAINS),
                );
                self.sessions.update(&key, |s| s.domains = recency);
                selection
            }
            Strategy::Intents => {
                let cap = req.max_tools.unwrap_or(select::INTENT_CAP);
                let rank = |within: &Scope| -> Vec<usize> {
                    let request = SearchRequest {
                        text: req.message.clone(),
                        mode: Mode::Joint,
                        explain: false,
                        limit: cap,
                        ..SearchRequest::default()
                    };
                    self.rank(catalog, within, &request, None, cap)
                        .map(|(_, ranked)| ranked.tools.iter().map(|t| t.idx).collect())
                        .unwrap_or_default()
                };
                select::by_intents(
                    catalog,
                    snap.policy.data.intents.values(),
                    &access.scope,
                    &req.message,
                    &session.recent_tools,
                    cap,
                    &rank,
                )
            }
        };
        selection.goal = snap.policy.goal_hint(caller.goal.as_deref());
        Ok(selection)
    }

    /// The tool-selection prompt for an LLM: the tools named, or a search's
    /// matches, that the caller may see, rendered within a token budget;
    /// one snapshot and one policy resolution for both.
    pub fn prompt(&self, req: &PromptRequest) -> Result<Prompt> {
        if req.budget_tokens == 0 || req.budget_tokens > MAX_PROMPT_TOKENS {
            return Err(Error::invalid_field(
                Field::PromptBudget,
                format!("budget_tokens is 1 to {MAX_PROMPT_TOKENS}"),
            ));
        }
        bounded(
            req.context.as_deref(),
            MAX_PROMPT_CONTEXT,
            Field::PromptContext,
        )?;
        let snap = self.snapshot();
        let access = self.access(&snap, &req.caller)?;
        let catalog = &snap.catalog;
        let (idxs, warnings) = match &req.tools {
            // Tools the caller may not see (or that do not exist) are
            // left out alike; `tools` in the answer says what was rendered.
            Some(names) => (
                names
                    .iter()
                    .filter_map(|n| catalog.find(n))
                    .filter(|&i| access.scope.contains(i))
                    .collect(),
                access.warnings.clone(),
            ),
            None => {
                let search = SearchRequest {
                    text: req.text.clone(),
                    verb: req.verb.clone(),
                    limit: req.limit,
                    caller: req.caller.clone(),
                    explain: false,
                    ..SearchRequest::default()
                };
                let scope = access.scope.clone();
                let limit = checked_limit(req.limit, Field::SearchLimit)?;
                let found = self.search_in(&snap, access, &search, None, limit, None)?;
                let idxs: Vec<usize> = found
                    .matches
                    .iter()
                    .filter_map(|m| catalog.find(&m.id))
                    .filter(|&i| scope.contains(i))
                    .collect();
                (idxs, found.warnings)
            }
        };
        let scope = Scope::of(catalog.len(), idxs.iter().copied());
        // Design 000's tool-selection prompt: the goal, the context, the
        // tools (within what the budget leaves), what to answer.
        let mut head = String::new();
        if let Some(g) = req
            .caller
            .goal
            .as_deref()
            .and_then(|n| snap.policy.goal_named(n))
        {
            let label = snap.policy.data.label(&g.iri);
            head.push_str(&format!(
                "You are executing goal: {} ({label})",
                crate::vocab::local_name(&g.iri)
            ));
            if let Some(d) = &g.comment {
                head.push_str(&format!(": {d}"));
            }
            head.push('\n');
        }
        if let Some(c) = req
            .context
            .as_deref()
            .map(str::trim)
            .filter(|c| !c.is_empty())
        {
            head.push_str(&format!("\nCurrent context:\n{c}\n"));
        }
        head.push_str(if req.caller.goal.is_some() {
            "\nAvailable tools for this goal:\n"
        } else {
            "\nAvailable tools:\n"
        });
        let foot = "\nBased on the current context and your task, select the appropriate tool and construct the arguments.\nRespond in JSON: {\"tool\": \"tool_name\", \"arguments\": {...}, \"reasoning\": \"why this tool\"}\n";
        let framing = (head.len() + foot.len()).div_ceil(4);
        let (tools, rendered) =
            catalog.render_prompt(&idxs, &scope, req.budget_tokens.saturating_sub(framing));
        Ok(Prompt {
            // Nothing to choose from: no prompt at all.
            prompt: if rendered.is_empty() {
                String::new()
            } else {
                format!("{head}{tools}{foot}")
            },
            tools: catalog.names_of(&rendered),
            warnings,
        })
    }
}

/// Substitute when the top match is confident and nothing is ambiguous,
/// else decompose, saying why.
fn decide(req: &ResolveRequest, response: SearchResponse, threshold: f32) -> Resolution {
    let Some(m) = response.matches.first() else {
        return Resolution {
            decision: Decision::Decompose,
            tool: None,
            confidence: 0.0,
            reason: "no tool is available to this caller".into(),
            nearest: Vec::new(),
        };
    };
    if m.confidence >= threshold && !response.ambiguous {
        return Resolution {
            decision: Decision::Substitute,
            tool: Some(m.tool.clone()),
            confidence: m.confidence,
            reason: format!(
                "`{}` matches {} with confidence {:.2} (threshold {threshold:.2})",
                m.tool, req.verb, m.confidence
            ),
            nearest: response.matches.clone(),
        };
    }
    let reason = if response.ambiguous {
        format!(
            "{} is ambiguous between close tools: {}",
            req.verb,
            response
                .clarify
                .as_ref()
                .map(|c| c.question.clone())
                .unwrap_or_default()
        )
    } else {
        format!(
            "no tool does {} confidently: the nearest, `{}`, has confidence {:.2} < {threshold:.2}",
            req.verb, m.tool, m.confidence
        )
    };
    Resolution {
        decision: Decision::Decompose,
        tool: None,
        confidence: m.confidence,
        reason,
        nearest: response.matches,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_have_one_default_and_one_maximum() {
        assert_eq!(checked_limit(0, Field::SearchLimit).unwrap(), DEFAULT_LIMIT);
        assert_eq!(checked_limit(7, Field::SearchLimit).unwrap(), 7);
        assert_eq!(
            checked_limit(MAX_LIMIT, Field::SearchLimit).unwrap(),
            MAX_LIMIT
        );
        for huge in [MAX_LIMIT + 1, 1_000_000_000_000, usize::MAX] {
            let e = checked_limit(huge, Field::SearchLimit).unwrap_err();
            assert_eq!(e.field().map(|(f, _)| f), Some(Field::SearchLimit), "{e}");
        }
    }
}
