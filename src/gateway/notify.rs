//! Webhooks (`--notify URL`): a JSON POST per event — a tool switched off
//! or back on, a budget past its soft limit (the spending alert) — sent by
//! one background thread from a bounded queue (a slow receiver never slows
//! a call; past the queue, events are dropped and counted in the log). No
//! redirect is followed and no proxy from the environment is used; the
//! receiver is the operator's own configuration.

use serde::Serialize;
use std::sync::mpsc::{SyncSender, TrySendError, sync_channel};
use std::time::Duration;

/// Events waiting at most.
const QUEUE: usize = 256;

/// One event.
#[derive(Debug, Clone, Serialize)]
pub struct Event {
    /// `tool_switched_off`, `tool_back_on`, `budget_soft_limit`.
    pub event: &'static str,
    pub tool: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub org: Option<String>,
    pub message: String,
    pub at: u64,
}

/// The sender side of the webhook thread.
#[derive(Debug)]
pub struct Notifier {
    tx: SyncSender<Event>,
}

impl Notifier {
    /// Starts the thread that posts events to `url`.
    pub fn start(url: String) -> Self {
        let (tx, rx) = sync_channel::<Event>(QUEUE);
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(5)))
            .max_redirects(0)
            .proxy(None)
            .http_status_as_error(false)
            .build()
            .into();
        let spawned = std::thread::Builder::new()
            .name("toolgraph-notify".into())
            .spawn(move || {
                for event in rx {
                    let body = serde_json::to_string(&event).unwrap_or_default();
                    match agent
                        .post(&url)
                        .header("content-type", "application/json")
                        .send(body)
                    {
                        Ok(r) if r.status().is_success() => {}
                        Ok(r) => tracing::warn!(
                            status = r.status().as_u16(),
                            event = event.event,
                            "webhook answered an error"
                        ),
                        Err(e) => tracing::warn!(error = %e, event = event.event, "webhook failed"),
                    }
                }
            });
        if let Err(e) = spawned {
            tracing::error!(error = %e, "cannot start the webhook thread: no webhooks will be sent");
        }
        Notifier { tx }
    }

    /// Queues an event (dropped, logged, when the queue is full).
    pub fn send(&self, event: Event) {
        if let Err(TrySendError::Full(e)) = self.tx.try_send(event) {
            tracing::warn!(event = e.event, tool = %e.tool, "webhook queue full: event dropped");
        }
    }
}
