//! The airlock: no external tool reaches a planner without review.
//!
//! Operators register **sources** (an OpenAPI spec, an MCP server, a folder
//! of manifests). A scan reads a source (bounded in time and size, see
//! [`fetch`]) and turns every tool it offers into a [`PendingTool`]:
//! screened ([`crate::screen`]), hashed ([`pin`]) and waiting for a person. Nothing
//! pending, rejected, changed or missing is in the catalog, so it is never
//! searched, listed or counted. **Approve** registers the tool through the
//! engine (constellation + embedding, store source `airlock/<source>/<name>`)
//! with its usage policy (rate limit, budget, access: judged by `policy/`),
//! and pins its content hash. A rescan with another hash moves it to
//! `changed` and out of search, with a diff; one that no longer lists it
//! marks it `missing`. **Health** checks switch a tool off after N failed
//! probes in a row and back on after M successes. **Gaps** count the verbs
//! resolve had to decompose (the engine tells the [`gaps::GapLog`] it
//! subscribes); discovery (off by default) looks for tools that would fill
//! them and queues them, never straight into search.
//!
//! State lives in the store as records (kinds `airlock_source`,
//! `airlock_item`, `airlock_gap`) and survives a restart. A change writes
//! its records first and the catalog second; [`Airlock::heal`] (run at open
//! and after a failed catalog write) makes the catalog agree with the
//! records: an approved item's tool is registered, any other item's is
//! not. So after any crash an item's status and the catalog agree.
//!
//! Locks: `state` guards the in-memory records and is held only to read or
//! swap them, never across an embedding, a store write or a network call;
//! `changes` lets one change (scan, approve, reject, delete, a probe's
//! switch) run at a time. Reads (listings, gap counting during a resolve)
//! never wait behind a re-embedding.

mod discovery;
pub mod fetch;
pub mod gaps;
mod health;
mod model;
pub mod pin;
pub mod reach;
mod review;
mod sources;

pub use gaps::Gap;
pub use model::{
    Approval, DiscoveryReport, Health, NewSource, PendingTool, ProbeReport, Review, ScanReport,
    SourceKind, Status, Switch, ToolSource, parse_name, store_source,
};

use crate::engine::Engine;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

const SOURCES: &str = "airlock_source";
const ITEMS: &str = "airlock_item";
const GAPS: &str = "airlock_gap";

/// How the airlock works.
#[derive(Debug, Clone)]
pub struct AirlockOptions {
    /// Time and size limit of one scan (and of a directory read).
    pub bounds: fetch::Bounds,
    /// Consecutive failed health checks that switch a tool off.
    pub fail_after: u32,
    /// Consecutive successful checks that switch it back on.
    pub recover_after: u32,
    /// Time limit of one health probe.
    pub probe_timeout: Duration,
    /// Look for tools that fill capability gaps (off by default).
    pub discovery: bool,
    /// An API directory in the APIs.guru `list.json` format (path or URL).
    pub directory: Option<String>,
    /// Gaps discovery works on, most frequent first.
    pub gap_top: usize,
    /// Probe health checks this often under `serve` (`None`: only when asked).
    pub health_every: Option<Duration>,
    /// Run gap discovery this often under `serve` (when it is on).
    pub discover_every: Duration,
    /// The private hosts and the folder the airlock may read from.
    pub reach: reach::Reach,
}

impl Default for AirlockOptions {
    fn default() -> Self {
        Self {
            bounds: fetch::Bounds::default(),
            fail_after: 3,
            recover_after: 2,
            probe_timeout: Duration::from_secs(5),
            discovery: false,
            directory: None,
            gap_top: 5,
            health_every: Some(Duration::from_secs(60)),
            discover_every: Duration::from_secs(3600),
            reach: reach::Reach::default(),
        }
    }
}

#[derive(Debug, Default)]
struct State {
    sources: BTreeMap<String, ToolSource>,
    items: BTreeMap<String, PendingTool>,
}

/// The airlock over one engine.
#[derive(Debug)]
pub struct Airlock {
    engine: Arc<Engine>,
    options: AirlockOptions,
    state: Mutex<State>,
    /// One change at a time (never taken by a read).
    changes: Mutex<()>,
    gaps: Arc<gaps::GapLog>,
}

fn json<T: Serialize>(v: &T) -> Result<String> {
    serde_json::to_string(v).map_err(|e| Error::store("cannot write a record", e))
}

fn read<T: for<'de> Deserialize<'de>>(kind: &str, id: &str, text: &str) -> Result<T> {
    serde_json::from_str(text)
        .map_err(|e| Error::store(format!("record {kind}/{id} is unreadable"), e))
}

/// The airlock's state as the store holds it.
fn read_state(store: &dyn crate::graph::GraphStore) -> Result<State> {
    let mut state = State::default();
    for (id, text) in store.records(SOURCES)? {
        state.sources.insert(id.clone(), read(SOURCES, &id, &text)?);
    }
    for (id, text) in store.records(ITEMS)? {
        let mut item: PendingTool = read(ITEMS, &id, &text)?;
        item.settle_severity();
        state.items.insert(id.clone(), item);
    }
    Ok(state)
}

impl Airlock {
    /// Opens the airlock over `engine`: reads its state from the store,
    /// makes the catalog agree with it ([`Airlock::heal`]) and subscribes
    /// its gap log to the engine's outcomes.
    pub fn open(engine: Arc<Engine>, options: AirlockOptions) -> Result<Self> {
        let state = read_state(engine.store())?;
        let gaps = Arc::new(gaps::GapLog::open(&engine)?);
        engine.observe(gaps.clone());
        let airlock = Self {
            engine,
            options,
            state: Mutex::new(state),
            changes: Mutex::new(()),
            gaps,
        };
        if let Err(e) = airlock.heal() {
            tracing::error!(error = %e.report(), "the catalog does not agree with the airlock's review records yet");
        }
        Ok(airlock)
    }

    /// Re-reads sources, review items and gaps from the store: another
    /// replica sharing a graph server changed them.
    pub fn reread(&self) -> Result<()> {
        let state = read_state(self.engine.store())?;
        *self.lock() = state;
        self.gaps.reread()
    }

    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    pub fn options(&self) -> &AirlockOptions {
        &self.options
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn one_change(&self) -> MutexGuard<'_, ()> {
        self.changes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn save_source(&self, s: &ToolSource) -> Result<()> {
        self.engine
            .store()
            .put_records(SOURCES, &[(s.id.clone(), Some(json(s)?))])?;
        self.lock().sources.insert(s.id.clone(), s.clone());
        Ok(())
    }

    /// Writes items to the store, then to the state (a failed write
    /// changes neither).
    fn save_items(&self, items: &[PendingTool]) -> Result<()> {
        if items.is_empty() {
            return Ok(());
        }
        let items: Vec<PendingTool> = items
            .iter()
            .cloned()
            .map(|mut i| {
                i.settle_severity();
                i
            })
            .collect();
        let records: Vec<(String, Option<String>)> = items
            .iter()
            .map(|i| Ok((i.id.clone(), Some(json(i)?))))
            .collect::<Result<_>>()?;
        self.engine.store().put_records(ITEMS, &records)?;
        let mut state = self.lock();
        for i in items {
            state.items.insert(i.id.clone(), i);
        }
        Ok(())
    }

    /// Makes the catalog agree with the review records: every approved
    /// item's tool is registered (its approval was written, so it rolls
    /// forward), and no other item's tool is (a reject, a change or a
    /// delete whose catalog write did not happen). Idempotent; run at open
    /// and after a failed catalog write. Says how many tools it registered
    /// and unloaded.
    pub fn heal(&self) -> Result<(usize, usize)> {
        let _one = self.one_change();
        self.heal_in_change()
    }

    /// [`Airlock::heal`] inside a change already under way.
    fn heal_in_change(&self) -> Result<(usize, usize)> {
        let present: HashSet<String> = self
            .engine
            .store()
            .sources()?
            .into_iter()
            .filter(|s| s.starts_with("airlock/"))
            .collect();
        let (approved, wanted): (Vec<PendingTool>, HashSet<String>) = {
            let state = self.lock();
            let approved: Vec<PendingTool> = state
                .items
                .values()
                .filter(|i| i.status == Status::Approved)
                .cloned()
                .collect();
            let wanted = approved
                .iter()
                .map(|i| store_source(&i.source, &i.name))
                .collect();
            (approved, wanted)
        };
        let stale: Vec<String> = present.difference(&wanted).cloned().collect();
        if !stale.is_empty() {
            tracing::warn!(sources = ?stale, "unloading airlock tools no approved item stands for");
            self.engine.unload_sources(&stale)?;
        }
        let mut registered = 0;
        for item in approved {
            let source = store_source(&item.source, &item.name);
            if present.contains(&source) {
                continue;
            }
            tracing::warn!(tool = %item.name, "registering an approved tool the catalog lacks");
            match self.engine.register_tools(&source, vec![item.registered()]) {
                Ok(_) => registered += 1,
                Err(e) => tracing::error!(tool = %item.name, error = %e.report(),
                    "an approved tool cannot be registered; it stays out of search"),
            }
        }
        Ok((registered, stale.len()))
    }

    /// Runs a catalog write inside a change whose records are written;
    /// when it fails, the catalog is brought back to agree with them before
    /// the error is returned.
    fn catalog_write<T>(&self, write: impl FnOnce() -> Result<T>) -> Result<T> {
        write().inspect_err(|e| {
            if let Err(again) = self.heal_in_change() {
                tracing::error!(error = %e.report(), heal = %again.report(),
                    "a catalog write failed and the catalog could not be made to agree with the review records; it will be at the next start");
            }
        })
    }
}
