//! Report types, the Markdown table and the baseline regression gate.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// Aggregated metrics of one group of queries (overall or one tag).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// Queries in the group (including empty-gold ones).
    pub n: usize,
    /// Queries in the group with empty gold (ranking metrics exclude them).
    #[serde(default)]
    pub n_empty_gold: usize,
    pub top1: f64,
    pub r1: f64,
    pub r5: f64,
    pub r10: f64,
    pub mrr: f64,
    pub ndcg10: f64,
    /// Top-ranked == primary, over the queries that name a primary tool.
    pub primary_top1: Option<f64>,
    /// Over empty-gold queries: fraction where the ranker abstained.
    pub abstain_rate: Option<f64>,
    /// Over non-empty-gold queries, when the group also has empty-gold
    /// ones: fraction answered (not abstained).
    pub coverage: Option<f64>,
    pub p50_ms: f64,
    pub p99_ms: f64,
}

impl Metrics {
    /// Queries the ranking metrics are averaged over.
    pub fn n_ranked(&self) -> usize {
        self.n.saturating_sub(self.n_empty_gold)
    }

    /// The gated metrics by name; `None` when not applicable to the group.
    fn gated(&self) -> [(&'static str, Option<f64>); 9] {
        let r = |v: f64| (self.n_ranked() > 0).then_some(v);
        [
            ("top1", r(self.top1)),
            ("r1", r(self.r1)),
            ("r5", r(self.r5)),
            ("r10", r(self.r10)),
            ("mrr", r(self.mrr)),
            ("ndcg10", r(self.ndcg10)),
            ("primary_top1", self.primary_top1),
            ("abstain_rate", self.abstain_rate),
            ("coverage", self.coverage),
        ]
    }

    /// A metric by name (`top1`, `r1`, `r5`, `r10`, `mrr`, `ndcg10`,
    /// `primary_top1`, `abstain_rate`, `coverage`, `p50_ms`, `p99_ms`).
    pub fn get(&self, metric: &str) -> Option<f64> {
        match metric {
            "p50_ms" => Some(self.p50_ms),
            "p99_ms" => Some(self.p99_ms),
            _ => self
                .gated()
                .into_iter()
                .find(|(name, _)| *name == metric)
                .and_then(|(_, v)| v),
        }
    }
}

/// One evaluation run: a dataset, a ranker mode, a setting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub dataset: String,
    pub mode: String,
    /// `global` (whole catalog) or `candidates` (per-query candidate list).
    pub setting: String,
    pub overall: Metrics,
    /// Per query tag (the overall group is `overall`, not repeated here).
    pub per_tag: BTreeMap<String, Metrics>,
}

fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.3}"))
}

fn row(out: &mut String, label: &[&str], m: &Metrics, extra: (bool, bool, bool)) {
    let r = |v: f64| opt((m.n_ranked() > 0).then_some(v));
    let mut cells: Vec<String> = label.iter().map(|s| s.to_string()).collect();
    cells.push(m.n.to_string());
    for v in [m.top1, m.r1, m.r5, m.r10, m.mrr, m.ndcg10] {
        cells.push(r(v));
    }
    let (prim, abst, cov) = extra;
    if prim {
        cells.push(opt(m.primary_top1));
    }
    if abst {
        cells.push(opt(m.abstain_rate));
    }
    if cov {
        cells.push(opt(m.coverage));
    }
    cells.push(format!("{:.2} / {:.2}", m.p50_ms, m.p99_ms));
    let _ = writeln!(out, "| {} |", cells.join(" | "));
}

fn header(out: &mut String, label: &[&str], extra: (bool, bool, bool)) {
    let mut cols: Vec<&str> = label.to_vec();
    cols.extend(["n", "Top-1", "R@1", "R@5", "R@10", "MRR", "nDCG@10"]);
    if extra.0 {
        cols.push("Primary Top-1");
    }
    if extra.1 {
        cols.push("Abstain");
    }
    if extra.2 {
        cols.push("Coverage");
    }
    cols.push("p50 / p99 ms");
    let _ = writeln!(out, "| {} |", cols.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(cols.len()));
}

/// Which optional columns any of these metrics has.
fn extras<'a>(ms: impl Iterator<Item = &'a Metrics>) -> (bool, bool, bool) {
    ms.fold((false, false, false), |(p, a, c), m| {
        (
            p || m.primary_top1.is_some(),
            a || m.abstain_rate.is_some(),
            c || m.coverage.is_some(),
        )
    })
}

/// Renders the reports as Markdown: one overall table (dataset | setting |
/// mode | ...), then one per-tag table per report.
pub fn to_markdown(reports: &[Report]) -> String {
    let mut out = String::new();
    let ex = extras(reports.iter().map(|r| &r.overall));
    header(&mut out, &["dataset", "setting", "mode"], ex);
    for r in reports {
        row(&mut out, &[&r.dataset, &r.setting, &r.mode], &r.overall, ex);
    }
    for r in reports.iter().filter(|r| !r.per_tag.is_empty()) {
        let _ = writeln!(out, "\n### {} / {} / {}\n", r.dataset, r.setting, r.mode);
        let ex = extras(std::iter::once(&r.overall).chain(r.per_tag.values()));
        header(&mut out, &["tag"], ex);
        row(&mut out, &["ALL"], &r.overall, ex);
        for (tag, m) in &r.per_tag {
            row(&mut out, &[tag], m, ex);
        }
    }
    out
}

/// A metric that dropped by more than the allowed amount.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Regression {
    pub dataset: String,
    pub setting: String,
    /// `ALL` for the overall group.
    pub tag: String,
    /// Metric name, or `missing` when the current run lacks the report.
    pub metric: String,
    pub baseline: f64,
    /// NaN when the metric or report is missing from the current run.
    pub current: f64,
}

/// Compares `current` against `baseline` reports (joined on dataset,
/// setting and mode) and lists every metric of the overall group and of
/// every tag present in both that dropped by more than `max_drop`
/// (absolute). Gated metrics: top1, r1, r5, r10, mrr, ndcg10,
/// abstain_rate, coverage. A baseline report, or a baseline tag, missing
/// from `current` is one regression with metric `missing` (baseline = its
/// Top-1); a metric the baseline has but the current run lacks is a
/// regression with `current = NaN`. Tags only in `current` are ignored.
pub fn compare_to_baseline(
    current: &[Report],
    baseline: &[Report],
    max_drop: f64,
) -> Vec<Regression> {
    let mut out = Vec::new();
    for base in baseline {
        let reg = |tag: &str, metric: &str, b: f64, c: f64| Regression {
            dataset: base.dataset.clone(),
            setting: base.setting.clone(),
            tag: tag.to_string(),
            metric: metric.to_string(),
            baseline: b,
            current: c,
        };
        let Some(cur) = current.iter().find(|c| {
            c.dataset == base.dataset && c.setting == base.setting && c.mode == base.mode
        }) else {
            out.push(reg("ALL", "missing", base.overall.top1, f64::NAN));
            continue;
        };
        for (tag, b) in &base.per_tag {
            if !cur.per_tag.contains_key(tag) {
                out.push(reg(tag, "missing", b.top1, f64::NAN));
            }
        }
        let groups = std::iter::once(("ALL", &base.overall, &cur.overall)).chain(
            base.per_tag
                .iter()
                .filter_map(|(t, b)| cur.per_tag.get(t).map(|c| (t.as_str(), b, c))),
        );
        for (tag, b, c) in groups {
            for ((name, bv), (_, cv)) in b.gated().into_iter().zip(c.gated()) {
                let Some(bv) = bv else { continue };
                match cv {
                    // tolerance for float noise in stored baselines
                    Some(cv) if bv - cv <= max_drop + 1e-12 => {}
                    Some(cv) => out.push(reg(tag, name, bv, cv)),
                    None => out.push(reg(tag, name, bv, f64::NAN)),
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metrics(top1: f64) -> Metrics {
        Metrics {
            n: 10,
            n_empty_gold: 0,
            top1,
            r1: 0.5,
            r5: 0.7,
            r10: 0.8,
            mrr: 0.6,
            ndcg10: 0.65,
            primary_top1: None,
            abstain_rate: None,
            coverage: None,
            p50_ms: 1.0,
            p99_ms: 2.0,
        }
    }

    fn report(mode: &str, top1: f64, tags: &[(&str, f64)]) -> Report {
        Report {
            dataset: "d".into(),
            mode: mode.into(),
            setting: "global".into(),
            overall: metrics(top1),
            per_tag: tags
                .iter()
                .map(|(t, v)| (t.to_string(), metrics(*v)))
                .collect(),
        }
    }

    #[test]
    fn baseline_gate_thresholds() {
        let base = [report("bm25", 0.500, &[("a", 0.5), ("b", 0.5)])];
        // overall top1 0.500 -> 0.479 drops 0.021 (flagged), tag a
        // 0.500 -> 0.481 drops 0.019 (not), tag b missing from current
        // (flagged), tag c only in current (ignored)
        let cur = [report("bm25", 0.479, &[("a", 0.481), ("c", 0.0)])];
        let regs = compare_to_baseline(&cur, &base, 0.02);
        assert_eq!(regs.len(), 2, "{regs:?}");
        let got: Vec<(&str, &str)> = regs
            .iter()
            .map(|r| (r.tag.as_str(), r.metric.as_str()))
            .collect();
        assert!(got.contains(&("ALL", "top1")) && got.contains(&("b", "missing")));
        let top = regs.iter().find(|r| r.metric == "top1").unwrap();
        assert!((top.current - 0.479).abs() < 1e-12 && top.baseline == 0.5);
        // a drop of exactly 0.02 passes; improvements pass
        let cur = [report("bm25", 0.48, &[("a", 0.9), ("b", 0.5)])];
        assert!(compare_to_baseline(&cur, &base, 0.02).is_empty());
    }

    #[test]
    fn baseline_gate_missing() {
        let base = [report("bm25", 0.5, &[])];
        // different mode: the baseline report is missing from current
        let regs = compare_to_baseline(&[report("hybrid", 0.9, &[])], &base, 0.02);
        assert_eq!(regs.len(), 1);
        assert_eq!(regs[0].metric, "missing");
        // an optional metric present in the baseline but gone now
        let mut b = report("bm25", 0.5, &[("t", 0.5)]);
        b.per_tag.get_mut("t").unwrap().coverage = Some(0.9);
        let regs = compare_to_baseline(&[report("bm25", 0.5, &[("t", 0.5)])], &[b], 0.02);
        assert_eq!(regs.len(), 1);
        assert_eq!(
            (regs[0].tag.as_str(), regs[0].metric.as_str()),
            ("t", "coverage")
        );
        assert!(regs[0].current.is_nan());
    }

    #[test]
    fn markdown_has_rows_and_tags() {
        let mut r = report("bm25", 0.25, &[("multi", 0.5)]);
        r.overall.abstain_rate = Some(0.75);
        let md = to_markdown(&[r]);
        assert!(
            md.contains("| dataset | setting | mode | n | Top-1 |"),
            "{md}"
        );
        assert!(
            md.contains("| d | global | bm25 | 10 | 0.250 | 0.500 |"),
            "{md}"
        );
        assert!(md.contains("Abstain"), "{md}");
        assert!(md.contains("| multi | 10 | 0.500 |"), "{md}");
        assert!(md.contains("| ALL | 10 | 0.250 |"), "{md}");
        assert!(md.contains("1.00 / 2.00"), "{md}");
    }

    #[test]
    fn report_round_trips_json() {
        let r = report("bm25", 0.25, &[("multi", 0.5)]);
        let s = serde_json::to_string(&r).unwrap();
        let back: Report = serde_json::from_str(&s).unwrap();
        assert_eq!(back, r);
        assert_eq!(r.overall.get("ndcg10"), Some(0.65));
        assert_eq!(r.overall.get("coverage"), None);
        assert_eq!(r.overall.get("nope"), None);
    }
}
