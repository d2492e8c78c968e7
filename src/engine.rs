//! The one orchestrator: register sources, keep the catalog snapshot fresh,
//! answer search / resolve. Sync and `Send + Sync`: a server calls it from
//! `spawn_blocking`.

use crate::catalog::Catalog;
use crate::constellation::{Constellation, build};
use crate::embed::{Embedder, FastEmbedder, HashEmbedder, SyncReport, sync_index};
use crate::extract::{Extractor, Lexicon};
use crate::graph::{GraphStore, LoadReport, OxigraphStore, Source, SourceData};
use crate::import::{Format, detect_format, parse_manifest};
use crate::model::{Mention, Tool};
use crate::rank::{
    self, Calibration, ChannelScores, Mode, RankConfig, ScoreDetails, Scored, disambiguate,
};
use crate::{Error, Result};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

pub use crate::rank::Clarify;

/// Which embedder the engine uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Embeddings {
    /// The real MiniLM model from this directory (see `scripts/setup.sh`).
    Model(PathBuf),
    /// The deterministic test double (unit tests only).
    TestDouble,
    /// No dense channel.
    Off,
}

/// How to open an engine.
#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// RocksDB directory; `None` keeps everything in memory.
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
    /// A precomputed query embedding (batch evaluation).
    #[serde(skip)]
    pub query_vector: Option<Vec<f32>>,
}

/// What the whole-request ranking already computed, reused per step.
struct StepInput<'a> {
    allowed: &'a [usize],
    verb_mentions: &'a [Mention],
    text_mentions: &'a [Mention],
    exact: &'a [usize],
    hits: &'a [crate::graph::GraphHit],
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
}

/// Collects the loadable files under `paths` (directories recursively, sorted).
pub fn collect_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| Error::io(dir, e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out)?;
            } else if matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("ttl" | "json" | "jsonl" | "yaml" | "yml")
            ) {
                out.push(p);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            walk(p, &mut out)?;
        } else if p.exists() {
            out.push(p.clone());
        } else {
            return Err(Error::io(
                p,
                std::io::Error::new(std::io::ErrorKind::NotFound, "no such file or directory"),
            ));
        }
    }
    Ok(out)
}

impl Engine {
    /// Opens the store and the embedder, and builds the catalog snapshot.
    pub fn open(opts: EngineOptions) -> Result<Self> {
        let store: Box<dyn GraphStore> = match &opts.data_dir {
            Some(dir) => Box::new(OxigraphStore::open(&dir.join("graph"))?),
            None => Box::new(OxigraphStore::memory()?),
        };
        let embedder: Option<Arc<dyn Embedder>> = match &opts.embeddings {
            Embeddings::Model(dir) => Some(Arc::new(FastEmbedder::load(dir)?)),
            Embeddings::TestDouble => Some(Arc::new(HashEmbedder::default())),
            Embeddings::Off => None,
        };
        let engine = Self {
            store,
            embedder,
            data_dir: opts.data_dir,
            progress: opts.progress,
            rank: opts.rank,
            calibration: opts.calibration,
            strict: opts.strict,
            catalog: RwLock::new(Arc::new(Catalog::build(
                Vec::new(),
                Vec::new(),
                Default::default(),
                None,
                true,
            ))),
            last_sync: RwLock::new(None),
        };
        engine.refresh()?;
        Ok(engine)
    }

    /// The current catalog snapshot.
    pub(crate) fn catalog(&self) -> Arc<Catalog> {
        match self.catalog.read() {
            Ok(c) => Arc::clone(&c),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
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
                let (index, report) =
                    sync_index(dir.as_deref(), &tools, embedder.as_ref(), self.progress)?;
                (Some(index), Some(report))
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
        match self.catalog.write() {
            Ok(mut c) => *c = catalog,
            Err(poisoned) => *poisoned.into_inner() = catalog,
        }
        if let Ok(mut s) = self.last_sync.write() {
            s.clone_from(&sync);
        }
        Ok(sync)
    }

    /// The last embedding sync (index health).
    pub fn last_sync(&self) -> Option<SyncReport> {
        self.last_sync.read().ok().and_then(|s| s.clone())
    }

    /// Reads and parses files into store sources (nothing is written).
    /// Manifests are turned into constellations with a lexicon made of the
    /// store's ontology plus any Turtle in the same batch.
    pub fn prepare(&self, files: &[PathBuf], format: Option<Format>) -> Result<Vec<Source>> {
        let mut turtle = Vec::new();
        let mut manifests = Vec::new();
        for path in files {
            let name = path.display().to_string();
            let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
            let fmt = match format {
                Some(f) => f,
                None => detect_format(path, &text).ok_or_else(|| {
                    Error::parse(
                        &name,
                        None,
                        None,
                        "cannot tell the format (use --format turtle|mcp|openapi|jsonl)",
                    )
                })?,
            };
            match fmt {
                Format::Turtle => turtle.push(Source {
                    name,
                    data: SourceData::Turtle(text),
                }),
                other => manifests.push((name.clone(), parse_manifest(&name, &text, other)?)),
            }
        }
        let mut sources = turtle;
        if !manifests.is_empty() {
            let mut lexicon = self.store.lexicon()?;
            if !sources.is_empty() {
                let scratch = OxigraphStore::memory()?;
                scratch.load_unchecked(&sources)?;
                lexicon.extend(scratch.lexicon()?);
            }
            let extractor = Extractor::new(Lexicon::new(lexicon));
            for (name, descriptors) in manifests {
                let items: Vec<Constellation> = descriptors
                    .par_iter()
                    .map(|d| build(d, &extractor))
                    .collect();
                sources.push(Source {
                    name,
                    data: SourceData::Constellations(items),
                });
            }
        }
        Ok(sources)
    }

    /// Loads files (Turtle, MCP, OpenAPI, JSONL) in one transaction.
    pub fn load_paths(&self, paths: &[PathBuf], format: Option<Format>) -> Result<LoadOutcome> {
        let files = collect_files(paths)?;
        let sources = self.prepare(&files, format)?;
        let store = if self.strict {
            self.store.load(&sources)?
        } else {
            self.store.load_unchecked(&sources)?
        };
        let embeddings = self.refresh()?;
        Ok(LoadOutcome {
            store,
            embeddings,
            files: files.iter().map(|f| f.display().to_string()).collect(),
        })
    }

    /// Every tool in the catalog.
    pub fn tools(&self) -> Vec<Tool> {
        self.catalog().tools.clone()
    }

    /// Finds a tool by name, id or IRI.
    pub fn tool(&self, key: &str) -> Option<Tool> {
        let c = self.catalog();
        c.find(key).and_then(|i| c.tools.get(i).cloned())
    }

    /// Mentions the extractor finds in a text.
    pub fn extract(&self, text: &str) -> Vec<Mention> {
        self.catalog().extractor.extract(text)
    }

    /// Embeds request texts in batches (for evaluation runs).
    pub fn embed_queries(&self, texts: &[String]) -> Result<Option<Vec<Vec<f32>>>> {
        match &self.embedder {
            Some(e) => Ok(Some(e.embed_documents(texts)?)),
            None => Ok(None),
        }
    }

    /// The text the dense and lexical channels see for a request.
    pub fn request_text(req: &SearchRequest) -> String {
        match &req.verb {
            Some(v) if !v.trim().is_empty() => {
                format!(
                    "{} {}",
                    crate::extract::split_identifier(v).join(" "),
                    req.text
                )
            }
            _ => req.text.clone(),
        }
    }

    /// Ranks tools for a request. Tools outside `candidates` never reach
    /// ranking, counts or explanations.
    pub fn search(&self, req: &SearchRequest) -> Result<SearchResponse> {
        let catalog = self.catalog();
        let limit = if req.limit == 0 { 10 } else { req.limit };
        let allowed: Vec<usize> = match &req.candidates {
            Some(names) => {
                let mut idx = Vec::with_capacity(names.len());
                let mut unknown = Vec::new();
                for n in names {
                    match catalog.find(n) {
                        Some(i) => idx.push(i),
                        None => unknown.push(n.as_str()),
                    }
                }
                if !unknown.is_empty() {
                    return Err(Error::Invalid(format!(
                        "unknown candidate tool(s): {}",
                        unknown.join(", ")
                    )));
                }
                idx.sort_unstable();
                idx.dedup();
                idx
            }
            None => (0..catalog.tools.len()).collect(),
        };
        let mut mentions = Vec::new();
        if let Some(v) = &req.verb {
            mentions.extend(catalog.extractor.extract(v));
        }
        let text_mentions = catalog.extractor.extract(&req.text);
        let request_text = Self::request_text(req);
        let mode = req.mode;
        let use_graph = matches!(mode, Mode::Joint | Mode::Graph);
        let use_dense = matches!(mode, Mode::Joint | Mode::Dense);
        let use_lexical = matches!(mode, Mode::Joint | Mode::Lexical);
        let mut all_mentions = mentions.clone();
        all_mentions.extend(text_mentions.iter().cloned());

        let hits = if use_graph {
            let nodes = rank::request_nodes(&all_mentions);
            let restrict: Option<Vec<String>> = req.candidates.as_ref().map(|_| {
                allowed
                    .iter()
                    .filter_map(|&i| catalog.tools.get(i).map(|t| t.iri.clone()))
                    .collect()
            });
            self.store.candidates(&nodes, restrict.as_deref())?
        } else {
            Vec::new()
        };
        let graph = if use_graph {
            rank::graph_scores(&catalog, &all_mentions, mentions.len(), &hits)
        } else {
            Default::default()
        };
        let dense: Option<Vec<f32>> = match (use_dense, &self.embedder, &catalog.vectors) {
            (true, Some(embedder), Some(index)) => {
                let q = match &req.query_vector {
                    Some(v) => v.clone(),
                    None => embedder.embed_query(&request_text)?,
                };
                Some(catalog.cosines(index, &q))
            }
            (true, None, _) if mode == Mode::Dense => {
                return Err(Error::Invalid(
                    "dense mode needs embeddings (run without --no-embed)".into(),
                ));
            }
            _ => None,
        };
        let bm25 = if use_lexical || use_graph {
            catalog.bm25.scores(&request_text)
        } else {
            Vec::new()
        };
        let mut exact: Vec<usize> = catalog.names.find(&req.text);
        if let Some(v) = &req.verb {
            exact.extend(catalog.names.find(v));
        }
        exact.retain(|i| allowed.binary_search(i).is_ok());
        let channels = ChannelScores {
            graph: &graph,
            dense: dense.as_deref(),
            bm25: &bm25,
            exact: &exact,
        };
        let mut scored = rank::fuse(mode, &self.rank, &allowed, &channels);
        if self.rank.steps {
            let step_input = StepInput {
                allowed: &allowed,
                verb_mentions: &mentions,
                text_mentions: &text_mentions,
                exact: &exact,
                hits: &hits,
            };
            self.rank_steps(&catalog, req, &step_input, &mut scored)?;
        }
        if mode == Mode::Graph {
            // Graph-only ablation: break graph ties lexically so the
            // order is not alphabetical.
            scored.sort_by(|a, b| {
                b.details
                    .fused
                    .total_cmp(&a.details.fused)
                    .then(b.details.bm25.total_cmp(&a.details.bm25))
                    .then(a.idx.cmp(&b.idx))
            });
        }
        let clarify = if use_graph {
            disambiguate(&catalog, &mut scored, &all_mentions, &self.rank)
        } else {
            None
        };
        // Step coverage reorders after disambiguation, which compares the
        // top match with its runners-up by score.
        if scored.iter().any(|s| s.details.best_for_step.is_some()) {
            rank::move_step_winners_up(&mut scored);
        }
        let matches = self.to_matches(&catalog, &scored, limit, req.dependencies);
        let abstain = matches
            .first()
            .is_none_or(|m| m.confidence < self.rank.abstain_below);
        Ok(SearchResponse {
            ambiguous: clarify.is_some(),
            clarify,
            abstain,
            matches,
            mentions: all_mentions,
            mode,
        })
    }

    /// Multi-step requests ("retrieve X. Then calculate Y."): every step is
    /// ranked on its own text, mentions and embedding, and a tool keeps its
    /// best score over the whole request and its steps, naming the step.
    fn rank_steps(
        &self,
        catalog: &Catalog,
        req: &SearchRequest,
        input: &StepInput<'_>,
        scored: &mut [Scored],
    ) -> Result<()> {
        let StepInput {
            allowed,
            verb_mentions,
            text_mentions,
            exact,
            hits,
        } = *input;
        let steps = crate::extract::steps(&req.text);
        if steps.len() < 2 {
            return Ok(());
        }
        let mode = req.mode;
        let texts: Vec<String> = steps
            .iter()
            .filter_map(|r| req.text.get(r.clone()))
            .map(|t| match &req.verb {
                Some(v) if !v.trim().is_empty() => {
                    format!("{} {t}", crate::extract::split_identifier(v).join(" "))
                }
                _ => t.to_string(),
            })
            .collect();
        let vectors = match (&self.embedder, &catalog.vectors) {
            (Some(embedder), Some(_)) if matches!(mode, Mode::Joint | Mode::Dense) => {
                Some(embedder.embed_documents(&texts)?)
            }
            _ => None,
        };
        let use_graph = matches!(mode, Mode::Joint | Mode::Graph);
        let best: HashMap<usize, usize> = scored
            .iter()
            .enumerate()
            .map(|(pos, s)| (s.idx, pos))
            .collect();
        // The best tool of each step, listed right after the top match.
        let mut winners: Vec<(usize, String)> = Vec::new();
        for (k, range) in steps.iter().enumerate() {
            let Some(text) = texts.get(k) else { continue };
            let mut mentions = verb_mentions.to_vec();
            mentions.extend(
                text_mentions
                    .iter()
                    .filter(|m| m.start >= range.start && m.end <= range.end)
                    .cloned(),
            );
            let graph = if use_graph {
                rank::graph_scores(catalog, &mentions, verb_mentions.len(), hits)
            } else {
                Default::default()
            };
            let dense: Option<Vec<f32>> = match (&vectors, &catalog.vectors) {
                (Some(vs), Some(index)) => vs.get(k).map(|q| catalog.cosines(index, q)),
                _ => None,
            };
            let bm25 = catalog.bm25.scores(text);
            let channels = ChannelScores {
                graph: &graph,
                dense: dense.as_deref(),
                bm25: &bm25,
                exact,
            };
            let step = req.text.get(range.clone()).unwrap_or_default();
            let step_scores = rank::fuse(mode, &self.rank, allowed, &channels);
            if let Some(top) = step_scores.first() {
                winners.push((top.idx, step.to_string()));
            }
            for mut s in step_scores {
                let Some(&pos) = best.get(&s.idx) else {
                    continue;
                };
                s.details.fused -= self.rank.step_discount;
                if s.details.fused > scored[pos].details.fused {
                    s.details.step = Some(step.to_string());
                    scored[pos] = s;
                }
            }
        }
        if self.rank.step_cover {
            for (idx, step) in winners {
                if let Some(&pos) = best.get(&idx) {
                    scored[pos].details.best_for_step.get_or_insert(step);
                }
            }
        }
        rank::sort_by_score(scored);
        Ok(())
    }

    fn to_matches(
        &self,
        catalog: &Catalog,
        scored: &[Scored],
        limit: usize,
        dependencies: bool,
    ) -> Vec<Match> {
        let best = scored.first().map(|s| &s.details);
        // The runner-up by score (step coverage may list a lower-scoring
        // step winner second; confidence compares with the real runner-up).
        let second = scored
            .iter()
            .skip(1)
            .map(|s| &s.details)
            .max_by(|a, b| a.fused.total_cmp(&b.fused));
        scored
            .iter()
            .take(limit)
            .enumerate()
            .filter_map(|(i, s)| {
                let t = catalog.tools.get(s.idx)?;
                let other = if i == 0 { second } else { best };
                Some(Match {
                    tool: t.name.clone(),
                    id: t.id.clone(),
                    score: s.details.fused,
                    confidence: self.calibration.confidence(&s.details, other),
                    description: t.description.clone(),
                    categories: t.categories.iter().map(|c| c.label.clone()).collect(),
                    details: s.details.clone(),
                    prerequisites: if dependencies {
                        catalog.prerequisites(s.idx)
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
        let threshold = self.rank.substitute_above;
        let top = response.matches.first();
        match top {
            Some(m) if m.confidence >= threshold && !response.ambiguous => Ok(Resolution {
                decision: Decision::Substitute,
                tool: Some(m.tool.clone()),
                confidence: m.confidence,
                reason: format!(
                    "`{}` matches {} with confidence {:.2} (threshold {threshold:.2})",
                    m.tool, req.verb, m.confidence
                ),
                nearest: response.matches.clone(),
            }),
            Some(m) => Ok(Resolution {
                decision: Decision::Decompose,
                tool: None,
                confidence: m.confidence,
                reason: if response.ambiguous {
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
                },
                nearest: response.matches.clone(),
            }),
            None => Ok(Resolution {
                decision: Decision::Decompose,
                tool: None,
                confidence: 0.0,
                reason: "the catalog is empty".into(),
                nearest: Vec::new(),
            }),
        }
    }
}

impl Engine {
    /// Renders tools (by id or name) for an LLM prompt within a token budget.
    pub fn render_prompt(&self, tools: &[String], budget_tokens: usize) -> String {
        let c = self.catalog();
        let idxs: Vec<usize> = tools.iter().filter_map(|t| c.find(t)).collect();
        c.render_prompt(&idxs, budget_tokens)
    }
}

/// The constellations inside prepared sources (for `import --dry-run`).
pub fn constellations_of(sources: &[Source]) -> Vec<Constellation> {
    sources
        .iter()
        .filter_map(|s| match &s.data {
            SourceData::Constellations(items) => Some(items.clone()),
            SourceData::Turtle(_) => None,
        })
        .flatten()
        .collect()
}

/// One line per constellation: name, verb, entities, domains.
pub fn constellation_summary(c: &Constellation) -> String {
    let labels = |links: &[crate::Link]| {
        links
            .iter()
            .map(|l| format!("{} ({:.2})", l.label, l.weight))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "{}\n  verb: {}\n  entities: {}\n  domains: {}\n  read-only: {}{}",
        c.descriptor.name,
        labels(&c.verbs),
        labels(&c.entities),
        labels(&c.domains),
        c.read_only,
        if c.depends_on.is_empty() {
            String::new()
        } else {
            format!("\n  depends on: {}", c.depends_on.join(", "))
        }
    )
}

/// A tool's constellation as a Graphviz digraph.
pub fn constellation_dot(t: &Tool) -> String {
    fn q(s: &str) -> String {
        format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
    }
    let mut out = format!(
        "digraph constellation {{\n  rankdir=LR;\n  {} [shape=box, style=bold];\n",
        q(&t.name)
    );
    let mut edge = |label: &str, target: &str, extracted: bool| {
        out.push_str(&format!(
            "  {} -> {} [label={}{}];\n",
            q(&t.name),
            q(target),
            q(label),
            if extracted { ", style=dashed" } else { "" }
        ));
    };
    for l in &t.verbs {
        edge(
            "performs",
            &l.label,
            l.provenance == crate::Provenance::Extracted,
        );
    }
    for l in &t.entities {
        edge(
            "actsOn",
            &l.label,
            l.provenance == crate::Provenance::Extracted,
        );
    }
    for l in &t.domains {
        edge(
            "inDomain",
            &l.label,
            l.provenance == crate::Provenance::Extracted,
        );
    }
    for l in &t.categories {
        edge("inCategory", &l.label, false);
    }
    for i in &t.integrations {
        edge("requiresIntegration", i, false);
    }
    for c in &t.channels {
        edge("availableOnChannel", c, false);
    }
    for d in &t.depends_on {
        edge("dependsOn", d, false);
    }
    out.push_str("}\n");
    out
}
