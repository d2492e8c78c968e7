//! Importers: tool manifests (MCP `tools/list`, OpenAPI 3.x, JSONL) ->
//! [`ToolDescriptor`]s, with errors that point into the input.
//!
//! Every importer is all-or-nothing: a manifest with one bad tool yields an
//! error for the whole file and imports nothing. Errors carry the file, the
//! line and column for syntax errors, and a JSON pointer (or JSONL line) plus
//! the tool name for semantic problems.
//!
//! # toolgraph extension
//! MCP tools (in `_meta["x-toolgraph"]` or a top-level `x-toolgraph` key) and
//! OpenAPI operations (`x-toolgraph` on the operation) may declare
//! `{"dependsOn": [..], "integrations": [..], "categories": [..], "tags": [..]}`;
//! they become `depends_on`, `integrations`, `categories` and extra `tags`.

// `crate::error::Error` is shared and carries a `Location`; errors are the cold path.
#![allow(clippy::result_large_err)]

mod files;
mod jsonl;
mod mcp;
mod openapi;
mod schema;
mod security;
mod syntax;

pub use files::{Input, bundled, collect_files, parse_input, read_files};
use schema::{NoRefs, Resolver, schema_params, schema_type};
use syntax::{parse_json, parse_yaml};

use crate::error::{Error, Location, Result};
use crate::model::{Dependency, ToolDescriptor, Upstream};
use serde_json::Value;
use std::collections::HashSet;
use std::path::Path;

/// Longest description (in bytes) kept; longer text is cut at a char boundary.
const MAX_TEXT: usize = 8 * 1024;
/// Longest name, id or tag (in bytes) kept.
const MAX_NAME: usize = 512;

/// A manifest format `parse_manifest` understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// Turtle seeds: loaded by the store, not by an importer.
    Turtle,
    /// An MCP `tools/list` result (bare, `{"tools": [..]}` or JSON-RPC envelope).
    Mcp,
    /// OpenAPI 3.0 / 3.1, JSON or YAML.
    OpenApi,
    /// One JSON tool object per line (the benchmark datasets' `tools.jsonl`).
    Jsonl,
}

impl Format {
    /// The format a Content-Type names, when it names one.
    pub fn of_content_type(content_type: &str) -> Option<Format> {
        let ct = content_type.split(';').next().unwrap_or("").trim();
        match ct.to_ascii_lowercase().as_str() {
            "text/turtle" | "application/x-turtle" => Some(Format::Turtle),
            "application/x-ndjson"
            | "application/jsonl"
            | "application/x-jsonlines"
            | "application/jsonlines" => Some(Format::Jsonl),
            "application/yaml"
            | "application/x-yaml"
            | "text/yaml"
            | "application/openapi+yaml"
            | "application/vnd.oai.openapi" => Some(Format::OpenApi),
            _ => None,
        }
    }
}

impl std::str::FromStr for Format {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "turtle" | "ttl" => Ok(Format::Turtle),
            "mcp" => Ok(Format::Mcp),
            "openapi" => Ok(Format::OpenApi),
            "jsonl" => Ok(Format::Jsonl),
            other => Err(Error::invalid_field(
                crate::error::Field::RegisterFormat,
                format!(
                    "unknown manifest format `{other}` (expected turtle, mcp, openapi or jsonl)"
                ),
            )),
        }
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Format::Turtle => "turtle",
            Format::Mcp => "mcp",
            Format::OpenApi => "openapi",
            Format::Jsonl => "jsonl",
        })
    }
}

/// Guesses a manifest's format from its extension and content.
///
/// `.ttl` is Turtle, `.jsonl`/`.ndjson` is JSONL; JSON or YAML with an
/// `openapi` key is OpenAPI; JSON with a `tools` array (optionally inside a
/// JSON-RPC `result`) or a bare array of `{name, inputSchema}` is MCP.
/// Returns `None` when nothing fits.
pub fn detect_format(path: &Path, content: &str) -> Option<Format> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    match ext.as_str() {
        "ttl" | "turtle" => return Some(Format::Turtle),
        "jsonl" | "ndjson" => return Some(Format::Jsonl),
        _ => {}
    }
    let body = content.trim_start_matches('\u{feff}').trim_start();
    if body.starts_with('{') || body.starts_with('[') {
        if let Ok(v) = serde_json::from_str::<Value>(body) {
            return sniff_json(&v);
        }
        // Several JSON objects, one per line: JSONL.
        let mut lines = body.lines().map(str::trim).filter(|l| !l.is_empty());
        if let (Some(first), Some(_)) = (lines.next(), lines.next())
            && matches!(serde_json::from_str::<Value>(first), Ok(Value::Object(_)))
        {
            return Some(Format::Jsonl);
        }
        // Broken JSON: guess from keys so the user gets the right parse error.
        if body.contains("\"openapi\"") {
            return Some(Format::OpenApi);
        }
        if body.contains("\"inputSchema\"") || body.contains("\"tools\"") {
            return Some(Format::Mcp);
        }
        return None;
    }
    if body.starts_with("@prefix") || body.starts_with("PREFIX") || body.starts_with("@base") {
        return Some(Format::Turtle);
    }
    if body
        .lines()
        .any(|l| l.starts_with("openapi:") || l.starts_with("\"openapi\":"))
    {
        return Some(Format::OpenApi);
    }
    None
}

fn sniff_json(v: &Value) -> Option<Format> {
    match v {
        Value::Object(m) => {
            if m.contains_key("openapi") {
                Some(Format::OpenApi)
            } else if m.get("tools").is_some_and(Value::is_array)
                || m.get("result")
                    .and_then(|r| r.get("tools"))
                    .is_some_and(Value::is_array)
            {
                Some(Format::Mcp)
            } else {
                None
            }
        }
        Value::Array(items) => {
            let mcp_like = |t: &Value| t.get("name").is_some() && t.get("inputSchema").is_some();
            (!items.is_empty() && items.iter().all(mcp_like)).then_some(Format::Mcp)
        }
        _ => None,
    }
}

/// Parses one manifest into tool descriptors; `file` names it in errors and
/// in each descriptor's `source`.
///
/// All-or-nothing: any syntax or semantic error fails the whole file.
/// Turtle is not handled here (the store loads it).
pub fn parse_manifest(file: &str, content: &str, format: Format) -> Result<Vec<ToolDescriptor>> {
    let content = content.strip_prefix('\u{feff}').unwrap_or(content);
    match format {
        Format::Turtle => Err(Error::invalid("turtle is loaded by the store")),
        Format::Mcp => mcp::parse(file, content),
        Format::OpenApi => openapi::parse(file, content),
        Format::Jsonl => jsonl::parse(file, content),
    }
}

// ---------------------------------------------------------------- helpers

/// Trims, collapses whitespace and caps `max` bytes (at a char boundary).
pub(crate) fn clean(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max));
    for word in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
        if out.len() > max {
            break;
        }
    }
    if out.len() > max {
        let mut cut = max;
        while cut > 0 && !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
        out.push('…');
    }
    out
}

fn clean_text(s: &str) -> String {
    clean(s, MAX_TEXT)
}

fn clean_name(s: &str) -> String {
    clean(s, MAX_NAME)
}

/// Escapes one JSON-pointer reference token (`~` -> `~0`, `/` -> `~1`).
pub(crate) fn escape_pointer(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// A semantic error about one tool.
fn invalid_tool(location: Location, tool: &str, message: impl Into<String>) -> Error {
    Error::InvalidTool {
        location,
        tool: tool.to_string(),
        message: message.into(),
    }
}

fn at_pointer(file: &str, pointer: &str) -> Location {
    Location {
        file: file.to_string(),
        line: None,
        column: None,
        pointer: Some(pointer.to_string()),
    }
}

/// An optional string field: absent or null -> `None`; not a string -> error.
fn opt_str<'a>(
    obj: &'a serde_json::Map<String, Value>,
    key: &str,
) -> Result<Option<&'a str>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(format!("`{key}` must be a string, found {}", kind(other))),
    }
}

/// An optional bool field: absent or null -> `None`; not a bool -> error.
fn opt_bool(obj: &serde_json::Map<String, Value>, key: &str) -> Result<Option<bool>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(other) => Err(format!("`{key}` must be a boolean, found {}", kind(other))),
    }
}

/// A string or an array of strings (non-strings rejected), cleaned, empty dropped.
fn str_list(v: Option<&Value>, key: &str) -> Result<Vec<String>, String> {
    match v {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(s)) => Ok(non_empty(clean_name(s)).into_iter().collect()),
        Some(Value::Array(items)) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                match item {
                    Value::String(s) => out.extend(non_empty(clean_name(s))),
                    other => {
                        return Err(format!("`{key}` must hold strings, found {}", kind(other)));
                    }
                }
            }
            Ok(out)
        }
        Some(other) => Err(format!(
            "`{key}` must be a string or an array of strings, found {}",
            kind(other)
        )),
    }
}

/// A dependency list: names, or objects `{name, dependence_type,
/// parameter_name, reason}` (also `tool`/`on`, `kind`/`type`,
/// `parameter`), or a mix; errors name the item (`key[2].name`).
fn dependency_list(v: Option<&Value>, key: &str) -> Result<Vec<Dependency>, String> {
    let items: &[Value] = match v {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(one @ (Value::String(_) | Value::Object(_))) => std::slice::from_ref(one),
        Some(other) => {
            return Err(format!(
                "`{key}` must be a name, an object or an array of them, found {}",
                kind(other)
            ));
        }
    };
    let mut out: Vec<Dependency> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let dep = match item {
            Value::String(s) => match non_empty(clean_name(s)) {
                Some(name) => Dependency::on(name),
                None => continue,
            },
            Value::Object(m) => {
                let text = |names: &[&str]| -> Result<Option<String>, String> {
                    for n in names {
                        match m.get(*n) {
                            None | Some(Value::Null) => {}
                            Some(Value::String(s)) => return Ok(non_empty(clean_text(s))),
                            Some(other) => {
                                return Err(format!(
                                    "`{key}[{i}].{n}` must be a string, found {}",
                                    kind(other)
                                ));
                            }
                        }
                    }
                    Ok(None)
                };
                let known = [
                    "name",
                    "tool",
                    "on",
                    "dependence_type",
                    "kind",
                    "type",
                    "parameter_name",
                    "parameter",
                    "reason",
                ];
                if let Some(unknown) = m.keys().find(|k| !known.contains(&k.as_str())) {
                    return Err(format!(
                        "`{key}[{i}]` has an unknown field `{unknown}` (expected name, dependence_type, parameter_name, reason)"
                    ));
                }
                let Some(on) = text(&["name", "tool", "on"])?.map(|n| clean_name(&n)) else {
                    return Err(format!("`{key}[{i}]` needs a `name`"));
                };
                Dependency {
                    on,
                    facts: crate::model::DependencyFacts {
                        kind: text(&["dependence_type", "kind", "type"])?,
                        parameter: text(&["parameter_name", "parameter"])?,
                        reason: text(&["reason"])?,
                    },
                }
            }
            other => {
                return Err(format!(
                    "`{key}[{i}]` must be a name or an object, found {}",
                    kind(other)
                ));
            }
        };
        match out.iter_mut().find(|d| d.on == dep.on) {
            // the same tool twice: keep the typed entry
            Some(seen) if !seen.is_qualified() => *seen = dep,
            Some(_) => {}
            None => out.push(dep),
        }
    }
    Ok(out)
}

fn non_empty(s: String) -> Option<String> {
    (!s.is_empty()).then_some(s)
}

/// Appends `items` to `into`, skipping ones already present.
fn push_unique(into: &mut Vec<String>, items: impl IntoIterator<Item = String>) {
    for item in items {
        if !into.contains(&item) {
            into.push(item);
        }
    }
}

/// The JSON type name of a value, for messages.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The toolgraph extension object: `{"dependsOn", "integrations",
/// "categories", "tags", "upstream"}`.
#[derive(Debug, Default)]
struct Extension {
    depends_on: Vec<Dependency>,
    integrations: Vec<String>,
    categories: Vec<String>,
    tags: Vec<String>,
    upstream: Option<Upstream>,
}

/// A declared upstream (`{"kind": "mcp", "url", "tool"}` or `{"kind":
/// "http", "method", "url", "params"?, "auth"?}`), its URL an http(s) one.
pub(crate) fn upstream(v: Option<&Value>, what: &str) -> Result<Option<Upstream>, String> {
    let Some(v) = v.filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let up: Upstream = serde_json::from_value(v.clone()).map_err(|e| format!("`{what}`: {e}"))?;
    let url = up.url();
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(format!(
            "`{what}.url` must be an http(s) URL, not `{}`",
            clean_name(url)
        ));
    }
    if let Upstream::Http { method, .. } = &up
        && !matches!(
            method.as_str(),
            "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "HEAD"
        )
    {
        return Err(format!(
            "`{what}.method` must be GET, POST, PUT, PATCH, DELETE or HEAD, not `{}`",
            clean_name(method)
        ));
    }
    Ok(Some(up))
}

fn extension(v: Option<&Value>) -> Result<Extension, String> {
    match v {
        None | Some(Value::Null) => Ok(Extension::default()),
        Some(Value::Object(m)) => {
            let depends = m.get("dependsOn").or_else(|| m.get("depends_on"));
            Ok(Extension {
                depends_on: dependency_list(depends, "x-toolgraph.dependsOn")?,
                integrations: str_list(m.get("integrations"), "x-toolgraph.integrations")?,
                categories: str_list(m.get("categories"), "x-toolgraph.categories")?,
                tags: str_list(m.get("tags"), "x-toolgraph.tags")?,
                upstream: upstream(m.get("upstream"), "x-toolgraph.upstream")?,
            })
        }
        Some(other) => Err(format!(
            "`x-toolgraph` must be an object, found {}",
            kind(other)
        )),
    }
}

/// Checks a tool's id is new in this file; `seen` collects ids.
fn check_unique(
    seen: &mut HashSet<String>,
    id: &str,
    location: impl FnOnce() -> Location,
) -> Result<()> {
    if seen.insert(id.to_string()) {
        Ok(())
    } else {
        Err(invalid_tool(
            location(),
            id,
            format!("duplicate id `{id}` in this file"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_from_str() {
        assert_eq!("TTL".parse::<Format>().unwrap(), Format::Turtle);
        assert_eq!("turtle".parse::<Format>().unwrap(), Format::Turtle);
        assert_eq!("mcp".parse::<Format>().unwrap(), Format::Mcp);
        assert_eq!("OpenAPI".parse::<Format>().unwrap(), Format::OpenApi);
        assert_eq!("jsonl".parse::<Format>().unwrap(), Format::Jsonl);
        let err = "csv".parse::<Format>().unwrap_err().to_string();
        assert!(err.contains("csv"), "{err}");
    }

    #[test]
    fn detects_formats() {
        let p = Path::new;
        assert_eq!(detect_format(p("a.ttl"), ""), Some(Format::Turtle));
        assert_eq!(detect_format(p("a.jsonl"), "{}"), Some(Format::Jsonl));
        assert_eq!(
            detect_format(p("x.yaml"), "openapi: 3.0.0\ninfo: {}\n"),
            Some(Format::OpenApi)
        );
        assert_eq!(
            detect_format(p("x.json"), r#"{"openapi":"3.1.0","paths":{}}"#),
            Some(Format::OpenApi)
        );
        assert_eq!(
            detect_format(p("x.json"), r#"{"tools":[]}"#),
            Some(Format::Mcp)
        );
        assert_eq!(
            detect_format(p("x"), r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#),
            Some(Format::Mcp)
        );
        assert_eq!(
            detect_format(p("x.json"), r#"[{"name":"a","inputSchema":{}}]"#),
            Some(Format::Mcp)
        );
        assert_eq!(
            detect_format(
                p("x.txt"),
                "{\"id\":\"a\",\"name\":\"a\"}\n{\"id\":\"b\",\"name\":\"b\"}\n"
            ),
            Some(Format::Jsonl)
        );
        assert_eq!(
            detect_format(p("x.txt"), "@prefix tg: <x> ."),
            Some(Format::Turtle)
        );
        assert_eq!(detect_format(p("x.json"), r#"{"a":1}"#), None);
        assert_eq!(detect_format(p("x.json"), "[]"), None);
        assert_eq!(detect_format(p("x.json"), "hello"), None);
    }

    #[test]
    fn turtle_is_refused() {
        let err = parse_manifest("a.ttl", "", Format::Turtle).unwrap_err();
        assert!(matches!(err, Error::Invalid { .. }));
    }

    #[test]
    fn clean_collapses_and_caps() {
        assert_eq!(clean("  a \n\t b  ", 100), "a b");
        let long = "é".repeat(10_000);
        let c = clean(&long, MAX_TEXT);
        assert!(c.len() <= MAX_TEXT + '…'.len_utf8());
        assert!(c.ends_with('…'));
    }

    #[test]
    fn json_errors_have_line_col_and_path() {
        let err = parse_json("f.json", "{\"tools\": [\n  {\"name\": 1,}\n]}", 0).unwrap_err();
        match err {
            Error::Parse { location, .. } => {
                assert_eq!(location.line, Some(2));
                assert_eq!(location.pointer.as_deref(), Some("/tools/0"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn pointer_escaping() {
        assert_eq!(escape_pointer("/pets/{id}~x"), "~1pets~1{id}~0x");
    }
}
