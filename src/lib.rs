#![allow(clippy::result_large_err)] // errors carry their location; they are cold
//! toolgraph: find and disambiguate the right tool for an AI planner.
//!
//! Tools are registered as entity constellations in an RDF store (oxigraph);
//! requests are parsed into mentions (a nom extractor over the ontology's
//! labels) and ranked jointly by SPARQL graph traversal, MiniLM vector
//! similarity and BM25, with disambiguation and calibrated confidence.
//! The [`Engine`] is sync; [`serve`] wraps it in an axum HTTP API.

mod catalog;
mod constellation;
mod embed;
mod engine;
mod error;
pub mod eval;
mod extract;
mod graph;
mod import;
mod lexical;
mod model;
mod rank;
mod server;
mod vocab;

pub use constellation::{Constellation, NewTerm, build as build_constellation, tool_iri};
pub use embed::{
    Embedder, FastEmbedder, HashEmbedder, IndexHealth, SyncReport, VectorIndex, default_model_dir,
    embedding_text, index_health, sync_index,
};
pub use engine::{
    Decision, Embeddings, Engine, EngineOptions, LoadOutcome, Match, Resolution, ResolveRequest,
    SearchRequest, SearchResponse, collect_files, constellation_dot, constellation_summary,
    constellations_of,
};
pub use error::{Error, Location, Result};
pub use extract::{Extractor, LexEntry, Lexicon, TermKind};
pub use graph::{
    GraphHit, GraphStore, LoadReport, OntologyFacts, OxigraphStore, Relation, Source, SourceData,
    SparqlOutput,
};
pub use import::{Format, detect_format, parse_manifest};
pub use lexical::{Bm25, NameIndex, is_stopword, tokenize};
pub use model::{
    Link, Mention, MentionKind, Param, Provenance, Resolved, Tool, ToolDescriptor, Violation,
};
pub use rank::{
    Calibration, CalibrationReport, Clarify, Contender, GraphPath, Mode, RankConfig,
    ReliabilityBin, ScoreDetails, fit_calibration,
};
pub use server::{router, serve};

/// Ontology IRIs (namespaces and schema terms).
pub mod iri {
    pub use crate::vocab::*;
}
