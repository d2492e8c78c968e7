//! Dot products of one int8 query with many int8 rows: the inner loop of
//! the quick vector pass. Portable code the compiler vectorises, and on
//! x86-64 CPUs with AVX-512 VNNI (detected at run time) a kernel that does
//! 64 multiply-adds per instruction. Both are exact integer arithmetic, so
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

/// `out[i] = dot(row i, query) · query_scale · scales[i]` for the rows of
/// `codes` (row-major, `query.len()` codes each; one scale and one output
/// per row). Codes must lie in −127..=127, as [`super::index`] makes them.
pub(super) fn scaled_dots(
    codes: &[i8],
    scales: &[f32],
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
            vnni::scaled_dots(codes, scales, query, query_scale, out)
        };
        return;
    }
    portable(codes, scales, query, query_scale, out);
}

fn portable(codes: &[i8], scales: &[f32], query: &[i8], query_scale: f32, out: &mut [f32]) {
    if query.is_empty() {
        out.fill(0.0);
        return;
    }
    for ((row, scale), out) in codes.chunks_exact(query.len()).zip(scales).zip(out) {
        *out = dot(row, query) as f32 * query_scale * scale;
    }
}

#[cfg(target_arch = "x86_64")]
mod vnni {
    use std::arch::x86_64::{
        __m512i, _mm512_dpbusd_epi32, _mm512_reduce_add_epi32, _mm512_set1_epi8,
        _mm512_setzero_si512, _mm512_xor_si512,
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
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub(super) fn scaled_dots(
        codes: &[i8],
        scales: &[f32],
        query: &[i8],
        query_scale: f32,
        out: &mut [f32],
    ) {
        let dim = query.len();
        let q: Vec<__m512i> = query.chunks_exact(LANES).map(|c| load(c)).collect();
        let offset = 128 * query.iter().map(|&c| i32::from(c)).sum::<i32>();
        let flip = _mm512_set1_epi8(i8::MIN);
        for ((row, scale), out) in codes.chunks_exact(dim).zip(scales).zip(out) {
            let mut acc = _mm512_setzero_si512();
            for (x, q) in row.chunks_exact(LANES).zip(&q) {
                acc = _mm512_dpbusd_epi32(acc, _mm512_xor_si512(load(x), flip), *q);
            }
            let dot = _mm512_reduce_add_epi32(acc) - offset;
            *out = dot as f32 * query_scale * scale;
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
            let mut got = vec![f32::NAN; rows];
            scaled_dots(&all, &scales, &query, 0.25, &mut got);
            assert_eq!(got, want, "dim {dim}");
            let mut slow = vec![f32::NAN; rows];
            portable(&all, &scales, &query, 0.25, &mut slow);
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
