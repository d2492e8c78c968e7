//! MCP `tools/list` results: `{"tools": [..]}`, the JSON-RPC envelope
//! `{"jsonrpc": "2.0", "result": {"tools": [..]}}`, or a bare array.

use super::{
    NoRefs, at_pointer, check_unique, clean_name, clean_text, extension, invalid_tool, kind,
    opt_bool, opt_str, parse_json, push_unique, schema_params,
};
use crate::error::{Error, Result};
use crate::model::ToolDescriptor;
use serde_json::Value;
use std::collections::HashSet;

/// Parses an MCP `tools/list` result.
pub(super) fn parse(file: &str, content: &str) -> Result<Vec<ToolDescriptor>> {
    let root = parse_json(file, content, 0)?;
    let (tools, base) = tools_array(file, &root)?;
    let mut out = Vec::with_capacity(tools.len());
    let mut seen = HashSet::new();
    for (i, tool) in tools.iter().enumerate() {
        let pointer = format!("{base}/{i}");
        let d = tool_descriptor(file, &pointer, tool)?;
        check_unique(&mut seen, &d.id, || at_pointer(file, &pointer))?;
        out.push(d);
    }
    Ok(out)
}

/// Finds the tools array and its JSON pointer.
fn tools_array<'a>(file: &str, root: &'a Value) -> Result<(&'a [Value], &'static str)> {
    if let Value::Array(items) = root {
        return Ok((items.as_slice(), ""));
    }
    if let Some(err) = root.get("error") {
        let msg = err
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("JSON-RPC error");
        return Err(Error::parse_at(
            file,
            "/error",
            format!("the response is a JSON-RPC error: {}", clean_text(msg)),
        ));
    }
    let (holder, base) = match root.get("result") {
        Some(result) if root.get("tools").is_none() => (result, "/result"),
        _ => (root, ""),
    };
    match holder.get("tools") {
        Some(Value::Array(items)) => Ok((
            items.as_slice(),
            if base.is_empty() {
                "/tools"
            } else {
                "/result/tools"
            },
        )),
        Some(other) => Err(Error::parse_at(
            file,
            format!("{base}/tools"),
            format!("`tools` must be an array, found {}", kind(other)),
        )),
        None => Err(Error::parse_at(
            file,
            if base.is_empty() { "/" } else { base },
            "not an MCP tools/list result: no `tools` array",
        )),
    }
}

fn tool_descriptor(file: &str, pointer: &str, tool: &Value) -> Result<ToolDescriptor> {
    let loc = || at_pointer(file, pointer);
    let Value::Object(obj) = tool else {
        return Err(invalid_tool(
            loc(),
            "",
            format!("a tool must be an object, found {}", kind(tool)),
        ));
    };
    let name = match opt_str(obj, "name") {
        Ok(Some(n)) => clean_name(n),
        Ok(None) => String::new(),
        Err(m) => return Err(invalid_tool(loc(), "", m)),
    };
    if name.is_empty() {
        return Err(invalid_tool(loc(), "", "tool has no `name`"));
    }
    let bad = |m: String| invalid_tool(loc(), &name, m);

    let description = opt_str(obj, "description").map_err(bad)?;
    let mut title = opt_str(obj, "title").map_err(bad)?.map(clean_name);

    let params = match obj.get("inputSchema").or_else(|| obj.get("input_schema")) {
        None | Some(Value::Null) => Vec::new(),
        Some(schema @ Value::Object(_)) => schema_params(schema, &NoRefs, 0).map_err(|m| {
            invalid_tool(
                at_pointer(file, &format!("{pointer}/inputSchema")),
                &name,
                m,
            )
        })?,
        Some(other) => {
            return Err(invalid_tool(
                at_pointer(file, &format!("{pointer}/inputSchema")),
                &name,
                format!("`inputSchema` must be an object, found {}", kind(other)),
            ));
        }
    };

    let (mut read_only, mut destructive) = (None, None);
    match obj.get("annotations") {
        None | Some(Value::Null) => {}
        Some(Value::Object(a)) => {
            let bad_ann = |m: String| {
                invalid_tool(
                    at_pointer(file, &format!("{pointer}/annotations")),
                    &name,
                    m,
                )
            };
            read_only = opt_bool(a, "readOnlyHint").map_err(bad_ann)?;
            destructive = opt_bool(a, "destructiveHint").map_err(bad_ann)?;
            if title.is_none() {
                title = opt_str(a, "title").map_err(bad_ann)?.map(clean_name);
            }
            // A read-only tool cannot destroy anything (the MCP spec says
            // destructiveHint is meaningful only when readOnlyHint is false).
            if read_only == Some(true) {
                destructive = Some(false);
            }
        }
        Some(other) => {
            return Err(bad(format!(
                "`annotations` must be an object, found {}",
                kind(other)
            )));
        }
    }

    let ext_value = obj
        .get("_meta")
        .and_then(|m| m.get("x-toolgraph"))
        .or_else(|| obj.get("x-toolgraph"));
    let ext = extension(ext_value).map_err(bad)?;
    let mut tags = Vec::new();
    push_unique(&mut tags, ext.tags);

    Ok(ToolDescriptor {
        id: name.clone(),
        name,
        title: title.filter(|t| !t.is_empty()),
        description: description.map(clean_text).unwrap_or_default(),
        model_description: String::new(),
        params,
        read_only,
        destructive,
        tags,
        depends_on: ext.depends_on,
        integrations: ext.integrations,
        categories: ext.categories,
        source: format!("{file}#{pointer}"),
        // Declared, or named by the airlock after the server it read the
        // list from.
        upstream: ext.upstream,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIST: &str = r#"{
      "tools": [
        {
          "name": "get_weather",
          "title": "Weather",
          "description": "  Get the   current weather\n for a city ",
          "inputSchema": {
            "type": "object",
            "properties": {
              "city": {"type": "string", "description": "City name"},
              "units": {"type": ["string", "null"], "enum": ["c", "f"]}
            },
            "required": ["city"]
          },
          "annotations": {"readOnlyHint": true}
        },
        {
          "name": "delete_file",
          "inputSchema": {"type": "object"},
          "annotations": {"title": "Delete a file", "readOnlyHint": false, "destructiveHint": true},
          "_meta": {"x-toolgraph": {"dependsOn": ["list_files"], "integrations": ["s3"], "tags": ["files"]}}
        }
      ]
    }"#;

    #[test]
    fn parses_tools() {
        let tools = parse("list.json", LIST).unwrap();
        assert_eq!(tools.len(), 2);
        let w = &tools[0];
        assert_eq!(w.id, "get_weather");
        assert_eq!(w.title.as_deref(), Some("Weather"));
        assert_eq!(w.description, "Get the current weather for a city");
        assert_eq!(w.read_only, Some(true));
        assert_eq!(w.destructive, Some(false));
        assert_eq!(w.source, "list.json#/tools/0");
        let city = w.params.iter().find(|p| p.name == "city").unwrap();
        assert!(city.required);
        assert_eq!(city.ty.as_deref(), Some("string"));
        assert_eq!(&*city.description, "City name");
        let units = w.params.iter().find(|p| p.name == "units").unwrap();
        assert!(!units.required);
        assert_eq!(units.ty.as_deref(), Some("string"));

        let d = &tools[1];
        assert_eq!(d.title.as_deref(), Some("Delete a file"));
        assert_eq!(d.read_only, Some(false));
        assert_eq!(d.destructive, Some(true));
        assert_eq!(d.depends_on, [crate::model::Dependency::on("list_files")]);
        assert_eq!(d.integrations, vec!["s3"]);
        assert_eq!(d.tags, vec!["files"]);
        assert!(d.params.is_empty());
    }

    #[test]
    fn accepts_envelope_and_bare_array() {
        let rpc = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{LIST}}}"#);
        let tools = parse("rpc.json", &rpc).unwrap();
        assert_eq!(tools.len(), 2);
        assert_eq!(tools[1].source, "rpc.json#/result/tools/1");
        let bare = r#"[{"name":"a","inputSchema":{"type":"object"}}]"#;
        let tools = parse("bare.json", bare).unwrap();
        assert_eq!(tools[0].source, "bare.json#/0");
    }

    #[test]
    fn missing_name_points_at_tool() {
        let err = parse("t.json", r#"{"tools":[{"name":"a"},{"description":"x"}]}"#).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, Error::InvalidTool { .. }));
        assert!(msg.contains("t.json at /tools/1"), "{msg}");
        assert!(msg.contains("no `name`"), "{msg}");
    }

    #[test]
    fn duplicate_and_bad_schema() {
        let err = parse("t.json", r#"{"tools":[{"name":"a"},{"name":"a"}]}"#).unwrap_err();
        assert!(err.to_string().contains("duplicate id `a`"), "{err}");
        let err = parse("t.json", r#"{"tools":[{"name":"a","inputSchema":"x"}]}"#).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("/tools/0/inputSchema") && msg.contains("`a`"),
            "{msg}"
        );
        let err = parse(
            "t.json",
            r#"{"tools":[{"name":"b","inputSchema":{"properties":{"p":3}}}]}"#,
        )
        .unwrap_err();
        assert!(err.to_string().contains("parameter `p`"), "{err}");
    }

    #[test]
    fn rpc_error_and_wrong_shape() {
        let err = parse(
            "e.json",
            r#"{"jsonrpc":"2.0","error":{"code":-1,"message":"boom"}}"#,
        )
        .unwrap_err();
        assert!(err.to_string().contains("boom"));
        assert!(parse("e.json", r#"{"tools": 3}"#).is_err());
        assert!(parse("e.json", r#"{"x": 3}"#).is_err());
        assert!(parse("e.json", r#""str""#).is_err());
    }
}
