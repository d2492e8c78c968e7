//! Moving a catalog from the embedded store to a graph server: every
//! statement in one transaction, then the tool vectors as properties of the
//! tool nodes, so that replicas started on the server embed nothing.

use crate::embed::read_vectors;
use crate::error::{Error, Result};
use crate::graph::{GraphStore, Neo4jStore, OxigraphStore};
use serde::Serialize;
use std::collections::HashMap;
use std::path::Path;

/// What a migration copied.
#[derive(Debug, Clone, Serialize)]
pub struct Migration {
    pub statements: usize,
    pub sources: usize,
    pub tools: usize,
    /// Tool vectors copied (0 when the data dir has none).
    pub vectors: usize,
    /// The model that computed them (empty when none).
    pub model_id: String,
}

/// Copies the embedded store of `data_dir` (its `graph/` and `vectors/`)
/// onto `to`. A server that already holds a catalog is refused unless
/// `replace`.
/// [`migrate`] to the graph server `to` (connected here).
pub fn migrate_to(
    data_dir: &Path,
    to: &crate::graph::GraphServer,
    replace: bool,
) -> Result<Migration> {
    migrate(data_dir, &Neo4jStore::connect(to)?, replace)
}

pub fn migrate(data_dir: &Path, to: &Neo4jStore, replace: bool) -> Result<Migration> {
    let graph_dir = data_dir.join("graph");
    if !graph_dir.is_dir() {
        return Err(Error::not_found(
            crate::error::Kind::Store,
            format!("{} (a data dir with graph/)", data_dir.display()),
        ));
    }
    let source = OxigraphStore::open(&graph_dir)?;
    let report = to.copy_from(&source, replace)?;
    let mut migration = Migration {
        statements: report.quads_after,
        sources: report.sources,
        tools: report.tools,
        vectors: 0,
        model_id: String::new(),
    };
    if let Some(stored) = read_vectors(&data_dir.join("vectors")) {
        let iris: HashMap<String, String> =
            source.tools()?.into_iter().map(|t| (t.id, t.iri)).collect();
        let rows: Vec<(String, String, Vec<f32>)> = stored
            .index
            .ids()
            .iter()
            .zip(stored.hashes.iter())
            .enumerate()
            .filter_map(|(row, (id, hash))| {
                Some((
                    iris.get(id)?.clone(),
                    hash.to_string(),
                    stored.index.row(row)?,
                ))
            })
            .collect();
        to.put_tool_vectors(&stored.model_id, &rows)?;
        migration.vectors = rows.len();
        migration.model_id = stored.model_id;
    }
    Ok(migration)
}
