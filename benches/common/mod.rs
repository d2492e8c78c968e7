//! Shared by the benches: the crate root and an in-memory engine with the
//! real model and the bundled ontology (constraints off: benchmark catalogs
//! are imported as they are).

use std::path::PathBuf;

use toolgraph::embed::default_model_dir;
use toolgraph::import::Format;
use toolgraph::{Embeddings, Engine, EngineOptions};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[allow(dead_code)] // not every bench opens one
pub fn engine_with_ontology() -> Engine {
    let mut opts = EngineOptions::memory(Embeddings::Model(default_model_dir()));
    opts.strict = false;
    let engine = Engine::open(opts).unwrap_or_else(|e| panic!("{e}"));
    engine
        .load_paths(&[root().join("ontology")], Some(Format::Turtle))
        .unwrap_or_else(|e| panic!("{e}"));
    engine
}
