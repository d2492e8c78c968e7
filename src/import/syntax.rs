//! JSON and YAML into `serde_json::Value`, with every syntax error naming
//! the file, line, column and the path it happened at.

use super::escape_pointer;
use crate::error::{Error, Location, Result};
use serde_json::Value;

/// Parses JSON into a `Value`, turning syntax errors into `Error::Parse`
/// with line, column and the JSON path where the error happened.
/// `line_offset` shifts line numbers (JSONL lines are parsed one by one).
pub(super) fn parse_json(file: &str, content: &str, line_offset: u64) -> Result<Value> {
    let mut de = serde_json::Deserializer::from_str(content);
    let res: std::result::Result<Value, _> = serde_path_to_error::deserialize(&mut de);
    let value = match res {
        Ok(v) => v,
        Err(e) => {
            let pointer = path_to_pointer(e.path());
            let inner = e.into_inner();
            return Err(json_error(file, &inner, line_offset, pointer));
        }
    };
    // Trailing characters after the value.
    if let Err(e) = de.end() {
        return Err(json_error(file, &e, line_offset, None));
    }
    Ok(value)
}

pub(super) fn json_error(
    file: &str,
    e: &serde_json::Error,
    line_offset: u64,
    pointer: Option<String>,
) -> Error {
    let (line, col) = (e.line() as u64, e.column() as u64);
    let mut message = e.to_string();
    let suffix = format!(" at line {line} column {col}");
    if let Some(stripped) = message.strip_suffix(&suffix) {
        message = stripped.to_string();
    }
    Error::Parse {
        location: Location {
            file: file.to_string(),
            line: (line > 0).then_some(line + line_offset),
            column: (line > 0).then_some(col),
            pointer,
        },
        message,
    }
}

/// Parses YAML into a JSON `Value` (keys become strings), with line, column
/// and path on errors.
pub(super) fn parse_yaml(file: &str, content: &str) -> Result<Value> {
    check_flow_depth(file, content)?;
    let de = serde_yaml_ng::Deserializer::from_str(content);
    let res: std::result::Result<Value, _> = serde_path_to_error::deserialize(de);
    res.map_err(|e| {
        let pointer = path_to_pointer(e.path());
        let inner = e.into_inner();
        let loc = inner.location();
        let mut message = inner.to_string();
        if let Some(l) = &loc {
            let suffix = format!(" at line {} column {}", l.line(), l.column());
            if let Some(stripped) = message.strip_suffix(&suffix) {
                message = stripped.to_string();
            }
        }
        Error::Parse {
            location: Location {
                file: file.to_string(),
                line: loc.as_ref().map(|l| l.line() as u64),
                column: loc.as_ref().map(|l| l.column() as u64),
                pointer,
            },
            message,
        }
    })
}

/// Deepest `[`/`{` nesting accepted in YAML (the YAML parser is quadratic in
/// nesting depth; the deserializer gives up at 128 levels anyway).
pub(super) const MAX_FLOW_DEPTH: usize = 512;

/// Rejects YAML whose flow collections nest absurdly deep, before parsing.
/// Brackets inside quoted strings are counted too: a real document never
/// comes near the limit.
pub(super) fn check_flow_depth(file: &str, content: &str) -> Result<()> {
    let mut depth = 0usize;
    for (i, line) in content.lines().enumerate() {
        for (col, c) in line.chars().enumerate() {
            match c {
                '[' | '{' => {
                    depth += 1;
                    if depth > MAX_FLOW_DEPTH {
                        return Err(Error::parse(
                            file,
                            Some(i as u64 + 1),
                            Some(col as u64 + 1),
                            format!("nesting deeper than {MAX_FLOW_DEPTH} levels"),
                        ));
                    }
                }
                ']' | '}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
    }
    Ok(())
}

/// `tools[3].name` -> `/tools/3/name`; `None` at the root.
pub(super) fn path_to_pointer(path: &serde_path_to_error::Path) -> Option<String> {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for seg in path.iter() {
        let token = match seg {
            Segment::Seq { index } => index.to_string(),
            Segment::Map { key } => escape_pointer(key),
            Segment::Enum { variant } => escape_pointer(variant),
            // A key was being read when the error hit: nothing to name.
            Segment::Unknown => continue,
        };
        out.push('/');
        out.push_str(&token);
    }
    (!out.is_empty()).then_some(out)
}
