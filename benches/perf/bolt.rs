//! The graph server at scale (issue 42): the largest catalog registered
//! into an empty database on a Bolt server (ArcadeDB, started by
//! `scripts/perf.sh`), the graph side only as `fresh.rs` measures it on the
//! embedded store in the same run; then the tool vectors the measured store
//! computed for the same catalog put on the server (what a replica with the
//! model does after embedding them); then a replica opened with the model, as
//! a new `serve` process does: its time and how many tools it embedded
//! (the server's vectors must answer for all of them).
//!
//! Run by `scripts/perf.sh` as this bench with `TOOLGRAPH_PERF_BOLT` set to
//! the server's `bolt://` address (`TOOLGRAPH_PERF_BOLT_DATABASE`, user
//! `root`, password in `TOOLGRAPH_GRAPH_PASSWORD`).
//!
//! With `TOOLGRAPH_PERF_BOLT_WARMUP_DATABASE` (a second, empty database on
//! the same server) the 10k catalog is registered there first: a graph
//! server runs for days, and a JVM's first large transactions also pay for
//! compiling its code (at 10k, C2 compilation was 8 of the server's 18 s
//! of CPU on a just-started ArcadeDB). That registration's time is reported
//! as `warmup_register_10k_s`, the cold figure.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Map, Value, json};
use toolgraph::embed::{FastEmbedder, read_vectors};
use toolgraph::graph::GraphServer;
use toolgraph::{Embeddings, Engine, EngineOptions};

use super::fresh::register;
use super::{catalog, round3};

/// The report of this run when it is the graph-server run (the server
/// `scripts/perf.sh` started named in the environment; never the smoke
/// run), at the largest size.
pub fn when_asked(
    dir: &Path,
    sizes: &[usize],
    model: &Arc<FastEmbedder>,
    smoke: bool,
) -> Option<Map<String, Value>> {
    let url = std::env::var("TOOLGRAPH_PERF_BOLT")
        .ok()
        .filter(|_| !smoke)?;
    let server = GraphServer {
        url,
        user: "root".into(),
        password: std::env::var("TOOLGRAPH_GRAPH_PASSWORD").unwrap_or_default(),
        database: std::env::var("TOOLGRAPH_PERF_BOLT_DATABASE")
            .unwrap_or_else(|_| "toolgraph".into()),
    };
    let n = sizes.iter().copied().max().unwrap_or(100_000);
    let warmup = std::env::var("TOOLGRAPH_PERF_BOLT_WARMUP_DATABASE")
        .ok()
        .map(|database| {
            warm_up(
                dir,
                &GraphServer {
                    database,
                    ..server.clone()
                },
            )
        });
    let mut bolt = measure(dir, n, &server, model);
    if let (Some(s), Value::Object(m)) = (warmup, &mut bolt) {
        m.insert("warmup_register_10k_s".into(), json!(round3(s)));
    }
    let mut report = Map::new();
    report.insert("bolt".into(), bolt);
    Some(report)
}

/// Registers the 10k catalog into the warm-up database (graph side, as
/// measured below): its time, on the server as it was started.
fn warm_up(dir: &Path, server: &GraphServer) -> f64 {
    let engine = open_on(server, Embeddings::Off);
    let s = register(&engine, &catalog(dir, 10_000, 7).0);
    eprintln!("perf: bolt: warm-up, 10k tools registered in {s:.1} s");
    s
}

/// An engine whose catalog is `server`'s database.
fn open_on(server: &GraphServer, embeddings: Embeddings) -> Engine {
    let mut opts = EngineOptions::memory(embeddings);
    opts.graph = Some(server.clone());
    Engine::open(opts).unwrap_or_else(|e| panic!("{e}"))
}

pub fn measure(dir: &Path, n: usize, server: &GraphServer, model: &Arc<FastEmbedder>) -> Value {
    let tools = catalog(dir, n, 7).0;
    let engine = open_on(server, Embeddings::Off);
    assert_eq!(engine.catalog_size(), 0, "an empty database on the server");
    let register_s = register(&engine, &tools);
    let registered = engine.catalog_size();
    eprintln!("perf: bolt: {registered} tools registered in {register_s:.1} s");

    // The vectors the measured store computed for the same catalog, put on
    // the server as a replica with the model would after embedding them.
    let t = Instant::now();
    let stored = read_vectors(&dir.join(format!("store-{n}")).join("vectors"))
        .unwrap_or_else(|| panic!("no vectors in the measured store of {n} tools"));
    let iris: HashMap<String, String> = engine
        .store()
        .tools()
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|t| (t.id, t.iri))
        .collect();
    let rows: Vec<(String, String, Vec<f32>)> = (0..stored.hashes.len())
        .filter_map(|row| {
            let id = stored.index.ids().get(row)?;
            Some((
                iris.get(id)?.clone(),
                stored.hashes.get(row)?.to_string(),
                stored.index.get(id)?,
            ))
        })
        .collect();
    engine
        .store()
        .put_tool_vectors(&stored.model_id, &rows)
        .unwrap_or_else(|e| panic!("{e}"));
    let vectors_s = t.elapsed().as_secs_f64();
    drop(engine);

    let t = Instant::now();
    let replica = open_on(server, Embeddings::Custom(model.clone()));
    let open_s = t.elapsed().as_secs_f64();
    let reopened = replica.catalog_size();
    let embedded_on_open = replica.embeddings_computed();
    drop(replica);
    assert_eq!(registered, reopened, "the replica sees what was registered");
    json!({
        "server": "ArcadeDB (Bolt plugin), loopback",
        "tools": registered,
        "register_s": round3(register_s),
        "vectors_put_s": round3(vectors_s),
        "vectors_put": rows.len(),
        "replica_open_s": round3(open_s),
        "embedded_on_open": embedded_on_open,
    })
}
