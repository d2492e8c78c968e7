//! The accuracy floors a run holds itself to, beside the baseline: joint
//! ranking is never below any single channel or the reference hybrid, the
//! prerequisites (`+deps`) never cost ranking quality, and a conversation's
//! context pays for itself. All on nDCG@10, overall and per tag.

use super::report::{Metrics, Report};
use super::run::RRF_LABEL;

/// One floor a run missed.
#[derive(Debug, Clone, PartialEq)]
pub struct Shortfall {
    pub dataset: String,
    pub setting: String,
    /// `ALL` or a query tag.
    pub tag: String,
    /// What held the floor (`dense`, `rrf`, `joint`, `joint/turn + 0.03`).
    pub against: String,
    pub mode: String,
    pub value: f64,
    pub floor: f64,
}

/// Each group's nDCG@10 (`ALL` and every tag) of a report, over the
/// groups with ranked queries.
fn groups(r: &Report) -> Vec<(&str, f64)> {
    let ranked = |m: &Metrics| m.n_ranked() > 0;
    std::iter::once(("ALL", &r.overall))
        .chain(r.per_tag.iter().map(|(t, m)| (t.as_str(), m)))
        .filter(|(_, m)| ranked(m))
        .map(|(t, m)| (t, m.ndcg10))
        .collect()
}

/// Where `mode`'s report falls below `other`'s (+ `margin`) on the same
/// dataset and setting, group by group.
fn below(reports: &[Report], mode: &str, other: &str, margin: f64, out: &mut Vec<Shortfall>) {
    for r in reports.iter().filter(|r| r.mode == mode) {
        let Some(o) = reports
            .iter()
            .find(|o| o.mode == other && o.dataset == r.dataset && o.setting == r.setting)
        else {
            continue;
        };
        let theirs = groups(o);
        for (tag, value) in groups(r) {
            if let Some(&(_, v)) = theirs.iter().find(|(t, _)| *t == tag)
                && value < v + margin - 1e-12
            {
                out.push(Shortfall {
                    dataset: r.dataset.clone(),
                    setting: r.setting.clone(),
                    tag: tag.to_string(),
                    against: if margin >= 0.0 {
                        format!("{other} + {margin}")
                    } else {
                        format!("{other} - {}", -margin)
                    },
                    mode: r.mode.clone(),
                    value,
                    floor: v + margin,
                });
            }
        }
    }
}

/// The floors `reports` (one run's) miss, with `tolerance` (0.005):
/// - `joint` ≥ each of `graph`, `dense`, `lexical` and the reference
///   hybrid − tolerance, and `joint+deps` likewise against theirs;
/// - `MODE+deps` ≥ `MODE` − tolerance;
/// - `joint` ≥ `joint/turn` + `context_gain`, overall (the current turn
///   alone), where the run compared them.
pub fn floors(reports: &[Report], tolerance: f64, context_gain: Option<f64>) -> Vec<Shortfall> {
    let mut out = Vec::new();
    for other in ["graph", "dense", "lexical", RRF_LABEL] {
        below(reports, "joint", other, -tolerance, &mut out);
        below(
            reports,
            "joint+deps",
            &format!("{other}+deps"),
            -tolerance,
            &mut out,
        );
    }
    for mode in ["joint", "graph", "dense", "lexical"] {
        below(reports, &format!("{mode}+deps"), mode, -tolerance, &mut out);
    }
    out.extend(context_floor(reports, context_gain));
    out
}

/// `joint` ≥ `joint/turn` + `gain`, overall, where the run compared them.
pub fn context_floor(reports: &[Report], gain: Option<f64>) -> Vec<Shortfall> {
    let Some(gain) = gain else {
        return Vec::new();
    };
    let mut out = Vec::new();
    below(reports, "joint", "joint/turn", gain, &mut out);
    out.retain(|s| s.tag == "ALL");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn report(mode: &str, all: f64, tag: f64) -> Report {
        let m = |v: f64| Metrics {
            n: 10,
            n_empty_gold: 0,
            top1: 0.0,
            r1: 0.0,
            r5: 0.0,
            r10: 0.0,
            mrr: 0.0,
            ndcg10: v,
            primary_top1: None,
            abstain_rate: None,
            coverage: None,
            p50_ms: 0.0,
            p99_ms: 0.0,
        };
        Report {
            dataset: "d".into(),
            mode: mode.into(),
            setting: "global".into(),
            overall: m(all),
            per_tag: BTreeMap::from([("t".to_string(), m(tag))]),
        }
    }

    #[test]
    fn joint_below_a_channel_or_the_hybrid_is_a_shortfall_per_tag() {
        let run = [
            report("joint", 0.80, 0.70),
            report("dense", 0.79, 0.71),
            report("rrf", 0.805, 0.60),
        ];
        let got = floors(&run, 0.005, None);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(
            (got[0].tag.as_str(), got[0].against.as_str()),
            ("t", "dense - 0.005")
        );
        assert!((got[0].floor - 0.705).abs() < 1e-9);
    }

    #[test]
    fn deps_and_context_floors() {
        let run = [
            report("joint", 0.80, 0.80),
            report("joint+deps", 0.79, 0.80),
            report("joint/turn", 0.78, 0.10),
        ];
        let got = floors(&run, 0.005, Some(0.03));
        let what: Vec<(&str, &str)> = got
            .iter()
            .map(|s| (s.mode.as_str(), s.against.as_str()))
            .collect();
        assert_eq!(
            what,
            [
                ("joint+deps", "joint - 0.005"),
                ("joint", "joint/turn + 0.03")
            ]
        );
    }
}
