//! Per-query ranking metrics, their aggregation and latency percentiles.

use std::collections::HashSet;

use super::{EvalOptions, EvalQuery, Ranked};
use crate::eval::report::Metrics;

/// The metrics of one query (see the module docs of [`crate::eval`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct QueryScore {
    /// Gold is empty: the query only counts toward `abstain_rate`.
    pub empty_gold: bool,
    pub abstained: bool,
    pub top1: f64,
    pub r1: f64,
    pub r5: f64,
    pub r10: f64,
    pub mrr: f64,
    pub ndcg10: f64,
    /// `Some(hit)` when the query names a primary tool.
    pub primary_top1: Option<f64>,
    pub ms: f64,
}

/// The key an id is compared by: the id itself, or with `match_by_name`
/// the tool name (the part before `#`).
fn key<'a>(id: &'a str, opts: &EvalOptions) -> &'a str {
    if opts.match_by_name {
        id.split_once('#').map_or(id, |(name, _)| name)
    } else {
        id
    }
}

/// Scores one ranked answer against the query's gold.
pub(crate) fn score_query(q: &EvalQuery, r: &Ranked, opts: &EvalOptions, ms: f64) -> QueryScore {
    let gold: HashSet<&str> = q.gold.iter().map(|g| key(g, opts)).collect();
    let primary_top1 = q.primary.as_deref().map(|p| {
        let hit = r
            .ids
            .first()
            .is_some_and(|top| key(top, opts) == key(p, opts));
        f64::from(u8::from(hit))
    });
    let mut s = QueryScore {
        empty_gold: gold.is_empty(),
        abstained: r.abstain,
        primary_top1,
        ms,
        ..QueryScore::default()
    };
    if gold.is_empty() {
        return s;
    }
    // The shown list: the first k_max ids (at least 10), as keys, each key
    // once (with match_by_name, variants of one name collapse into one
    // entry), so a gold item is never relevant twice.
    let mut shown: HashSet<&str> = HashSet::new();
    let rel: Vec<bool> = r
        .ids
        .iter()
        .take(opts.k_max.max(10))
        .map(|id| key(id, opts))
        .filter(|k| shown.insert(k))
        .map(|k| gold.contains(k))
        .collect();
    let g = gold.len() as f64;
    let hits_at = |k: usize| rel.iter().take(k).filter(|&&h| h).count() as f64;
    s.top1 = f64::from(u8::from(rel.first().copied().unwrap_or(false)));
    s.r1 = hits_at(1) / g;
    s.r5 = hits_at(5) / g;
    s.r10 = hits_at(10) / g;
    s.mrr = rel
        .iter()
        .position(|&h| h)
        .map_or(0.0, |p| 1.0 / (p as f64 + 1.0));
    let gain = |i: usize| 1.0 / (i as f64 + 2.0).log2();
    let dcg: f64 = rel
        .iter()
        .take(10)
        .enumerate()
        .filter(|(_, h)| **h)
        .map(|(i, _)| gain(i))
        .sum();
    let idcg: f64 = (0..gold.len().min(10)).map(gain).sum();
    s.ndcg10 = if idcg > 0.0 { dcg / idcg } else { 0.0 };
    s
}

/// Nearest-rank percentile (`p` in 0..=100) of unsorted values; 0 if empty.
pub(crate) fn percentile(values: &[f64], p: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
    let idx = rank.clamp(1, v.len()) - 1;
    v.get(idx).copied().unwrap_or(0.0)
}

/// Averages per-query scores into [`Metrics`].
pub(crate) fn aggregate(scores: &[&QueryScore]) -> Metrics {
    let ranked: Vec<&&QueryScore> = scores.iter().filter(|s| !s.empty_gold).collect();
    let empty = scores.len() - ranked.len();
    let mean = |f: &dyn Fn(&QueryScore) -> f64| {
        if ranked.is_empty() {
            0.0
        } else {
            ranked.iter().map(|s| f(s)).sum::<f64>() / ranked.len() as f64
        }
    };
    let prim: Vec<f64> = ranked.iter().filter_map(|s| s.primary_top1).collect();
    let frac = |n: usize, d: usize| n as f64 / d as f64;
    let ms: Vec<f64> = scores.iter().map(|s| s.ms).collect();
    Metrics {
        n: scores.len(),
        n_empty_gold: empty,
        top1: mean(&|s| s.top1),
        r1: mean(&|s| s.r1),
        r5: mean(&|s| s.r5),
        r10: mean(&|s| s.r10),
        mrr: mean(&|s| s.mrr),
        ndcg10: mean(&|s| s.ndcg10),
        primary_top1: (!prim.is_empty()).then(|| prim.iter().sum::<f64>() / prim.len() as f64),
        abstain_rate: (empty > 0).then(|| {
            frac(
                scores
                    .iter()
                    .filter(|s| s.empty_gold && s.abstained)
                    .count(),
                empty,
            )
        }),
        coverage: (empty > 0 && !ranked.is_empty())
            .then(|| frac(ranked.iter().filter(|s| !s.abstained).count(), ranked.len())),
        p50_ms: percentile(&ms, 50.0),
        p99_ms: percentile(&ms, 99.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(gold: &[&str]) -> EvalQuery {
        EvalQuery {
            id: "q".into(),
            query: "x".into(),
            gold: gold.iter().map(|s| s.to_string()).collect(),
            tags: vec![],
            candidates: None,
            primary: None,
            context: None,
            needs_tool: None,
        }
    }
    fn ranked(ids: &[&str], abstain: bool) -> Ranked {
        Ranked {
            ids: ids.iter().map(|s| s.to_string()).collect(),
            abstain,
        }
    }
    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }
    const OPTS: EvalOptions = EvalOptions {
        match_by_name: false,
        k_max: 10,
    };

    #[test]
    fn single_gold_hit_at_rank_3() {
        // gold {a}, ranking [x, y, a]: Top1 0, R@1 0, R@5 1, MRR 1/3,
        // nDCG = (1/log2(4)) / (1/log2(2)) = 0.5
        let s = score_query(&q(&["a"]), &ranked(&["x", "y", "a"], false), &OPTS, 0.0);
        assert_eq!((s.top1, s.r1, s.r5, s.r10), (0.0, 0.0, 1.0, 1.0));
        assert!(close(s.mrr, 1.0 / 3.0));
        assert!(close(s.ndcg10, 0.5));
        // single gold at rank 1: everything 1
        let s = score_query(&q(&["a"]), &ranked(&["a", "x"], false), &OPTS, 0.0);
        assert_eq!((s.top1, s.r1, s.mrr, s.ndcg10), (1.0, 1.0, 1.0, 1.0));
    }

    #[test]
    fn multi_gold_ndcg() {
        // gold {a,b}, ranking [a,x,b]: DCG = 1 + 1/log2(4) = 1.5,
        // IDCG = 1 + 1/log2(3) = 1.6309..., nDCG = 0.91972...
        let s = score_query(
            &q(&["a", "b"]),
            &ranked(&["a", "x", "b"], false),
            &OPTS,
            0.0,
        );
        let want = 1.5 / (1.0 + 1.0 / 3f64.log2());
        assert!(close(s.ndcg10, want));
        assert!((s.ndcg10 - 0.9197).abs() < 1e-4);
        // R@1 = 1/2, R@5 = 2/2, Top1 = 1, MRR = 1
        assert_eq!((s.r1, s.r5, s.top1, s.mrr), (0.5, 1.0, 1.0, 1.0));
    }

    #[test]
    fn recall_with_three_gold() {
        // gold {a,b,c}; ranking: x1 a x2 x3 x4 | b x5 x6 x7 x8 | c
        // R@1 = 0/3, R@5 = 1/3, R@10 = 2/3 (c is at rank 11), MRR = 1/2
        let ids = [
            "x1", "a", "x2", "x3", "x4", "b", "x5", "x6", "x7", "x8", "c",
        ];
        let s = score_query(&q(&["a", "b", "c"]), &ranked(&ids, false), &OPTS, 0.0);
        assert!(close(s.r1, 0.0) && close(s.r5, 1.0 / 3.0) && close(s.r10, 2.0 / 3.0));
        assert!(close(s.mrr, 0.5));
        // nDCG: a at rank 2, b at rank 6:
        // DCG = 1/log2(3) + 1/log2(7) = 0.63093 + 0.35621 = 0.98714,
        // IDCG = 1 + 1/log2(3) + 1/log2(4) = 1 + 0.63093 + 0.5 = 2.13093
        // nDCG = 0.46325
        let dcg = 1.0 / 3f64.log2() + 1.0 / 7f64.log2();
        let idcg = 1.0 + 1.0 / 3f64.log2() + 0.5;
        assert!(close(s.ndcg10, dcg / idcg));
        assert!((s.ndcg10 - 0.46325).abs() < 1e-5);
        // a gold repeated in the ranking counts once: [a, a] with gold {a,b}
        let s = score_query(&q(&["a", "b"]), &ranked(&["a", "a"], false), &OPTS, 0.0);
        assert_eq!(s.r5, 0.5);
        // no hit at all: MRR 0
        let s = score_query(&q(&["a"]), &ranked(&[], false), &OPTS, 0.0);
        assert_eq!((s.top1, s.mrr, s.ndcg10), (0.0, 0.0, 0.0));
    }

    #[test]
    fn match_by_name_ignores_variant_suffix() {
        let opts = EvalOptions {
            match_by_name: true,
            k_max: 10,
        };
        // gold f#1, ranking [f#2, f#1, g#1]: by name f is hit at rank 1;
        // the second f variant is not relevant again. R@1 = 1, nDCG = 1.
        let r = ranked(&["f#2", "f#1", "g#1"], false);
        let s = score_query(&q(&["f#1"]), &r, &opts, 0.0);
        assert_eq!((s.top1, s.r1, s.ndcg10), (1.0, 1.0, 1.0));
        // gold {f#1, g#1}: by name the list collapses to [f, g], so g is at
        // rank 2: DCG = 1 + 1/log2(3) = IDCG -> nDCG = 1 (without the
        // collapse g would sit at rank 3: 1.5 / 1.6309 = 0.9197)
        let s = score_query(&q(&["f#1", "g#1"]), &r, &opts, 0.0);
        assert!(close(s.ndcg10, 1.0) && close(s.r5, 1.0));
        // the collapse happens after cutting the list at k_max (10): a gold
        // name at position 11 stays out even when variants above collapse
        let mut ids: Vec<String> = (0..10).map(|i| format!("x#{i}")).collect();
        ids.push("f#1".into());
        let r11 = Ranked {
            ids,
            abstain: false,
        };
        let s = score_query(&q(&["f#1"]), &r11, &opts, 0.0);
        assert_eq!(s.r10, 0.0);
        // by id: first hit at rank 2 -> Top1 0, MRR 0.5
        let s = score_query(&q(&["f#1"]), &r, &OPTS, 0.0);
        assert_eq!((s.top1, s.mrr), (0.0, 0.5));
        // two gold variants of one name are one gold name: gold {f#1, f#3}
        let s = score_query(&q(&["f#1", "f#3"]), &r, &opts, 0.0);
        assert_eq!(s.r1, 1.0);
    }

    #[test]
    fn abstention_and_coverage() {
        // 2 empty-gold queries (one abstained = correct), 2 gold queries
        // (one abstained): abstain_rate = 1/2, coverage = 1/2; ranking
        // metrics over the 2 gold queries only: Top1 = (1 + 0)/2.
        let a = score_query(&q(&[]), &ranked(&[], true), &OPTS, 1.0);
        let b = score_query(&q(&[]), &ranked(&["x"], false), &OPTS, 2.0);
        let c = score_query(&q(&["g"]), &ranked(&["g"], false), &OPTS, 3.0);
        let d = score_query(&q(&["g"]), &ranked(&["y"], true), &OPTS, 4.0);
        let m = aggregate(&[&a, &b, &c, &d]);
        assert_eq!((m.n, m.n_empty_gold), (4, 2));
        assert_eq!(m.abstain_rate, Some(0.5));
        assert_eq!(m.coverage, Some(0.5));
        assert_eq!(m.top1, 0.5);
        // no empty gold: neither field present
        let m = aggregate(&[&c, &d]);
        assert_eq!((m.abstain_rate, m.coverage), (None, None));
        // only empty gold: abstain_rate, no coverage, ranking metrics 0
        let m = aggregate(&[&a]);
        assert_eq!((m.abstain_rate, m.coverage, m.top1), (Some(1.0), None, 0.0));
    }

    #[test]
    fn primary_top1() {
        let mut with = q(&["a", "b"]);
        with.primary = Some("b".into());
        let hit = score_query(&with, &ranked(&["b", "a"], false), &OPTS, 0.0);
        let miss = score_query(&with, &ranked(&["a", "b"], false), &OPTS, 0.0);
        let none = score_query(&q(&["a"]), &ranked(&["a"], false), &OPTS, 0.0);
        // over the 2 queries with a primary: (1 + 0) / 2
        assert_eq!(aggregate(&[&hit, &miss, &none]).primary_top1, Some(0.5));
        assert_eq!(aggregate(&[&none]).primary_top1, None);
    }

    #[test]
    fn percentiles_nearest_rank() {
        // 1..=100 ms: p50 = 50th value = 50, p99 = 99th = 99
        let v: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), 50.0);
        assert_eq!(percentile(&v, 99.0), 99.0);
        assert_eq!(percentile(&v, 100.0), 100.0);
        // [5, 1, 3]: p50 -> rank ceil(1.5) = 2 -> 3; p99 -> rank 3 -> 5
        assert_eq!(percentile(&[5.0, 1.0, 3.0], 50.0), 3.0);
        assert_eq!(percentile(&[5.0, 1.0, 3.0], 99.0), 5.0);
        assert_eq!(percentile(&[], 50.0), 0.0);
        assert_eq!(percentile(&[7.0], 0.0), 7.0);
    }
}
