//! The leak probe: for several callers, every reader route and MCP tool,
//! asked about each tool the caller may not see (by its description, by
//! its name). No answer names a hidden tool, and where a request names one
//! the answer is the answer for a tool that does not exist.

use super::{ACME, CAFE, DRAFTER, Mcp, READER, READERS, engine, scale, start, with_key};
use crate::http::{Live, Resp};
use serde_json::json;
use toolgraph::Caller;
use toolgraph::server::ServeOptions;

/// The caller each reader key stands for.
fn caller_of(key: &str) -> Caller {
    let c = |org: Option<&str>, agent: Option<&str>| Caller {
        org: org.map(str::to_string),
        agent: agent.map(str::to_string),
        ..Caller::default()
    };
    match key {
        ACME => c(Some("acme"), None),
        CAFE => c(Some("corner_cafe"), None),
        DRAFTER => c(None, Some("acme_drafter")),
        _ => c(None, None),
    }
}

/// Whether `body` names `tool` as a whole word (a tool name, an IRI's last
/// part, `a -> tool`).
fn names(body: &str, tool: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    body.match_indices(tool).any(|(i, _)| {
        let before = body[..i].chars().next_back();
        let after = body[i + tool.len()..].chars().next();
        !before.is_some_and(word) && !after.is_some_and(word)
    })
}

/// An answer with the request id taken out and `name` replaced: what must
/// be the same for a hidden tool and a missing one.
fn shape(r: &Resp, name: &str) -> String {
    let mut v: serde_json::Value = serde_json::from_str(&r.body).unwrap_or(json!(r.body));
    if let Some(e) = v.get_mut("error").and_then(|e| e.as_object_mut()) {
        e.remove("request_id");
    }
    format!("{} {}", r.status, v.to_string().replace(name, "<name>"))
}

/// Tools hidden from the caller of `key`, a sample of at most `n`, with
/// their descriptions.
fn hidden(key: &str, n: usize) -> Vec<(String, String)> {
    let e = engine();
    let all: Vec<String> = e
        .hidden_from(&caller_of(key))
        .unwrap()
        .into_iter()
        .filter(|x| !x.allowed)
        .map(|x| x.tool)
        .collect();
    let step = (all.len() / n.max(1)).max(1);
    // A tool the platform hides has no description anyone may read: its
    // name in words stands in.
    all.iter()
        .step_by(step)
        .take(n)
        .map(|t| {
            let d = e
                .tool(t)
                .map_or_else(|| t.replace('_', " "), |x| x.description);
            (t.clone(), d)
        })
        .collect()
}

/// The reader routes asked about one hidden tool by its description.
fn by_description(live: &Live, key: &str, description: &str) -> Vec<Resp> {
    let text = json!(description);
    vec![
        with_key(
            live,
            "POST",
            "/v1/search",
            Some(key),
            &json!({"text": text, "limit": 100, "explain": true, "dependencies": true, "with_parameters": true})
                .to_string(),
        ),
        with_key(
            live,
            "POST",
            "/v1/resolve",
            Some(key),
            &json!({"verb": "DO_THE_THING", "context": text}).to_string(),
        ),
        with_key(
            live,
            "POST",
            "/v1/select",
            Some(key),
            &json!({"session": "leak-probe", "message": text}).to_string(),
        ),
        with_key(
            live,
            "POST",
            "/v1/prompt",
            Some(key),
            &json!({"text": text, "budget_tokens": 4000}).to_string(),
        ),
    ]
}

/// The reader routes that name a tool, asked about `name`.
fn by_name(live: &Live, key: &str, name: &str) -> Vec<Resp> {
    vec![
        with_key(live, "GET", &format!("/v1/tools/{name}"), Some(key), ""),
        with_key(
            live,
            "GET",
            &format!("/v1/tools/{name}/dependencies"),
            Some(key),
            "",
        ),
        with_key(
            live,
            "POST",
            "/v1/search",
            Some(key),
            &json!({"text": "do it", "candidates": [name]}).to_string(),
        ),
        with_key(
            live,
            "POST",
            "/v1/prompt",
            Some(key),
            &json!({"tools": [name]}).to_string(),
        ),
        with_key(
            live,
            "POST",
            "/v1/sessions/leak-probe/failures",
            Some(key),
            &json!({"tool": name, "reason": "timed out"}).to_string(),
        ),
        with_key(
            live,
            "POST",
            "/v1/usage",
            Some(key),
            &json!({"tool": name, "org": caller_of(key).org.unwrap_or("acme".into())}).to_string(),
        ),
        with_key(
            live,
            "POST",
            "/v1/call",
            Some(key),
            &json!({"tool": name, "arguments": {"x": 1}}).to_string(),
        ),
    ]
}

/// The listings: every page of tools, the domains, the goals (their check
/// lists and warnings), the key's own view.
fn listings(live: &Live, key: &str) -> Vec<Resp> {
    let mut out = Vec::new();
    let mut offset = 0;
    loop {
        let r = with_key(
            live,
            "GET",
            &format!("/v1/tools?limit=500&offset={offset}"),
            Some(key),
            "",
        );
        assert_eq!(r.status, 200, "{}", r.body);
        let n = r.json()["tools"].as_array().map_or(0, Vec::len);
        out.push(r);
        if n < 500 {
            break;
        }
        offset += n;
    }
    out.push(with_key(live, "GET", "/v1/domains", Some(key), ""));
    out.push(with_key(live, "GET", "/v1/goals", Some(key), ""));
    out.push(with_key(live, "GET", "/v1/me", Some(key), ""));
    out
}

#[test]
fn no_route_or_mcp_tool_tells_a_caller_of_a_tool_it_may_not_see() {
    let live = start(ServeOptions::default());
    let mut requests = 0usize;
    for key in READERS {
        let hidden = hidden(key, 8 * scale());
        assert!(
            !hidden.is_empty() || key == READER,
            "{key}: nothing hidden to probe"
        );
        let leak = |r: &Resp, what: &str| {
            assert!(r.status != 500, "{what}: {}", r.body);
            for (tool, _) in &hidden {
                assert!(
                    !names(&r.body, tool),
                    "{key}: {what} names hidden `{tool}`: {}",
                    r.body
                );
            }
        };
        for r in listings(&live, key) {
            leak(&r, "a listing");
            requests += 1;
        }
        let mcp = Mcp::open(&live, key);
        for (tool, description) in &hidden {
            for r in by_description(&live, key, description) {
                leak(&r, &format!("asked for `{description}`"));
                requests += 1;
            }
            let missing = format!("zz_missing_{}", tool.len());
            let got = by_name(&live, key, tool);
            let want = by_name(&live, key, &missing);
            for (g, w) in got.iter().zip(&want) {
                assert_eq!(
                    shape(g, tool),
                    shape(w, &missing),
                    "{key}: hidden `{tool}` vs missing"
                );
                requests += 2;
            }
            // Calling it over MCP (through call_tool, or by its name as a
            // proxied tools/call) answers as for a tool that does not exist.
            for (got, want) in [
                (
                    mcp.call_tool("call_tool", json!({"name": tool, "arguments": {}})),
                    mcp.call_tool("call_tool", json!({"name": missing, "arguments": {}})),
                ),
                (
                    mcp.call_tool(tool, json!({})),
                    mcp.call_tool(&missing, json!({})),
                ),
            ] {
                assert_eq!(
                    got.to_string().replace(tool.as_str(), "X"),
                    want.to_string().replace(missing.as_str(), "X"),
                    "{key}: MCP call of hidden `{tool}` vs missing"
                );
                requests += 2;
            }
            for (name, args) in [
                (
                    "find_tools",
                    json!({"query": description, "limit": 100, "dependencies": true}),
                ),
                (
                    "resolve_verb",
                    json!({"verb": "DO_THE_THING", "context": description}),
                ),
                (
                    "select_tools",
                    json!({"session": "leak-probe-mcp", "message": description}),
                ),
                (
                    "build_prompt",
                    json!({"query": description, "context": description, "budget_tokens": 32000}),
                ),
            ] {
                let v = mcp.call_tool(name, args).to_string();
                for (t, _) in &hidden {
                    assert!(!names(&v, t), "{key}: MCP {name} names hidden `{t}`: {v}");
                }
                requests += 1;
            }
        }
    }
    eprintln!(
        "leak probe: {requests} requests over {} callers, no leak",
        READERS.len()
    );
}

#[test]
fn the_word_check_finds_names_only_as_whole_words() {
    assert!(names(r#"{"tool":"flight_checkin"}"#, "flight_checkin"));
    assert!(names(
        "boarding_pass_get -> flight_checkin.",
        "flight_checkin"
    ));
    assert!(names(
        "https://toolgraph.dev/tool/flight_checkin",
        "flight_checkin"
    ));
    assert!(!names("flight_checkin_status", "flight_checkin"));
    assert!(!names("preflight_checkin", "flight_checkin"));
}
