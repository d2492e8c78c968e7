//! BM25 and exact-name lookup speed over the Seal-Tools catalog (4,076 tools).

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use toolgraph::lexical::{Bm25, NameIndex};

fn catalog() -> (Vec<String>, Vec<String>) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/benches/datasets/sealtools/tools.jsonl"
    );
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut names = Vec::new();
    let mut docs = Vec::new();
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let name = v["name"].as_str().unwrap_or_default().to_string();
        docs.push(format!(
            "{name} {}",
            v["description"].as_str().unwrap_or_default()
        ));
        names.push(name);
    }
    (names, docs)
}

fn bench(c: &mut Criterion) {
    let (names, docs) = catalog();
    let query = "Calculate the power output for a cycling activity that lasts for 85 minutes \
                 and then retrieve information about postmodern theory";
    c.bench_function("bm25_build_sealtools", |b| {
        b.iter(|| Bm25::new(black_box(&docs)))
    });
    let bm = Bm25::new(&docs);
    c.bench_function("bm25_top10_sealtools", |b| {
        b.iter(|| bm.top_k(black_box(query), 10, None))
    });
    let idx = NameIndex::new(names.iter().map(String::as_str));
    c.bench_function("name_index_find_sealtools", |b| {
        b.iter(|| {
            idx.find(black_box("please call getPowerOutput for my ride"), |i| {
                names[i].as_str()
            })
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
