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

mod limits;
mod reads;
mod register;
mod requests;

pub use requests::{
    Decision, DependencyEdge, DomainCount, Embeddings, EngineOptions, ListRequest, ListedTool,
    LoadOutcome, Match, Registration, Resolution, ResolveRequest, SearchRequest, SearchResponse,
    SelectRequest, ToolFilter, ToolPage, UsageEvent, UsageReport,
};

use crate::catalog::Catalog;
use crate::embed::{
    Ahead, Embedder, FastEmbedder, QueryCache, SharedVectors, SyncReport, SyncSources, sync_vectors,
};
use crate::error::{Error, Result};
use crate::graph::{GraphStore, OntologyFacts, Synced, ToolLink};
use crate::model::{LexEntry, Mention, PolicyFact, Tool};
use crate::policy::limits::Limits;
use crate::policy::{Access, Caller, Policy};
use crate::rank::pipeline::{self, Ranked};
use crate::rank::query::{Query, embedding_texts};
use crate::rank::{Calibration, Mode, RankConfig};
use crate::scope::Scope;
use crate::select::{self, Ranking, Selection, Strategy};
use crate::session::Sessions;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock};

/// A request's embedding and its steps' (`None`: no dense channel).
type Embedded = (Option<Vec<f32>>, Vec<Vec<f32>>);

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
    /// Usage policies, recorded calls and switched-off tools (kept in the
    /// store; judged by the policy on every request).
    limits: RwLock<Limits>,
}

impl Engine {
    /// Opens the embedded store (RocksDB under `data_dir/graph`, or in
    /// memory without a data dir) and builds the snapshot.
    pub fn open(opts: EngineOptions) -> Result<Self> {
        let store: Box<dyn GraphStore> = match &opts.data_dir {
            Some(dir) => Box::new(crate::graph::OxigraphStore::open(&dir.join("graph"))?),
            None => Box::new(crate::graph::OxigraphStore::memory()?),
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
            limits: RwLock::new(Limits::default()),
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

    /// Rebuilds the snapshot from the store; re-embeds only changed tools.
    pub fn refresh(&self) -> Result<Option<SyncReport>> {
        self.publish(self.read_store()?, None)
    }

    /// Everything a snapshot is built from, as the store holds it now.
    /// The tools on one thread, the rest on another: at 100k tools each
    /// side reads for tens of seconds on open.
    fn read_store(&self) -> Result<StoreRead> {
        let store = self.store.as_ref();
        std::thread::scope(|s| {
            let tools = s.spawn(|| store.tools());
            let (lexicon, facts, links, policy) = (
                store.lexicon(),
                store.ontology(),
                store.links(),
                store.policy(),
            );
            let tools = tools
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            Ok(StoreRead {
                tools: tools?,
                lexicon: lexicon?,
                facts: facts?,
                links: links?,
                policy: policy?,
            })
        })
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
                    previous: previous.catalog.vectors.as_ref(),
                    dir: dir.as_deref(),
                    shared: Some(&shared),
                    ahead,
                };
                let (vectors, report) =
                    sync_vectors(from, &tools, embedder.as_ref(), self.progress)?;
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
        let catalog = Catalog::build(
            tools,
            lexicon,
            facts,
            &links,
            vectors,
            self.rank.lexical_params,
        );
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
        Ok(sync)
    }

    /// Tools in the catalog (every one, whoever asks: an operator's figure).
    pub fn catalog_size(&self) -> usize {
        self.snapshot().catalog.tools.len()
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
            return Err(Error::Unavailable(format!(
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

    /// What `caller` may see in `snapshot` (a request without a caller is
    /// judged by the platform layer alone).
    fn access(&self, snapshot: &Snapshot, caller: &Caller) -> Result<Access> {
        let _stage = tracing::info_span!("stage", stage = "scope").entered();
        let failed = match &caller.session {
            Some(s) => self.sessions.get(s).failed,
            None => Vec::new(),
        };
        let limits = self.limits.read().unwrap_or_else(PoisonError::into_inner);
        snapshot.policy.resolve(
            &snapshot.catalog,
            caller,
            &failed,
            &limits,
            crate::policy::limits::now(),
        )
    }

    /// Mentions the extractor finds in a text.
    pub fn extract(&self, text: &str) -> Vec<Mention> {
        self.snapshot().catalog.extractor.extract(text)
    }

    /// Embeds request texts in batches (for evaluation runs).
    pub(crate) fn embed_queries(&self, texts: &[String]) -> Result<Option<Vec<Vec<f32>>>> {
        match &self.embedder {
            Some(e) => Ok(Some(e.embed_documents(texts)?)),
            None => Ok(None),
        }
    }

    /// Ranks the tools the caller may see (and, with `candidates`, only
    /// those) for a request. Other tools never reach ranking, counts,
    /// explanations, clarify questions or dependency lists.
    pub fn search(&self, req: &SearchRequest) -> Result<SearchResponse> {
        self.search_with(req, None)
    }

    /// [`Engine::search`] with the request's embedding computed already
    /// (evaluation runs embed their queries in batches).
    pub(crate) fn search_with(
        &self,
        req: &SearchRequest,
        vector: Option<Vec<f32>>,
    ) -> Result<SearchResponse> {
        if req.text.trim().is_empty() && req.verb.as_deref().is_none_or(|v| v.trim().is_empty()) {
            return Err(Error::invalid_field(
                "text",
                "a search needs a text or a verb",
            ));
        }
        let snap = self.snapshot();
        let catalog = &snap.catalog;
        let access = self.access(&snap, &req.caller)?;
        let scope = match &req.candidates {
            Some(names) => catalog.named(&access.scope, names)?,
            None => access.scope.clone(),
        };
        let limit = if req.limit == 0 { 10 } else { req.limit };
        let limit = access.cap.map_or(limit, |cap| limit.min(cap));
        let (query, ranked) = self.rank(catalog, &scope, req, vector, limit)?;
        let mut matches = self.matches(catalog, &access, &scope, &ranked, req.dependencies);
        if !req.explain {
            for m in &mut matches {
                m.details.paths.clear();
                m.details.matched.clear();
            }
        }
        Ok(SearchResponse {
            matches,
            ambiguous: ranked.clarify.is_some(),
            clarify: ranked.clarify,
            abstain: ranked.abstain,
            mentions: query.mentions(),
            mode: req.mode,
            warnings: access.warnings,
        })
    }

    /// Parses the request, gathers the pipeline's inputs (graph hits in
    /// scope, query vectors) and runs it.
    fn rank(
        &self,
        catalog: &Catalog,
        scope: &Scope,
        req: &SearchRequest,
        vector: Option<Vec<f32>>,
        limit: usize,
    ) -> Result<(Query, Ranked)> {
        let embedder = match &self.embedder {
            Some(embedder) if req.mode.uses_dense() && catalog.vectors.is_some() => Some(embedder),
            None if req.mode == Mode::Dense => {
                return Err(Error::invalid_field(
                    "mode",
                    "dense mode needs embeddings (run without --no-embed)",
                ));
            }
            _ => None,
        };
        // What gets embedded is known before the request is parsed.
        let (text, step_texts) = embedding_texts(&req.text, req.verb.as_deref(), self.rank.steps);
        // Embedding the request is the one real cost: the request is parsed
        // and its graph and lexical channels worked out on the other core
        // meanwhile (unless the query cache answers). The embedding stays on
        // this long-lived thread, whose allocator heap is warm.
        let embeds = embedder.is_some()
            && vector.is_none()
            && !self.queries.contains(std::slice::from_ref(&text));
        let embed = move || -> Result<Embedded> {
            let Some(embedder) = embedder else {
                return Ok((None, Vec::new()));
            };
            let _stage = tracing::info_span!("stage", stage = "embed").entered();
            let whole = match vector {
                Some(v) => v,
                None => {
                    let batch = self.queries.get_or_embed(std::slice::from_ref(&text), || {
                        embedder.embed_query(&text).map(|v| vec![v])
                    })?;
                    batch.first().cloned().unwrap_or_default()
                }
            };
            let steps = if step_texts.is_empty() {
                Vec::new()
            } else {
                let batch = self
                    .queries
                    .get_or_embed(&step_texts, || embedder.embed_documents(&step_texts))?;
                batch.to_vec()
            };
            Ok((Some(whole), steps))
        };
        // The parsed request outlives the thread that parses it: the
        // channels worked out there borrow it.
        let parsed: OnceLock<Query> = OnceLock::new();
        let understand = || {
            let query = parsed.get_or_init(|| {
                let _stage = tracing::info_span!("stage", stage = "extract").entered();
                Query {
                    dependencies: req.dependencies,
                    ..Query::parse(
                        catalog,
                        &req.text,
                        req.verb.as_deref(),
                        req.mode,
                        self.rank.steps,
                    )
                }
            });
            (query, pipeline::prepare(catalog, query, scope, &self.rank))
        };
        let ranked = std::thread::scope(|s| {
            let ((query, prepared), embedded);
            let dense = if embeds {
                let other = s.spawn(understand);
                // The dense channel needs only the embedding: it is worked
                // out while the other thread may still be walking the graph.
                embedded = embed()?;
                let dense = pipeline::dense(
                    catalog,
                    embedded.0.as_deref(),
                    &embedded.1,
                    scope,
                    &self.rank,
                );
                (query, prepared) = other
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                dense
            } else {
                (query, prepared) = understand();
                embedded = embed()?;
                pipeline::dense(
                    catalog,
                    embedded.0.as_deref(),
                    &embedded.1,
                    scope,
                    &self.rank,
                )
            };
            let settings = pipeline::Settings {
                cfg: &self.rank,
                calibration: &self.calibration,
                limit,
            };
            Ok::<_, Error>(pipeline::run(
                catalog, query, scope, prepared, dense, settings,
            ))
        })?;
        // Both branches above parse the request before anything can fail.
        let query = parsed.into_inner().expect("the request is parsed");
        Ok((query, ranked))
    }

    /// Graph paths from the request's nodes, kept only for tools in scope
    /// (filtered by index after the query, never pasted into it).
    fn matches(
        &self,
        catalog: &Catalog,
        access: &Access,
        scope: &Scope,
        ranked: &Ranked,
        dependencies: bool,
    ) -> Vec<Match> {
        ranked
            .tools
            .iter()
            .filter_map(|r| {
                let t = catalog.tools.get(r.idx)?;
                Some(Match {
                    tool: t.name.clone(),
                    id: t.id.clone(),
                    score: r.details.fused,
                    confidence: r.confidence,
                    description: t.description.clone(),
                    categories: t.categories.iter().map(|c| c.label.clone()).collect(),
                    details: r.details.clone(),
                    prerequisites: if dependencies {
                        catalog.running_order(r.idx, scope, self.rank.infer_threshold)
                    } else {
                        Vec::new()
                    },
                    requires_approval: access.approval.contains(r.idx),
                })
            })
            .collect()
    }

    /// Novel-verb resolver: substitute a catalog tool when one does the verb
    /// confidently, else advise decomposition with the nearest tools.
    pub fn resolve(&self, req: &ResolveRequest) -> Result<Resolution> {
        if req.verb.trim().is_empty() {
            return Err(Error::invalid_field("verb", "resolve needs a verb"));
        }
        let text = [req.description.as_deref(), req.context.as_deref()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(". ");
        let response = self.search(&SearchRequest {
            text,
            verb: Some(req.verb.clone()),
            limit: 3,
            caller: req.caller.clone(),
            ..SearchRequest::default()
        })?;
        Ok(decide(req, response, self.rank.substitute_above))
    }

    /// The tools for one conversation turn: whole domains the message is
    /// about kept in recency order, or keyword intents; always within what
    /// the caller may see.
    pub fn select(&self, req: &SelectRequest) -> Result<Selection> {
        if req.session.trim().is_empty() {
            return Err(Error::invalid_field("session", "select needs a session id"));
        }
        let snap = self.snapshot();
        let catalog = &snap.catalog;
        let caller = Caller {
            session: Some(req.session.clone()),
            ..req.caller.clone()
        };
        let access = self.access(&snap, &caller)?;
        let session = self.sessions.get(&req.session);
        let selection = match req.strategy {
            Strategy::Domains => {
                let request = SearchRequest {
                    text: req.message.clone(),
                    mode: Mode::Joint,
                    ..SearchRequest::default()
                };
                let (query, ranked) = self.rank(catalog, &access.scope, &request, None, 5)?;
                let order: Vec<usize> = ranked.tools.iter().map(|t| t.idx).collect();
                let contenders: Vec<usize> = match &ranked.clarify {
                    Some(c) => c
                        .contenders
                        .iter()
                        .filter_map(|ct| catalog.find(&ct.tool))
                        .collect(),
                    None => Vec::new(),
                };
                let mentions = query.mentions();
                let ranking = Ranking {
                    ranked: &order,
                    contenders: &contenders,
                    abstain: ranked.abstain,
                    mentions: &mentions,
                };
                let (selection, recency) = select::by_domains(
                    catalog,
                    &access.scope,
                    &ranking,
                    &session.domains,
                    req.max_tools.unwrap_or(select::MAX_TOOLS),
                    req.max_domains.unwrap_or(select::MAX_DOMAINS),
                );
                self.sessions.update(&req.session, |s| s.domains = recency);
                selection
            }
            Strategy::Intents => {
                let (selection, recent) = select::by_intents(
                    catalog,
                    snap.policy.data.intents.values(),
                    &access.scope,
                    &req.message,
                    &session.recent_tools,
                );
                self.sessions
                    .update(&req.session, |s| s.recent_tools = recent);
                selection
            }
        };
        Ok(selection)
    }

    /// Renders tools (by id or name) the caller may see for an LLM prompt
    /// within a token budget.
    pub fn render_prompt(
        &self,
        caller: &Caller,
        tools: &[String],
        budget_tokens: usize,
    ) -> Result<String> {
        let snap = self.snapshot();
        let access = self.access(&snap, caller)?;
        let c = &snap.catalog;
        let idxs: Vec<usize> = tools.iter().filter_map(|t| c.find(t)).collect();
        Ok(c.render_prompt(&idxs, &access.scope, budget_tokens))
    }
}

/// Substitute when the top match is confident and nothing is ambiguous,
/// else decompose, saying why.
fn decide(req: &ResolveRequest, response: SearchResponse, threshold: f32) -> Resolution {
    let Some(m) = response.matches.first() else {
        return Resolution {
            decision: Decision::Decompose,
            tool: None,
            confidence: 0.0,
            reason: "no tool is available to this caller".into(),
            nearest: Vec::new(),
        };
    };
    if m.confidence >= threshold && !response.ambiguous {
        return Resolution {
            decision: Decision::Substitute,
            tool: Some(m.tool.clone()),
            confidence: m.confidence,
            reason: format!(
                "`{}` matches {} with confidence {:.2} (threshold {threshold:.2})",
                m.tool, req.verb, m.confidence
            ),
            nearest: response.matches.clone(),
        };
    }
    let reason = if response.ambiguous {
        format!(
            "{} is ambiguous between close tools: {}",
            req.verb,
            response
                .clarify
                .as_ref()
                .map(|c| c.question.clone())
                .unwrap_or_default()
        )
    } else {
        format!(
            "no tool does {} confidently: the nearest, `{}`, has confidence {:.2} < {threshold:.2}",
            req.verb, m.tool, m.confidence
        )
    };
    Resolution {
        decision: Decision::Decompose,
        tool: None,
        confidence: m.confidence,
        reason,
        nearest: response.matches.clone(),
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
