//! Fusion: the channel scores of one query text (the whole request or one
//! of its steps) turned into one score per tool, and the orders ranking uses.

use super::channels::GraphScores;
use super::dense::Dense;
use super::{Mode, RankConfig, ScoreDetails, Scored};
use crate::lexical::Hits;
use crate::scope::Scope;
use std::cmp::Ordering;

/// Bonus that puts a tool the request names exactly above everything else.
const EXACT_NAME_BONUS: f32 = 10.0;

/// The channel scores of one query text.
#[derive(Debug)]
pub(crate) struct Channels<'a> {
    pub graph: GraphScores<'a>,
    /// Cosines (`None` when the dense channel is off).
    pub dense: Option<Dense<'a>>,
    /// BM25 per tool index (none when not computed).
    pub bm25: Hits,
    /// The tools with a BM25 score in scope, ascending (4 bytes each: at
    /// a million tools a common term touches hundreds of thousands, and
    /// fusion reads them all).
    pub touched: Vec<u32>,
    /// The best BM25 in scope; lexical scores are divided by it.
    pub max_bm25: f32,
    /// How much the lexical channel is trusted for this text, in [0, 1].
    pub lexical_trust: f32,
    /// How much more than `w_graph` the graph channel weighs for this text
    /// (1; more for a follow-up the conversation completes, see
    /// [`super::query::Query::graph_trust`]).
    pub graph_trust: f32,
}

impl<'a> Channels<'a> {
    /// Channel scores over `scope` (the best BM25 is taken in scope
    /// only).
    pub fn new(
        graph: GraphScores<'a>,
        dense: Option<Dense<'a>>,
        bm25: Hits,
        scope: &Scope,
        cfg: &RankConfig,
    ) -> Self {
        let mut touched: Vec<u32> = Vec::with_capacity(bm25.touched().len());
        let mut max_bm25 = 0.0_f32;
        bm25.touched().each_also_in(scope, |i| {
            max_bm25 = max_bm25.max(bm25.get(i));
            touched.push(u32::try_from(i).unwrap_or(u32::MAX));
        });
        let lexical_trust = if max_bm25 > 0.0 {
            (max_bm25 / (max_bm25 + cfg.lexical_trust_k.max(1e-3))).powf(cfg.lexical_trust_power)
        } else {
            0.0
        };
        Self {
            graph,
            dense,
            bm25,
            touched,
            max_bm25,
            lexical_trust,
            graph_trust: 1.0,
        }
    }

    /// The same channels with the graph weighing `trust` times `w_graph`.
    pub fn trusting_graph(self, trust: f32) -> Self {
        Self {
            graph_trust: trust,
            ..self
        }
    }

    fn bm25(&self, idx: usize) -> f32 {
        self.bm25.get(idx)
    }

    fn lexical(&self, idx: usize) -> f32 {
        if self.max_bm25 > 0.0 {
            self.bm25(idx) / self.max_bm25
        } else {
            0.0
        }
    }

    fn dense(&self, idx: usize) -> f32 {
        self.dense.as_ref().map_or(0.0, |d| d.get(idx))
    }

    /// Works out together what [`Self::bounds`] will need of `tools`' cosines
    /// (see [`Dense::approximate`]).
    pub fn approximate(&self, tools: &[usize]) {
        if let Some(d) = &self.dense {
            d.approximate(tools);
        }
    }

    /// The dense shortlist (empty without a dense channel).
    pub fn shortlist(&self) -> impl Iterator<Item = usize> + '_ {
        self.dense.iter().flat_map(Dense::shortlist)
    }

    /// The tools the graph or the lexical channel scores (a tool may come
    /// twice). With the dense shortlist and the named tools they are every
    /// tool whose score is not its cosine's alone.
    pub fn scored(&self) -> impl Iterator<Item = usize> + '_ {
        (self.graph.tools()).chain(self.touched.iter().map(|&i| i as usize))
    }

    /// The highest fused score of a tool the request does not name that is
    /// outside the dense shortlist, so its cosine is no higher than
    /// [`Dense::rest`]: at least the upper bound of [`Self::bounds`] for
    /// such a tool, without its cosine (float addition and multiplication
    /// by a positive weight are monotonic, and the parts add up in the same
    /// order). Infinite (no bound) for a negative dense weight.
    pub fn upper_outside_shortlist(&self, idx: usize, mode: Mode, cfg: &RankConfig) -> f32 {
        self.upper_of(self.parts(idx, mode, cfg, false))
    }

    /// At most what [`Self::bounds`] gives a tool the request does not
    /// name as its highest, from its cosine's bounds (approximated first:
    /// [`Self::approximate`]) and [`GraphScores::upper`]: no run left out
    /// of the graph walk is replayed for it.
    pub fn upper_known(&self, idx: usize, mode: Mode, cfg: &RankConfig) -> f32 {
        let (lo, hi) = self.dense.as_ref().map_or((0.0, 0.0), |d| d.bounds(idx));
        let parts = self.parts_of(self.graph.upper(idx), self.lexical(idx), mode, cfg, false);
        parts.fused(lo).max(parts.fused(hi))
    }

    /// The tools this text scores beyond their cosine, outside `core`,
    /// whose [`Self::upper_outside_shortlist`] less `discount` reaches
    /// `floor`, added to `out` (the same test, tool by tool, but the graph
    /// channel's tools are read in the order it holds them rather than
    /// looked up one by one: at a million tools hundreds of thousands of
    /// tools are scored, and the lookups were most of fusion's time).
    /// `false` when a tool this text does not score could reach `floor`
    /// as well (then every candidate must be tested).
    pub fn reaching(
        &self,
        (floor, discount): (f32, f32),
        core: &Scope,
        (mode, cfg): (Mode, &RankConfig),
        out: &mut Vec<usize>,
    ) -> bool {
        // Graph runs left out of the walk may add up to `unlisted` to any
        // tool's listed score (see `GraphScores::unlisted`).
        let unlisted = self.graph.unlisted();
        if self.unlisted_unbounded(mode, cfg) {
            return false;
        }
        let unscored = self.upper_of(self.parts_of(unlisted, 0.0, mode, cfg, false));
        if unscored - discount >= floor {
            return false;
        }
        for (idx, found) in self.graph.scored() {
            if core.contains(idx) {
                continue;
            }
            let found = Some(match unlisted {
                None => (found.score, found.stated_verb),
                Some((_, stated)) => (found.score + found.more, found.stated_verb || stated),
            });
            let parts = self.parts_of(found, self.lexical(idx), mode, cfg, false);
            if self.upper_of(parts) - discount >= floor {
                out.push(idx);
            }
        }
        // The other tools it touched differ only in their lexical score:
        // those whose score is below `cut` cannot reach `floor`, and most
        // are (at a million tools hundreds of thousands are touched).
        let upper = |lexical: f32| {
            let parts = self.parts_of(unlisted, lexical, mode, cfg, false);
            self.upper_of(parts) - discount
        };
        // The lexical part of a tool's score at a lexical score of 1: its
        // weight (as `parts_of` weighs it in this mode).
        let weight = self.parts_of(unlisted, 1.0, mode, cfg, false).lexical;
        let cut = lexical_cut(&upper, weight, floor);
        for idx in self.touched.iter().map(|&i| i as usize) {
            let lexical = self.lexical(idx);
            if lexical < cut || core.contains(idx) || self.graph.listed(idx) {
                continue;
            }
            if upper(lexical) >= floor {
                out.push(idx);
            }
        }
        true
    }

    /// [`Self::upper_outside_shortlist`] of a tool's parts.
    fn upper_of(&self, parts: Parts) -> f32 {
        match &self.dense {
            None => parts.fused(0.0),
            Some(_) if parts.w_dense == 0.0 => parts.fused(0.0),
            Some(d) if parts.w_dense > 0.0 => parts.fused(d.rest()),
            Some(_) => f32::INFINITY,
        }
    }

    /// The fused score of one tool; `exact`: the request names it.
    pub fn fused(&self, idx: usize, mode: Mode, cfg: &RankConfig, exact: bool) -> f32 {
        self.fused_with(idx, self.dense(idx), mode, cfg, exact)
    }

    /// Lowest and highest fused score of one tool, without its exact cosine.
    pub fn bounds(&self, idx: usize, mode: Mode, cfg: &RankConfig, exact: bool) -> (f32, f32) {
        let (lo, hi) = self.dense.as_ref().map_or((0.0, 0.0), |d| d.bounds(idx));
        let parts = self.parts(idx, mode, cfg, exact);
        let (a, b) = (parts.fused(lo), parts.fused(hi));
        (a.min(b), a.max(b))
    }

    /// The highest fused score a tool in scope that is not a candidate can
    /// have (its score is its cosine's alone, a cosine in [-1, `rest`]).
    /// With graph runs left out of the walk, such a tool may also have a
    /// graph score the walk did not list: at most
    /// [`GraphScores::unlisted`].
    pub fn outside(&self, mode: Mode, cfg: &RankConfig) -> f32 {
        let cosine_alone = match &self.dense {
            None => self.fused_with_cosine(0.0, mode, cfg),
            Some(d) if d.rest() == f32::NEG_INFINITY => return f32::NEG_INFINITY,
            Some(d) => self
                .fused_with_cosine(d.rest(), mode, cfg)
                .max(self.fused_with_cosine(-1.0, mode, cfg)),
        };
        match self.graph.unlisted() {
            None => cosine_alone,
            Some(_) if self.unlisted_unbounded(mode, cfg) => f32::INFINITY,
            Some(found) => {
                let parts = self.parts_of(Some(found), 0.0, mode, cfg, false);
                cosine_alone.max(self.upper_of(parts))
            }
        }
    }

    /// Graph runs were left out of the walk and the graph channel weighs
    /// negatively: their bound on graph scores is then no bound on fused
    /// ones (the lowest graph score would be needed).
    fn unlisted_unbounded(&self, mode: Mode, cfg: &RankConfig) -> bool {
        self.graph.unlisted().is_some()
            && mode == Mode::Joint
            && cfg.w_graph * self.graph_trust < 0.0
    }

    /// Walks every graph run the walk left out (see
    /// [`GraphScores::expanded`]); `false` when it left none out.
    pub fn expand(&mut self) -> bool {
        match self.graph.expanded() {
            Some(all) => {
                self.graph = all;
                true
            }
            None => false,
        }
    }

    /// What a tool no channel but the dense one scores gets for `cosine`.
    fn fused_with_cosine(&self, cosine: f32, mode: Mode, cfg: &RankConfig) -> f32 {
        match mode {
            Mode::Joint => cfg.w_dense * cosine,
            Mode::Dense => cosine,
            Mode::Graph | Mode::Lexical => 0.0,
        }
    }

    fn fused_with(&self, idx: usize, dense: f32, mode: Mode, cfg: &RankConfig, exact: bool) -> f32 {
        self.parts(idx, mode, cfg, exact).fused(dense)
    }

    /// What one tool's fused score is made of besides its cosine (looked
    /// up once when both of its bounds are wanted).
    fn parts(&self, idx: usize, mode: Mode, cfg: &RankConfig, exact: bool) -> Parts {
        let found = self.graph.get(idx).map(|g| (g.score, g.stated_verb));
        self.parts_of(found, self.lexical(idx), mode, cfg, exact)
    }

    /// [`Self::parts`] from a tool's graph score and whether a path of it
    /// performs the stated verb (`None`: no path reaches it), and its
    /// lexical score.
    fn parts_of(
        &self,
        found: Option<(f32, bool)>,
        lexical: f32,
        mode: Mode,
        cfg: &RankConfig,
        exact: bool,
    ) -> Parts {
        let graph_score = found.map_or(0.0, |g| g.0);
        let (w_dense, graph, lexical) = match mode {
            Mode::Joint => (
                cfg.w_dense,
                cfg.w_graph * self.graph_trust * graph_score,
                cfg.w_lexical * self.lexical_trust * lexical,
            ),
            Mode::Graph => (0.0, graph_score, 0.0),
            Mode::Dense => (1.0, 0.0, 0.0),
            Mode::Lexical => (0.0, 0.0, lexical),
        };
        let stated = if mode == Mode::Joint && found.is_some_and(|g| g.1) {
            cfg.w_stated_verb
        } else {
            0.0
        };
        let named = if is_exact(mode, cfg, exact) {
            EXACT_NAME_BONUS
        } else {
            0.0
        };
        Parts {
            w_dense,
            graph,
            lexical,
            stated,
            named,
        }
    }

    /// Everything behind one tool's score, for its explanation; its graph
    /// paths and matched terms only with `explain` (they are the costly
    /// part, and a planner that does not ask never reads them).
    pub fn details(
        &self,
        idx: usize,
        mode: Mode,
        cfg: &RankConfig,
        exact: bool,
        explain: bool,
    ) -> ScoreDetails {
        let graph = self.graph.get(idx);
        ScoreDetails {
            graph: graph.map_or(0.0, |g| g.score),
            dense: self.dense(idx),
            lexical: self.lexical(idx),
            bm25: self.bm25(idx),
            lexical_trust: self.lexical_trust,
            exact_name: is_exact(mode, cfg, exact),
            fused: self.fused(idx, mode, cfg, exact),
            matched: if explain {
                self.graph.matched(idx)
            } else {
                Vec::new()
            },
            paths: if explain {
                self.graph.paths(idx)
            } else {
                Vec::new()
            },
            decided_by: None,
            step: None,
            best_for_step: None,
            prerequisite_of: None,
            goal_boost: None,
            conversation_boost: None,
        }
    }

    /// The raw BM25 of a tool (graph mode breaks ties with it).
    pub fn raw_bm25(&self, idx: usize) -> f32 {
        self.bm25(idx)
    }
}

/// A tool's weighted channel scores but the dense one: its fused score is
/// always computed from them the same way, so its bounds and its exact
/// score agree to the last bit.
#[derive(Debug, Clone, Copy)]
struct Parts {
    w_dense: f32,
    graph: f32,
    lexical: f32,
    /// The stated-verb bonus (0 without one).
    stated: f32,
    /// The exact-name bonus (0 without one).
    named: f32,
}

impl Parts {
    fn fused(self, dense: f32) -> f32 {
        self.graph + self.w_dense * dense + self.lexical + self.stated + self.named
    }
}

/// A lexical score below which `upper` (a tool's upper bound as a function
/// of its lexical score alone, whose lexical part is `weight` times that
/// score) stays under `floor`: the lowest lexical score that can reach it,
/// less a margin far wider than float rounding; −∞ when that cannot be
/// shown. Sound because the bound only grows with the lexical score: the
/// score is multiplied by a weight that is not negative and added to the
/// same parts in the same order (see [`Channels::upper_outside_shortlist`]).
fn lexical_cut(upper: &dyn Fn(f32) -> f32, weight: f32, floor: f32) -> f32 {
    let (at_zero, at_one) = (upper(0.0), upper(1.0));
    // Lexical scores lie in [0, 1] (each BM25 over the best one).
    if !(weight >= 0.0 && at_zero.is_finite() && at_one.is_finite()) {
        return f32::NEG_INFINITY;
    }
    if at_one < floor {
        return f32::INFINITY;
    }
    if weight == 0.0 || at_zero >= floor {
        return f32::NEG_INFINITY;
    }
    // upper(x) = at_zero + weight·x, up to rounding.
    let lowest = (floor - at_zero) / weight;
    lowest - 1e-3 / weight - 1e-3
}

fn is_exact(mode: Mode, cfg: &RankConfig, exact: bool) -> bool {
    cfg.exact_names && exact && matches!(mode, Mode::Joint | Mode::Lexical)
}

/// A tool's place in the order: its fused score and, in graph mode, its
/// BM25 as a tie-break.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Key {
    pub idx: usize,
    pub fused: f32,
    pub bm25: f32,
}

/// Best first; equal scores in catalog order (deterministic). Graph-only
/// ablation breaks graph ties lexically so the order is not alphabetical.
pub(crate) fn order(mode: Mode) -> impl Fn(&Key, &Key) -> Ordering + Copy {
    move |a, b| {
        let by_score = b.fused.total_cmp(&a.fused);
        let by_bm25 = if mode == Mode::Graph {
            b.bm25.total_cmp(&a.bm25)
        } else {
            Ordering::Equal
        };
        by_score.then(by_bm25).then(a.idx.cmp(&b.idx))
    }
}

/// Takes a ranked list and moves the tools marked `best_for_step` right
/// after the top match, ahead of everything else; both groups keep their
/// order (a stable partition: score order, tie-breaks and disambiguation
/// stay as they were).
pub(crate) fn move_step_winners_up(scored: &mut [Scored]) {
    if let Some(rest) = scored.get_mut(1..) {
        rest.sort_by_key(|s| s.details.best_for_step.is_none());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scored(idx: usize, fused: f32, step: Option<&str>) -> Scored {
        Scored {
            idx,
            details: ScoreDetails {
                fused,
                best_for_step: step.map(str::to_string),
                ..ScoreDetails::default()
            },
        }
    }

    #[test]
    fn step_winners_move_right_after_the_top_match_keeping_their_order() {
        // Ranked by score: 1, 2, 5, 4, 0, 3.
        let mut v = vec![
            scored(1, 0.9, Some("a")),
            scored(2, 0.8, None),
            scored(5, 0.7, None),
            scored(4, 0.6, Some("c")),
            scored(0, 0.5, None),
            scored(3, 0.4, Some("b")),
        ];
        move_step_winners_up(&mut v);
        let order: Vec<usize> = v.iter().map(|s| s.idx).collect();
        assert_eq!(order, [1, 4, 3, 2, 5, 0]);
        // The top match stays first even when it is no step's best.
        let mut v = vec![
            scored(1, 0.9, None),
            scored(7, 0.85, None),
            scored(0, 0.2, Some("a")),
        ];
        move_step_winners_up(&mut v);
        let order: Vec<usize> = v.iter().map(|s| s.idx).collect();
        assert_eq!(order, [1, 0, 7]);
    }

    #[test]
    fn graph_mode_breaks_score_ties_by_bm25_then_catalog_order() {
        let k = |idx, fused, bm25| Key { idx, fused, bm25 };
        let mut keys = [
            k(0, 0.5, 1.0),
            k(1, 0.5, 3.0),
            k(2, 0.9, 0.0),
            k(3, 0.5, 3.0),
        ];
        keys.sort_by(order(Mode::Graph));
        assert_eq!(keys.iter().map(|k| k.idx).collect::<Vec<_>>(), [2, 1, 3, 0]);
        keys.sort_by(order(Mode::Joint));
        assert_eq!(keys.iter().map(|k| k.idx).collect::<Vec<_>>(), [2, 0, 1, 3]);
    }
}
