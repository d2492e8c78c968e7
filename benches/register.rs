//! What registering one tool costs as the catalog grows: the bundled seeds
//! (180 tools) and the Seal-Tools catalog (4,076 tools), with the real model.
//! Each iteration changes one tool's description, so exactly one tool is
//! re-embedded; the stages are timed apart: parse + constellation build
//! (`prepare`), the store transaction with its constraint checks (`load`)
//! and the snapshot rebuild (`refresh`: tools, lexicon, vectors, BM25).
//! Needs `scripts/setup.sh` (the model).

use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use toolgraph::Engine;
use toolgraph::import::Format;

mod common;
use common::{engine_with_ontology, root};

fn engine(catalog: &[PathBuf], format: Option<Format>) -> Engine {
    let engine = engine_with_ontology();
    engine
        .load_paths(catalog, format)
        .unwrap_or_else(|e| panic!("{e}"));
    engine
}

fn one_tool(dir: &Path, i: u64) -> PathBuf {
    let path = dir.join("one.jsonl");
    let line = format!(
        r#"{{"id": "ferry_ticket_book", "name": "ferry_ticket_book", "description": "Book a passenger ticket on a ferry crossing ({i})", "parameters": {{"type": "object", "properties": {{"date": {{"type": "string"}}}}}}}}"#
    );
    std::fs::write(&path, line).unwrap_or_else(|e| panic!("{e}"));
    path
}

/// `cargo bench` passes `--bench`; `cargo test` runs each benchmark once
/// (a smoke test), on the seeds only.
fn full_run() -> bool {
    std::env::args().any(|a| a == "--bench")
}

fn register(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut catalogs = vec![("seeds_180", vec![root().join("seeds")], None)];
    if full_run() {
        catalogs.push((
            "sealtools_4076",
            vec![root().join("benches/datasets/sealtools/tools.jsonl")],
            Some(Format::Jsonl),
        ));
    }
    let mut group = c.benchmark_group("register_one_tool");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(10));
    for (name, files, format) in catalogs {
        let engine = engine(&files, format);
        let mut i = 0u64;
        group.bench_function(BenchmarkId::new("prepare", name), |b| {
            b.iter(|| {
                i += 1;
                engine
                    .prepare(&[one_tool(tmp.path(), i)], Some(Format::Jsonl))
                    .unwrap_or_else(|e| panic!("{e}"))
            })
        });
        group.bench_function(BenchmarkId::new("load", name), |b| {
            b.iter(|| {
                i += 1;
                let sources = engine
                    .prepare(&[one_tool(tmp.path(), i)], Some(Format::Jsonl))
                    .unwrap_or_else(|e| panic!("{e}"));
                engine
                    .store()
                    .load_unchecked(&sources)
                    .unwrap_or_else(|e| panic!("{e}"))
            })
        });
        group.bench_function(BenchmarkId::new("refresh", name), |b| {
            b.iter(|| engine.refresh().unwrap_or_else(|e| panic!("{e}")))
        });
        group.bench_function(BenchmarkId::new("total", name), |b| {
            b.iter(|| {
                i += 1;
                engine
                    .load_paths(&[one_tool(tmp.path(), i)], Some(Format::Jsonl))
                    .unwrap_or_else(|e| panic!("{e}"))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, register);
criterion_main!(benches);
