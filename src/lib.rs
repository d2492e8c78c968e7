//! toolgraph: find and disambiguate the right tool for an AI planner.
//!
//! Tools are registered as entity constellations in an RDF store; requests
//! are parsed into mentions and ranked jointly by graph traversal, vector
//! similarity and BM25. See `README.md` and `../shared/DESIGN.md`.

mod embed;
mod error;
mod model;
mod vocab;

pub use embed::{
    Embedder, FastEmbedder, HashEmbedder, IndexHealth, SyncReport, VectorIndex, default_model_dir,
    embedding_text, index_health, sync_index,
};
pub use error::{Error, Location, Result};
pub use model::{
    Link, Mention, MentionKind, Param, Provenance, Resolved, Tool, ToolDescriptor, Violation,
};
/// Ontology IRIs (namespaces and schema terms).
pub mod iri {
    pub use crate::vocab::*;
}
