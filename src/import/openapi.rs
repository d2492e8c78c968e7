//! OpenAPI 3.0 / 3.1 (JSON or YAML): one tool per operation.

use super::{
    Resolver, at_pointer, check_unique, clean_name, clean_text, escape_pointer, extension,
    invalid_tool, kind, opt_str, parse_json, parse_yaml, push_unique, schema_params, schema_type,
    str_list,
};
use crate::error::{Error, Result};
use crate::model::{Param, ParamIn, ToolDescriptor, Upstream};
use serde_json::{Map, Value};
use std::collections::HashSet;

/// HTTP methods an OpenAPI path item may hold, in output order.
const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];
/// Most `$ref` hops followed before giving up (cycles end here too).
const MAX_REF_HOPS: usize = 32;

/// Parses an OpenAPI 3.x document.
pub(super) fn parse(file: &str, content: &str) -> Result<Vec<ToolDescriptor>> {
    let trimmed = content.trim_start();
    let root = if trimmed.starts_with('{') || trimmed.starts_with('[') {
        parse_json(file, content, 0)?
    } else {
        parse_yaml(file, content)?
    };
    let Value::Object(top) = &root else {
        return Err(Error::parse_at(
            file,
            "/",
            format!(
                "an OpenAPI document must be an object, found {}",
                kind(&root)
            ),
        ));
    };
    check_version(file, top)?;
    let refs = Refs { root: &root };
    let api_title = top
        .get("info")
        .and_then(|i| i.get("title"))
        .and_then(Value::as_str)
        .map(clean_name)
        .filter(|t| !t.is_empty());
    let paths = match top.get("paths") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Object(p)) => p,
        Some(other) => {
            return Err(Error::parse_at(
                file,
                "/paths",
                format!("`paths` must be an object, found {}", kind(other)),
            ));
        }
    };

    let server = top
        .get("servers")
        .and_then(|s| s.get(0))
        .and_then(|s| s.get("url"))
        .and_then(Value::as_str)
        .map(|u| u.trim_end_matches('/').to_string());
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for (path, item) in paths {
        let item_ptr = format!("/paths/{}", escape_pointer(path));
        let item = refs
            .resolve(item)
            .map_err(|m| invalid_tool(at_pointer(file, &item_ptr), path, m))?;
        let Value::Object(item) = item else {
            return Err(invalid_tool(
                at_pointer(file, &item_ptr),
                path,
                format!("a path item must be an object, found {}", kind(item)),
            ));
        };
        for method in METHODS {
            let Some(raw_op) = item.get(method) else {
                continue;
            };
            let ptr = format!("{item_ptr}/{method}");
            let op = Operation {
                file,
                path,
                method,
                pointer: &ptr,
                refs: &refs,
                api_title: api_title.as_deref(),
                server: server.as_deref(),
                top,
            };
            let d = op.descriptor(item, op_object(file, &ptr, path, method, raw_op)?)?;
            check_unique(&mut seen, &d.id, || at_pointer(file, &ptr))?;
            out.push(d);
        }
    }
    Ok(out)
}

fn check_version(file: &str, top: &Map<String, Value>) -> Result<()> {
    match top.get("openapi") {
        Some(Value::String(v)) if v.trim().starts_with('3') => Ok(()),
        Some(Value::String(v)) => Err(Error::parse_at(
            file,
            "/openapi",
            format!(
                "unsupported OpenAPI version `{}` (expected 3.x)",
                clean_name(v)
            ),
        )),
        Some(other) => Err(Error::parse_at(
            file,
            "/openapi",
            format!("`openapi` must be a version string, found {}", kind(other)),
        )),
        None if top.contains_key("swagger") => Err(Error::parse_at(
            file,
            "/swagger",
            "Swagger 2.0 is not supported; convert the document to OpenAPI 3",
        )),
        None => Err(Error::parse_at(
            file,
            "/",
            "not an OpenAPI document: no `openapi` version key",
        )),
    }
}

fn op_object<'a>(
    file: &str,
    ptr: &str,
    path: &str,
    method: &str,
    op: &'a Value,
) -> Result<&'a Map<String, Value>> {
    match op {
        Value::Object(o) => Ok(o),
        other => Err(invalid_tool(
            at_pointer(file, ptr),
            &slug(method, path),
            format!("an operation must be an object, found {}", kind(other)),
        )),
    }
}

/// Local `$ref` resolution against the document root.
struct Refs<'r> {
    root: &'r Value,
}

impl Resolver for Refs<'_> {
    fn resolve<'a>(&'a self, v: &'a Value) -> Result<&'a Value, String> {
        let mut cur = v;
        for _ in 0..MAX_REF_HOPS {
            let Some(Value::String(r)) = cur.get("$ref") else {
                return Ok(cur);
            };
            // External references are left opaque: no parameters come from them.
            let Some(ptr) = r.strip_prefix('#') else {
                return Ok(cur);
            };
            cur = self
                .root
                .pointer(ptr)
                .ok_or_else(|| format!("unresolved $ref `{}`", clean_name(r)))?;
        }
        Err(format!(
            "$ref chain longer than {MAX_REF_HOPS} hops (a reference cycle?)"
        ))
    }
}

/// One operation being turned into a tool.
struct Operation<'a> {
    file: &'a str,
    path: &'a str,
    method: &'a str,
    pointer: &'a str,
    refs: &'a Refs<'a>,
    api_title: Option<&'a str>,
    /// The first of `servers` (relative or absent: the airlock joins it to
    /// the source's location).
    server: Option<&'a str>,
    top: &'a Map<String, Value>,
}

impl Operation<'_> {
    fn descriptor(
        &self,
        item: &Map<String, Value>,
        op: &Map<String, Value>,
    ) -> Result<ToolDescriptor> {
        let loc = || at_pointer(self.file, self.pointer);
        let operation_id = opt_str(op, "operationId")
            .map_err(|m| invalid_tool(loc(), &slug(self.method, self.path), m))?
            .map(clean_name)
            .filter(|s| !s.is_empty());
        let name = operation_id.unwrap_or_else(|| slug(self.method, self.path));
        let bad = |m: String| invalid_tool(loc(), &name, m);

        let summary = opt_str(op, "summary").map_err(bad)?.map(clean_text);
        let details = opt_str(op, "description").map_err(bad)?.map(clean_text);
        let description = join_summary(summary.as_deref(), details.as_deref());

        let mut tags = str_list(op.get("tags"), "tags").map_err(bad)?;
        if let Some(t) = self.api_title {
            push_unique(&mut tags, [t.to_string()]);
        }
        let ext = extension(op.get("x-toolgraph")).map_err(bad)?;
        push_unique(&mut tags, ext.tags);

        let placed = self.parameters(item, op, &name)?;
        let mut places = std::collections::BTreeMap::new();
        let mut params = Vec::new();
        for (place, p) in placed {
            let at = match place.as_str() {
                "path" => ParamIn::Path,
                "header" => ParamIn::Header,
                _ => ParamIn::Query,
            };
            places.insert(p.name.clone(), at);
            params.push(p);
        }
        for p in self.body_params(op, &name)? {
            if !params.iter().any(|q| q.name == p.name) {
                places.insert(p.name.clone(), ParamIn::Body);
                params.push(p);
            }
        }
        let output_schema = self.response_schema(op);
        let upstream = ext.upstream.clone().unwrap_or_else(|| Upstream::Http {
            method: self.method.to_ascii_uppercase(),
            url: format!("{}{}", self.server.unwrap_or(""), self.path),
            params: places,
            auth: super::security::operation_auth(
                self.top,
                op,
                self.refs,
                self.api_title,
                ext.integrations.first().map(String::as_str),
            ),
            output_schema,
        });

        let read_only = match self.method {
            "get" | "head" => Some(true),
            "post" | "put" | "patch" | "delete" => Some(false),
            _ => None,
        };
        let destructive = (self.method == "delete").then_some(true);
        Ok(ToolDescriptor {
            id: name.clone(),
            name,
            title: summary.filter(|s| !s.is_empty()),
            description,
            model_description: String::new(),
            params,
            read_only,
            destructive,
            tags,
            depends_on: ext.depends_on,
            integrations: ext.integrations,
            categories: ext.categories,
            source: format!("{}#{}", self.file, self.pointer),
            upstream: Some(upstream),
        })
    }

    /// The JSON schema of the operation's success answer (200, 201, 2XX or
    /// `default`, `application/json`), its top-level `$ref` resolved.
    fn response_schema(&self, op: &Map<String, Value>) -> Option<Value> {
        let responses = op.get("responses")?.as_object()?;
        let ok = ["200", "201", "2XX", "2xx"]
            .iter()
            .find_map(|c| responses.get(*c))?;
        let ok = self.refs.resolve(ok).ok()?;
        let schema = ok.get("content")?.get("application/json")?.get("schema")?;
        self.refs
            .resolve(schema)
            .ok()
            .filter(|s| s.is_object())
            .cloned()
    }

    /// Path-item and operation `parameters` (the operation's win on the
    /// same `name` + `in`); cookie parameters are left out.
    fn parameters(
        &self,
        item: &Map<String, Value>,
        op: &Map<String, Value>,
        tool: &str,
    ) -> Result<Vec<(String, Param)>> {
        let mut merged: Vec<(String, Param)> = Vec::new();
        let path_ptr = self
            .pointer
            .rsplit_once('/')
            .map_or(self.pointer, |(p, _)| p);
        let sources = [
            (item.get("parameters"), format!("{path_ptr}/parameters")),
            (op.get("parameters"), format!("{}/parameters", self.pointer)),
        ];
        for (list, list_ptr) in sources {
            let list = match list {
                None | Some(Value::Null) => continue,
                Some(Value::Array(l)) => l,
                Some(other) => {
                    return Err(invalid_tool(
                        at_pointer(self.file, &list_ptr),
                        tool,
                        format!("`parameters` must be an array, found {}", kind(other)),
                    ));
                }
            };
            for (i, raw) in list.iter().enumerate() {
                let ptr = format!("{list_ptr}/{i}");
                let bad = |m: String| invalid_tool(at_pointer(self.file, &ptr), tool, m);
                let Some((place, param)) = self.parameter(raw).map_err(bad)? else {
                    continue;
                };
                match merged
                    .iter_mut()
                    .find(|(k, p)| *k == place && p.name == param.name)
                {
                    Some(slot) => slot.1 = param,
                    None => merged.push((place, param)),
                }
            }
        }
        Ok(merged)
    }

    /// One parameter object; `None` for cookie parameters.
    fn parameter(&self, raw: &Value) -> Result<Option<(String, Param)>, String> {
        let p = self.refs.resolve(raw)?;
        let Value::Object(p) = p else {
            return Err(format!("a parameter must be an object, found {}", kind(p)));
        };
        let name = opt_str(p, "name")?.map(clean_name).unwrap_or_default();
        if name.is_empty() {
            return Err("parameter has no `name`".into());
        }
        let place = opt_str(p, "in")?.unwrap_or("query").to_string();
        if place == "cookie" {
            return Ok(None);
        }
        let schema = match p.get("schema") {
            Some(s) => Some(self.refs.resolve(s)?),
            None => match p.get("content") {
                Some(Value::Object(c)) => match c.values().next() {
                    Some(media) => match media.get("schema") {
                        Some(s) => Some(self.refs.resolve(s)?),
                        None => None,
                    },
                    None => None,
                },
                _ => None,
            },
        };
        let description = opt_str(p, "description")?
            .or_else(|| {
                schema
                    .and_then(|s| s.get("description"))
                    .and_then(Value::as_str)
            })
            .map(clean_text)
            .unwrap_or_default();
        let required = place == "path" || p.get("required").and_then(Value::as_bool) == Some(true);
        Ok(Some((
            place,
            Param {
                name,
                description: description.into(),
                ty: schema.and_then(schema_type).map(Into::into),
                required,
                entity: None,
            },
        )))
    }

    /// Parameters from the JSON (or form) request body schema's properties;
    /// a non-object body becomes one `body` parameter.
    fn body_params(&self, op: &Map<String, Value>, tool: &str) -> Result<Vec<Param>> {
        let Some(raw) = op.get("requestBody") else {
            return Ok(Vec::new());
        };
        let ptr = format!("{}/requestBody", self.pointer);
        let bad = |m: String| invalid_tool(at_pointer(self.file, &ptr), tool, m);
        let body = self.refs.resolve(raw).map_err(bad)?;
        let Value::Object(body) = body else {
            return Err(bad(format!(
                "`requestBody` must be an object, found {}",
                kind(body)
            )));
        };
        let Some(Value::Object(content)) = body.get("content") else {
            return Ok(Vec::new());
        };
        let media = content
            .get("application/json")
            .or_else(|| {
                content
                    .iter()
                    .find(|(k, _)| k.contains("json"))
                    .map(|(_, v)| v)
            })
            .or_else(|| content.get("application/x-www-form-urlencoded"))
            .or_else(|| content.get("multipart/form-data"));
        let Some(schema) = media.and_then(|m| m.get("schema")) else {
            return Ok(Vec::new());
        };
        let schema = self.refs.resolve(schema).map_err(bad)?;
        let object_like = |s: &Value| {
            s.get("properties").is_some()
                || s.get("allOf").is_some()
                || s.get("type").and_then(Value::as_str) == Some("object")
        };
        if object_like(schema) {
            return schema_params(schema, self.refs, 0).map_err(bad);
        }
        // oneOf/anyOf: the first object-like alternative.
        for key in ["oneOf", "anyOf"] {
            if let Some(Value::Array(alts)) = schema.get(key) {
                for alt in alts {
                    let alt = self.refs.resolve(alt).map_err(bad)?;
                    if object_like(alt) {
                        return schema_params(alt, self.refs, 0).map_err(bad);
                    }
                }
            }
        }
        Ok(vec![Param {
            name: "body".into(),
            description: body
                .get("description")
                .and_then(Value::as_str)
                .map(clean_text)
                .unwrap_or_default()
                .into(),
            ty: schema_type(schema).map(Into::into),
            required: body.get("required").and_then(Value::as_bool) == Some(true),
            entity: None,
        }])
    }
}

/// `summary` and `description` as one text, without repeating the summary.
fn join_summary(summary: Option<&str>, details: Option<&str>) -> String {
    match (summary, details) {
        (Some(s), Some(d)) if !s.is_empty() && !d.is_empty() && !d.starts_with(s) => {
            if s.ends_with(['.', '!', '?', ':']) {
                format!("{s} {d}")
            } else {
                format!("{s}. {d}")
            }
        }
        (Some(s), Some(d)) => {
            if d.is_empty() {
                s.to_string()
            } else {
                d.to_string()
            }
        }
        (Some(s), None) => s.to_string(),
        (None, Some(d)) => d.to_string(),
        (None, None) => String::new(),
    }
}

/// `get` + `/pets/{petId}` -> `get_pets_petId`.
fn slug(method: &str, path: &str) -> String {
    let mut out = String::from(method);
    let mut sep = true;
    for c in path.chars() {
        if c.is_ascii_alphanumeric() {
            if sep {
                out.push('_');
                sep = false;
            }
            out.push(c);
        } else {
            sep = true;
        }
    }
    clean_name(&out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PETS: &str = r##"
openapi: 3.0.3
info:
  title: Pet Store
  version: "1"
paths:
  /pets:
    get:
      operationId: listPets
      summary: List pets
      description: Returns all   pets.
      tags: [pets]
      parameters:
        - $ref: '#/components/parameters/Limit'
      responses:
        "200":
          description: ok
    post:
      summary: Create a pet
      requestBody:
        required: true
        content:
          application/json:
            schema:
              $ref: '#/components/schemas/Pet'
  /pets/{petId}:
    parameters:
      - name: petId
        in: path
        schema: {type: string}
    delete:
      x-toolgraph: {dependsOn: [listPets]}
      responses: {}
    put:
      operationId: replacePet
      requestBody:
        content:
          application/json:
            schema:
              type: array
              items: {$ref: '#/components/schemas/Pet'}
components:
  parameters:
    Limit:
      name: limit
      in: query
      description: How many
      schema: {type: integer}
  schemas:
    Pet:
      allOf:
        - $ref: '#/components/schemas/Base'
        - type: object
          required: [name]
          properties:
            name: {type: string, description: The name}
            parent: {$ref: '#/components/schemas/Pet'}
    Base:
      type: object
      properties:
        id: {type: integer}
"##;

    #[test]
    fn parses_operations() {
        let tools = parse("pets.yaml", PETS).unwrap();
        let ids: Vec<&str> = tools.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(
            ids,
            ["listPets", "post_pets", "replacePet", "delete_pets_petId"]
        );

        let list = &tools[0];
        assert_eq!(list.description, "List pets. Returns all pets.");
        assert_eq!(list.title.as_deref(), Some("List pets"));
        assert_eq!(list.tags, ["pets", "Pet Store"]);
        assert_eq!(list.read_only, Some(true));
        assert_eq!(list.source, "pets.yaml#/paths/~1pets/get");
        assert_eq!(list.params.len(), 1);
        assert_eq!(list.params[0].name, "limit");
        assert_eq!(list.params[0].ty.as_deref(), Some("integer"));
        assert_eq!(&*list.params[0].description, "How many");

        let create = &tools[1];
        assert_eq!(create.read_only, Some(false));
        let names: Vec<&str> = create.params.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["id", "name", "parent"]);
        assert!(!create.params[0].required && create.params[1].required);
        assert_eq!(create.params[2].ty.as_deref(), Some("object"));

        let replace = &tools[2];
        assert_eq!(replace.params.len(), 2);
        assert_eq!(replace.params[0].name, "petId");
        assert!(replace.params[0].required);
        assert_eq!(replace.params[1].name, "body");
        assert_eq!(replace.params[1].ty.as_deref(), Some("array"));

        let delete = &tools[3];
        assert_eq!(delete.destructive, Some(true));
        assert_eq!(
            delete.depends_on,
            [crate::model::Dependency::on("listPets")]
        );
        assert_eq!(delete.source, "pets.yaml#/paths/~1pets~1{petId}/delete");
    }

    #[test]
    fn json_document() {
        let doc = r#"{"openapi":"3.1.0","info":{"title":"T"},"paths":{"/a":{"head":{}}}}"#;
        let tools = parse("a.json", doc).unwrap();
        assert_eq!(tools[0].id, "head_a");
        assert_eq!(tools[0].read_only, Some(true));
    }

    #[test]
    fn ref_cycles_and_dangling_refs() {
        let cyclic = r##"{"openapi":"3.0.0","paths":{"/x":{"post":{"operationId":"x",
          "requestBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/A"}}}}}}},
          "components":{"schemas":{"A":{"$ref":"#/components/schemas/B"},"B":{"$ref":"#/components/schemas/A"}}}}"##;
        let err = parse("c.json", cyclic).unwrap_err().to_string();
        assert!(
            err.contains("cycle") && err.contains("/paths/~1x/post/requestBody"),
            "{err}"
        );

        let all_of_loop = r##"{"openapi":"3.0.0","paths":{"/x":{"post":{"operationId":"x",
          "requestBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/A"}}}}}}},
          "components":{"schemas":{"A":{"allOf":[{"$ref":"#/components/schemas/A"},{"$ref":"#/components/schemas/A"}],
          "properties":{"p":{"type":"string"}}}}}}"##;
        let tools = parse("l.json", all_of_loop).unwrap();
        assert_eq!(tools[0].params.len(), 1);

        let dangling =
            r##"{"openapi":"3.0.0","paths":{"/x":{"get":{"parameters":[{"$ref":"#/nope"}]}}}}"##;
        let err = parse("d.json", dangling).unwrap_err().to_string();
        assert!(err.contains("unresolved $ref `#/nope`"), "{err}");
        assert!(err.contains("get_x"), "{err}");
    }

    #[test]
    fn version_and_shape_errors() {
        let err = parse("s.json", r#"{"swagger":"2.0"}"#).unwrap_err();
        assert!(err.to_string().contains("Swagger 2.0"));
        assert!(parse("s.json", r#"{"openapi":"2.0"}"#).is_err());
        assert!(parse("s.json", r#"{"openapi":"3.0.0","paths":[]}"#).is_err());
        let err = parse("s.json", r#"{"openapi":"3.0.0","paths":{"/a":{"get":3}}}"#)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("/paths/~1a/get") && err.contains("get_a"),
            "{err}"
        );
        assert!(parse("s.yaml", "openapi: 3.0.0\n").unwrap().is_empty());
    }

    #[test]
    fn yaml_error_location() {
        let err = parse("y.yaml", "openapi: 3.0.0\npaths:\n  /a: [\n").unwrap_err();
        match err {
            Error::Parse { location, .. } => {
                assert_eq!(location.file, "y.yaml");
                assert!(location.line.is_some());
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn yaml_alias_bomb_is_refused() {
        let mut doc = String::from("openapi: 3.0.0\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..12 {
            let prev = format!("*a{}", i - 1);
            let row = [prev.as_str(); 10].join(", ");
            doc.push_str(&format!("a{i}: &a{i} [{row}]\n"));
        }
        doc.push_str("paths: {}\n");
        assert!(parse("bomb.yaml", &doc).is_err());
    }

    #[test]
    fn slugs() {
        assert_eq!(slug("get", "/pets/{petId}"), "get_pets_petId");
        assert_eq!(slug("post", "/"), "post");
        assert_eq!(slug("get", "/a-b//c.json"), "get_a_b_c_json");
    }
}
