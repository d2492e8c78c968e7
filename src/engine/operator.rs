//! What the command line's operator commands ask: a tool's constellation,
//! a dry-run import, validation of files, the vector index's health, one
//! text's embedding. Through the engine, so a transport names no store,
//! importer or embedder.

use super::Engine;
use crate::embed::{Embedder, FastEmbedder, IndexHealth};
use crate::error::{Error, Kind, Result};
use crate::graph::{GraphStore, OxigraphStore, SourceData};
use crate::import::{self, Format};
use crate::model::{Constellation, Violation};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What `validate` found in a set of files.
#[derive(Debug, Clone, Serialize)]
pub struct Validation {
    pub files: usize,
    pub quads: usize,
    pub tools: usize,
    /// Seed-constraint violations (empty: valid).
    pub violations: Vec<Violation>,
}

/// Checks files (Turtle syntax, manifests, the seed constraints) in a
/// scratch store: a syntax error is an error naming `file:line:col`,
/// violations come back listed.
pub fn validate(paths: &[PathBuf]) -> Result<Validation> {
    let files = import::collect_files(paths)?;
    let engine = Engine::open(super::EngineOptions::memory(super::Embeddings::Off))?;
    let sources = engine.prepare(&files, None)?;
    let scratch = OxigraphStore::memory()?;
    scratch.load_unchecked(&sources)?;
    let mut violations = scratch.validate()?;
    for v in &mut violations {
        v.location = super::locate::locate(&sources, v);
    }
    Ok(Validation {
        files: files.len(),
        quads: scratch.len()?,
        tools: scratch.tools()?.len(),
        violations,
    })
}

/// One text's embedding by the model in `model_dir`: its model id and
/// vector.
pub fn embed_text(model_dir: &Path, text: &str) -> Result<(String, Vec<f32>)> {
    let model = FastEmbedder::load(model_dir)?;
    let v = model.embed_query(text)?;
    Ok((model.model_id().to_string(), v))
}

impl Engine {
    /// One tool's constellation (by name, id or IRI) as N-Triples lines.
    pub fn constellation(&self, key: &str) -> Result<Vec<String>> {
        let tool = self
            .tool(key)
            .ok_or_else(|| Error::not_found(Kind::Tool, key))?;
        self.store.constellation(&tool.iri)
    }

    /// The constellations files would create (nothing is written).
    pub fn dry_run(&self, paths: &[PathBuf], format: Option<Format>) -> Result<Vec<Constellation>> {
        let files = import::collect_files(paths)?;
        Ok(self
            .prepare(&files, format)?
            .into_iter()
            .filter_map(|s| match s.data {
                SourceData::Constellations(items) => Some(items),
                SourceData::Turtle(_) => None,
            })
            .flatten()
            .collect())
    }

    /// The stored vector index against the catalog and the model in
    /// `model_dir`, read as stored (nothing is re-embedded).
    pub fn index_health(&self, model_dir: &Path) -> Result<IndexHealth> {
        let Some(data) = &self.data_dir else {
            return Err(Error::unavailable_msg(
                "the vector index lives in the data dir; --memory has none, and with --graph the vectors are properties of the tool nodes on the server",
            ));
        };
        let model = FastEmbedder::load(model_dir)?;
        crate::embed::index_health(&data.join("vectors"), &self.tools(), model.model_id())
    }
}
