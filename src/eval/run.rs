//! Runs the engine over a dataset: builds a fresh in-memory engine from the
//! tool file (through the JSONL importer and the constellation builder),
//! embeds the queries in batches once, and evaluates every requested mode.

use super::{EvalOptions, EvalQuery, Ranked, Report, evaluate};
use crate::engine::{Embeddings, Engine, EngineOptions, SearchRequest};
use crate::error::{Error, Result};
use crate::import::Format;
use crate::rank::Mode;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Where the ranking happens for each query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    /// Rank the whole catalog.
    Global,
    /// Rank only each query's `candidates` (queries without them are skipped).
    Candidates,
}

impl Setting {
    pub fn as_str(self) -> &'static str {
        match self {
            Setting::Global => "global",
            Setting::Candidates => "candidates",
        }
    }
}

/// One evaluation run over one tool catalog.
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// Name in reports (`metatool`, `metatool/reliability`).
    pub dataset: String,
    pub tools: PathBuf,
    pub queries: Vec<EvalQuery>,
    pub modes: Vec<Mode>,
    pub setting: Setting,
    pub options: EvalOptions,
    pub embeddings: Embeddings,
    pub progress: bool,
    pub rank: Option<crate::rank::RankConfig>,
    /// Also run every mode with `dependencies: true` (reported as
    /// `MODE+deps`, beside the plain run on the same embeddings).
    pub dependencies: bool,
    /// Pass each query's `context` (earlier turns, a system prompt) as
    /// the request's context; off ranks the current turn alone.
    pub context: bool,
    /// Also run every mode on the current turn alone (reported as
    /// `MODE/turn`).
    pub compare_context: bool,
}

/// A dataset's display name from its tools file (`benches/datasets/metatool/tools.jsonl` -> `metatool`).
pub fn dataset_name(tools: &Path) -> String {
    tools
        .parent()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| tools.display().to_string())
}

/// Builds the engine for a tool file (no seed constraints: benchmark
/// catalogs such as BFCL's hold same-name variants by design).
pub fn engine_for(
    tools: &Path,
    embeddings: Embeddings,
    progress: bool,
    rank: Option<crate::rank::RankConfig>,
) -> Result<Engine> {
    let mut opts = EngineOptions::memory(embeddings);
    if let Some(rank) = rank {
        opts.rank = rank;
    }
    opts.progress = progress;
    opts.strict = false;
    let engine = Engine::open(opts)?;
    let ontology = Path::new(env!("CARGO_MANIFEST_DIR")).join("ontology");
    engine.load_paths(&[ontology], Some(Format::Turtle))?;
    engine.load_paths(&[tools.to_path_buf()], Some(Format::Jsonl))?;
    Ok(engine)
}

/// How the reference hybrid is named in reports.
pub const RRF_LABEL: &str = "rrf";
/// How deep each list the reference hybrid fuses goes.
const RRF_DEPTH: usize = 100;
/// Reciprocal-rank fusion's constant (the usual 60).
const RRF_K: f64 = 60.0;

/// The best `limit` ids of `lists` by reciprocal-rank fusion: each id
/// scores `Σ 1 / (k + rank)` over the lists that hold it (ties: first seen).
pub fn reciprocal_rank_fusion(lists: &[Vec<String>], limit: usize) -> Vec<String> {
    let mut score: Vec<(String, f64)> = Vec::new();
    for list in lists {
        for (rank, id) in list.iter().enumerate() {
            let add = 1.0 / (RRF_K + rank as f64 + 1.0);
            match score.iter_mut().find(|(s, _)| s == id) {
                Some((_, v)) => *v += add,
                None => score.push((id.clone(), add)),
            }
        }
    }
    // A stable sort keeps the first-seen order among equal scores.
    score.sort_by(|a, b| b.1.total_cmp(&a.1));
    score.into_iter().take(limit).map(|(id, _)| id).collect()
}

/// Runs every mode of a spec on a ready engine (with `dense` and
/// `lexical` among them, also the reference hybrid, [`RRF_LABEL`]).
pub fn run_on(engine: &Engine, spec: &RunSpec) -> Result<Vec<Report>> {
    let queries: Vec<&EvalQuery> = spec
        .queries
        .iter()
        .filter(|q| spec.setting == Setting::Global || q.candidates.is_some())
        .collect();
    let queries: Vec<EvalQuery> = queries.into_iter().cloned().collect();
    if queries.is_empty() {
        return Err(Error::invalid(format!(
            "{}: no queries for the {} setting",
            spec.dataset,
            spec.setting.as_str()
        )));
    }
    let needs_dense = spec
        .modes
        .iter()
        .any(|m| matches!(m, Mode::Joint | Mode::Dense));
    let vectors: HashMap<String, Vec<f32>> = if needs_dense {
        let texts: Vec<String> = queries.iter().map(|q| q.query.clone()).collect();
        match engine.embed_queries(&texts)? {
            Some(vs) => queries.iter().map(|q| q.id.clone()).zip(vs).collect(),
            None => HashMap::new(),
        }
    } else {
        HashMap::new()
    };
    let mut reports = Vec::new();
    let variants: &[bool] = if spec.dependencies {
        &[false, true]
    } else {
        &[false]
    };
    let search = |q: &EvalQuery, mode: Mode, dependencies: bool, context: bool, limit: usize| {
        let req = SearchRequest {
            text: q.query.clone(),
            mode,
            limit,
            candidates: match spec.setting {
                Setting::Candidates => q.candidates.clone(),
                Setting::Global => None,
            },
            dependencies,
            context: context.then(|| q.context.clone()).flatten(),
            ..SearchRequest::default()
        };
        match engine.search_with(&req, vectors.get(&q.id).cloned()) {
            Ok(r) => Ranked {
                ids: r.matches.into_iter().map(|m| m.id).collect(),
                abstain: r.abstain,
            },
            Err(_) => Ranked {
                ids: Vec::new(),
                abstain: true,
            },
        }
    };
    let limit = spec.options.k_max.max(10);
    let report = |label: &str, run: &(dyn Fn(&EvalQuery) -> Ranked + Sync)| {
        evaluate(
            &spec.dataset,
            label,
            spec.setting.as_str(),
            &queries,
            &spec.options,
            run,
            spec.progress,
        )
    };
    for &mode in &spec.modes {
        for &dependencies in variants {
            let label = if dependencies {
                format!("{mode}+deps")
            } else {
                mode.to_string()
            };
            let run = |q: &EvalQuery| search(q, mode, dependencies, spec.context, limit);
            reports.push(report(&label, &run));
            if spec.compare_context && !dependencies {
                let alone = |q: &EvalQuery| search(q, mode, false, false, limit);
                reports.push(report(&format!("{mode}/turn"), &alone));
            }
        }
    }
    // The reference hybrid: BM25 and dense rankings fused by reciprocal
    // rank (k = 60), what a plain hybrid retriever answers.
    if spec.modes.contains(&Mode::Dense) && spec.modes.contains(&Mode::Lexical) {
        let rrf = |q: &EvalQuery| {
            let lists = [Mode::Dense, Mode::Lexical]
                .map(|m| search(q, m, false, spec.context, RRF_DEPTH).ids);
            Ranked {
                ids: reciprocal_rank_fusion(&lists, limit),
                abstain: false,
            }
        };
        reports.push(report(RRF_LABEL, &rrf));
    }
    Ok(reports)
}

/// Writes, per query, the channel scores of the tools any channel ranks in
/// its top `top_k` (all candidates in the candidates setting), one JSON line
/// per query: `{"id","gold","tags","cands":[[id, graph, dense, bm25, exact,
/// fused, step]]}` (`step`: the step of a multi-step request the fused score
/// comes from, or null).
/// This is the training data for fusion and confidence fits.
pub fn dump_features(
    engine: &Engine,
    spec: &RunSpec,
    top_k: usize,
    out: &mut dyn std::io::Write,
) -> Result<usize> {
    let queries: Vec<EvalQuery> = spec
        .queries
        .iter()
        .filter(|q| spec.setting == Setting::Global || q.candidates.is_some())
        .cloned()
        .collect();
    let texts: Vec<String> = queries.iter().map(|q| q.query.clone()).collect();
    let vectors = engine.embed_queries(&texts)?;
    let mut written = 0;
    for (i, q) in queries.iter().enumerate() {
        let req = SearchRequest {
            text: texts[i].clone(),
            mode: Mode::Joint,
            candidates: match spec.setting {
                Setting::Candidates => q.candidates.clone(),
                Setting::Global => None,
            },
            context: spec.context.then(|| q.context.clone()).flatten(),
            ..SearchRequest::default()
        };
        let vector = vectors.as_ref().and_then(|v| v.get(i).cloned());
        let Ok(resp) = engine.search_everything(&req, vector) else {
            continue;
        };
        let m = &resp.matches;
        let mut keep: std::collections::BTreeSet<usize> = std::collections::BTreeSet::new();
        if spec.setting == Setting::Candidates {
            keep.extend(0..m.len());
        } else {
            type Key = fn(&crate::rank::ScoreDetails) -> f32;
            let keys: [Key; 3] = [|d| d.graph, |d| d.dense, |d| d.bm25];
            for key in keys {
                let mut order: Vec<usize> = (0..m.len()).collect();
                order.sort_by(|&a, &b| key(&m[b].details).total_cmp(&key(&m[a].details)));
                keep.extend(order.into_iter().take(top_k));
            }
            keep.extend(
                m.iter()
                    .enumerate()
                    .filter(|(_, x)| q.gold.contains(&x.id))
                    .map(|(i, _)| i),
            );
        }
        let cands: Vec<serde_json::Value> = keep
            .into_iter()
            .map(|i| {
                let d = &m[i].details;
                serde_json::json!([
                    m[i].id,
                    d.graph,
                    d.dense,
                    d.bm25,
                    d.exact_name,
                    d.fused,
                    d.step
                ])
            })
            .collect();
        let line = serde_json::json!({"id": q.id, "gold": q.gold, "tags": q.tags, "cands": cands});
        writeln!(out, "{line}").map_err(|e| Error::unavailable("writing features", e))?;
        written += 1;
    }
    Ok(written)
}
