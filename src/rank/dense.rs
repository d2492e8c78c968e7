//! The dense channel of one query vector: a quick int8 pass gives every tool
//! an approximate cosine with a proven error bound; the best
//! [`SHORTLIST`] upper bounds of the scope become fusion candidates, and a
//! tool's exact cosine is computed only when fusion asks for it (once, then
//! kept). Fusion needs no more than that to find the exact top-k (see
//! `pipeline::fuse`): most of the shortlist is ruled out by its bounds.
//!
//! From [`RankConfig::dense_scan_all_below`] vectors on, the int8 pass
//! over every row costs more memory traffic than the rest of a search
//! together (38 MB at 100k tools). There a first pass over sign bits (an
//! eighth of the bytes) picks the [`RankConfig::dense_first_pass`]
//! tools in scope the int8 pass scores; other tools get their int8 bounds
//! when fusion asks for them. The bound on tools outside the shortlist
//! (`rest`) then holds only for the picked ones: an estimate, whose effect
//! on the answers the perf bench measures (recall@10 against the exact
//! scan).

use crate::catalog::Catalog;
use crate::embed::QueryCodes;
use crate::rank::RankConfig;
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
    /// Approximate cosines.
    approx: Approx,
    error: f32,
    /// The best upper bounds in scope (tool indexes, any order).
    shortlist: Vec<usize>,
    /// Exact cosines computed so far: tool index → cosine.
    exact: RefCell<HashMap<usize, f32>>,
    /// No tool in scope outside the shortlist has a higher cosine
    /// (−∞ when there is none).
    rest: f32,
}

/// The int8 approximations of cosines.
#[derive(Debug)]
enum Approx {
    /// Every row's, in row order.
    Every(Vec<f32>),
    /// The first pass's rows (ascending) and theirs, then those asked for
    /// later: vector row → approximate cosine.
    Asked {
        query: QueryCodes,
        picked: Vec<usize>,
        scores: Vec<f32>,
        later: RefCell<HashMap<usize, f32>>,
    },
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

/// The [`SHORTLIST`] best upper bounds offered (a min-heap), and the best
/// upper bound left out. Which tools are kept does not depend on the order
/// they are offered in (`Scored` is a total order), so chunks can be
/// merged.
#[derive(Debug)]
struct Best {
    heap: BinaryHeap<Reverse<Scored>>,
    rest: f32,
}

impl Default for Best {
    fn default() -> Self {
        Self {
            heap: BinaryHeap::with_capacity(SHORTLIST + 1),
            rest: f32::NEG_INFINITY,
        }
    }
}

impl Best {
    fn offer(&mut self, s: Scored) {
        if self.heap.len() < SHORTLIST {
            self.heap.push(Reverse(s));
        } else if self.heap.peek().is_some_and(|Reverse(min)| s > *min) {
            if let Some(Reverse(out)) = self.heap.pop() {
                self.rest = self.rest.max(out.0);
            }
            self.heap.push(Reverse(s));
        } else {
            self.rest = self.rest.max(s.0);
        }
    }

    /// What offering each of `all` would keep: the best [`SHORTLIST`] by a
    /// selection rather than a heap offer each.
    fn of(mut all: Vec<Scored>) -> Self {
        let cut = all.len().saturating_sub(SHORTLIST);
        if cut > 0 {
            all.select_nth_unstable(cut);
        }
        let (out, kept) = all.split_at(cut);
        Self {
            heap: kept.iter().map(|&s| Reverse(s)).collect(),
            rest: out.iter().map(|s| s.0).fold(f32::NEG_INFINITY, f32::max),
        }
    }

    /// Keeps what `other` kept and left out, as if every offer had been
    /// made here.
    fn merge(&mut self, other: Best) {
        self.rest = self.rest.max(other.rest);
        for Reverse(s) in other.heap {
            self.offer(s);
        }
    }
}

/// The int8 pass over every row: each chunk picks its own best upper
/// bounds in scope on the thread that scored it, merged here. The
/// approximations, their error bound and the best upper bounds.
fn scan_every_row(catalog: &Catalog, query: &[f32], scope: &Scope) -> Option<(Approx, f32, Best)> {
    let index = &catalog.vectors()?.index;
    let (approx, chunks) = index.approx_scores_with(query, |first, scores, error| {
        let mut best = Best::default();
        for (row, &a) in (first..).zip(scores) {
            if let Some(idx) = catalog.tool_of_row(row).filter(|&t| scope.contains(t)) {
                best.offer(Scored(a + error, idx));
            }
        }
        best
    })?;
    let mut best = Best::default();
    for chunk in chunks {
        best.merge(chunk);
    }
    Some((Approx::Every(approx.scores), approx.error, best))
}

/// The sign-bit first pass picks `keep` rows in scope (more than the
/// shortlist, so that `rest` comes from a picked row left out of it rather
/// than claiming there is none); only they get the int8 pass. As
/// [`scan_every_row`].
fn first_pass(
    catalog: &Catalog,
    query: &[f32],
    scope: &Scope,
    keep: usize,
) -> Option<(Approx, f32, Best)> {
    let index = &catalog.vectors()?.index;
    let codes = index.query_codes(query)?;
    let tool = |row: usize| catalog.tool_of_row(row);
    let in_scope = |row: usize| tool(row).is_some_and(|t| scope.contains(t));
    // Every row's tool in scope: no lookup per row (nobody's access is
    // restricted, the common case); otherwise one per row.
    let every = scope.len() == catalog.tools().len() && catalog.every_row_has_a_tool();
    let accept = (!every).then_some(in_scope);
    let signs = tracing::info_span!("stage", stage = "dense_signs").entered();
    let mut picked = index.sign_candidates(&codes, keep.max(SHORTLIST + 1), accept);
    drop(signs);
    // In memory order: the int8 pass reads ahead more easily.
    picked.sort_unstable();
    let _int8 = tracing::info_span!("stage", stage = "dense_int8").entered();
    let scores = index.approx_rows(&codes, &picked);
    let best = Best::of(
        picked
            .iter()
            .zip(&scores)
            .filter_map(|(&row, &a)| Some(Scored(a + codes.error, tool(row)?)))
            .collect(),
    );
    let error = codes.error;
    let approx = Approx::Asked {
        query: codes,
        picked,
        scores,
        later: RefCell::default(),
    };
    Some((approx, error, best))
}

impl<'a> Dense<'a> {
    /// The channel for `query` over `scope`; `None` when the catalog has no
    /// vectors or the query does not fit them (no dense channel). The
    /// shortlist comes from the int8 pass over every row, or from the rows
    /// a first pass picks (see the module docs), and the tools without a
    /// vector (upper bound 0).
    pub fn new(
        catalog: &'a Catalog,
        query: &'a [f32],
        scope: &Scope,
        cfg: &RankConfig,
    ) -> Option<Self> {
        let index = &catalog.vectors()?.index;
        let (approx, error, mut best) = if index.len() < cfg.dense_scan_all_below {
            scan_every_row(catalog, query, scope)?
        } else {
            first_pass(catalog, query, scope, cfg.dense_first_pass)?
        };
        for &idx in catalog
            .without_vector()
            .iter()
            .filter(|&&t| scope.contains(t))
        {
            best.offer(Scored(0.0, idx));
        }
        Some(Self {
            catalog,
            query,
            approx,
            error,
            shortlist: best
                .heap
                .into_iter()
                .map(|Reverse(Scored(_, idx))| idx)
                .collect(),
            exact: RefCell::default(),
            rest: best.rest,
        })
    }

    /// The int8 approximation of row `row`'s cosine.
    fn approx(&self, row: usize) -> f32 {
        match &self.approx {
            Approx::Every(scores) => scores.get(row).copied().unwrap_or(0.0),
            Approx::Asked {
                query,
                picked,
                scores,
                later,
            } => {
                if let Some(&a) = picked.binary_search(&row).ok().and_then(|i| scores.get(i)) {
                    return a;
                }
                if let Some(&a) = later.borrow().get(&row) {
                    return a;
                }
                let a = self
                    .catalog
                    .vectors()
                    .and_then(|v| v.index.approx_rows(query, &[row]).first().copied())
                    .unwrap_or(0.0);
                later.borrow_mut().insert(row, a);
                a
            }
        }
    }

    /// Works out, in one pass, the int8 approximations [`Self::bounds`]
    /// will need for `tools` that the first pass did not pick: their rows
    /// are scattered, and read together they wait on memory at once
    /// rather than one after another (fusion bounds hundreds of such
    /// tools at a million). The same numbers as one at a time.
    pub fn approximate(&self, tools: &[usize]) {
        let Approx::Asked {
            query,
            picked,
            later,
            ..
        } = &self.approx
        else {
            return;
        };
        let Some(vectors) = self.catalog.vectors() else {
            return;
        };
        let mut rows: Vec<usize> = {
            let known = later.borrow();
            tools
                .iter()
                .filter_map(|&t| self.catalog.vector_row(t))
                .filter(|r| picked.binary_search(r).is_err() && !known.contains_key(r))
                .collect()
        };
        if rows.is_empty() {
            return;
        }
        rows.sort_unstable();
        rows.dedup();
        let scores = vectors.index.approx_rows(query, &rows);
        later.borrow_mut().extend(rows.into_iter().zip(scores));
    }

    /// The exact cosine of tool `idx` (0 for a tool without a vector).
    fn cosine(&self, idx: usize) -> f32 {
        match (self.catalog.vectors(), self.catalog.vector_row(idx)) {
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
        match self.catalog.vector_row(idx) {
            Some(row) => {
                let a = self.approx(row);
                (a - self.error, a + self.error)
            }
            None => (0.0, 0.0),
        }
    }

    /// The shortlisted tools (any order).
    pub fn shortlist(&self) -> impl Iterator<Item = usize> + '_ {
        self.shortlist.iter().copied()
    }

    /// The highest cosine a tool in scope outside the shortlist can have
    /// (−∞ when the shortlist is the whole scope); after a first pass, of
    /// the tools it picked (see the module docs).
    pub fn rest(&self) -> f32 {
        self.rest
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::{Embedder, HashEmbedder};
    use crate::engine::synthetic_engine;

    /// A first pass gives every tool the bounds of the scan over every
    /// tool (picked or asked for later); its shortlist comes from the
    /// picked tools, and its `rest` never exceeds the proven one. When it
    /// picks every tool in scope, it is the scan over every tool.
    #[test]
    fn a_first_pass_agrees_with_the_scan_over_every_tool() {
        let (engine, synth) = synthetic_engine(400, 8, 5);
        let snap = engine.snapshot();
        let catalog = &snap.catalog;
        let n = catalog.tools().len();
        let scopes = [Scope::all(n), Scope::of(n, (0..n).filter(|i| i % 4 != 0))];
        let scan_all = RankConfig::default();
        let pass = |keep| RankConfig {
            dense_scan_all_below: 0,
            dense_first_pass: keep,
            ..RankConfig::default()
        };
        let sorted = |d: &Dense| {
            let mut v: Vec<usize> = d.shortlist().collect();
            v.sort_unstable();
            v
        };
        for q in &synth.queries {
            let text = q["query"].as_str().unwrap();
            let vector = HashEmbedder::new().embed_query(text).unwrap();
            for scope in &scopes {
                let full = Dense::new(catalog, &vector, scope, &scan_all).unwrap();
                let every = Dense::new(catalog, &vector, scope, &pass(n)).unwrap();
                assert_eq!(sorted(&full), sorted(&every), "{text}");
                assert_eq!(full.rest().to_bits(), every.rest().to_bits(), "{text}");
                let few = Dense::new(catalog, &vector, scope, &pass(SHORTLIST + 20)).unwrap();
                let Approx::Asked { picked, later, .. } = &few.approx else {
                    panic!("a first pass asks for rows");
                };
                assert_eq!(picked.len(), SHORTLIST + 20, "{text}");
                assert!(picked.is_sorted(), "{text}");
                assert!(few.rest() <= full.rest(), "{text}");
                for idx in (0..n).filter(|&i| scope.contains(i)) {
                    assert_eq!(few.bounds(idx), full.bounds(idx), "{text} {idx}");
                }
                assert!(!later.borrow().is_empty(), "bounds asked for more rows");
                // Worked out together first: the same bounds, none asked
                // for one at a time after.
                let batched = Dense::new(catalog, &vector, scope, &pass(SHORTLIST + 20)).unwrap();
                let tools: Vec<usize> = (0..n).rev().filter(|&i| scope.contains(i)).collect();
                batched.approximate(&tools);
                let Approx::Asked { picked, later, .. } = &batched.approx else {
                    panic!("a first pass asks for rows");
                };
                let asked = later.borrow().len();
                let with_rows = tools.iter().filter(|&&t| catalog.vector_row(t).is_some());
                assert_eq!(asked + picked.len(), with_rows.count(), "{text}");
                for &idx in &tools {
                    assert_eq!(batched.bounds(idx), full.bounds(idx), "{text} {idx}");
                }
                assert_eq!(later.borrow().len(), asked, "{text}");
                // A pick smaller than the shortlist still leaves a `rest`.
                let tiny = Dense::new(catalog, &vector, scope, &pass(10)).unwrap();
                assert_eq!(tiny.shortlist().count(), SHORTLIST, "{text}");
                assert!(
                    tiny.rest().is_finite() && tiny.rest() <= full.rest(),
                    "{text}"
                );
            }
        }
    }

    /// What is kept does not depend on how the offers are split into
    /// chunks and merged, or on selecting from all of them at once: the
    /// same tools and the same `rest` as offering everything to one, ties
    /// included.
    #[test]
    fn merged_chunks_keep_what_one_pass_keeps() {
        let mut seed = 3u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            // Few distinct values: many ties.
            ((seed >> 33) % 200) as f32 / 100.0
        };
        for n in [10, SHORTLIST, 3 * SHORTLIST + 7, 5_000] {
            let offers: Vec<Scored> = (0..n).map(|i| Scored(next(), i)).collect();
            let mut one = Best::default();
            offers.iter().for_each(|&s| one.offer(s));
            let mut merged = Best::default();
            for chunk in offers.chunks(97).rev() {
                let mut part = Best::default();
                chunk.iter().for_each(|&s| part.offer(s));
                merged.merge(part);
            }
            let ids = |b: Best| {
                let mut v: Vec<usize> = b.heap.into_iter().map(|Reverse(s)| s.1).collect();
                v.sort_unstable();
                v
            };
            let selected = Best::of(offers.clone());
            assert_eq!(one.rest.to_bits(), merged.rest.to_bits(), "n {n}");
            assert_eq!(one.rest.to_bits(), selected.rest.to_bits(), "n {n}");
            let kept = ids(one);
            assert_eq!(kept, ids(merged), "n {n}");
            assert_eq!(kept, ids(selected), "n {n}");
        }
    }
}
