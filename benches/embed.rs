//! Embedding throughput of the real model (sentences/s) for batches of 1, 32
//! and 256, plus exact top-k over 10k vectors. Needs `scripts/setup.sh`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use toolgraph::embed::{Embedder, FastEmbedder, HashEmbedder, default_model_dir, sync_index};

const SENTENCES: [&str; 8] = [
    "Book a flight between two airports on a given date",
    "Reserve a table at a restaurant for a party of four tonight",
    "Compute the sha256 checksum of an uploaded file",
    "Send an email with an attachment to a list of recipients",
    "Get the weather forecast for the next five days in a city",
    "Convert an amount of money from one currency to another",
    "Create a calendar event and invite the attendees",
    "Search for movies showing near me this weekend",
];

fn texts(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!("{} ({i})", SENTENCES[i % SENTENCES.len()]))
        .collect()
}

fn embedding(c: &mut Criterion) {
    let model = match FastEmbedder::load(&default_model_dir()) {
        Ok(m) => m,
        Err(e) => panic!("{e}"),
    };
    let mut group = c.benchmark_group("embed");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(8));
    for batch in [1usize, 32, 256] {
        let input = texts(batch);
        group.throughput(Throughput::Elements(batch as u64));
        group.bench_with_input(BenchmarkId::new("documents", batch), &input, |b, input| {
            b.iter(|| {
                model
                    .embed_documents(black_box(input))
                    .unwrap_or_else(|e| panic!("{e}"))
                    .len()
            })
        });
    }
    group.finish();
}

fn search(c: &mut Criterion) {
    let double = HashEmbedder::new();
    let tools: Vec<toolgraph::model::Tool> = (0..10_000)
        .map(|i| toolgraph::model::Tool {
            id: format!("tool{i}"),
            name: format!("tool_{i}"),
            description: SENTENCES[i % SENTENCES.len()].to_string(),
            ..Default::default()
        })
        .collect();
    let (index, _) = match sync_index(None, &tools, &double, false) {
        Ok(r) => r,
        Err(e) => panic!("{e}"),
    };
    let query = match double.embed_query("book a flight") {
        Ok(q) => q,
        Err(e) => panic!("{e}"),
    };
    let mut group = c.benchmark_group("index");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(3));
    group.throughput(Throughput::Elements(index.len() as u64));
    group.bench_function("top_k/10k", |b| {
        b.iter(|| index.top_k(black_box(&query), 20, None))
    });
    group.finish();
}

criterion_group!(benches, embedding, search);
criterion_main!(benches);
