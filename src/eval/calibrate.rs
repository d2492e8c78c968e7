//! Fits the confidence model on dev data: MetaTool's awareness set (queries
//! that need a tool, and queries that need none), its reliability set (the
//! right tool is not among the candidates) and a sample of its single-tool
//! queries; plus, when they sit next to it, samples of BFCL-multiple
//! (candidates) and Seal-Tools (whole catalog), so the model also sees
//! lexical-heavy requests. Each sample is the top match's features and
//! whether it is right.

use super::{load_queries, sample};
use crate::engine::{Embeddings, SearchRequest};
use crate::error::Result;
use crate::rank::{Calibration, CalibrationReport, fit_calibration};
use std::path::Path;

/// Queries, and whether to rank only their candidates.
type QuerySet = (Vec<super::EvalQuery>, bool);

/// Runs the joint ranker over the dev sets and fits the calibration.
pub fn calibrate(
    dataset: &Path,
    embeddings: Embeddings,
    progress: bool,
) -> Result<CalibrationReport> {
    let mut samples = Vec::new();
    let mut sets: Vec<(std::path::PathBuf, Vec<QuerySet>)> = Vec::new();
    let single = load_queries(&dataset.join("queries.jsonl"))?;
    sets.push((
        dataset.join("tools.jsonl"),
        vec![
            (
                load_queries(&dataset.join("queries_awareness.jsonl"))?,
                false,
            ),
            (
                load_queries(&dataset.join("queries_reliability.jsonl"))?,
                true,
            ),
            (sample(&single, 1000, 11), false),
        ],
    ));
    if let Some(root) = dataset.parent() {
        for (name, n, with_candidates) in [("bfcl_multiple", 500, true), ("sealtools", 300, false)]
        {
            let dir = root.join(name);
            if dir.join("tools.jsonl").is_file() && dir.join("queries.jsonl").is_file() {
                let qs = load_queries(&dir.join("queries.jsonl"))?;
                sets.push((
                    dir.join("tools.jsonl"),
                    vec![(sample(&qs, n, 11), with_candidates)],
                ));
            }
        }
    }
    for (tools, runs) in sets {
        let engine = super::engine_for(&tools, embeddings.clone(), progress, None)?;
        for (queries, with_candidates) in runs {
            calibration_samples(&engine, &queries, with_candidates, &mut samples)?;
        }
    }
    Ok(fit_calibration(&samples))
}

fn calibration_samples(
    engine: &crate::engine::Engine,
    queries: &[super::EvalQuery],
    with_candidates: bool,
    samples: &mut Vec<([f32; 5], bool)>,
) -> Result<()> {
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
            ..SearchRequest::default()
        };
        let vector = vectors.as_ref().and_then(|v| v.get(i).cloned());
        let resp = engine.search_with(&req, vector)?;
        let Some(top) = resp.matches.first() else {
            continue;
        };
        let other = resp.matches.get(1).map(|m| &m.details);
        let correct = q.gold.iter().any(|g| g == &top.id);
        samples.push((Calibration::features(&top.details, other), correct));
    }
    Ok(())
}
