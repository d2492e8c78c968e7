//! Accuracy harness: run a ranker over a query set and score it.
//!
//! A query set is JSONL ([`EvalQuery`] per line, [`load_queries`]); a ranker
//! is any `Fn(&EvalQuery) -> Ranked`; [`evaluate`] runs it over every query
//! and returns a [`Report`] (overall and per tag), which [`to_markdown`]
//! renders, [`plot_svg`] charts and [`compare_to_baseline`] gates.
//!
//! # Metric definitions (as in `benches/datasets/*/README.txt`)
//! Let `G` be the query's gold set and `L` the returned ranking (best
//! first), cut at `k_max` (at least 10) and with repeated entries removed.
//! With [`EvalOptions::match_by_name`] ids are compared by tool name (the id
//! before `#`): any variant of a gold function counts, and variants of one
//! name in the cut list collapse into one entry at the first one's rank
//! (this reproduces the datasets' `--match-by-name` reference rows).
//! * **Top-1**: `L[0] ∈ G`.
//! * **R@k**: `|G ∩ L[..k]| / |G|`, macro-averaged over queries (k = 1, 5, 10).
//! * **MRR**: `1 / rank` of the first gold item in `L[..k_max]`, 0 if none.
//! * **nDCG@10**: binary relevance, `DCG = Σ_{i<10, L[i]∈G} 1/log2(i+2)`,
//!   ideal DCG over `min(|G|, 10)` relevant items at the top.
//! * **Primary Top-1**: `L[0]` is the query's `primary` tool, over queries
//!   that have one.
//! * Queries with empty gold (no tool fits) are excluded from all ranking
//!   metrics. **abstain_rate** = fraction of them where the ranker abstained
//!   (the correct answer). **coverage** (reported only when a group has
//!   empty-gold queries) = fraction of the non-empty-gold queries answered
//!   (not abstained). Ranking metrics are computed on `ids` regardless of
//!   `abstain`, so ranking quality and the abstain decision are measured
//!   separately.
//! * **p50/p99 ms**: nearest-rank percentiles of each query's own wall time.
//!
//! `n` counts every query in the group; `n_empty_gold` of them have empty
//! gold. Per-tag groups use each tag of the query; the overall group is
//! reported as tag `ALL` in tables and regressions.

mod calibrate;
mod floors;
mod gate;
mod metrics;
mod plot;
mod report;
mod run;

pub use calibrate::calibrate;
pub use floors::{Shortfall, context_floor, floors};
pub use gate::{gate, read_reports};
pub use run::{RunSpec, Setting, dataset_name, dump_features, engine_for, run_on};

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use rayon::prelude::*;
use serde::Deserialize;

use crate::error::{Error, Location};
pub use plot::plot_svg;
pub use report::{Metrics, Regression, Report, compare_to_baseline, to_markdown};

/// One evaluation query (a line of `queries.jsonl`; unknown fields ignored).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct EvalQuery {
    pub id: String,
    pub query: String,
    /// Tool ids that answer the query; empty = no tool fits (abstain).
    pub gold: Vec<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    /// The per-query candidate list of the original benchmark.
    #[serde(default)]
    pub candidates: Option<Vec<String>>,
    /// The main tool of a multi-tool query.
    #[serde(default)]
    pub primary: Option<String>,
    /// Extra context (e.g. a system prompt), not part of the query.
    #[serde(default)]
    pub context: Option<String>,
    #[serde(default)]
    pub needs_tool: Option<bool>,
}

/// Loads a JSONL query file; blank lines are skipped. Errors name
/// `file:line:column` and the JSON path of the bad field.
// crate::error::Error's size is shared crate-wide; boxing it is a crate decision
#[allow(clippy::result_large_err)]
pub fn load_queries(path: &Path) -> crate::error::Result<Vec<EvalQuery>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let file = path.display().to_string();
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let mut de = serde_json::Deserializer::from_str(line);
        let q: EvalQuery = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let pointer = e.path().to_string();
            let inner = e.into_inner();
            Error::Parse {
                location: Location {
                    file: file.clone(),
                    line: Some(i as u64 + 1),
                    column: Some(inner.column() as u64),
                    pointer: (pointer != ".").then_some(pointer),
                },
                message: inner.to_string(),
            }
        })?;
        out.push(q);
    }
    Ok(out)
}

/// splitmix64: a tiny, well-mixed deterministic PRNG step.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A deterministic sample of `n` queries (all of them if `n >= len`), kept
/// in their original order. Same `seed` and input → same sample.
pub fn sample(queries: &[EvalQuery], n: usize, seed: u64) -> Vec<EvalQuery> {
    if n >= queries.len() {
        return queries.to_vec();
    }
    let mut idx: Vec<usize> = (0..queries.len()).collect();
    let mut state = seed;
    // partial Fisher-Yates: the first n slots become a uniform sample
    for i in 0..n {
        let span = (idx.len() - i) as u64;
        let j = i + (splitmix64(&mut state) % span) as usize;
        idx.swap(i, j);
    }
    let mut chosen: Vec<usize> = idx.into_iter().take(n).collect();
    chosen.sort_unstable();
    chosen
        .into_iter()
        .filter_map(|i| queries.get(i).cloned())
        .collect()
}

/// What a ranker returns for one query.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ranked {
    /// Tool ids, best first.
    pub ids: Vec<String>,
    /// The ranker judged that no tool fits.
    pub abstain: bool,
}

/// How [`evaluate`] scores rankings.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalOptions {
    /// Gold matches any id with the same name (the id before `#`).
    pub match_by_name: bool,
    /// Ranking depth considered for MRR (at least 10 is always scored).
    pub k_max: usize,
}

impl Default for EvalOptions {
    fn default() -> Self {
        EvalOptions {
            match_by_name: false,
            k_max: 10,
        }
    }
}

/// Runs `run` on every query (in parallel, each query timed on its own) and
/// aggregates the metrics overall and per tag. In the `candidates` setting
/// only queries that carry a candidate list are evaluated (restricting the
/// ranking to them is the ranker's job). `progress` draws a progress bar on
/// stderr.
pub fn evaluate(
    dataset: &str,
    mode: &str,
    setting: &str,
    queries: &[EvalQuery],
    opts: &EvalOptions,
    run: &(dyn Fn(&EvalQuery) -> Ranked + Sync),
    progress: bool,
) -> Report {
    let selected: Vec<&EvalQuery> = queries
        .iter()
        .filter(|q| setting != "candidates" || q.candidates.is_some())
        .collect();
    let bar = if progress {
        let bar = indicatif::ProgressBar::new(selected.len() as u64);
        bar.set_message(format!("{dataset} {setting} {mode}"));
        bar
    } else {
        indicatif::ProgressBar::hidden()
    };
    let scores: Vec<metrics::QueryScore> = selected
        .par_iter()
        .map(|q| {
            let start = Instant::now();
            let ranked = run(q);
            let ms = start.elapsed().as_secs_f64() * 1000.0;
            bar.inc(1);
            metrics::score_query(q, &ranked, opts, ms)
        })
        .collect();
    bar.finish_and_clear();
    let mut by_tag: BTreeMap<&str, Vec<&metrics::QueryScore>> = BTreeMap::new();
    for (q, s) in selected.iter().zip(&scores) {
        for tag in &q.tags {
            by_tag.entry(tag.as_str()).or_default().push(s);
        }
    }
    let all: Vec<&metrics::QueryScore> = scores.iter().collect();
    Report {
        dataset: dataset.to_string(),
        mode: mode.to_string(),
        setting: setting.to_string(),
        overall: metrics::aggregate(&all),
        per_tag: by_tag
            .into_iter()
            .map(|(t, v)| (t.to_string(), metrics::aggregate(&v)))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(id: &str, gold: &[&str], tags: &[&str]) -> EvalQuery {
        EvalQuery {
            id: id.into(),
            query: id.into(),
            gold: gold.iter().map(|s| s.to_string()).collect(),
            tags: tags.iter().map(|s| s.to_string()).collect(),
            candidates: None,
            primary: None,
            context: None,
            needs_tool: None,
        }
    }

    #[test]
    fn sample_is_deterministic_and_ordered() {
        let qs: Vec<EvalQuery> = (0..100).map(|i| q(&i.to_string(), &[], &[])).collect();
        let a = sample(&qs, 10, 42);
        assert_eq!(a, sample(&qs, 10, 42));
        assert_ne!(a, sample(&qs, 10, 43));
        assert_eq!(a.len(), 10);
        let pos: Vec<usize> = a.iter().map(|x| x.id.parse().unwrap()).collect();
        assert!(pos.windows(2).all(|w| w[0] < w[1]), "{pos:?}");
        assert_eq!(sample(&qs, 500, 1).len(), 100);
        assert!(sample(&qs, 0, 1).is_empty());
    }

    #[test]
    fn evaluate_aggregates_overall_and_per_tag() {
        let mut c = q("c", &["t1"], &["x"]);
        c.candidates = Some(vec!["t1".into(), "t2".into()]);
        let qs = vec![q("a", &["t1"], &["x", "y"]), q("b", &["t2"], &["y"]), c];
        // the ranker always answers [t1, t2]
        let run = |_: &EvalQuery| Ranked {
            ids: vec!["t1".into(), "t2".into()],
            abstain: false,
        };
        let r = evaluate(
            "d",
            "m",
            "global",
            &qs,
            &EvalOptions::default(),
            &run,
            false,
        );
        // Top1: a hit, b miss, c hit -> 2/3; MRR (1 + 1/2 + 1)/3 = 5/6
        assert_eq!(r.overall.n, 3);
        assert!((r.overall.top1 - 2.0 / 3.0).abs() < 1e-12);
        assert!((r.overall.mrr - 5.0 / 6.0).abs() < 1e-12);
        assert_eq!(r.per_tag["x"].top1, 1.0);
        assert_eq!(r.per_tag["y"].top1, 0.5);
        assert_eq!(r.per_tag.len(), 2);
        let r = evaluate(
            "d",
            "m",
            "candidates",
            &qs,
            &EvalOptions::default(),
            &run,
            false,
        );
        assert_eq!(r.overall.n, 1);
    }

    #[test]
    fn load_queries_reports_line_and_path() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("q.jsonl");
        std::fs::write(
            &p,
            "{\"id\":\"1\",\"query\":\"x\",\"gold\":[\"a\"],\"extra\":1}\n\n\
             {\"id\":\"2\",\"query\":\"y\",\"gold\":[3]}\n",
        )
        .unwrap();
        let err = load_queries(&p).unwrap_err().to_string();
        assert!(err.contains("q.jsonl:3:"), "{err}");
        assert!(err.contains("gold[0]"), "{err}");
        std::fs::write(
            &p,
            "{\"id\":\"1\",\"query\":\"x\",\"gold\":[],\"tags\":[\"t\"]}\n",
        )
        .unwrap();
        let qs = load_queries(&p).unwrap();
        assert_eq!(qs.len(), 1);
        assert_eq!(qs[0].tags, vec!["t"]);
        assert!(load_queries(&dir.path().join("none.jsonl")).is_err());
    }
}
