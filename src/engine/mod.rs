//! The one orchestrator: register sources, keep the snapshot fresh, answer
//! search, resolve, listing and selection. Sync and `Send + Sync`: a server
//! calls it from `spawn_blocking`.
//!
//! A read takes the current snapshot, asks the policy for the caller's
//! [`Access`] (the tools it may see, fixed before anything ranks), gathers
//! what the pipeline needs (graph hits in scope from the store, the query
//! vectors from the embedder), runs the ranking pipeline and turns its answer
//! into [`Match`]es. Ranking lives in `rank/`, the layers in `policy/`, turn
//! selection in `select.rs`.

mod requests;

pub use requests::{
    Decision, DomainCount, Embeddings, EngineOptions, ListRequest, ListedTool, LoadOutcome, Match,
    Registration, Resolution, ResolveRequest, SearchRequest, SearchResponse, SelectRequest,
    ToolFilter, ToolPage,
};

use crate::catalog::Catalog;
use crate::constellation;
use crate::embed::{Embedder, FastEmbedder, QueryCache, SyncReport, sync_vectors};
use crate::error::{Error, Result};
use crate::extract::{Extractor, Lexicon};
use crate::graph::{GraphHit, GraphStore, LoadReport, Source, SourceData};
use crate::import::{self, Format, Input};
use crate::model::{Constellation, Mention, Tool};
use crate::policy::{Access, Caller, Explanation, Policy};
use crate::rank::pipeline::{self, Inputs, Ranked};
use crate::rank::query::Query;
use crate::rank::{Calibration, Mode, RankConfig};
use crate::scope::Scope;
use crate::select::{self, Ranking, Selection, Strategy};
use crate::session::Sessions;
use rayon::prelude::*;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

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
        };
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

    /// Rebuilds the snapshot from the store; re-embeds only changed tools.
    pub fn refresh(&self) -> Result<Option<SyncReport>> {
        let tools = self.store.tools()?;
        let lexicon = self.store.lexicon()?;
        let facts = self.store.ontology()?;
        let policy_facts = self.store.policy()?;
        let (vectors, sync) = match &self.embedder {
            Some(embedder) => {
                let dir = self.data_dir.as_ref().map(|d| d.join("vectors"));
                let previous = self.snapshot();
                let (vectors, report) = sync_vectors(
                    previous.catalog.vectors.as_ref(),
                    dir.as_deref(),
                    &tools,
                    embedder.as_ref(),
                    self.progress,
                )?;
                (Some(vectors), Some(report))
            }
            None => (None, None),
        };
        if let Some(r) = &sync {
            self.embedded
                .fetch_add(r.embedded as u64, Ordering::Relaxed);
        }
        let catalog = Catalog::build(tools, lexicon, facts, vectors, self.rank.lexical_params);
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

    /// Reads and parses files into store sources (nothing is written).
    pub fn prepare(&self, files: &[PathBuf], format: Option<Format>) -> Result<Vec<Source>> {
        self.sources(import::read_files(files, format)?)
    }

    /// Turns parsed inputs into store sources: Turtle as it is, manifests as
    /// constellations built with the snapshot's lexicon plus the lexicon of
    /// any Turtle in the same batch.
    pub fn sources(&self, inputs: Vec<Input>) -> Result<Vec<Source>> {
        let mut sources = Vec::with_capacity(inputs.len());
        let mut manifests = Vec::new();
        for input in inputs {
            match input {
                Input::Turtle { name, text } => sources.push(Source {
                    name,
                    data: SourceData::Turtle(text),
                }),
                Input::Manifest { name, tools } => manifests.push((name, tools)),
            }
        }
        if manifests.is_empty() {
            return Ok(sources);
        }
        let snapshot = self.snapshot();
        let mut lexicon = snapshot.catalog.lexicon_entries().to_vec();
        if !sources.is_empty() {
            let scratch = crate::graph::OxigraphStore::memory()?;
            scratch.load_unchecked(&sources)?;
            lexicon.extend(scratch.lexicon()?);
        }
        let extractor = Extractor::new(Lexicon::new(lexicon));
        for (name, descriptors) in manifests {
            let items: Vec<Constellation> = descriptors
                .par_iter()
                .map(|d| constellation::build(d, &extractor))
                .collect();
            sources.push(Source {
                name,
                data: SourceData::Constellations(items),
            });
        }
        Ok(sources)
    }

    /// Loads sources in one transaction (all or nothing), then refreshes
    /// the snapshot (re-embedding only what changed).
    pub fn load(&self, sources: &[Source]) -> Result<(LoadReport, Option<SyncReport>)> {
        let _one_at_a_time = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        let report = if self.strict {
            self.store.load(sources)?
        } else {
            self.store.load_unchecked(sources)?
        };
        Ok((report, self.refresh()?))
    }

    /// Loads files (Turtle, MCP, OpenAPI, JSONL) in one transaction.
    pub fn load_paths(&self, paths: &[PathBuf], format: Option<Format>) -> Result<LoadOutcome> {
        let files = import::collect_files(paths)?;
        let sources = self.prepare(&files, format)?;
        let (store, embeddings) = self.load(&sources)?;
        Ok(LoadOutcome {
            store,
            embeddings,
            files: files.iter().map(|f| f.display().to_string()).collect(),
        })
    }

    /// Registers one manifest or Turtle text as source `source` (default: a
    /// name derived from the content, so the same text twice is one source),
    /// all or nothing; only changed tools are re-embedded.
    pub fn register_text(
        &self,
        source: Option<&str>,
        text: &str,
        format: Option<Format>,
    ) -> Result<Registration> {
        let name = match source {
            Some(s) if s.trim().is_empty() || s.len() > 256 || s.contains(char::is_control) => {
                return Err(Error::invalid_field(
                    "source",
                    "a source name is 1 to 256 printable characters",
                ));
            }
            Some(s) => s.trim().to_string(),
            None => {
                use sha2::Digest;
                let digest = sha2::Sha256::digest(text.as_bytes());
                let hex: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
                let ext = match format {
                    Some(Format::Turtle) => ".ttl",
                    Some(Format::Jsonl) => ".jsonl",
                    _ => "",
                };
                format!("api/{hex}{ext}")
            }
        };
        let input = import::parse_input(&name, text, format)?;
        let sources = self.sources(vec![input])?;
        let warnings: Vec<String> = sources
            .iter()
            .filter_map(|s| match &s.data {
                SourceData::Constellations(items) => Some(items),
                SourceData::Turtle(_) => None,
            })
            .flatten()
            .flat_map(|c| c.warnings.iter().cloned())
            .collect();
        let (store, embeddings) = self.load(&sources)?;
        let tools = self.snapshot().catalog.of_source(&name).len();
        Ok(Registration {
            source: name,
            tools,
            store,
            embeddings,
            warnings,
        })
    }

    /// Removes a tool (every statement about it). A tool other tools depend
    /// on is refused, naming them.
    pub fn remove_tool(&self, key: &str) -> Result<()> {
        let snap = self.snapshot();
        let c = &snap.catalog;
        let idx = c.find(key).ok_or_else(|| Error::not_found("tool", key))?;
        let tool = &c.tools[idx];
        let dependents: Vec<&str> = c
            .tools
            .iter()
            .filter(|t| {
                t.depends_on
                    .iter()
                    .any(|d| d.eq_ignore_ascii_case(&tool.name))
            })
            .map(|t| t.name.as_str())
            .collect();
        if !dependents.is_empty() {
            return Err(Error::Conflict(format!(
                "`{}` is a prerequisite of {}: remove or change those first",
                tool.name,
                dependents.join(", ")
            )));
        }
        let iri = [tool.iri.clone()];
        let name = tool.name.clone();
        let _one_at_a_time = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        self.store
            .apply(&crate::graph::Change {
                remove_tools: &iri,
                check: self.strict,
                ..Default::default()
            })
            .map_err(|e| match e {
                // A profile, goal or policy still names it.
                Error::Violations(v) => Error::Conflict(format!(
                    "`{name}` is still referenced: {}",
                    v.iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("; ")
                )),
                other => other,
            })?;
        drop(snap);
        self.refresh()?;
        Ok(())
    }

    /// Reloads files and directories (the ontology and seeds) as one change:
    /// every file replaces its source, and sources that came from these
    /// directories but no longer exist on disk are removed. Returns the load
    /// and the removed sources.
    pub fn reload(&self, paths: &[PathBuf]) -> Result<(LoadOutcome, Vec<String>)> {
        let files = import::collect_files(paths)?;
        let sources = self.prepare(&files, None)?;
        let present: std::collections::HashSet<String> =
            sources.iter().map(|s| s.name.clone()).collect();
        let roots: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        let stale: Vec<String> = self
            .store
            .sources()?
            .into_iter()
            .filter(|s| !present.contains(s))
            .filter(|s| roots.iter().any(|r| s.starts_with(&format!("{r}/"))))
            .collect();
        let _one_at_a_time = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        let store = self.store.apply(&crate::graph::Change {
            load: &sources,
            unload: &stale,
            check: self.strict,
            ..Default::default()
        })?;
        let embeddings = self.refresh()?;
        Ok((
            LoadOutcome {
                store,
                embeddings,
                files: files.iter().map(|f| f.display().to_string()).collect(),
            },
            stale,
        ))
    }

    /// A read-only SPARQL query over the store, cancelled after `limit`.
    pub fn sparql(&self, query: &str, limit: Duration) -> Result<crate::graph::SparqlOutput> {
        let sparql = self
            .store
            .sparql()
            .ok_or_else(|| Error::Unavailable("this store does not answer SPARQL".into()))?;
        sparql.query_within(query, Some(limit))
    }

    /// What `caller` may see in `snapshot` (a request without a caller is
    /// judged by the platform layer alone).
    fn access(&self, snapshot: &Snapshot, caller: &Caller) -> Result<Access> {
        let _stage = tracing::info_span!("stage", stage = "scope").entered();
        let failed = match &caller.session {
            Some(s) => self.sessions.get(s).failed,
            None => Vec::new(),
        };
        snapshot.policy.resolve(&snapshot.catalog, caller, &failed)
    }

    /// How many tools `caller` may see (the policy resolution alone).
    pub fn visible(&self, caller: &Caller) -> Result<usize> {
        let snap = self.snapshot();
        Ok(self.access(&snap, caller)?.scope.len())
    }

    /// Every tool the platform allows (an anonymous caller's listing).
    pub fn tools(&self) -> Vec<Tool> {
        self.list(&ListRequest::default())
            .map(|page| page.tools.into_iter().map(|t| t.tool).collect())
            .unwrap_or_default()
    }

    /// The tools a caller may see, filtered by domain and/or source, one page.
    pub fn list(&self, req: &ListRequest) -> Result<ToolPage> {
        let snap = self.snapshot();
        let c = &snap.catalog;
        let access = self.access(&snap, &req.caller)?;
        let mut scope = access.scope.clone();
        if let Some(d) = &req.filter.domain {
            scope.intersect(&Scope::of(c.tools.len(), c.in_domain(d).iter().copied()));
        }
        if let Some(s) = &req.filter.source {
            scope.intersect(&Scope::of(c.tools.len(), c.of_source(s).iter().copied()));
        }
        let limit = if req.limit == 0 {
            usize::MAX
        } else {
            req.limit
        };
        let tools = scope
            .iter()
            .skip(req.offset)
            .take(limit)
            .filter_map(|i| {
                Some(ListedTool {
                    tool: c.tools.get(i)?.clone(),
                    requires_approval: access.approval.contains(i),
                })
            })
            .collect();
        Ok(ToolPage {
            tools,
            total: scope.len(),
            offset: req.offset,
            warnings: access.warnings,
        })
    }

    /// The tools of one domain and/or one source the platform allows.
    pub fn tools_where(&self, filter: &ToolFilter) -> Vec<Tool> {
        let req = ListRequest {
            filter: filter.clone(),
            ..ListRequest::default()
        };
        self.list(&req)
            .map(|page| page.tools.into_iter().map(|t| t.tool).collect())
            .unwrap_or_default()
    }

    /// One tool (by name, id or IRI) as `caller` sees it; a tool the caller
    /// may not see is not found, like a missing one.
    pub fn tool_for(&self, caller: &Caller, key: &str) -> Result<ListedTool> {
        let snap = self.snapshot();
        let access = self.access(&snap, caller)?;
        snap.catalog
            .find(key)
            .filter(|&i| access.scope.contains(i))
            .and_then(|i| {
                Some(ListedTool {
                    tool: snap.catalog.tools.get(i)?.clone(),
                    requires_approval: access.approval.contains(i),
                })
            })
            .ok_or_else(|| Error::not_found("tool", key))
    }

    /// One tool the platform allows, by name, id or IRI.
    pub fn tool(&self, key: &str) -> Option<Tool> {
        self.tool_for(&Caller::default(), key).ok().map(|t| t.tool)
    }

    /// The domains a caller may see tools of, with how many (`domain:X`
    /// grouping, from `tg:inDomain`), largest first.
    pub fn domains(&self, caller: &Caller) -> Result<Vec<DomainCount>> {
        let snap = self.snapshot();
        let c = &snap.catalog;
        let access = self.access(&snap, caller)?;
        let mut out: Vec<DomainCount> = c
            .by_domain
            .iter()
            .map(|(iri, tools)| DomainCount {
                domain: crate::vocab::local_name(iri).to_string(),
                iri: iri.clone(),
                label: c.label(iri),
                tools: tools.iter().filter(|&&i| access.scope.contains(i)).count(),
            })
            .filter(|d| d.tools > 0)
            .collect();
        out.sort_by(|a, b| b.tools.cmp(&a.tools).then(a.domain.cmp(&b.domain)));
        Ok(out)
    }

    /// Each policy layer's verdict on one tool for `caller` (an operator's
    /// view: it names tools the caller may not see).
    pub fn explain_policy(&self, caller: &Caller, tool: &str) -> Result<Explanation> {
        let snap = self.snapshot();
        let idx = snap
            .catalog
            .find(tool)
            .ok_or_else(|| Error::not_found("tool", tool))?;
        let failed = match &caller.session {
            Some(s) => self.sessions.get(s).failed,
            None => Vec::new(),
        };
        snap.policy.explain(&snap.catalog, caller, &failed, idx)
    }

    /// Records that `tool` failed in `session`: hidden for the rest of it.
    pub fn session_failed(&self, session: &str, tool: &str, reason: &str) {
        self.sessions.update(session, |s| {
            if !s.failed.iter().any(|(t, _)| t.eq_ignore_ascii_case(tool)) {
                s.failed.push((tool.to_string(), reason.to_string()));
            }
        });
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
        let query = {
            let _stage = tracing::info_span!("stage", stage = "extract").entered();
            Query::parse(
                catalog,
                &req.text,
                req.verb.as_deref(),
                req.mode,
                self.rank.steps,
            )
        };
        let ranked = self.rank(catalog, &scope, &query, vector, limit)?;
        let mut matches = self.matches(catalog, &access, &ranked, req.dependencies);
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

    /// Gathers the pipeline's inputs (graph hits in scope, query vectors)
    /// and runs it.
    fn rank(
        &self,
        catalog: &Catalog,
        scope: &Scope,
        query: &Query,
        vector: Option<Vec<f32>>,
        limit: usize,
    ) -> Result<Ranked> {
        let hits = {
            let _stage = tracing::info_span!("stage", stage = "graph").entered();
            self.graph_hits(catalog, scope, query)?
        };
        let dense = query.mode.uses_dense() && catalog.vectors.is_some();
        let _embed = tracing::info_span!("stage", stage = "dense").entered();
        let (vector, step_vectors) = match &self.embedder {
            Some(embedder) if dense => {
                let v = match vector {
                    Some(v) => v,
                    None => {
                        let text = [query.text.clone()];
                        let batch = self.queries.get_or_embed(&text, || {
                            embedder.embed_query(&query.text).map(|v| vec![v])
                        })?;
                        batch.first().cloned().unwrap_or_default()
                    }
                };
                let steps = if query.steps.is_empty() {
                    Vec::new()
                } else {
                    let texts = query.step_texts();
                    let batch = self
                        .queries
                        .get_or_embed(&texts, || embedder.embed_documents(&texts))?;
                    batch.to_vec()
                };
                (Some(v), steps)
            }
            None if query.mode == Mode::Dense => {
                return Err(Error::invalid_field(
                    "mode",
                    "dense mode needs embeddings (run without --no-embed)",
                ));
            }
            _ => (None, Vec::new()),
        };
        drop(_embed);
        let inputs = Inputs {
            hits: &hits,
            vector: vector.as_deref(),
            step_vectors: &step_vectors,
        };
        Ok(pipeline::run(
            catalog,
            query,
            scope,
            &inputs,
            &self.rank,
            &self.calibration,
            limit,
        ))
    }

    /// Graph paths from the request's nodes, kept only for tools in scope
    /// (filtered by index after the query, never pasted into it).
    fn graph_hits(&self, catalog: &Catalog, scope: &Scope, query: &Query) -> Result<Vec<GraphHit>> {
        let nodes = pipeline::graph_nodes(query);
        let mut hits = self.store.candidates(&nodes)?;
        hits.retain(|h| {
            catalog
                .by_iri
                .get(&h.tool)
                .is_some_and(|&i| scope.contains(i))
        });
        Ok(hits)
    }

    fn matches(
        &self,
        catalog: &Catalog,
        access: &Access,
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
                        catalog.prerequisites(r.idx, &access.scope)
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
                let query = Query::parse(catalog, &req.message, None, Mode::Joint, self.rank.steps);
                let ranked = self.rank(catalog, &access.scope, &query, None, 5)?;
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
