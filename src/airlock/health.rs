//! Health probes: each approved tool with a health check is probed without
//! any lock held; N failures in a row switch it off (out of search, reason
//! recorded), M successes in a row switch it back on.

use super::model::{ProbeReport, Status};
use super::{Airlock, fetch};
use crate::error::Result;

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
            let what = format!("health checks of {}", h.url);
            let switch = h.count(
                p.ok,
                p.latency_ms,
                p.error.as_deref(),
                (self.options.fail_after, self.options.recover_after),
                &what,
            );
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
}
