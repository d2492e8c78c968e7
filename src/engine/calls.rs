//! The engine's side of a call through the gateway: may this caller call
//! this tool (the one layered filter — static layers, goal and grants — so
//! a tool it cannot see answers exactly as an unknown one), and admitting a
//! call against its organization's limits atomically: checked and counted
//! under one lock, the counter written to the store before the call leaves
//! (a crash never lets a limit be exceeded).

use super::Engine;
use super::limits::{report, usage_org};
use super::requests::UsageReport;
use crate::error::{CallFailure, Error, Kind, Result};
use crate::model::Tool;
use crate::policy::Caller;
use crate::policy::limits;
use std::sync::PoisonError;

/// Recent tools a session remembers.
const RECENT_CALLED: usize = 10;

/// A tool the caller may call, as the catalog holds it.
#[derive(Debug, Clone)]
pub struct Callable {
    pub tool: Tool,
    /// The organization calls are counted for (an IRI), if the caller has one.
    pub org: Option<String>,
    /// Each call waits for an operator's approval.
    pub requires_approval: bool,
}

impl Callable {
    /// The organization's local name (`acme`), for secrets and records.
    pub fn org_name(&self) -> Option<&str> {
        self.org.as_deref().map(crate::vocab::local_name)
    }
}

impl Engine {
    /// The tool `caller` may call by `name` (or id). A tool its layers,
    /// goal or grants hide is not found, exactly as one that does not exist.
    pub fn callable(&self, caller: &Caller, name: &str) -> Result<Callable> {
        let snap = self.snapshot();
        let visible = self.static_access(&snap, caller)?;
        let idx = snap
            .catalog
            .find(name)
            .filter(|&i| visible.scope.contains(i))
            .ok_or_else(|| Error::not_found(Kind::Tool, name))?;
        Ok(Callable {
            tool: snap.catalog.tools()[idx].clone(),
            org: usage_org(&snap, caller)?,
            requires_approval: visible.approval.contains(idx),
        })
    }

    /// Admits one call now: refused when the tool is switched off or its
    /// organization's rate limit or budget is spent (the message names
    /// which); otherwise counted (`None` when nothing counts calls of it).
    pub fn admit_call(&self, c: &Callable) -> Result<Option<UsageReport>> {
        let name = &c.tool.name;
        let now = limits::now();
        let mut l = self.limits.write().unwrap_or_else(PoisonError::into_inner);
        if let Err(why) = l.platform(name) {
            return Err(Error::call(
                CallFailure::SwitchedOff,
                format!("`{name}` is {why}"),
            ));
        }
        if let Err(why) = l.organization(name, c.org.as_deref(), now) {
            return Err(Error::call(
                CallFailure::Limited,
                format!("`{name}`: {why}"),
            ));
        }
        let policy = l.policies.get(&limits::key(name)).cloned();
        let counts = policy.as_ref().is_some_and(|p| p.counts());
        let Some(org) = &c.org else {
            if counts {
                return Err(Error::call(
                    CallFailure::Limited,
                    format!("`{name}` is limited per organization: the call names none"),
                ));
            }
            return Ok(None);
        };
        let cost = policy.as_ref().and_then(|p| p.cost_per_call);
        let (policy, counter) = self.count(&mut l, org, name, cost, now)?;
        let verdict = l.organization(name, Some(org), now);
        Ok(Some(report(
            name.clone(),
            org,
            policy.as_ref(),
            &counter,
            verdict,
            now,
        )))
    }

    /// Remembers that `tool` was called in the caller's conversation (the
    /// intent broker keeps the session's called tools in its selection).
    pub fn called(&self, caller: &Caller, tool: &str) {
        if caller.session.is_none() {
            return;
        }
        self.sessions.update(&self.session_key(caller), |s| {
            s.recent_tools.retain(|t| t != tool);
            s.recent_tools.insert(0, tool.to_string());
            s.recent_tools.truncate(RECENT_CALLED);
        });
    }
}
