//! Held calls: a call to a tool that requires approval is kept as an
//! approval request (record kind `call_approval`) and runs once, only after
//! an operator approves it. The status is written before the call leaves
//! (`running`), so a second approval, a retry or a restart never runs it
//! again: a request that was running when the process stopped is marked
//! `interrupted` at open. A rejected request never reaches the upstream.

use super::{Admitted, CallAnswer, Gateway};
use crate::engine::Caller;
use crate::error::{Error, Field, Kind, Result};
use crate::graph::GraphStore;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

const APPROVALS: &str = "call_approval";
/// Requests kept (decided ones beyond this are dropped, oldest first).
const KEEP: usize = 10_000;

/// Where an approval request stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalStatus {
    /// Waiting for an operator.
    Pending,
    /// Approved; the call is running.
    Running,
    /// Approved and called: `result` holds the answer.
    Done,
    /// Approved, but the call was refused or failed: `error` says why.
    Failed,
    /// An operator said no; the upstream was never called.
    Rejected,
    /// The process stopped while the call ran; it is not run again.
    Interrupted,
}

/// A held call.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ApprovalRequest {
    pub id: String,
    pub tool: String,
    /// The arguments the call will be made with.
    pub arguments: Value,
    /// Who asked (organization, agent, session, channel, goal).
    pub caller: Caller,
    /// The id of the key that asked (never the key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    pub status: ApprovalStatus,
    pub created_at: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_at: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The call's answer once approved and run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<CallAnswer>,
    /// Why an approved call failed: `{code, message}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Value>,
}

/// The requests, kept in memory and in the store.
#[derive(Debug)]
pub(super) struct Approvals {
    by_id: Mutex<BTreeMap<String, ApprovalRequest>>,
    next: AtomicU64,
}

fn to_json(r: &ApprovalRequest) -> Result<String> {
    serde_json::to_string(r).map_err(|e| Error::store("cannot write an approval request", e))
}

impl Approvals {
    pub(super) fn open(store: &dyn GraphStore) -> Result<Self> {
        let mut by_id = BTreeMap::new();
        let mut interrupted = Vec::new();
        for (id, json) in store.records(APPROVALS)? {
            match serde_json::from_str::<ApprovalRequest>(&json) {
                Ok(mut r) => {
                    if r.status == ApprovalStatus::Running {
                        r.status = ApprovalStatus::Interrupted;
                        r.error = Some(serde_json::json!({
                            "code": "interrupted",
                            "message": "the server stopped while the call ran; it was not run again"
                        }));
                        interrupted.push((id.clone(), Some(to_json(&r)?)));
                    }
                    by_id.insert(id, r);
                }
                Err(e) => {
                    tracing::error!(record = %id, error = %e, "unreadable approval request: left out")
                }
            }
        }
        store.put_records(APPROVALS, &interrupted)?;
        let next = by_id.len() as u64;
        Ok(Approvals {
            by_id: Mutex::new(by_id),
            next: AtomicU64::new(next),
        })
    }

    fn save(&self, store: &dyn GraphStore, r: &ApprovalRequest) -> Result<()> {
        let mut by_id = self.by_id.lock().unwrap_or_else(PoisonError::into_inner);
        let mut writes = vec![(r.id.clone(), Some(to_json(r)?))];
        if by_id.len() >= KEEP {
            let old: Vec<String> = by_id
                .values()
                .filter(|x| !matches!(x.status, ApprovalStatus::Pending | ApprovalStatus::Running))
                .take(by_id.len() + 1 - KEEP)
                .map(|x| x.id.clone())
                .collect();
            for id in old {
                by_id.remove(&id);
                writes.push((id, None));
            }
        }
        store.put_records(APPROVALS, &writes)?;
        by_id.insert(r.id.clone(), r.clone());
        Ok(())
    }

    /// Holds a call as a new pending request.
    pub(super) fn hold(
        &self,
        store: &dyn GraphStore,
        tool: &str,
        arguments: Value,
        caller: &Caller,
    ) -> Result<ApprovalRequest> {
        let at = crate::policy::limits::now();
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let r = ApprovalRequest {
            id: format!("apr-{at:x}-{n}"),
            tool: tool.to_string(),
            arguments,
            caller: caller.clone(),
            key: caller.key.clone(),
            status: ApprovalStatus::Pending,
            created_at: at,
            decided_at: None,
            decided_by: None,
            reason: None,
            answer: None,
            error: None,
        };
        self.save(store, &r)?;
        Ok(r)
    }

    /// Moves a pending request to `to` (one decision wins; any other
    /// answers a conflict).
    fn decide(
        &self,
        store: &dyn GraphStore,
        id: &str,
        to: ApprovalStatus,
        by: &str,
        reason: Option<String>,
    ) -> Result<ApprovalRequest> {
        let mut r = {
            let by_id = self.by_id.lock().unwrap_or_else(PoisonError::into_inner);
            by_id
                .get(id)
                .cloned()
                .ok_or_else(|| Error::not_found(Kind::Approval, id))?
        };
        if r.status != ApprovalStatus::Pending {
            return Err(Error::Conflict(format!(
                "approval request `{id}` is {} already",
                serde_json::to_value(r.status)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            )));
        }
        r.status = to;
        r.decided_at = Some(crate::policy::limits::now());
        r.decided_by = Some(by.to_string());
        r.reason = reason;
        self.save(store, &r)?;
        Ok(r)
    }
}

impl Gateway {
    /// Approval requests, newest first: every one for an operator
    /// (`key: None`), a reader key's own otherwise; `status` filters.
    pub fn approvals(
        &self,
        key: Option<&str>,
        status: Option<ApprovalStatus>,
    ) -> Vec<ApprovalRequest> {
        let by_id = self
            .approvals
            .by_id
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let mut out: Vec<ApprovalRequest> = by_id
            .values()
            .filter(|r| key.is_none_or(|k| r.key.as_deref() == Some(k)))
            .filter(|r| status.is_none_or(|s| r.status == s))
            .cloned()
            .collect();
        out.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
        out
    }

    /// One request: an operator's (`key: None`) or the asking key's own
    /// (another key's is not found, as a missing one).
    pub fn approval(&self, id: &str, key: Option<&str>) -> Result<ApprovalRequest> {
        let by_id = self
            .approvals
            .by_id
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        by_id
            .get(id)
            .filter(|r| key.is_none_or(|k| r.key.as_deref() == Some(k)))
            .cloned()
            .ok_or_else(|| Error::not_found(Kind::Approval, id))
    }

    /// An operator's decision: approve runs the call once, now (its
    /// caller's policy, limits and credentials as they are now); reject
    /// never calls.
    pub fn decide(
        &self,
        id: &str,
        approve: bool,
        by: &str,
        reason: Option<String>,
    ) -> Result<ApprovalRequest> {
        if let Some(r) = &reason
            && r.len() > crate::engine::MAX_TEXT
        {
            return Err(Error::invalid_field(
                Field::RejectReason,
                "a reason is at most 64 KiB",
            ));
        }
        let store = self.engine.store();
        if !approve {
            return self
                .approvals
                .decide(store, id, ApprovalStatus::Rejected, by, reason);
        }
        let mut r = self
            .approvals
            .decide(store, id, ApprovalStatus::Running, by, reason)?;
        let started = Instant::now();
        // The key that asked (not serialized with the caller).
        let caller = Caller {
            key: r.key.clone(),
            ..r.caller.clone()
        };
        let outcome = self.engine.callable(&caller, &r.tool).and_then(|callable| {
            let args = super::validate::arguments(&callable.tool, &r.arguments)?;
            let a = Admitted {
                caller: &caller,
                callable,
                args,
            };
            self.run(&a, started, Some(r.id.clone()))
        });
        match outcome {
            Ok(answer) => {
                r.status = ApprovalStatus::Done;
                r.answer = Some(answer);
            }
            Err(e) => {
                r.status = ApprovalStatus::Failed;
                r.error =
                    Some(serde_json::json!({"code": super::code_of(&e), "message": e.to_string()}));
            }
        }
        self.approvals.save(store, &r)?;
        Ok(r)
    }
}
