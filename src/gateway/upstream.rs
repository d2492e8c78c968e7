//! Calling an upstream: `tools/call` on an MCP server (sessions kept and
//! reused per server and credential), or one HTTP operation with each
//! argument placed where the spec says (path, query, header, JSON body).
//! Every call goes only to the addresses the airlock's [`Reach`] allows (a
//! private or loopback host only where the operator allowed it), resolved
//! once and pinned, with no redirect followed, no proxy from the
//! environment, a time limit and a size limit.

use crate::airlock::fetch::{Bounds, McpSession};
use crate::airlock::reach::Reach;
use crate::error::{CallFailure, Error, Field, Result};
use crate::model::{AuthScheme, ParamIn, Upstream, UpstreamAuth};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

/// What an upstream answered.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The result as the upstream gave it (an MCP `CallToolResult`, or the
    /// HTTP body: JSON, else `{"text": …}`).
    pub result: Value,
    /// The HTTP status (HTTP upstreams).
    pub status: Option<u16>,
    /// The upstream says the call failed (MCP `isError`, HTTP 4xx/5xx).
    pub failed: bool,
}

/// MCP sessions kept open, by server and credential; the HTTP agent (its
/// connections kept alive and reused).
#[derive(Debug, Default)]
pub struct Sessions {
    open: Mutex<HashMap<(String, Option<String>), McpSession>>,
    /// HTTP agents by the private allowances they may reach.
    http: Mutex<HashMap<Vec<String>, ureq::Agent>>,
}

/// Sessions kept at once.
const MAX_SESSIONS: usize = 64;

fn upstream_err(e: Error) -> Error {
    let message = e.to_string();
    if message.contains("timed out")
        || message.contains("time limit")
        || message.contains("Timeout")
    {
        Error::call(
            CallFailure::UpstreamTimeout,
            format!("the upstream did not answer in time: {message}"),
        )
    } else {
        Error::call(
            CallFailure::Upstream,
            format!("the upstream failed: {message}"),
        )
    }
}

/// The header an MCP upstream's credential goes in.
fn mcp_headers(auth: Option<&UpstreamAuth>, secret: Option<&str>) -> Vec<(String, String)> {
    match (auth, secret) {
        (Some(a), Some(s)) => match a.scheme {
            AuthScheme::Header => vec![(key_name(a, "x-api-key"), s.to_string())],
            _ => vec![("authorization".into(), format!("Bearer {s}"))],
        },
        _ => Vec::new(),
    }
}

impl Sessions {
    /// `tools/call` of `tool` on `url`, in a kept session (opened on first
    /// use, opened again once when the server has forgotten it).
    fn call_mcp(
        &self,
        url: &str,
        tool: &str,
        args: Map<String, Value>,
        headers: Vec<(String, String)>,
        bounds: Bounds,
        reach: &Reach,
    ) -> Result<Answer> {
        let key = (
            url.to_string(),
            headers
                .first()
                .map(|(_, v)| crate::airlock::pin::canonical(&json!(v))),
        );
        let params = json!({"name": tool, "arguments": args});
        for attempt in 0..2 {
            let kept = self
                .open
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&key);
            let fresh = kept.is_none();
            let mut session = match kept {
                Some(s) => s,
                None => {
                    McpSession::open(url, bounds, reach, headers.clone()).map_err(upstream_err)?
                }
            };
            session.deadline = Instant::now() + bounds.timeout;
            session.max_bytes = bounds.max_bytes;
            match session.request("tools/call", params.clone()) {
                Ok(result) => {
                    let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
                    if open.len() < MAX_SESSIONS {
                        open.insert(key, session);
                    }
                    let failed = result.get("isError").and_then(Value::as_bool) == Some(true);
                    return Ok(Answer {
                        result,
                        status: None,
                        failed,
                    });
                }
                // A kept session the server no longer knows: once more, new.
                Err(e) if !fresh && attempt == 0 => {
                    tracing::debug!(error = %e, "a kept MCP session failed; opening a new one");
                    session.close();
                }
                Err(e) => {
                    session.close();
                    return Err(upstream_err(e));
                }
            }
        }
        Err(Error::call(
            CallFailure::Upstream,
            "the upstream failed twice",
        ))
    }
}

/// Percent-encodes one path segment or query component.
fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// An argument as text (path, query, header).
fn as_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A call refused before it leaves: the upstream needs a secret the
/// caller's organization has not got.
pub(crate) fn missing_secret(auth: &UpstreamAuth) -> Error {
    Error::call(
        CallFailure::Credentials,
        format!(
            "the upstream needs the secret `{}`, which the caller's organization has not got (the operator's secrets file)",
            auth.secret
        ),
    )
}

/// The header or query parameter an API key goes in.
fn key_name(auth: &UpstreamAuth, default: &str) -> String {
    auth.name.clone().unwrap_or_else(|| default.to_string())
}

/// A path parameter the arguments left in the URL (`{petId}`): required.
fn unfilled_slot(url: &str) -> Result<()> {
    if let Some(open) = url.find('{')
        && url[open..].contains('}')
    {
        let slot: String = url[open..]
            .chars()
            .take_while(|c| *c != '}')
            .skip(1)
            .collect();
        return Err(Error::invalid_at(
            Field::CallArguments,
            format!("/arguments/{slot}"),
            format!("`{slot}` is required: it is part of the operation's path"),
        ));
    }
    Ok(())
}

/// One HTTP request built from the arguments.
#[derive(Debug, PartialEq)]
pub struct HttpRequest {
    pub method: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Option<Value>,
}

/// Places each argument where the operation says; the credential as its
/// scheme says.
pub fn http_request(
    method: &str,
    template: &str,
    places: &std::collections::BTreeMap<String, ParamIn>,
    auth: Option<&UpstreamAuth>,
    secret: Option<&str>,
    args: Map<String, Value>,
) -> Result<HttpRequest> {
    let method = method.to_ascii_uppercase();
    let no_body = matches!(method.as_str(), "GET" | "HEAD" | "DELETE");
    let mut url = template.to_string();
    let mut query: Vec<(String, String)> = Vec::new();
    let mut headers = Vec::new();
    let mut body = Map::new();
    for (name, value) in args {
        if value.is_null() {
            continue;
        }
        let place = places.get(&name).copied().unwrap_or(if no_body {
            ParamIn::Query
        } else {
            ParamIn::Body
        });
        match place {
            ParamIn::Path => {
                let slot = format!("{{{name}}}");
                if !url.contains(&slot) {
                    return Err(Error::invalid_at(
                        Field::CallArguments,
                        format!("/arguments/{name}"),
                        format!("the operation's URL has no `{slot}`"),
                    ));
                }
                url = url.replace(&slot, &encode(&as_text(&value)));
            }
            ParamIn::Query => query.push((name, as_text(&value))),
            ParamIn::Header => {
                let text = as_text(&value);
                if text.bytes().any(|b| b < 0x20 || b == 0x7f) {
                    return Err(Error::invalid_at(
                        Field::CallArguments,
                        format!("/arguments/{name}"),
                        "a header value has no control characters",
                    ));
                }
                headers.push((name, text));
            }
            ParamIn::Body => {
                body.insert(name, value);
            }
        }
    }
    unfilled_slot(&url)?;
    match (auth, secret) {
        (Some(a), Some(s)) => match a.scheme {
            AuthScheme::Bearer => headers.push(("authorization".into(), format!("Bearer {s}"))),
            AuthScheme::Header => headers.push((key_name(a, "x-api-key"), s.to_string())),
            AuthScheme::Query => query.push((key_name(a, "api_key"), s.to_string())),
        },
        (Some(a), None) => return Err(missing_secret(a)),
        _ => {}
    }
    if !query.is_empty() {
        let q: Vec<String> = query
            .iter()
            .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
            .collect();
        url.push(if url.contains('?') { '&' } else { '?' });
        url.push_str(&q.join("&"));
    }
    let body = (!no_body && !body.is_empty()).then_some(Value::Object(body));
    Ok(HttpRequest {
        method,
        url,
        headers,
        body,
    })
}

fn agent(bounds: Bounds, reach: &Reach) -> ureq::Agent {
    crate::airlock::fetch::pinned_agent(
        bounds.timeout,
        reach,
        concat!("toolgraph-gateway/", env!("CARGO_PKG_VERSION")),
    )
}

fn send_http(
    req: HttpRequest,
    bounds: Bounds,
    reach: &Reach,
    agent: &ureq::Agent,
) -> Result<Answer> {
    reach
        .check_url(&req.url, Field::SourceLocation)
        .map_err(|e| {
            Error::call(
                CallFailure::Upstream,
                format!("the upstream may not be reached: {e}"),
            )
        })?;
    let mut builder = ureq::http::Request::builder()
        .method(req.method.as_str())
        .uri(&req.url);
    for (k, v) in &req.headers {
        builder = builder.header(k.as_str(), v.as_str());
    }
    let body = match &req.body {
        Some(b) => {
            builder = builder.header("content-type", "application/json");
            b.to_string()
        }
        None => String::new(),
    };
    let request = builder.body(body).map_err(|e| {
        Error::call(
            CallFailure::Upstream,
            format!("cannot build the upstream request: {e}"),
        )
    })?;
    let mut resp = agent
        .run(request)
        .map_err(|e| upstream_err(Error::unavailable("the upstream", e)))?;
    let status = resp.status().as_u16();
    if (300..400).contains(&status) {
        return Err(Error::call(
            CallFailure::Upstream,
            format!("the upstream redirected ({status}): not followed"),
        ));
    }
    let text = resp
        .body_mut()
        .with_config()
        .limit(bounds.max_bytes)
        .read_to_string()
        .map_err(|e| {
            let m = e.to_string();
            if m.contains("limit") {
                Error::call(
                    CallFailure::Output,
                    format!("the upstream's answer is over {} bytes", bounds.max_bytes),
                )
            } else {
                upstream_err(Error::unavailable("the upstream", e))
            }
        })?;
    let result = serde_json::from_str(&text).unwrap_or_else(|_| json!({ "text": text }));
    Ok(Answer {
        result,
        status: Some(status),
        failed: !(200..300).contains(&status),
    })
}

/// Calls `upstream` with checked `args`, the caller's `secret` for it.
pub fn call(
    upstream: &Upstream,
    args: Map<String, Value>,
    secret: Option<&str>,
    sessions: &Sessions,
    bounds: Bounds,
    reach: &Reach,
) -> Result<Answer> {
    match upstream {
        Upstream::Mcp {
            url, tool, auth, ..
        } => {
            if let (Some(a), None) = (auth, secret) {
                return Err(missing_secret(a));
            }
            sessions.call_mcp(
                url,
                tool,
                args,
                mcp_headers(auth.as_ref(), secret),
                bounds,
                reach,
            )
        }
        Upstream::Http {
            method,
            url,
            params,
            auth,
            ..
        } => {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(Error::call(
                    CallFailure::NoUpstream,
                    format!(
                        "the operation's server URL is not known (`{url}`): give the spec a `servers` URL or read it from one"
                    ),
                ));
            }
            let req = http_request(method, url, params, auth.as_ref(), secret, args)?;
            let agent = sessions
                .http
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .entry(reach.allow.clone())
                .or_insert_with(|| agent(bounds, reach))
                .clone();
            send_http(req, bounds, reach, &agent)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn arguments_go_where_the_operation_says() {
        let places = BTreeMap::from([
            ("id".to_string(), ParamIn::Path),
            ("verbose".to_string(), ParamIn::Query),
            ("x-trace".to_string(), ParamIn::Header),
            ("name".to_string(), ParamIn::Body),
        ]);
        let auth = UpstreamAuth {
            secret: "petstore".into(),
            scheme: AuthScheme::Bearer,
            name: None,
        };
        let args =
            json!({"id": "a b/c", "verbose": true, "x-trace": "t1", "name": "Rex", "tag": "dog"});
        let r = http_request(
            "post",
            "https://api.test/pets/{id}",
            &places,
            Some(&auth),
            Some("sk-1"),
            args.as_object().unwrap().clone(),
        )
        .unwrap();
        assert_eq!(r.method, "POST");
        assert_eq!(r.url, "https://api.test/pets/a%20b%2Fc?verbose=true");
        assert!(r.headers.contains(&("x-trace".into(), "t1".into())));
        assert!(
            r.headers
                .contains(&("authorization".into(), "Bearer sk-1".into()))
        );
        assert_eq!(r.body, Some(json!({"name": "Rex", "tag": "dog"})));

        let e = http_request(
            "GET",
            "https://api.test/pets/{id}",
            &places,
            Some(&auth),
            None,
            Map::new(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("`id` is required"), "{e}");
        let e = http_request(
            "GET",
            "https://api.test/pets",
            &places,
            Some(&auth),
            None,
            Map::new(),
        )
        .unwrap_err();
        assert!(
            matches!(
                e,
                Error::Call {
                    failure: CallFailure::Credentials,
                    ..
                }
            ),
            "{e}"
        );
        let key = UpstreamAuth {
            secret: "w".into(),
            scheme: AuthScheme::Query,
            name: Some("appid".into()),
        };
        let r = http_request(
            "GET",
            "https://api.test/w?units=si",
            &BTreeMap::new(),
            Some(&key),
            Some("k&1"),
            json!({"q": "Paris"}).as_object().unwrap().clone(),
        )
        .unwrap();
        assert_eq!(r.url, "https://api.test/w?units=si&q=Paris&appid=k%261");
        assert_eq!(r.body, None);
    }
}
