//! What a request must look like before anything reads it: the size of
//! its target and headers (answered 414/431 in the one JSON error shape;
//! hyper's own limits, set twice as high in `listen.rs`, only catch what
//! gets past these and answer with an empty body), and, on an open server
//! (no keys), that it comes from this machine and not from a web page.
//!
//! An open server trusts whoever reaches it, and it listens on loopback
//! only: but a page the operator visits can reach loopback too, with a
//! cross-site `text/plain` POST (no CORS preflight) or by rebinding its own
//! host name to 127.0.0.1. So on an open server:
//! - the `Host` must name this machine (`localhost`, `127.0.0.1`, `[::1]`)
//!   or a host the operator allowed (`--allowed-host`);
//! - a request with an `Origin` must come from such a host too;
//! - a request with a body must not use the content types a page can send
//!   without a preflight (`text/plain`, form encodings).
//!
//! With keys none of this is needed: a page cannot attach the bearer key.

use super::Shared;
use super::error::{ApiError, Code};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// Sizes first, then (open servers) the browser checks.
pub(crate) async fn guard(State(state): State<Shared>, req: Request, next: Next) -> Response {
    if let Err(e) = sizes(&state.limits, &req) {
        return e.into_response();
    }
    if state.keys.is_open()
        && let Err(e) = same_machine(&state.allowed_hosts, req.method(), req.headers())
    {
        return e.into_response();
    }
    next.run(req).await
}

fn sizes(limits: &super::Limits, req: &Request) -> Result<(), ApiError> {
    let target = req.uri().path_and_query().map_or(0, |pq| pq.as_str().len());
    if target > limits.uri_bytes {
        return Err(ApiError::new(
            Code::UriTooLong,
            format!(
                "the request target is {target} bytes; at most {} are read",
                limits.uri_bytes
            ),
        ));
    }
    let headers = req.headers();
    let bytes: usize = headers
        .iter()
        .map(|(k, v)| k.as_str().len() + v.len() + 4)
        .sum();
    if headers.len() > limits.max_headers || bytes > limits.header_bytes {
        return Err(ApiError::new(
            Code::HeadersTooLarge,
            format!(
                "{} headers of {bytes} bytes; at most {} headers of {} bytes are read",
                headers.len(),
                limits.max_headers,
                limits.header_bytes
            ),
        ));
    }
    Ok(())
}

/// The host part of an authority (`[::1]:8080` -> `::1`, `Localhost:80` ->
/// `localhost`).
fn host_of(authority: &str) -> String {
    let a = authority.trim();
    let host = if let Some(rest) = a.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        a.rsplit_once(':')
            .filter(|(_, port)| port.bytes().all(|b| b.is_ascii_digit()))
            .map_or(a, |(h, _)| h)
    };
    host.trim_end_matches('.').to_ascii_lowercase()
}

fn is_allowed(host: &str, allowed: &[String]) -> bool {
    matches!(host, "localhost" | "127.0.0.1" | "::1") || allowed.iter().any(|a| host_of(a) == host)
}

fn refused(message: String) -> ApiError {
    ApiError::new(Code::Forbidden, message)
}

/// The open server's checks (see the module's documentation).
fn same_machine(allowed: &[String], method: &Method, headers: &HeaderMap) -> Result<(), ApiError> {
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .map(host_of)
        .unwrap_or_default();
    if !is_allowed(&host, allowed) {
        return Err(refused(format!(
            "this server has no keys and answers only requests for this machine, not for host `{host}` (start it with --allowed-host to add one)"
        )));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        let from = origin
            .split_once("://")
            .map(|(_, rest)| host_of(rest.split('/').next().unwrap_or("")));
        if !from.is_some_and(|h| is_allowed(&h, allowed)) {
            return Err(refused(format!(
                "this server has no keys and answers no web page from origin `{origin}`"
            )));
        }
    }
    let writes = !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS);
    let simple = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .is_some_and(|t| {
            matches!(
                t.as_str(),
                "text/plain" | "application/x-www-form-urlencoded" | "multipart/form-data"
            )
        });
    if writes && simple {
        return Err(ApiError::new(
            Code::InvalidContentType,
            "this server has no keys and takes no text/plain or form bodies (a web page can send those); send application/json, or the format's own type",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(k.clone(), HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn hosts_are_parsed_with_ports_brackets_and_case() {
        assert_eq!(host_of("127.0.0.1:8080"), "127.0.0.1");
        assert_eq!(host_of("[::1]:8080"), "::1");
        assert_eq!(host_of("LocalHost"), "localhost");
        assert_eq!(host_of("localhost.:80"), "localhost");
        assert_eq!(host_of("rebind.evil.example"), "rebind.evil.example");
    }

    #[test]
    fn an_open_server_answers_only_this_machine() {
        let ok = |h: &HeaderMap, m: Method| same_machine(&[], &m, h).is_ok();
        let local = headers(&[(header::HOST, "127.0.0.1:7070")]);
        assert!(ok(&local, Method::GET));
        // DNS rebinding: the page's own name, now pointing here.
        assert!(!ok(
            &headers(&[(header::HOST, "rebind.evil.example:7070")]),
            Method::GET
        ));
        assert!(!ok(&HeaderMap::new(), Method::GET));
        // A cross-site page.
        let cross = headers(&[
            (header::HOST, "127.0.0.1:7070"),
            (header::ORIGIN, "https://evil.example"),
        ]);
        assert!(!ok(&cross, Method::POST));
        let null = headers(&[(header::HOST, "localhost"), (header::ORIGIN, "null")]);
        assert!(!ok(&null, Method::POST));
        let console = headers(&[
            (header::HOST, "127.0.0.1:7070"),
            (header::ORIGIN, "http://127.0.0.1:7070"),
            (header::CONTENT_TYPE, "application/json"),
        ]);
        assert!(ok(&console, Method::POST));
        // A body a page can send without a preflight.
        let plain = headers(&[
            (header::HOST, "localhost"),
            (header::CONTENT_TYPE, "text/plain;charset=utf-8"),
        ]);
        assert!(!ok(&plain, Method::POST));
        assert!(ok(&plain, Method::GET));
        // An operator's own name.
        let named = headers(&[(header::HOST, "toolgraph.internal:7070")]);
        assert!(same_machine(&["toolgraph.internal".into()], &Method::GET, &named).is_ok());
    }
}
