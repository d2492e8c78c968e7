//! Outside clients against a live server: the official MCP Python SDK on
//! `/mcp`, and schemathesis generating requests from `/openapi.json`. Both
//! are installed by `scripts/setup-test-clients.sh` (pinned, into a cached
//! virtualenv), which the tests run themselves.

use crate::common::root;
use crate::http::Live;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, OnceLock};
use toolgraph::server::{KeyEntry, Keys, Role, ServeOptions};
use toolgraph::{Embeddings, Engine, EngineOptions};

/// The virtualenv with `mcp` and `schemathesis`.
fn pyenv() -> &'static PathBuf {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| {
        let dir = std::env::var_os("TOOLGRAPH_PYENV").map_or_else(
            || dirs::home_dir().unwrap().join(".cache/toolgraph/pyenv"),
            PathBuf::from,
        );
        let out = Command::new(root().join("scripts/setup-test-clients.sh"))
            .arg(&dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "setup-test-clients.sh failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        dir
    })
}

fn seeded() -> Engine {
    let engine = Engine::open(EngineOptions::memory(Embeddings::Model(
        toolgraph::embed::default_model_dir(),
    )))
    .unwrap();
    engine
        .load_paths(&[root().join("ontology"), root().join("seeds")], None)
        .unwrap();
    engine
}

const ADMIN: &str = "mcp-admin-key-0123456789abcdef";
const SUPPORT: &str = "mcp-support-key-0123456789abcdef";

/// Runs the SDK client: lists the tools, calls one, returns what it printed.
fn mcp_call(live: &Live, tool: &str, args: &str, key: &str) -> serde_json::Value {
    let out = Command::new(pyenv().join("bin/python"))
        .arg(root().join("tests/mcp/find_tools.py"))
        .arg(live.url("/mcp"))
        .arg(tool)
        .arg(args)
        .arg(key)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "MCP client failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or(""))
        .unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[test]
fn the_official_mcp_client_finds_only_the_tools_its_key_may_use() {
    let keys = Keys::from_entries(vec![
        KeyEntry {
            key: ADMIN.into(),
            role: Role::Admin,
            org: None,
            agent: None,
            name: None,
        },
        KeyEntry {
            key: SUPPORT.into(),
            role: Role::Reader,
            org: None,
            agent: Some("acme_support".into()),
            name: None,
        },
    ]);
    let live = Live::start(
        Arc::new(seeded()),
        ServeOptions {
            keys,
            ..ServeOptions::default()
        },
    );
    let query = r#"{"query": "reserve a seat on Southwest flight 175", "limit": 5}"#;
    let v = mcp_call(&live, "find_tools", query, ADMIN);
    let tools: Vec<&str> = v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["find_tools", "resolve_verb", "select_tools"]);
    let ann = |name: &str| {
        v["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(ann("find_tools")["read_only"], true);
    assert_eq!(ann("find_tools")["destructive"], false);
    assert_eq!(
        ann("select_tools")["read_only"],
        false,
        "it records the session"
    );
    assert_eq!(ann("find_tools")["input_schema"]["required"][0], "query");
    assert!(!v["is_error"].as_bool().unwrap());
    // The same answer as `/v1/search`, with each match's input schema.
    let found = &v["result"]["matches"];
    assert_eq!(found[0]["tool"], "airline_seat_reserve", "{v}");
    assert!(found[0]["input_schema"]["properties"]["flight_number"].is_object());
    assert!(found[0]["confidence"].as_f64().unwrap() > 0.5);
    // A support agent's key: travel booking is outside its policy.
    let v = mcp_call(&live, "find_tools", query, SUPPORT);
    let names: Vec<&str> = v["result"]["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tool"].as_str().unwrap())
        .collect();
    assert!(!names.contains(&"airline_seat_reserve"), "{names:?}");
    assert!(!v.to_string().contains("airline_seat_reserve"));
    // The other two tools answer too.
    let v = mcp_call(
        &live,
        "resolve_verb",
        r#"{"verb": "CONVERT_CURRENCY", "context": "100 USD to EUR"}"#,
        ADMIN,
    );
    assert_eq!(v["result"]["decision"], "substitute", "{v}");
    let v = mcp_call(
        &live,
        "select_tools",
        r#"{"session": "mcp-1", "message": "Add a reminder for tomorrow"}"#,
        ADMIN,
    );
    assert_eq!(v["result"]["domains"][0], "reminders", "{v}");
}

#[test]
fn schemathesis_finds_no_server_error_and_no_schema_violation() {
    let dir = root();
    let live = Live::start(
        Arc::new(seeded()),
        ServeOptions {
            reload: vec![dir.join("ontology"), dir.join("seeds")],
            ..ServeOptions::default()
        },
    );
    // A scan answers 503 when the source it reads is unreachable: documented,
    // and the right answer for a generated URL. Every other operation's 5xx
    // fails, and so does a scan's 500. The client waits longer than the
    // server's own request limit (30 s), so a slow answer is the server's.
    let config = tempfile::tempdir().unwrap();
    let config_file = config.path().join("schemathesis.toml");
    std::fs::write(
        &config_file,
        r#"[[operations]]
include-path = "/v1/sources/{id}/scan"
checks.not_a_server_error.expected-statuses = ["2xx", "3xx", "4xx", "503"]
"#,
    )
    .unwrap();
    let out = Command::new(pyenv().join("bin/schemathesis"))
        .current_dir(std::env::temp_dir())
        .env("SCHEMATHESIS_HOOKS", "")
        .args([
            "--no-color",
            "--config-file",
            config_file.to_str().unwrap(),
            "run",
            &live.url("/openapi.json"),
            "--checks",
            "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,response_headers_conformance",
            "--max-examples",
            "25",
            "--seed",
            "7",
            "--workers",
            "2",
            "--request-timeout",
            "40",
        ])
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // "  1227 generated, 0 found …"
    let generated = text
        .lines()
        .map(str::trim)
        .find(|l| {
            let mut w = l.split_whitespace();
            w.next().is_some_and(|n| n.parse::<usize>().is_ok())
                && w.next().is_some_and(|g| g.starts_with("generated"))
        })
        .unwrap_or("")
        .to_string();
    eprintln!("schemathesis: {generated}");
    assert!(out.status.success(), "{text}");
    let cases: usize = generated
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(cases >= 500, "too few generated cases: {generated}");
}
