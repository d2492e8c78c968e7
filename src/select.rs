//! A small, stable tool set per conversation turn, within what the caller's
//! policy allows: whole domains chosen by the message and kept in recency
//! order ([`by_domains`]), or keyword intents ([`by_intents`]).
//!
//! Both narrow, never widen, the caller's scope, and both always add the
//! universal tools the caller may see (not counted against `max_tools`).

use crate::catalog::Catalog;
use crate::extract::lemma;
use crate::model::{Link, Mention, MentionKind, Tool};
use crate::policy::data::Intent;
use crate::scope::Scope;
use crate::vocab;
use serde::{Deserialize, Serialize};

/// How a turn's tools are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    /// Whole domains the message is about, plus the most recent ones.
    #[default]
    Domains,
    /// Keyword intents (billing, scheduling…) from the graph.
    Intents,
}

impl Strategy {
    /// The strategy a graph value names (`domains`, `intents`).
    pub fn named(name: &str) -> Option<Self> {
        match name {
            "domains" => Some(Strategy::Domains),
            "intents" => Some(Strategy::Intents),
            _ => None,
        }
    }
}

/// Default budget of a domain selection.
pub const MAX_TOOLS: usize = 10;
/// The intent broker's default cap (design 001: 10-15 tools per call).
pub const INTENT_CAP: usize = 15;
pub const MAX_DOMAINS: usize = 3;
/// The intent broker falls back to the whole scope below this many tools.
pub const MIN_INTENT_TOOLS: usize = 5;

/// A domain left out of a turn, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Dropped {
    pub domain: String,
    pub reason: String,
}

/// The tools for one turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Selection {
    /// The strategy that chose them.
    pub strategy: Strategy,
    pub tool_names: Vec<String>,
    /// Chosen domains, most recent first (local names: `tasks`).
    pub domains: Vec<String>,
    pub dropped: Vec<Dropped>,
    /// What was decided, step by step.
    pub reasoning: Vec<String>,
    /// Under a goal: where the conversation's flow goes next.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<crate::policy::GoalHint>,
}

/// What the ranking of the message says.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ranking<'a> {
    /// Ranked tool indexes, best first.
    pub ranked: &'a [usize],
    /// Close contenders nothing told apart (their domains all count).
    pub contenders: &'a [usize],
    /// Nothing fits: the ranking says nothing about domains.
    pub abstain: bool,
    pub mentions: &'a [Mention],
}

fn name(iri: &str) -> String {
    vocab::local_name(iri).to_string()
}

/// A tool's finest domains: those none of its other domains is narrower
/// than. A tool in `travel` and its sub-domain `flights` is selected by
/// `flights`: a domain too big for `max_tools` is split in the ontology
/// into complete sub-domains, and selection works at the finest level.
fn finest<'t>(catalog: &Catalog, t: &'t Tool) -> impl Iterator<Item = &'t Link> {
    t.domains.iter().filter(move |d| {
        t.domains.len() == 1
            || !t.domains.iter().any(|o| {
                o.iri != d.iri
                    && catalog
                        .ancestors(&o.iri, 4)
                        .iter()
                        .any(|(a, _)| **a == *d.iri)
            })
    })
}

/// The broader domain of a sub-domain, if any (its first `skos:broader`).
fn parent_of(catalog: &Catalog, domain: &str) -> Option<String> {
    catalog
        .ancestors(domain, 1)
        .into_iter()
        .find(|(_, hops)| *hops == 1)
        .map(|(p, _)| p)
}

fn push_unique(into: &mut Vec<String>, iri: &str) {
    if !into.iter().any(|d| d == iri) {
        into.push(iri.to_string());
    }
}

/// The domains a message is about, most recent first. The entities it
/// names decide first: for each, the domain of the caller's tools acting on
/// it that the ranking puts highest (a "task" is a to-do or a work order as
/// the request reads), with the contenders' domains when the ranking cannot
/// tell them apart. They are ordered by their best-ranked tool, then the
/// later mention first (design 002, scenario 2: after "a task for my
/// fitness goal", tasks is dropped before goals). Without such evidence,
/// the ranking decides: the top match's domains, and the contenders' when
/// the request is ambiguous.
fn message_domains(catalog: &Catalog, scope: &Scope, ranking: &Ranking<'_>) -> Vec<String> {
    let rank_of = |i: usize| {
        ranking
            .ranked
            .iter()
            .position(|&r| r == i)
            .unwrap_or(usize::MAX)
    };
    let mut out = Vec::new();
    for m in ranking
        .mentions
        .iter()
        .filter(|m| matches!(m.kind, MentionKind::Entity | MentionKind::Brand))
    {
        let acting: Vec<usize> = scope
            .iter()
            .filter(|&i| {
                catalog.tools()[i]
                    .entities
                    .iter()
                    .any(|e| e.weight >= 0.5 && m.iris.iter().any(|r| *r.iri == *e.iri))
            })
            .collect();
        let best = acting.iter().copied().min_by_key(|&i| rank_of(i));
        let keep: Vec<usize> = match best {
            // Ranked: the best tool's domain and its close contenders'.
            Some(b) if rank_of(b) != usize::MAX => std::iter::once(b)
                .chain(
                    ranking
                        .contenders
                        .iter()
                        .copied()
                        .filter(|c| acting.contains(c)),
                )
                .collect(),
            // Nothing ranked acts on it: every domain acting on it.
            _ => acting,
        };
        let mut these = Vec::new();
        for i in keep {
            for d in finest(catalog, &catalog.tools()[i]) {
                push_unique(&mut these, &d.iri);
            }
        }
        // most recent first: this mention's domains go before earlier ones
        out.retain(|d| !these.contains(d));
        these.extend(std::mem::take(&mut out));
        out = these;
    }
    // The ranking orders what the message names: the domain of its best
    // match first (then the later mention first, as above).
    let best_in = |d: &String| {
        catalog
            .in_domain(d)
            .iter()
            .filter(|&&i| scope.contains(i))
            .map(|&i| rank_of(i))
            .min()
            .unwrap_or(usize::MAX)
    };
    out.sort_by_cached_key(best_in);
    if out.is_empty() && !ranking.abstain {
        let top = ranking.ranked.first().into_iter();
        for &i in top.chain(ranking.contenders) {
            for d in finest(catalog, &catalog.tools()[i]) {
                push_unique(&mut out, &d.iri);
            }
        }
    }
    out
}

/// The caller's tools of one domain, in catalog order.
fn domain_tools(catalog: &Catalog, scope: &Scope, domain: &str) -> Vec<usize> {
    catalog
        .in_domain(domain)
        .iter()
        .copied()
        .filter(|&i| scope.contains(i))
        .collect()
}

/// Domain selection: complete domains only, the message's first, then the
/// session's most recent; whole domains are dropped, oldest first, past
/// `max_tools` or `max_domains`. Returns the selection and the session's new
/// recency order (the chosen domains' IRIs).
pub(crate) fn by_domains(
    catalog: &Catalog,
    scope: &Scope,
    ranking: &Ranking<'_>,
    recent: &[String],
    max_tools: usize,
    max_domains: usize,
) -> (Selection, Vec<String>) {
    let mut reasoning = Vec::new();
    let current = message_domains(catalog, scope, ranking);
    if current.is_empty() {
        reasoning.push("the message names no domain: keeping the recent ones".to_string());
    } else {
        let names: Vec<String> = current.iter().map(|d| name(d)).collect();
        reasoning.push(format!("the message is about {}", names.join(", ")));
    }
    let mut order = current.clone();
    for d in recent {
        push_unique(&mut order, d);
    }
    let mut chosen: Vec<String> = Vec::new();
    let mut tools: Vec<usize> = Vec::new();
    let mut dropped = Vec::new();
    for d in &order {
        let members = domain_tools(catalog, scope, d);
        if members.is_empty() {
            continue;
        }
        let why = if chosen.len() >= max_domains {
            Some(format!("over max_domains {max_domains}"))
        } else if tools.len() + members.len() > max_tools {
            Some(format!(
                "its {} tools do not fit in max_tools {max_tools} ({} taken)",
                members.len(),
                tools.len()
            ))
        } else {
            None
        };
        let recency = if current.contains(d) {
            "named by this message"
        } else {
            "recent"
        };
        match why {
            Some(reason) => {
                reasoning.push(format!("dropped {} ({recency}): {reason}", name(d)));
                dropped.push(Dropped {
                    domain: name(d),
                    reason,
                });
            }
            None => {
                let within = parent_of(catalog, d).map_or(String::new(), |p| {
                    format!(
                        "; a sub-domain of {} ({} tools)",
                        name(&p),
                        domain_tools(catalog, scope, &p).len()
                    )
                });
                reasoning.push(format!(
                    "kept {} ({recency}, {} tools{within})",
                    name(d),
                    members.len()
                ));
                tools.extend(members);
                chosen.push(d.clone());
            }
        }
    }
    let universal: Vec<usize> = scope
        .iter()
        .filter(|&i| catalog.tools()[i].universal && !tools.contains(&i))
        .collect();
    if !universal.is_empty() {
        let names: Vec<&str> = universal
            .iter()
            .map(|&i| catalog.tools()[i].name.as_str())
            .collect();
        reasoning.push(format!(
            "always available (universal): {}",
            names.join(", ")
        ));
        tools.extend(universal);
    }
    let selection = Selection {
        strategy: Strategy::Domains,
        tool_names: tools
            .iter()
            .map(|&i| catalog.tools()[i].name.clone())
            .collect(),
        domains: chosen.iter().map(|d| name(d)).collect(),
        dropped,
        reasoning,
        goal: None,
    };
    (selection, chosen)
}

/// Whether `message` says `keyword`: a phrase as a substring between word
/// boundaries, a word by its lemma.
fn says(words: &[String], keyword: &str) -> bool {
    if keyword.contains(' ') {
        let hay = format!(" {} ", words.join(" "));
        return hay.contains(&format!(" {} ", keyword.to_lowercase()));
    }
    let k = lemma(keyword);
    words.iter().any(|w| lemma(w) == k)
}

/// The intent broker: the tools and categories of the intents the message's
/// keywords name, plus the session's recent tools and the universal tools;
/// the whole scope when no intent matches or fewer than
/// [`MIN_INTENT_TOOLS`] remain. `recent`: the tools called in the session,
/// most recent first (what was used, not what was offered). An intent set
/// larger than `cap` keeps the recent and universal tools and then the
/// intent tools `rank` puts first (design 001: 10-15 tools per call).
pub(crate) fn by_intents<'a>(
    catalog: &Catalog,
    intents: impl IntoIterator<Item = &'a Intent>,
    scope: &Scope,
    message: &str,
    recent: &[String],
    cap: usize,
    rank: &dyn Fn(&Scope) -> Vec<usize>,
) -> Selection {
    let words: Vec<String> = message
        .split(|c: char| !c.is_alphanumeric() && c != '-')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let mut reasoning = Vec::new();
    let n = catalog.tools().len();
    let mut picked = Scope::none(n);
    let mut matched = Vec::new();
    for intent in intents {
        let Some(k) = intent.keywords.iter().find(|k| says(&words, k)) else {
            continue;
        };
        matched.push(name(&intent.iri));
        reasoning.push(format!("intent {} (\"{k}\")", name(&intent.iri)));
        for i in scope.iter() {
            let t = &catalog.tools()[i];
            if intent.tools.contains(&t.iri)
                || t.categories
                    .iter()
                    .any(|c| intent.categories.iter().any(|i| **i == *c.iri))
            {
                picked.insert(i);
            }
        }
    }
    let mut kept = Scope::none(n);
    for r in recent {
        if let Some(i) = catalog.find(r).filter(|&i| scope.contains(i)) {
            kept.insert(i);
            if !picked.contains(i) {
                reasoning.push(format!("kept {r} (recent)"));
            }
        }
    }
    for i in scope.iter().filter(|&i| catalog.tools()[i].universal) {
        kept.insert(i);
    }
    let mut all = picked.clone();
    all.union(&kept);
    if matched.is_empty() || all.len() < MIN_INTENT_TOOLS {
        reasoning.push(if matched.is_empty() {
            "no intent named: every tool the caller may use".to_string()
        } else {
            format!(
                "only {} tools for {}: every tool the caller may use",
                all.len(),
                matched.join(", ")
            )
        });
        all = scope.clone();
    } else if all.len() > cap {
        let before = all.len();
        all = kept.clone();
        for i in rank(&picked) {
            if all.len() >= cap {
                break;
            }
            all.insert(i);
        }
        reasoning.push(format!(
            "{before} tools for {}: kept the recent and universal ones and the best-ranked, {} in all (cap {cap})",
            matched.join(", "),
            all.len()
        ));
    }
    let mut domains: Vec<String> = Vec::new();
    for i in all.iter() {
        for d in finest(catalog, &catalog.tools()[i]) {
            push_unique(&mut domains, &d.iri);
        }
    }
    Selection {
        strategy: Strategy::Intents,
        tool_names: all
            .iter()
            .map(|i| catalog.tools()[i].name.clone())
            .collect(),
        domains: domains.iter().map(|d| name(d)).collect(),
        dropped: Vec::new(),
        reasoning,
        goal: None,
    }
}
