//! toolgraph: find and disambiguate the right tool for an AI planner.
//!
//! Tools are registered as entity constellations in an RDF store; requests
//! are parsed into mentions and ranked jointly by graph traversal, vector
//! similarity and BM25. See `README.md` and `../shared/DESIGN.md`.

mod error;
mod import;
mod model;
mod vocab;

pub use error::{Error, Location, Result};
pub use import::{Format, detect_format, parse_manifest};
pub use model::{
    Link, Mention, MentionKind, Param, Provenance, Resolved, Tool, ToolDescriptor, Violation,
};
/// Ontology IRIs (namespaces and schema terms).
pub mod iri {
    pub use crate::vocab::*;
}
