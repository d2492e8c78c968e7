//! JSONL tool catalogs, one object per line, as in the benchmark datasets:
//! `{"id", "name", "description", "parameters", "source", "meta"}`.
//!
//! - `id` defaults to `name`; `name` is required.
//! - `parameters` is a JSON-schema-like object (`properties`, `required`;
//!   types are kept verbatim, `"str"`, `"dict"` included) or `null`.
//! - `source` (upstream provenance) becomes the descriptor's `source`;
//!   without it, `file:LINE`.
//! - `meta.depends_on` -> `depends_on`: names or objects `{name,
//!   dependence_type, parameter_name, reason}`; `meta.field` and `meta.category` ->
//!   `tags` (a `/`-separated field such as `Chemistry/Forensics` gives both
//!   parts); `meta.tags`, `meta.integrations` are taken as they are;
//!   `meta.name_for_human` -> `title`; `meta.description_for_model` (OpenAI
//!   plugin manifests) -> `model_description`.
//! - `upstream` (optional): where a call goes, `{"kind": "mcp", "url",
//!   "tool"}` or `{"kind": "http", "method", "url", "params", "auth"}`.
//! - Blank lines are skipped.

use super::{
    NoRefs, check_unique, clean_name, clean_text, dependency_list, invalid_tool, kind, opt_str,
    parse_json, push_unique, schema_params, str_list,
};
use crate::error::{Location, Result};
use crate::model::ToolDescriptor;
use serde_json::Value;
use std::collections::HashSet;

/// Parses a JSONL catalog.
pub(super) fn parse(file: &str, content: &str) -> Result<Vec<ToolDescriptor>> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for (i, line) in content.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let line_no = i as u64 + 1;
        let value = parse_json(file, line, i as u64)?;
        let d = descriptor(file, line_no, &value)?;
        check_unique(&mut seen, &d.id, || at_line(file, line_no, None))?;
        out.push(d);
    }
    Ok(out)
}

fn at_line(file: &str, line: u64, pointer: Option<&str>) -> Location {
    Location {
        file: file.to_string(),
        line: Some(line),
        column: None,
        pointer: pointer.map(str::to_string),
    }
}

fn descriptor(file: &str, line: u64, value: &Value) -> Result<ToolDescriptor> {
    let loc = |p: Option<&str>| at_line(file, line, p);
    let Value::Object(obj) = value else {
        return Err(invalid_tool(
            loc(None),
            "",
            format!("each line must be a JSON object, found {}", kind(value)),
        ));
    };
    let name = opt_str(obj, "name")
        .map_err(|m| invalid_tool(loc(Some("/name")), "", m))?
        .map(clean_name)
        .unwrap_or_default();
    if name.is_empty() {
        return Err(invalid_tool(loc(None), "", "tool has no `name`"));
    }
    let bad = |p: &str, m: String| invalid_tool(loc(Some(p)), &name, m);
    let id = match obj.get("id") {
        None | Some(Value::Null) => name.clone(),
        Some(Value::String(s)) => {
            let id = clean_name(s);
            if id.is_empty() { name.clone() } else { id }
        }
        Some(Value::Number(n)) => n.to_string(),
        Some(other) => {
            return Err(bad(
                "/id",
                format!("`id` must be a string, found {}", kind(other)),
            ));
        }
    };
    let description = opt_str(obj, "description")
        .map_err(|m| bad("/description", m))?
        .map(clean_text)
        .unwrap_or_default();
    let params = match obj.get("parameters") {
        None | Some(Value::Null) => Vec::new(),
        Some(schema @ Value::Object(_)) => {
            schema_params(schema, &NoRefs, 0).map_err(|m| bad("/parameters", m))?
        }
        Some(other) => {
            return Err(bad(
                "/parameters",
                format!(
                    "`parameters` must be an object or null, found {}",
                    kind(other)
                ),
            ));
        }
    };
    let source = opt_str(obj, "source")
        .map_err(|m| bad("/source", m))?
        .map(clean_name)
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| format!("{file}:{line}"));

    let upstream =
        super::upstream(obj.get("upstream"), "upstream").map_err(|m| bad("/upstream", m))?;
    let mut d = ToolDescriptor {
        id,
        name: name.clone(),
        description,
        params,
        source,
        upstream,
        ..ToolDescriptor::default()
    };
    match obj.get("meta") {
        None | Some(Value::Null) => {}
        Some(Value::Object(meta)) => {
            let list = |key: &str| str_list(meta.get(key), key).map_err(|m| bad("/meta", m));
            d.depends_on = dependency_list(meta.get("depends_on"), "depends_on")
                .map_err(|m| bad("/meta/depends_on", m))?;
            d.integrations = list("integrations")?;
            for key in ["field", "category"] {
                for tag in list(key)? {
                    let parts = tag.split('/').map(clean_name).filter(|p| !p.is_empty());
                    push_unique(&mut d.tags, parts);
                }
            }
            push_unique(&mut d.tags, list("tags")?);
            d.model_description = opt_str(meta, "description_for_model")
                .map_err(|m| bad("/meta/description_for_model", m))?
                .map(clean_text)
                .unwrap_or_default();
            d.title = meta
                .get("name_for_human")
                .and_then(Value::as_str)
                .map(clean_name)
                .filter(|t| !t.is_empty());
        }
        Some(other) => {
            return Err(bad(
                "/meta",
                format!("`meta` must be an object, found {}", kind(other)),
            ));
        }
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn parses_lines() {
        let text = concat!(
            r#"{"id":"a#1","name":"a","description":" Do  A ","parameters":{"type":"dict","properties":{"x":{"type":"str","description":"X"}},"required":["x"]},"source":"up/stream","meta":{"field":"Chem/Forensics","depends_on":["b"]}}"#,
            "\n\n",
            r#"{"name":"b","parameters":null,"meta":{"name_for_human":"Bee","category":"util","description_for_model":"Use  when\nbees."}}"#,
            "\n"
        );
        let tools = parse("t.jsonl", text).unwrap();
        assert_eq!(tools.len(), 2);
        let a = &tools[0];
        assert_eq!((a.id.as_str(), a.name.as_str()), ("a#1", "a"));
        assert_eq!(a.description, "Do A");
        assert_eq!(a.source, "up/stream");
        assert_eq!(a.tags, ["Chem", "Forensics"]);
        assert_eq!(a.depends_on, [crate::model::Dependency::on("b")]);
        assert_eq!(a.params.len(), 1);
        assert_eq!(a.params[0].ty.as_deref(), Some("str"));
        assert!(a.params[0].required);
        let b = &tools[1];
        assert_eq!(b.id, "b");
        assert_eq!(b.source, "t.jsonl:3");
        assert_eq!(b.title.as_deref(), Some("Bee"));
        assert_eq!(b.tags, ["util"]);
        assert_eq!(b.model_description, "Use when bees.");
        assert!(a.model_description.is_empty());
    }

    #[test]
    fn syntax_error_has_file_line_col() {
        let text = "{\"name\":\"a\"}\n\n{\"name\": \"b\", \"parameters\": {\"x\" 1}}\n";
        match parse("bad.jsonl", text).unwrap_err() {
            Error::Parse { location, .. } => {
                assert_eq!(location.file, "bad.jsonl");
                assert_eq!(location.line, Some(3));
                assert_eq!(location.column, Some(34));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn semantic_errors() {
        let err = parse("t.jsonl", "{\"id\":\"x\"}\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("t.jsonl:1") && err.contains("no `name`"),
            "{err}"
        );
        let err = parse("t.jsonl", "{\"name\":\"a\"}\n{\"name\":\"a\"}\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("t.jsonl:2") && err.contains("duplicate id `a`"),
            "{err}"
        );
        let err = parse("t.jsonl", "{\"name\":\"p\",\"parameters\":[1]}\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("`p`") && err.contains("/parameters"), "{err}");
        let err = parse(
            "t.jsonl",
            "{\"name\":\"m\",\"meta\":{\"description_for_model\":3}}\n",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("/meta/description_for_model"), "{err}");
        assert!(parse("t.jsonl", "[1]\n").is_err());
        assert!(parse("t.jsonl", "").unwrap().is_empty());
    }

    #[test]
    fn typed_dependencies() {
        let text = r#"{"name":"a","meta":{"depends_on":[{"name":"b","dependence_type":"PARAMETER_DIRECTLY_DEPENDS_ON","parameter_name":"x","reason":" Needs  b "},"c",{"name":"b"},{"name":"d","parameter_name":null}]}}"#;
        let tools = parse("t.jsonl", text).unwrap();
        let deps = &tools[0].depends_on;
        assert_eq!(deps.len(), 3, "{deps:?}");
        assert_eq!(deps[0].on, "b");
        assert_eq!(
            deps[0].facts.kind.as_deref(),
            Some("PARAMETER_DIRECTLY_DEPENDS_ON")
        );
        assert_eq!(deps[0].facts.parameter.as_deref(), Some("x"));
        assert_eq!(deps[0].facts.reason.as_deref(), Some("Needs b"));
        assert_eq!(deps[1], crate::model::Dependency::on("c"));
        assert_eq!(deps[2], crate::model::Dependency::on("d"));

        for (line, want) in [
            (
                r#"{"name":"a","meta":{"depends_on":[{"reason":"r"}]}}"#,
                "needs a `name`",
            ),
            (
                r#"{"name":"a","meta":{"depends_on":[{"name":"b","reason":3}]}}"#,
                "`depends_on[0].reason` must be a string",
            ),
            (
                r#"{"name":"a","meta":{"depends_on":["b",{"name":"c","why":"?"}]}}"#,
                "`depends_on[1]` has an unknown field `why`",
            ),
            (
                r#"{"name":"a","meta":{"depends_on":7}}"#,
                "must be a name, an object or an array",
            ),
        ] {
            let err = parse("t.jsonl", line).unwrap_err().to_string();
            assert!(
                err.contains(want) && err.contains("/meta/depends_on") && err.contains("t.jsonl:1"),
                "{err}"
            );
        }
    }
}
