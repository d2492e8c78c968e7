//! The HTTP API over a real socket on loopback.

use crate::common::root;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use toolgraph::{Embeddings, Engine, EngineOptions};

fn request(
    addr: std::net::SocketAddr,
    method: &str,
    path: &str,
    body: &str,
) -> (u16, serde_json::Value) {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let status: u16 = out.split(' ').nth(1).unwrap().parse().unwrap();
    let body = out.split("\r\n\r\n").nth(1).unwrap_or("");
    // chunked or not: the JSON object is between the first '{'/'[' and the last '}'/']'
    let start = body.find(['{', '[']).unwrap_or(0);
    let end = body.rfind(['}', ']']).map(|i| i + 1).unwrap_or(body.len());
    (
        status,
        serde_json::from_str(&body[start..end]).unwrap_or(serde_json::Value::Null),
    )
}

#[test]
fn http_search_resolve_tools_health_and_errors() {
    let engine = Engine::open(EngineOptions::memory(Embeddings::Off)).unwrap();
    engine
        .load_paths(&[root().join("ontology"), root().join("seeds")], None)
        .unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let app = toolgraph::server::router(Arc::new(engine));
    runtime.spawn(async move { axum::serve(listener, app).await });

    let (status, v) = request(addr, "GET", "/health", "");
    assert_eq!(status, 200);
    assert!(v["tools"].as_u64().unwrap() >= 150);

    let (status, v) = request(
        addr,
        "POST",
        "/search",
        r#"{"text": "a table for two at an Italian restaurant tonight", "mode": "graph", "limit": 3}"#,
    );
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["matches"][0]["tool"], "restaurant_table_reserve");
    assert!(
        !v["matches"][0]["details"]["paths"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert!(v.get("ambiguous").is_some() && v.get("abstain").is_some());

    let (status, v) = request(addr, "GET", "/tools/airline_seat_reserve", "");
    assert_eq!(status, 200);
    assert_eq!(v["name"], "airline_seat_reserve");

    let (status, v) = request(addr, "GET", "/tools/nope", "");
    assert_eq!(status, 400);
    assert!(v["error"].as_str().unwrap().contains("nope"));

    let (status, _) = request(addr, "POST", "/search", r#"{"text": "#);
    assert!((400..500).contains(&status));

    let (status, v) = request(
        addr,
        "POST",
        "/search",
        r#"{"text": "x", "candidates": ["no_such_tool"]}"#,
    );
    assert_eq!(status, 400);
    assert!(v["error"].as_str().unwrap().contains("no_such_tool"));

    let (status, v) = request(
        addr,
        "POST",
        "/resolve",
        r#"{"verb": "CONVERT_CURRENCY", "context": "100 USD to EUR"}"#,
    );
    assert_eq!(status, 200, "{v}");
    assert!(v["decision"] == "substitute" || v["decision"] == "decompose");
    runtime.shutdown_background();
}
