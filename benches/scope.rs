//! What caller scope costs: the policy resolution alone (every layer, for
//! callers from anonymous to agent + channel + session + goal) against a
//! whole search for the same caller, on the bundled seeds (180 tools) and on
//! the seeds copied 56 times (10,080 tools, each copy with its own tool
//! names, policy references and all). The query embedding is cached after
//! the first call, so the search figure is the rest of the search: the
//! overhead ratio is conservative. Needs `scripts/setup.sh` (the model).

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use toolgraph::graph::{Source, SourceData};
use toolgraph::import::collect_files;
use toolgraph::{Caller, Engine, SearchRequest};

mod common;
use common::{engine_with_ontology, root};

/// The seeds, `copies` times: copy `k` renames every tool `x` to `x_k`.
fn seed_copies(copies: usize) -> Vec<Source> {
    let files = collect_files(&[root().join("seeds")]).unwrap_or_else(|e| panic!("{e}"));
    let mut out = Vec::new();
    for k in 0..copies {
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{e}"));
            let text = if k == 0 { text } else { rename_tools(&text, k) };
            out.push(Source {
                name: format!("{}#{k}", f.display()),
                data: SourceData::Turtle(text),
            });
        }
    }
    out
}

/// `tool:name` -> `tool:name_k`, `tg:name "name"` -> `tg:name "name_k"`.
fn rename_tools(text: &str, k: usize) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    let mut rest = text;
    while let Some(i) = rest.find("tool:") {
        let (head, tail) = rest.split_at(i + 5);
        out.push_str(head);
        let end = tail
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        if end > 0 {
            out.push_str(&format!("{}_{k}", &tail[..end]));
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    let mut renamed = String::with_capacity(out.len());
    let mut rest = out.as_str();
    while let Some(i) = rest.find("tg:name \"") {
        let (head, tail) = rest.split_at(i + 9);
        renamed.push_str(head);
        let end = tail.find('"').unwrap_or(tail.len());
        renamed.push_str(&format!("{}_{k}", &tail[..end]));
        rest = &tail[end..];
    }
    renamed.push_str(rest);
    renamed
}

fn engine(copies: usize) -> Engine {
    let engine = engine_with_ontology();
    engine
        .load(&seed_copies(copies))
        .unwrap_or_else(|e| panic!("{e}"));
    engine
}

fn callers() -> Vec<(&'static str, Caller)> {
    let c = |org: Option<&str>, agent: Option<&str>, channel: Option<&str>, goal: Option<&str>| {
        Caller {
            org: org.map(str::to_string),
            agent: agent.map(str::to_string),
            session: agent.map(|_| "bench-session".to_string()),
            channel: channel.map(str::to_string),
            goal: goal.map(str::to_string),
            key: None,
        }
    };
    vec![
        ("anonymous", Caller::default()),
        ("org", c(Some("corner_cafe"), None, None, None)),
        (
            "agent_channel_session",
            c(None, Some("acme_support"), Some("sms"), None),
        ),
        (
            "agent_goal",
            c(
                None,
                Some("acme_drafter"),
                Some("voice"),
                Some("CHECK_AVAILABILITY"),
            ),
        ),
    ]
}

/// `cargo bench` passes `--bench`; `cargo test` runs each benchmark once
/// (a smoke test), on a small catalog.
fn full_run() -> bool {
    std::env::args().any(|a| a == "--bench")
}

fn scope(c: &mut Criterion) {
    let sizes: &[usize] = if full_run() { &[1, 56] } else { &[1] };
    let mut group = c.benchmark_group("scope");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    for &copies in sizes {
        let engine = engine(copies);
        let n = engine
            .visible(&Caller::default())
            .unwrap_or_else(|e| panic!("{e}"));
        for (name, caller) in callers() {
            if caller.session.is_some() {
                // Hidden for the rest of the session, where the caller sees it.
                let _ = engine.session_failed(&caller, "transfer_call", "bench");
            }
            group.bench_function(BenchmarkId::new(format!("resolve/{name}"), n), |b| {
                b.iter(|| engine.visible(&caller).unwrap_or_else(|e| panic!("{e}")))
            });
            let req = SearchRequest {
                text: "text the customer that the technician is on the way".into(),
                limit: 10,
                caller: caller.clone(),
                ..SearchRequest::default()
            };
            group.bench_function(BenchmarkId::new(format!("search/{name}"), n), |b| {
                b.iter(|| engine.search(&req).unwrap_or_else(|e| panic!("{e}")))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, scope);
criterion_main!(benches);
