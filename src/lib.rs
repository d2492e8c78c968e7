#![allow(clippy::result_large_err)] // errors carry their location; they are cold
//! toolgraph: find and disambiguate the right tool for an AI planner.
//!
//! Tools are registered as entity constellations in a graph store
//! ([`graph`]: oxigraph on disk by default); requests are parsed into
//! mentions ([`extract`]: a nom extractor over the ontology's labels) and
//! ranked jointly by graph traversal, MiniLM vector similarity ([`embed`])
//! and BM25 ([`lexical`]), with disambiguation and calibrated confidence
//! ([`rank`]), over the tools the caller may see ([`policy`] fixes a
//! [`scope`] before anything ranks). The
//! [`Engine`] is sync and orchestrates; [`server`] wraps it in an axum HTTP
//! API. See ARCHITECTURE.md for the flow through the modules.

pub mod airlock;
pub mod alloc;
mod catalog;
pub mod constellation;
pub mod embed;
pub mod engine;
pub mod error;
pub mod eval;
pub mod extract;
pub mod graph;
pub mod import;
pub mod lexical;
#[cfg(feature = "neo4j")]
pub mod migrate;
pub mod model;
pub mod policy;
pub mod rank;
pub mod scope;
pub mod select;
pub mod server;
mod session;
pub mod synth;
pub mod vocab;

pub use engine::{
    Decision, DomainCount, Embeddings, Engine, EngineOptions, ListRequest, ListedTool, LoadOutcome,
    Match, Prompt, PromptRequest, Resolution, ResolveRequest, SearchRequest, SearchResponse,
    SelectRequest, ToolFilter, ToolPage,
};
pub use error::{Error, Result};
pub use policy::Caller;
