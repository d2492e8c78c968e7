//! Reproduces the BM25 reference rows of the accuracy datasets
//! (`benches/datasets/*/README.txt`) with `Bm25` + `evaluate`: the proof
//! that tokenisation, BM25 and the metrics match the published baseline.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use toolgraph::eval::{EvalOptions, EvalQuery, Ranked, Report, evaluate, load_queries};
use toolgraph::lexical::{Bm25, tokenize};

/// Allowed absolute difference to the README numbers.
const TOL: f64 = 0.03;

fn dataset_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("benches/datasets")
        .join(name)
}

struct Tool {
    id: String,
    name: String,
    description: String,
}

/// Minimal tools.jsonl reader (id, name, description) for this test only.
fn load_tools(dir: &Path) -> Vec<Tool> {
    std::fs::read_to_string(dir.join("tools.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let s = |k: &str| v[k].as_str().unwrap_or_default().to_string();
            Tool {
                id: s("id"),
                name: s("name"),
                description: s("description"),
            }
        })
        .collect()
}

/// Reference ALL row: Top1, R@1, R@5, R@10, nDCG@10 (README column order
/// is R@1 R@5 R@10 nDCG@10 Top1).
struct Reference {
    setting: &'static str,
    match_by_name: bool,
    r1: f64,
    r5: f64,
    r10: f64,
    ndcg10: f64,
    top1: f64,
}

const fn reference(
    setting: &'static str,
    match_by_name: bool,
    [r1, r5, r10, ndcg10, top1]: [f64; 5],
) -> Reference {
    Reference {
        setting,
        match_by_name,
        r1,
        r5,
        r10,
        ndcg10,
        top1,
    }
}

fn run_dataset(name: &str, refs: &[Reference]) -> Vec<String> {
    let dir = dataset_dir(name);
    let tools = load_tools(&dir);
    let docs: Vec<String> = tools
        .iter()
        .map(|t| format!("{} {}", t.name, t.description))
        .collect();
    let bm = Bm25::new(&docs);
    let index: std::collections::HashMap<&str, usize> = tools
        .iter()
        .enumerate()
        .map(|(i, t)| (t.id.as_str(), i))
        .collect();
    let queries = load_queries(&dir.join("queries.jsonl")).unwrap();
    let ids = |hits: Vec<(usize, f32)>| Ranked {
        ids: hits.into_iter().map(|(d, _)| tools[d].id.clone()).collect(),
        abstain: false,
    };
    let global = |q: &EvalQuery| ids(bm.top_k(&q.query, 10, None));
    let candidates = |q: &EvalQuery| {
        let allowed: HashSet<usize> = q
            .candidates
            .iter()
            .flatten()
            .filter_map(|c| index.get(c.as_str()).copied())
            .collect();
        let allow = |d: usize| allowed.contains(&d);
        ids(bm.top_k(&q.query, 10, Some(&allow)))
    };
    let mut failures = Vec::new();
    for r in refs {
        let opts = EvalOptions {
            match_by_name: r.match_by_name,
            k_max: 10,
        };
        let run: &(dyn Fn(&EvalQuery) -> Ranked + Sync) = if r.setting == "candidates" {
            &candidates
        } else {
            &global
        };
        let started = std::time::Instant::now();
        let report: Report = evaluate(name, "bm25", r.setting, &queries, &opts, run, false);
        let m = &report.overall;
        let label = format!(
            "{name} {}{}",
            r.setting,
            if r.match_by_name { " by-name" } else { "" }
        );
        println!(
            "{label:<34} n={:<5} got  Top1 {:.3} R@1 {:.3} R@5 {:.3} R@10 {:.3} nDCG@10 {:.3}  ({:.1}s)",
            m.n,
            m.top1,
            m.r1,
            m.r5,
            m.r10,
            m.ndcg10,
            started.elapsed().as_secs_f64()
        );
        println!(
            "{:<34} {:<7} ref  Top1 {:.3} R@1 {:.3} R@5 {:.3} R@10 {:.3} nDCG@10 {:.3}",
            "", "", r.top1, r.r1, r.r5, r.r10, r.ndcg10
        );
        for (metric, got, want) in [
            ("Top1", m.top1, r.top1),
            ("R@1", m.r1, r.r1),
            ("R@5", m.r5, r.r5),
            ("R@10", m.r10, r.r10),
            ("nDCG@10", m.ndcg10, r.ndcg10),
        ] {
            if (got - want).abs() > TOL {
                failures.push(format!(
                    "{label} {metric}: got {got:.3}, reference {want:.3}"
                ));
            }
        }
    }
    failures
}

#[test]
fn bm25_reproduces_metatool_reference() {
    let failures = run_dataset(
        "metatool",
        &[
            reference("global", false, [0.377, 0.548, 0.608, 0.490, 0.381]),
            reference("candidates", false, [0.551, 0.817, 1.000, 0.810, 0.691]),
        ],
    );
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn bm25_reproduces_sealtools_reference() {
    let failures = run_dataset(
        "sealtools",
        &[reference(
            "global",
            false,
            [0.418, 0.843, 0.912, 0.866, 0.893],
        )],
    );
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn bm25_reproduces_bfcl_reference() {
    let failures = run_dataset(
        "bfcl_multiple",
        &[
            reference("global", false, [0.242, 0.508, 0.653, 0.450, 0.288]),
            reference("candidates", false, [0.737, 0.996, 1.000, 0.924, 0.818]),
            reference("global", true, [0.517, 0.735, 0.771, 0.676, 0.581]),
        ],
    );
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn tokenize_matches_reference_split_on_dataset_names() {
    // camel/snake/kebab/dot/digit splits as the reference run splits them
    for (name, want) in [
        ("getPostmodernTheory", "get postmodern theory"),
        ("Movies_1_FindMovies", "movies 1 find movies"),
        ("triangle_properties.get", "triangle properties get"),
        ("math.triangle_area_heron", "math triangle area heron"),
        ("PDF&URLTool", "pdf url tool"),
        (
            "Restaurants_2_ReserveRestaurant",
            "restaurants 2 reserve restaurant",
        ),
        ("ResearchHelper", "research helper"),
        (
            "Can I find peer-reviewed papers?",
            "can i find peer reviewed papers",
        ),
    ] {
        assert_eq!(tokenize(name).join(" "), want, "{name}");
    }
}

#[test]
fn every_dataset_ships_license_and_readme() {
    for name in ["metatool", "sealtools", "bfcl_multiple"] {
        let dir = dataset_dir(name);
        for f in ["LICENSE.txt", "README.txt", "tools.jsonl", "queries.jsonl"] {
            assert!(dir.join(f).is_file(), "{name}/{f}");
        }
        let qs = load_queries(&dir.join("queries.jsonl")).unwrap();
        assert!(qs.iter().all(|q| !q.gold.is_empty()), "{name}");
    }
}

/// The abstention path end to end on MetaTool's awareness split (520
/// queries that need a tool, 520 that need none) and the reliability split
/// (gold never among the candidates), plus Markdown, plot and gate on the
/// resulting reports.
#[test]
fn harness_abstention_markdown_plot_and_gate() {
    let dir = dataset_dir("metatool");
    let tools = load_tools(&dir);
    let docs: Vec<String> = tools
        .iter()
        .map(|t| format!("{} {}", t.name, t.description))
        .collect();
    let bm = Bm25::new(&docs);
    let aware = load_queries(&dir.join("queries_awareness.jsonl")).unwrap();
    let opts = EvalOptions::default();
    // abstain when the best BM25 score is weak
    let threshold = |q: &EvalQuery| {
        let hits = bm.top_k(&q.query, 10, None);
        let best = hits.first().map_or(0.0, |h| h.1);
        Ranked {
            ids: hits.iter().map(|(d, _)| tools[*d].id.clone()).collect(),
            abstain: best < 8.0,
        }
    };
    let never = |q: &EvalQuery| Ranked {
        abstain: false,
        ..threshold(q)
    };
    let always = |q: &EvalQuery| Ranked {
        abstain: true,
        ..threshold(q)
    };
    let t = evaluate(
        "metatool-awareness",
        "bm25-t8",
        "global",
        &aware,
        &opts,
        &threshold,
        false,
    );
    let n = evaluate(
        "metatool-awareness",
        "bm25",
        "global",
        &aware,
        &opts,
        &never,
        false,
    );
    let a = evaluate(
        "metatool-awareness",
        "abstain",
        "global",
        &aware,
        &opts,
        &always,
        false,
    );
    assert_eq!((t.overall.n, t.overall.n_empty_gold), (1040, 520));
    assert_eq!(
        (n.overall.abstain_rate, n.overall.coverage),
        (Some(0.0), Some(1.0))
    );
    assert_eq!(
        (a.overall.abstain_rate, a.overall.coverage),
        (Some(1.0), Some(0.0))
    );
    let (rate, cov) = (t.overall.abstain_rate.unwrap(), t.overall.coverage.unwrap());
    assert!(
        rate > 0.0 && rate < 1.0 && cov > 0.0 && cov < 1.0,
        "{rate} {cov}"
    );
    // ranking metrics ignore the abstain flag and the empty-gold half
    assert_eq!(t.overall.top1, n.overall.top1);
    // the "negative" tag has only empty gold: no coverage, abstain only
    let neg = &t.per_tag["negative"];
    assert_eq!((neg.n_empty_gold, neg.coverage), (520, None));
    assert_eq!(neg.abstain_rate, t.overall.abstain_rate);
    assert_eq!(t.per_tag["positive"].abstain_rate, None);

    let rel = load_queries(&dir.join("queries_reliability.jsonl")).unwrap();
    let r = evaluate(
        "metatool-reliability",
        "bm25-t8",
        "global",
        &rel,
        &opts,
        &threshold,
        false,
    );
    assert_eq!((r.overall.n, r.overall.n_empty_gold), (995, 995));
    assert!(r.overall.abstain_rate.is_some() && r.overall.coverage.is_none());

    reports_plot_and_gate(vec![t, n, a, r], rate);
}

/// The Markdown report, the plot, and the gate over a harness's reports
/// (the first an abstainer at `rate`).
fn reports_plot_and_gate(reports: Vec<toolgraph::eval::Report>, rate: f64) {
    let md = toolgraph::eval::to_markdown(&reports);
    println!("{md}");
    assert!(
        md.contains("| metatool-awareness | global | bm25-t8 | 1040 |"),
        "{md}"
    );
    assert!(md.contains("Abstain") && md.contains("Coverage"));

    let tmp = tempfile::tempdir().unwrap();
    let svg = tmp.path().join("top1.svg");
    toolgraph::eval::plot_svg(&reports, "top1", &svg).unwrap();
    assert!(std::fs::read_to_string(&svg).unwrap().contains("bm25-t8"));

    // the gate: identical runs pass; a worse abstainer is flagged
    assert!(toolgraph::eval::compare_to_baseline(&reports, &reports, 0.02).is_empty());
    let mut worse = reports[0].clone();
    worse.overall.abstain_rate = Some(rate - 0.05);
    let regs = toolgraph::eval::compare_to_baseline(&[worse], &reports[..1], 0.02);
    assert_eq!(regs.len(), 1, "{regs:?}");
    assert_eq!(regs[0].metric, "abstain_rate");
}
