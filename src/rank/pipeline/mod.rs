//! The ranking pipeline, run once per request: channels → fuse → steps →
//! disambiguate → step cover → confidence (→ prerequisites), over the tools
//! of one scope.
//!
//! Every tool in scope gets a fused score (cheap: a few floats), the best
//! over the whole request and its steps; only the best `k` of them are
//! turned into full [`ScoreDetails`] with their graph paths, where `k` is the
//! limit, plus the contenders disambiguation compares, plus each step's best
//! tool (step coverage lists them right after the top match).

use super::channels::{GraphScores, Sources, explain, graph_scores};
use super::confidence::Calibration;
use super::dense::Dense;
use super::disambiguate::{Clarify, MAX_CONTENDERS, disambiguate};
use super::fusion::{Channels, Key, move_step_winners_up, order};
use super::prerequisites;
use super::query::Query;
use super::supplied::Supplied;
use super::{RankConfig, RankedTool, ScoreDetails, Scored};
use crate::catalog::Catalog;
use crate::lexical::Hits;
use crate::scope::Scope;
use candidates::Candidates;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::cell::OnceCell;

/// The dense channel of a request and of each of its steps: what the
/// engine works out as soon as the embedding is there, while the graph and
/// lexical channels may still be under way.
#[derive(Debug, Default)]
pub(crate) struct DenseChannels<'a> {
    whole: Option<Dense<'a>>,
    steps: Vec<Option<Dense<'a>>>,
}

/// The dense channels over `scope` of a request's embedding (`None`: no
/// dense channel) and its steps' (in order; empty without one).
pub(crate) fn dense<'a>(
    catalog: &'a Catalog,
    whole: Option<&'a [f32]>,
    steps: &'a [Vec<f32>],
    scope: &Scope,
    cfg: &RankConfig,
) -> DenseChannels<'a> {
    let dense = |v: Option<&'a [f32]>| {
        let _stage = tracing::info_span!("stage", stage = "dense").entered();
        v.and_then(|v| Dense::new(catalog, v, scope, cfg))
    };
    DenseChannels {
        whole: dense(whole),
        steps: steps.iter().map(|v| dense(Some(v.as_slice()))).collect(),
    }
}

/// The channels that need no embedding (graph and lexical), per query text:
/// what the engine works out while the request is being embedded.
#[derive(Debug)]
pub(crate) struct Prepared<'a> {
    whole: Channels<'a>,
    steps: Vec<Channels<'a>>,
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

/// Applies a goal's boosts (index, factor, why) to a ranking of the goal's
/// whole scope: each boosted tool's fused score is multiplied and the
/// boost said in its details; the order follows the boosted scores (a
/// prerequisite stays right after the tool that needs it); the best
/// `limit` stay.
pub(crate) fn boost(ranked: &mut Ranked, boosts: &[(usize, f32, String)], limit: usize) {
    boost_marked(ranked, boosts, limit, |d, b| d.goal_boost = Some(b));
}

/// [`boost`], saying each boost in the details where `mark` puts it.
pub(crate) fn boost_marked(
    ranked: &mut Ranked,
    boosts: &[(usize, f32, String)],
    limit: usize,
    mark: impl Fn(&mut ScoreDetails, crate::rank::GoalBoost),
) {
    let mut groups: Vec<Vec<crate::rank::RankedTool>> = Vec::new();
    for mut t in std::mem::take(&mut ranked.tools) {
        if let Some((_, factor, why)) = boosts.iter().find(|(i, _, _)| *i == t.idx) {
            t.details.fused *= factor;
            let b = crate::rank::GoalBoost {
                factor: *factor,
                reason: why.clone(),
            };
            mark(&mut t.details, b);
        }
        match groups.last_mut() {
            Some(g) if t.details.prerequisite_of.is_some() => g.push(t),
            _ => groups.push(vec![t]),
        }
    }
    groups.sort_by(|a, b| b[0].details.fused.total_cmp(&a[0].details.fused));
    ranked.tools = groups.into_iter().flatten().take(limit).collect();
}

/// The graph and lexical channels of `query` over `scope`.
pub(crate) fn prepare<'a>(
    catalog: &'a Catalog,
    query: &'a Query,
    scope: &Scope,
    cfg: &RankConfig,
) -> Prepared<'a> {
    let mode = query.mode;
    let lexical = |text: &str| {
        let _stage = tracing::info_span!("stage", stage = "lexical").entered();
        catalog.bm25().hits(text)
    };
    let graph = |mentions, sources| graph_channel(catalog, mode, mentions, sources, scope, cfg);
    let whole = Channels::new(
        graph(&query.evidence, query.sources),
        None,
        if mode.uses_lexical() || mode.uses_graph() {
            lexical(&query.text)
        } else {
            Hits::default()
        },
        scope,
        cfg,
    )
    .trusting_graph(query.graph_trust());
    let steps = query
        .steps
        .iter()
        .map(|step| {
            let sources = Sources::request(query.verb_mentions.len());
            Channels::new(
                graph(&step.mentions, sources),
                None,
                lexical(&step.text),
                scope,
                cfg,
            )
        })
        .collect();
    Prepared { whole, steps }
}

/// How to rank: the weights, the calibration, how many tools come back,
/// and whether their graph paths are written out.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Settings<'c> {
    pub cfg: &'c RankConfig,
    pub calibration: &'c Calibration,
    pub limit: usize,
    pub explain: bool,
}

/// Ranks the tools of `scope` for `query`; at most `limit` come back.
pub(crate) fn run<'a>(
    catalog: &'a Catalog,
    query: &Query,
    scope: &Scope,
    prepared: Prepared<'a>,
    dense: DenseChannels<'a>,
    settings: Settings<'_>,
) -> Ranked {
    rank(
        catalog,
        query,
        scope,
        (prepared, dense),
        settings,
        Fusion::Shortlist,
    )
}

/// How fusion finds the best tools (the answer is the same).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fusion {
    /// From the candidates and proven bounds, else as `All`.
    Shortlist,
    /// Every tool in scope scored exactly.
    #[cfg_attr(not(test), allow(dead_code))]
    All,
}

fn rank<'a>(
    catalog: &'a Catalog,
    query: &Query,
    scope: &Scope,
    (prepared, dense): (Prepared<'a>, DenseChannels<'a>),
    Settings {
        cfg,
        calibration,
        limit,
        explain: wanted,
    }: Settings<'_>,
    fusion: Fusion,
) -> Ranked {
    let mode = query.mode;
    let Prepared {
        mut whole,
        mut steps,
    } = prepared;
    whole.dense = dense.whole;
    for (ch, d) in steps.iter_mut().zip(dense.steps) {
        ch.dense = d;
    }
    let mentions = &query.all_mentions;
    let exact: HashSet<usize> = query.exact.iter().copied().collect();

    let fuse_stage = tracing::info_span!("stage", stage = "fuse").entered();
    let k = limit.max(MAX_CONTENDERS).saturating_add(steps.len());
    let shortlisted = match fusion {
        Fusion::Shortlist => {
            Texts::of(&whole, &steps, (mode, cfg), &exact).fuse_shortlist(scope, k)
        }
        Fusion::All => None,
    };
    let Fused {
        top: mut keys,
        from,
        winners,
    } = match shortlisted {
        Some(fused) => fused,
        None => {
            // The bounds could not prove the answer: with every graph run
            // walked (when some were left out) they may; else every tool
            // is scored.
            let mut expanded = false;
            for ch in std::iter::once(&mut whole).chain(steps.iter_mut()) {
                expanded |= ch.expand();
            }
            let texts = Texts::of(&whole, &steps, (mode, cfg), &exact);
            (expanded && fusion == Fusion::Shortlist)
                .then(|| texts.fuse_shortlist(scope, k))
                .flatten()
                .unwrap_or_else(|| texts.fuse_all(scope))
        }
    };

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
                    ..steps[k].details(idx, mode, cfg, named, wanted)
                },
                None => whole.details(idx, mode, cfg, named, wanted),
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

    drop(fuse_stage);
    let clarify = if mode.uses_graph() {
        let _stage = tracing::info_span!("stage", stage = "disambiguate").entered();
        disambiguate(catalog, &mut scored, mentions, cfg)
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
        let all = with_confidence(scored, calibration, usize::MAX);
        let details = |idx: usize| {
            let mut d = whole.details(idx, mode, cfg, exact.contains(&idx), wanted);
            explain(catalog, idx, &mut d.paths);
            d
        };
        let request = Supplied::new(&query.written, &query.all_mentions);
        prerequisites::place(
            catalog,
            scope,
            &request,
            all,
            details,
            cfg.infer_threshold,
            limit,
        )
    } else {
        with_confidence(scored, calibration, limit)
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
    catalog: &'m Catalog,
    mode: super::Mode,
    mentions: &'m [crate::model::Mention],
    sources: Sources,
    scope: &Scope,
    cfg: &RankConfig,
) -> GraphScores<'m> {
    if mode.uses_graph() {
        let _stage = tracing::info_span!("stage", stage = "graph").entered();
        graph_scores(catalog, mentions, sources, scope, cfg.graph_defer_from)
    } else {
        GraphScores::default()
    }
}

/// The first `limit` tools with their confidence: the top match against the
/// runner-up by score (step coverage may list a lower-scoring step winner
/// second), every other match against the top.
fn with_confidence(
    scored: Vec<Scored>,
    calibration: &Calibration,
    limit: usize,
) -> Vec<RankedTool> {
    let confidences: Vec<f32> = {
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
            .map(|(i, s)| calibration.confidence(&s.details, if i == 0 { second } else { best }))
            .collect()
    };
    scored
        .into_iter()
        .zip(confidences)
        .map(|(s, confidence)| RankedTool {
            idx: s.idx,
            confidence,
            details: s.details,
            prerequisites: Vec::new(),
            plan: None,
        })
        .collect()
}

/// What fusion keeps: every tool that can be among the best (at least the
/// `k` best, in any order), the step each one's best score came from, and
/// each step's best tool.
#[derive(Debug)]
struct Fused {
    top: Vec<Key>,
    from: HashMap<usize, usize>,
    winners: Vec<Option<Key>>,
}

/// A tool and the lowest and highest fused score it can have.
type Bound = (usize, f32, f32);

/// The best lower bound of some bounds.
fn max_lower(bounds: &[Bound]) -> f32 {
    bounds.iter().map(|b| b.1).fold(f32::NEG_INFINITY, f32::max)
}

/// A step's best tool so far, replaced only by a strictly higher score.
fn challenge(best: &mut Option<Key>, idx: usize, fused: f32) {
    if best.is_none_or(|w| fused > w.fused) {
        *best = Some(Key {
            idx,
            fused,
            bm25: 0.0,
        });
    }
}

/// The query texts of one request (the whole and its steps), fused.
struct Texts<'c, 'a> {
    whole: &'c Channels<'a>,
    steps: &'c [Channels<'a>],
    mode: super::Mode,
    cfg: &'c RankConfig,
    exact: &'c HashSet<usize>,
}

impl<'c, 'a> Texts<'c, 'a> {
    fn of(
        whole: &'c Channels<'a>,
        steps: &'c [Channels<'a>],
        (mode, cfg): (super::Mode, &'c RankConfig),
        exact: &'c HashSet<usize>,
    ) -> Self {
        Self {
            whole,
            steps,
            mode,
            cfg,
            exact,
        }
    }
}

impl Texts<'_, '_> {
    /// A tool's key: its best score over the whole request and its steps (a
    /// step must beat the whole by `step_discount`), and which step won.
    fn key(&self, idx: usize) -> (Key, Option<usize>) {
        let named = self.exact.contains(&idx);
        let mut best = Key {
            idx,
            fused: self.whole.fused(idx, self.mode, self.cfg, named),
            bm25: self.whole.raw_bm25(idx),
        };
        let mut from = None;
        for (k, ch) in self.steps.iter().enumerate() {
            let fused = ch.fused(idx, self.mode, self.cfg, named) - self.cfg.step_discount;
            if fused > best.fused {
                best = Key {
                    idx,
                    fused,
                    bm25: ch.raw_bm25(idx),
                };
                from = Some(k);
            }
        }
        (best, from)
    }

    /// Adds tool `idx`'s key to `top`, noting the step it came from.
    fn keep(&self, idx: usize, top: &mut Vec<Key>, from: &mut HashMap<usize, usize>) {
        let (key, step) = self.key(idx);
        if let Some(s) = step {
            from.insert(idx, s);
        }
        top.push(key);
    }

    /// Every tool in scope scored exactly: the reference the shortlist
    /// must agree with, and the answer when its bounds cannot decide.
    fn fuse_all(&self, scope: &Scope) -> Fused {
        let _stage = tracing::info_span!("stage", stage = "fuse_all").entered();
        let mut top: Vec<Key> = Vec::with_capacity(scope.len());
        let mut from: HashMap<usize, usize> = HashMap::default();
        let mut winners: Vec<Option<Key>> = vec![None; self.steps.len()];
        for idx in scope.iter() {
            let named = self.exact.contains(&idx);
            for (k, ch) in self.steps.iter().enumerate() {
                challenge(
                    &mut winners[k],
                    idx,
                    ch.fused(idx, self.mode, self.cfg, named),
                );
            }
            self.keep(idx, &mut top, &mut from);
        }
        Fused { top, from, winners }
    }

    /// The same answer as [`Self::fuse_all`] for its `k` best and the step
    /// winners, from the candidates alone: tools some channel scores beyond
    /// their cosine, named tools, and each text's dense shortlist. Every
    /// other tool scores at most [`Channels::outside`]. A candidate's score
    /// lies within bounds given by its approximate cosine; only candidates
    /// whose upper bound reaches the k-th best lower bound are scored
    /// exactly. `None` when the bounds cannot prove the answer (then every
    /// tool is scored).
    ///
    /// Most candidates at 100k tools (about 21,000 graph and lexical ones
    /// at the median) are outside every dense shortlist: their cosine
    /// is below their text's `rest`, so
    /// [`Channels::upper_outside_shortlist`] bounds them without it. Only
    /// those that reach the floor of the shortlisted and named tools are
    /// looked at closely (none at the median).
    fn fuse_shortlist(&self, scope: &Scope, k: usize) -> Option<Fused> {
        let texts: Vec<&Channels> = std::iter::once(self.whole).chain(self.steps).collect();
        let c = self.candidates(&texts, scope);
        let winners = self.step_winners(&c)?;
        // The k best keys.
        if c.core.len() < k && c.all() < k && !c.everyone() {
            return None;
        }
        let (mut top, mut from) = self.best_keys(&texts, &c, k)?;
        // Step winners are listed even when their key is not among the best.
        for w in winners.iter().flatten() {
            if !top.iter().any(|t| t.idx == w.idx) {
                self.keep(w.idx, &mut top, &mut from);
            }
        }
        Some(Fused { top, from, winners })
    }

    /// The candidates: named tools and each text's dense shortlist (the
    /// core), then the tools any channel scored beyond their cosine.
    fn candidates<'c>(&'c self, texts: &'c [&'c Channels<'c>], scope: &'c Scope) -> Candidates<'c> {
        // Ascending and without duplicates: a set over the snapshot's tools
        // (a bit each) rather than a sort.
        let mut core = Scope::none(scope.universe());
        for i in self
            .exact
            .iter()
            .copied()
            .chain(texts.iter().flat_map(|ch| ch.shortlist()))
            .filter(|&i| scope.contains(i))
        {
            core.insert(i);
        }
        Candidates {
            core: core.iter().collect(),
            in_core: core,
            texts,
            scope,
            others: OnceCell::new(),
            mode: self.mode,
            cfg: self.cfg,
        }
    }

    /// The best score outside the candidates a text can give (none when
    /// the candidates are every tool in scope).
    fn outside(&self, c: &Candidates, ch: &Channels<'_>, discount: f32) -> f32 {
        if c.everyone() {
            f32::NEG_INFINITY
        } else {
            ch.outside(self.mode, self.cfg) - discount
        }
    }

    /// Each step's best tool (no discount); `None` when a tool outside the
    /// candidates could beat one.
    fn step_winners(&self, c: &Candidates) -> Option<Vec<Option<Key>>> {
        let (mode, cfg) = (self.mode, self.cfg);
        let mut winners: Vec<Option<Key>> = Vec::with_capacity(self.steps.len());
        for ch in self.steps {
            let bounds = c.close(
                &|i| ch.bounds(i, mode, cfg, self.exact.contains(&i)),
                &[(ch, 0.0)],
                &|b| max_lower(b),
            )?;
            let floor = max_lower(&bounds);
            let mut best: Option<Key> = None;
            // Ascending: the first of equal scores wins, as in catalog order.
            for &(idx, _, _) in bounds.iter().filter(|b| b.2 >= floor) {
                challenge(
                    &mut best,
                    idx,
                    ch.fused(idx, mode, cfg, self.exact.contains(&idx)),
                );
            }
            if best.is_none_or(|w| w.fused <= self.outside(c, ch, 0.0)) {
                return None;
            }
            winners.push(best);
        }
        Some(winners)
    }

    /// The keys of every candidate that can be among the `k` best, and the
    /// step each came from; `None` when a tool outside the candidates could
    /// reach the k-th best key.
    fn best_keys(
        &self,
        texts: &[&Channels<'_>],
        c: &Candidates,
        k: usize,
    ) -> Option<(Vec<Key>, HashMap<usize, usize>)> {
        let (mode, cfg) = (self.mode, self.cfg);
        let discount = |s: usize| if s == 0 { 0.0 } else { cfg.step_discount };
        // The k-th best lower bound: any tool whose upper bound is below it
        // has at least k tools surely ahead of it.
        let kth_lower = |bounds: &mut [Bound]| {
            if bounds.len() > k && k > 0 {
                let (_, kth, _) = bounds.select_nth_unstable_by(k - 1, |a, b| b.1.total_cmp(&a.1));
                kth.1
            } else {
                f32::NEG_INFINITY
            }
        };
        let mut bounds = c.close(
            &|i| {
                let named = self.exact.contains(&i);
                let (mut lo, mut hi) = (f32::NEG_INFINITY, f32::NEG_INFINITY);
                for (s, ch) in texts.iter().enumerate() {
                    let (l, h) = ch.bounds(i, mode, cfg, named);
                    lo = lo.max(l - discount(s));
                    hi = hi.max(h - discount(s));
                }
                (lo, hi)
            },
            &texts
                .iter()
                .enumerate()
                .map(|(s, &ch)| (ch, discount(s)))
                .collect::<Vec<_>>(),
            &kth_lower,
        )?;
        let floor = kth_lower(&mut bounds);
        let mut top: Vec<Key> = Vec::new();
        let mut from: HashMap<usize, usize> = HashMap::default();
        for &(idx, _, _) in bounds.iter().filter(|b| b.2 >= floor) {
            self.keep(idx, &mut top, &mut from);
        }
        // Nothing outside the candidates may reach the k-th best key.
        if !c.everyone() {
            let kth = if top.len() > k {
                let (_, kth, _) = top.select_nth_unstable_by(k - 1, order(mode));
                kth.fused
            } else {
                top.iter().map(|t| t.fused).fold(f32::INFINITY, f32::min)
            };
            let out = texts
                .iter()
                .enumerate()
                .map(|(s, ch)| self.outside(c, ch, discount(s)))
                .fold(f32::NEG_INFINITY, f32::max);
            if top.len() < k || kth <= out {
                return None;
            }
        }
        Some((top, from))
    }
}

mod candidates;
#[cfg(test)]
mod tests;
