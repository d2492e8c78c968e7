//! Arbitrary bytes as the JSON body of every JSON route (the first byte
//! picks the route): the typed extractors answer malformed input with the
//! field and its code, the engine never panics, nothing answers 500.

use super::server::{check, send};

const ROUTES: &[(&str, &str)] = &[
    ("POST", "/v1/search"),
    ("POST", "/v1/resolve"),
    ("POST", "/v1/select"),
    ("POST", "/v1/prompt"),
    ("POST", "/v1/usage"),
    ("POST", "/v1/sessions/fuzz/failures"),
    ("POST", "/v1/sources"),
    ("POST", "/v1/sparql"),
    ("POST", "/v1/pending/x/approve"),
    ("GET", "/v1/tools?limit=3"),
];

pub fn run(data: &[u8]) {
    let Some((&first, body)) = data.split_first() else {
        return;
    };
    let (method, path) = ROUTES[usize::from(first) % ROUTES.len()];
    // Sources and approvals are not fetched here: a valid one is refused
    // by the reach (no source root, nothing private) or not found.
    let (status, out) = send(
        method,
        path,
        &[("content-type", "application/json")],
        body.to_vec(),
    );
    check(status, &out, &format!("{method} {path}"));
}
