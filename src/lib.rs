#![allow(clippy::result_large_err)] // errors carry their location; they are cold
//! toolgraph: find and disambiguate the right tool for an AI planner.
//!
//! Tools are registered as entity constellations in a graph store
//! (oxigraph on disk by default, or a Bolt graph server); requests are
//! ranked jointly by graph traversal, MiniLM vector similarity and BM25,
//! with disambiguation and calibrated confidence, over the tools the
//! caller's policy lets it see. ARCHITECTURE.md follows a request through
//! the modules.
//!
//! The public API is the service face and what sits beside it:
//! - [`engine`]: the [`Engine`] and every request and response type;
//! - [`airlock`]: sources of external tools, their review and health;
//! - [`server`]: the HTTP API and MCP endpoint over both;
//! - [`error`]: the typed errors; [`model`]: tools and constellations;
//! - [`eval`] and [`synth`]: the accuracy harness and synthetic catalogs.

pub mod airlock;
pub mod engine;
pub mod error;
pub mod eval;
pub mod gateway;
#[cfg(feature = "neo4j")]
pub mod migrate;
pub mod model;
pub mod screen;
pub mod server;
pub mod synth;

pub use engine::{
    Caller, Decision, DomainCount, Embeddings, Engine, EngineOptions, ListRequest, ListedTool,
    LoadOutcome, Match, Prompt, PromptRequest, Resolution, ResolveRequest, SearchRequest,
    SearchResponse, SelectRequest, ToolFilter, ToolPage,
};
pub use error::{Error, Result};

// Building blocks below the service face. Public only for the benchmarks,
// fuzz targets and integration tests that measure them one by one; not a
// stable API.
#[doc(hidden)]
pub mod alloc;
#[doc(hidden)]
pub mod constellation;
#[doc(hidden)]
pub mod embed;
#[doc(hidden)]
pub mod extract;
#[doc(hidden)]
pub mod graph;
#[doc(hidden)]
pub mod import;
#[doc(hidden)]
pub mod lexical;
#[doc(hidden)]
pub mod rank;
#[doc(hidden)]
pub mod vocab;

// Internal: the snapshot, the caller policy, turn selection, sessions.
mod catalog;
mod deadline;
mod par;
mod policy;
mod scope;
mod scratch;
mod select;
mod session;
