//! Live limits: usage policies of approved tools, recorded calls, tools
//! switched off. Kept in the store (record kinds `usage_policy`, `usage`,
//! `inactive`) so a restart keeps them; judged by `policy/` on every request.

use super::{Engine, UsageEvent, UsageReport};
use crate::error::{Error, Field, Result};
use crate::policy::Caller;
use crate::policy::limits::{self, Counter, Limits, UsagePolicy};
use std::sync::PoisonError;

const POLICIES: &str = "usage_policy";
const USAGE: &str = "usage";
const INACTIVE: &str = "inactive";
/// The most categories an approval may set.
pub const MAX_CATEGORIES: usize = 32;

/// Reads one stored record; an unreadable one is logged and answered by
/// `fail_closed` (the store still opens: one bad record must not take the
/// service down, nor quietly lift the limit it held).
fn read<T: serde::de::DeserializeOwned>(
    kind: &str,
    id: &str,
    json: &str,
    fail_closed: impl FnOnce(&str) -> T,
) -> T {
    serde_json::from_str(json).unwrap_or_else(|e| {
        tracing::error!(record = %format!("{kind}/{id}"), error = %e, "unreadable limit record: failing closed");
        fail_closed(&format!("its {kind} record is unreadable ({e})"))
    })
}

fn to_json<T: serde::Serialize>(v: &T) -> Result<String> {
    serde_json::to_string(v).map_err(|e| Error::store("cannot write a record", e))
}

impl Engine {
    /// Reads the limits from the store (at open).
    pub(super) fn load_limits(&self) -> Result<()> {
        let mut l = Limits::default();
        let mut off = Vec::new();
        for (id, json) in self.store.records(POLICIES)? {
            // A policy that cannot be read switches its tool off: whatever
            // it limited stays limited until an operator sets it again.
            let p: Option<UsagePolicy> = read(POLICIES, &id, &json, |why| {
                off.push((id.clone(), why.to_string()));
                None
            });
            if let Some(p) = p {
                l.policies.insert(id, p);
            }
        }
        for (id, json) in self.store.records(INACTIVE)? {
            let why: String = read(INACTIVE, &id, &json, str::to_string);
            l.inactive.insert(id, why);
        }
        l.inactive.extend(off);
        let now = limits::now();
        for (id, json) in self.store.records(USAGE)? {
            // A counter that cannot be read counts as spent for one period.
            let c: Counter = read(USAGE, &id, &json, |_| Counter::exhausted(now));
            if let Some((org, tool)) = id.split_once('|') {
                l.usage.insert((org.to_string(), tool.to_string()), c);
            }
        }
        *self.limits.write().unwrap_or_else(PoisonError::into_inner) = l;
        Ok(())
    }

    /// A copy of the live limits (operators' view).
    pub fn limits(&self) -> Limits {
        self.limits
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// What one call of `tool` costs against a cost budget, if its policy
    /// says (read in place: `limits()` copies every counter).
    pub fn cost_per_call(&self, tool: &str) -> Option<f64> {
        self.limits
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .policies
            .get(&limits::key(tool))
            .and_then(|p| p.cost_per_call)
    }

    /// Checks a usage policy against the policy data: organizations and
    /// agents named by local name, label or IRI become IRIs; numbers must be
    /// positive. Errors name the field.
    /// Category names (`booking`, a label, or an IRI; at most
    /// [`MAX_CATEGORIES`]) as the IRIs the
    /// ontology declares; an unknown one is an error naming its place.
    pub fn category_iris(&self, names: &[String]) -> Result<Vec<String>> {
        if names.len() > MAX_CATEGORIES {
            return Err(Error::invalid_field(
                Field::ApprovalCategories,
                format!("at most {MAX_CATEGORIES} categories"),
            ));
        }
        let snap = self.snapshot();
        let mut out = Vec::new();
        for (i, n) in names.iter().enumerate() {
            let iri = snap.catalog.category_iri(n).ok_or_else(|| {
                Error::invalid_at(
                    Field::ApprovalCategories,
                    format!("categories[{i}]"),
                    format!(
                        "no category named `{}`",
                        n.chars().take(80).collect::<String>()
                    ),
                )
            })?;
            if !out.contains(&iri) {
                out.push(iri);
            }
        }
        Ok(out)
    }

    pub fn check_usage_policy(&self, policy: &UsagePolicy) -> Result<UsagePolicy> {
        let snap = self.snapshot();
        let mut out = policy.clone();
        if out.rate_limit == Some(0) {
            return Err(Error::invalid_field(
                Field::ApprovalRateLimit,
                "a rate limit is at least 1 call per minute",
            ));
        }
        if let Some(c) = out.cost_per_call
            && !(c.is_finite() && (0.0..=limits::MAX_COST).contains(&c))
        {
            return Err(Error::invalid_field(
                Field::ApprovalCostPerCall,
                format!("cost_per_call is a number from 0 to {:e}", limits::MAX_COST),
            ));
        }
        if let Some(b) = &out.budget
            && !(b.limit.is_finite() && b.limit > 0.0)
        {
            return Err(Error::invalid_at(
                Field::ApprovalBudget,
                "budget.limit",
                "a budget is a positive number",
            ));
        }
        if let Some(grant) = &mut out.access {
            for (i, org) in grant.orgs.iter_mut().enumerate() {
                *org = snap
                    .policy
                    .org_iri(org)
                    .ok_or_else(|| {
                        Error::invalid_at(
                            Field::ApprovalAccess,
                            format!("access.orgs[{i}]"),
                            format!("no organization named `{org}`"),
                        )
                    })?
                    .to_string();
            }
            for (i, agent) in grant.agents.iter_mut().enumerate() {
                *agent = snap
                    .policy
                    .agent_iri(agent)
                    .ok_or_else(|| {
                        Error::invalid_at(
                            Field::ApprovalAccess,
                            format!("access.agents[{i}]"),
                            format!("no agent named `{agent}`"),
                        )
                    })?
                    .to_string();
            }
        }
        Ok(out)
    }

    /// Attaches (or with `None` removes) a tool's usage policy.
    pub fn set_usage_policy(&self, tool: &str, policy: Option<UsagePolicy>) -> Result<()> {
        let policy = match policy {
            Some(p) if !p.is_empty() => Some(self.check_usage_policy(&p)?),
            _ => None,
        };
        let key = limits::key(tool);
        let json = policy.as_ref().map(to_json).transpose()?;
        self.store.put_records(POLICIES, &[(key.clone(), json)])?;
        let mut l = self.limits.write().unwrap_or_else(PoisonError::into_inner);
        match policy {
            Some(p) => l.policies.insert(key, p),
            None => l.policies.remove(&key),
        };
        Ok(())
    }

    /// Switches a tool off for everyone (`Some(reason)`) or back on.
    pub fn set_inactive(&self, tool: &str, reason: Option<&str>) -> Result<()> {
        let key = limits::key(tool);
        let json = reason.map(|r| to_json(&r)).transpose()?;
        self.store.put_records(INACTIVE, &[(key.clone(), json)])?;
        let mut l = self.limits.write().unwrap_or_else(PoisonError::into_inner);
        match reason {
            Some(r) => l.inactive.insert(key, r.to_string()),
            None => l.inactive.remove(&key),
        };
        Ok(())
    }

    /// Counts one call against the tool's usage policy for the caller's
    /// organization. The tool must be one the caller may see by its static
    /// layers (a tool hidden to it is not found, as everywhere); a tool over
    /// a limit still gets its call counted.
    pub fn record_usage(&self, caller: &Caller, event: &UsageEvent) -> Result<UsageReport> {
        if let Some(c) = event.cost
            && !(c.is_finite() && (0.0..=limits::MAX_COST).contains(&c))
        {
            return Err(Error::invalid_field(
                Field::UsageCost,
                format!("cost is a number from 0 to {:e}", limits::MAX_COST),
            ));
        }
        let snap = self.snapshot();
        let caller = Caller {
            org: event.org.clone().or_else(|| caller.org.clone()),
            agent: event.agent.clone().or_else(|| caller.agent.clone()),
            session: event.session.clone().or_else(|| caller.session.clone()),
            ..caller.clone()
        };
        caller.check()?;
        let org = usage_org(&snap, &caller)?.ok_or_else(|| {
            Error::invalid_field(
                Field::UsageOrg,
                "usage is counted per organization: name one",
            )
        })?;
        let now = limits::now();
        let visible = self.static_access(&snap, &caller)?;
        let idx = snap
            .catalog
            .find(&event.tool)
            .filter(|&i| visible.scope.contains(i))
            .ok_or_else(|| Error::not_found(crate::error::Kind::Tool, &event.tool))?;
        let name = snap.catalog.tools()[idx].name.clone();
        let mut l = self.limits.write().unwrap_or_else(PoisonError::into_inner);
        let (policy, counter) = self.count(&mut l, &org, &name, event.cost, now)?;
        let verdict = l.organization(&name, Some(&org), now);
        drop(l);
        self.called(&caller, &name);
        Ok(report(name, &org, policy.as_ref(), &counter, verdict, now))
    }

    /// Counts one call of `name` by `org` (an IRI) under the limits' write
    /// lock: the store first, then the live counter.
    pub(super) fn count(
        &self,
        l: &mut Limits,
        org: &str,
        name: &str,
        cost: Option<f64>,
        now: u64,
    ) -> Result<(Option<UsagePolicy>, Counter)> {
        let key = limits::key(name);
        let policy = l.policies.get(&key).cloned();
        let mut counter = l
            .usage
            .get(&(org.to_string(), key.clone()))
            .cloned()
            .unwrap_or_default();
        counter.record(policy.as_ref(), cost, now);
        self.store
            .put_records(USAGE, &[(format!("{org}|{key}"), Some(to_json(&counter)?))])?;
        l.usage.insert((org.to_string(), key), counter.clone());
        Ok((policy, counter))
    }
}

/// The organization usage is counted for (an IRI): the caller's, else its
/// agent's; `None` when it names neither. An unknown one is an error.
pub(super) fn usage_org(snap: &super::Snapshot, caller: &Caller) -> Result<Option<String>> {
    let Some(org_name) = caller.org.clone().or_else(|| {
        let agent = caller.agent.as_deref()?;
        let iri = snap.policy.agent_iri(agent)?;
        snap.policy.data.agents.get(iri)?.org.clone()
    }) else {
        return Ok(None);
    };
    snap.policy
        .org_iri(&org_name)
        .map(|o| Some(o.to_string()))
        .ok_or_else(|| {
            Error::invalid_field(
                Field::UsageOrg,
                format!("no organization named `{org_name}`"),
            )
        })
}

/// What a counted call leaves: the counter against the policy's limits.
pub(super) fn report(
    tool: String,
    org: &str,
    policy: Option<&UsagePolicy>,
    counter: &Counter,
    verdict: std::result::Result<(), String>,
    now: u64,
) -> UsageReport {
    let budget = policy.and_then(|p| p.budget.clone());
    UsageReport {
        tool,
        org: crate::vocab::local_name(org).to_string(),
        calls_last_minute: counter.calls_last_minute(now),
        rate_limit: policy.and_then(|p| p.rate_limit),
        spent: budget
            .as_ref()
            .map_or(counter.spent, |b| counter.spent_now(b, now)),
        budget,
        total_calls: counter.total_calls,
        available: verdict.is_ok(),
        reason: verdict.err(),
    }
}
