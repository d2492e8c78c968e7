//! The dense channel of one query vector: a quick int8 pass gives every tool
//! an approximate cosine with a proven error bound; the best
//! [`SHORTLIST`] upper bounds of the scope become fusion candidates, and a
//! tool's exact cosine is computed only when fusion asks for it (once, then
//! kept). Fusion needs no more than that to find the exact top-k (see
//! `pipeline::fuse`): most of the shortlist is ruled out by its bounds.

use crate::catalog::Catalog;
use crate::scope::Scope;
use rustc_hash::FxHashMap as HashMap;
use std::cell::RefCell;
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// Tools per query text that are fusion candidates for their cosine alone.
pub(crate) const SHORTLIST: usize = 256;

/// One query vector's cosines with the tools of a scope.
#[derive(Debug)]
pub(crate) struct Dense<'a> {
    catalog: &'a Catalog,
    query: &'a [f32],
    /// Approximate cosine per vector row.
    approx: Vec<f32>,
    error: f32,
    /// The best upper bounds in scope (tool indexes, any order).
    shortlist: Vec<usize>,
    /// Exact cosines computed so far: tool index → cosine.
    exact: RefCell<HashMap<usize, f32>>,
    /// No tool in scope outside the shortlist has a higher cosine
    /// (−∞ when there is none).
    rest: f32,
}

/// A float ordered by `total_cmp`, with the tool it belongs to.
#[derive(Debug, Clone, Copy)]
struct Scored(f32, usize);

impl PartialEq for Scored {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Scored {}
impl PartialOrd for Scored {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scored {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0).then(other.1.cmp(&self.1))
    }
}

impl<'a> Dense<'a> {
    /// The channel for `query` over `scope`; `None` when the catalog has no
    /// vectors or the query does not fit them (no dense channel).
    pub fn new(catalog: &'a Catalog, query: &'a [f32], scope: &Scope) -> Option<Self> {
        let vectors = catalog.vectors.as_ref()?;
        let approx = vectors.index.approx_scores(query)?;
        let error = approx.error;
        let approx = approx.scores;
        // The SHORTLIST best upper bounds in scope (a min-heap), and the
        // best upper bound left out.
        let mut heap: BinaryHeap<Reverse<Scored>> = BinaryHeap::with_capacity(SHORTLIST + 1);
        let mut rest = f32::NEG_INFINITY;
        for idx in scope.iter() {
            let upper = match catalog.vector_row.get(idx).copied().flatten() {
                Some(row) => approx.get(row).map_or(0.0, |a| a + error),
                None => 0.0,
            };
            if heap.len() < SHORTLIST {
                heap.push(Reverse(Scored(upper, idx)));
            } else if heap.peek().is_some_and(|Reverse(min)| upper > min.0) {
                if let Some(Reverse(out)) = heap.pop() {
                    rest = rest.max(out.0);
                }
                heap.push(Reverse(Scored(upper, idx)));
            } else {
                rest = rest.max(upper);
            }
        }
        Some(Self {
            catalog,
            query,
            approx,
            error,
            shortlist: heap
                .into_iter()
                .map(|Reverse(Scored(_, idx))| idx)
                .collect(),
            exact: RefCell::default(),
            rest,
        })
    }

    /// The exact cosine of tool `idx` (0 for a tool without a vector).
    fn cosine(&self, idx: usize) -> f32 {
        match (
            &self.catalog.vectors,
            self.catalog.vector_row.get(idx).copied().flatten(),
        ) {
            (Some(v), Some(row)) => v.index.score(self.query, row),
            _ => 0.0,
        }
    }

    /// The exact cosine of tool `idx` (computed once).
    pub fn get(&self, idx: usize) -> f32 {
        if let Some(&c) = self.exact.borrow().get(&idx) {
            return c;
        }
        let c = self.cosine(idx);
        self.exact.borrow_mut().insert(idx, c);
        c
    }

    /// Lowest and highest cosine tool `idx` can have, without computing it
    /// (exact once it has been computed).
    pub fn bounds(&self, idx: usize) -> (f32, f32) {
        if let Some(&c) = self.exact.borrow().get(&idx) {
            return (c, c);
        }
        match self.catalog.vector_row.get(idx).copied().flatten() {
            Some(row) => self
                .approx
                .get(row)
                .map_or((0.0, 0.0), |a| (a - self.error, a + self.error)),
            None => (0.0, 0.0),
        }
    }

    /// The shortlisted tools (any order).
    pub fn shortlist(&self) -> impl Iterator<Item = usize> + '_ {
        self.shortlist.iter().copied()
    }

    /// The highest cosine a tool in scope outside the shortlist can have
    /// (−∞ when the shortlist is the whole scope).
    pub fn rest(&self) -> f32 {
        self.rest
    }
}
