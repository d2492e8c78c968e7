//! The library's error type.

use crate::model::Violation;
use std::path::PathBuf;

/// A place in an input file: `file:line:col` or a JSON/YAML pointer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub file: String,
    pub line: Option<u64>,
    pub column: Option<u64>,
    /// JSON path or OpenAPI pointer, when the input is structured.
    pub pointer: Option<String>,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(col) = self.column {
                write!(f, ":{col}")?;
            }
        }
        if let Some(p) = &self.pointer {
            write!(f, " at {p}")?;
        }
        Ok(())
    }
}

/// Everything that can go wrong, by kind: what the caller did (invalid
/// input with its place, not found, forbidden, conflict) apart from what
/// the service could not do (unavailable, store, model). The HTTP layer maps
/// each kind to one status and a stable code (`server/error.rs`).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Malformed input (Turtle, JSON, YAML, OpenAPI, JSONL), with the place.
    #[error("{location}: {message}")]
    Parse { location: Location, message: String },
    /// A manifest parsed but a tool in it is unusable.
    #[error("{location}: tool `{tool}`: {message}")]
    InvalidTool {
        location: Location,
        tool: String,
        message: String,
    },
    /// A request the engine cannot answer as asked: a bad field or option.
    #[error("{message}")]
    Invalid {
        /// The request field at fault (`candidates`, `mode`), when one is.
        field: Option<String>,
        message: String,
    },
    /// The thing asked for does not exist (or is not visible to the caller:
    /// the two are never told apart).
    #[error("no {kind} named `{name}`")]
    NotFound { kind: &'static str, name: String },
    /// The caller may not do this.
    #[error("{0}")]
    Forbidden(String),
    /// The request conflicts with the current state (a name already taken,
    /// a change made meanwhile).
    #[error("{0}")]
    Conflict(String),
    /// A part the request needs is not ready (no model, a store that does not
    /// answer, a time limit hit).
    #[error("{0}")]
    Unavailable(String),
    /// Seed constraints failed; the store was left unchanged.
    #[error("{} constraint violation(s); nothing was loaded", .0.len())]
    Violations(Vec<Violation>),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The store failed (RocksDB, transaction).
    #[error("store: {0}")]
    Store(String),
    /// A SPARQL query from `queries/` failed.
    #[error("sparql: {0}")]
    Sparql(String),
    /// The embedding model or ONNX Runtime is missing or broken.
    #[error("{0}")]
    Model(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A request the engine cannot answer as asked.
    pub fn invalid(message: impl Into<String>) -> Self {
        Error::Invalid {
            field: None,
            message: message.into(),
        }
    }

    /// A request field that is wrong, named.
    pub fn invalid_field(field: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Invalid {
            field: Some(field.into()),
            message: message.into(),
        }
    }

    /// Nothing of this kind has this name (for this caller).
    pub fn not_found(kind: &'static str, name: impl Into<String>) -> Self {
        Error::NotFound {
            kind,
            name: name.into(),
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
    pub(crate) fn parse(
        file: impl Into<String>,
        line: Option<u64>,
        column: Option<u64>,
        message: impl Into<String>,
    ) -> Self {
        Error::Parse {
            location: Location {
                file: file.into(),
                line,
                column,
                pointer: None,
            },
            message: message.into(),
        }
    }
    pub(crate) fn parse_at(
        file: impl Into<String>,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Error::Parse {
            location: Location {
                file: file.into(),
                line: None,
                column: None,
                pointer: Some(pointer.into()),
            },
            message: message.into(),
        }
    }
}
