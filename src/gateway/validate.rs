//! Arguments checked against the tool's input schema before anything
//! leaves: an object; every required parameter present; no parameter the
//! tool does not have (when it declares any); each value of its declared
//! JSON type. An error names the argument by JSON pointer
//! (`/arguments/seat`), so a planner can fix it; the upstream receives
//! nothing.

use crate::error::{Error, Field, Result};
use crate::model::Tool;
use serde_json::{Map, Value};

/// The JSON type a parameter's declared type stands for (`None`: any).
fn json_type(ty: &str) -> Option<&'static str> {
    Some(match ty.to_ascii_lowercase().as_str() {
        "string" | "str" => "string",
        "integer" | "int" => "integer",
        "number" | "float" | "double" => "number",
        "boolean" | "bool" => "boolean",
        "object" | "dict" => "object",
        "array" | "list" => "array",
        _ => return None,
    })
}

fn fits(value: &Value, ty: &str) -> bool {
    match ty {
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        _ => true,
    }
}

fn bad(name: &str, message: String) -> Error {
    Error::invalid_at(
        Field::CallArguments,
        format!("/arguments/{}", crate::import::escape_pointer(name)),
        message,
    )
}

/// The call's arguments as an object, checked against `tool`'s parameters.
pub fn arguments(tool: &Tool, args: &Value) -> Result<Map<String, Value>> {
    let args = match args {
        Value::Null => Map::new(),
        Value::Object(m) => m.clone(),
        other => {
            return Err(Error::invalid_field(
                Field::CallArguments,
                format!("arguments are a JSON object, not {}", kind(other)),
            ));
        }
    };
    for (name, value) in &args {
        let Some(p) = tool.params.iter().find(|p| &p.name == name) else {
            if tool.params.is_empty() {
                continue;
            }
            let known: Vec<&str> = tool.params.iter().map(|p| p.name.as_str()).collect();
            return Err(bad(
                name,
                format!(
                    "`{}` has no parameter `{name}` (it has: {})",
                    tool.name,
                    known.join(", ")
                ),
            ));
        };
        if value.is_null() && !p.required {
            continue;
        }
        if let Some(ty) = p.ty.as_deref().and_then(json_type)
            && !fits(value, ty)
        {
            return Err(bad(
                name,
                format!(
                    "`{name}` is {} here; `{}` takes {ty}",
                    kind(value),
                    tool.name
                ),
            ));
        }
    }
    for p in tool.params.iter().filter(|p| p.required) {
        if args.get(&p.name).is_none_or(Value::is_null) {
            return Err(bad(
                &p.name,
                format!("`{}` is required by `{}`", p.name, tool.name),
            ));
        }
    }
    Ok(args)
}

/// How deep [`output`] follows `properties` and `items`.
const OUTPUT_DEPTH: usize = 8;
/// Array items [`output`] checks at most.
const OUTPUT_ITEMS: usize = 1000;

/// Whether `value` fits `schema` as far as this checks: `type` (one or a
/// list), `required`, `properties`, `items`, `enum`; other keywords (and
/// `$ref`) accept anything. The error is the JSON pointer and what broke.
pub fn output(schema: &Value, value: &Value) -> std::result::Result<(), String> {
    fits_schema(schema, value, String::new(), 0)
}

fn fits_schema(
    schema: &Value,
    value: &Value,
    at: String,
    depth: usize,
) -> std::result::Result<(), String> {
    let Value::Object(s) = schema else {
        return Ok(());
    };
    if depth > OUTPUT_DEPTH || s.contains_key("$ref") {
        return Ok(());
    }
    let here = || {
        if at.is_empty() {
            "/".to_string()
        } else {
            at.clone()
        }
    };
    let types: Vec<&str> = match s.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if !types.is_empty()
        && !types
            .iter()
            .any(|t| *t == "null" && value.is_null() || fits(value, t))
    {
        return Err(format!(
            "{}: {} where the schema says {}",
            here(),
            kind(value),
            types.join(" or ")
        ));
    }
    if let Some(Value::Array(options)) = s.get("enum")
        && !options.contains(value)
    {
        return Err(format!("{}: not one of the schema's values", here()));
    }
    if let Value::Object(o) = value {
        if let Some(Value::Array(required)) = s.get("required") {
            for r in required.iter().filter_map(Value::as_str) {
                if !o.contains_key(r) {
                    return Err(format!("{}: `{r}` is required and missing", here()));
                }
            }
        }
        if let Some(Value::Object(props)) = s.get("properties") {
            for (k, sub) in props {
                if let Some(v) = o.get(k) {
                    let path = format!("{at}/{}", crate::import::escape_pointer(k));
                    fits_schema(sub, v, path, depth + 1)?;
                }
            }
        }
    }
    if let (Value::Array(items), Some(sub)) = (value, s.get("items")) {
        for (i, v) in items.iter().take(OUTPUT_ITEMS).enumerate() {
            fits_schema(sub, v, format!("{at}/{i}"), depth + 1)?;
        }
    }
    Ok(())
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Param;
    use serde_json::json;

    fn tool() -> Tool {
        Tool {
            name: "seat_reserve".into(),
            params: vec![
                Param {
                    name: "flight".into(),
                    ty: Some("string".into()),
                    required: true,
                    ..Param::default()
                },
                Param {
                    name: "row".into(),
                    ty: Some("integer".into()),
                    ..Param::default()
                },
            ],
            ..Tool::default()
        }
    }

    fn at(e: Error) -> (Option<String>, String) {
        match e {
            Error::Invalid { at, message, field } => {
                assert_eq!(field, Some(Field::CallArguments));
                (at, message)
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn answers_are_checked_against_the_declared_output_schema() {
        let schema = json!({"type": "object", "required": ["temp"],
            "properties": {"temp": {"type": "number"}, "tags": {"type": "array", "items": {"type": "string"}},
                "unit": {"enum": ["C", "F"]}, "note": {"type": ["string", "null"]}}});
        assert!(
            output(
                &schema,
                &json!({"temp": 21.5, "tags": ["sun"], "unit": "C", "note": null})
            )
            .is_ok()
        );
        let e = output(&schema, &json!({"tags": []})).unwrap_err();
        assert!(e.contains("`temp` is required"), "{e}");
        let e = output(&schema, &json!({"temp": "warm"})).unwrap_err();
        assert!(e.starts_with("/temp:"), "{e}");
        let e = output(&schema, &json!({"temp": 1, "tags": ["a", 2]})).unwrap_err();
        assert!(e.starts_with("/tags/1:"), "{e}");
        assert!(output(&schema, &json!({"temp": 1, "unit": "K"})).is_err());
        assert!(output(&json!({"$ref": "#/x"}), &json!(1)).is_ok());
    }

    #[test]
    fn arguments_are_checked_and_the_bad_one_named() {
        let ok = arguments(&tool(), &json!({"flight": "WN175", "row": 12})).unwrap();
        assert_eq!(ok["row"], 12);
        let (p, m) = at(arguments(&tool(), &json!({"row": 3})).unwrap_err());
        assert_eq!(p.as_deref(), Some("/arguments/flight"));
        assert!(m.contains("required"), "{m}");
        let (p, m) = at(arguments(&tool(), &json!({"flight": "x", "row": "twelve"})).unwrap_err());
        assert_eq!(p.as_deref(), Some("/arguments/row"));
        assert!(m.contains("integer"), "{m}");
        let (p, m) = at(arguments(&tool(), &json!({"flight": "x", "to": "evil"})).unwrap_err());
        assert_eq!(p.as_deref(), Some("/arguments/to"));
        assert!(m.contains("no parameter"), "{m}");
        let (p, _) = at(arguments(&tool(), &json!([1])).unwrap_err());
        assert_eq!(p, None);
        assert!(arguments(&tool(), &json!({"flight": "x", "row": null})).is_ok());
    }
}
