//! The soak (`scripts/soak.sh`): a `toolgraph serve` on an on-disk store
//! under mixed traffic from C keep-alive connections (search, select,
//! resolve, prompt, calls through the gateway to a loopback upstream,
//! registrations, usage records, approvals and rejections) for S seconds, killed with SIGKILL and restarted every K
//! seconds. Reports errors (5xx other than `unavailable`/`timeout`,
//! unexpected 4xx), requests refused while the server was down, lost
//! acknowledged writes (checked at the end against the restarted server),
//! RSS per life (after its first half, the warm-up, to its end; and the
//! end of every life against the end of the first, across restarts) and
//! p99 per minute. The warm-up is half a life because a server killed with
//! SIGKILL refills its caches (RocksDB's block and id caches, ONNX
//! Runtime's arenas, the query cache) for 60-80 s under this load before
//! its RSS levels off (measured: 0.78 GB ten seconds after a restart, 1.2
//! GB at 60 s, 1.28 GB at 120 s, the level every life ends at).
//!
//! `TOOLGRAPH_BIN` (the server binary), `TOOLGRAPH_SOAK_SECONDS` (600),
//! `TOOLGRAPH_SOAK_CONNECTIONS` (32), `TOOLGRAPH_SOAK_KILL_EVERY` (120),
//! `TOOLGRAPH_SOAK_OUT` (a JSON file), `TOOLGRAPH_SOAK_EMBED` (1: the real
//! model). Under `cargo test` (no `--bench`) it runs a 20 s soak with one
//! kill, without the model.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/upstream.rs"]
mod upstream;

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[path = "common/env.rs"]
mod settings;
use settings::env;

struct Settings {
    bin: PathBuf,
    seconds: u64,
    connections: usize,
    kill_every: u64,
    embed: bool,
}

/// The server process, restarted on the same store.
struct Server {
    child: Child,
    addr: String,
    args: Vec<String>,
    bin: PathBuf,
}

impl Server {
    fn start(bin: &Path, args: Vec<String>, addr: String) -> Self {
        let child = Command::new(bin)
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the server starts");
        let s = Server {
            child,
            addr,
            args,
            bin: bin.to_path_buf(),
        };
        s.wait_ready();
        s
    }

    fn wait_ready(&self) {
        let agent = agent();
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(300) {
            if let Ok(r) = agent.get(&format!("http://{}/readyz", self.addr)).call()
                && r.status() == 200
            {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("the server did not become ready");
    }

    fn kill9_and_restart(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        *self = Server::start(&self.bin, self.args.clone(), self.addr.clone());
    }

    fn rss_kb(&self) -> u64 {
        std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("VmRSS:"))
                    .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
            })
            .unwrap_or(0)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(60)))
        .http_status_as_error(false)
        .build()
        .into()
}

/// What the workers learned: latencies per minute, outcomes, and every
/// write the server acknowledged.
#[derive(Default)]
struct Tally {
    latency_ms: BTreeMap<u64, Vec<f64>>,
    requests: u64,
    errors: Vec<String>,
    down: u64,
    /// Registrations acknowledged.
    registrations: u64,
    /// Each registered tool's last acknowledged description.
    registered: BTreeMap<String, String>,
    /// Descriptions sent for a tool after its last acknowledged one and
    /// never answered (the server went down): the store may hold one of
    /// them instead, a write it made but could not acknowledge.
    unanswered: BTreeMap<String, Vec<String>>,
    usage_acknowledged: u64,
    /// Calls through the gateway the server answered 200.
    calls_acknowledged: u64,
    /// Review item -> its last acknowledged status, `None` while a
    /// request about it went unanswered.
    items: BTreeMap<String, Option<&'static str>>,
}

const TEXTS: &[&str] = &[
    "book a flight to Denver tomorrow morning",
    "reserve seat 14C on Southwest flight 175",
    "dinner for two at 8pm near the office",
    "convert 100 USD to EUR",
    "send the invoice to the customer by email",
    "what is the weather in Paris this weekend",
    "cancel my hotel booking in Rome",
    "add a task to call the plumber on Friday",
];

/// One request; `Err(())` when the server was not there to answer.
fn send(agent: &ureq::Agent, addr: &str, path: &str, body: &Value) -> Result<(u16, String), ()> {
    let url = format!("http://{addr}{path}");
    match agent
        .post(&url)
        .header("content-type", "application/json")
        .send(body.to_string())
    {
        Ok(mut r) => {
            let status = r.status().as_u16();
            Ok((status, r.body_mut().read_to_string().unwrap_or_default()))
        }
        Err(_) => Err(()),
    }
}

/// Sources each worker registers again and again.
const SOURCES_PER_WORKER: u64 = 16;

/// The `i`th request of worker `n`: path, body, kind.
fn request(n: usize, i: u64, rng: u64, item: Option<&String>) -> (String, Value, &'static str) {
    let text = TEXTS[(rng % TEXTS.len() as u64) as usize];
    match rng % 100 {
        0..50 => (
            "/v1/search".to_string(),
            json!({"text": format!("{text} #{n}-{i}"), "limit": 5}),
            "search",
        ),
        50..62 => (
            "/v1/select".into(),
            json!({"session": format!("soak-{n}"), "message": text}),
            "select",
        ),
        62..70 => (
            "/v1/resolve".into(),
            json!({"verb": "MAKE_RESERVATION", "context": text}),
            "resolve",
        ),
        70..75 => (
            "/v1/prompt".into(),
            json!({"text": text, "budget_tokens": 600}),
            "prompt",
        ),
        // Calls through the gateway to a loopback upstream (checked against
        // the caller's policy and the input schema, audited on every call).
        78..85 => (
            "/v1/call".into(),
            json!({"tool": CALLED, "arguments": {"city": text}, "caller": {"org": "acme"}}),
            "call",
        ),
        // Registrations: an operator's, so rarer than a planner's requests.
        // Each worker cycles through 16 sources, registering each again
        // with new content (a changed tool, re-embedded): the catalog stays
        // the size a live one has (at most 32 x 16 tools beside the seeds),
        // so memory measures leaks, not a catalog ten times larger at the
        // end than at the start.
        75..78 => {
            let name = format!("soak_tool_{n}_{}", i % SOURCES_PER_WORKER);
            (
                format!("/v1/tools?source=soak/{name}.jsonl"),
                json!({"id": name, "name": name, "description": format!("Fetch the soak report number {i} for worker {n}")}),
                "register",
            )
        }
        85..95 => (
            "/v1/usage".into(),
            json!({"tool": "flight_search", "org": "acme"}),
            "usage",
        ),
        _ => match item {
            Some(id) if i.is_multiple_of(2) => {
                (format!("/v1/pending/{id}/approve"), json!({}), "approve")
            }
            Some(id) => (
                format!("/v1/pending/{id}/reject"),
                json!({"reason": "soak"}),
                "reject",
            ),
            None => ("/v1/search".into(), json!({"text": text}), "search"),
        },
    }
}

/// Records an answered request: an error, or its latency and the write it
/// acknowledged.
fn record(
    tally: &mut Tally,
    kind: &str,
    body: &Value,
    item: Option<&String>,
    answer: (u16, String),
    ms: f64,
    minute: u64,
) {
    let (status, text) = answer;
    // Approving an approved item (or rejecting a rejected one) is a
    // conflict; busy and down are not errors.
    let ok = matches!(
        (kind, status),
        (_, 200 | 201 | 429 | 503 | 504) | ("approve" | "reject", 409)
    );
    if !ok {
        tally
            .errors
            .push(format!("{kind} {status}: {}", &text[..text.len().min(300)]));
        return;
    }
    if status >= 400 {
        // Busy or timed out: the write may still have been made.
        if kind == "register" {
            let name = body["name"].as_str().unwrap_or("").to_string();
            let description = body["description"].as_str().unwrap_or("").to_string();
            tally.unanswered.entry(name).or_default().push(description);
        }
        return;
    }
    tally.latency_ms.entry(minute).or_default().push(ms);
    match (kind, item) {
        ("register", _) => {
            tally.registrations += 1;
            let name: String = body["name"].as_str().unwrap_or("").into();
            tally.unanswered.remove(&name);
            tally
                .registered
                .insert(name, body["description"].as_str().unwrap_or("").into());
        }
        ("usage", _) => tally.usage_acknowledged += 1,
        ("call", _) => tally.calls_acknowledged += 1,
        ("approve", Some(id)) => {
            tally.items.insert(id.clone(), Some("approved"));
        }
        ("reject", Some(id)) => {
            tally.items.insert(id.clone(), Some("rejected"));
        }
        _ => {}
    }
}

/// One worker's loop until `stop`.
fn worker(
    n: usize,
    addr: &str,
    started: Instant,
    stop: &AtomicBool,
    item: Option<String>,
    tally: &Mutex<Tally>,
) {
    let agent = agent();
    let mut i = 0u64;
    let mut rng = 0x2545_F491_4F6C_DD1Du64 ^ (n as u64 + 1);
    while !stop.load(Ordering::Relaxed) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        i += 1;
        let (path, body, kind) = request(n, i, rng, item.as_ref());
        if matches!(kind, "approve" | "reject")
            && let Some(id) = &item
        {
            // Unknown until the server answers.
            tally.lock().unwrap().items.insert(id.clone(), None);
        }
        let t = Instant::now();
        let outcome = send(&agent, addr, &path, &body);
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        let mut tally = tally.lock().unwrap();
        tally.requests += 1;
        match outcome {
            Err(()) => {
                tally.down += 1;
                if kind == "register" {
                    let name = body["name"].as_str().unwrap_or("").to_string();
                    let description = body["description"].as_str().unwrap_or("").to_string();
                    tally.unanswered.entry(name).or_default().push(description);
                }
                drop(tally);
                std::thread::sleep(Duration::from_millis(50));
            }
            Ok(answer) => {
                let minute = started.elapsed().as_secs() / 60;
                record(&mut tally, kind, &body, item.as_ref(), answer, ms, minute);
            }
        }
    }
}

fn p99(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(((v.len() as f64 * 0.99) as usize).min(v.len().saturating_sub(1)))
        .copied()
        .unwrap_or(0.0)
}

/// A source of review items (the fixture OpenAPI spec), scanned: one item
/// per worker that gets one.
fn review_items(addr: &str) -> Vec<String> {
    let agent = agent();
    let (s, body) = send(
        &agent,
        addr,
        "/v1/sources",
        &json!({"kind": "openapi", "location": "travel.yaml"}),
    )
    .expect("the server answers");
    assert_eq!(s, 201, "{body}");
    let id = serde_json::from_str::<Value>(&body).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let (s, body) = send(&agent, addr, &format!("/v1/sources/{id}/scan"), &json!({})).unwrap();
    assert_eq!(s, 200, "{body}");
    let mut r = agent
        .get(&format!("http://{addr}/v1/pending?limit=500"))
        .call()
        .unwrap();
    let items: Value = serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap();
    items
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["id"].as_str().map(str::to_string))
        .collect()
}

/// The tool the soak calls through the gateway.
const CALLED: &str = "soak_weather_now";

/// Registers [`CALLED`] with a declared upstream on loopback.
fn called_tool(addr: &str, upstream: &str) {
    let line = json!({"id": CALLED, "name": CALLED, "description": "Current weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        "upstream": {"kind": "http", "method": "POST", "url": format!("http://{upstream}/weather")}});
    let (s, body) = send(
        &agent(),
        addr,
        &format!("/v1/tools?source=soak/{CALLED}.jsonl"),
        &line,
    )
    .unwrap();
    assert_eq!(s, 200, "{body}");
}

/// What the restarted server still has of the acknowledged writes.
fn lost_writes(addr: &str, tally: &Tally) -> Vec<String> {
    let agent = agent();
    let mut lost = Vec::new();
    for (name, description) in &tally.registered {
        let r = agent.get(&format!("http://{addr}/v1/tools/{name}")).call();
        let held = r.ok().filter(|r| r.status() == 200).and_then(|mut r| {
            let v: Value = serde_json::from_str(&r.body_mut().read_to_string().ok()?).ok()?;
            v["description"].as_str().map(String::from)
        });
        let unanswered = tally.unanswered.get(name);
        let made = |h: &String| h == description || unanswered.is_some_and(|u| u.contains(h));
        if !held.as_ref().is_some_and(made) {
            lost.push(format!("registered tool {name} ({description})"));
        }
    }
    let (_, body) = send(
        &agent,
        addr,
        "/v1/usage",
        &json!({"tool": "flight_search", "org": "acme"}),
    )
    .unwrap();
    let total = serde_json::from_str::<Value>(&body).unwrap()["total_calls"]
        .as_u64()
        .unwrap_or(0);
    if total <= tally.usage_acknowledged {
        lost.push(format!(
            "usage: {total} counted, {} acknowledged",
            tally.usage_acknowledged
        ));
    }
    // Every acknowledged call left an audit record.
    let r = agent
        .get(&format!("http://{addr}/v1/calls?tool={CALLED}&limit=1"))
        .call()
        .unwrap();
    let audited: u64 = r
        .headers()
        .get("x-total-count")
        .and_then(|v| v.to_str().ok()?.parse().ok())
        .unwrap_or(0);
    if audited < tally.calls_acknowledged {
        lost.push(format!(
            "calls: {audited} audited, {} acknowledged",
            tally.calls_acknowledged
        ));
    }
    for (id, want) in &tally.items {
        let Some(want) = want else { continue };
        let mut r = agent
            .get(&format!("http://{addr}/v1/pending/{id}"))
            .call()
            .unwrap();
        let v: Value = serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap();
        if v["status"] != *want {
            lost.push(format!("item {id}: {} not {want}", v["status"]));
        }
    }
    lost
}

/// `toolgraph serve` on `addr` over the store in `data`: the fixture
/// specs as file sources, loopback upstreams allowed, no schedules.
fn server_args(addr: &str, data: &Path, embed: bool) -> Vec<String> {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/openapi");
    let mut args: Vec<String> = ["serve", "--addr", addr, "--data"]
        .iter()
        .map(|a| a.to_string())
        .collect();
    args.push(data.display().to_string());
    args.extend([
        "--airlock-allow".into(),
        "127.0.0.1".into(),
        "--source-root".into(),
        fixtures.display().to_string(),
        "--schedule-tick".into(),
        "0".into(),
    ]);
    if !embed {
        args.push("--no-embed".into());
    }
    args
}

fn soak(s: &Settings) -> Value {
    let data = std::env::temp_dir().join(format!("toolgraph-soak-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let args = server_args(&addr, &data, s.embed);
    let mut server = Server::start(&s.bin, args, addr.clone());
    let items = review_items(&addr);
    called_tool(&addr, &upstream::start());
    let tally = Arc::new(Mutex::new(Tally::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let workers: Vec<_> = (0..s.connections)
        .map(|n| {
            let (addr, stop, tally) = (addr.clone(), stop.clone(), tally.clone());
            let item = items.get(n).cloned();
            std::thread::spawn(move || worker(n, &addr, started, &stop, item, &tally))
        })
        .collect();
    let kills = AtomicU64::new(0);
    let mut lives: Vec<Value> = Vec::new();
    let mut life_start = Instant::now();
    let mut warm_rss = 0u64;
    let mut rss_series = Vec::new();
    while started.elapsed() < Duration::from_secs(s.seconds) {
        std::thread::sleep(Duration::from_secs(1));
        let rss = server.rss_kb();
        if started.elapsed().as_secs().is_multiple_of(10) {
            rss_series.push(json!([started.elapsed().as_secs(), rss]));
        }
        if warm_rss == 0 && life_start.elapsed() >= Duration::from_secs(s.kill_every / 2) {
            warm_rss = rss;
        }
        if life_start.elapsed() >= Duration::from_secs(s.kill_every)
            && started.elapsed() + Duration::from_secs(5) < Duration::from_secs(s.seconds)
        {
            lives.push(json!({"warm_rss_kb": warm_rss, "end_rss_kb": rss, "growth": rss as f64 / warm_rss.max(1) as f64 - 1.0}));
            server.kill9_and_restart();
            kills.fetch_add(1, Ordering::Relaxed);
            life_start = Instant::now();
            warm_rss = 0;
        }
    }
    let end_rss = server.rss_kb();
    lives.push(json!({"warm_rss_kb": warm_rss, "end_rss_kb": end_rss, "growth": end_rss as f64 / warm_rss.max(1) as f64 - 1.0}));
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        let _ = w.join();
    }
    // One more kill, then the acknowledged writes on the restarted server.
    server.kill9_and_restart();
    let tally = tally.lock().unwrap();
    let lost = lost_writes(&addr, &tally);
    let mut per_minute = tally.latency_ms.clone();
    let p99s: Vec<Value> = per_minute
        .iter_mut()
        .map(|(m, v)| json!({"minute": m, "requests": v.len(), "p99_ms": (p99(v) * 10.0).round() / 10.0}))
        .collect();
    drop(server);
    let _ = std::fs::remove_dir_all(&data);
    let max_growth = lives
        .iter()
        .filter_map(|l| l["growth"].as_f64())
        .fold(f64::MIN, f64::max);
    // Lives that ran whole (the last one may be cut short).
    let ends: Vec<f64> = lives
        .iter()
        .filter_map(|l| l["end_rss_kb"].as_f64())
        .collect();
    let across = match ends.split_first() {
        Some((first, rest)) if !rest.is_empty() => {
            rest.iter().fold(f64::MIN, |m, e| m.max(e / first - 1.0))
        }
        _ => 0.0,
    };
    json!({
        "seconds": s.seconds,
        "connections": s.connections,
        "kills": kills.load(Ordering::Relaxed) + 1,
        "requests": tally.requests,
        "refused_while_down": tally.down,
        "errors": tally.errors.len(),
        "error_samples": tally.errors.iter().take(10).collect::<Vec<_>>(),
        "acknowledged_writes": tally.registrations + tally.usage_acknowledged + tally.calls_acknowledged + tally.items.len() as u64,
        "acknowledged_calls": tally.calls_acknowledged,
        "lost_acknowledged_writes": lost,
        "rss_per_life": lives,
        "max_rss_growth_after_warmup": max_growth,
        "max_end_rss_growth_across_lives": across,
        "rss_kb_every_10s": rss_series,
        "p99_per_minute": p99s,
    })
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let s = if bench {
        Settings {
            bin: env(
                "TOOLGRAPH_BIN",
                PathBuf::from(env!("CARGO_BIN_EXE_toolgraph")),
            ),
            seconds: env("TOOLGRAPH_SOAK_SECONDS", 600),
            connections: env("TOOLGRAPH_SOAK_CONNECTIONS", 32),
            kill_every: env("TOOLGRAPH_SOAK_KILL_EVERY", 120),
            embed: env("TOOLGRAPH_SOAK_EMBED", 1u8) == 1,
        }
    } else {
        Settings {
            bin: PathBuf::from(env!("CARGO_BIN_EXE_toolgraph")),
            seconds: 20,
            connections: 4,
            kill_every: 10,
            embed: false,
        }
    };
    let report = soak(&s);
    println!("{report}");
    if let Ok(out) = std::env::var("TOOLGRAPH_SOAK_OUT") {
        std::fs::write(&out, serde_json::to_string_pretty(&report).unwrap()).unwrap();
    }
    let lost = report["lost_acknowledged_writes"]
        .as_array()
        .map_or(0, Vec::len);
    assert_eq!(lost, 0, "lost acknowledged writes: {report}");
    assert_eq!(report["errors"], 0, "errors: {report}");
    if bench {
        let growth = report["max_rss_growth_after_warmup"]
            .as_f64()
            .unwrap_or(0.0);
        assert!(
            growth <= 0.10,
            "RSS grew {:.1} % within a life",
            growth * 100.0
        );
        let across = report["max_end_rss_growth_across_lives"]
            .as_f64()
            .unwrap_or(0.0);
        assert!(
            across <= 0.10,
            "RSS at the end of a life grew {:.1} % over the first life's",
            across * 100.0
        );
    }
}
