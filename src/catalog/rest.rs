//! Producers an HTTP API's structure reveals: a path parameter `{p}` of
//! `/a/b/{p}/…` is handed out by the `GET` on the collection before it
//! (`/a/b`: the list), by a search over the same resource (`/search/b`,
//! `/b/search`, `/b/findByStatus`), or by the `POST` that creates one on
//! that collection, on the same host. (`GET /pets/{id}` <- `GET /pets`;
//! `/repositories/{owner}/{slug}` <- `GET /repositories/{owner}`;
//! `/store/order/{orderId}` <- `POST /store/order`.)

use crate::model::{Tool, Upstream};
use std::collections::HashMap;

/// A URL's host and its path segments, lowercase, path parameters as
/// `{}` (`https://api.x.com/v1/pets/{id}` -> ("api.x.com", [v1, pets, {}])).
fn route(url: &str) -> (String, Vec<String>) {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let path = path.split(['?', '#']).next().unwrap_or("");
    let segments = path
        .split('/')
        .filter(|s| !s.is_empty())
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

    /// The producers of path parameter `param` of tool `consumer`, with a
    /// confidence and why.
    pub fn of_param(
        &self,
        tools: &[Tool],
        consumer: usize,
        param: &str,
    ) -> Vec<(usize, f32, &'static str)> {
        let Some((_, url)) = tools.get(consumer).and_then(http) else {
            return Vec::new();
        };
        let placeholder = format!("{{{param}}}");
        let raw: Vec<&str> = url
            .split_once("://")
            .map_or(url, |(_, r)| r)
            .split('/')
            .skip(1)
            .filter(|s| !s.is_empty())
            .collect();
        let Some(at) = raw.iter().position(|s| *s == placeholder) else {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Param;

    fn op(name: &str, method: &str, url: &str) -> Tool {
        let params = url
            .split('/')
            .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
            .map(|n| Param {
                name: n.to_string(),
                description: String::new(),
                ty: Some("string".into()),
                required: true,
                entity: None,
            })
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
        let names = |consumer: usize, param: &str| -> Vec<&str> {
            routes
                .of_param(&tools, consumer, param)
                .iter()
                .map(|(j, _, _)| tools[*j].name.as_str())
                .collect()
        };
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
