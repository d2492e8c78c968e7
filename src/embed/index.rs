//! Exact brute-force vector search.

use std::cmp::Ordering;
use std::collections::HashMap;

use super::{dot, normalize};

/// Exact top-k over contiguous row-major `f32` rows. Rows are L2-normalised
/// when added, so a dot product with a unit query is the cosine.
#[derive(Debug, Clone, Default)]
pub struct VectorIndex {
    dim: usize,
    ids: Vec<String>,
    data: Vec<f32>,
    rows: HashMap<String, usize>,
}

impl VectorIndex {
    /// An empty index of `dim`-long vectors.
    pub(crate) fn new(dim: usize) -> Self {
        Self {
            dim,
            ..Self::default()
        }
    }

    /// Adds a row (normalised on the way in). Returns `false`, and changes
    /// nothing, when the length is wrong or the id is already present.
    pub(crate) fn push(&mut self, id: &str, vector: &[f32]) -> bool {
        if vector.len() != self.dim || self.rows.contains_key(id) {
            return false;
        }
        let start = self.data.len();
        self.data.extend_from_slice(vector);
        if let Some(row) = self.data.get_mut(start..) {
            normalize(row);
        }
        self.rows.insert(id.to_string(), self.ids.len());
        self.ids.push(id.to_string());
        true
    }

    /// The rows, row-major, in [`Self::ids`] order.
    pub(crate) fn data(&self) -> &[f32] {
        &self.data
    }

    /// Length of each vector.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// True when the index holds no rows.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Tool ids, in row order.
    pub fn ids(&self) -> &[String] {
        &self.ids
    }

    /// The stored (normalised) vector of `id`.
    pub fn get(&self, id: &str) -> Option<&[f32]> {
        let row = *self.rows.get(id)?;
        self.row(row)
    }

    pub(crate) fn row(&self, row: usize) -> Option<&[f32]> {
        let start = row.checked_mul(self.dim)?;
        self.data.get(start..start.checked_add(self.dim)?)
    }

    /// Dot product of `query` with every row, in [`Self::ids`] order. Empty
    /// when the query has the wrong length.
    pub fn scores(&self, query: &[f32]) -> Vec<f32> {
        if query.len() != self.dim || self.dim == 0 {
            return if self.dim == 0 && query.is_empty() {
                vec![0.0; self.len()]
            } else {
                Vec::new()
            };
        }
        self.data
            .chunks_exact(self.dim)
            .map(|row| dot(row, query))
            .collect()
    }

    /// The `k` best rows for `query` (dot product, i.e. cosine for a unit
    /// query), best first, ties broken by ascending id. `allow` filters ids
    /// before ranking. Empty when the query has the wrong length.
    pub fn top_k(
        &self,
        query: &[f32],
        k: usize,
        allow: Option<&dyn Fn(&str) -> bool>,
    ) -> Vec<(String, f32)> {
        if k == 0 {
            return Vec::new();
        }
        let scores = self.scores(query);
        let mut hits: Vec<(&str, f32)> = self
            .ids
            .iter()
            .zip(scores)
            .filter(|(id, _)| allow.is_none_or(|f| f(id)))
            .map(|(id, s)| (id.as_str(), s))
            .collect();
        let order = |a: &(&str, f32), b: &(&str, f32)| -> Ordering {
            b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0))
        };
        if hits.len() > k {
            hits.select_nth_unstable_by(k - 1, order);
            hits.truncate(k);
        }
        hits.sort_unstable_by(order);
        hits.into_iter()
            .map(|(id, s)| (id.to_string(), s))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(seed: &mut u64) -> f32 {
        *seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((*seed >> 33) as f32 / (1u64 << 31) as f32) - 0.5
    }

    fn random_index(n: usize, dim: usize, seed: &mut u64) -> VectorIndex {
        let mut idx = VectorIndex::new(dim);
        for i in 0..n {
            let v: Vec<f32> = (0..dim).map(|_| lcg(seed)).collect();
            assert!(idx.push(&format!("tool{i:04}"), &v));
        }
        idx
    }

    fn naive(idx: &VectorIndex, q: &[f32], k: usize) -> Vec<(String, f32)> {
        let mut all: Vec<(String, f32)> = idx
            .ids()
            .iter()
            .map(|id| {
                let s: f32 = idx.get(id).unwrap().iter().zip(q).map(|(a, b)| a * b).sum();
                (id.clone(), s)
            })
            .collect();
        all.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap().then(a.0.cmp(&b.0)));
        all.truncate(k);
        all
    }

    #[test]
    fn top_k_matches_naive_sort() {
        let mut seed = 7;
        let idx = random_index(500, 24, &mut seed);
        for k in [1, 5, 50, 499, 500, 800] {
            let q: Vec<f32> = (0..24).map(|_| lcg(&mut seed)).collect();
            let got = idx.top_k(&q, k, None);
            let want = naive(&idx, &q, k);
            assert_eq!(got.len(), want.len());
            for (g, w) in got.iter().zip(&want) {
                assert_eq!(g.0, w.0);
                assert!((g.1 - w.1).abs() < 1e-5);
            }
        }
    }

    #[test]
    fn rows_are_normalised_and_scores_follow_ids_order() {
        let mut idx = VectorIndex::new(2);
        assert!(idx.push("a", &[3.0, 4.0]));
        assert!(idx.push("b", &[0.0, 2.0]));
        assert!(!idx.push("a", &[1.0, 0.0]), "duplicate id rejected");
        assert!(!idx.push("c", &[1.0]), "wrong length rejected");
        assert_eq!(idx.len(), 2);
        assert_eq!(idx.get("a").unwrap(), &[0.6, 0.8]);
        assert_eq!(idx.scores(&[0.0, 1.0]), vec![0.8, 1.0]);
        assert!(idx.get("zzz").is_none());
    }

    #[test]
    fn filter_and_ties() {
        let mut idx = VectorIndex::new(2);
        for id in ["d", "b", "c", "a"] {
            idx.push(id, &[1.0, 0.0]);
        }
        idx.push("e", &[0.0, 1.0]);
        let got = idx.top_k(&[1.0, 0.0], 3, None);
        let ids: Vec<&str> = got.iter().map(|(i, _)| i.as_str()).collect();
        assert_eq!(ids, ["a", "b", "c"], "equal scores ordered by id");

        let allow = |id: &str| id != "a" && id != "c";
        let got = idx.top_k(&[1.0, 0.0], 10, Some(&allow));
        let ids: Vec<&str> = got.iter().map(|(i, _)| i.as_str()).collect();
        assert_eq!(ids, ["b", "d", "e"]);
    }

    #[test]
    fn degenerate_queries_do_not_panic() {
        let mut seed = 1;
        let idx = random_index(10, 8, &mut seed);
        assert!(idx.top_k(&[1.0; 3], 5, None).is_empty(), "wrong dim");
        assert!(idx.top_k(&[1.0; 8], 0, None).is_empty());
        let nan = idx.top_k(&[f32::NAN; 8], 3, None);
        assert_eq!(nan.len(), 3);
        let empty = VectorIndex::new(8);
        assert!(empty.top_k(&[1.0; 8], 3, None).is_empty());
        assert!(empty.is_empty());
    }
}
