//! The ranking pipeline, run once per request: channels → fuse → steps →
//! disambiguate → step cover → confidence (→ prerequisites), over the tools
//! of one scope.
//!
//! Every tool in scope gets a fused score (cheap: a few floats), the best
//! over the whole request and its steps; only the best `k` of them are
//! turned into full [`ScoreDetails`] with their graph paths, where `k` is the
//! limit, plus the contenders disambiguation compares, plus each step's best
//! tool (step coverage lists them right after the top match).

use super::channels::{GraphScores, explain, graph_scores, request_nodes};
use super::confidence::Calibration;
use super::disambiguate::{Clarify, MAX_CONTENDERS, disambiguate};
use super::fusion::{Channels, Key, move_step_winners_up, order};
use super::prerequisites;
use super::query::Query;
use super::{RankConfig, ScoreDetails, Scored};
use crate::catalog::Catalog;
use crate::catalog::Hit;
use crate::scope::Scope;
use std::collections::{HashMap, HashSet};

/// What the engine gathered for a request besides the snapshot.
#[derive(Debug, Default)]
pub(crate) struct Inputs<'a> {
    /// Graph paths from the request's nodes, already limited to the scope.
    pub hits: &'a [Hit<'a>],
    /// The request's embedding (`None`: no dense channel).
    pub vector: Option<&'a [f32]>,
    /// One embedding per step, in order (empty without a dense channel).
    pub step_vectors: &'a [Vec<f32>],
}

/// One ranked tool.
#[derive(Debug, Clone)]
pub(crate) struct RankedTool {
    pub idx: usize,
    pub details: ScoreDetails,
    /// Calibrated probability that this is a right tool.
    pub confidence: f32,
}

/// The pipeline's answer.
#[derive(Debug, Clone, Default)]
pub(crate) struct Ranked {
    /// Best first, at most `limit`.
    pub tools: Vec<RankedTool>,
    /// Set when close candidates stay close.
    pub clarify: Option<Clarify>,
    /// Nothing fits confidently.
    pub abstain: bool,
}

/// The nodes of a request the graph store is asked about.
pub(crate) fn graph_nodes(query: &Query) -> Vec<String> {
    if query.mode.uses_graph() {
        request_nodes(&query.mentions())
    } else {
        Vec::new()
    }
}

/// Ranks the tools of `scope` for `query`; at most `limit` come back.
pub(crate) fn run(
    catalog: &Catalog,
    query: &Query,
    scope: &Scope,
    inputs: &Inputs<'_>,
    cfg: &RankConfig,
    calibration: &Calibration,
    limit: usize,
) -> Ranked {
    let mode = query.mode;
    let explicit = query.verb_mentions.len();
    let dense = |v: Option<&[f32]>| {
        let _stage = tracing::info_span!("stage", stage = "dense").entered();
        v.and_then(|v| catalog.cosines(v))
    };
    let lexical = |text: &str| {
        let _stage = tracing::info_span!("stage", stage = "lexical").entered();
        catalog.bm25.scores(text)
    };
    // Mentions outlive the channels: graph evidence borrows their surfaces.
    let mentions = query.mentions();
    let step_mentions: Vec<Vec<crate::model::Mention>> =
        query.steps.iter().map(|s| query.step_mentions(s)).collect();
    let graph = |mentions| graph_channel(catalog, mode, mentions, explicit, inputs.hits);
    let whole = Channels::new(
        graph(&mentions),
        dense(inputs.vector),
        if mode.uses_lexical() || mode.uses_graph() {
            lexical(&query.text)
        } else {
            Vec::new()
        },
        scope,
        cfg,
    );
    let steps: Vec<Channels> = query
        .steps
        .iter()
        .enumerate()
        .map(|(k, step)| {
            Channels::new(
                graph(&step_mentions[k]),
                inputs.step_vectors.get(k).and_then(|v| catalog.cosines(v)),
                catalog.bm25.scores(&step.text),
                scope,
                cfg,
            )
        })
        .collect();
    let exact: HashSet<usize> = query.exact.iter().copied().collect();

    let fuse = tracing::info_span!("stage", stage = "fuse").entered();
    // Every tool's best score over the whole request and its steps (a step
    // must beat the whole by `step_discount`), and each step's best tool.
    let mut keys: Vec<Key> = Vec::with_capacity(scope.len());
    let mut from: HashMap<usize, usize> = HashMap::new();
    let mut winners: Vec<Option<Key>> = vec![None; steps.len()];
    for idx in scope.iter() {
        let named = exact.contains(&idx);
        let mut best = Key {
            idx,
            fused: whole.fused(idx, mode, cfg, named),
            bm25: whole.raw_bm25(idx),
        };
        for (k, ch) in steps.iter().enumerate() {
            let fused = ch.fused(idx, mode, cfg, named);
            if winners[k].is_none_or(|w| fused > w.fused) {
                winners[k] = Some(Key {
                    idx,
                    fused,
                    bm25: 0.0,
                });
            }
            let fused = fused - cfg.step_discount;
            if fused > best.fused {
                best = Key {
                    idx,
                    fused,
                    bm25: ch.raw_bm25(idx),
                };
                from.insert(idx, k);
            }
        }
        keys.push(best);
    }

    // The bounded top-k, plus every step's winner.
    let cmp = order(mode);
    let step_winners: Vec<usize> = winners.iter().flatten().map(|w| w.idx).collect();
    let k = limit
        .max(MAX_CONTENDERS)
        .saturating_add(step_winners.len())
        .min(keys.len());
    let mut top: Vec<Key> = if k < keys.len() {
        let (head, pivot, tail) = keys.select_nth_unstable_by(k, cmp);
        let mut head = head.to_vec();
        head.extend(
            std::iter::once(&*pivot)
                .chain(tail.iter())
                .filter(|t| step_winners.contains(&t.idx)),
        );
        head
    } else {
        keys
    };
    top.sort_by(cmp);

    let mut scored: Vec<Scored> = top
        .iter()
        .map(|key| {
            let idx = key.idx;
            let named = exact.contains(&idx);
            let mut details = match from.get(&idx) {
                Some(&k) => ScoreDetails {
                    fused: key.fused,
                    step: Some(query.steps[k].label.clone()),
                    ..steps[k].details(idx, mode, cfg, named)
                },
                None => whole.details(idx, mode, cfg, named),
            };
            explain(catalog, idx, &mut details.paths);
            Scored { idx, details }
        })
        .collect();
    if cfg.step_cover {
        for (k, w) in winners.iter().enumerate() {
            let Some(w) = w else { continue };
            if let Some(s) = scored.iter_mut().find(|s| s.idx == w.idx) {
                s.details
                    .best_for_step
                    .get_or_insert_with(|| query.steps[k].label.clone());
            }
        }
    }

    drop(fuse);
    let clarify = if mode.uses_graph() {
        let _stage = tracing::info_span!("stage", stage = "disambiguate").entered();
        disambiguate(catalog, &mut scored, &mentions, cfg)
    } else {
        None
    };
    // Step coverage reorders after disambiguation, which compares the top
    // match with its runners-up by score.
    if scored.iter().any(|s| s.details.best_for_step.is_some()) {
        move_step_winners_up(&mut scored);
    }
    let tools = if query.dependencies {
        let _stage = tracing::info_span!("stage", stage = "prerequisites").entered();
        let all = with_confidence(&scored, calibration, scored.len());
        let details = |idx: usize| {
            let mut d = whole.details(idx, mode, cfg, exact.contains(&idx));
            explain(catalog, idx, &mut d.paths);
            d
        };
        prerequisites::place(catalog, scope, all, details, cfg.infer_threshold, limit)
    } else {
        with_confidence(&scored, calibration, limit)
    };
    let abstain = tools
        .first()
        .is_none_or(|t| t.confidence < cfg.abstain_below);
    Ranked {
        tools,
        clarify,
        abstain,
    }
}

/// The graph channel of one query text (empty when the mode does not use it).
fn graph_channel<'m>(
    catalog: &Catalog,
    mode: super::Mode,
    mentions: &'m [crate::model::Mention],
    explicit: usize,
    hits: &[Hit<'m>],
) -> GraphScores<'m> {
    if mode.uses_graph() {
        let _stage = tracing::info_span!("stage", stage = "graph").entered();
        graph_scores(catalog, mentions, explicit, hits)
    } else {
        GraphScores::default()
    }
}

/// The first `limit` tools with their confidence: the top match against the
/// runner-up by score (step coverage may list a lower-scoring step winner
/// second), every other match against the top.
fn with_confidence(scored: &[Scored], calibration: &Calibration, limit: usize) -> Vec<RankedTool> {
    let best = scored.first().map(|s| &s.details);
    let second = scored
        .iter()
        .skip(1)
        .map(|s| &s.details)
        .max_by(|a, b| a.fused.total_cmp(&b.fused));
    scored
        .iter()
        .take(limit)
        .enumerate()
        .map(|(i, s)| RankedTool {
            idx: s.idx,
            confidence: calibration.confidence(&s.details, if i == 0 { second } else { best }),
            details: s.details.clone(),
        })
        .collect()
}
