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
            (id.to_string(), s)
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
fn int8_scores_stay_within_their_error_bound() {
    let mut seed = 11;
    // Sizes on both sides of the parallel threshold.
    for (n, dim) in [(300, 384), (2 * PAR_ROWS + 5, 16)] {
        let idx = random_index(n, dim, &mut seed);
        for _ in 0..5 {
            let mut q: Vec<f32> = (0..dim).map(|_| lcg(&mut seed)).collect();
            normalize(&mut q);
            let approx = idx.approx_scores(&q).unwrap();
            assert_eq!(approx.scores.len(), n);
            assert!(
                approx.error > 0.0 && approx.error < 0.05,
                "{}",
                approx.error
            );
            let exact = idx.scores(&q);
            let worst = exact
                .iter()
                .zip(&approx.scores)
                .map(|(e, a)| (e - a).abs())
                .fold(0.0f32, f32::max);
            assert!(worst <= approx.error, "{worst} > {}", approx.error);
            for row in [0, n / 2, n - 1] {
                assert_eq!(idx.score(&q, row), exact[row]);
            }
        }
    }
    assert!(idx_of_zeros().approx_scores(&[0.0; 4]).unwrap().scores == [0.0]);
    let idx = random_index(3, 8, &mut seed);
    assert!(idx.approx_scores(&[1.0; 3]).is_none());
    assert!(idx.approx_scores(&[f32::NAN; 8]).is_none());
}

#[test]
fn each_chunk_is_visited_once_in_row_order_with_its_scores() {
    let mut seed = 13;
    for n in [100, 2 * PAR_ROWS + 5] {
        let idx = random_index(n, 8, &mut seed);
        let mut q: Vec<f32> = (0..8).map(|_| lcg(&mut seed)).collect();
        normalize(&mut q);
        let (approx, visits) = idx
            .approx_scores_with(&q, |first, scores, error| (first, scores.to_vec(), error))
            .unwrap();
        let mut next = 0;
        for (first, scores, error) in &visits {
            assert_eq!(*first, next, "chunks in row order, none skipped");
            assert_eq!(scores[..], approx.scores[next..next + scores.len()]);
            assert_eq!(*error, approx.error);
            next += scores.len();
        }
        assert_eq!(next, n);
        assert_eq!(visits.len(), if n > PAR_ROWS { 3 } else { 1 });
    }
}

/// The first pass keeps exactly the best rows by `Rq·sign(Rr)` among
/// those accepted, whatever the chunking or the way it finds them (a
/// sampled threshold or a count per bucket), ties to the lower row; its
/// int8 score of a row is the full pass's.
#[test]
fn sign_candidates_are_the_best_accepted_rows_by_signed_sum() {
    let mut seed = 17;
    for (n, dim) in [
        (300, 384),
        (2 * PAR_ROWS + 5, 64),
        (500, 70),
        (2 * PAR_ROWS + 9, 384),
    ] {
        let idx = random_index(n, dim, &mut seed);
        let mut q: Vec<f32> = (0..dim).map(|_| lcg(&mut seed)).collect();
        normalize(&mut q);
        let codes = idx.query_codes(&q).unwrap();
        let sums: Vec<i32> = (0..n)
            .map(|row| {
                // Signs of the row as kept, rotated; the query's codes as
                // rotated.
                let r = idx.rotation.apply(&idx.row(row).unwrap());
                (0..dim)
                    .filter(|&j| r[j] > 0.0)
                    .map(|j| i32::from(codes.rotated[j]))
                    .sum()
            })
            .collect();
        let accept = |row: usize| row % 3 != 1;
        // (Up to a 64th of a large index: a sampled threshold first.)
        for (keep, filter) in [0, 1, 17, n / 100, n / 2, n]
            .into_iter()
            .flat_map(|k| [(k, true), (k, false)])
        {
            let mut want: Vec<usize> = (0..n).filter(|&r| !filter || accept(r)).collect();
            want.sort_by(|&a, &b| sums[b].cmp(&sums[a]).then(a.cmp(&b)));
            want.truncate(keep);
            want.sort_unstable();
            let mut got = idx.sign_candidates(&codes, keep, filter.then_some(accept));
            got.sort_unstable();
            assert_eq!(got, want, "n {n} dim {dim} keep {keep} filter {filter}");
        }
        let full = idx.approx_scores(&q).unwrap();
        assert_eq!(full.error, codes.error);
        let rows = [n - 1, 0, n / 3, n];
        let got = idx.approx_rows(&codes, &rows);
        assert_eq!(
            got[..3],
            [full.scores[n - 1], full.scores[0], full.scores[n / 3]]
        );
        assert_eq!(got[3], 0.0, "past the end");
        // Enough rows for two threads (on the large index).
        let many: Vec<usize> = (0..n).rev().step_by(7).collect();
        let want: Vec<f32> = many.iter().map(|&r| full.scores[r]).collect();
        assert_eq!(idx.approx_rows(&codes, &many), want, "n {n}");
    }
}

/// A row copied from another index is the row kept there: the same
/// exact and approximate scores, nothing rounded twice.
#[test]
fn copied_rows_score_as_in_their_index() {
    let mut seed = 19;
    let from = random_index(300, 70, &mut seed);
    let mut to = VectorIndex::new(70);
    for row in (0..300).rev() {
        assert!(to.push_copy(from.ids().get(row).unwrap(), &from, row));
    }
    assert!(!to.push_copy("tool0000", &from, 0), "id already present");
    assert!(!to.push_copy("new", &from, 300), "no such row");
    assert!(!VectorIndex::new(8).push_copy("x", &from, 0), "other dim");
    let mut q: Vec<f32> = (0..70).map(|_| lcg(&mut seed)).collect();
    normalize(&mut q);
    let (a, b) = (
        from.approx_scores(&q).unwrap(),
        to.approx_scores(&q).unwrap(),
    );
    assert_eq!(a.error, b.error);
    for row in 0..300 {
        let id = from.ids().get(row).unwrap();
        assert_eq!(to.get(id), from.get(id));
        assert_eq!(to.score(&q, 299 - row), from.score(&q, row));
        assert_eq!(b.scores[299 - row], a.scores[row]);
    }
    // Pushing the kept row again keeps it as it is (binary16 is exact
    // in f32 and a unit row normalises to itself within rounding).
    let mut again = VectorIndex::new(70);
    let kept = from.get("tool0007").unwrap();
    again.push("tool0007", &kept);
    assert_eq!(again.get("tool0007").unwrap(), kept);
}

/// Thousands of rows with the same signs: a threshold every one of them
/// reaches still keeps the lowest rows among equal sums.
#[test]
fn ties_at_a_sampled_threshold_go_to_the_lower_rows() {
    let mut idx = VectorIndex::new(64);
    let mut seed = 23;
    let base: Vec<f32> = (0..64).map(|_| lcg(&mut seed)).collect();
    for i in 0..3 * PAR_ROWS {
        // Every third row the same vector, the others scaled negatives.
        let v: Vec<f32> = if i % 3 == 0 {
            base.clone()
        } else {
            base.iter().map(|x| -x * (1.0 + i as f32)).collect()
        };
        idx.push(&format!("t{i}"), &v);
    }
    let codes = idx.query_codes(&base).unwrap();
    for accept in [None, Some(|row: usize| row.is_multiple_of(2))] {
        let mut got = idx.sign_candidates(&codes, 300, accept);
        got.sort_unstable();
        let step = if accept.is_some() { 6 } else { 3 };
        let want: Vec<usize> = (0..300).map(|i| i * step).collect();
        assert_eq!(got, want);
    }
}

#[test]
fn ties_at_the_cut_go_to_the_lower_rows() {
    let mut idx = VectorIndex::new(2);
    for i in 0..50 {
        idx.push(
            &format!("t{i:02}"),
            &[1.0, if i % 2 == 0 { 1.0 } else { -1.0 }],
        );
    }
    let codes = idx.query_codes(&[0.6, 0.8]).unwrap();
    for accept in [None, Some(|_| true)] {
        let mut got = idx.sign_candidates(&codes, 4, accept);
        got.sort_unstable();
        assert_eq!(got, [0, 2, 4, 6], "equal sums: the lowest rows");
    }
}

fn idx_of_zeros() -> VectorIndex {
    let mut idx = VectorIndex::new(4);
    idx.push("zero", &[0.0; 4]);
    idx
}

#[test]
fn rows_are_normalised_and_scores_follow_ids_order() {
    let mut idx = VectorIndex::new(2);
    assert!(idx.push("a", &[3.0, 4.0]));
    assert!(idx.push("b", &[0.0, 2.0]));
    assert!(!idx.push("a", &[1.0, 0.0]), "duplicate id rejected");
    assert!(!idx.push("c", &[1.0]), "wrong length rejected");
    assert_eq!(idx.len(), 2);
    // Kept at half precision: 0.6 and 0.8 are the nearest binary16s.
    assert_eq!(idx.get("a").unwrap(), [0.600_097_66, 0.799_804_7]);
    assert_eq!(idx.scores(&[0.0, 1.0]), vec![0.799_804_7, 1.0]);
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
