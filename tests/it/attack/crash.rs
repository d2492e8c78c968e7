//! kill -9 in the middle of writes, then a restart on the same store.
//!
//! Finding A1: killed during an unacknowledged approve, restarted, then
//! rejected, the review item said `rejected` while the tool stayed in the
//! catalog and topped search (5 of 6 rounds). After any crash an item's
//! status and the catalog agree: approved exactly when searchable. And an
//! acknowledged usage record is never lost. (Registrations under kill -9:
//! `process::acknowledged_registrations_survive_kill_9`.)

use super::scale;
use crate::common::root;
use crate::http::{Resp, call, get};
use crate::process::Server;
use serde_json::{Value, json};
use std::time::Duration;

fn post(s: &Server, path: &str, body: Value) -> Resp {
    call(
        s.addr,
        "POST",
        path,
        &[("Content-Type", "application/json")],
        body.to_string().as_bytes(),
    )
}

fn item(s: &Server, id: &str) -> Value {
    let r = get(s.addr, &format!("/v1/pending/{id}"), None);
    assert_eq!(r.status, 200, "{}", r.body);
    r.json()
}

fn in_catalog(s: &Server, name: &str) -> bool {
    get(s.addr, &format!("/v1/tools/{name}"), None).status == 200
}

/// The item's status and the catalog agree.
fn agree(s: &Server, id: &str, name: &str, round: usize) -> String {
    let status = item(s, id)["status"].as_str().unwrap().to_string();
    assert_eq!(
        status == "approved",
        in_catalog(s, name),
        "round {round}: `{name}` is {status} but {} the catalog",
        if in_catalog(s, name) { "in" } else { "not in" }
    );
    status
}

/// Sends `body` to `path` and kills the server `delay` after (the request
/// may or may not have been acknowledged).
fn kill_during(server: &mut Server, path: &str, body: Value, delay: Duration) {
    let addr = server.addr;
    let path = path.to_string();
    let sender = std::thread::spawn(move || {
        let _ = std::panic::catch_unwind(|| {
            call(
                addr,
                "POST",
                &path,
                &[("Content-Type", "application/json")],
                body.to_string().as_bytes(),
            )
        });
    });
    std::thread::sleep(delay);
    server.kill9();
    let _ = sender.join();
}

/// Adds the fixture spec as a source and scans it: the source id and each
/// review item's id and name.
fn scanned(server: &Server) -> (String, Vec<(String, String)>) {
    let r = post(
        server,
        "/v1/sources",
        json!({"kind": "openapi", "location": "travel.yaml"}),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let source = r.json()["id"].as_str().unwrap().to_string();
    let r = post(server, &format!("/v1/sources/{source}/scan"), json!({}));
    assert_eq!(r.status, 200, "{}", r.body);
    let items = get(server.addr, "/v1/pending?limit=500", None)
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["id"].as_str().unwrap().into(),
                i["name"].as_str().unwrap().into(),
            )
        })
        .collect();
    (source, items)
}

/// Every acknowledged usage record is there after a kill.
fn usage_survives(server: &mut Server, args: &[&str]) -> (u64, u64) {
    let tool = "flight_search";
    let mut acknowledged = 0u64;
    for _ in 0..20 * scale() {
        let r = post(server, "/v1/usage", json!({"tool": tool, "org": "acme"}));
        assert_eq!(r.status, 200, "{}", r.body);
        acknowledged += 1;
    }
    kill_during(
        server,
        "/v1/usage",
        json!({"tool": tool, "org": "acme"}),
        Duration::ZERO,
    );
    *server = Server::start(args, &[]);
    let r = post(server, "/v1/usage", json!({"tool": tool, "org": "acme"}));
    let total = r.json()["total_calls"].as_u64().unwrap();
    assert!(
        total > acknowledged,
        "{total} calls counted, {acknowledged} acknowledged before the kill"
    );
    (acknowledged, total)
}

#[test]
fn approvals_rejections_and_usage_survive_kill_9_consistently() {
    let data = tempfile::tempdir().unwrap();
    let d = data.path().to_str().unwrap().to_string();
    let fixtures = root().join("tests/fixtures/openapi");
    let f = fixtures.to_str().unwrap().to_string();
    let args = [
        "--data",
        d.as_str(),
        "--no-embed",
        "--source-root",
        f.as_str(),
        "--schedule-tick",
        "0",
    ];
    let mut server = Server::start(&args, &[]);
    let (source, items) = scanned(&server);
    let rounds = (6 * scale()).min(items.len());
    let delays = [0u64, 3, 10, 25, 60, 150];
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    for round in 0..rounds {
        let (id, name) = &items[round];
        let delay = Duration::from_millis(delays[round % delays.len()]);
        // A kill during an approve; then reject: rejected and not searchable.
        // (Some items screen as `block`, e.g. a look-alike name: the
        // approvals here carry an override, the crash is what is tested.)
        kill_during(
            &mut server,
            &format!("/v1/pending/{id}/approve"),
            json!({"override_reason": "crash test"}),
            delay,
        );
        server = Server::start(&args, &[]);
        *seen.entry(agree(&server, id, name, round)).or_default() += 1;
        let r = post(
            &server,
            &format!("/v1/pending/{id}/reject"),
            json!({"reason": "crash test"}),
        );
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(agree(&server, id, name, round), "rejected");
        let r = post(&server, &format!("/v1/sources/{source}/scan"), json!({}));
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(
            agree(&server, id, name, round),
            "rejected",
            "a rescan brought it back"
        );
        // Approve for good, then a kill during a reject: still agreeing.
        let r = post(
            &server,
            &format!("/v1/pending/{id}/approve"),
            json!({"override_reason": "crash test"}),
        );
        assert_eq!(r.status, 200, "{}", r.body);
        kill_during(
            &mut server,
            &format!("/v1/pending/{id}/reject"),
            json!({"reason": "x"}),
            delay,
        );
        server = Server::start(&args, &[]);
        agree(&server, id, name, round);
    }
    let (acknowledged, total) = usage_survives(&mut server, &args);
    eprintln!(
        "kill -9: {rounds} approval rounds (status after the kill: {seen:?}), usage {acknowledged} acknowledged, {total} after restart"
    );
}
