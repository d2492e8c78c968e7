//! Health probes: each approved tool with a health check is probed without
//! any lock held; N failures in a row switch it off (out of search, reason
//! recorded), M successes in a row switch it back on.

use super::model::{Health, ProbeReport, Status};
use super::{Airlock, fetch};
use crate::error::Result;
use crate::policy::limits::now;

/// What one probe does to a tool's health: `Some(Some(why))` switches it
/// off, `Some(None)` back on.
type Switch = Option<Option<String>>;

impl Airlock {
    /// Probes every approved tool with a health check once.
    pub fn probe(&self) -> Result<Vec<ProbeReport>> {
        let targets: Vec<(String, String, String)> = self
            .lock()
            .items
            .values()
            .filter(|i| i.status == Status::Approved)
            .filter_map(|i| Some((i.id.clone(), i.name.clone(), i.health.as_ref()?.url.clone())))
            .collect();
        let mut out = Vec::new();
        for (id, name, url) in targets {
            let p = fetch::probe(&url, self.options.probe_timeout, &self.options.reach);
            let _one = self.one_change();
            let Ok(mut item) = self.item(&id) else {
                continue;
            };
            let Some(h) = item.health.as_mut() else {
                continue;
            };
            let switch = self.count(h, p.ok, p.latency_ms, p.error.as_deref());
            let switched = match &switch {
                Some(Some(why)) => Some(format!("switched off: {why}")),
                Some(None) => Some(format!(
                    "back on after {} successful checks",
                    h.consecutive_successes
                )),
                None => None,
            };
            if let Some(off) = switch {
                self.engine.set_inactive(&name, off.as_deref())?;
            }
            self.save_items(std::slice::from_ref(&item))?;
            out.push(ProbeReport {
                item: id,
                tool: name,
                ok: p.ok,
                latency_ms: p.latency_ms,
                error: p.error,
                switched,
            });
        }
        Ok(out)
    }

    /// Counts one check into `h`; says whether it switches the tool.
    fn count(&self, h: &mut Health, ok: bool, latency_ms: f64, error: Option<&str>) -> Switch {
        h.checks += 1;
        h.last_checked_at = Some(now());
        h.last_latency_ms = Some((latency_ms * 10.0).round() / 10.0);
        if ok {
            h.consecutive_failures = 0;
            h.consecutive_successes += 1;
            h.last_error = None;
            if !h.active && h.consecutive_successes >= self.options.recover_after {
                h.active = true;
                return Some(None);
            }
            return None;
        }
        h.failures += 1;
        h.consecutive_successes = 0;
        h.consecutive_failures += 1;
        h.last_error = error.map(str::to_string);
        if h.active && h.consecutive_failures >= self.options.fail_after {
            h.active = false;
            return Some(Some(format!(
                "{} consecutive failed health checks of {} (last: {})",
                h.consecutive_failures,
                h.url,
                error.unwrap_or("?")
            )));
        }
        None
    }
}
