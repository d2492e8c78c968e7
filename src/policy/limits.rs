//! Live limits: the usage policies an operator attaches when the airlock
//! approves a tool (rate limit, budget, access), the calls recorded against
//! them, and tools switched off (failed health checks). They are judged in
//! the same layers as the rest of the policy: a deactivated tool leaves at
//! the platform layer, a tool over its rate limit or budget for an
//! organization leaves at the organization layer (for that organization
//! only), a tool granted to other organizations or agents leaves at theirs.
//!
//! Unlike the rest of the policy these change between snapshots (every
//! recorded call), so they are checked per request over the few tools that
//! carry them, not compiled into bitsets.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Seconds since the Unix epoch.
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The largest cost one call may report: far beyond any real price, small
/// enough that counters stay finite for longer than anyone will run this.
pub const MAX_COST: f64 = 1e12;

/// `a + b` kept finite: a counter that would overflow stays at `f64::MAX`
/// (over every budget: fail closed) instead of becoming infinity, which JSON
/// cannot hold.
fn saturating_add(a: f64, b: f64) -> f64 {
    let s = a + b;
    if s.is_finite() { s } else { f64::MAX }
}

/// Reads a stored counter value. A value that is not a finite number (a
/// `null` written before counters saturated, or an edit by hand) reads as
/// `f64::MAX`: the organization is over its budget until the period rolls
/// over, rather than the store failing to open or the budget reopening.
fn finite_or_max<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    let v = Option::<serde_json::Value>::deserialize(d)?;
    Ok(v.and_then(|v| v.as_f64())
        .filter(|x| x.is_finite() && *x >= 0.0)
        .unwrap_or(f64::MAX))
}

/// What an operator attaches to an approved tool.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UsagePolicy {
    /// Calls per minute per organization.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limit: Option<u32>,
    /// Calls or cost units per period, per organization.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    /// The organizations and agents allowed (empty lists: everyone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<Grant>,
    /// What one call through the gateway costs against a `cost` budget
    /// (1 when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_per_call: Option<f64>,
}

impl UsagePolicy {
    pub fn is_empty(&self) -> bool {
        self.rate_limit.is_none()
            && self.budget.is_none()
            && self.access.is_none()
            && self.cost_per_call.is_none()
    }

    /// Whether calls are counted per organization (a rate limit or a
    /// budget).
    pub fn counts(&self) -> bool {
        self.rate_limit.is_some() || self.budget.is_some()
    }
}

/// A spending limit per organization and period.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    /// Calls (or cost units) allowed per period.
    pub limit: f64,
    #[serde(default)]
    pub unit: BudgetUnit,
    #[serde(default)]
    pub period: Period,
}

/// What a budget counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum BudgetUnit {
    /// Each recorded call counts 1.
    #[default]
    Calls,
    /// Each recorded call counts its `cost` (1 when absent).
    Cost,
}

/// A budget period (fixed windows from the first call; a month is 30 days).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Period {
    Minute,
    Hour,
    #[default]
    Day,
    Week,
    Month,
}

impl Period {
    pub fn seconds(self) -> u64 {
        match self {
            Period::Minute => 60,
            Period::Hour => 3_600,
            Period::Day => 86_400,
            Period::Week => 7 * 86_400,
            Period::Month => 30 * 86_400,
        }
    }
    fn name(self) -> &'static str {
        match self {
            Period::Minute => "minute",
            Period::Hour => "hour",
            Period::Day => "day",
            Period::Week => "week",
            Period::Month => "month",
        }
    }
}

/// Who may see a tool (policy node IRIs once the engine has checked them).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Grant {
    #[serde(default)]
    pub orgs: Vec<String>,
    #[serde(default)]
    pub agents: Vec<String>,
}

/// Calls in the last minute as `[second, calls]` pairs: at most 60 of them
/// however fast the calls come (a list of call times grew with every call
/// and was rewritten whole on each one).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Recent(Vec<(u64, u64)>);

impl<'de> Deserialize<'de> for Recent {
    /// Reads the pairs, or the list of call times older stores hold.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Item {
            Pair(u64, u64),
            Time(u64),
        }
        let mut out = Recent::default();
        for item in Vec::<Item>::deserialize(d)? {
            match item {
                Item::Pair(t, n) => out.add(t, n),
                Item::Time(t) => out.add(t, 1),
            }
        }
        Ok(out)
    }
}

impl Recent {
    fn add(&mut self, second: u64, calls: u64) {
        match self.0.iter_mut().find(|(t, _)| *t == second) {
            Some((_, n)) => *n = n.saturating_add(calls),
            None => self.0.push((second, calls)),
        }
        if self.0.len() > 60 {
            self.0.sort_unstable();
            let extra = self.0.len() - 60;
            self.0.drain(..extra);
        }
    }

    fn forget_before(&mut self, now: u64) {
        self.0.retain(|&(t, _)| t.saturating_add(60) > now);
    }

    fn in_last_minute(&self, now: u64) -> u64 {
        self.0
            .iter()
            .filter(|&&(t, _)| t.saturating_add(60) > now && t <= now)
            .map(|&(_, n)| n)
            .fold(0, u64::saturating_add)
    }
}

/// The calls one organization made to one tool.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Counter {
    /// Calls per second over the last minute: `[second, calls]` pairs.
    #[serde(default)]
    #[schema(value_type = Vec<Vec<u64>>)]
    pub recent: Recent,
    /// Start of the current budget period.
    #[serde(default)]
    pub period_start: u64,
    /// Spent in the current period (calls or cost units).
    #[serde(default, deserialize_with = "finite_or_max")]
    pub spent: f64,
    #[serde(default)]
    pub total_calls: u64,
    #[serde(default, deserialize_with = "finite_or_max")]
    pub total_cost: f64,
}

impl Counter {
    /// A counter over every budget for the period starting `now`.
    pub fn exhausted(now: u64) -> Self {
        Counter {
            period_start: now,
            spent: f64::MAX,
            ..Counter::default()
        }
    }

    pub fn calls_last_minute(&self, now: u64) -> u64 {
        self.recent.in_last_minute(now)
    }

    /// Spent in the period that contains `now` (0 once it rolled over).
    pub fn spent_now(&self, budget: &Budget, now: u64) -> f64 {
        if now >= self.period_start.saturating_add(budget.period.seconds()) {
            0.0
        } else {
            self.spent
        }
    }

    /// Counts one call.
    pub fn record(&mut self, policy: Option<&UsagePolicy>, cost: Option<f64>, now: u64) {
        self.recent.forget_before(now);
        self.recent.add(now, 1);
        self.total_calls = self.total_calls.saturating_add(1);
        self.total_cost = saturating_add(self.total_cost, cost.unwrap_or(0.0));
        let budget = policy.and_then(|p| p.budget.as_ref());
        let period = budget.map_or(Period::Day, |b| b.period).seconds();
        if self.period_start == 0 || now >= self.period_start.saturating_add(period) {
            self.period_start = now;
            self.spent = 0.0;
        }
        let step = match budget.map(|b| b.unit) {
            Some(BudgetUnit::Cost) => cost.unwrap_or(1.0),
            _ => 1.0,
        };
        self.spent = saturating_add(self.spent, step);
    }
}

/// The live limits of one engine.
#[derive(Debug, Clone, Default)]
pub struct Limits {
    /// Tool name (lower case) -> its usage policy.
    pub policies: BTreeMap<String, UsagePolicy>,
    /// Tool name (lower case) -> why it is switched off.
    pub inactive: BTreeMap<String, String>,
    /// (organization IRI, tool name lower case) -> its calls.
    pub usage: BTreeMap<(String, String), Counter>,
}

/// The key limits are stored under.
pub fn key(tool: &str) -> String {
    tool.to_lowercase()
}

fn names(iris: &[String]) -> String {
    iris.iter()
        .map(|i| crate::vocab::local_name(i))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Limits {
    /// Only the access grants: who may see a tool at all, without the
    /// calls counted against it or its health (what decides whether a
    /// caller may learn a tool exists).
    pub fn grants(&self) -> Limits {
        Limits {
            policies: self
                .policies
                .iter()
                .filter(|(_, p)| p.access.is_some())
                .map(|(k, p)| {
                    let only = UsagePolicy {
                        access: p.access.clone(),
                        ..UsagePolicy::default()
                    };
                    (k.clone(), only)
                })
                .collect(),
            ..Limits::default()
        }
    }

    /// True when no tool carries a limit (the common case: nothing to check).
    pub fn is_empty(&self) -> bool {
        self.policies.is_empty() && self.inactive.is_empty()
    }

    /// The tools that carry a policy or are switched off.
    pub(crate) fn tools(&self) -> impl Iterator<Item = &str> {
        let mut all: Vec<&str> = self
            .policies
            .keys()
            .chain(self.inactive.keys())
            .map(String::as_str)
            .collect();
        all.sort_unstable();
        all.dedup();
        all.into_iter()
    }

    /// The platform layer: switched off for everyone.
    pub fn platform(&self, tool: &str) -> Result<(), String> {
        match self.inactive.get(&key(tool)) {
            Some(why) => Err(format!("switched off by the airlock: {why}")),
            None => Ok(()),
        }
    }

    /// The organization layer: the access grant, the rate limit and the
    /// budget for `org` (an IRI; `None` when the caller names none).
    pub fn organization(&self, tool: &str, org: Option<&str>, now: u64) -> Result<(), String> {
        let k = key(tool);
        let Some(policy) = self.policies.get(&k) else {
            return Ok(());
        };
        if let Some(grant) = &policy.access
            && !grant.orgs.is_empty()
        {
            match org {
                None => {
                    return Err(format!(
                        "granted only to organizations {}; the request names none",
                        names(&grant.orgs)
                    ));
                }
                Some(o) if !grant.orgs.iter().any(|g| g == o) => {
                    return Err(format!(
                        "granted only to organizations {}",
                        names(&grant.orgs)
                    ));
                }
                Some(_) => {}
            }
        }
        let Some(org) = org else { return Ok(()) };
        let Some(counter) = self.usage.get(&(org.to_string(), k)) else {
            return Ok(());
        };
        let name = crate::vocab::local_name(org);
        if let Some(rate) = policy.rate_limit {
            let calls = counter.calls_last_minute(now);
            if calls >= u64::from(rate) {
                return Err(format!(
                    "rate limit reached for organization {name}: {calls} calls in the last minute (limit {rate}/min)"
                ));
            }
        }
        if let Some(budget) = &policy.budget {
            let spent = counter.spent_now(budget, now);
            if spent >= budget.limit {
                let unit = match budget.unit {
                    BudgetUnit::Calls => "calls",
                    BudgetUnit::Cost => "cost units",
                };
                return Err(format!(
                    "over budget for organization {name}: {spent} of {} {unit} this {}",
                    budget.limit,
                    budget.period.name()
                ));
            }
        }
        Ok(())
    }

    /// The agent layer: the access grant's agents (IRIs).
    pub fn agent(&self, tool: &str, agent: Option<&str>) -> Result<(), String> {
        let Some(grant) = self
            .policies
            .get(&key(tool))
            .and_then(|p| p.access.as_ref())
        else {
            return Ok(());
        };
        if grant.agents.is_empty() {
            return Ok(());
        }
        match agent {
            Some(a) if grant.agents.iter().any(|g| g == a) => Ok(()),
            Some(_) => Err(format!("granted only to agents {}", names(&grant.agents))),
            None => Err(format!(
                "granted only to agents {}; the request names none",
                names(&grant.agents)
            )),
        }
    }

    /// Every layer at once (the first refusal).
    pub fn verdict(
        &self,
        tool: &str,
        org: Option<&str>,
        agent: Option<&str>,
        now: u64,
    ) -> Result<(), String> {
        self.platform(tool)?;
        self.organization(tool, org, now)?;
        self.agent(tool, agent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ACME: &str = "https://toolgraph.dev/org/acme";
    const CAFE: &str = "https://toolgraph.dev/org/corner_cafe";

    fn limits(policy: UsagePolicy) -> Limits {
        let mut l = Limits::default();
        l.policies.insert("pay".into(), policy);
        l
    }

    #[test]
    fn rate_limit_is_per_org_and_per_minute() {
        let mut l = limits(UsagePolicy {
            rate_limit: Some(2),
            ..UsagePolicy::default()
        });
        let p = l.policies.get("pay").cloned();
        let c = l.usage.entry((ACME.into(), "pay".into())).or_default();
        c.record(p.as_ref(), None, 1000);
        assert!(l.organization("pay", Some(ACME), 1000).is_ok());
        let c = l.usage.entry((ACME.into(), "pay".into())).or_default();
        c.record(p.as_ref(), None, 1010);
        let err = l.organization("Pay", Some(ACME), 1010).unwrap_err();
        assert!(
            err.contains("rate limit reached for organization acme: 2 calls"),
            "{err}"
        );
        // Another org is not affected; a minute later it reopens.
        assert!(l.organization("pay", Some(CAFE), 1010).is_ok());
        assert!(l.organization("pay", Some(ACME), 1061).is_ok());
    }

    #[test]
    fn budget_counts_calls_or_cost_per_period() {
        let mut l = limits(UsagePolicy {
            budget: Some(Budget {
                limit: 5.0,
                unit: BudgetUnit::Cost,
                period: Period::Hour,
            }),
            ..UsagePolicy::default()
        });
        let p = l.policies.get("pay").cloned();
        let c = l.usage.entry((ACME.into(), "pay".into())).or_default();
        c.record(p.as_ref(), Some(3.0), 100);
        c.record(p.as_ref(), Some(1.5), 200);
        assert!(l.organization("pay", Some(ACME), 200).is_ok());
        let c = l.usage.entry((ACME.into(), "pay".into())).or_default();
        c.record(p.as_ref(), Some(0.5), 300);
        let err = l.organization("pay", Some(ACME), 300).unwrap_err();
        assert!(
            err.contains("over budget for organization acme: 5 of 5 cost units this hour"),
            "{err}"
        );
        assert!(l.organization("pay", Some(ACME), 100 + 3600).is_ok());
    }

    /// Finding C2: two calls of cost 1e308 made the total infinity, written
    /// as `null`, and the store stopped opening.
    #[test]
    fn counters_saturate_and_read_back_whatever_was_written() {
        let mut c = Counter::default();
        let budget = UsagePolicy {
            budget: Some(Budget {
                limit: 10.0,
                unit: BudgetUnit::Cost,
                period: Period::Day,
            }),
            ..UsagePolicy::default()
        };
        c.record(Some(&budget), Some(1e308), 5);
        c.record(Some(&budget), Some(1e308), 6);
        assert_eq!(c.total_cost, f64::MAX);
        assert_eq!(c.spent, f64::MAX);
        let json = serde_json::to_string(&c).unwrap();
        assert!(!json.contains("null"), "{json}");
        let back: Counter = serde_json::from_str(&json).unwrap();
        assert_eq!(back, c);
        // What the old build wrote reads as spent (fail closed), not as an error.
        let old: Counter = serde_json::from_str(
            r#"{"recent":[5,6,6],"period_start":5,"spent":null,"total_calls":2,"total_cost":null}"#,
        )
        .unwrap();
        assert_eq!(old.spent, f64::MAX);
        assert_eq!(old.calls_last_minute(6), 3);
        let l = Limits {
            policies: [("pay".to_string(), budget)].into(),
            usage: [((ACME.to_string(), "pay".to_string()), old)].into(),
            ..Limits::default()
        };
        assert!(
            l.organization("pay", Some(ACME), 7)
                .unwrap_err()
                .contains("over budget")
        );
    }

    /// Calls per second, not one entry per call: a flood of calls keeps the
    /// record at 60 pairs at most.
    #[test]
    fn recent_calls_stay_bounded() {
        let mut c = Counter::default();
        for t in 0..10_000u64 {
            c.record(None, None, 1_000 + t / 100);
        }
        assert!(c.recent.0.len() <= 60, "{}", c.recent.0.len());
        assert_eq!(c.calls_last_minute(1_099), 6_000);
        assert_eq!(c.total_calls, 10_000);
    }

    #[test]
    fn grants_and_switches() {
        let mut l = limits(UsagePolicy {
            access: Some(Grant {
                orgs: vec![ACME.into()],
                agents: vec![],
            }),
            ..UsagePolicy::default()
        });
        assert!(l.organization("pay", Some(ACME), 0).is_ok());
        assert!(
            l.organization("pay", Some(CAFE), 0)
                .unwrap_err()
                .contains("granted only to organizations acme")
        );
        assert!(
            l.organization("pay", None, 0)
                .unwrap_err()
                .contains("names none")
        );
        l.inactive
            .insert("pay".into(), "3 failed health checks".into());
        assert_eq!(
            l.verdict("pay", Some(ACME), None, 0).unwrap_err(),
            "switched off by the airlock: 3 failed health checks"
        );
        assert_eq!(l.tools().collect::<Vec<_>>(), vec!["pay"]);
    }
}
