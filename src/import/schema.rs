//! JSON Schema to parameters: types, `$ref`s (resolved at most once each),
//! `allOf` members, `required`.

use super::{clean_name, clean_text, kind, non_empty};
use crate::model::Param;
use serde_json::Value;
use std::collections::HashSet;

/// Resolves `$ref`s in schemas; the identity for formats without references.
pub(super) trait Resolver {
    /// Follows `$ref`s until a non-reference value; errors on dangling refs.
    fn resolve<'a>(&'a self, v: &'a Value) -> Result<&'a Value, String>;
}

/// No `$ref` resolution (MCP, JSONL).
pub(super) struct NoRefs;

impl Resolver for NoRefs {
    fn resolve<'a>(&'a self, v: &'a Value) -> Result<&'a Value, String> {
        Ok(v)
    }
}

/// The type of a schema: `"string"`, `"string|integer"` for type arrays
/// (`null` left out), `object`/`array` inferred from `properties`/`items`.
pub(super) fn schema_type(schema: &Value) -> Option<String> {
    match schema.get("type") {
        Some(Value::String(t)) => non_empty(clean_name(t)),
        Some(Value::Array(ts)) => {
            let names: Vec<&str> = ts
                .iter()
                .filter_map(Value::as_str)
                .filter(|t| *t != "null")
                .collect();
            non_empty(clean_name(&names.join("|")))
        }
        _ => {
            if schema.get("properties").is_some() || schema.get("allOf").is_some() {
                Some("object".into())
            } else if schema.get("items").is_some() {
                Some("array".into())
            } else if schema.get("enum").is_some() {
                Some("enum".into())
            } else {
                None
            }
        }
    }
}

/// Parameters from an object schema's `properties` and `required`
/// (merging `allOf` members). `schema` must be an object (or `true`).
/// Errors are messages; the caller adds the location.
pub(super) fn schema_params(
    schema: &Value,
    refs: &dyn Resolver,
    depth: usize,
) -> Result<Vec<Param>, String> {
    schema_params_in(schema, refs, depth, &mut HashSet::new())
}

/// `schema_params` expanding each `$ref` at most once (`allOf` loops and
/// diamonds stay linear).
pub(super) fn schema_params_in(
    schema: &Value,
    refs: &dyn Resolver,
    depth: usize,
    expanded: &mut HashSet<String>,
) -> Result<Vec<Param>, String> {
    if depth > 16 {
        return Ok(Vec::new());
    }
    if let Some(Value::String(r)) = schema.get("$ref")
        && !expanded.insert(r.clone())
    {
        return Ok(Vec::new());
    }
    let schema = refs.resolve(schema)?;
    let obj = match schema {
        Value::Object(o) => o,
        Value::Bool(_) => return Ok(Vec::new()),
        other => {
            return Err(format!(
                "parameter schema must be an object, found {}",
                kind(other)
            ));
        }
    };
    let required: HashSet<&str> = match obj.get("required") {
        Some(Value::Array(r)) => r.iter().filter_map(Value::as_str).collect(),
        _ => HashSet::new(),
    };
    let mut params = Vec::new();
    match obj.get("properties") {
        None | Some(Value::Null) => {}
        Some(Value::Object(props)) => {
            for (name, prop) in props {
                let prop = refs.resolve(prop)?;
                let (description, ty) = match prop {
                    Value::Object(p) => (
                        p.get("description")
                            .or_else(|| p.get("title"))
                            .and_then(Value::as_str)
                            .map(clean_text)
                            .unwrap_or_default(),
                        schema_type(prop),
                    ),
                    Value::Bool(_) => (String::new(), None),
                    other => {
                        return Err(format!(
                            "schema of parameter `{name}` must be an object, found {}",
                            kind(other)
                        ));
                    }
                };
                params.push(Param {
                    name: clean_name(name),
                    description: description.into(),
                    ty: ty.map(Into::into),
                    required: required.contains(name.as_str()),
                    entity: None,
                });
            }
        }
        Some(other) => {
            return Err(format!(
                "`properties` must be an object, found {}",
                kind(other)
            ));
        }
    }
    if let Some(Value::Array(all)) = obj.get("allOf") {
        for member in all {
            for p in schema_params_in(member, refs, depth + 1, expanded)? {
                if !params.iter().any(|q| q.name == p.name) {
                    params.push(p);
                }
            }
        }
    }
    Ok(params)
}
