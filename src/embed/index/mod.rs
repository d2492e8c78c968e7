//! Brute-force vector search: exact over half-precision rows, a quick pass over
//! int8 codes of the same rows with a proven error bound (what a request
//! scans first, so exact dot products are computed only where they can
//! change a ranking), and over a large catalog a first pass over one sign
//! bit per dimension that picks the rows worth the int8 pass.

use std::cmp::Ordering;

use half::f16;
use half::slice::HalfFloatSliceExt;
use rayon::prelude::*;

use super::packed::Packed;
use super::{dot, int8, normalize};
use rotate::Rotation;

mod rotate;
mod signs;

/// Rows per parallel chunk of the int8 pass; below two chunks it runs on
/// the calling thread.
const PAR_ROWS: usize = 16_384;

/// From this many scattered rows on, [`VectorIndex::approx_rows`] uses two
/// threads.
const SPLIT_ROWS: usize = 1_024;

/// Dimensions widened to `f32` at a time for an exact score.
const WIDEN: usize = 128;

/// Top-k over contiguous row-major rows. Rows are L2-normalised when
/// added, then kept at half precision (IEEE binary16: 2 bytes a dimension,
/// half of `f32`'s; a unit row's cosine moves by less than 3e-4 with it,
/// far below what separates two tools, and every score here, exact or
/// approximate, is of the rows as kept). Every row also has int8 codes
/// (symmetric, one scale per row) for the quick pass (`approx_scores_with`).
#[derive(Debug, Clone, Default)]
pub struct VectorIndex {
    dim: usize,
    ids: Packed,
    data: Vec<f16>,
    /// Row numbers hashed by their ids (not a copy of each id).
    rows: hashbrown::HashTable<u32>,
    codes: Vec<i8>,
    /// Per row: `x ≈ scale * code`.
    scales: Vec<f32>,
    /// The largest L2 norm of a row's rounding error `r − scale·code`.
    max_residual: f32,
    /// Per row, [`Self::words`] words: bit `j % 64` of word `j / 64` is
    /// set when dimension `j` of the row as rotated is positive.
    signs: Vec<u64>,
    /// The sign words of every `signs::SAMPLE_EVERY`-th row again,
    /// contiguous: what the sign pass sums first to find its threshold
    /// (read in place, those rows cost a cache miss each).
    sampled: Vec<u64>,
    /// What rows and queries go through before their signs are taken.
    rotation: Rotation,
}

/// A query's int8 codes and what they need to score rows.
#[derive(Debug, Clone)]
pub(crate) struct QueryCodes {
    codes: Vec<i8>,
    scale: f32,
    /// No exact dot product is further than this from its approximation.
    pub error: f32,
    /// The int8 codes of the query as rotated, for the sign pass.
    rotated: Vec<i8>,
}

/// Approximate dot products of one query with every row.
#[derive(Debug, Clone, Default)]
pub(crate) struct Approx {
    /// One per row, in row order.
    pub scores: Vec<f32>,
    /// No exact dot product is further than this from its approximation.
    pub error: f32,
}

fn id_hash(id: &str) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(id)
}

/// Symmetric int8 codes of `v` and their scale (`v ≈ scale * code`).
fn quantize(v: &[f32]) -> (Vec<i8>, f32) {
    let max = v
        .iter()
        .map(|x| x.abs())
        .filter(|x| x.is_finite())
        .fold(0.0f32, f32::max);
    if max == 0.0 {
        return (vec![0; v.len()], 0.0);
    }
    let scale = max / 127.0;
    let codes = v
        .iter()
        .map(|&x| {
            let c = if x.is_finite() {
                (x / scale).round()
            } else {
                0.0
            };
            c.clamp(-127.0, 127.0) as i8
        })
        .collect();
    (codes, scale)
}

/// L2 norm of `v − scale·codes`.
fn residual(v: &[f32], codes: &[i8], scale: f32) -> f32 {
    v.iter()
        .zip(codes)
        .map(|(&x, &c)| {
            let e = x - scale * f32::from(c);
            e * e
        })
        .sum::<f32>()
        .sqrt()
}

impl VectorIndex {
    /// An empty index of `dim`-long vectors.
    #[cfg(test)]
    pub(crate) fn new(dim: usize) -> Self {
        Self::with_capacity(dim, 0)
    }

    /// An empty index of `dim`-long vectors with room for `rows` rows
    /// (grown a push at a time, a million rows held up to twice their
    /// bytes and were copied on every doubling).
    pub(crate) fn with_capacity(dim: usize, rows: usize) -> Self {
        let words = dim.div_ceil(64);
        Self {
            dim,
            ids: Packed::with_capacity(rows),
            data: Vec::with_capacity(rows.saturating_mul(dim)),
            rows: hashbrown::HashTable::with_capacity(rows),
            codes: Vec::with_capacity(rows.saturating_mul(dim)),
            scales: Vec::with_capacity(rows),
            max_residual: 0.0,
            signs: Vec::with_capacity(rows.saturating_mul(words)),
            sampled: Vec::with_capacity((rows / signs::SAMPLE_EVERY + 1).saturating_mul(words)),
            rotation: Rotation::new(dim),
        }
    }

    /// Adds a row (normalised on the way in). Returns `false`, and changes
    /// nothing, when the length is wrong or the id is already present.
    pub(crate) fn push(&mut self, id: &str, vector: &[f32]) -> bool {
        if vector.len() != self.dim || self.row_of(id).is_some() {
            return false;
        }
        let mut row = vector.to_vec();
        normalize(&mut row);
        let half: Vec<f16> = row.iter().map(|&x| f16::from_f32(x)).collect();
        // The row as kept: everything below is computed from it.
        half.convert_to_f32_slice(&mut row);
        let (codes, scale) = quantize(&row);
        let signs: Vec<u64> = self
            .rotation
            .apply(&row)
            .chunks(64)
            .map(|word| {
                word.iter()
                    .enumerate()
                    .filter(|(_, x)| **x > 0.0)
                    .fold(0u64, |bits, (j, _)| bits | 1 << j)
            })
            .collect();
        let residual = residual(&row, &codes, scale);
        self.append(id, &half, &codes, scale, &signs, residual)
    }

    /// Appends a row as kept (its half-precision values, int8 codes and
    /// scale, sign words, and the norm of its int8 rounding error);
    /// `false`, and nothing changes, when the ids are full (4 GiB).
    fn append(
        &mut self,
        id: &str,
        half: &[f16],
        codes: &[i8],
        scale: f32,
        signs: &[u64],
        residual: f32,
    ) -> bool {
        // (Fewer than 2^32 rows: 6 TB of vectors.)
        let row = u32::try_from(self.ids.len()).unwrap_or(u32::MAX);
        if !self.ids.push(id) {
            return false;
        }
        self.max_residual = self.max_residual.max(residual);
        self.data.extend_from_slice(half);
        self.codes.extend_from_slice(codes);
        self.scales.push(scale);
        self.signs.extend_from_slice(signs);
        if (row as usize).is_multiple_of(signs::SAMPLE_EVERY) {
            self.sampled.extend_from_slice(signs);
        }
        let ids = &self.ids;
        self.rows.insert_unique(id_hash(id), row, |&r| {
            id_hash(ids.get(r as usize).unwrap_or_default())
        });
        true
    }

    /// Adds row `row` of `other` as it is kept there (no second rounding,
    /// no quantising again). Returns `false`, and changes nothing, when the
    /// dims differ, the row does not exist or the id is already present.
    pub(crate) fn push_copy(&mut self, id: &str, other: &VectorIndex, row: usize) -> bool {
        if other.dim != self.dim || self.row_of(id).is_some() {
            return false;
        }
        let words = self.words();
        let codes = row
            .checked_mul(self.dim)
            .and_then(|at| other.codes.get(at..at.checked_add(self.dim)?));
        let signs = row
            .checked_mul(words)
            .and_then(|at| other.signs.get(at..at.checked_add(words)?));
        let (Some(half), Some(codes), Some(&scale), Some(signs)) =
            (other.half_row(row), codes, other.scales.get(row), signs)
        else {
            return false;
        };
        let mut widened = vec![0.0; half.len()];
        half.convert_to_f32_slice(&mut widened);
        let residual = residual(&widened, codes, scale);
        self.append(id, half, codes, scale, signs, residual)
    }

    /// Every value of every row, row-major, in [`Self::ids`] order.
    pub(crate) fn values(&self) -> impl ExactSizeIterator<Item = f32> + '_ {
        self.data.iter().map(|x| x.to_f32())
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
    pub fn ids(&self) -> &Packed {
        &self.ids
    }

    /// The stored (normalised) vector of `id`.
    pub fn get(&self, id: &str) -> Option<Vec<f32>> {
        self.row(self.row_of(id)?)
    }

    /// The row of `id`.
    pub(crate) fn row_of(&self, id: &str) -> Option<usize> {
        let ids = &self.ids;
        self.rows
            .find(id_hash(id), |&r| ids.get(r as usize) == Some(id))
            .map(|&r| r as usize)
    }

    /// Row `row`, widened to `f32`.
    pub(crate) fn row(&self, row: usize) -> Option<Vec<f32>> {
        let half = self.half_row(row)?;
        let mut out = vec![0.0; half.len()];
        half.convert_to_f32_slice(&mut out);
        Some(out)
    }

    fn half_row(&self, row: usize) -> Option<&[f16]> {
        let start = row.checked_mul(self.dim)?;
        self.data.get(start..start.checked_add(self.dim)?)
    }

    /// Dot product of a half-precision row with `query` (of the same
    /// length), widened a block at a time.
    fn dot_half(half: &[f16], query: &[f32]) -> f32 {
        let mut block = [0.0f32; WIDEN];
        half.chunks(WIDEN)
            .zip(query.chunks(WIDEN))
            .map(|(h, q)| {
                let widened = &mut block[..h.len()];
                h.convert_to_f32_slice(widened);
                dot(widened, q)
            })
            .sum()
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
            .map(|row| Self::dot_half(row, query))
            .collect()
    }

    /// Dot product of `query` with row `row` (0 past the end or for a query
    /// of the wrong length).
    pub(crate) fn score(&self, query: &[f32], row: usize) -> f32 {
        match self.half_row(row) {
            Some(r) if query.len() == self.dim => Self::dot_half(r, query),
            _ => 0.0,
        }
    }

    /// Sign words per row.
    fn words(&self) -> usize {
        self.dim.div_ceil(64)
    }

    /// The int8 codes of `query` and the error bound of scores made with
    /// them: with `r = sr·r̂ + er` and `q = sq·q̂ + eq`,
    /// `q·r − sq·sr·q̂·r̂ = q·er + sr·r̂·eq`, so by Cauchy–Schwarz the error
    /// is at most `‖q‖·‖er‖ + ‖eq‖·(1 + ‖er‖)` for unit rows, taken with the
    /// largest `‖er‖` of the index (plus a margin for float rounding).
    /// `None` when the query has the wrong length or is not finite.
    pub(crate) fn query_codes(&self, query: &[f32]) -> Option<QueryCodes> {
        let mut codes = self.unrotated_codes(query)?;
        codes.rotated = quantize(&self.rotation.apply(query)).0;
        Some(codes)
    }

    /// [`Self::query_codes`] without the rotated codes, for the scan over
    /// every row, which takes no signs.
    fn unrotated_codes(&self, query: &[f32]) -> Option<QueryCodes> {
        if query.len() != self.dim || self.dim == 0 || query.iter().any(|x| !x.is_finite()) {
            return None;
        }
        let (codes, scale) = quantize(query);
        let norm = query.iter().map(|x| x * x).sum::<f32>().sqrt();
        let eq = residual(query, &codes, scale);
        let error = (norm * self.max_residual + eq * (1.0 + self.max_residual)) * 1.01 + 1e-4;
        Some(QueryCodes {
            codes,
            scale,
            error,
            rotated: Vec::new(),
        })
    }

    /// The int8 approximations of the query's dot products with `rows`
    /// (each within `query.error` of the exact one; 0 past the end), in
    /// the same order.
    pub(crate) fn approx_rows(&self, query: &QueryCodes, rows: &[usize]) -> Vec<f32> {
        let mut out = vec![0.0; rows.len()];
        let score = |rows: &[usize], out: &mut [f32]| {
            let codes = rows.iter().map(|&row| {
                let start = row.saturating_mul(self.dim);
                (
                    self.codes
                        .get(start..start.saturating_add(self.dim))
                        .unwrap_or_default(),
                    self.scales.get(row).copied().unwrap_or(0.0),
                )
            });
            int8::scaled_dots(codes, &query.codes, query.scale, out);
        };
        // Rows scattered over the codes: each waits on memory, so two
        // threads wait at once.
        if rows.len() >= SPLIT_ROWS {
            let (rows_a, rows_b) = rows.split_at(rows.len() / 2);
            let (out_a, out_b) = out.split_at_mut(rows.len() / 2);
            crate::par::join(|| score(rows_a, out_a), || score(rows_b, out_b));
        } else {
            score(rows, &mut out);
        }
        out
    }

    /// [`Self::approx_scores_with`] without a visit.
    #[cfg(test)]
    pub(crate) fn approx_scores(&self, query: &[f32]) -> Option<Approx> {
        self.approx_scores_with(query, |_, _, _| ())
            .map(|(approx, _)| approx)
    }

    /// Approximate dot products of `query` with every row, from the int8
    /// codes, and a bound on their error (see [`Self::query_codes`]).
    /// `None` when the query has the wrong length or is not finite.
    /// `visit(first row, its scores, error)` runs
    /// on each chunk of rows as soon as it is scored, on the thread that
    /// scored it (while the scores are in its cache); the visits' answers
    /// come back in row order.
    pub(crate) fn approx_scores_with<T: Send>(
        &self,
        query: &[f32],
        visit: impl Fn(usize, &[f32], f32) -> T + Sync,
    ) -> Option<(Approx, Vec<T>)> {
        let QueryCodes {
            codes: q,
            scale: sq,
            error,
            ..
        } = self.unrotated_codes(query)?;
        let mut scores = vec![0.0f32; self.len()];
        let fill = |(chunk, out): (usize, &mut [f32])| {
            let first = chunk * PAR_ROWS;
            let rows = first..first + out.len();
            let codes = self
                .codes
                .get(rows.start * self.dim..rows.end * self.dim)
                .unwrap_or_default();
            let scales = self.scales.get(rows).unwrap_or_default();
            let rows = codes.chunks_exact(self.dim).zip(scales.iter().copied());
            int8::scaled_dots(rows, &q, sq, out);
            visit(first, out, error)
        };
        let visits = if self.len() >= 2 * PAR_ROWS {
            scores
                .par_chunks_mut(PAR_ROWS)
                .enumerate()
                .map(fill)
                .collect()
        } else {
            vec![fill((0, &mut scores))]
        };
        Some((Approx { scores, error }, visits))
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
mod tests;
