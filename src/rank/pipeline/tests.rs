//! The shortlist fusion against scoring every tool, in every mode and scope.

use super::*;
use crate::embed::{Embedder, HashEmbedder};
use crate::engine::synthetic_engine;
use crate::rank::Mode;
use crate::rank::query::embedding_texts;

/// The synthetic catalog's query texts and two multi-step requests.
fn texts(synth: &crate::synth::Synthetic) -> Vec<String> {
    let mut texts: Vec<String> = synth
        .queries
        .iter()
        .filter_map(|q| q["query"].as_str().map(str::to_string))
        .collect();
    texts.push("book a flight to Paris, then reserve a hotel and pay the invoice".into());
    texts.push("create a task and send an email to the team".into());
    texts
}

/// The whole catalog and every third tool of it.
fn scopes(catalog: &Catalog) -> [Scope; 2] {
    let n = catalog.tools().len();
    [Scope::all(n), Scope::of(n, (0..n).step_by(3))]
}

/// `text` ranked over `scope` (10 tools, explained), the stand-in
/// embedder's vectors for the dense channel.
fn answer(
    catalog: &Catalog,
    text: &str,
    (mode, cfg): (Mode, &RankConfig),
    scope: &Scope,
    fusion: Fusion,
) -> Ranked {
    let embedder = HashEmbedder::new();
    let query = Query::parse(catalog, scope, text, None, mode, true);
    let (whole_text, step_texts) = embedding_texts(text, None, true);
    let vector = embedder.embed_query(&whole_text).unwrap();
    let steps = embedder.embed_documents(&step_texts).unwrap();
    let whole = mode.uses_dense().then_some(vector.as_slice());
    let steps: &[Vec<f32>] = if mode.uses_dense() { &steps } else { &[] };
    let prepared = prepare(catalog, &query, scope, cfg);
    let settings = Settings {
        cfg,
        calibration: &Calibration::default(),
        limit: 10,
        explain: true,
    };
    let dense = dense(catalog, whole, steps, scope, cfg);
    rank(catalog, &query, scope, (prepared, dense), settings, fusion)
}

/// What an answer says: its tools with their scores and confidences,
/// their paths, and the clarify question.
fn said(r: &Ranked) -> (String, String, String) {
    let tools: Vec<_> = r
        .tools
        .iter()
        .map(|t| {
            let d = &t.details;
            (t.idx, d.fused, d.dense, d.graph, d.lexical, t.confidence)
        })
        .collect();
    let paths: Vec<_> = r
        .tools
        .iter()
        .map(|t| format!("{:?}", t.details.paths))
        .collect();
    (
        format!("{tools:?}"),
        format!("{paths:?}"),
        format!("{:?}", r.clarify),
    )
}

/// The shortlist answers exactly what scoring every tool answers: the
/// same tools in the same order with the same scores, explanations,
/// confidences and clarify question, in every mode, over the whole
/// catalog and a restricted scope, for one-step and multi-step requests;
/// also when the graph walk leaves long runs out.
#[test]
fn shortlist_fusion_equals_scoring_every_tool() {
    let (engine, synth) = synthetic_engine(1_500, 60, 3);
    let snap = engine.snapshot();
    let catalog = &snap.catalog;
    let [all, some] = scopes(catalog);
    let texts = texts(&synth);
    // The int8 scan over every tool, and a first pass that picks every
    // tool in scope (exact as well: its estimate of `rest` is proven
    // when nothing is left out).
    let scan_all = RankConfig::default();
    let first_pass = RankConfig {
        dense_scan_all_below: 0,
        dense_first_pass: catalog.tools().len(),
        ..RankConfig::default()
    };
    let long_left_out = RankConfig {
        graph_defer_from: 64,
        ..RankConfig::default()
    };
    let (mut compared, mut dense_only, mut shortlisted) = (0, 0, 0);
    for text in &texts {
        for (mode, cfg) in [Mode::Joint, Mode::Graph, Mode::Dense, Mode::Lexical]
            .into_iter()
            .flat_map(|m| [(m, &scan_all), (m, &first_pass), (m, &long_left_out)])
        {
            for scope in [&all, &some] {
                let go = |f| answer(catalog, text, (mode, cfg), scope, f);
                let (fast, slow) = (go(Fusion::Shortlist), go(Fusion::All));
                assert_eq!(said(&fast), said(&slow), "{mode:?} {text}");
                compared += 1;
                if !matches!(mode, Mode::Joint | Mode::Dense) {
                    continue;
                }
                dense_only += 1;
                let vector = HashEmbedder::new()
                    .embed_query(&embedding_texts(text, None, true).0)
                    .unwrap();
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
    assert_eq!(compared, texts.len() * 24);
    // Dense-only fusion over a shortlist proves its answer nearly always.
    assert!(
        shortlisted * 10 >= dense_only * 9,
        "{shortlisted}/{dense_only}"
    );
}

/// A graph walk that leaves runs out (every run, or those of 64 links and
/// more of 1,500 tools) answers what walking every run answers, in every
/// mode and scope; and leaving the long ones out nearly always proves the
/// answer without walking them after all.
#[test]
fn leaving_graph_runs_out_of_the_walk_changes_no_answer() {
    let (engine, synth) = synthetic_engine(1_500, 60, 3);
    let snap = engine.snapshot();
    let catalog = &snap.catalog;
    let [all, some] = scopes(catalog);
    let walked = RankConfig::default();
    let deferred = |from| RankConfig {
        graph_defer_from: from,
        ..RankConfig::default()
    };
    let (none_walked, long_left_out) = (deferred(0), deferred(64));
    let (mut deferring, mut proved) = (0, 0);
    let texts = texts(&synth);
    for text in &texts {
        for mode in [Mode::Joint, Mode::Graph, Mode::Dense, Mode::Lexical] {
            for scope in [&all, &some] {
                let go = |cfg| {
                    said(&answer(
                        catalog,
                        text,
                        (mode, cfg),
                        scope,
                        Fusion::Shortlist,
                    ))
                };
                let want = go(&walked);
                assert_eq!(go(&none_walked), want, "{mode:?} {text}");
                assert_eq!(go(&long_left_out), want, "{mode:?} {text}");
                if mode != Mode::Joint {
                    continue;
                }
                // Fusion over the channels as prepared, without walking.
                let cfg = &long_left_out;
                let query = Query::parse(catalog, scope, text, None, mode, true);
                let (whole_text, step_texts) = embedding_texts(text, None, true);
                let embedder = HashEmbedder::new();
                let vector = embedder.embed_query(&whole_text).unwrap();
                let steps = embedder.embed_documents(&step_texts).unwrap();
                let mut prepared = prepare(catalog, &query, scope, cfg);
                let dense = dense(catalog, Some(&vector), &steps, scope, cfg);
                prepared.whole.dense = dense.whole;
                for (ch, d) in prepared.steps.iter_mut().zip(dense.steps) {
                    ch.dense = d;
                }
                let channels = std::iter::once(&prepared.whole).chain(&prepared.steps);
                if channels.clone().any(|ch| ch.graph.unlisted().is_some()) {
                    deferring += 1;
                    let k = MAX_CONTENDERS + prepared.steps.len();
                    let none = HashSet::default();
                    let texts = Texts::of(&prepared.whole, &prepared.steps, (mode, cfg), &none);
                    proved += usize::from(texts.fuse_shortlist(scope, k).is_some());
                }
            }
        }
    }
    // (80 of 80 when written.)
    assert!(
        deferring > texts.len() && proved * 10 >= deferring * 9,
        "{proved}/{deferring}"
    );
}
