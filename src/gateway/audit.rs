//! One audit record per call (who, tool, when, duration, status, upstream
//! status; arguments and result as sha256 hashes unless the operator keeps
//! payloads), kept in the store (record kind `call`) so a restart keeps
//! them, the oldest dropped past [`KEEP`]. Listed newest first.

use crate::error::Result;
use crate::graph::GraphStore;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::Digest;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

const CALLS: &str = "call";
/// Records kept.
pub const KEEP: usize = 100_000;

/// One call as the audit log keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct CallRecord {
    pub id: String,
    /// Seconds since the epoch.
    pub at: u64,
    pub tool: String,
    /// The key's id (never the key), organization, agent, session.
    pub key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub org: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// `ok`, `error` (the upstream failed), `refused` (a limit, the tool
    /// switched off, credentials), `held` (waiting for approval),
    /// `rejected` (an operator said no).
    pub status: String,
    /// The error code when not `ok`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream_status: Option<u16>,
    pub duration_ms: f64,
    pub arguments_sha256: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_sha256: Option<String>,
    /// With `--audit-payloads` only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The approval request a held call waits in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<String>,
}

pub fn sha256(v: &Value) -> String {
    sha2::Sha256::digest(crate::airlock::pin::canonical(v).as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The audit log: ids in order (oldest first) for pruning and paging.
#[derive(Debug)]
pub struct Audit {
    ids: Mutex<VecDeque<String>>,
    next: AtomicU64,
}

impl Audit {
    /// Reads the ids of the stored records.
    pub fn open(store: &dyn GraphStore) -> Result<Self> {
        let mut ids: Vec<String> = store
            .records(CALLS)?
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        ids.sort();
        let next = ids
            .last()
            .and_then(|id| id.rsplit('-').next())
            .and_then(|n| n.parse::<u64>().ok())
            .map_or(0, |n| n + 1);
        Ok(Audit {
            ids: Mutex::new(ids.into()),
            next: AtomicU64::new(next),
        })
    }

    /// A new record id: time-ordered, unique in this store.
    pub fn new_id(&self, at: u64) -> String {
        format!("{at:012}-{:010}", self.next.fetch_add(1, Ordering::Relaxed))
    }

    /// Writes a record (and drops the oldest past [`KEEP`]).
    pub fn write(&self, store: &dyn GraphStore, record: &CallRecord) -> Result<()> {
        let json = serde_json::to_string(record)
            .map_err(|e| crate::error::Error::store("cannot write a call record", e))?;
        let mut ids = self.ids.lock().unwrap_or_else(PoisonError::into_inner);
        let mut writes = vec![(record.id.clone(), Some(json))];
        while ids.len() >= KEEP {
            if let Some(old) = ids.pop_front() {
                writes.push((old, None));
            }
        }
        store.put_records(CALLS, &writes)?;
        ids.push_back(record.id.clone());
        Ok(())
    }

    /// Records newest first, filtered by `tool`, from `offset`, at most
    /// `limit`; and how many match.
    pub fn page(
        &self,
        store: &dyn GraphStore,
        tool: Option<&str>,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<CallRecord>, usize)> {
        let mut all: Vec<CallRecord> = store
            .records(CALLS)?
            .into_iter()
            .filter_map(|(_, json)| serde_json::from_str(&json).ok())
            .filter(|r: &CallRecord| tool.is_none_or(|t| r.tool == t))
            .collect();
        all.sort_by(|a, b| b.id.cmp(&a.id));
        let total = all.len();
        Ok((all.into_iter().skip(offset).take(limit).collect(), total))
    }
}
