//! The engine side of `scripts/perf.sh` (not a criterion bench: one run,
//! many samples, one JSON report). For each synthetic catalog size (1k,
//! 10k, 100k tools by default; `TOOLGRAPH_PERF_SIZES=1000,10000`):
//!
//! - registers the catalog into an on-disk store under
//!   `TOOLGRAPH_PERF_DIR` (default `~/.cache/toolgraph/perf`): the first run
//!   embeds every tool, later runs re-embed nothing (that count is the
//!   `reembedded_on_unchanged_reload` figure), then registers it again in the
//!   same process (must re-embed nothing either);
//! - runs every distinct query once with a cold query-embedding cache
//!   (end to end, the embedding included) and once more warm (the search
//!   without the embedding), p50 / p90 / p99 and the per-stage p50 from the
//!   core's `stage` spans; Top-1 and Recall@10 as a sanity figure;
//! - the floor: the query embedding alone, one query at a time, interleaved
//!   with the cold searches (each query embedded alone right before or
//!   right after its search, alternately), so that both see the same
//!   machine: a shared host's speed drifts by 20-30 % over minutes, and a
//!   floor taken at another moment moves the ratios by that much. The
//!   10k ratios divide by the floor taken beside the 10k searches; the
//!   floor taken back to back after the 1k run is reported beside it.
//!
//! Multi-step requests (`perf/multistep.rs`): Seal-Tools' requests that
//! split into steps, each search against the embedding of the same
//! request's texts (the faster of one at a time and the whole alone plus
//! the steps in one batch). Paced traffic (`perf/paced.rs`): at 10k, fresh
//! requests in alternating blocks, back to back and 5 ms apart.
//!
//! The largest catalog registered into an empty store, then opened again
//! with its vectors cached (`perf/fresh.rs`).
//!
//! And registration throughput: 2,000 new tools registered into an engine
//! holding the ontology (parse, constellations, store write, snapshot,
//! embeddings) against the raw embedding throughput of the same tools' texts.
//!
//! With `TOOLGRAPH_PERF_BOLT` set, only the graph server (`perf/bolt.rs`).
//!
//! `TOOLGRAPH_PERF_GAP_MS` (a diagnostic, not used by `scripts/perf.sh`):
//! pause that long before every cold search and every floor embedding, as
//! a planner's turns are spaced, so that every embedding starts from an
//! idle machine at every catalog size (back to back, a 1k search leaves
//! the next embedding about 0.3 ms after the last one, a 100k search about
//! 2 ms, and any 2 ms of other work, even spinning, slows the next
//! embedding: see `TOOLGRAPH_PERF_EMBED_GAPS`).
//!
//! Writes `TOOLGRAPH_PERF_OUT` (default `target/perf-engine.json`). Run
//! without `--bench` (`cargo test --benches`) it is a small real run: 200
//! tools, 100 registered, in a temporary directory, checked for 0
//! re-embedded and a sane Top-1.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{Value, json};
use toolgraph::embed::{Embedder, FastEmbedder, default_model_dir, embedding_text};
use toolgraph::graph::{GraphStore, OxigraphStore};
use toolgraph::rank::stages::StageSpans;
use toolgraph::synth::SynthOptions;
use toolgraph::{Embeddings, Engine, EngineOptions, SearchRequest};
use tracing_subscriber::layer::SubscriberExt;

mod common;
use common::root;
#[path = "perf/bolt.rs"]
mod bolt;
#[path = "perf/fresh.rs"]
mod fresh;
#[path = "perf/million.rs"]
mod million;
#[path = "perf/multistep.rs"]
mod multistep;
#[path = "perf/paced.rs"]
mod paced;

/// The allocator the `toolgraph` binary uses (see src/main.rs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const QUERIES: usize = 500;
/// The smoke run's one catalog size.
const SMOKE_TOOLS: usize = 200;

fn main() {
    toolgraph::alloc::keep_freed_memory();
    toolgraph::alloc::no_transparent_huge_pages();
    // `cargo test --benches` runs this without `--bench`: a small real run
    // (200 tools, 100 registered) in a temporary directory, removed after.
    let smoke = !std::env::args().any(|a| a == "--bench");
    let smoke_dir =
        std::env::temp_dir().join(format!("toolgraph-perf-smoke-{}", std::process::id()));
    let sizes: Vec<usize> = std::env::var("TOOLGRAPH_PERF_SIZES")
        .ok()
        .filter(|_| !smoke)
        .unwrap_or_else(|| {
            if smoke {
                SMOKE_TOOLS.to_string()
            } else {
                "1000,10000,100000".into()
            }
        })
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let dir = if smoke {
        smoke_dir.clone()
    } else {
        std::env::var_os("TOOLGRAPH_PERF_DIR").map_or_else(
            || {
                dirs::cache_dir()
                    .unwrap_or_else(std::env::temp_dir)
                    .join("toolgraph")
                    .join("perf")
            },
            PathBuf::from,
        )
    };
    let out = std::env::var_os("TOOLGRAPH_PERF_OUT")
        .filter(|_| !smoke)
        .map_or_else(
            || {
                if smoke {
                    smoke_dir.join("perf-engine.json")
                } else {
                    root().join("target").join("perf-engine.json")
                }
            },
            PathBuf::from,
        );
    let stages = Stages::default();
    let subscriber = tracing_subscriber::registry().with(stages.layer());
    tracing::subscriber::set_global_default(subscriber).unwrap_or_else(|e| panic!("{e}"));

    let model: Arc<FastEmbedder> =
        Arc::new(FastEmbedder::load(&default_model_dir()).unwrap_or_else(|e| panic!("{e}")));
    if std::env::var_os("TOOLGRAPH_PERF_EMBED_GAPS").is_some() {
        return embed_gaps(&dir, &model);
    }
    if let Some(store) = std::env::var_os("TOOLGRAPH_PERF_RSS_OF") {
        let tools = std::env::var("TOOLGRAPH_PERF_RSS_TOOLS")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        let standin = std::env::var("TOOLGRAPH_PERF_RSS_STANDIN").is_ok_and(|v| v == "1");
        return million::rss_child(Path::new(&store), tools, &model, standin);
    }
    let report = bolt::when_asked(&dir, &sizes, &model, smoke)
        .unwrap_or_else(|| run(&dir, &sizes, &model, &stages, smoke));
    let text = serde_json::to_string_pretty(&Value::Object(report)).unwrap_or_default();
    if let Some(parent) = out.parent() {
        std::fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{e}"));
    }
    std::fs::write(&out, &text).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    println!("{text}");
    if smoke {
        let size: Value =
            serde_json::from_str::<Value>(&text).unwrap_or_default()["sizes"]["200"].clone();
        assert_eq!(size["reembedded_on_unchanged_reload"], json!(0), "{size}");
        assert!(size["top1"].as_f64().is_some_and(|t| t > 0.3), "{size}");
        // Registered into an empty store, opened again with its vectors
        // cached: nothing embedded.
        let fresh: Value =
            serde_json::from_str::<Value>(&text).unwrap_or_default()["fresh"].clone();
        assert_eq!(fresh["tools"], json!(SMOKE_TOOLS), "{fresh}");
        assert_eq!(fresh["embedded_on_open"], json!(0), "{fresh}");
        let _ = std::fs::remove_dir_all(&smoke_dir);
    }
}

/// Diagnostic: the query embedding alone, back to back (the floor) and
/// after 2 ms of something else (spinning, sweeping 4 MB of memory,
/// sleeping), as it runs inside a search. Prints.
fn embed_gaps(dir: &Path, model: &FastEmbedder) {
    let (_, qf) = catalog(dir, 1000, 7);
    let queries = read_queries(&qf);
    let mem: Vec<u8> = vec![1; 4 << 20];
    for what in ["floor", "spin", "sweep", "sleep"] {
        let mut ms = Vec::new();
        for (q, _) in &queries {
            let t = Instant::now();
            match what {
                "spin" => while t.elapsed().as_micros() < 2000 {},
                "sweep" => {
                    let mut acc = 0u64;
                    while t.elapsed().as_micros() < 2000 {
                        acc += mem.iter().step_by(64).map(|&b| u64::from(b)).sum::<u64>();
                    }
                    std::hint::black_box(acc);
                }
                "sleep" => std::thread::sleep(std::time::Duration::from_micros(2000)),
                _ => {}
            }
            let t = Instant::now();
            std::hint::black_box(model.embed_query(q).unwrap_or_else(|e| panic!("{e}")));
            ms.push(t.elapsed().as_secs_f64() * 1e3);
        }
        eprintln!("{what}: {}", summary(&ms, BTreeMap::new()));
    }
}

/// Every size, the floor and the registration, with the ratios perf.json
/// keys.
fn run(
    dir: &Path,
    sizes: &[usize],
    model: &Arc<FastEmbedder>,
    stages: &Stages,
    smoke: bool,
) -> serde_json::Map<String, Value> {
    let mut report = serde_json::Map::new();
    let mut per_size = serde_json::Map::new();
    let mut floor: Option<Value> = None;
    let mut reembedded = 0usize;
    for &n in sizes {
        let (size, queries) = measure_size(dir, n, model, stages);
        reembedded =
            reembedded.max(size["reembedded_on_unchanged_reload"].as_u64().unwrap_or(0) as usize);
        if floor.is_none() {
            floor = Some(embed_floor(model, &queries));
        }
        eprintln!("perf: {n} tools: {size}");
        per_size.insert(n.to_string(), size);
    }
    // A million tools (TOOLGRAPH_PERF_MILLION=1; scripts/perf.sh sets it).
    let million = if !smoke
        && std::env::var("TOOLGRAPH_PERF_MILLION").is_ok_and(|v| v == "1" || v == "quick")
    {
        let p50_1k = per_size
            .get("1000")
            .and_then(|s| s["cold"]["p50_ms"].as_f64());
        million::measure(dir, model, stages, p50_1k)
    } else {
        Value::Null
    };
    eprintln!("perf: 1M: {million}");
    report.insert(
        "p50_1m_over_p50_1k".into(),
        million["p50_1m_over_p50_1k"].clone(),
    );
    report.insert(
        "recall_at_10_vs_exact_1m".into(),
        million["recall_at_10_vs_exact"]["joint"]["mean"].clone(),
    );
    report.insert(
        "memory_per_tool_kb_1m".into(),
        million["memory_per_tool_kb_1m"].clone(),
    );
    report.insert("million".into(), million);
    // The largest catalog into an empty store, then opened again.
    let fresh = sizes.iter().max().map_or(Value::Null, |&n| {
        fresh::measure(dir, n, &catalog(dir, n, 7).0, model)
    });
    eprintln!("perf: fresh store: {fresh}");
    report.insert("register_fresh_s".into(), fresh["register_s"].clone());
    report.insert("open_s".into(), fresh["open_s"].clone());
    report.insert("fresh".into(), fresh);
    let steps = multistep::measure(model, smoke);
    eprintln!("perf: multi-step: {steps}");
    report.insert(
        "multistep_p50_over_steps_embed_p50".into(),
        steps["ratio"]["p50"].clone(),
    );
    report.insert(
        "multistep_p99_over_steps_embed_p50".into(),
        steps["ratio"]["p99"].clone(),
    );
    report.insert("multistep".into(), steps);
    let registration = if std::env::var_os("TOOLGRAPH_PERF_SKIP_REGISTRATION").is_some() {
        Value::Null
    } else {
        registration(dir, model, if smoke { 100 } else { 2_000 })
    };
    eprintln!("perf: registration: {registration}");
    report.insert("sizes".into(), Value::Object(per_size.clone()));
    report.insert("embed".into(), floor.unwrap_or(Value::Null));
    report.insert("registration".into(), registration.clone());
    report.insert("reembedded_on_unchanged_reload".into(), json!(reembedded));
    ratios(&mut report, &per_size, &registration);
    report.insert("machine".into(), machine());
    report
}

/// The ratios the performance keys ask for (null when a size was not
/// measured); the 10k ones over the floor taken beside the 10k searches.
fn ratios(
    report: &mut serde_json::Map<String, Value>,
    per_size: &serde_json::Map<String, Value>,
    registration: &Value,
) {
    let embed_p50 = per_size
        .get("10000")
        .and_then(|s| s["embed_beside_cold"]["p50_ms"].as_f64());
    let at = |n: &str, k: &str| per_size.get(n).and_then(|s| s["cold"][k].as_f64());
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => json!(round3(a / b)),
        _ => Value::Null,
    };
    report.insert(
        "e2e_p50_over_embed_p50_10k".into(),
        ratio(at("10000", "p50_ms"), embed_p50),
    );
    report.insert(
        "e2e_p99_over_embed_p50_10k".into(),
        ratio(at("10000", "p99_ms"), embed_p50),
    );
    report.insert(
        "p50_100k_over_p50_1k".into(),
        ratio(at("100000", "p50_ms"), at("1000", "p50_ms")),
    );
    // How far the approximate first pass at 100k moves the answers.
    report.insert(
        "recall_at_10_vs_exact_100k".into(),
        per_size.get("100000").map_or(Value::Null, |s| {
            s["recall_at_10_vs_exact"]["joint"]["mean"].clone()
        }),
    );
    report.insert(
        "paced_p50_over_back_to_back_p50".into(),
        per_size
            .values()
            .find_map(|s| s["paced"]["paced_p50_over_back_to_back_p50"].as_f64())
            .map_or(Value::Null, |r| json!(r)),
    );
    report.insert(
        "register_over_embed_throughput".into(),
        ratio(
            registration["tools_per_s"].as_f64(),
            registration["raw_embed_per_s"].as_f64(),
        ),
    );
}

/// The synthetic catalog of `n` tools (written once, seeded).
fn catalog(dir: &Path, n: usize, seed: u64) -> (PathBuf, PathBuf) {
    let at = dir.join(format!("synth-{n}-{seed}"));
    let tools = at.join("tools.jsonl");
    let queries = at.join("queries.jsonl");
    if !(tools.exists() && queries.exists()) {
        toolgraph::synth::write(
            &root().join("ontology"),
            &SynthOptions {
                tools: n,
                queries: QUERIES,
                seed,
            },
            &at,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
    (tools, queries)
}

fn measure_size(
    dir: &Path,
    n: usize,
    model: &Arc<FastEmbedder>,
    stages: &Stages,
) -> (Value, Vec<(String, String)>) {
    let (tools, queries_file) = catalog(dir, n, 7);
    let mut opts = EngineOptions::memory(Embeddings::Custom(model.clone()));
    opts.data_dir = Some(dir.join(format!("store-{n}")));
    // (Tuning: how many tools the dense first pass picks.)
    if let Some(keep) = std::env::var("TOOLGRAPH_PERF_FIRST_PASS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        opts.rank.dense_first_pass = keep;
    }
    let mut engine = Engine::open(opts).unwrap_or_else(|e| panic!("{e}"));
    let paths = [root().join("ontology"), tools];
    let t = Instant::now();
    let first = engine
        .load_paths(&paths, None)
        .unwrap_or_else(|e| panic!("{e}"));
    let load_s = t.elapsed().as_secs_f64();
    let first_sync = first.embeddings.unwrap_or_else(|| panic!("no embeddings"));
    // Registered again unchanged: a store kept from an earlier run already
    // was (the first load), a fresh one is loaded a second time here.
    let (reembedded, reload_s) = if first_sync.reused > 0 {
        (first_sync.embedded, load_s)
    } else {
        let t = Instant::now();
        let again = engine
            .load_paths(&paths, None)
            .unwrap_or_else(|e| panic!("{e}"));
        let sync = again.embeddings.unwrap_or_else(|| panic!("no embeddings"));
        (sync.embedded, t.elapsed().as_secs_f64())
    };
    let queries = read_queries(&queries_file);
    stages.clear();
    let (cold, top1, recall, floor) = run_queries(&engine, &queries, Some(model));
    let cold_stages = stages.p50s();
    stages.clear();
    let (mut warm, _, _, _) = run_queries(&engine, &queries, None);
    // (Profiling: repeat the warm pass.)
    let repeat: usize = std::env::var("TOOLGRAPH_PERF_WARM_REPEAT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    for _ in 0..repeat {
        warm.extend(run_queries(&engine, &queries, None).0);
    }
    let warm_stages = stages.p50s();
    // Paced against back to back at 10k (the smoke run: its one size).
    let paced = if n == 10_000 || n == SMOKE_TOOLS {
        let used: HashSet<String> = queries.iter().map(|(q, _)| q.clone()).collect();
        let wanted = if n == 10_000 { 400 } else { 40 };
        paced::measure(&engine, dir, n, &used, wanted)
    } else {
        Value::Null
    };
    let against_exact = against_exact(&mut engine, &queries);
    let size = json!({
        "tools": engine.catalog_size(),
        "load_s": round3(load_s),
        "embedded_on_load": first_sync.embedded,
        "reload_s": round3(reload_s),
        "reembedded_on_unchanged_reload": reembedded,
        "queries": queries.len(),
        "cold": summary(&cold, cold_stages),
        "embed_beside_cold": summary(&floor, BTreeMap::new()),
        "warm": summary(&warm, warm_stages),
        "top1": round3(top1),
        "recall_at_10": round3(recall),
        "recall_at_10_vs_exact": against_exact,
        "paced": paced,
    });
    (size, queries)
}

/// Where the dense channel starts with its approximate first pass (see
/// `RankConfig::dense_scan_all_below`): the share of each query's top 10
/// that the exact scan also returns, averaged over the queries (and the
/// worst query, and how many answered exactly the same list), for the
/// joint ranking and for the dense channel alone. Null below that size.
fn against_exact(engine: &mut Engine, queries: &[(String, String)]) -> Value {
    let approximate = engine.rank_config().clone();
    if engine.catalog_size() < approximate.dense_scan_all_below {
        return Value::Null;
    }
    let top10 = |engine: &Engine, mode: &str| -> Vec<Vec<String>> {
        queries
            .iter()
            .map(|(q, _)| {
                let req: SearchRequest = serde_json::from_value(
                    json!({"text": q, "limit": 10, "explain": false, "mode": mode}),
                )
                .unwrap_or_else(|e| panic!("{e}"));
                let res = engine.search(&req).unwrap_or_else(|e| panic!("{e}"));
                res.matches.into_iter().map(|m| m.tool).collect()
            })
            .collect()
    };
    let exact = toolgraph::rank::RankConfig {
        dense_scan_all_below: usize::MAX,
        ..approximate.clone()
    };
    let mut report = serde_json::Map::new();
    for mode in ["joint", "dense"] {
        let got = top10(engine, mode);
        engine.set_rank_config(exact.clone());
        let want = top10(engine, mode);
        engine.set_rank_config(approximate.clone());
        let shares: Vec<f64> = got
            .iter()
            .zip(&want)
            .map(|(g, w)| {
                let found = w.iter().filter(|t| g.contains(t)).count();
                if w.is_empty() {
                    1.0
                } else {
                    found as f64 / w.len() as f64
                }
            })
            .collect();
        let n = shares.len().max(1) as f64;
        report.insert(
            mode.into(),
            json!({
                "mean": round3(shares.iter().sum::<f64>() / n),
                "min": round3(shares.iter().copied().fold(1.0, f64::min)),
                "same_list": got.iter().zip(&want).filter(|(g, w)| g == w).count(),
                "queries": shares.len(),
            }),
        );
    }
    Value::Object(report)
}

fn read_queries(path: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{e}"));
    let mut seen = HashSet::new();
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| {
            let q = v["query"].as_str()?.to_string();
            let gold = v["gold"][0].as_str()?.to_string();
            seen.insert(q.clone()).then_some((q, gold))
        })
        .collect()
}

/// Latencies (ms) of every query, Top-1 and Recall@10; with `floor`, the
/// latency of embedding each query alone with that model, taken right
/// before its search for every other query and right after it for the rest.
fn run_queries(
    engine: &Engine,
    queries: &[(String, String)],
    floor: Option<&FastEmbedder>,
) -> (Vec<f64>, f64, f64, Vec<f64>) {
    let mut ms = Vec::with_capacity(queries.len());
    let mut floor_ms = Vec::with_capacity(queries.len());
    let (mut top1, mut recall) = (0usize, 0usize);
    let gap = std::env::var("TOOLGRAPH_PERF_GAP_MS")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|_| floor.is_some())
        .map(|ms| std::time::Duration::from_secs_f64(ms / 1e3));
    let pause = || {
        if let Some(gap) = gap {
            std::thread::sleep(gap);
        }
    };
    let mut embed_alone = |q: &str| {
        if let Some(model) = floor {
            pause();
            let t = Instant::now();
            std::hint::black_box(model.embed_query(q).unwrap_or_else(|e| panic!("{e}")));
            floor_ms.push(t.elapsed().as_secs_f64() * 1e3);
        }
    };
    for (i, (q, gold)) in queries.iter().enumerate() {
        let req: SearchRequest =
            serde_json::from_value(json!({"text": q, "limit": 10, "explain": false}))
                .unwrap_or_else(|e| panic!("{e}"));
        if i % 2 == 0 {
            embed_alone(q);
        }
        pause();
        let t = Instant::now();
        let res = engine.search(&req).unwrap_or_else(|e| panic!("{e}"));
        ms.push(t.elapsed().as_secs_f64() * 1e3);
        if i % 2 == 1 {
            embed_alone(q);
        }
        top1 += usize::from(res.matches.first().is_some_and(|m| &m.tool == gold));
        recall += usize::from(res.matches.iter().any(|m| &m.tool == gold));
    }
    let n = queries.len().max(1) as f64;
    (ms, top1 as f64 / n, recall as f64 / n, floor_ms)
}

/// The query embedding alone, one query at a time.
fn embed_floor(model: &FastEmbedder, queries: &[(String, String)]) -> Value {
    let mut ms = Vec::with_capacity(queries.len());
    for (q, _) in queries {
        let t = Instant::now();
        let v = model.embed_query(q).unwrap_or_else(|e| panic!("{e}"));
        ms.push(t.elapsed().as_secs_f64() * 1e3);
        std::hint::black_box(v);
    }
    summary(&ms, BTreeMap::new())
}

/// Registering 2,000 new tools into an engine holding the ontology, against
/// embedding the same tools' texts alone.
fn registration(dir: &Path, model: &Arc<FastEmbedder>, n: usize) -> Value {
    let (tools, _) = catalog(dir, n, 99);
    // Raw: the embedded texts of exactly these tools.
    let engine =
        Engine::open(EngineOptions::memory(Embeddings::Off)).unwrap_or_else(|e| panic!("{e}"));
    let sources = engine
        .prepare(std::slice::from_ref(&tools), None)
        .unwrap_or_else(|e| panic!("{e}"));
    let scratch = OxigraphStore::memory().unwrap_or_else(|e| panic!("{e}"));
    scratch
        .load_unchecked(&sources)
        .unwrap_or_else(|e| panic!("{e}"));
    let texts: Vec<String> = scratch
        .tools()
        .unwrap_or_else(|e| panic!("{e}"))
        .iter()
        .map(embedding_text)
        .collect();
    let t = Instant::now();
    let vectors = model
        .embed_documents(&texts)
        .unwrap_or_else(|e| panic!("{e}"));
    let raw_s = t.elapsed().as_secs_f64();
    assert_eq!(vectors.len(), texts.len());
    // Registration, end to end.
    let mut opts = EngineOptions::memory(Embeddings::Custom(model.clone()));
    opts.data_dir = Some(tempdir(dir, "register"));
    let engine = Engine::open(opts).unwrap_or_else(|e| panic!("{e}"));
    engine
        .load_paths(&[root().join("ontology")], None)
        .unwrap_or_else(|e| panic!("{e}"));
    let t = Instant::now();
    let loaded = engine
        .load_paths(&[tools], None)
        .unwrap_or_else(|e| panic!("{e}"));
    let reg_s = t.elapsed().as_secs_f64();
    let (embedded, ahead) = loaded.embeddings.map_or((0, 0), |s| (s.embedded, s.ahead));
    assert_eq!(embedded, n, "every new tool is embedded once");
    json!({
        "tools": n,
        "raw_embed_s": round3(raw_s),
        "raw_embed_per_s": round3(n as f64 / raw_s),
        "register_s": round3(reg_s),
        "tools_per_s": round3(n as f64 / reg_s),
        "embedded_beside_store_write": ahead,
    })
}

fn tempdir(dir: &Path, name: &str) -> PathBuf {
    let at = dir.join(name);
    let _ = std::fs::remove_dir_all(&at);
    at
}

fn summary(ms: &[f64], stages: BTreeMap<String, (f64, usize)>) -> Value {
    let mut s = ms.to_vec();
    s.sort_by(f64::total_cmp);
    let q = |p: f64| {
        if s.is_empty() {
            0.0
        } else {
            s[((s.len() - 1) as f64 * p).round() as usize]
        }
    };
    let mean = s.iter().sum::<f64>() / s.len().max(1) as f64;
    json!({
        "n": s.len(),
        "p50_ms": round3(q(0.5)),
        "p90_ms": round3(q(0.9)),
        "p99_ms": round3(q(0.99)),
        "mean_ms": round3(mean),
        "stages_p50_ms": stages.iter().map(|(k, v)| (k.clone(), json!(round3(v.0)))).collect::<serde_json::Map<_, _>>(),
        // How often each stage ran (`fuse_all`: fusion had to score every tool).
        "stages_count": stages.iter().map(|(k, v)| (k.clone(), json!(v.1))).collect::<serde_json::Map<_, _>>(),
    })
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn machine() -> Value {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_default();
    json!({
        "cpus": std::thread::available_parallelism().map_or(1, |n| n.get()),
        "cpu": cpu,
        "model": "all-MiniLM-L6-v2 int8 (ONNX Runtime)",
    })
}

/// Durations (ms) of every `stage` span, by stage.
#[derive(Clone, Default)]
struct Stages {
    inner: Arc<Mutex<HashMap<String, Vec<f64>>>>,
}

impl Stages {
    fn layer(&self) -> StageSpans<impl Fn(&str, f64) + Send + Sync + 'static> {
        let inner = self.inner.clone();
        StageSpans::new(move |stage: &str, seconds: f64| {
            inner
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .entry(stage.to_string())
                .or_default()
                .push(seconds * 1e3);
        })
    }
    fn clear(&self) {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
    /// Per stage: the median duration and how many times it ran.
    fn p50s(&self) -> BTreeMap<String, (f64, usize)> {
        let m = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        m.iter()
            .map(|(k, v)| {
                let mut v = v.clone();
                v.sort_by(f64::total_cmp);
                (k.clone(), (v[v.len() / 2], v.len()))
            })
            .collect()
    }
}
