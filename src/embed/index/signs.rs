//! The first pass over a large index: one sign bit per dimension of each
//! row as rotated, summed under the rotated query's int8 codes.

use super::{PAR_ROWS, QueryCodes, VectorIndex};
use crate::embed::int8;
use std::sync::atomic::{AtomicUsize, Ordering};

/// One row in this many is summed first, to find a sum that about
/// [`MARGIN`] times the rows asked for reach.
pub(super) const SAMPLE_EVERY: usize = 64;

/// How many more rows than asked for the sampled threshold aims to let
/// through (so that it rarely lets through fewer than asked for: then
/// every row's sum is counted per bucket instead).
const MARGIN: f64 = 1.5;

impl VectorIndex {
    /// The `keep` rows that `accept` lets through (`None`: every row) with
    /// the highest sums of the rotated query's codes under their rotated
    /// positive dimensions (i.e. of `Rq·sign(Rr)`, `R` the fixed rotation of
    /// `rotate.rs`), ties to the lower row, in no particular order. Cheap
    /// (one bit per dimension, an eighth of the int8 pass's bytes) and
    /// approximate: nothing bounds how far `Rq·sign(Rr)` is from `q·r`. The
    /// perf bench measures how often the best rows by `q·r` are missed.
    ///
    /// On a large index one row in [`SAMPLE_EVERY`] is summed first; the
    /// sum that [`MARGIN`] times `keep / SAMPLE_EVERY` of them reach is a
    /// threshold every row's sum is compared with as it is computed (a
    /// chunk at a time, in cache). When at least `keep` rows reach it, every
    /// row at or above the `keep`-th best sum is among them, so the `keep`
    /// best of them are the answer. At a million rows the pass took 5 ms
    /// per query counting every sum per bucket and reading all sums again
    /// to pick (a 4 MB array); comparing as they are computed needs
    /// neither.
    pub(crate) fn sign_candidates(
        &self,
        query: &QueryCodes,
        keep: usize,
        accept: Option<impl Fn(usize) -> bool + Sync>,
    ) -> Vec<usize> {
        if keep == 0 || self.words() == 0 || self.is_empty() {
            return Vec::new();
        }
        let sampled = self.len() >= 2 * PAR_ROWS && self.len() / SAMPLE_EVERY >= keep;
        if sampled && let Some(threshold) = self.sampled_threshold(query, keep, accept.as_ref()) {
            let mut reached = self.reaching(query, threshold, accept.as_ref());
            if reached.len() >= keep {
                reached.select_nth_unstable_by(keep - 1, |a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
                reached.truncate(keep);
                return reached.into_iter().map(|(_, row)| row).collect();
            }
        }
        self.by_histogram(query, keep, accept.as_ref())
    }

    /// The sum that about [`MARGIN`] times `keep` rows reach, estimated
    /// from every [`SAMPLE_EVERY`]-th accepted row (their contiguous copy,
    /// `VectorIndex::sampled`: read in place, 15.6k rows of a million took
    /// 0.22 ms, a cache miss each); `None` when too few are sampled.
    fn sampled_threshold(
        &self,
        query: &QueryCodes,
        keep: usize,
        accept: Option<&(impl Fn(usize) -> bool + Sync)>,
    ) -> Option<i32> {
        let mut sums = vec![0i32; self.sampled.len() / self.words()];
        int8::masked_sums(&self.sampled, &query.rotated, &mut sums);
        if let Some(accept) = accept {
            let mut at = 0;
            sums.retain(|_| {
                at += SAMPLE_EVERY;
                accept(at - SAMPLE_EVERY)
            });
        }
        // The rank among the sampled whose sum is the threshold.
        let rank = (keep as f64 * MARGIN / SAMPLE_EVERY as f64).ceil() as usize;
        if rank >= sums.len() {
            return None;
        }
        let (_, &mut at, _) = sums.select_nth_unstable_by(rank, |a, b| b.cmp(a));
        Some(at)
    }

    /// Every accepted row whose sum reaches `threshold`, with its sum; the
    /// rows a chunk at a time, on two threads.
    fn reaching(
        &self,
        query: &QueryCodes,
        threshold: i32,
        accept: Option<&(impl Fn(usize) -> bool + Sync)>,
    ) -> Vec<(i32, usize)> {
        let words = self.words();
        // Chunks go to whichever thread asks next: the helper may start
        // late or share its core (with the request parsed beside this
        // pass), and a fixed half would leave this thread waiting.
        let chunks = self.len().div_ceil(PAR_ROWS);
        let next = AtomicUsize::new(0);
        let pass = || {
            let mut sums = vec![0i32; PAR_ROWS];
            let mut found: Vec<(i32, usize)> = Vec::new();
            loop {
                let chunk = next.fetch_add(1, Ordering::Relaxed);
                if chunk >= chunks {
                    break found;
                }
                let start = chunk * PAR_ROWS;
                let end = (start + PAR_ROWS).min(self.len());
                let Some(bits) = self.signs.get(start * words..end * words) else {
                    continue;
                };
                let sums = &mut sums[..end - start];
                int8::masked_sums(bits, &query.rotated, sums);
                for (row, &sum) in (start..).zip(sums.iter()) {
                    if sum >= threshold && accept.is_none_or(|a| a(row)) {
                        found.push((sum, row));
                    }
                }
            }
        };
        let (mut a, b) = crate::par::join(pass, pass);
        a.extend(b);
        a
    }

    /// Where the sign pass splits the rows between two threads: about half,
    /// at a chunk boundary.
    fn half_rows(&self) -> usize {
        self.len().div_ceil(PAR_ROWS) / 2 * PAR_ROWS
    }

    /// [`Self::sign_candidates`] by counting every row's sum per bucket.
    ///
    /// The sums are small integers: each thread counts its sums per
    /// bucket, the merged counts give the bucket the `keep`-th best falls
    /// in, and only that bucket is sorted.
    fn by_histogram(
        &self,
        query: &QueryCodes,
        keep: usize,
        accept: Option<&(impl Fn(usize) -> bool + Sync)>,
    ) -> Vec<usize> {
        let words = self.words();
        // Every sum lies in −reach..=reach; buckets of 2^shift sums, fewer
        // than BUCKETS of them.
        const BUCKETS: usize = 4096;
        let reach: i32 = query.rotated.iter().map(|&c| i32::from(c).abs()).sum();
        let span = 2 * reach as usize;
        let shift = (0..32).find(|&s| span >> s < BUCKETS).unwrap_or(31);
        let bucket = |sum: i32| ((sum + reach) as usize >> shift) & (BUCKETS - 1);
        let mut sums = vec![i32::MIN; self.len()];
        // One thread's rows from `first` on, a chunk at a time (its sums
        // are still in cache when they are counted): its counts per bucket.
        // Every other row goes to a second set of counts, so that rows in
        // the same bucket (most of them are in a few) do not wait on each
        // other's increment.
        let count = |first: usize, bits: &[u64], sums: &mut [i32]| {
            let mut counts = vec![0u32; 2 * BUCKETS];
            let (even, odd) = counts.split_at_mut(BUCKETS);
            let parts = bits.chunks(PAR_ROWS * words).zip(sums.chunks_mut(PAR_ROWS));
            for (i, (bits, sums)) in parts.enumerate() {
                int8::masked_sums(bits, &query.rotated, sums);
                match &accept {
                    None => {
                        let mut pairs = sums.chunks_exact(2);
                        for pair in &mut pairs {
                            even[bucket(pair[0])] += 1;
                            odd[bucket(pair[1])] += 1;
                        }
                        for &sum in pairs.remainder() {
                            even[bucket(sum)] += 1;
                        }
                    }
                    Some(accept) => {
                        for (row, sum) in (first + i * PAR_ROWS..).zip(sums.iter_mut()) {
                            if accept(row) {
                                let counts = if row % 2 == 0 { &mut *even } else { &mut *odd };
                                counts[bucket(*sum)] += 1;
                            } else {
                                *sum = i32::MIN;
                            }
                        }
                    }
                }
            }
            let (even, odd) = counts.split_at(BUCKETS);
            even.iter()
                .zip(odd)
                .map(|(a, b)| a + b)
                .collect::<Vec<u32>>()
        };
        // Two halves at chunk boundaries (rayon's idle workers were measured
        // not to join this pass in time: every chunk ran on one worker).
        let counts: Vec<Vec<u32>> = if self.len() >= 2 * PAR_ROWS {
            let half = self.half_rows();
            let (sums_a, sums_b) = sums.split_at_mut(half);
            let (bits_a, bits_b) = self.signs.split_at(half * words);
            let (a, b) =
                crate::par::join(|| count(0, bits_a, sums_a), || count(half, bits_b, sums_b));
            vec![a, b]
        } else {
            vec![count(0, &self.signs, &mut sums)]
        };
        // The bucket of the `keep`-th best sum (0: every accepted row),
        // as the sums it holds: `low..high`.
        let mut edge = 0;
        let mut above = 0usize;
        for b in (0..BUCKETS).rev() {
            let here: usize = counts.iter().map(|c| c[b] as usize).sum();
            if above + here >= keep {
                edge = b;
                break;
            }
            above += here;
        }
        let low = ((edge << shift) as i64 - i64::from(reach)).max(i64::from(i32::MIN) + 1);
        let high = ((edge + 1) << shift) as i64 - i64::from(reach);
        let (low, high) = (low as i32, high.min(i64::from(i32::MAX)) as i32);
        let (mut picked, mut at_edge) = (Vec::with_capacity(keep), Vec::new());
        for (row, &sum) in sums.iter().enumerate() {
            if sum >= high {
                picked.push(row);
            } else if sum >= low {
                at_edge.push((sum, row));
            }
        }
        at_edge.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let room = keep.saturating_sub(picked.len());
        picked.extend(at_edge.into_iter().take(room).map(|(_, row)| row));
        picked
    }
}
