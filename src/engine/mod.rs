//! The one orchestrator: register sources, keep the snapshot fresh, answer
//! search, resolve, listing and selection. Sync and `Send + Sync`: a server
//! calls it from `spawn_blocking`.
//!
//! A read takes the current snapshot, asks the policy for the caller's
//! [`Access`] (the tools it may see, fixed before anything ranks), gathers
//! what the pipeline needs (graph paths in scope from the snapshot, the
//! query vectors from the embedder), runs the ranking pipeline and turns its
//! answer into [`Match`]es. Ranking lives in `rank/`, the layers in
//! `policy/`, turn selection in `select.rs`; registration in `register.rs`,
//! policy-filtered catalog reads in `reads.rs`.

mod calls;
mod limits;
mod locate;
mod operator;
mod ranking;
mod reads;
mod register;
mod requests;
mod screening;
mod service;

pub use screening::ToScreen;

pub use calls::Callable;
pub use operator::{Validation, embed_text, validate};
pub use requests::{
    DEFAULT_LIMIT, DEFAULT_PROMPT_TOKENS, Decision, DependencyEdge, DomainCount, Embeddings,
    EngineOptions, ListRequest, ListedTool, LoadOutcome, MAX_LIMIT, MAX_PROMPT_TOKENS, MAX_TEXT,
    MAX_VERB, Match, Prompt, PromptRequest, Registration, ReloadReport, Resolution, ResolveRequest,
    SearchRequest, SearchResponse, SelectRequest, ToolFilter, ToolPage, UsageEvent, UsageReport,
};
pub use service::Observer;

// The vocabulary of the service face: every type a transport names comes
// from here, so that none reaches into the modules behind the engine.
pub use crate::embed::{IndexHealth, SyncReport, default_model_dir};
pub use crate::graph::{GraphServer, LoadReport, SparqlOutput};
pub use crate::import::{Format, bundled};
pub use crate::model::PolicyFact;
pub use crate::policy::limits::{Budget, BudgetUnit, Grant, Period, UsagePolicy};
pub use crate::policy::{Caller, Explanation, GoalHint, GoalInfo, Layer, LayerVerdict, Warning};
pub use crate::rank::stages::StageSpans;
pub use crate::rank::{Calibration, Clarify, Contender, Mode, RankConfig, ScoreDetails};
pub use crate::select::{Dropped, MAX_DOMAINS, MAX_TOOLS, Selection, Strategy};

use crate::catalog::Catalog;
use crate::embed::{
    Ahead, Embedder, FastEmbedder, QueryCache, SharedVectors, SyncSources, sync_vectors,
};
use crate::error::{Error, Result};
use crate::graph::{GraphStore, OntologyFacts, Synced, ToolLink};
use crate::model::{LexEntry, Mention, Tool};
use crate::policy::limits::Limits;
use crate::policy::{Access, Policy};
use crate::session::Sessions;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

/// What [`Engine::read_store`] reads.
struct StoreRead {
    tools: Vec<Tool>,
    lexicon: Vec<LexEntry>,
    facts: OntologyFacts,
    links: Vec<ToolLink>,
    policy: Vec<PolicyFact>,
}

/// Query embeddings kept (each ~1.5 KB).
const QUERY_CACHE: usize = 4096;

/// Everything a read needs, built together and swapped whole.
#[derive(Debug)]
pub(crate) struct Snapshot {
    pub catalog: Catalog,
    pub policy: Policy,
}

/// The engine.
#[derive(Debug)]
pub struct Engine {
    store: Box<dyn GraphStore>,
    embedder: Option<Arc<dyn Embedder>>,
    data_dir: Option<PathBuf>,
    progress: bool,
    rank: RankConfig,
    calibration: Calibration,
    strict: bool,
    snapshot: RwLock<Arc<Snapshot>>,
    last_sync: RwLock<Option<SyncReport>>,
    sessions: Sessions,
    /// Tool embeddings computed since the start (metrics).
    embedded: AtomicU64,
    /// Recent query embeddings (the forward pass is a search's main cost).
    queries: QueryCache,
    /// Registrations run one at a time (each builds on the snapshot the
    /// previous one left).
    writer: Mutex<()>,
    /// The snapshot was built from the store as it is now: false from a
    /// store write until the snapshot after it is published (and after a
    /// publish that failed), so that a load that changed nothing may skip
    /// the read-back only when nothing else is pending.
    current: AtomicBool,
    /// A registration's whole work, parsing to publishing, one at a time:
    /// each holds a copy of the lexicon, its index and the constellations
    /// it builds; eight at once took a server from 0.4 to 1.2 GB.
    preparing: Mutex<()>,
    /// Usage policies, recorded calls and switched-off tools (kept in the
    /// store; judged by the policy on every request).
    limits: RwLock<Limits>,
    /// Hears of decomposed verbs (the airlock's gap log).
    observer: RwLock<Option<Arc<dyn Observer>>>,
}

impl Engine {
    /// Opens the embedded store (RocksDB under `data_dir/graph`, or in
    /// memory without a data dir) and builds the snapshot.
    pub fn open(opts: EngineOptions) -> Result<Self> {
        let store: Box<dyn GraphStore> = match (&opts.graph, &opts.data_dir) {
            (Some(server), _) => crate::graph::connect(server)?,
            (None, Some(dir)) => Box::new(crate::graph::OxigraphStore::open(&dir.join("graph"))?),
            (None, None) => Box::new(crate::graph::OxigraphStore::memory()?),
        };
        Self::open_with(store, opts)
    }

    /// Builds an engine over a store the caller opened (any backend).
    pub fn open_with(store: impl Into<Box<dyn GraphStore>>, opts: EngineOptions) -> Result<Self> {
        let embedder: Option<Arc<dyn Embedder>> = match opts.embeddings {
            Embeddings::Model(dir) => Some(Arc::new(FastEmbedder::load(&dir)?)),
            Embeddings::Custom(embedder) => Some(embedder),
            Embeddings::Off => None,
        };
        let engine = Self {
            store: store.into(),
            embedder,
            data_dir: opts.data_dir,
            progress: opts.progress,
            rank: opts.rank,
            calibration: opts.calibration,
            strict: opts.strict,
            snapshot: RwLock::new(Arc::new(Snapshot {
                catalog: Catalog::empty(),
                policy: Policy::default(),
            })),
            last_sync: RwLock::new(None),
            sessions: Sessions::default(),
            embedded: AtomicU64::new(0),
            queries: QueryCache::new(QUERY_CACHE),
            writer: Mutex::new(()),
            current: AtomicBool::new(false),
            preparing: Mutex::new(()),
            limits: RwLock::new(Limits::default()),
            observer: RwLock::new(None),
        };
        engine.load_limits()?;
        engine.refresh()?;
        Ok(engine)
    }

    /// The current snapshot.
    pub(crate) fn snapshot(&self) -> Arc<Snapshot> {
        Arc::clone(&self.snapshot.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// The store, for commands that talk to it directly.
    pub fn store(&self) -> &dyn GraphStore {
        self.store.as_ref()
    }

    pub fn rank_config(&self) -> &RankConfig {
        &self.rank
    }

    /// The weights and thresholds of later searches (the perf bench
    /// compares settings on one loaded catalog).
    pub fn set_rank_config(&mut self, rank: RankConfig) {
        self.rank = rank;
    }

    /// Catches up with what other replicas wrote to a shared store (a graph
    /// server): changed records re-read the usage limits, changed catalog
    /// statements rebuild the snapshot (vectors another replica stored are
    /// reused, not re-embedded). Says what moved.
    pub fn sync(&self) -> Result<Synced> {
        let _one_at_a_time = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        let synced = self.store.sync()?;
        if synced.records {
            self.load_limits()?;
        }
        if synced.catalog {
            self.refresh()?;
        }
        Ok(synced)
    }

    /// After a store write: whether the snapshot must be read back (not
    /// when the write changed nothing and the snapshot is current; at 300k
    /// tools the read-back costs 90 s, and a restart reloads the ontology
    /// and seeds unchanged).
    fn wrote(&self, report: &crate::graph::LoadReport) -> bool {
        if report.unchanged && self.current.load(Ordering::Acquire) {
            return false;
        }
        self.current.store(false, Ordering::Release);
        true
    }

    /// What a load that changed nothing reports: every vector kept.
    fn kept(&self) -> Option<SyncReport> {
        let embedder = self.embedder.as_ref()?;
        let total = self
            .snapshot()
            .catalog
            .vectors()
            .map_or(0, |v| v.hashes.len());
        Some(SyncReport {
            embedded: 0,
            ahead: 0,
            reused: total,
            dropped: 0,
            shared: 0,
            total,
            model_id: embedder.model_id().to_string(),
            full_reindex: false,
        })
    }

    /// Rebuilds the snapshot from the store; re-embeds only changed tools.
    /// Until it is published the snapshot is not current (a refresh that
    /// fails leaves it so).
    pub fn refresh(&self) -> Result<Option<SyncReport>> {
        self.current.store(false, Ordering::Release);
        self.publish(self.read_store()?, None)
    }

    /// Everything a snapshot is built from, as the store holds it now: the
    /// tools and their links (the long read, itself on two threads for the
    /// embedded store), the ontology beside them.
    fn read_store(&self) -> Result<StoreRead> {
        let store = self.store.as_ref();
        let t = std::time::Instant::now();
        let read = std::thread::scope(|s| {
            let rest = s.spawn(|| Ok((store.lexicon()?, store.ontology()?, store.policy()?)));
            let tools_and_links = store.tools_and_links();
            let rest: Result<_> = rest
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            let ((tools, links), (lexicon, facts, policy)) = (tools_and_links?, rest?);
            Ok(StoreRead {
                tools,
                lexicon,
                facts,
                links,
                policy,
            })
        });
        tracing::debug!("snapshot: store read in {:?}", t.elapsed());
        read
    }

    /// Builds and swaps in the snapshot of `read`: vectors synced (those
    /// `ahead` holds are taken, not embedded again).
    fn publish(&self, read: StoreRead, ahead: Option<&Ahead>) -> Result<Option<SyncReport>> {
        let StoreRead {
            tools,
            lexicon,
            facts,
            links,
            policy: policy_facts,
        } = read;
        let (vectors, sync) = match &self.embedder {
            Some(embedder) => {
                let dir = self.data_dir.as_ref().map(|d| d.join("vectors"));
                let previous = self.snapshot();
                let shared = StoreVectors::new(self.store.as_ref(), &tools);
                let from = SyncSources {
                    previous: previous.catalog.vectors(),
                    dir: dir.as_deref(),
                    shared: Some(&shared),
                    ahead,
                };
                let t = std::time::Instant::now();
                let (vectors, report) =
                    sync_vectors(from, &tools, embedder.as_ref(), self.progress)?;
                tracing::debug!("snapshot: vectors synced in {:?}", t.elapsed());
                (Some(vectors), Some(report))
            }
            None => (None, None),
        };
        if let Some(r) = &sync {
            // Embedded ahead but not taken (a tool whose text read back
            // differently) was computed all the same.
            let unused = ahead.map_or(0, |a| a.len().saturating_sub(r.ahead));
            self.embedded
                .fetch_add((r.embedded + unused) as u64, Ordering::Relaxed);
        }
        let t = std::time::Instant::now();
        let catalog = Catalog::build(
            tools,
            lexicon,
            facts,
            &links,
            vectors,
            self.rank.lexical_params,
        );
        tracing::debug!("snapshot: catalog built in {:?}", t.elapsed());
        let policy = Policy::build(&catalog, &policy_facts);
        let snapshot = Arc::new(Snapshot { catalog, policy });
        *self
            .snapshot
            .write()
            .unwrap_or_else(PoisonError::into_inner) = snapshot;
        *self
            .last_sync
            .write()
            .unwrap_or_else(PoisonError::into_inner) = sync.clone();
        self.current.store(true, Ordering::Release);
        let t = std::time::Instant::now();
        crate::alloc::release_freed();
        tracing::debug!("freed memory returned in {:?}", t.elapsed());
        Ok(sync)
    }

    /// Tools in the catalog (every one, whoever asks: an operator's figure).
    pub fn catalog_size(&self) -> usize {
        self.snapshot().catalog.tools().len()
    }

    /// Tool embeddings computed since the engine opened (not reused).
    pub fn embeddings_computed(&self) -> u64 {
        self.embedded.load(Ordering::Relaxed)
    }

    /// Conversations remembered.
    pub fn session_count(&self) -> usize {
        self.sessions.len()
    }

    /// An error for commands that need a catalog when the store has none.
    pub fn require_catalog(&self) -> Result<()> {
        if self.catalog_size() == 0 && self.snapshot().catalog.lexicon_entries().is_empty() {
            let place = self
                .data_dir
                .as_ref()
                .map_or_else(|| "memory".to_string(), |d| d.display().to_string());
            return Err(Error::unavailable_msg(format!(
                "the store at {place} is empty: fill it with `toolgraph load ontology seeds` (or serve it with scripts/serve.sh)"
            )));
        }
        Ok(())
    }

    /// The last embedding sync (index health).
    pub fn last_sync(&self) -> Option<SyncReport> {
        self.last_sync
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Where a caller's conversation is remembered: the session id within
    /// the key, organization and agent it belongs to, so that one tenant's
    /// session id never reads or changes another's.
    fn session_key(&self, caller: &Caller) -> String {
        let part = |v: &Option<String>| v.as_deref().unwrap_or("").trim().to_lowercase();
        format!(
            "{}\u{1f}{}\u{1f}{}\u{1f}{}",
            part(&caller.key),
            part(&caller.org),
            part(&caller.agent),
            caller.session.as_deref().unwrap_or("")
        )
    }

    /// The tools that failed in the caller's conversation, with why.
    fn failed_in(&self, caller: &Caller) -> Vec<(String, String)> {
        match &caller.session {
            Some(_) => self.sessions.get(&self.session_key(caller)).failed,
            None => Vec::new(),
        }
    }

    /// What `caller` may see in `snapshot` (a request without a caller is
    /// judged by the platform layer alone).
    fn access(&self, snapshot: &Snapshot, caller: &Caller) -> Result<Access> {
        let _stage = tracing::info_span!("stage", stage = "scope").entered();
        caller.check()?;
        let failed = self.failed_in(caller);
        let limits = self.limits.read().unwrap_or_else(PoisonError::into_inner);
        snapshot.policy.resolve(
            &snapshot.catalog,
            caller,
            &failed,
            &limits,
            crate::policy::limits::now(),
        )
    }

    /// What `caller` may see by the policy's static layers and the access
    /// grants alone: neither the session's failures nor rate limits, budgets
    /// or health remove a tool (a failure or a call over a limit is still
    /// about a tool the caller knows; one granted to others it does not).
    fn static_access(&self, snapshot: &Snapshot, caller: &Caller) -> Result<Access> {
        caller.check()?;
        let grants = self
            .limits
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .grants();
        snapshot.policy.resolve(
            &snapshot.catalog,
            caller,
            &[],
            &grants,
            crate::policy::limits::now(),
        )
    }

    /// Mentions the extractor finds in a text.
    pub fn extract(&self, text: &str) -> Vec<Mention> {
        self.snapshot().catalog.extractor().extract(text)
    }

    /// Embeds request texts in batches (for evaluation runs).
    pub(crate) fn embed_queries(&self, texts: &[String]) -> Result<Option<Vec<Vec<f32>>>> {
        match &self.embedder {
            Some(e) => Ok(Some(e.embed_documents(texts)?)),
            None => Ok(None),
        }
    }
}

/// The store's own tool vectors (a graph server's), by tool id.
struct StoreVectors<'a> {
    store: &'a dyn GraphStore,
    iris: HashMap<&'a str, &'a str>,
}

impl<'a> StoreVectors<'a> {
    fn new(store: &'a dyn GraphStore, tools: &'a [crate::model::Tool]) -> Self {
        Self {
            store,
            iris: tools
                .iter()
                .map(|t| (t.id.as_str(), t.iri.as_str()))
                .collect(),
        }
    }

    fn iri(&self, id: &str) -> String {
        self.iris.get(id).copied().unwrap_or(id).to_string()
    }
}

impl SharedVectors for StoreVectors<'_> {
    fn fetch(&self, model_id: &str, wanted: &[(&str, &str)]) -> Result<Vec<Option<Vec<f32>>>> {
        let asked: Vec<(String, String)> = wanted
            .iter()
            .map(|(id, hash)| (self.iri(id), (*hash).to_string()))
            .collect();
        Ok(self
            .store
            .tool_vectors(model_id, &asked)?
            .unwrap_or_else(|| vec![None; wanted.len()]))
    }

    fn store(&self, model_id: &str, rows: &[(&str, &str, &[f32])]) -> Result<()> {
        let rows: Vec<(String, String, Vec<f32>)> = rows
            .iter()
            .map(|(id, hash, v)| (self.iri(id), (*hash).to_string(), v.to_vec()))
            .collect();
        self.store.put_tool_vectors(model_id, &rows)
    }
}

/// An in-memory engine over the ontology and a seeded synthetic catalog of
/// `tools` tools, embedded with the hash double, and the catalog with its
/// `queries` queries (for unit tests of the ranking).
#[cfg(test)]
pub(crate) fn synthetic_engine(
    tools: usize,
    queries: usize,
    seed: u64,
) -> (Engine, crate::synth::Synthetic) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let synth = crate::synth::from_ontology(
        &root.join("ontology"),
        &crate::synth::SynthOptions {
            tools,
            queries,
            seed,
        },
    )
    .expect("the synthetic catalog");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("tools.jsonl");
    std::fs::write(&file, synth.tools_jsonl()).expect("tools.jsonl written");
    let engine = Engine::open(EngineOptions::memory(Embeddings::Custom(Arc::new(
        crate::embed::HashEmbedder::new(),
    ))))
    .expect("an in-memory engine");
    engine
        .load_paths(&[root.join("ontology"), file], None)
        .expect("the catalog loads");
    (engine, synth)
}
