//! Exhaustion and edge probes, each with the limit that answers it and the
//! server answering throughout.

use super::{ADMIN, CAFE, Mcp, READER, rpc_message, scale, start, still_answers, with_key};
use crate::http::{Live, assert_error_shape, call, get};
use serde_json::json;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};
use toolgraph::server::{Limits, ServeOptions};

/// Finding D2: 20,000 half-open connections used up the descriptors and
/// the server stopped answering. Idle connections now wait at the cap and
/// are closed after the header timeout; a slow writer too.
#[test]
fn idle_and_slow_connections_cannot_starve_the_server() {
    let live = start(ServeOptions {
        limits: Limits {
            max_connections: 16,
            header_read_timeout: Duration::from_secs(1),
            ..Limits::default()
        },
        ..ServeOptions::default()
    });
    let idle: Vec<TcpStream> = (0..200 * scale())
        .filter_map(|_| TcpStream::connect(live.addr).ok())
        .collect();
    assert!(idle.len() >= 100, "only {} connections opened", idle.len());
    let started = Instant::now();
    let answered = loop {
        let ok = std::panic::catch_unwind(|| get(live.addr, "/readyz", None).status == 200);
        if ok.unwrap_or(false) {
            break started.elapsed();
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no answer behind idle connections"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    // A slowloris: one header byte every 300 ms is closed at the timeout.
    let mut slow = TcpStream::connect(live.addr).unwrap();
    slow.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let closed = std::thread::spawn(move || {
        let t = Instant::now();
        let _ = slow.write_all(b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n");
        for _ in 0..40 {
            std::thread::sleep(Duration::from_millis(300));
            if slow.write_all(b"X").is_err() {
                break;
            }
        }
        let mut buf = [0u8; 256];
        let _ = slow.read(&mut buf);
        t.elapsed()
    })
    .join()
    .unwrap();
    assert!(
        closed < Duration::from_secs(12),
        "a slow writer held on for {closed:?}"
    );
    drop(idle);
    still_answers(&live);
    eprintln!(
        "connections: answered {answered:?} behind {} idle ones; slowloris closed after {closed:?}",
        200 * scale()
    );
}

/// Findings C1 and D3: a limit of 10^12 aborted the process; one of
/// u64::MAX answered 503 with the panic text; 23,083 steps computed for
/// 160 s. Limits are bounded at the edge, texts at 64 KiB, steps at 16.
#[test]
fn huge_limits_texts_and_step_counts_are_refused_or_bounded() {
    let live = start(ServeOptions::default());
    for limit in ["1000000000000", "18446744073709551615", "-1", "1e3"] {
        let body =
            format!(r#"{{"text": "book a flight", "limit": {limit}, "dependencies": true}}"#);
        let r = with_key(&live, "POST", "/v1/search", Some(READER), &body);
        assert_eq!(r.status, 400, "{limit}: {}", r.body);
        assert!(!r.body.contains("panic"), "{}", r.body);
        assert!(
            r.json()["error"]["code"]
                .as_str()
                .unwrap()
                .starts_with("invalid_search_limit"),
            "{}",
            r.body
        );
    }
    let long = "Then book a flight. ".repeat(10_000);
    let r = with_key(
        &live,
        "POST",
        "/v1/search",
        Some(READER),
        &json!({"text": long}).to_string(),
    );
    assert_eq!(r.status, 400, "{}", &r.body[..r.body.len().min(300)]);
    assert_eq!(r.json()["error"]["code"], "invalid_search_text");
    let steps = "Then book a flight. ".repeat(3_000);
    let started = Instant::now();
    let r = with_key(
        &live,
        "POST",
        "/v1/search",
        Some(READER),
        &json!({"text": steps, "limit": 5}).to_string(),
    );
    assert_eq!(r.status, 200, "{}", &r.body[..r.body.len().min(300)]);
    let took = started.elapsed();
    assert!(took < Duration::from_secs(30), "3,000 steps took {took:?}");
    for (path, body) in [
        ("/v1/usage", json!({"tool": "flight_search", "cost": 1e308})),
        (
            "/v1/select",
            json!({"session": "x".repeat(300), "message": "book a flight"}),
        ),
        (
            "/v1/search",
            json!({"text": "book", "caller": {"session": "s".repeat(5000)}}),
        ),
    ] {
        let r = with_key(&live, "POST", path, Some(CAFE), &body.to_string());
        assert_eq!(r.status, 400, "{path}: {}", r.body);
    }
    still_answers(&live);
    eprintln!("3,000 steps answered in {took:?}");
}

/// Findings D1 and D4: any method name became a metrics series; failure
/// records of 500 KB names grew memory. Methods outside the known set are
/// one label; a failure names a tool of the catalog, and sessions are few.
#[test]
fn method_names_and_failure_records_stay_bounded() {
    let live = start(ServeOptions::default());
    for i in 0..500 * scale() {
        let method = format!("M{}X{i}", "A".repeat(200));
        let _ = std::panic::catch_unwind(|| call(live.addr, &method, "/v1/tools", &[], b""));
    }
    let metrics = get(live.addr, "/metrics", None).body;
    assert!(
        metrics.len() < 256 * 1024,
        "/metrics is {} bytes",
        metrics.len()
    );
    assert!(
        !metrics.contains("AAAAAAAA"),
        "a method name became a label"
    );
    let name = "n".repeat(500_000);
    for i in 0..20 * scale() {
        let r = with_key(
            &live,
            "POST",
            &format!("/v1/sessions/s{i}/failures"),
            Some(READER),
            &json!({"tool": name, "reason": "r".repeat(100_000)}).to_string(),
        );
        assert!(
            [400, 404, 413].contains(&r.status),
            "{}",
            &r.body[..r.body.len().min(300)]
        );
    }
    still_answers(&live);
}

/// Findings X1 and D5: an MCP session created with one key could be
/// deleted with another; 10,000 `initialize` calls took 1.4 GB. Sessions
/// belong to their key and are capped per key.
#[test]
fn mcp_sessions_belong_to_their_key_and_are_capped() {
    let live = start(ServeOptions::default());
    let first = Mcp::open(&live, READER);
    let sid = first.session.clone().expect("a session id");
    // Another key cannot use or delete it.
    let other = Mcp {
        live: &live,
        key: CAFE,
        session: Some(sid.clone()),
    };
    let r = other.post(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    assert_eq!(r.status, 404, "{}", r.body);
    let auth = format!("Bearer {CAFE}");
    let r = call(
        live.addr,
        "DELETE",
        "/mcp",
        &[("Authorization", &auth), ("Mcp-Session-Id", &sid)],
        b"",
    );
    assert_eq!(r.status, 404, "{}", r.body);
    let v = first.call_tool("find_tools", json!({"query": "book a flight", "limit": 3}));
    assert!(v["result"].is_object(), "{v}");
    // Many more sessions from one key: the oldest goes, memory does not grow.
    let n = 100 * scale();
    let mut last = None;
    for _ in 0..n {
        last = Mcp::open(&live, READER).session;
    }
    let r = first.post(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}));
    assert_eq!(
        r.status, 404,
        "the oldest session was kept past the cap: {}",
        r.body
    );
    let newest = Mcp {
        live: &live,
        key: READER,
        session: last,
    };
    let r = newest.post(&json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}));
    assert_eq!(r.status, 200, "{}", r.body);
    let metrics = get(live.addr, "/metrics", None).body;
    let kept: f64 = metrics
        .lines()
        .find(|l| l.starts_with("toolgraph_mcp_sessions "))
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap();
    assert!(
        kept <= 32.0,
        "{kept} sessions kept after {n} initialize calls"
    );
    // A body that is not JSON gets JSON-RPC's parse error, not 415.
    let r = call(
        live.addr,
        "POST",
        "/mcp",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("Authorization", &format!("Bearer {READER}")),
        ],
        b"{not json",
    );
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(rpc_message(&r.body)["error"]["code"], -32700, "{}", r.body);
}

/// The minor findings: 414/431 in the JSON shape; SERVICE in SPARQL is the
/// request's fault; the review queue is paginated.
#[test]
fn oversized_requests_service_queries_and_long_queues_are_answered_properly() {
    let live = start(ServeOptions::default());
    let long = format!("/v1/tools?domain={}", "d".repeat(10_000));
    let r = get(live.addr, &long, Some(READER));
    assert_eq!(r.status, 414, "{}", r.body);
    assert_error_shape(&r);
    let names: Vec<String> = (0..120).map(|i| format!("X-Pad-{i}")).collect();
    let headers: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "v")).collect();
    let r = call(live.addr, "GET", "/v1/me", &headers, b"");
    assert_eq!(r.status, 431, "{}", r.body);
    assert_error_shape(&r);
    let big = "v".repeat(40_000);
    let r = call(live.addr, "GET", "/v1/me", &[("X-Big", &big)], b"");
    assert_eq!(r.status, 431, "{}", r.body);
    assert_error_shape(&r);
    let q = json!({"query": "SELECT * WHERE { SERVICE <http://169.254.169.254/> { ?s ?p ?o } }"});
    let r = with_key(&live, "POST", "/v1/sparql", Some(ADMIN), &q.to_string());
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.json()["error"]["field"], "query", "{}", r.body);
    let r = with_key(&live, "GET", "/v1/pending?limit=100000", Some(ADMIN), "");
    assert_eq!(r.status, 400, "{}", r.body);
    let r = with_key(&live, "GET", "/v1/pending?limit=5", Some(ADMIN), "");
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.header("x-total-count").is_some(), "{:?}", r.headers);
}

/// The open server (no keys, `scripts/serve.sh`'s default): a web page
/// cannot drive it, neither cross-site nor by rebinding its own name.
#[test]
fn an_open_server_answers_no_web_page() {
    let live = Live::start(super::engine(), ServeOptions::default());
    // `call` sends its own Host header: these requests go raw.
    let raw = |head: &str, body: &str| {
        let mut s = TcpStream::connect(live.addr).unwrap();
        let req = format!(
            "{head}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        s.write_all(req.as_bytes()).unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out
    };
    let rebind = raw(
        "GET /v1/me HTTP/1.1\r\nHost: rebind.evil.example:7878\r\n",
        "",
    );
    assert!(rebind.starts_with("HTTP/1.1 403"), "{rebind}");
    assert!(rebind.contains("\"code\":\"forbidden\""), "{rebind}");
    let cross = raw(
        "POST /v1/tools?source=x.jsonl HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: https://evil.example\r\nContent-Type: application/x-ndjson\r\n",
        r#"{"id": "evil", "name": "evil", "description": "x"}"#,
    );
    assert!(cross.starts_with("HTTP/1.1 403"), "{cross}");
    let plain = raw(
        "POST /v1/tools?source=x.jsonl HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\n",
        r#"{"id": "evil", "name": "evil", "description": "x"}"#,
    );
    assert!(plain.starts_with("HTTP/1.1 415"), "{plain}");
    let mcp = raw(
        "POST /mcp HTTP/1.1\r\nHost: rebind.evil.example\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n",
        r#"{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}"#,
    );
    assert!(mcp.starts_with("HTTP/1.1 403"), "{mcp}");
    let ok = raw("GET /v1/me HTTP/1.1\r\nHost: localhost:7878\r\n", "");
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
    assert!(
        get(live.addr, "/v1/tools/evil", None).status == 404,
        "the page registered a tool"
    );
}
