//! The gateway's overhead (`scripts/gateway-bench.sh`): a loopback HTTP
//! upstream called directly and through `toolgraph serve`'s `POST /v1/call`
//! (the same tool, arguments and keep-alive client), then 32 concurrent
//! callers through the gateway for S seconds. Writes
//! `benches/results/gateway.json`: p50/p99 direct, through the gateway, the
//! difference, and the concurrent run's calls and errors.
//!
//! The server runs on an on-disk store with `--no-embed` (a call embeds
//! nothing; the model would only slow the start) and a rate-limited tool,
//! so every call is checked and counted in the store as in production, and
//! audited.
//!
//! `TOOLGRAPH_BIN` (the server binary), `TOOLGRAPH_GATEWAY_CALLS` (2000),
//! `TOOLGRAPH_GATEWAY_SECONDS` (30), `TOOLGRAPH_GATEWAY_OUT`. Under
//! `cargo test` (no `--bench`) it runs 200 calls and 3 s.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/upstream.rs"]
mod upstream;

use serde_json::{Value, json};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[path = "common/env.rs"]
mod settings;
use settings::env;

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(30)))
        .http_status_as_error(false)
        .build()
        .into()
}

fn quantile(v: &mut [f64], q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 - 1.0) * q).round() as usize]
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `toolgraph serve` on a free port over a store in `data`; its base URL.
fn start(bin: &PathBuf, data: &std::path::Path) -> (Server, String) {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let server = Server(
        Command::new(bin)
            .args([
                "serve",
                "--addr",
                &addr,
                "--no-embed",
                "--airlock-allow",
                "127.0.0.1",
            ])
            .arg("--data")
            .arg(data.join("store"))
            .arg("--source-root")
            .arg(data)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the server starts"),
    );
    let base = format!("http://{addr}");
    let a = agent();
    let started = Instant::now();
    while a
        .get(&format!("{base}/readyz"))
        .call()
        .map(|r| r.status().as_u16())
        .unwrap_or(0)
        != 200
    {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the server did not start"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    (server, base)
}

/// The tool comes through the airlock as operators add one: an OpenAPI
/// spec, scanned, approved with a rate limit that never refuses, so every
/// call is checked and counted in the store, and audited.
fn admit(base: &str, up: &str, data: &std::path::Path) {
    let a = agent();
    let spec = data.join("weather.json");
    std::fs::write(
        &spec,
        json!({"openapi": "3.0.0", "info": {"title": "Weather", "version": "1"},
            "servers": [{"url": format!("http://{up}")}],
            "paths": {"/weather": {"post": {"operationId": "weather_get", "summary": "Current weather for a city",
                "requestBody": {"content": {"application/json": {"schema": {"type": "object",
                    "properties": {"city": {"type": "string"}}, "required": ["city"]}}}},
                "responses": {"200": {"description": "the weather"}}}}}})
        .to_string(),
    )
    .unwrap();
    let read = |mut r: ureq::http::Response<ureq::Body>| -> Value {
        assert!(r.status().is_success(), "{}", r.status());
        serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap()
    };
    let post = |path: &str, body: Value| -> Value {
        read(
            a.post(&format!("{base}{path}"))
                .header("content-type", "application/json")
                .send(body.to_string())
                .unwrap(),
        )
    };
    let source = post(
        "/v1/sources",
        json!({"kind": "openapi", "location": spec.to_str().unwrap()}),
    );
    post(
        &format!("/v1/sources/{}/scan", source["id"].as_str().unwrap()),
        json!({}),
    );
    let items = read(a.get(&format!("{base}/v1/pending")).call().unwrap());
    let item = items[0]["id"].as_str().unwrap().to_string();
    post(
        &format!("/v1/pending/{item}/approve"),
        json!({"rate_limit": 1_000_000_000u32}),
    );
}

/// `calls` sequential POSTs of `body` to `url` on one keep-alive agent,
/// after a tenth as many to warm up; milliseconds each.
fn sequential(url: &str, body: &str, calls: usize) -> Vec<f64> {
    let a = agent();
    let one = || {
        a.post(url)
            .header("content-type", "application/json")
            .send(body)
            .map(|mut r| {
                let _ = r.body_mut().read_to_string();
                r.status().as_u16()
            })
            .unwrap_or(0)
    };
    for _ in 0..calls / 10 {
        assert_eq!(one(), 200);
    }
    (0..calls)
        .map(|_| {
            let t = Instant::now();
            assert_eq!(one(), 200);
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect()
}

/// 32 callers through the gateway for `seconds`: (calls answered ok, errors).
fn concurrent(base: &str, body: &str, seconds: u64) -> (u64, u64) {
    let ok = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    let until = Instant::now() + Duration::from_secs(seconds);
    let workers: Vec<_> = (0..32)
        .map(|_| {
            let (ok, errors, url, body) = (
                ok.clone(),
                errors.clone(),
                format!("{base}/v1/call"),
                body.to_string(),
            );
            std::thread::spawn(move || {
                let a = agent();
                while Instant::now() < until {
                    let answer = a
                        .post(&url)
                        .header("content-type", "application/json")
                        .send(body.as_str())
                        .ok()
                        .filter(|r| r.status().as_u16() == 200)
                        .and_then(|mut r| r.body_mut().read_to_string().ok())
                        .and_then(|t| serde_json::from_str::<Value>(&t).ok());
                    match answer {
                        Some(v) if v["status"] == "ok" => ok.fetch_add(1, Ordering::Relaxed),
                        _ => errors.fetch_add(1, Ordering::Relaxed),
                    };
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    (ok.load(Ordering::Relaxed), errors.load(Ordering::Relaxed))
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let calls: usize = if bench {
        env("TOOLGRAPH_GATEWAY_CALLS", 2000)
    } else {
        200
    };
    let seconds: u64 = if bench {
        env("TOOLGRAPH_GATEWAY_SECONDS", 30)
    } else {
        3
    };
    let bin = std::env::var("TOOLGRAPH_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_BIN_EXE_toolgraph")));
    let up = upstream::start();
    let data = tempfile::tempdir().unwrap();
    let (_server, base) = start(&bin, data.path());
    admit(&base, &up, data.path());
    let body =
        json!({"tool": "weather_get", "arguments": {"city": "Paris"}, "caller": {"org": "acme"}})
            .to_string();
    let mut direct = sequential(
        &format!("http://{up}/weather"),
        &json!({"city": "Paris"}).to_string(),
        calls,
    );
    let mut through = sequential(&format!("{base}/v1/call"), &body, calls);
    let (d50, d99) = (quantile(&mut direct, 0.5), quantile(&mut direct, 0.99));
    let (g50, g99) = (quantile(&mut through, 0.5), quantile(&mut through, 0.99));
    let (ok, errors) = concurrent(&base, &body, seconds);
    let report = json!({
        "machine": format!("{} cores", std::thread::available_parallelism().map_or(0, |n| n.get())),
        "calls_each": calls,
        "direct_p50_ms": d50, "direct_p99_ms": d99,
        "gateway_p50_ms": g50, "gateway_p99_ms": g99,
        "overhead_p50_ms": g50 - d50, "overhead_p99_ms": g99 - d99,
        "concurrent_callers": 32, "concurrent_seconds": seconds,
        "concurrent_calls": ok, "concurrent_errors": errors,
    });
    println!("{}", serde_json::to_string_pretty(&report).unwrap());
    if let Ok(out) = std::env::var("TOOLGRAPH_GATEWAY_OUT") {
        std::fs::write(out, serde_json::to_string_pretty(&report).unwrap() + "\n").unwrap();
    }
    assert_eq!(errors, 0, "errors under 32 concurrent callers");
}
