//! The library's error type.

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
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The store failed (RocksDB, transaction).
    #[error("store: {0}")]
    Store(String),
    /// A SPARQL query from the user or from `queries/` failed.
    #[error("sparql: {0}")]
    Sparql(String),
    /// The embedding model or ONNX Runtime is missing or broken.
    #[error("{0}")]
    Model(String),
    /// A request the engine cannot answer as asked (unknown tool, bad option).
    #[error("{0}")]
    Invalid(String),
    /// Seed constraints failed; the store was left unchanged.
    #[error("{} constraint violation(s); nothing was loaded", .0.len())]
    Violations(Vec<crate::Violation>),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
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
