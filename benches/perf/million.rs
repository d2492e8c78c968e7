//! A million tools (issue 42): the synth's 1M catalog registered into an
//! on-disk store in ten sources of 100k (each a registration of new
//! sources, the bulk path), kept under the perf directory like the other
//! sizes, then searched cold.
//!
//! **The tools' vectors come from a stand-in**, the deterministic hashed
//! word and trigram embedder ([`HashEmbedder`], 384 dimensions like
//! MiniLM): embedding a million tool texts with the real model takes about
//! an hour on this machine. Everything else is the real thing: the store,
//! the snapshot, the vector index with its first passes, BM25, the graph
//! walk, fusion. **Every search still pays the real model**: the query is
//! embedded by MiniLM (its cost, measured inside the search as at every
//! other size) and by the stand-in, whose vector is the one scored against
//! the stand-in rows, so that query and rows share one space. The latency
//! ratio is over the 1k catalog's cold p50 of the same run (real model
//! everywhere there).
//!
//! Memory: each store opened in a process of its own (this bench run again
//! with `TOOLGRAPH_PERF_RSS_OF`), 200 cold searches, then its RSS; the key
//! is the RSS difference of the 1M and the 100k store over their 900k tools.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};
use toolgraph::embed::{Embedder, FastEmbedder, HashEmbedder};
use toolgraph::{Embeddings, Engine, EngineOptions, SearchRequest};

use super::common::root;
use super::{Stages, against_exact, catalog, read_queries, round3, run_queries, summary};

/// Tools in the catalog.
pub const TOOLS: usize = 1_000_000;
/// Tools per registered source.
const CHUNK: usize = 100_000;
/// Queries compared with the exact scan (each scans a million rows twice).
const EXACT_QUERIES: usize = 200;
/// A larger first pass than the default, measured beside it (recall and
/// warm latency): what picking more rows costs and buys at this size.
const WIDER_FIRST_PASS: usize = 16_384;
/// Searches before a process's RSS is read.
const RSS_SEARCHES: usize = 200;

/// Tool vectors from the stand-in, query cost from the real model (see the
/// module docs).
#[derive(Debug)]
pub struct StandIn {
    real: Arc<FastEmbedder>,
    rows: HashEmbedder,
    id: String,
}

impl StandIn {
    pub fn new(real: Arc<FastEmbedder>) -> Self {
        let rows = HashEmbedder::new();
        let id = format!(
            "{} (stand-in rows; queries also run the real model)",
            rows.model_id()
        );
        Self { real, rows, id }
    }
}

impl Embedder for StandIn {
    fn dim(&self) -> usize {
        self.rows.dim()
    }
    fn model_id(&self) -> &str {
        &self.id
    }
    fn embed_query(&self, text: &str) -> toolgraph::Result<Vec<f32>> {
        std::hint::black_box(self.real.embed_query(text)?);
        self.rows.embed_query(text)
    }
    fn embed_documents(&self, texts: &[String]) -> toolgraph::Result<Vec<Vec<f32>>> {
        self.rows.embed_documents(texts)
    }
}

/// The 1M catalog's sources: its tools file cut into files of [`CHUNK`]
/// lines (written once).
fn chunks(tools: &Path) -> Vec<PathBuf> {
    let at = tools.with_file_name("chunks");
    let count = TOOLS.div_ceil(CHUNK);
    let paths: Vec<PathBuf> = (0..count)
        .map(|i| at.join(format!("part-{i:02}.jsonl")))
        .collect();
    if paths.iter().all(|p| p.exists()) {
        return paths;
    }
    std::fs::create_dir_all(&at).unwrap_or_else(|e| panic!("{e}"));
    let text = std::fs::read_to_string(tools).unwrap_or_else(|e| panic!("{e}"));
    let lines: Vec<&str> = text.lines().collect();
    for (path, part) in paths.iter().zip(lines.chunks(CHUNK)) {
        std::fs::write(path, part.join("\n") + "\n").unwrap_or_else(|e| panic!("{e}"));
    }
    paths
}

fn open(store: &Path, embedder: Arc<dyn Embedder>) -> Engine {
    let mut opts = EngineOptions::memory(Embeddings::Custom(embedder));
    opts.data_dir = Some(store.to_path_buf());
    Engine::open(opts).unwrap_or_else(|e| panic!("{e}"))
}

/// Registers what the store does not hold yet, a source at a time; the
/// seconds each registration took (empty when the store was complete).
fn register(engine: &Engine, sources: &[PathBuf]) -> Vec<f64> {
    let mut took = Vec::new();
    if engine.catalog_size() >= TOOLS {
        return took;
    }
    engine
        .load_paths(&[root().join("ontology")], None)
        .unwrap_or_else(|e| panic!("{e}"));
    for source in sources {
        let t = Instant::now();
        engine
            .load_paths(std::slice::from_ref(source), None)
            .unwrap_or_else(|e| panic!("{e}"));
        took.push(round3(t.elapsed().as_secs_f64()));
        eprintln!(
            "perf: 1M: {} registered, {} tools, {:.1} s",
            source.display(),
            engine.catalog_size(),
            took.last().copied().unwrap_or_default()
        );
    }
    took
}

/// The 1M measurement; `p50_1k`: the 1k catalog's cold p50 of this run.
pub fn measure(
    dir: &Path,
    model: &Arc<FastEmbedder>,
    stages: &Stages,
    p50_1k: Option<f64>,
) -> Value {
    let (tools, queries_file) = catalog(dir, TOOLS, 7);
    let sources = chunks(&tools);
    let store = dir.join(format!("store-{TOOLS}"));
    let standin: Arc<dyn Embedder> = Arc::new(StandIn::new(model.clone()));
    let t = Instant::now();
    let mut engine = open(&store, standin.clone());
    let open_s = t.elapsed().as_secs_f64();
    let registered = register(&engine, &sources);
    let queries = read_queries(&queries_file);
    stages.clear();
    let (cold, top1, _, floor) = run_queries(&engine, &queries, Some(model));
    let cold = summary(&cold, stages.p50s());
    let asked = &queries[..EXACT_QUERIES.min(queries.len())];
    let exact = against_exact(&mut engine, asked);
    if std::env::var("TOOLGRAPH_PERF_MILLION").is_ok_and(|v| v == "quick") {
        // Diagnostic (TOOLGRAPH_PERF_MILLION=quick): the cold latency and
        // the recall alone.
        let ratio = p50_1k.and_then(|b| cold["p50_ms"].as_f64().map(|a| round3(a / b)));
        return json!({"cold": cold, "open_s": round3(open_s), "p50_1m_over_p50_1k": ratio,
            "recall_at_10_vs_exact": exact});
    }
    // The default first pass and a wider one, warm (queries embedded).
    let default = engine.rank_config().clone();
    stages.clear();
    let warm = summary(&run_queries(&engine, &queries, None).0, stages.p50s());
    engine.set_rank_config(toolgraph::rank::RankConfig {
        dense_first_pass: WIDER_FIRST_PASS,
        ..default.clone()
    });
    stages.clear();
    let warm_wider = summary(&run_queries(&engine, &queries, None).0, stages.p50s());
    let exact_wider = against_exact(&mut engine, asked);
    engine.set_rank_config(default.clone());
    let tools_held = engine.catalog_size();
    drop(engine);
    toolgraph::alloc::release_freed();
    let rss_1m = rss_of(&store, TOOLS, true);
    let rss_100k = rss_of(&dir.join("store-100000"), 100_000, false);
    let per_tool_kb = match (rss_1m, rss_100k) {
        (Some(a), Some(b)) => json!(round3((a as f64 - b as f64) / (TOOLS - 100_000) as f64)),
        _ => Value::Null,
    };
    let ratio = match (cold["p50_ms"].as_f64(), p50_1k) {
        (Some(a), Some(b)) if b > 0.0 => json!(round3(a / b)),
        _ => Value::Null,
    };
    json!({
        "tools": tools_held,
        "vectors": format!("stand-in rows ({}); every query also embedded by the real model", HashEmbedder::new().model_id()),
        "open_s": round3(open_s),
        "register_s_per_100k": registered,
        "cold": cold,
        "embed_beside_cold": summary(&floor, Default::default()),
        "top1_standin": round3(top1),
        "recall_at_10_vs_exact": exact,
        "warm": warm,
        "first_pass": default.dense_first_pass,
        "wider_first_pass": {
            "first_pass": WIDER_FIRST_PASS,
            "warm": warm_wider,
            "recall_at_10_vs_exact": exact_wider,
        },
        "rss_kb": {"1000000": rss_1m, "100000": rss_100k},
        "p50_1m_over_p50_1k": ratio,
        "memory_per_tool_kb_1m": per_tool_kb,
    })
}

/// The RSS (kB) of a process of its own that opened `store` and searched
/// it ([`rss_child`]); `standin`: the store's rows are the stand-in's.
fn rss_of(store: &Path, tools: usize, standin: bool) -> Option<u64> {
    if !store.exists() {
        return None;
    }
    let exe = std::env::current_exe().ok()?;
    let out = std::process::Command::new(exe)
        .arg("--bench")
        .env("TOOLGRAPH_PERF_RSS_OF", store)
        .env(
            "TOOLGRAPH_PERF_RSS_STANDIN",
            if standin { "1" } else { "0" },
        )
        .env("TOOLGRAPH_PERF_RSS_TOOLS", tools.to_string())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let rss = text
        .lines()
        .find_map(|l| l.strip_prefix("rss_kb "))
        .and_then(|v| v.trim().parse().ok());
    if rss.is_none() {
        eprintln!(
            "perf: no RSS from the child for {}: {}",
            store.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    rss
}

/// The child's side of [`rss_of`]: open the store of the synth's `tools`
/// catalog, search, print `rss_kb N`.
pub fn rss_child(store: &Path, tools: usize, model: &Arc<FastEmbedder>, standin: bool) {
    let embedder: Arc<dyn Embedder> = if standin {
        Arc::new(StandIn::new(model.clone()))
    } else {
        model.clone()
    };
    let engine = open(store, embedder);
    let queries = store
        .parent()
        .map(|dir| catalog(dir, tools, 7).1)
        .map(|q| read_queries(&q))
        .unwrap_or_default();
    for (q, _) in queries.iter().take(RSS_SEARCHES) {
        let req = SearchRequest {
            text: q.clone(),
            limit: 10,
            ..SearchRequest::default()
        };
        std::hint::black_box(engine.search(&req).unwrap_or_else(|e| panic!("{e}")));
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let rss = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .map(|v| v.trim().trim_end_matches("kB").trim().to_string())
        .unwrap_or_default();
    println!("rss_kb {rss}");
}
