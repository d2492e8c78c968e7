//! toolgraph: find and disambiguate the right tool for an AI planner.
//!
//! Tools are registered as entity constellations in an RDF store; requests
//! are parsed into mentions and ranked jointly by graph traversal, vector
//! similarity and BM25. See `README.md` and `../shared/DESIGN.md`.

mod error;
mod eval;
mod lexical;
mod model;
pub mod vocab;

pub use error::{Error, Location, Result};
pub use eval::{
    EvalOptions, EvalQuery, Metrics, Ranked, Regression, Report, compare_to_baseline, evaluate,
    load_queries, plot_svg, sample, to_markdown,
};
pub use lexical::{Bm25, NameIndex, is_stopword, tokenize};
pub use model::{
    Link, Mention, MentionKind, Param, Provenance, Resolved, Tool, ToolDescriptor, Violation,
};
pub use vocab as iri;
