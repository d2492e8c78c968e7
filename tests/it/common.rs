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

/// Airlock options for tests whose upstreams listen on loopback and whose
/// sources are files in the repository or a temporary folder: loopback
/// allowed, every file under the root. (The reach itself is tested in
/// `airlock::the_airlock_reaches_only_what_the_operator_allows`.)
pub fn test_airlock() -> toolgraph::airlock::AirlockOptions {
    toolgraph::airlock::AirlockOptions {
        reach: toolgraph::airlock::reach::Reach {
            allow: vec!["127.0.0.1".into(), "localhost".into()],
            source_root: Some(PathBuf::from("/")),
        },
        ..toolgraph::airlock::AirlockOptions::default()
    }
}

/// The codes of a review item's or a screening report's `reasons`.
pub fn reason_codes(item: &serde_json::Value) -> Vec<&str> {
    item["reasons"]
        .as_array()
        .map(|a| a.iter().filter_map(|r| r["code"].as_str()).collect())
        .unwrap_or_default()
}
