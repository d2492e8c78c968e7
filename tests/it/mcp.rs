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

/// The folder a setup script installs an outside client into (`$var`, or
/// `~/.cache/toolgraph/<name>`), the script run first (it returns at once
/// when the install is complete).
fn installed(script: &str, var: &str, name: &str) -> PathBuf {
    let dir = std::env::var_os(var).map_or_else(
        || {
            dirs::home_dir()
                .unwrap()
                .join(".cache/toolgraph")
                .join(name)
        },
        PathBuf::from,
    );
    let out = Command::new(root().join("scripts").join(script))
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{script} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

/// The virtualenv with `mcp` and `schemathesis`.
fn pyenv() -> &'static PathBuf {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| installed("setup-test-clients.sh", "TOOLGRAPH_PYENV", "pyenv"))
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

/// The tool-selection prompt (design 000) over MCP: the context, the tools
/// with their parameters, the answer expected.
fn the_prompt_over_mcp(live: &Live) {
    let v = mcp_call(
        live,
        "build_prompt",
        r#"{"tools": ["person_calendar_book", "customer_get"], "context": "Customer: John Doe, water heater repair"}"#,
        ADMIN,
    );
    let prompt = v["result"]["prompt"].as_str().unwrap_or_default();
    assert!(
        prompt.contains("Current context:\nCustomer: John Doe"),
        "{v}"
    );
    assert!(prompt.contains("person_calendar_book"), "{v}");
    assert!(prompt.contains("Respond in JSON"), "{v}");
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
    assert_eq!(
        tools,
        [
            "build_prompt",
            "call_tool",
            "find_tools",
            "resolve_verb",
            "select_tools"
        ]
    );
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
    the_prompt_over_mcp(&live);
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
            // One worker: hypothesis describes its filters with `ast.parse`,
            // which CPython 3.11 can fail from two threads at once
            // ("AST constructor recursion depth mismatch", seen in CI).
            "--workers",
            "1",
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

/// An MCP upstream (tests/mcp/upstream.py: the SDK's MCPServer, two tools)
/// on a free loopback port; killed when dropped.
struct McpUpstream {
    child: std::process::Child,
    port: u16,
}

impl McpUpstream {
    fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(pyenv().join("bin/python"))
            .arg(root().join("tests/mcp/upstream.py"))
            .arg(port.to_string())
            .spawn()
            .unwrap();
        let up = McpUpstream { child, port };
        let start = std::time::Instant::now();
        let addr: std::net::SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        while std::net::TcpStream::connect(addr).is_err()
            || crate::http::get(addr, "/count", None).status != 200
        {
            assert!(
                start.elapsed().as_secs() < 60,
                "the MCP upstream did not start"
            );
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        up
    }

    /// How many tool calls the upstream itself received.
    fn calls(&self) -> u64 {
        crate::http::get(
            format!("127.0.0.1:{}", self.port).parse().unwrap(),
            "/count",
            None,
        )
        .json()["calls"]
            .as_u64()
            .unwrap()
    }
}

impl Drop for McpUpstream {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const ACME: &str = "mcp-acme-key-0123456789abcdef";
const CAFE: &str = "mcp-cafe-key-0123456789abcdef";

/// The gateway's MCP face against a live server with the upstream's
/// `weather_now` approved for acme at 2 calls a minute.
fn gateway_server(up: &McpUpstream) -> Live {
    let entry = |key: &str, role: Role, org: Option<&str>| KeyEntry {
        key: key.into(),
        role,
        org: org.map(str::to_string),
        agent: None,
        name: None,
    };
    let keys = Keys::from_entries(vec![
        entry(ADMIN, Role::Admin, None),
        entry(ACME, Role::Reader, Some("acme")),
        entry(CAFE, Role::Reader, Some("corner_cafe")),
    ]);
    let live = Live::start(
        Arc::new(seeded()),
        ServeOptions {
            keys,
            airlock: crate::common::test_airlock(),
            ..ServeOptions::default()
        },
    );
    let post = |path: &str, body: serde_json::Value| {
        crate::http::post_json(live.addr, path, Some(ADMIN), &body.to_string())
    };
    let r = post(
        "/v1/sources",
        serde_json::json!({"kind": "mcp", "location": format!("http://127.0.0.1:{}/mcp", up.port)}),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let id = r.json()["id"].as_str().unwrap().to_string();
    let r = post(&format!("/v1/sources/{id}/scan"), serde_json::json!({}));
    assert_eq!(r.status, 200, "{}", r.body);
    let items = crate::http::get(live.addr, "/v1/pending", Some(ADMIN)).json();
    let item = items
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == "weather_now")
        .unwrap_or_else(|| panic!("{items}"))
        .clone();
    assert_eq!(item["manifest"]["upstream"]["kind"], "mcp", "{item}");
    let r = post(
        &format!("/v1/pending/{}/approve", item["id"].as_str().unwrap()),
        serde_json::json!({"rate_limit": 2, "access": {"orgs": ["acme"]}}),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    live
}

/// Runs tests/mcp/gateway_client.py: one JSON line for the discovery, one
/// per call.
fn planner(
    live: &Live,
    key: &str,
    query: &str,
    calls: serde_json::Value,
) -> Vec<serde_json::Value> {
    let out = Command::new(pyenv().join("bin/python"))
        .arg(root().join("tests/mcp/gateway_client.py"))
        .arg(live.url("/mcp"))
        .arg(key)
        .arg(query)
        .arg(calls.to_string())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "MCP client failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn a_planner_finds_then_calls_an_mcp_upstream_through_toolgraph_within_its_limits() {
    let up = McpUpstream::start();
    let live = gateway_server(&up);
    let calls = serde_json::json!([
        {"name": "weather_now", "arguments": {"town": "Paris"}},
        {"name": "weather_now", "arguments": {"city": "Paris"}},
        {"name": "call_tool", "arguments": {"name": "weather_now", "arguments": {"city": "Oslo"}}},
        {"name": "weather_now", "arguments": {"city": "Rome"}},
    ]);
    let lines = planner(&live, ACME, "current weather in a city", calls);
    let discovery = &lines[0];
    assert_eq!(
        discovery["before"],
        serde_json::json!([
            "build_prompt",
            "call_tool",
            "find_tools",
            "resolve_verb",
            "select_tools"
        ]),
        "{discovery}"
    );
    assert!(
        discovery["found"].to_string().contains("weather_now"),
        "{discovery}"
    );
    assert_eq!(
        discovery["list_changed"], true,
        "no tools/list_changed: {discovery}"
    );
    assert!(
        discovery["after"].to_string().contains("weather_now"),
        "{discovery}"
    );
    // Invalid arguments: the field named, and the upstream never called.
    let invalid = lines[1].to_string();
    assert!(
        invalid.contains("town") && invalid.contains("invalid_call_arguments"),
        "{invalid}"
    );
    // Two calls (by name, then through call_tool): the upstream's answers.
    assert_eq!(lines[2]["is_error"], false, "{}", lines[2]);
    assert!(
        lines[2]["text"]
            .as_str()
            .unwrap()
            .contains("Sunny and 21 C in Paris"),
        "{}",
        lines[2]
    );
    assert!(
        lines[3]["text"].as_str().unwrap().contains("Oslo"),
        "{}",
        lines[3]
    );
    // The third in the minute names the limit.
    let third = lines[4].to_string();
    assert!(
        third.contains("limit_reached") && third.contains("rate limit"),
        "{third}"
    );
    assert_eq!(up.calls(), 2, "the upstream's own counter");

    // corner_cafe: not found, not listed, and a call answers as for a tool
    // that does not exist.
    let calls = serde_json::json!([
        {"name": "weather_now", "arguments": {"city": "Paris"}},
        {"name": "weather_nowx", "arguments": {"city": "Paris"}},
    ]);
    let lines = planner(&live, CAFE, "current weather in a city", calls);
    assert!(
        !lines[0].to_string().contains("weather_now"),
        "{}",
        lines[0]
    );
    let hidden = lines[1].to_string().replace("weather_now", "X");
    let missing = lines[2].to_string().replace("weather_nowx", "X");
    assert_eq!(hidden, missing);
    assert!(hidden.contains("tool_not_found"), "{hidden}");
    assert_eq!(up.calls(), 2);
}

/// The MCP Inspector's CLI (installed by `scripts/setup-inspector.sh`).
fn inspector() -> &'static PathBuf {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| {
        installed("setup-inspector.sh", "TOOLGRAPH_INSPECTOR", "inspector")
            .join("bin/mcp-inspector")
    })
}

/// One Inspector CLI command against `/mcp` with `key`; its JSON answer.
fn inspect(live: &Live, key: &str, args: &[&str]) -> serde_json::Value {
    let catalog = tempfile::tempdir().unwrap();
    let out = Command::new(inspector())
        .env("MCP_CATALOG_PATH", catalog.path().join("mcp.json"))
        .arg("--cli")
        .arg(live.url("/mcp"))
        .args([
            "--transport",
            "http",
            "--header",
            &format!("Authorization: Bearer {key}"),
        ])
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "Inspector CLI failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[test]
fn the_mcp_inspector_cli_lists_finds_and_calls_through_toolgraph() {
    let up = McpUpstream::start();
    let live = gateway_server(&up);
    let listed = inspect(&live, ACME, &["--method", "tools/list"]);
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"find_tools") && names.contains(&"call_tool"),
        "{listed}"
    );
    let found = inspect(
        &live,
        ACME,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "find_tools",
            "--tool-arg",
            "query=current weather in a city",
        ],
    );
    assert!(found.to_string().contains("weather_now"), "{found}");
    let called = inspect(
        &live,
        ACME,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "call_tool",
            "--tool-arg",
            "name=weather_now",
            "--tool-arg",
            r#"arguments={"city": "Lisbon"}"#,
        ],
    );
    assert!(
        called.to_string().contains("Sunny and 21 C in Lisbon"),
        "{called}"
    );
    assert_eq!(up.calls(), 1);
}
