//! Producers an HTTP API's structure reveals: a path parameter `{p}` of
//! `/a/b/{p}/…` is handed out by the `GET` on the collection before it
//! (`/a/b`: the list), by a search over the same resource (`/search/b`,
//! `/b/search`, `/b/findByStatus`), or by the `POST` that creates one on
//! that collection, on the same host. (`GET /pets/{id}` <- `GET /pets`;
//! `/repositories/{owner}/{slug}` <- `GET /repositories/{owner}`;
//! `/store/order/{orderId}` <- `POST /store/order`.) And an answer's JSON
//! schema (an HTTP operation's 2xx `application/json`, an MCP tool's
//! `outputSchema`) hands out the fields it carries: a required `username`
//! comes from the operation of the same server whose answer has a
//! `username` and that does not need one itself.

use super::deps::Found;
use crate::model::{Tool, Upstream};
use std::collections::HashMap;

/// A URL's host and its path segments as written.
fn split(url: &str) -> (&str, Vec<&str>) {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let path = path.split(['?', '#']).next().unwrap_or("");
    (host, path.split('/').filter(|s| !s.is_empty()).collect())
}

/// A URL's host and its path segments, lowercase, path parameters as
/// `{}` (`https://api.x.com/v1/pets/{id}` -> ("api.x.com", [v1, pets, {}])).
fn route(url: &str) -> (String, Vec<String>) {
    let (host, raw) = split(url);
    let segments = raw
        .into_iter()
        .map(|s| {
            if s.starts_with('{') && s.ends_with('}') {
                "{}".to_string()
            } else {
                s.to_lowercase()
            }
        })
        .collect();
    (host.to_lowercase(), segments)
}

/// A tool's server host and its answer's schema, when it declares one.
fn answer(t: &Tool) -> Option<(String, &serde_json::Value)> {
    match t.upstream.as_deref()? {
        Upstream::Http {
            url,
            output_schema: Some(s),
            ..
        }
        | Upstream::Mcp {
            url,
            output_schema: Some(s),
            ..
        } => Some((route(url).0, s)),
        _ => None,
    }
}

/// Parameter names too common to say where their value comes from.
const GENERIC_FIELDS: &[&str] = &[
    "id",
    "name",
    "type",
    "status",
    "key",
    "value",
    "code",
    "query",
    "q",
    "limit",
    "offset",
    "page",
    "size",
    "format",
    "version",
    "data",
    "body",
    "text",
    "title",
    "description",
    "tags",
];

/// The field names (lowercase) a JSON schema carries: properties of
/// objects, of array items, and of nested objects, a few levels deep.
fn fields(schema: &serde_json::Value, depth: usize, out: &mut Vec<String>) {
    if depth == 0 {
        return;
    }
    if let Some(props) = schema.get("properties").and_then(|p| p.as_object()) {
        for (name, sub) in props {
            let name = name.to_lowercase();
            if !out.contains(&name) {
                out.push(name);
            }
            fields(sub, depth - 1, out);
        }
    }
    if let Some(items) = schema.get("items") {
        fields(items, depth - 1, out);
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        for sub in schema
            .get(key)
            .and_then(|v| v.as_array())
            .into_iter()
            .flatten()
        {
            fields(sub, depth - 1, out);
        }
    }
}

fn http(t: &Tool) -> Option<(&str, &str)> {
    match t.upstream.as_deref() {
        Some(Upstream::Http { method, url, .. }) => Some((method.as_str(), url.as_str())),
        _ => None,
    }
}

/// A resource name without a plural `s` (`pets` -> `pet`).
fn singular(s: &str) -> &str {
    s.strip_suffix('s').filter(|r| r.len() > 2).unwrap_or(s)
}

/// The catalog's `GET` operations by route, and its searches by resource.
#[derive(Debug, Default)]
pub(crate) struct Routes {
    lists: HashMap<(String, Vec<String>), Vec<usize>>,
    creates: HashMap<(String, Vec<String>), Vec<usize>>,
    searches: HashMap<(String, String), Vec<usize>>,
    /// Tools by their server host and a field their answer carries.
    answers: HashMap<(String, String), Vec<usize>>,
}

/// A path segment that searches what the segment beside it names
/// (`search`, `findByStatus`, `list`).
fn searches(segment: &str) -> bool {
    ["search", "find", "list", "query", "lookup"]
        .iter()
        .any(|w| segment.starts_with(w))
}

impl Routes {
    pub fn of(tools: &[Tool]) -> Self {
        let mut out = Self::default();
        for (j, t) in tools.iter().enumerate() {
            if let Some((host, schema)) = answer(t) {
                let mut carried = Vec::new();
                fields(schema, 4, &mut carried);
                for f in carried {
                    out.answers.entry((host.clone(), f)).or_default().push(j);
                }
            }
            let Some((method, url)) = http(t) else {
                continue;
            };
            let (host, segments) = route(url);
            if method.eq_ignore_ascii_case("post") {
                out.creates.entry((host, segments)).or_default().push(j);
                continue;
            }
            if !method.eq_ignore_ascii_case("get") {
                continue;
            }
            if let Some(at) = segments.iter().position(|s| searches(s)) {
                let around = [at.checked_sub(1), Some(at + 1)];
                for k in around.into_iter().flatten() {
                    if let Some(r) = segments.get(k).filter(|r| *r != "{}" && !searches(r)) {
                        out.searches
                            .entry((host.clone(), singular(r).to_string()))
                            .or_default()
                            .push(j);
                    }
                }
            }
            out.lists.entry((host, segments)).or_default().push(j);
        }
        out
    }

    /// The producers of parameter `param` of tool `consumer` (a path
    /// parameter's by the route, any one's by the answers), with a
    /// confidence and why.
    pub fn of_param(&self, tools: &[Tool], consumer: usize, param: &str) -> Found {
        let mut out = self.by_route(tools, consumer, param);
        for (j, c, why) in self.by_answer(tools, consumer, param) {
            if !out.iter().any(|(o, _, _)| *o == j) {
                out.push((j, c, why));
            }
        }
        out
    }

    /// The tools of the consumer's server whose answer carries a field
    /// named as the parameter, which do not need it themselves.
    fn by_answer(&self, tools: &[Tool], consumer: usize, param: &str) -> Found {
        let name = param.to_lowercase();
        if GENERIC_FIELDS.contains(&name.as_str()) {
            return Vec::new();
        }
        let Some(host) = tools
            .get(consumer)
            .and_then(|t| match t.upstream.as_deref()? {
                Upstream::Http { url, .. } | Upstream::Mcp { url, .. } => Some(route(url).0),
            })
        else {
            return Vec::new();
        };
        let needs = |j: usize| {
            tools[j]
                .params
                .iter()
                .any(|p| p.required && p.name.eq_ignore_ascii_case(param))
        };
        let found: Vec<usize> = self
            .answers
            .get(&(host, name))
            .into_iter()
            .flatten()
            .copied()
            .filter(|&j| j != consumer && !needs(j))
            .collect();
        let n = found.len();
        found
            .into_iter()
            .map(|j| {
                let c = 0.8 / (1.0 + 0.35 * (n.max(1) as f32).ln());
                (j, c, "its answer carries that field")
            })
            .collect()
    }

    /// The producers a consumer's route names for its path parameter.
    fn by_route(&self, tools: &[Tool], consumer: usize, param: &str) -> Found {
        let Some((_, url)) = tools.get(consumer).and_then(http) else {
            return Vec::new();
        };
        let placeholder = format!("{{{param}}}");
        let Some(at) = split(url).1.iter().position(|s| *s == placeholder) else {
            return Vec::new();
        };
        let (host, segments) = route(url);
        let mut out = Vec::new();
        let collection = (host.clone(), segments[..at].to_vec());
        for &j in self.lists.get(&collection).into_iter().flatten() {
            if j != consumer {
                out.push((j, 0.85, "it lists the collection the path names"));
            }
        }
        for &j in self.creates.get(&collection).into_iter().flatten() {
            if j != consumer {
                out.push((j, 0.75, "it creates one in the collection the path names"));
            }
        }
        if let Some(resource) = at.checked_sub(1).and_then(|k| segments.get(k)) {
            let key = (host, singular(resource).to_string());
            for &j in self.searches.get(&key).into_iter().flatten() {
                if j != consumer && !out.iter().any(|(o, _, _)| *o == j) {
                    out.push((j, 0.8, "it searches the resource the path names"));
                }
            }
        }
        out
    }
}

/// The names of the producers `routes` finds (tests).
#[cfg(test)]
fn found<'t>(routes: &Routes, tools: &'t [Tool], consumer: usize, param: &str) -> Vec<&'t str> {
    routes
        .of_param(tools, consumer, param)
        .iter()
        .map(|(j, _, _)| tools[*j].name.as_str())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Param;

    fn op(name: &str, method: &str, url: &str) -> Tool {
        let params = url
            .split('/')
            .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
            .map(Param::required)
            .collect();
        Tool {
            name: name.into(),
            params,
            upstream: Some(Box::new(Upstream::Http {
                method: method.into(),
                url: url.into(),
                params: Default::default(),
                auth: None,
                output_schema: None,
            })),
            ..Tool::default()
        }
    }

    #[test]
    fn a_path_parameter_comes_from_its_collection_or_a_search() {
        let base = "https://api.example.com/v1";
        let tools = [
            op("findPets", "GET", &format!("{base}/pets")),
            op("findPetById", "GET", &format!("{base}/pets/{{id}}")),
            op("deletePet", "DELETE", &format!("{base}/pets/{{id}}")),
            op("addPet", "POST", &format!("{base}/pets")),
            op("searchPeople", "GET", &format!("{base}/search/person")),
            op("getPerson", "GET", &format!("{base}/person/{{person_id}}")),
            op("otherApi", "GET", "https://other.example.com/v1/pets"),
            op(
                "getRepo",
                "GET",
                &format!("{base}/repos/{{owner}}/{{slug}}"),
            ),
            op("listRepos", "GET", &format!("{base}/repos/{{owner}}")),
            op("findOrders", "GET", &format!("{base}/order/findByStatus")),
            op("placeOrder", "POST", &format!("{base}/order")),
            op("getOrderById", "GET", &format!("{base}/order/{{orderId}}")),
        ];
        let routes = Routes::of(&tools);
        let names = |consumer: usize, param: &str| found(&routes, &tools, consumer, param);
        // The list on the same host (not another API's), then the POST
        // that creates one.
        assert_eq!(names(1, "id"), ["findPets", "addPet"]);
        assert_eq!(names(2, "id"), ["findPets", "addPet"]);
        assert_eq!(names(11, "orderId"), ["placeOrder", "findOrders"]);
        assert_eq!(names(5, "person_id"), ["searchPeople"]);
        // The second path parameter: the collection under the first one.
        assert_eq!(names(7, "slug"), ["listRepos"]);
        // No collection before the first one.
        assert!(names(7, "owner").is_empty());
        // Not a path parameter.
        assert!(names(1, "limit").is_empty());
    }
}

#[cfg(test)]
mod answer_tests {
    use super::*;
    use crate::model::Param;
    use serde_json::json;

    fn tool(name: &str, up: Upstream, required: &[&str]) -> Tool {
        Tool {
            name: name.into(),
            params: required.iter().map(|n| Param::required(n)).collect(),
            upstream: Some(Box::new(up)),
            ..Tool::default()
        }
    }

    fn mcp(url: &str, output: Option<serde_json::Value>) -> Upstream {
        Upstream::Mcp {
            url: url.into(),
            tool: "t".into(),
            auth: None,
            output_schema: output,
        }
    }

    fn get(url: &str, output: Option<serde_json::Value>) -> Upstream {
        Upstream::Http {
            method: "GET".into(),
            url: url.into(),
            params: Default::default(),
            auth: None,
            output_schema: output,
        }
    }

    #[test]
    fn an_answer_hands_out_the_fields_it_carries() {
        let session =
            json!({"type": "object", "properties": {"session_token": {"type": "string"}}});
        let me = json!({"type": "object", "properties": {"user": {"type": "object",
            "properties": {"username": {"type": "string"}, "id": {"type": "integer"}}}}});
        let tools = [
            tool(
                "open_session",
                mcp("https://mcp.a.com/mcp", Some(session.clone())),
                &[],
            ),
            tool(
                "send_message",
                mcp("https://mcp.a.com/mcp", None),
                &["session_token"],
            ),
            tool(
                "other_server",
                mcp("https://mcp.b.com/mcp", Some(session)),
                &[],
            ),
            tool("whoami", get("https://api.a.com/me", Some(me.clone())), &[]),
            tool(
                "getUser",
                get("https://api.a.com/users/{username}", Some(me)),
                &["username"],
            ),
            tool(
                "listRepos",
                get("https://api.a.com/repos/{username}", None),
                &["username", "id"],
            ),
        ];
        let routes = Routes::of(&tools);
        let names = |consumer: usize, param: &str| found(&routes, &tools, consumer, param);
        // The same server's answer, not another server's.
        assert_eq!(names(1, "session_token"), ["open_session"]);
        // A nested field; not from a tool that needs the value itself.
        assert_eq!(names(5, "username"), ["whoami"]);
        // `id` says too little.
        assert!(names(5, "id").is_empty());
    }
}
