//! Screening cost beyond the embedding: 5,000 real tool texts (the clean
//! and poisoned rows of `tests/fixtures/screening/dataset.jsonl`, every
//! string of each manifest entry) through the rules, then the learned
//! screen's scoring on vectors computed beforehand (the embedding itself is
//! the ranker's, measured by the `embed` bench). The bar: 5,000
//! tools in at most 2 s beyond their embedding.

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use std::hint::black_box;
use toolgraph::screen::{self, learned::Classifier};

fn tools() -> Vec<(String, Vec<(String, String)>)> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/screening/dataset.jsonl");
    std::fs::read_to_string(path)
        .expect("the screening dataset")
        .lines()
        .take(5_000)
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("a JSON row");
            let raw = json!({"name": v["name"], "description": v["description"], "inputSchema": v["input_schema"]});
            (
                v["name"].as_str().unwrap_or("").to_string(),
                screen::texts_of_json(&raw),
            )
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let tools = tools();
    assert_eq!(tools.len(), 5_000);
    let names: Vec<&str> = tools.iter().map(|(n, _)| n.as_str()).collect();
    // The registered names are indexed once per scan, as the engine does.
    let registered = screen::Registered::new(names.iter().copied());
    let model = Classifier::bundled().expect("fitted weights in src/screen/weights.json");
    // Any unit vectors do for the cost of scoring.
    let vectors: Vec<Vec<f32>> = (0..tools.len())
        .map(|i| {
            let v: Vec<f32> = (0..model.embedding_weights.len())
                .map(|j| (((i * 31 + j * 17) % 97) as f32 - 48.0) / 48.0)
                .collect();
            let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.into_iter().map(|x| x / n).collect()
        })
        .collect();
    let mut g = c.benchmark_group("screening");
    g.sample_size(10);
    g.bench_function("5000_tools_rules_names_and_learned_score", |b| {
        b.iter(|| {
            let mut flagged = 0usize;
            for ((name, texts), v) in tools.iter().zip(&vectors) {
                // Names against 5,000 registered ones, texts, the score.
                let reasons = screen::screen_tool_in(name, texts, &registered, &[]);
                let score = model.score(v, &reasons).unwrap_or(0.0);
                flagged += usize::from(
                    screen::severity_of(&reasons) >= screen::Severity::Warn
                        || score >= model.warn_at,
                );
            }
            black_box(flagged)
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
