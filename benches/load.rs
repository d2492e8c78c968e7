//! A bounded loopback load test against a running `toolgraph serve` (used
//! by `scripts/perf.sh`): C keep-alive connections send `POST /v1/search`
//! with the queries of a JSONL file in turn (every query text distinct, so
//! the query-embedding cache does not answer for the model) for S seconds.
//! Prints one JSON line: requests, errors (non-200 or broken connection),
//! queries/s, p50 / p90 / p99 latency.
//!
//! `TOOLGRAPH_LOAD_ADDR` (127.0.0.1:7878), `TOOLGRAPH_LOAD_QUERIES` (a
//! queries.jsonl), `TOOLGRAPH_LOAD_SECONDS` (60), `TOOLGRAPH_LOAD_CONNECTIONS`
//! (4), `TOOLGRAPH_LOAD_MAX_REQUESTS` (1,000,000).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

#[path = "common/env.rs"]
mod settings;
use settings::env;

fn main() {
    // `cargo test --benches` runs this without `--bench`: check the client
    // against a local stub server instead of measuring.
    if !std::env::args().any(|a| a == "--bench")
        && std::env::var_os("TOOLGRAPH_LOAD_QUERIES").is_none()
    {
        smoke();
        return;
    }
    let addr: String = env("TOOLGRAPH_LOAD_ADDR", "127.0.0.1:7878".to_string());
    let file: String = env("TOOLGRAPH_LOAD_QUERIES", String::new());
    let seconds: f64 = env("TOOLGRAPH_LOAD_SECONDS", 60.0);
    let connections: usize = env("TOOLGRAPH_LOAD_CONNECTIONS", 4);
    let max_requests: usize = env("TOOLGRAPH_LOAD_MAX_REQUESTS", 1_000_000);
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{file}: {e}"));
    let mut seen = std::collections::HashSet::new();
    let bodies: Arc<Vec<String>> = Arc::new(
        text.lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter_map(|v| v["query"].as_str().map(str::to_string))
            .filter(|q| seen.insert(q.clone()))
            .map(|q| serde_json::json!({"text": q, "limit": 10, "explain": false}).to_string())
            .collect(),
    );
    assert!(!bodies.is_empty(), "no queries in {file}");
    let next = Arc::new(AtomicUsize::new(0));
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let started = Instant::now();
    let workers: Vec<_> = (0..connections)
        .map(|_| {
            let (addr, bodies, next) = (addr.clone(), bodies.clone(), next.clone());
            std::thread::spawn(move || worker(&addr, &bodies, &next, deadline, max_requests))
        })
        .collect();
    let mut latencies = Vec::new();
    let mut errors = 0usize;
    for w in workers {
        let (l, e) = w
            .join()
            .unwrap_or_else(|_| panic!("a load worker panicked"));
        latencies.extend(l);
        errors += e;
    }
    let elapsed = started.elapsed().as_secs_f64();
    latencies.sort_by(f64::total_cmp);
    let q = |p: f64| {
        latencies
            .get(((latencies.len().max(1) - 1) as f64 * p).round() as usize)
            .copied()
            .unwrap_or(0.0)
    };
    let requests = latencies.len() + errors;
    println!(
        "{}",
        serde_json::json!({
            "connections": connections,
            "seconds": (elapsed * 100.0).round() / 100.0,
            "requests": requests,
            "errors": errors,
            "distinct_queries": bodies.len(),
            "qps": ((latencies.len() as f64 / elapsed) * 10.0).round() / 10.0,
            "p50_ms": (q(0.5) * 1000.0).round() / 1000.0,
            "p90_ms": (q(0.9) * 1000.0).round() / 1000.0,
            "p99_ms": (q(0.99) * 1000.0).round() / 1000.0,
        })
    );
}

/// One keep-alive connection: latencies of the 200s, and the error count.
fn worker(
    addr: &str,
    bodies: &[String],
    next: &AtomicUsize,
    deadline: Instant,
    max_requests: usize,
) -> (Vec<f64>, usize) {
    let mut latencies = Vec::new();
    let mut errors = 0;
    let mut conn: Option<(TcpStream, BufReader<TcpStream>)> = None;
    while Instant::now() < deadline {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= max_requests {
            break;
        }
        let body = &bodies[i % bodies.len()];
        if conn.is_none() {
            conn = TcpStream::connect(addr).ok().and_then(|s| {
                s.set_nodelay(true).ok()?;
                let r = BufReader::new(s.try_clone().ok()?);
                Some((s, r))
            });
        }
        let Some((stream, reader)) = conn.as_mut() else {
            errors += 1;
            std::thread::sleep(Duration::from_millis(10));
            continue;
        };
        let t = Instant::now();
        match exchange(stream, reader, addr, body) {
            Ok(200) => latencies.push(t.elapsed().as_secs_f64() * 1e3),
            Ok(_) => errors += 1,
            Err(_) => {
                errors += 1;
                conn = None;
            }
        }
    }
    (latencies, errors)
}

/// Sends one request and reads the whole response; returns its status.
fn exchange(
    stream: &mut TcpStream,
    reader: &mut BufReader<TcpStream>,
    addr: &str,
    body: &str,
) -> std::io::Result<u16> {
    write!(
        stream,
        "POST /v1/search HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )?;
    stream.flush()?;
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let status: u16 = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("bad status line {line:?}")))?;
    let mut length = 0usize;
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Err(std::io::Error::other("connection closed"));
        }
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((k, v)) = header.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            length = v.trim().parse().unwrap_or(0);
        }
    }
    let mut buf = vec![0u8; length];
    reader.read_exact(&mut buf)?;
    Ok(status)
}

/// The client against a stub HTTP server on loopback: 50 requests, 0 errors.
fn smoke() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    let addr = listener
        .local_addr()
        .unwrap_or_else(|e| panic!("{e}"))
        .to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut reader =
                    BufReader::new(stream.try_clone().unwrap_or_else(|e| panic!("{e}")));
                let mut out = stream;
                loop {
                    let mut line = String::new();
                    let mut length = 0usize;
                    loop {
                        line.clear();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        if line.trim_end().is_empty() {
                            break;
                        }
                        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                            length = v.trim().parse().unwrap_or(0);
                        }
                    }
                    let mut body = vec![0u8; length];
                    if reader.read_exact(&mut body).is_err() {
                        return;
                    }
                    let reply = r#"{"matches":[]}"#;
                    let _ = write!(
                        out,
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{reply}",
                        reply.len()
                    );
                }
            });
        }
    });
    let bodies = vec![r#"{"text":"book a table"}"#.to_string()];
    let next = AtomicUsize::new(0);
    let deadline = Instant::now() + Duration::from_secs(10);
    let (latencies, errors) = worker(&addr, &bodies, &next, deadline, 50);
    assert_eq!(
        (latencies.len(), errors),
        (50, 0),
        "the load client against a stub server"
    );
    println!("load: smoke run against a stub server: 50 requests, 0 errors");
}
