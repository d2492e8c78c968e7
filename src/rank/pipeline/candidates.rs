//! The tools fusion looks at beyond the core, and which of them can reach
//! its floor.

use super::Bound;
use crate::rank::RankConfig;
use crate::rank::fusion::Channels;
use crate::scope::Scope;
use std::cell::OnceCell;

/// The tools fusion looks at: the core (named and dense-shortlisted,
/// ascending), and the others some channel of `texts` scored.
pub(super) struct Candidates<'c> {
    pub core: Vec<usize>,
    pub in_core: Scope,
    pub texts: &'c [&'c Channels<'c>],
    pub scope: &'c Scope,
    /// Every other candidate, as found: listed only when the texts'
    /// channels cannot name the few that matter (see [`Self::close`]).
    pub others: OnceCell<Vec<usize>>,
    pub mode: crate::rank::Mode,
    pub cfg: &'c RankConfig,
}

impl Candidates<'_> {
    /// The candidates outside the core (every tool a channel of a text
    /// scores), as found.
    fn others(&self) -> &[usize] {
        self.others.get_or_init(|| {
            let mut all = self.in_core.clone();
            let mut others: Vec<usize> = Vec::new();
            for i in self.texts.iter().flat_map(|ch| ch.scored()) {
                if self.scope.contains(i) && all.insert(i) {
                    others.push(i);
                }
            }
            others
        })
    }

    /// How many candidates there are.
    pub fn all(&self) -> usize {
        self.core.len() + self.others().len()
    }

    /// The candidates are every tool in scope (looked at only when the
    /// channels' lists together could be).
    pub fn everyone(&self) -> bool {
        let listed: usize = self
            .texts
            .iter()
            .map(|ch| ch.graph.len() + ch.touched.len())
            .sum();
        self.core.len().saturating_add(listed) >= self.scope.len() && self.all() == self.scope.len()
    }

    /// The core's bounds, then those of the other candidates whose upper
    /// bound outside the shortlist (the best over `texts`, each less its
    /// discount) reaches `floor(core bounds)`, in ascending tool order;
    /// `None` when a tool the texts' lists do not name may reach it while
    /// a text's graph walk left runs out (testing the candidates one by
    /// one would miss it).
    pub fn close(
        &self,
        bound: &dyn Fn(usize) -> (f32, f32),
        texts: &[(&Channels<'_>, f32)],
        floor: &dyn Fn(&mut [Bound]) -> f32,
    ) -> Option<Vec<Bound>> {
        let mut bounds: Vec<Bound> = self
            .core
            .iter()
            .map(|&i| {
                let (lo, hi) = bound(i);
                (i, lo, hi)
            })
            .collect();
        let first = floor(&mut bounds);
        let before = bounds.len();
        let how = (self.mode, self.cfg);
        // Each text's own lists name the tools that can reach `first`:
        // most scored tools are read once, in order.
        let mut reaching: Vec<usize> = Vec::new();
        let listed = texts
            .iter()
            .all(|&(ch, d)| ch.reaching((first, d), &self.in_core, how, &mut reaching));
        // Every other candidate tested one by one: the reference.
        let tested = || {
            let upper = |i: usize| {
                texts
                    .iter()
                    .map(|&(ch, d)| ch.upper_outside_shortlist(i, how.0, how.1) - d)
                    .fold(f32::NEG_INFINITY, f32::max)
            };
            let mut found: Vec<usize> = (self.others().iter().copied())
                .filter(|&i| upper(i) >= first)
                .collect();
            found.sort_unstable();
            found
        };
        let deferring = texts.iter().any(|(ch, _)| ch.graph.unlisted().is_some());
        if listed {
            reaching.sort_unstable();
            reaching.dedup();
            // (With graph runs left out, the lists go by bounds on the
            // graph scores: they may name more than testing each finds.)
            debug_assert!(
                {
                    let found = tested();
                    if deferring {
                        found.iter().all(|i| reaching.binary_search(i).is_ok())
                    } else {
                        found == reaching
                    }
                },
                "the lists name what testing each finds"
            );
        } else if deferring {
            return None;
        } else {
            reaching = tested();
        }
        // Their cosines' approximations, worked out together; then only
        // those whose bounds can still reach `first` with them (the lists
        // bound each cosine by the best outside the shortlist) get their
        // bounds, which replay the graph runs a walk left out.
        for (ch, _) in texts {
            ch.approximate(&reaching);
        }
        reaching.retain(|&i| {
            texts
                .iter()
                .map(|&(ch, d)| ch.upper_known(i, how.0, how.1) - d)
                .fold(f32::NEG_INFINITY, f32::max)
                >= first
        });
        bounds.extend(reaching.into_iter().map(|i| {
            let (lo, hi) = bound(i);
            (i, lo, hi)
        }));
        if bounds.len() > before {
            bounds.sort_unstable_by_key(|b| b.0);
        }
        Some(bounds)
    }
}
