//! Fits the confidence model on dev data: MetaTool's awareness set (queries
//! that need a tool, and queries that need none), its reliability set (the
//! right tool is not among the candidates) and a sample of its single-tool
//! queries. Each sample is the top match's features and whether it is right.

use super::{load_queries, sample};
use crate::Result;
use crate::engine::{Embeddings, SearchRequest};
use crate::rank::{Calibration, CalibrationReport, fit_calibration};
use std::path::Path;

/// Runs the joint ranker over the dev sets and fits the calibration.
pub fn calibrate(
    dataset: &Path,
    embeddings: Embeddings,
    progress: bool,
) -> Result<CalibrationReport> {
    let engine = super::engine_for(&dataset.join("tools.jsonl"), embeddings, progress, None)?;
    let mut samples = Vec::new();
    let mut runs: Vec<(Vec<super::EvalQuery>, bool)> = Vec::new();
    runs.push((
        load_queries(&dataset.join("queries_awareness.jsonl"))?,
        false,
    ));
    runs.push((
        load_queries(&dataset.join("queries_reliability.jsonl"))?,
        true,
    ));
    let single = load_queries(&dataset.join("queries.jsonl"))?;
    runs.push((sample(&single, 1000, 11), false));
    for (queries, with_candidates) in runs {
        let texts: Vec<String> = queries.iter().map(|q| q.query.clone()).collect();
        let vectors = engine.embed_queries(&texts)?;
        for (i, q) in queries.iter().enumerate() {
            let req = SearchRequest {
                text: q.query.clone(),
                limit: 2,
                candidates: if with_candidates {
                    q.candidates.clone()
                } else {
                    None
                },
                query_vector: vectors.as_ref().and_then(|v| v.get(i).cloned()),
                ..SearchRequest::default()
            };
            let resp = engine.search(&req)?;
            let Some(top) = resp.matches.first() else {
                continue;
            };
            let other = resp.matches.get(1).map(|m| &m.details);
            let correct = q.gold.iter().any(|g| g == &top.id);
            samples.push((Calibration::features(&top.details, other), correct));
        }
    }
    Ok(fit_calibration(&samples))
}
