//! The shortlist fusion against scoring every tool, in every mode and scope.

use super::*;
use crate::embed::{Embedder, HashEmbedder};
use crate::engine::synthetic_engine;
use crate::rank::Mode;
use crate::rank::query::embedding_texts;

/// The shortlist answers exactly what scoring every tool answers: the
/// same tools in the same order with the same scores, explanations,
/// confidences and clarify question, in every mode, over the whole
/// catalog and a restricted scope, for one-step and multi-step requests.
#[test]
fn shortlist_fusion_equals_scoring_every_tool() {
    let (engine, synth) = synthetic_engine(1_500, 60, 3);
    let snap = engine.snapshot();
    let catalog = &snap.catalog;
    let embedder = HashEmbedder::new();
    let all = Scope::all(catalog.tools().len());
    let some = Scope::of(catalog.tools().len(), (0..catalog.tools().len()).step_by(3));
    let mut texts: Vec<String> = synth
        .queries
        .iter()
        .filter_map(|q| q["query"].as_str().map(str::to_string))
        .collect();
    texts.push("book a flight to Paris, then reserve a hotel and pay the invoice".into());
    texts.push("create a task and send an email to the team".into());
    // The int8 scan over every tool, and a first pass that picks every
    // tool in scope (exact as well: its estimate of `rest` is proven
    // when nothing is left out).
    let scan_all = RankConfig::default();
    let first_pass = RankConfig {
        dense_scan_all_below: 0,
        dense_first_pass: catalog.tools().len(),
        ..RankConfig::default()
    };
    let (mut compared, mut dense_only, mut shortlisted) = (0, 0, 0);
    for text in &texts {
        for (mode, cfg) in [Mode::Joint, Mode::Graph, Mode::Dense, Mode::Lexical]
            .into_iter()
            .flat_map(|m| [(m, &scan_all), (m, &first_pass)])
        {
            for scope in [&all, &some] {
                let query = Query::parse(catalog, scope, text, None, mode, true);
                let (whole_text, step_texts) = embedding_texts(text, None, true);
                let vector = embedder.embed_query(&whole_text).unwrap();
                let steps = embedder.embed_documents(&step_texts).unwrap();
                let whole = mode.uses_dense().then_some(vector.as_slice());
                let steps: &[Vec<f32>] = if mode.uses_dense() { &steps } else { &[] };
                let cal = Calibration::default();
                let go = |f| {
                    let prepared = prepare(catalog, &query, scope, cfg);
                    let settings = Settings {
                        cfg,
                        calibration: &cal,
                        limit: 10,
                        explain: true,
                    };
                    let dense = dense(catalog, whole, steps, scope, cfg);
                    rank(catalog, &query, scope, (prepared, dense), settings, f)
                };
                let (fast, slow) = (go(Fusion::Shortlist), go(Fusion::All));
                let view = |r: &Ranked| {
                    r.tools
                        .iter()
                        .map(|t| {
                            let d = &t.details;
                            (t.idx, d.fused, d.dense, d.graph, d.lexical, t.confidence)
                        })
                        .collect::<Vec<_>>()
                };
                assert_eq!(view(&fast), view(&slow), "{mode:?} {text}");
                assert_eq!(
                    format!("{:?}", fast.clarify),
                    format!("{:?}", slow.clarify),
                    "{mode:?} {text}"
                );
                let paths = |r: &Ranked| {
                    r.tools
                        .iter()
                        .map(|t| format!("{:?}", t.details.paths))
                        .collect::<Vec<_>>()
                };
                assert_eq!(paths(&fast), paths(&slow), "{mode:?} {text}");
                compared += 1;
                if !matches!(mode, Mode::Joint | Mode::Dense) {
                    continue;
                }
                dense_only += 1;
                let texts = Texts {
                    whole: &Channels::new(
                        GraphScores::default(),
                        Dense::new(catalog, &vector, scope, cfg),
                        crate::lexical::Hits::default(),
                        scope,
                        cfg,
                    ),
                    steps: &[],
                    mode,
                    cfg,
                    exact: &HashSet::default(),
                };
                shortlisted += usize::from(texts.fuse_shortlist(scope, 10).is_some());
            }
        }
    }
    assert_eq!(compared, texts.len() * 16);
    // Dense-only fusion over a shortlist proves its answer nearly always.
    assert!(
        shortlisted * 10 >= dense_only * 9,
        "{shortlisted}/{dense_only}"
    );
}
