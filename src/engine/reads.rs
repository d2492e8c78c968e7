//! Reads of the catalog through the caller's policy: counts, listings,
//! one tool, domains, a policy explanation, and session failures.

use super::{DependencyEdge, DomainCount, Engine, ListRequest, ListedTool, ToolFilter, ToolPage};
use crate::catalog::Catalog;
use crate::error::{Error, Field, Kind, Result};
use crate::model::Tool;
use crate::policy::Access;
use crate::policy::{Caller, Explanation};
use crate::scope::Scope;
use std::sync::PoisonError;

/// Tool `i` as a caller with `access` sees it: its dependencies only on
/// tools that caller may see too (a hidden tool named there was how a
/// caller learned of `flight_checkin` while it answered 404; one that
/// resolves to no tool goes too, so the two look alike).
fn as_seen(c: &Catalog, access: &Access, i: usize) -> Option<ListedTool> {
    let mut tool = c.tools().get(i)?.clone();
    tool.depends_on
        .retain(|d| c.find(&d.on).is_some_and(|j| access.scope.contains(j)));
    Some(ListedTool {
        tool,
        requires_approval: access.approval.contains(i),
    })
}

impl Engine {
    /// How many tools `caller` may see (the policy resolution alone).
    pub fn visible(&self, caller: &Caller) -> Result<usize> {
        let snap = self.snapshot();
        Ok(self.access(&snap, caller)?.scope.len())
    }

    /// Every tool the platform allows (an anonymous caller's listing).
    pub fn tools(&self) -> Vec<Tool> {
        self.list(&ListRequest::default())
            .map(|page| page.tools.into_iter().map(|t| t.tool).collect())
            .unwrap_or_default()
    }

    /// The tools a caller may see, filtered by domain and/or source, one page.
    pub fn list(&self, req: &ListRequest) -> Result<ToolPage> {
        let snap = self.snapshot();
        let c = &snap.catalog;
        let access = self.access(&snap, &req.caller)?;
        let mut scope = access.scope.clone();
        if let Some(d) = &req.filter.domain {
            scope.intersect(&Scope::of(c.tools().len(), c.in_domain(d).iter().copied()));
        }
        if let Some(s) = &req.filter.source {
            scope.intersect(&Scope::of(c.tools().len(), c.of_source(s).iter().copied()));
        }
        let limit = if req.limit == 0 {
            usize::MAX
        } else {
            req.limit
        };
        let tools = scope
            .iter()
            .skip(req.offset)
            .take(limit)
            .filter_map(|i| as_seen(c, &access, i))
            .collect();
        Ok(ToolPage {
            tools,
            total: scope.len(),
            offset: req.offset,
            warnings: access.warnings,
        })
    }

    /// The tools of one domain and/or one source the platform allows.
    pub fn tools_where(&self, filter: &ToolFilter) -> Vec<Tool> {
        let req = ListRequest {
            filter: filter.clone(),
            ..ListRequest::default()
        };
        self.list(&req)
            .map(|page| page.tools.into_iter().map(|t| t.tool).collect())
            .unwrap_or_default()
    }

    /// One tool (by name, id or IRI) as `caller` sees it; a tool the caller
    /// may not see is not found, like a missing one.
    pub fn tool_for(&self, caller: &Caller, key: &str) -> Result<ListedTool> {
        let snap = self.snapshot();
        let access = self.access(&snap, caller)?;
        snap.catalog
            .find(key)
            .filter(|&i| access.scope.contains(i))
            .and_then(|i| as_seen(&snap.catalog, &access, i))
            .ok_or_else(|| Error::not_found(Kind::Tool, key))
    }

    /// One tool the platform allows, by name, id or IRI.
    pub fn tool(&self, key: &str) -> Option<Tool> {
        self.tool_for(&Caller::default(), key).ok().map(|t| t.tool)
    }

    /// The domains a caller may see tools of, with how many (`domain:X`
    /// grouping, from `tg:inDomain`), largest first.
    pub fn domains(&self, caller: &Caller) -> Result<Vec<DomainCount>> {
        let snap = self.snapshot();
        let c = &snap.catalog;
        let access = self.access(&snap, caller)?;
        let mut out: Vec<DomainCount> = c
            .domains()
            .map(|(iri, tools)| DomainCount {
                domain: crate::vocab::local_name(iri).to_string(),
                iri: iri.to_string(),
                label: c.label(iri),
                tools: tools.iter().filter(|&&i| access.scope.contains(i)).count(),
            })
            .filter(|d| d.tools > 0)
            .collect();
        out.sort_by(|a, b| b.tools.cmp(&a.tools).then(a.domain.cmp(&b.domain)));
        Ok(out)
    }

    /// The goals, in flow order, as `caller` has them: each one's boundary,
    /// next goals and agents, how many tools the caller has under it, the
    /// listed tools it has, and warnings for the listed tools it lacks.
    pub fn goals(&self, caller: &Caller) -> Result<Vec<crate::policy::GoalInfo>> {
        let snap = self.snapshot();
        let c = &snap.catalog;
        let mut out = Vec::new();
        for (iri, mut info) in snap.policy.goals() {
            let under = Caller {
                goal: Some(iri.clone()),
                ..caller.clone()
            };
            let access = self.access(&snap, &under)?;
            info.tools = access.scope.len();
            info.available_tools = snap
                .policy
                .data
                .goals
                .get(&iri)
                .into_iter()
                .flat_map(|g| &g.tools)
                .filter_map(|t| c.iri_index(t))
                .filter(|&i| access.scope.contains(i))
                .map(|i| c.tools()[i].name.clone())
                .collect();
            info.warnings = access.warnings;
            out.push(info);
        }
        Ok(out)
    }

    /// Each policy layer's verdict on one tool for `caller` (an operator's
    /// view: it names tools the caller may not see).
    pub fn explain_policy(&self, caller: &Caller, tool: &str) -> Result<Explanation> {
        let snap = self.snapshot();
        let idx = snap
            .catalog
            .find(tool)
            .ok_or_else(|| Error::not_found(Kind::Tool, tool))?;
        let failed = self.failed_in(caller);
        let limits = self.limits.read().unwrap_or_else(PoisonError::into_inner);
        snap.policy.explain(
            &snap.catalog,
            caller,
            &failed,
            &limits,
            crate::policy::limits::now(),
            idx,
        )
    }

    /// An operator's view of one caller: the verdicts on every tool that a
    /// layer hides from it or makes it ask approval for, in catalog order.
    pub fn hidden_from(&self, caller: &Caller) -> Result<Vec<Explanation>> {
        let snap = self.snapshot();
        let access = self.access(&snap, caller)?;
        let failed = self.failed_in(caller);
        let limits = self.limits.read().unwrap_or_else(PoisonError::into_inner);
        let now = crate::policy::limits::now();
        (0..snap.catalog.tools().len())
            .filter(|&i| !access.scope.contains(i) || access.approval.contains(i))
            .map(|i| {
                snap.policy
                    .explain(&snap.catalog, caller, &failed, &limits, now, i)
            })
            .collect()
    }

    /// The `dependsOn` edges among the tools `caller` may see, declared and
    /// inferred (any confidence; `followed` says whether ranking follows
    /// it), of one tool or, without `tool`, of all; by tool, then declared
    /// before inferred, then by confidence, then catalog order.
    pub fn dependencies(&self, caller: &Caller, tool: Option<&str>) -> Result<Vec<DependencyEdge>> {
        let snap = self.snapshot();
        let c = &snap.catalog;
        let access = self.access(&snap, caller)?;
        let from: Vec<usize> = match tool {
            Some(key) => vec![
                c.find(key)
                    .filter(|&i| access.scope.contains(i))
                    .ok_or_else(|| Error::not_found(Kind::Tool, key))?,
            ],
            None => access.scope.iter().collect(),
        };
        let threshold = self.rank.infer_threshold;
        let mut out = Vec::new();
        for i in from {
            out.extend(
                c.deps()
                    .edges(i)
                    .into_iter()
                    .filter(|&(j, _)| access.scope.contains(j))
                    .filter_map(|(j, e)| {
                        Some(DependencyEdge {
                            tool: c.tools().get(i)?.name.clone(),
                            on: c.tools().get(j)?.name.clone(),
                            provenance: e.provenance,
                            confidence: e.confidence,
                            followed: e.followed(threshold),
                            facts: e.facts.clone(),
                        })
                    }),
            );
        }
        Ok(out)
    }

    /// Records that `tool` failed in the caller's session: hidden for the
    /// rest of it. The tool must be one the caller may see (else it is not
    /// found, as everywhere); a session keeps at most
    /// [`MAX_FAILED`](crate::session::MAX_FAILED) failures and a reason at
    /// most [`MAX_REASON`](crate::session::MAX_REASON) characters.
    pub fn session_failed(&self, caller: &Caller, tool: &str, reason: &str) -> Result<()> {
        if caller
            .session
            .as_deref()
            .is_none_or(|s| s.trim().is_empty())
        {
            return Err(Error::invalid_field(
                Field::CallerSession,
                "a failure is recorded in a session: name one",
            ));
        }
        let snap = self.snapshot();
        let visible = self.static_access(&snap, caller)?;
        let name = snap
            .catalog
            .find(tool)
            .filter(|&i| visible.scope.contains(i))
            .and_then(|i| snap.catalog.tool(i))
            .map(|t| t.name.clone())
            .ok_or_else(|| Error::not_found(Kind::Tool, tool))?;
        let reason: String = reason.chars().take(crate::session::MAX_REASON).collect();
        self.sessions.update(&self.session_key(caller), |s| {
            if s.failed.len() < crate::session::MAX_FAILED
                && !s.failed.iter().any(|(t, _)| t.eq_ignore_ascii_case(&name))
            {
                s.failed.push((name, reason));
            }
        });
        Ok(())
    }
}
