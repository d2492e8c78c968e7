//! The largest catalog registered into an empty store (the graph side:
//! parse, constellations, screening, store write, snapshot; the model is
//! measured elsewhere), then the store opened again with its vectors cached,
//! as a restart or a new replica does. Large registrations of new sources take the bulk path
//! (`src/graph/oxigraph/bulk.rs`); opening reads the tools by index scans.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};
use toolgraph::embed::FastEmbedder;
use toolgraph::{Embeddings, Engine, EngineOptions};

use super::{root, round3};

/// The ontology and a catalog's tools registered in one load (how every
/// registration of these benches goes, on either store): its seconds.
pub fn register(engine: &Engine, tools: &Path) -> f64 {
    let t = Instant::now();
    engine
        .load_paths(&[root().join("ontology"), tools.to_path_buf()], None)
        .unwrap_or_else(|e| panic!("{e}"));
    t.elapsed().as_secs_f64()
}

pub fn measure(dir: &Path, n: usize, tools: &Path, model: &Arc<FastEmbedder>) -> Value {
    let at = dir.join(format!("fresh-{n}"));
    let _ = std::fs::remove_dir_all(&at);
    let open = |embeddings: Embeddings| {
        let mut opts = EngineOptions::memory(embeddings);
        opts.data_dir = Some(at.clone());
        Engine::open(opts).unwrap_or_else(|e| panic!("{e}"))
    };
    // The graph side: the vectors are the measured store's, computed once
    // (an engine with a model keeps its vector file equal to its catalog,
    // so they are put in place after the registration).
    let engine = open(Embeddings::Off);
    let register_s = register(&engine, tools);
    let registered = engine.catalog_size();
    drop(engine);
    let cached = dir.join(format!("store-{n}")).join("vectors");
    std::fs::create_dir_all(at.join("vectors")).unwrap_or_else(|e| panic!("{e}"));
    for entry in std::fs::read_dir(&cached).unwrap_or_else(|e| panic!("{}: {e}", cached.display()))
    {
        let from = entry.unwrap_or_else(|e| panic!("{e}")).path();
        let to = at
            .join("vectors")
            .join(from.file_name().unwrap_or_default());
        std::fs::copy(&from, &to).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
    }
    let t = Instant::now();
    let engine = open(Embeddings::Custom(model.clone()));
    let open_s = t.elapsed().as_secs_f64();
    let reopened = engine.catalog_size();
    let embedded_on_open = engine.embeddings_computed();
    drop(engine);
    let _ = std::fs::remove_dir_all(&at);
    assert_eq!(
        registered, reopened,
        "the store opens with what was registered"
    );
    json!({
        "tools": registered,
        "register_s": round3(register_s),
        "open_s": round3(open_s),
        "embedded_on_open": embedded_on_open,
    })
}
