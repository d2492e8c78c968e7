//! toolgraph: find and disambiguate the right tool for an AI planner.
//!
//! Tools are registered as entity constellations in an RDF store; requests
//! are parsed into mentions and ranked jointly by graph traversal, vector
//! similarity and BM25. See `README.md` and `../shared/DESIGN.md`.

mod constellation;
mod error;
mod extract;
mod model;
mod vocab;

pub use constellation::{Constellation, NewTerm, build, tool_iri};
pub use error::{Error, Location, Result};
pub use extract::{Extractor, LexEntry, Lexicon, TermKind, lemma, split_identifier};
pub use model::{
    Link, Mention, MentionKind, Param, Provenance, Resolved, Tool, ToolDescriptor, Violation,
};
/// Ontology IRIs as constants (`iri::ent::FLIGHT`, `iri::VERB`, …).
pub mod iri {
    pub use crate::vocab::*;
}
