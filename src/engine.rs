//! The one orchestrator: register sources, keep the catalog snapshot fresh,
//! answer search / resolve. Sync and `Send + Sync`: a server calls it from
//! `spawn_blocking`.
//!
//! A read takes the current snapshot, fixes the request's [`Scope`] (the
//! tools it may see), gathers what the pipeline needs (graph hits from the
//! store, the query vectors from the embedder), runs the ranking pipeline
//! and turns its answer into [`Match`]es. Ranking itself lives in `rank/`.

use crate::catalog::Catalog;
use crate::constellation;
use crate::embed::{Embedder, FastEmbedder, SyncReport, sync_vectors};
use crate::error::{Error, Result};
use crate::extract::{Extractor, Lexicon};
use crate::graph::{GraphHit, GraphStore, LoadReport, Source, SourceData};
use crate::import::{self, Format, Input};
use crate::model::{Constellation, Mention, Tool};
use crate::rank::pipeline::{self, Inputs, Ranked};
use crate::rank::query::Query;
use crate::rank::{Calibration, Clarify, Mode, RankConfig, ScoreDetails};
use crate::scope::Scope;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

/// Which embedder the engine uses.
#[derive(Debug, Clone)]
pub enum Embeddings {
    /// The real MiniLM model from this directory (see `scripts/setup.sh`).
    Model(PathBuf),
    /// An embedder the caller built (another model, or a test double).
    Custom(Arc<dyn Embedder>),
    /// No dense channel.
    Off,
}

/// How to open an engine.
#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// Where the engine keeps its files (the embedded store under `graph/`,
    /// vectors under `vectors/`); `None` keeps everything in memory.
    pub data_dir: Option<PathBuf>,
    pub embeddings: Embeddings,
    /// Progress bars on a terminal.
    pub progress: bool,
    pub rank: RankConfig,
    pub calibration: Calibration,
    /// Refuse loads that violate the seed constraints (default true).
    pub strict: bool,
}

impl EngineOptions {
    /// In-memory engine with the given embeddings.
    pub fn memory(embeddings: Embeddings) -> Self {
        Self {
            data_dir: None,
            embeddings,
            progress: false,
            rank: RankConfig::default(),
            calibration: Calibration::default(),
            strict: true,
        }
    }
}

/// A search request.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SearchRequest {
    /// Free-text context ("Southwest flight 175 tomorrow").
    #[serde(default)]
    pub text: String,
    /// Planner verb (`MAKE_RESERVATION`), optional.
    #[serde(default)]
    pub verb: Option<String>,
    #[serde(default)]
    pub mode: Mode,
    /// Maximum matches returned (0 = 10).
    #[serde(default)]
    pub limit: usize,
    /// Restrict ranking to these tool ids/names.
    #[serde(default)]
    pub candidates: Option<Vec<String>>,
    /// Expand `dependsOn` into an ordered prerequisite list per match.
    #[serde(default)]
    pub dependencies: bool,
}

/// One ranked tool.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Match {
    /// The tool's callable name.
    pub tool: String,
    /// Its catalog id (differs from the name for dataset variants).
    pub id: String,
    pub score: f32,
    /// Calibrated probability that this is a right tool.
    pub confidence: f32,
    pub description: String,
    pub categories: Vec<String>,
    pub details: ScoreDetails,
    /// Tools to run first, in order (with `dependencies`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prerequisites: Vec<String>,
}

/// The answer to a search.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SearchResponse {
    pub matches: Vec<Match>,
    /// Close candidates that nothing in the request tells apart.
    pub ambiguous: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clarify: Option<Clarify>,
    /// Nothing fits well enough: the planner should not call any of these.
    pub abstain: bool,
    pub mentions: Vec<Mention>,
    pub mode: Mode,
}

/// `resolve` input: a verb the planner wants to execute.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ResolveRequest {
    pub verb: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub context: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// A catalog tool does it: call that instead.
    Substitute,
    /// Nothing does it confidently: break the verb into smaller steps.
    Decompose,
}

/// `resolve` output.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Resolution {
    pub decision: Decision,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    pub confidence: f32,
    pub nearest: Vec<Match>,
    pub reason: String,
}

/// Which tools a listing keeps.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ToolFilter {
    /// A domain: IRI, local name (`travel`) or label.
    #[serde(default)]
    pub domain: Option<String>,
    /// A source as loaded (`seeds/travel.ttl`).
    #[serde(default)]
    pub source: Option<String>,
}

/// What a load did, including the re-embedding it caused.
#[derive(Debug, Clone, Serialize)]
pub struct LoadOutcome {
    pub store: LoadReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embeddings: Option<SyncReport>,
    pub files: Vec<String>,
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
    catalog: RwLock<Arc<Catalog>>,
    last_sync: RwLock<Option<SyncReport>>,
    /// Registrations run one at a time (each builds on the snapshot the
    /// previous one left).
    writer: Mutex<()>,
}

impl Engine {
    /// Opens the embedded store (RocksDB under `data_dir/graph`, or in
    /// memory without a data dir) and builds the catalog snapshot.
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
            catalog: RwLock::new(Arc::new(Catalog::empty())),
            last_sync: RwLock::new(None),
            writer: Mutex::new(()),
        };
        engine.refresh()?;
        Ok(engine)
    }

    /// The current catalog snapshot.
    pub(crate) fn catalog(&self) -> Arc<Catalog> {
        Arc::clone(&self.catalog.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// The store, for commands that talk to it directly.
    pub fn store(&self) -> &dyn GraphStore {
        self.store.as_ref()
    }

    pub fn rank_config(&self) -> &RankConfig {
        &self.rank
    }

    /// Rebuilds the catalog from the store; re-embeds only changed tools.
    pub fn refresh(&self) -> Result<Option<SyncReport>> {
        let tools = self.store.tools()?;
        let lexicon = self.store.lexicon()?;
        let facts = self.store.ontology()?;
        let (vectors, sync) = match &self.embedder {
            Some(embedder) => {
                let dir = self.data_dir.as_ref().map(|d| d.join("vectors"));
                let previous = self.catalog();
                let (vectors, report) = sync_vectors(
                    previous.vectors.as_ref(),
                    dir.as_deref(),
                    &tools,
                    embedder.as_ref(),
                    self.progress,
                )?;
                (Some(vectors), Some(report))
            }
            None => (None, None),
        };
        let catalog = Arc::new(Catalog::build(
            tools,
            lexicon,
            facts,
            vectors,
            self.rank.lexical_params,
        ));
        *self.catalog.write().unwrap_or_else(PoisonError::into_inner) = catalog;
        *self
            .last_sync
            .write()
            .unwrap_or_else(PoisonError::into_inner) = sync.clone();
        Ok(sync)
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
        let catalog = self.catalog();
        let mut lexicon = catalog.lexicon_entries().to_vec();
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

    /// Every tool in the catalog.
    pub fn tools(&self) -> Vec<Tool> {
        let c = self.catalog();
        c.all()
            .iter()
            .filter_map(|i| c.tools.get(i).cloned())
            .collect()
    }

    /// The tools of one domain and/or one source (both when both are given).
    pub fn tools_where(&self, filter: &ToolFilter) -> Vec<Tool> {
        let c = self.catalog();
        let mut scope = c.all();
        if let Some(d) = &filter.domain {
            scope.intersect(&Scope::of(c.tools.len(), c.in_domain(d).iter().copied()));
        }
        if let Some(s) = &filter.source {
            scope.intersect(&Scope::of(c.tools.len(), c.of_source(s).iter().copied()));
        }
        scope
            .iter()
            .filter_map(|i| c.tools.get(i).cloned())
            .collect()
    }

    /// Finds a tool by name, id or IRI.
    pub fn tool(&self, key: &str) -> Option<Tool> {
        let c = self.catalog();
        let scope = c.all();
        c.find(key)
            .filter(|&i| scope.contains(i))
            .and_then(|i| c.tools.get(i).cloned())
    }

    /// Mentions the extractor finds in a text.
    pub fn extract(&self, text: &str) -> Vec<Mention> {
        self.catalog().extractor.extract(text)
    }

    /// Embeds request texts in batches (for evaluation runs).
    pub(crate) fn embed_queries(&self, texts: &[String]) -> Result<Option<Vec<Vec<f32>>>> {
        match &self.embedder {
            Some(e) => Ok(Some(e.embed_documents(texts)?)),
            None => Ok(None),
        }
    }

    /// Ranks tools for a request. Tools outside `candidates` never reach
    /// ranking, counts or explanations.
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
        let catalog = self.catalog();
        let limit = if req.limit == 0 { 10 } else { req.limit };
        let all = catalog.all();
        let scope = match &req.candidates {
            Some(names) => catalog.named(&all, names)?,
            None => all,
        };
        let query = Query::parse(
            &catalog,
            &req.text,
            req.verb.as_deref(),
            req.mode,
            self.rank.steps,
        );
        let ranked = self.rank(&catalog, &scope, &query, vector, limit)?;
        Ok(SearchResponse {
            matches: self.matches(&catalog, &scope, &ranked, req.dependencies),
            ambiguous: ranked.clarify.is_some(),
            clarify: ranked.clarify,
            abstain: ranked.abstain,
            mentions: query.mentions(),
            mode: req.mode,
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
        let hits = self.graph_hits(catalog, scope, query)?;
        let dense = query.mode.uses_dense() && catalog.vectors.is_some();
        let (vector, step_vectors) = match &self.embedder {
            Some(embedder) if dense => {
                let v = match vector {
                    Some(v) => v,
                    None => embedder.embed_query(&query.text)?,
                };
                let steps = if query.steps.is_empty() {
                    Vec::new()
                } else {
                    embedder.embed_documents(&query.step_texts())?
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
                        catalog.prerequisites(r.idx, scope)
                    } else {
                        Vec::new()
                    },
                })
            })
            .collect()
    }

    /// Novel-verb resolver: substitute a catalog tool when one does the verb
    /// confidently, else advise decomposition with the nearest tools.
    pub fn resolve(&self, req: &ResolveRequest) -> Result<Resolution> {
        let text = [req.description.as_deref(), req.context.as_deref()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(". ");
        let response = self.search(&SearchRequest {
            text,
            verb: Some(req.verb.clone()),
            limit: 3,
            ..SearchRequest::default()
        })?;
        Ok(decide(req, response, self.rank.substitute_above))
    }

    /// Renders tools (by id or name) for an LLM prompt within a token budget.
    pub fn render_prompt(&self, tools: &[String], budget_tokens: usize) -> String {
        let c = self.catalog();
        let idxs: Vec<usize> = tools.iter().filter_map(|t| c.find(t)).collect();
        c.render_prompt(&idxs, &c.all(), budget_tokens)
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
            reason: "the catalog is empty".into(),
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
