//! Shared fixtures for the integration tests.

use std::path::{Path, PathBuf};
use toolgraph::graph::{GraphStore, OxigraphStore, Source, SourceData};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every Turtle file under the bundled ontology/ and seeds/, as sources.
pub fn turtle_sources(dirs: &[&str]) -> Vec<Source> {
    let mut files =
        toolgraph::import::collect_files(&dirs.iter().map(|d| root().join(d)).collect::<Vec<_>>())
            .unwrap();
    files.retain(|f| f.extension().is_some_and(|e| e == "ttl"));
    files.iter().map(|f| source(f)).collect()
}

pub fn source(path: &Path) -> Source {
    Source {
        name: path
            .strip_prefix(root())
            .unwrap_or(path)
            .display()
            .to_string(),
        data: SourceData::Turtle(std::fs::read_to_string(path).unwrap()),
    }
}

/// An in-memory store with the bundled ontology and seeds.
pub fn seeded_store() -> OxigraphStore {
    let store = OxigraphStore::memory().unwrap();
    store.load(&turtle_sources(&["ontology", "seeds"])).unwrap();
    store
}
