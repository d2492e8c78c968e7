//! The call path as planners and operators meet it, through the real
//! `toolgraph serve` binary: an OpenAPI upstream on loopback with a bearer
//! secret from the secrets file (and the secret nowhere else), a held call
//! approved and run once (a rejected one never arriving), health from real
//! calls switching a tool off and back on with webhooks, the spending
//! alert, and kill -9 in a stream of rate-limited calls. The MCP side (the
//! official Python SDK, the Inspector CLI) is in `mcp.rs`.

use crate::http::{Resp, call, get};
use crate::process::Server;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const ADMIN: &str = "gw-admin-key-0123456789abcdef";
const ACME: &str = "gw-acme-key-0123456789abcdef";
const SUPPORT: &str = "gw-support-key-0123456789abcdef";
const CAFE: &str = "gw-cafe-key-0123456789abcdef";
const SECRET: &str = "sk-live-GATEWAY-SECRET-7f3a9c";

/// One request the upstream received.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub method: String,
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

/// A recording HTTP upstream (and webhook receiver) on loopback: every
/// request is kept; it answers 200 JSON, or 500 echoing the request's
/// headers while `failing`.
#[derive(Clone)]
pub(crate) struct Upstream {
    pub addr: SocketAddr,
    pub seen: Arc<Mutex<Vec<Seen>>>,
    pub failing: Arc<AtomicBool>,
}

impl Upstream {
    pub(crate) fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let up = Upstream {
            addr: listener.local_addr().unwrap(),
            seen: Arc::default(),
            failing: Arc::default(),
        };
        let me = up.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let me = me.clone();
                std::thread::spawn(move || me.serve(stream));
            }
        });
        up
    }

    fn serve(&self, stream: TcpStream) {
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut stream = stream;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let mut parts = line.split_whitespace();
            let method = parts.next().unwrap_or("").to_string();
            let target = parts.next().unwrap_or("").to_string();
            let mut headers = Vec::new();
            let mut len = 0usize;
            loop {
                let mut h = String::new();
                reader.read_line(&mut h).unwrap();
                let h = h.trim_end();
                if h.is_empty() {
                    break;
                }
                if let Some((k, v)) = h.split_once(':') {
                    let k = k.trim().to_ascii_lowercase();
                    if k == "content-length" {
                        len = v.trim().parse().unwrap_or(0);
                    }
                    headers.push((k, v.trim().to_string()));
                }
            }
            let mut body = vec![0; len];
            reader.read_exact(&mut body).unwrap();
            let seen = Seen {
                method,
                target: target.clone(),
                headers: headers.clone(),
                body: String::from_utf8_lossy(&body).into_owned(),
            };
            self.seen.lock().unwrap().push(seen.clone());
            let (status, answer) = if self.failing.load(Ordering::SeqCst)
                && !target.starts_with("/hook")
            {
                // A broken upstream that echoes what it got, credentials included.
                (500, json!({"error": "boom", "echo": headers}))
            } else if target.contains("bad-shape") {
                // Breaks the operation's declared response schema.
                (200, json!({"ok": "yes"}))
            } else {
                (
                    200,
                    json!({"ok": true, "method": seen.method, "target": seen.target, "body": seen.body}),
                )
            };
            let text = answer.to_string();
            let reason = if status == 200 {
                "OK"
            } else {
                "Internal Server Error"
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{text}",
                text.len()
            );
        }
    }

    /// Requests to paths starting with `prefix`.
    pub(crate) fn to(&self, prefix: &str) -> Vec<Seen> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.target.starts_with(prefix))
            .cloned()
            .collect()
    }
}

fn post(addr: SocketAddr, path: &str, key: &str, body: &Value) -> Resp {
    call(
        addr,
        "POST",
        path,
        &[
            ("Authorization", &format!("Bearer {key}")),
            ("Content-Type", "application/json"),
        ],
        body.to_string().as_bytes(),
    )
}

fn fetch(addr: SocketAddr, path: &str, key: &str) -> Resp {
    get(addr, path, Some(key))
}

/// The keys file, the secrets file (0600), the spec, the Turtle that gives
/// a seed tool an upstream; a data folder.
struct Setup {
    dir: tempfile::TempDir,
}

impl Setup {
    fn new(up: &Upstream) -> Self {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = |f: &str| dir.path().join(f);
        std::fs::write(
            p("keys.json"),
            json!([
                {"key": ADMIN, "role": "admin", "name": "ops"},
                {"key": ACME, "role": "reader", "org": "acme"},
                {"key": SUPPORT, "role": "reader", "agent": "acme_support"},
                {"key": CAFE, "role": "reader", "org": "corner_cafe"},
            ])
            .to_string(),
        )
        .unwrap();
        std::fs::write(
            p("secrets.json"),
            json!({"acme": {"petstore": SECRET, "stripe": SECRET}}).to_string(),
        )
        .unwrap();
        std::fs::set_permissions(p("secrets.json"), std::fs::Permissions::from_mode(0o600))
            .unwrap();
        let spec = format!(
            r#"openapi: 3.0.0
info: {{title: Petstore, version: "1"}}
servers: [{{url: "http://{addr}"}}]
components:
  securitySchemes:
    bearer: {{type: http, scheme: bearer}}
security: [{{bearer: []}}]
paths:
  /pets/{{petId}}:
    post:
      operationId: pet_rename
      summary: Rename a pet in the pet store
      parameters:
        - {{name: petId, in: path, required: true, schema: {{type: string}}}}
        - {{name: notify, in: query, schema: {{type: boolean}}}}
        - {{name: X-Trace, in: header, schema: {{type: string}}}}
      requestBody:
        content:
          application/json:
            schema: {{type: object, required: [name], properties: {{name: {{type: string, description: the new name}}}}}}
      responses:
        "200":
          description: renamed
          content:
            application/json:
              schema: {{type: object, required: [ok], properties: {{ok: {{type: boolean}}}}}}
"#,
            addr = up.addr
        );
        std::fs::write(p("petstore.yaml"), spec).unwrap();
        // A seed tool (its constellation in seeds/) given an upstream in
        // Turtle by an ontologist.
        let upstream =
            json!({"kind": "http", "method": "POST", "url": format!("http://{}/refunds", up.addr),
            "auth": {"secret": "stripe"}})
            .to_string()
            .replace('"', "\\\"");
        std::fs::write(
            p("refund-upstream.ttl"),
            format!(
                "@prefix tg: <https://toolgraph.dev/ns#> .\n@prefix tool: <https://toolgraph.dev/tool/> .\ntool:refund_payment tg:upstream \"{upstream}\" .\n"
            ),
        )
        .unwrap();
        std::fs::create_dir(p("data")).unwrap();
        Setup { dir }
    }

    fn path(&self, f: &str) -> String {
        self.dir.path().join(f).to_str().unwrap().to_string()
    }

    fn serve(&self, up: &Upstream, log: Option<&str>) -> Server {
        self.serve_allowing(up, log, true)
    }

    /// With `loopback`, the operator allows loopback for every source
    /// (`--airlock-allow 127.0.0.1`); without, only a source that says so.
    fn serve_allowing(&self, up: &Upstream, log: Option<&str>, loopback: bool) -> Server {
        let (data, keys, secrets, ttl, root) = (
            self.path("data"),
            self.path("keys.json"),
            self.path("secrets.json"),
            self.path("refund-upstream.ttl"),
            self.path(""),
        );
        let hook = format!("http://{}/hook", up.addr);
        let args = [
            "--data",
            &data,
            "--no-embed",
            "--keys",
            &keys,
            "--secrets",
            &secrets,
            "--airlock-allow",
            if loopback { "127.0.0.1" } else { "192.0.2.1" },
            "--source-root",
            &root,
            "--notify",
            &hook,
            "--schedule-tick",
            "1",
            "--fail-after",
            "3",
            "--recover-after",
            "2",
            &ttl,
        ];
        Server::start_logged(
            &args,
            &[("RUST_LOG", "debug")],
            log.map(|l| self.dir.path().join(l)),
        )
    }
}

/// Adds the spec as a source, scans it and approves `pet_rename` with
/// `policy`.
fn admit_petstore(s: &Server, setup: &Setup, policy: Value) {
    admit(
        s,
        &json!({"kind": "openapi", "location": setup.path("petstore.yaml")}),
        "pet_rename",
        policy,
    );
}

/// Adds `source`, scans it and approves its tool `name` with `policy`.
fn admit(s: &Server, source: &Value, name: &str, policy: Value) {
    let r = post(s.addr, "/v1/sources", ADMIN, source);
    assert_eq!(r.status, 201, "{}", r.body);
    let id = r.json()["id"].as_str().unwrap().to_string();
    let r = post(s.addr, &format!("/v1/sources/{id}/scan"), ADMIN, &json!({}));
    assert_eq!(r.status, 200, "{}", r.body);
    let items = fetch(s.addr, "/v1/pending?status=pending", ADMIN).json();
    let item = items
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == name)
        .unwrap_or_else(|| panic!("{items}"));
    assert_eq!(item["manifest"]["upstream"]["kind"], "http", "{item}");
    assert!(
        item["manifest"]["upstream"]["url"]
            .as_str()
            .unwrap()
            .ends_with("/pets/{petId}"),
        "{item}"
    );
    let r = post(
        s.addr,
        &format!("/v1/pending/{}/approve", item["id"].as_str().unwrap()),
        ADMIN,
        &policy,
    );
    assert_eq!(r.status, 200, "{}", r.body);
}

fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn an_openapi_upstream_gets_the_right_request_and_the_secret_stays_with_it() {
    let up = Upstream::start();
    let setup = Setup::new(&up);
    let s = setup.serve(&up, Some("server.log"));
    admit_petstore(
        &s,
        &setup,
        json!({"access": {"orgs": ["acme"]}, "budget": {"limit": 5, "unit": "calls", "period": "day"}}),
    );

    // acme calls: path, query, header and body go where the spec says,
    // the bearer secret from the secrets file.
    let args = json!({"petId": "42", "notify": true, "X-Trace": "t-1", "name": "Rex"});
    first_call_lands_as_the_spec_says(&s, &up, &args);
    refused_calls_leave_nothing(&s, &up, &args);
    a_broken_upstream_and_the_budget(&s, &up, &args);
    audit_and_usage(&s);
    let (metrics, all_calls, console) = (
        get(s.addr, "/metrics", None).body,
        fetch(s.addr, "/v1/calls?limit=500", ADMIN).body,
        get(s.addr, "/console", None).body,
    );
    drop(s);
    let log = std::fs::read_to_string(setup.dir.path().join("server.log")).unwrap();
    assert!(!log.is_empty(), "the server log is empty");
    for (what, text) in [
        ("metrics", &metrics),
        ("/v1/calls", &all_calls),
        ("console", &console),
        ("server log", &log),
    ] {
        assert!(!text.contains(SECRET), "the secret is in {what}");
    }
}

/// acme calls: path, query, header and body go where the spec says, the
/// bearer secret from the secrets file.
fn first_call_lands_as_the_spec_says(s: &Server, up: &Upstream, args: &Value) {
    let r = post(
        s.addr,
        "/v1/call",
        ACME,
        &json!({"tool": "pet_rename", "arguments": args}),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let v = r.json();
    assert_eq!(v["status"], "ok", "{v}");
    assert_eq!(v["upstream_status"], 200);
    assert_eq!(v["usage"]["total_calls"], 1, "{v}");
    let got = up.to("/pets");
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].method, "POST");
    assert_eq!(got[0].target, "/pets/42?notify=true");
    assert_eq!(
        serde_json::from_str::<Value>(&got[0].body).unwrap(),
        json!({"name": "Rex"})
    );
    let header = |k: &str| {
        got[0]
            .headers
            .iter()
            .find(|(h, _)| h == k)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(header("authorization"), Some(format!("Bearer {SECRET}")));
    assert_eq!(header("x-trace").as_deref(), Some("t-1"));
}

/// Invalid arguments, another tenant, no upstream: nothing leaves.
fn refused_calls_leave_nothing(s: &Server, up: &Upstream, args: &Value) {
    // Invalid arguments: named, and nothing leaves.
    let r = post(
        s.addr,
        "/v1/call",
        ACME,
        &json!({"tool": "pet_rename", "arguments": {"petId": "42", "name": 7}}),
    );
    assert_eq!(r.status, 400, "{}", r.body);
    let e = r.json();
    assert_eq!(e["error"]["code"], "invalid_call_arguments", "{e}");
    assert!(
        e["error"]["message"].as_str().unwrap().contains("name"),
        "{e}"
    );
    let r = post(
        s.addr,
        "/v1/call",
        ACME,
        &json!({"tool": "pet_rename", "arguments": {"name": "Rex"}}),
    );
    assert_eq!(r.json()["error"]["field"], "/arguments/petId", "{}", r.body);
    assert_eq!(
        up.to("/pets").len(),
        1,
        "an invalid call reached the upstream"
    );

    // corner_cafe is not granted it: the call answers as for a tool that does not exist.
    let hidden = post(
        s.addr,
        "/v1/call",
        CAFE,
        &json!({"tool": "pet_rename", "arguments": args}),
    );
    let missing = post(
        s.addr,
        "/v1/call",
        CAFE,
        &json!({"tool": "pet_renamx", "arguments": args}),
    );
    assert_eq!(hidden.status, 404);
    assert_eq!(
        hidden.json()["error"]["code"],
        missing.json()["error"]["code"]
    );
    assert_eq!(
        hidden.json()["error"]["message"]
            .as_str()
            .unwrap()
            .replace("pet_rename", "X"),
        missing.json()["error"]["message"]
            .as_str()
            .unwrap()
            .replace("pet_renamx", "X")
    );

    // A tool without an upstream says so.
    let r = post(
        s.addr,
        "/v1/call",
        ACME,
        &json!({"tool": "flight_search", "arguments": {}}),
    );
    assert_eq!(r.status, 422, "{}", r.body);
    assert_eq!(r.json()["error"]["code"], "no_upstream");
}

/// An upstream that breaks and echoes its credentials; the spending alert
/// and the budget's end.
fn a_broken_upstream_and_the_budget(s: &Server, up: &Upstream, args: &Value) {
    // The upstream breaks and echoes the credential back: the error body is scrubbed.
    up.failing.store(true, Ordering::SeqCst);
    let r = post(
        s.addr,
        "/v1/call",
        ACME,
        &json!({"tool": "pet_rename", "arguments": args}),
    );
    assert_eq!(
        r.status, 200,
        "an upstream HTTP error is the tool's answer: {}",
        r.body
    );
    assert_eq!(r.json()["status"], "error");
    assert_eq!(r.json()["upstream_status"], 500);
    assert!(
        !r.body.contains(SECRET),
        "the secret came back in a call's answer: {}",
        r.body
    );
    up.failing.store(false, Ordering::SeqCst);

    // Four calls of a 5-call budget: the spending alert went to the webhook.
    for _ in 0..2 {
        let r = post(
            s.addr,
            "/v1/call",
            ACME,
            &json!({"tool": "pet_rename", "arguments": args}),
        );
        assert_eq!(r.status, 200, "{}", r.body);
    }
    wait_for("the budget alert", || {
        up.to("/hook")
            .iter()
            .any(|h| h.body.contains("budget_soft_limit"))
    });
    let hook = up.to("/hook");
    let alert: Value = serde_json::from_str(
        &hook
            .iter()
            .find(|h| h.body.contains("budget_soft_limit"))
            .unwrap()
            .body,
    )
    .unwrap();
    assert_eq!(alert["tool"], "pet_rename");
    assert_eq!(alert["org"], "acme");
    // The fifth call is the last the budget allows; the sixth names it.
    let r = post(
        s.addr,
        "/v1/call",
        ACME,
        &json!({"tool": "pet_rename", "arguments": args}),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let r = post(
        s.addr,
        "/v1/call",
        ACME,
        &json!({"tool": "pet_rename", "arguments": args}),
    );
    assert_eq!(r.status, 429, "{}", r.body);
    assert_eq!(r.json()["error"]["code"], "limit_reached");
    assert!(r.body.contains("budget"), "{}", r.body);
    assert_eq!(
        up.to("/pets").len(),
        5,
        "the refused call reached the upstream"
    );
}

/// One audit record per call, hashes not payloads; the usage view.
fn audit_and_usage(s: &Server) {
    // Audit: one record per call, hashes not payloads; usage view.
    let calls = fetch(s.addr, "/v1/calls?tool=pet_rename", ADMIN);
    assert_eq!(calls.status, 200);
    let records = calls.json();
    let statuses: Vec<&str> = records
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert!(
        statuses.contains(&"ok") && statuses.contains(&"error") && statuses.contains(&"refused"),
        "{statuses:?}"
    );
    assert!(records[0]["arguments_sha256"].as_str().unwrap().len() == 64);
    assert!(records[0].get("arguments").is_none());
    let usage = fetch(s.addr, "/v1/usage/tools", ADMIN).json();
    let pet = usage
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["tool"] == "pet_rename")
        .unwrap()
        .clone();
    assert_eq!(pet["orgs"][0]["org"], "acme", "{pet}");
    assert_eq!(pet["orgs"][0]["budget_left"], 0.0, "{pet}");
    assert!(pet["p95_ms"].as_f64().is_some(), "{pet}");
}

#[test]
fn a_held_call_runs_once_after_approval_and_a_rejected_one_never() {
    let up = Upstream::start();
    let setup = Setup::new(&up);
    let s = setup.serve(&up, None);
    // acme_support must have refunds approved (seeds/policy.ttl).
    let args = json!({"payment_id": "pi_123", "reason": "duplicate"});
    let r = post(
        s.addr,
        "/v1/call",
        SUPPORT,
        &json!({"tool": "refund_payment", "arguments": args}),
    );
    assert_eq!(r.status, 202, "{}", r.body);
    let held = r.json();
    assert_eq!(held["status"], "pending_approval");
    let id = held["approval"].as_str().unwrap().to_string();
    assert!(
        up.to("/refunds").is_empty(),
        "a held call reached the upstream"
    );
    // The asking key sees its request; another reader key does not.
    assert_eq!(
        fetch(s.addr, &format!("/v1/approvals/{id}"), SUPPORT).json()["status"],
        "pending"
    );
    assert_eq!(
        fetch(s.addr, &format!("/v1/approvals/{id}"), ACME).status,
        404
    );
    let mine = fetch(s.addr, "/v1/approvals?status=pending", ADMIN).json();
    assert!(
        mine.as_array()
            .unwrap()
            .iter()
            .any(|a| a["id"] == id.as_str())
    );
    // A reader key cannot approve.
    assert_eq!(
        post(
            s.addr,
            &format!("/v1/approvals/{id}/approve"),
            SUPPORT,
            &json!({})
        )
        .status,
        403
    );
    // Approved: called exactly once, with the held arguments and acme's secret.
    let r = post(
        s.addr,
        &format!("/v1/approvals/{id}/approve"),
        ADMIN,
        &json!({"reason": "verified duplicate"}),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let done = r.json();
    assert_eq!(done["status"], "done", "{done}");
    assert_eq!(done["answer"]["status"], "ok", "{done}");
    assert_eq!(done["decided_by"], "ops");
    let r = post(
        s.addr,
        &format!("/v1/approvals/{id}/approve"),
        ADMIN,
        &json!({}),
    );
    assert_eq!(r.status, 409, "{}", r.body);
    let got = up.to("/refunds");
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(serde_json::from_str::<Value>(&got[0].body).unwrap(), args);
    assert!(
        got[0]
            .headers
            .contains(&("authorization".into(), format!("Bearer {SECRET}")))
    );
    rejected_never_reaches(&s, &up, &args);
}

/// A second held call, rejected: never called, not even after a late
/// approve; the audit log has both holds and the one run.
fn rejected_never_reaches(s: &Server, up: &Upstream, args: &Value) {
    // Rejected: never called, not even after a late approve.
    let r = post(
        s.addr,
        "/v1/call",
        SUPPORT,
        &json!({"tool": "refund_payment", "arguments": args}),
    );
    let id2 = r.json()["approval"].as_str().unwrap().to_string();
    let r = post(
        s.addr,
        &format!("/v1/approvals/{id2}/reject"),
        ADMIN,
        &json!({"reason": "not a duplicate"}),
    );
    assert_eq!(r.json()["status"], "rejected", "{}", r.body);
    assert_eq!(
        post(
            s.addr,
            &format!("/v1/approvals/{id2}/approve"),
            ADMIN,
            &json!({})
        )
        .status,
        409
    );
    assert_eq!(
        up.to("/refunds").len(),
        1,
        "a rejected call reached the upstream"
    );
    // The audit log has the held call, its run and the rejection's hold.
    let records = fetch(s.addr, "/v1/calls?tool=refund_payment", ADMIN).json();
    let statuses: Vec<&str> = records
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == "held").count(),
        2,
        "{statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|s| **s == "ok").count(),
        1,
        "{statuses:?}"
    );
}

#[test]
fn a_private_upstream_is_reached_only_where_its_source_allows_it() {
    let up = Upstream::start();
    let setup = Setup::new(&up);
    // The same loopback server behind a second spec, another operation name.
    let spec = std::fs::read_to_string(setup.path("petstore.yaml")).unwrap();
    std::fs::write(
        setup.path("petstore-b.yaml"),
        spec.replace("operationId: pet_rename", "operationId: pet_rename_b"),
    )
    .unwrap();
    let s = setup.serve_allowing(&up, None, false);
    let source = |file: &str, allow: Value| json!({"kind": "openapi", "location": setup.path(file), "allow": allow});
    admit(
        &s,
        &source("petstore.yaml", json!(["127.0.0.1"])),
        "pet_rename",
        json!({}),
    );
    admit(
        &s,
        &source("petstore-b.yaml", json!([])),
        "pet_rename_b",
        json!({}),
    );
    let args = json!({"petId": "1", "name": "Ada"});
    let r = post(
        s.addr,
        "/v1/call",
        ACME,
        &json!({"tool": "pet_rename", "arguments": args}),
    );
    assert_eq!(r.json()["status"], "ok", "{}", r.body);
    let r = post(
        s.addr,
        "/v1/call",
        ACME,
        &json!({"tool": "pet_rename_b", "arguments": args}),
    );
    assert_eq!(r.status, 502, "{}", r.body);
    assert_eq!(r.json()["error"]["code"], "upstream_error");
    assert!(r.body.contains("loopback"), "{}", r.body);
    assert_eq!(
        up.to("/pets").len(),
        1,
        "the source without the allowance reached the upstream"
    );
    // An allowance that is no host is refused, naming it.
    let r = post(
        s.addr,
        "/v1/sources",
        ADMIN,
        &source("petstore-b.yaml", json!(["not a host"])),
    );
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        r.json()["error"]["code"],
        "invalid_source_allow",
        "{}",
        r.body
    );
}

#[test]
fn the_command_line_calls_through_the_same_gateway() {
    let up = Upstream::start();
    let setup = Setup::new(&up);
    // The server loads the seeds and the Turtle upstream into the store,
    // then stops: the command line opens the store itself.
    drop(setup.serve(&up, None));
    let out = crate::process::bin()
        .args([
            "call",
            "refund_payment",
            "--args",
            r#"{"payment_id": "pi_9"}"#,
            "--org",
            "acme",
        ])
        .args([
            "--data",
            &setup.path("data"),
            "--no-embed",
            "--secrets",
            &setup.path("secrets.json"),
        ])
        .args(["--airlock-allow", "127.0.0.1"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["status"], "ok", "{v}");
    let got = up.to("/refunds");
    assert_eq!(got.len(), 1);
    assert!(
        got[0]
            .headers
            .contains(&("authorization".into(), format!("Bearer {SECRET}")))
    );
    // A hidden tool is not found from the command line either.
    let out = crate::process::bin()
        .args([
            "call",
            "refund_payment",
            "--args",
            "{}",
            "--org",
            "corner_cafe",
        ])
        .args(["--data", &setup.path("data"), "--no-embed"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no tool named `refund_payment`"));
}

#[test]
fn failing_calls_switch_a_tool_off_and_probes_bring_it_back() {
    let up = Upstream::start();
    let setup = Setup::new(&up);
    let s = setup.serve(&up, None);
    admit_petstore(&s, &setup, json!({}));
    let args = json!({"petId": "7", "name": "Tom"});
    let in_search = || {
        post(
            s.addr,
            "/v1/search",
            ACME,
            &json!({"text": "rename a pet in the pet store", "limit": 5}),
        )
        .body
        .contains("pet_rename")
    };
    assert!(in_search());
    up.failing.store(true, Ordering::SeqCst);
    for _ in 0..3 {
        let r = post(
            s.addr,
            "/v1/call",
            ACME,
            &json!({"tool": "pet_rename", "arguments": args}),
        );
        assert_eq!(r.json()["status"], "error", "{}", r.body);
    }
    // Three failed calls in a row: off for everyone, out of search, calls refused.
    assert!(!in_search(), "a switched-off tool is still found");
    let r = post(
        s.addr,
        "/v1/call",
        ACME,
        &json!({"tool": "pet_rename", "arguments": args}),
    );
    assert_eq!(r.status, 503, "{}", r.body);
    assert_eq!(r.json()["error"]["code"], "tool_switched_off");
    wait_for("the switch-off webhook", || {
        up.to("/hook")
            .iter()
            .any(|h| h.body.contains("tool_switched_off"))
    });
    // The upstream recovers: the probes (every second) switch it back on.
    let before = up.to("/pets").len();
    up.failing.store(false, Ordering::SeqCst);
    wait_for("the tool back in search", in_search);
    assert_eq!(
        up.to("/pets").len(),
        before,
        "a probe called the operation itself"
    );
    wait_for("the back-on webhook", || {
        up.to("/hook")
            .iter()
            .any(|h| h.body.contains("tool_back_on"))
    });
    let r = post(
        s.addr,
        "/v1/call",
        ACME,
        &json!({"tool": "pet_rename", "arguments": args}),
    );
    assert_eq!(r.json()["status"], "ok", "{}", r.body);
    // An answer that breaks the operation's declared response schema.
    let bad = json!({"petId": "bad-shape", "name": "Tom"});
    let r = post(
        s.addr,
        "/v1/call",
        ACME,
        &json!({"tool": "pet_rename", "arguments": bad}),
    );
    assert_eq!(r.status, 502, "{}", r.body);
    assert_eq!(r.json()["error"]["code"], "upstream_output_invalid");
    assert!(r.body.contains("/ok"), "{}", r.body);
}

#[test]
fn kill_9_in_a_stream_of_rate_limited_calls_never_lets_the_limit_be_exceeded() {
    let up = Upstream::start();
    let setup = Setup::new(&up);
    let mut s = setup.serve(&up, None);
    const LIMIT: usize = 40;
    admit_petstore(&s, &setup, json!({"rate_limit": LIMIT}));
    let addr = s.addr;
    let acknowledged = Arc::new(Mutex::new(0usize));
    let ack = acknowledged.clone();
    let caller = std::thread::spawn(move || {
        for i in 0..LIMIT * 2 {
            let r = std::panic::catch_unwind(|| {
                post(
                    addr,
                    "/v1/call",
                    ACME,
                    &json!({"tool": "pet_rename", "arguments": {"petId": i.to_string(), "name": "K"}}),
                )
            });
            match r {
                Ok(r) if r.status == 200 => *ack.lock().unwrap() += 1,
                Ok(r) if r.status == 429 => {}
                _ => break,
            }
        }
    });
    wait_for("a few acknowledged calls", || {
        *acknowledged.lock().unwrap() >= 10
    });
    s.kill9();
    caller.join().unwrap();
    let acked = *acknowledged.lock().unwrap();
    // Restarted: every acknowledged call is counted, and the minute's
    // remaining calls are what the limit leaves.
    let s = setup.serve(&up, None);
    let usage = fetch(s.addr, "/v1/usage/tools", ADMIN).json();
    let counted = usage
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["tool"] == "pet_rename")
        .map_or(0, |u| u["orgs"][0]["total_calls"].as_u64().unwrap_or(0))
        as usize;
    assert!(
        counted >= acked,
        "{acked} acknowledged calls, {counted} counted after the restart"
    );
    let mut more = 0;
    loop {
        let r = post(
            s.addr,
            "/v1/call",
            ACME,
            &json!({"tool": "pet_rename", "arguments": {"petId": "x", "name": "K"}}),
        );
        if r.status != 200 {
            assert_eq!(r.status, 429, "{}", r.body);
            break;
        }
        more += 1;
        assert!(
            more <= LIMIT,
            "the limit was not enforced after the restart"
        );
    }
    let reached = up.to("/pets").len();
    assert!(
        reached <= LIMIT,
        "{reached} calls reached the upstream in the minute; the limit is {LIMIT}"
    );
    eprintln!(
        "kill -9 among rate-limited calls: {acked} acknowledged, {counted} counted, {more} more allowed, {reached} reached the upstream (limit {LIMIT})"
    );
}
