//! Dot products of one int8 query with many int8 rows (the inner loop of
//! the quick vector pass), and its sums over many rows of sign bits (the
//! first pass over a large catalog). Portable code, and on x86-64 CPUs
//! with AVX-512 VNNI (detected at run time) kernels that do 64
//! multiply-adds per instruction. Both are exact integer arithmetic, so
//! they give the same numbers.

/// Integer dot product of two code rows (exact: |sum| < 2^31 for any
/// length below 2^17 with codes in −127..=127).
pub(super) fn dot(a: &[i8], b: &[i8]) -> i32 {
    let mut acc = [0i32; 16];
    let (ac, bc) = (a.chunks_exact(16), b.chunks_exact(16));
    let tail: i32 = ac
        .remainder()
        .iter()
        .zip(bc.remainder())
        .map(|(&x, &y)| i32::from(x) * i32::from(y))
        .sum();
    for (x, y) in ac.zip(bc) {
        for i in 0..16 {
            acc[i] += i32::from(i16::from(x[i]) * i16::from(y[i]));
        }
    }
    acc.iter().sum::<i32>() + tail
}

/// `out[i] = dot(row i, query) · query_scale · scale i` for the rows and
/// scales `rows` yields (`query.len()` codes each; an empty row scores 0).
/// Codes must lie in −127..=127, as [`super::index`] makes them.
pub(super) fn scaled_dots<'r>(
    rows: impl Iterator<Item = (&'r [i8], f32)>,
    query: &[i8],
    query_scale: f32,
    out: &mut [f32],
) {
    #[cfg(target_arch = "x86_64")]
    if vnni::usable(query.len()) {
        #[allow(unsafe_code)]
        // SAFETY: `usable` checked at run time that this CPU has every
        // feature the kernel is compiled with (AVX-512 F, BW and VNNI).
        unsafe {
            vnni::scaled_dots(rows, query, query_scale, out)
        };
        return;
    }
    portable(rows, query, query_scale, out);
}

/// `out[i]` = the sum of `query`'s codes at the set bits of row `i` of
/// `bits` (row-major, `query.len().div_ceil(64)` words per row; dimension
/// `j` is bit `j % 64` of word `j / 64`). Exact: |sum| ≤ 127·dim.
pub(super) fn masked_sums(bits: &[u64], query: &[i8], out: &mut [i32]) {
    #[cfg(target_arch = "x86_64")]
    if vnni::usable(query.len()) {
        #[allow(unsafe_code)]
        // SAFETY: as in `scaled_dots`.
        unsafe {
            vnni::masked_sums(bits, query, out)
        };
        return;
    }
    portable_masked_sums(bits, query, out);
}

/// [`masked_sums`] with one table per byte of a row: the 256 sums of the
/// query's eight codes under each bit pattern.
fn portable_masked_sums(bits: &[u64], query: &[i8], out: &mut [i32]) {
    let words = query.len().div_ceil(64);
    if words == 0 {
        out.fill(0);
        return;
    }
    let mut tables = vec![0i32; words * 8 * 256];
    for (group, table) in tables.chunks_exact_mut(256).enumerate() {
        let codes = query.get(group * 8..).unwrap_or_default();
        for (pattern, sum) in table.iter_mut().enumerate() {
            *sum = codes
                .iter()
                .take(8)
                .enumerate()
                .filter(|(bit, _)| pattern >> bit & 1 == 1)
                .map(|(_, &c)| i32::from(c))
                .sum();
        }
    }
    for (row, out) in bits.chunks_exact(words).zip(out) {
        let mut sum = 0;
        for (word, tables) in row.iter().zip(tables.chunks_exact(8 * 256)) {
            for (byte, table) in word.to_le_bytes().iter().zip(tables.chunks_exact(256)) {
                sum += table[usize::from(*byte)];
            }
        }
        *out = sum;
    }
}

fn portable<'r>(
    rows: impl Iterator<Item = (&'r [i8], f32)>,
    query: &[i8],
    query_scale: f32,
    out: &mut [f32],
) {
    for ((row, scale), out) in rows.zip(out) {
        *out = dot(row, query) as f32 * query_scale * scale;
    }
}

#[cfg(target_arch = "x86_64")]
mod vnni {
    use std::arch::x86_64::{
        __m128i, __m512i, _mm_add_epi32, _mm256_add_epi32, _mm256_castsi256_si128,
        _mm256_extracti128_si256, _mm512_add_epi32, _mm512_castsi512_si256, _mm512_dpbusd_epi32,
        _mm512_extracti64x4_epi64, _mm512_maskz_mov_epi8, _mm512_reduce_add_epi32,
        _mm512_set1_epi8, _mm512_setzero_si512, _mm512_unpackhi_epi32, _mm512_unpackhi_epi64,
        _mm512_unpacklo_epi32, _mm512_unpacklo_epi64, _mm512_xor_si512,
    };

    /// Bytes per register.
    const LANES: usize = 64;

    /// True when the kernel can run here on rows of `dim` codes (below
    /// 2^16 of them, where its sums cannot overflow).
    pub(super) fn usable(dim: usize) -> bool {
        dim > 0
            && dim < 1 << 16
            && dim.is_multiple_of(LANES)
            && std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vnni")
    }

    /// 64 codes as one register (a plain copy, no pointer arithmetic).
    #[target_feature(enable = "avx512f")]
    fn load(codes: &[i8]) -> __m512i {
        let mut bytes = [0i8; LANES];
        bytes.copy_from_slice(&codes[..LANES]);
        bytemuck::cast(bytes)
    }

    /// [`super::scaled_dots`] with `vpdpbusd`, which multiplies unsigned
    /// by signed bytes: each row code `x` is read as the unsigned `x + 128`
    /// (its sign bit flipped), so a row's sum is `x·q + 128·Σq`, and the
    /// query's part is taken off again. No overflow: |x·q| ≤ 127²·dim and
    /// 128·|Σq| ≤ 128·127·dim, far below 2^31 for dim < 2^16.
    /// An empty row sums to 0 (its offset is not taken off).
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub(super) fn scaled_dots<'r>(
        rows: impl Iterator<Item = (&'r [i8], f32)>,
        query: &[i8],
        query_scale: f32,
        out: &mut [f32],
    ) {
        let q: Vec<__m512i> = query.chunks_exact(LANES).map(|c| load(c)).collect();
        let offset = 128 * query.iter().map(|&c| i32::from(c)).sum::<i32>();
        let flip = _mm512_set1_epi8(i8::MIN);
        for ((row, scale), out) in rows.zip(out) {
            if row.len() != query.len() {
                *out = 0.0;
                continue;
            }
            let mut acc = _mm512_setzero_si512();
            for (x, q) in row.chunks_exact(LANES).zip(&q) {
                acc = _mm512_dpbusd_epi32(acc, _mm512_xor_si512(load(x), flip), *q);
            }
            let dot = _mm512_reduce_add_epi32(acc) - offset;
            *out = dot as f32 * query_scale * scale;
        }
    }

    /// The sums of four registers' lanes, in one register.
    #[target_feature(enable = "avx512f")]
    fn sum4(a: __m512i, b: __m512i, c: __m512i, d: __m512i) -> __m128i {
        // Per 128-bit block: [a0+a2, b0+b2, a1+a3, b1+b3], the same for c, d.
        let ab = _mm512_add_epi32(_mm512_unpacklo_epi32(a, b), _mm512_unpackhi_epi32(a, b));
        let cd = _mm512_add_epi32(_mm512_unpacklo_epi32(c, d), _mm512_unpackhi_epi32(c, d));
        // Per block: [a, b, c, d] of that block.
        let abcd = _mm512_add_epi32(_mm512_unpacklo_epi64(ab, cd), _mm512_unpackhi_epi64(ab, cd));
        let half = _mm256_add_epi32(
            _mm512_castsi512_si256(abcd),
            _mm512_extracti64x4_epi64::<1>(abcd),
        );
        _mm_add_epi32(
            _mm256_castsi256_si128(half),
            _mm256_extracti128_si256::<1>(half),
        )
    }

    /// [`super::masked_sums`]: each word of a row picks a 0/1 byte per
    /// code (`vpmovm2b`-style masked move), multiplied into the query.
    /// Four rows at a time: four independent chains of multiply-adds, and
    /// one reduction for the four.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub(super) fn masked_sums(bits: &[u64], query: &[i8], out: &mut [i32]) {
        let q: Vec<__m512i> = query.chunks_exact(LANES).map(|c| load(c)).collect();
        let words = q.len();
        let ones = _mm512_set1_epi8(1);
        let mut fours = bits.chunks_exact(4 * words);
        let mut outs = out.chunks_exact_mut(4);
        for (rows, out) in (&mut fours).zip(&mut outs) {
            let (a, rest) = rows.split_at(words);
            let (b, rest) = rest.split_at(words);
            let (c, d) = rest.split_at(words);
            let mut acc = [_mm512_setzero_si512(); 4];
            for (j, q) in q.iter().enumerate() {
                for (acc, row) in acc.iter_mut().zip([a, b, c, d]) {
                    *acc = _mm512_dpbusd_epi32(*acc, _mm512_maskz_mov_epi8(row[j], ones), *q);
                }
            }
            let sums: [i32; 4] = bytemuck::cast(sum4(acc[0], acc[1], acc[2], acc[3]));
            out.copy_from_slice(&sums);
        }
        for (row, out) in fours
            .remainder()
            .chunks_exact(words)
            .zip(outs.into_remainder())
        {
            let mut acc = _mm512_setzero_si512();
            for (&word, q) in row.iter().zip(&q) {
                acc = _mm512_dpbusd_epi32(acc, _mm512_maskz_mov_epi8(word, ones), *q);
            }
            *out = _mm512_reduce_add_epi32(acc);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(n: usize, seed: &mut u64) -> Vec<i8> {
        (0..n)
            .map(|_| {
                *seed = seed
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                ((*seed >> 56) as i8).max(-127)
            })
            .collect()
    }

    fn naive(a: &[i8], b: &[i8]) -> i32 {
        a.iter()
            .zip(b)
            .map(|(&x, &y)| i32::from(x) * i32::from(y))
            .sum()
    }

    #[test]
    fn dot_is_exact_integer_arithmetic() {
        let a: Vec<i8> = (0..37).map(|i| (i * 7 % 255 - 127) as i8).collect();
        let b: Vec<i8> = (0..37).map(|i| (127 - i * 5 % 255) as i8).collect();
        assert_eq!(dot(&a, &b), naive(&a, &b));
        assert_eq!(dot(&[127; 384], &[-127; 384]), -127 * 127 * 384);
    }

    #[test]
    fn every_kernel_gives_the_exact_scaled_dot_products() {
        let mut seed = 5;
        // 384 and 64 take the wide kernel where the CPU has it; 40 never does.
        for dim in [384, 64, 40] {
            let rows = 37;
            let mut all = codes(rows * dim, &mut seed);
            // The extremes, on both sides.
            all[..dim].fill(127);
            all[dim..2 * dim].fill(-127);
            let mut query = codes(dim, &mut seed);
            query[0] = -127;
            query[1] = 127;
            let scales: Vec<f32> = (0..rows).map(|i| 0.5 + i as f32 / 64.0).collect();
            let want: Vec<f32> = all
                .chunks_exact(dim)
                .zip(&scales)
                .map(|(row, s)| naive(row, &query) as f32 * 0.25 * s)
                .collect();
            let rows_of = || all.chunks_exact(dim).zip(scales.iter().copied());
            let mut got = vec![f32::NAN; rows];
            scaled_dots(rows_of(), &query, 0.25, &mut got);
            assert_eq!(got, want, "dim {dim}");
            let mut slow = vec![f32::NAN; rows];
            portable(rows_of(), &query, 0.25, &mut slow);
            assert_eq!(slow, want, "dim {dim}, portable");
            // Rows picked out of order, and an empty one.
            let picked = [5, 0, 36];
            let mut got = [f32::NAN; 4];
            let rows = picked
                .iter()
                .map(|&r| (&all[r * dim..(r + 1) * dim], scales[r]))
                .chain([(&[][..], 1.0)]);
            scaled_dots(rows, &query, 0.25, &mut got);
            assert_eq!(got, [want[5], want[0], want[36], 0.0], "dim {dim}, picked");
        }
    }

    #[test]
    fn every_kernel_gives_the_exact_masked_sums() {
        let mut seed = 9;
        // 384 and 64 take the wide kernel where the CPU has it; 40 and 70
        // never do (70: a second, partial word per row).
        for dim in [384usize, 64, 40, 70] {
            let words = dim.div_ceil(64);
            let rows = 29;
            let mut query = codes(dim, &mut seed);
            query[0] = -127;
            query[dim - 1] = 127;
            let mut bits: Vec<u64> = (0..rows * words)
                .map(|_| {
                    seed = seed
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1_442_695_040_888_963_407);
                    seed
                })
                .collect();
            // No bit and every bit of the row.
            bits[..words].fill(0);
            bits[words..2 * words].fill(u64::MAX);
            let want: Vec<i32> = bits
                .chunks_exact(words)
                .map(|row| {
                    (0..dim)
                        .filter(|&j| row[j / 64] >> (j % 64) & 1 == 1)
                        .map(|j| i32::from(query[j]))
                        .sum()
                })
                .collect();
            assert_eq!(want[0], 0);
            let mut got = vec![i32::MIN; rows];
            masked_sums(&bits, &query, &mut got);
            assert_eq!(got, want, "dim {dim}");
            let mut slow = vec![i32::MIN; rows];
            portable_masked_sums(&bits, &query, &mut slow);
            assert_eq!(slow, want, "dim {dim}, portable");
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_wide_kernel_is_used_only_where_it_fits() {
        assert!(!vnni::usable(40));
        assert!(!vnni::usable(0));
        assert!(!vnni::usable(1 << 16), "sums could overflow");
        let cpu = std::arch::is_x86_feature_detected!("avx512vnni")
            && std::arch::is_x86_feature_detected!("avx512bw");
        assert_eq!(vnni::usable(384), cpu);
    }
}
