//! Health from real calls: every call's outcome and latency go into its
//! tool's board entry (error rate and p95 over the last [`WINDOW`] calls);
//! [`GatewayOptions::fail_after`](super::GatewayOptions) failed calls in a
//! row switch the tool off for everyone, exactly as failed probes do (the
//! platform layer: out of search, calls refused); the gateway's probes of
//! the upstream itself (an MCP `ping`, an HTTP answer below 500) switch it
//! back on after `recover_after` successes. Also the usage view: per tool,
//! calls, errors, latency, and each organization's budget spent and left.

use super::Gateway;
use super::notify::Event;
use crate::airlock::Health;
use crate::airlock::fetch::McpSession;
use crate::engine::UsageReport;
use crate::error::Result;
use crate::model::{Tool, Upstream};
use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

/// Calls the error rate and p95 are taken over.
const WINDOW: usize = 100;

#[derive(Debug, Default, Clone)]
struct Entry {
    health: Health,
    /// (ok, latency ms) of the last calls.
    window: VecDeque<(bool, f64)>,
    calls: u64,
    errors: u64,
    /// Switched off by failed calls (so a probe may switch it back on).
    off_by_calls: bool,
    upstream: Option<Upstream>,
    /// What its calls (and so its probes) may reach.
    reach: crate::airlock::reach::Reach,
}

/// Every called tool's entry.
#[derive(Debug, Default)]
pub(super) struct Board {
    tools: Mutex<BTreeMap<String, Entry>>,
}

/// One tool in the usage view.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct ToolUsage {
    pub tool: String,
    /// Calls through the gateway since the server started.
    pub calls: u64,
    pub errors: u64,
    /// Over the last 100 calls.
    pub error_rate: f64,
    pub p50_ms: Option<f64>,
    pub p95_ms: Option<f64>,
    pub active: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// Each organization's counters: calls, budget spent and left.
    pub orgs: Vec<OrgUsage>,
}

/// One organization's use of one tool.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct OrgUsage {
    pub org: String,
    pub total_calls: u64,
    pub calls_last_minute: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_limit: Option<u32>,
    pub spent: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_limit: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_left: Option<f64>,
}

fn quantile(mut v: Vec<f64>, q: f64) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let i = ((v.len() as f64 - 1.0) * q).round() as usize;
    Some(v[i.min(v.len() - 1)])
}

impl Gateway {
    /// Counts a call's outcome into its tool's health (`reach`: what the
    /// call could reach, kept for the probes); a switch is applied
    /// (platform layer) and announced.
    pub(super) fn health_outcome(
        &self,
        tool: &Tool,
        reach: &crate::airlock::reach::Reach,
        ok: bool,
        latency_ms: f64,
        error: Option<&str>,
    ) -> Result<()> {
        let switch = {
            let mut tools = self
                .health
                .tools
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let e = tools.entry(tool.name.clone()).or_insert_with(|| Entry {
                health: Health {
                    url: tool
                        .upstream
                        .as_ref()
                        .map(|u| u.url().to_string())
                        .unwrap_or_default(),
                    active: true,
                    ..Health::default()
                },
                ..Entry::default()
            });
            e.upstream = tool.upstream.as_deref().cloned();
            e.reach = reach.clone();
            e.calls += 1;
            e.errors += u64::from(!ok);
            e.window.push_back((ok, latency_ms));
            if e.window.len() > WINDOW {
                e.window.pop_front();
            }
            let switch = e.health.count(
                ok,
                latency_ms,
                error,
                (self.options.fail_after, self.options.recover_after),
                "calls",
            );
            if matches!(switch, Some(Some(_))) {
                e.off_by_calls = true;
            }
            switch
        };
        if let Some(Some(why)) = switch {
            self.engine.set_inactive(&tool.name, Some(&why))?;
            self.notify(
                "tool_switched_off",
                &tool.name,
                None,
                format!("switched off: {why}"),
            );
        }
        Ok(())
    }

    pub(super) fn notify(
        &self,
        event: &'static str,
        tool: &str,
        org: Option<&str>,
        message: String,
    ) {
        tracing::warn!(event, tool, "{message}");
        if let Some(n) = &self.notifier {
            n.send(Event {
                event,
                tool: tool.to_string(),
                org: org.map(str::to_string),
                message,
                at: crate::policy::limits::now(),
            });
        }
    }

    /// The spending alert: this call took the organization's budget past
    /// its soft limit.
    pub(super) fn alert_budget(&self, c: &crate::engine::Callable, u: &UsageReport) {
        let Some(b) = &u.budget else { return };
        let step = match b.unit {
            crate::engine::BudgetUnit::Cost => {
                self.engine.cost_per_call(&c.tool.name).unwrap_or(1.0)
            }
            crate::engine::BudgetUnit::Calls => 1.0,
        };
        let soft = b.limit * self.options.soft_limit;
        if u.spent >= soft && u.spent - step < soft {
            self.notify(
                "budget_soft_limit",
                &c.tool.name,
                Some(&u.org),
                format!(
                    "organization {} has spent {} of its budget of {} for `{}` ({}% soft limit)",
                    u.org,
                    u.spent,
                    b.limit,
                    c.tool.name,
                    (self.options.soft_limit * 100.0).round()
                ),
            );
        }
    }

    /// Probes the upstream of every tool failed calls switched off; after
    /// `recover_after` successes in a row it is switched back on. Returns
    /// the tools switched back on.
    pub fn recover(&self) -> Result<Vec<String>> {
        let off: Vec<(String, Upstream, crate::airlock::reach::Reach)> = self
            .health
            .tools
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|(_, e)| e.off_by_calls && !e.health.active)
            .filter_map(|(n, e)| Some((n.clone(), e.upstream.clone()?, e.reach.clone())))
            .collect();
        let mut back = Vec::new();
        for (name, upstream, reach) in off {
            let started = Instant::now();
            let probe = self.probe(&upstream, &reach);
            let latency = started.elapsed().as_secs_f64() * 1000.0;
            let switch = {
                let mut tools = self
                    .health
                    .tools
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                let Some(e) = tools.get_mut(&name) else {
                    continue;
                };
                let s = e.health.count(
                    probe.is_ok(),
                    latency,
                    probe.as_ref().err().map(String::as_str),
                    (self.options.fail_after, self.options.recover_after),
                    "probes",
                );
                if matches!(s, Some(None)) {
                    e.off_by_calls = false;
                }
                s
            };
            if let Some(None) = switch {
                self.engine.set_inactive(&name, None)?;
                self.notify(
                    "tool_back_on",
                    &name,
                    None,
                    format!("`{name}` answers again: switched back on"),
                );
                back.push(name);
            }
        }
        Ok(back)
    }

    /// Whether an upstream answers: an MCP server opens a session and
    /// answers `ping`; an HTTP server answers its URL's origin below 500.
    fn probe(
        &self,
        upstream: &Upstream,
        reach: &crate::airlock::reach::Reach,
    ) -> std::result::Result<(), String> {
        let bounds = self.options.bounds;
        match upstream {
            Upstream::Mcp { url, .. } => {
                let mut s =
                    McpSession::open(url, bounds, reach, Vec::new()).map_err(|e| e.to_string())?;
                let r = s
                    .request("ping", serde_json::json!({}))
                    .map(|_| ())
                    .map_err(|e| e.to_string());
                s.close();
                r
            }
            Upstream::Http { url, .. } => {
                let origin = url.split_once("://").and_then(|(scheme, rest)| {
                    rest.split(['/', '?', '#'])
                        .next()
                        .map(|h| format!("{scheme}://{h}/"))
                });
                let Some(origin) = origin else {
                    return Err(format!("`{url}` has no host"));
                };
                let status = crate::airlock::fetch::probe_status(&origin, bounds.timeout, reach)?;
                if status < 500 {
                    Ok(())
                } else {
                    Err(format!("HTTP {status}"))
                }
            }
        }
    }

    /// The usage view: every tool called through the gateway, or with
    /// counters, with its organizations' budgets spent and left.
    pub fn usage(&self) -> Vec<ToolUsage> {
        let limits = self.engine.limits();
        let now = crate::policy::limits::now();
        let tools = self
            .health
            .tools
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let mut names: Vec<String> = tools.keys().cloned().collect();
        for (_, tool) in limits.usage.keys() {
            if !names.iter().any(|n| crate::policy::limits::key(n) == *tool) {
                names.push(tool.clone());
            }
        }
        names.sort();
        names
            .into_iter()
            .map(|name| {
                let e = tools.get(&name).cloned().unwrap_or_default();
                let key = crate::policy::limits::key(&name);
                let policy = limits.policies.get(&key);
                let orgs = limits
                    .usage
                    .iter()
                    .filter(|((_, t), _)| *t == key)
                    .map(|((org, _), c)| {
                        let budget = policy.and_then(|p| p.budget.as_ref());
                        let spent = budget.map_or(c.spent, |b| c.spent_now(b, now));
                        OrgUsage {
                            org: crate::vocab::local_name(org).to_string(),
                            total_calls: c.total_calls,
                            calls_last_minute: c.calls_last_minute(now),
                            rate_limit: policy.and_then(|p| p.rate_limit),
                            spent,
                            budget_limit: budget.map(|b| b.limit),
                            budget_left: budget.map(|b| (b.limit - spent).max(0.0)),
                        }
                    })
                    .collect();
                let latencies: Vec<f64> = e.window.iter().map(|(_, l)| *l).collect();
                let failed = e.window.iter().filter(|(ok, _)| !ok).count();
                ToolUsage {
                    active: limits.platform(&name).is_ok(),
                    tool: name,
                    calls: e.calls,
                    errors: e.errors,
                    error_rate: if e.window.is_empty() {
                        0.0
                    } else {
                        failed as f64 / e.window.len() as f64
                    },
                    p50_ms: quantile(latencies.clone(), 0.5),
                    p95_ms: quantile(latencies, 0.95),
                    last_error: e.health.last_error.clone(),
                    orgs,
                }
            })
            .collect()
    }
}
