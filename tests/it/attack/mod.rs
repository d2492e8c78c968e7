//! The standing attack suite: what an outsider with keys of every kind
//! tries, each answered by a test that fails when the answer regresses.
//!
//! - `leaks`: every reader route and MCP tool, asked about every tool the
//!   caller may not see, by several callers: no hidden name in any answer,
//!   and a hidden tool answered exactly like a missing one;
//! - `fuzz`: random requests (fixed seed) over every route of
//!   `/openapi.json` and the MCP endpoint: no 500, every error in the one
//!   shape, the server answering afterwards;
//! - `reach`: sources and health checks at link-local, loopback, private
//!   and disguised addresses, credentials in URLs, files outside the source
//!   root, `../` and symbolic links out of a folder;
//! - `crash`: kill -9 in the middle of approvals, rejections and usage
//!   records, then restart: the review item and the catalog agree, every
//!   acknowledged write is there;
//! - `exhaust`: idle and slow connections, huge limits and costs, many
//!   steps, long method names, failure records, MCP sessions, oversized
//!   targets and headers, the open server's browser checks: each within its
//!   limit, the server answering throughout.
//!
//! `TOOLGRAPH_ATTACK_SCALE` (default 1, what CI runs) multiplies the
//! rounds: `scripts/attack.sh` runs the suite at scale 10.

mod crash;
mod exhaust;
mod fuzz;
mod leaks;
mod reach;

use crate::common::root;
use crate::http::{Live, Resp, call, get};
use std::sync::{Arc, OnceLock};
use toolgraph::server::{KeyEntry, Keys, Role, ServeOptions};
use toolgraph::{Embeddings, Engine, EngineOptions};

/// How many times the CI rounds (env `TOOLGRAPH_ATTACK_SCALE`).
pub(crate) fn scale() -> usize {
    std::env::var("TOOLGRAPH_ATTACK_SCALE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1usize)
        .clamp(1, 1000)
}

pub(crate) const ADMIN: &str = "attack-admin-key-0123456789";
pub(crate) const READER: &str = "attack-reader-key-0123456789";
pub(crate) const ACME: &str = "attack-acme-key-0123456789ab";
pub(crate) const CAFE: &str = "attack-cafe-key-0123456789ab";
pub(crate) const DRAFTER: &str = "attack-drafter-key-012345678";

/// The reader keys, each with the caller it stands for.
pub(crate) const READERS: [&str; 4] = [READER, ACME, CAFE, DRAFTER];

pub(crate) fn keys() -> Keys {
    let entry = |key: &str, role, org: Option<&str>, agent: Option<&str>| KeyEntry {
        key: key.into(),
        role,
        org: org.map(str::to_string),
        agent: agent.map(str::to_string),
        name: None,
    };
    Keys::from_entries(vec![
        entry(ADMIN, Role::Admin, None, None),
        entry(READER, Role::Reader, None, None),
        entry(ACME, Role::Reader, Some("acme"), None),
        entry(CAFE, Role::Reader, Some("corner_cafe"), None),
        entry(DRAFTER, Role::Reader, None, Some("acme_drafter")),
    ])
}

/// The seeded engine with the real model, shared by the suite's servers.
pub(crate) fn engine() -> Arc<Engine> {
    static E: OnceLock<Arc<Engine>> = OnceLock::new();
    E.get_or_init(|| {
        let engine = Engine::open(EngineOptions::memory(Embeddings::Model(
            toolgraph::embed::default_model_dir(),
        )))
        .unwrap();
        engine
            .load_paths(&[root().join("ontology"), root().join("seeds")], None)
            .unwrap();
        Arc::new(engine)
    })
    .clone()
}

pub(crate) fn start(options: ServeOptions) -> Live {
    Live::start(
        engine(),
        ServeOptions {
            keys: keys(),
            ..options
        },
    )
}

pub(crate) fn with_key(
    live: &Live,
    method: &str,
    path: &str,
    key: Option<&str>,
    body: &str,
) -> Resp {
    let auth = key.map(|k| format!("Bearer {k}"));
    let mut h: Vec<(&str, &str)> = vec![("Content-Type", "application/json")];
    if let Some(a) = &auth {
        h.push(("Authorization", a));
    }
    call(live.addr, method, path, &h, body.as_bytes())
}

/// The server still answers a plain request.
pub(crate) fn still_answers(live: &Live) {
    let r = get(live.addr, "/readyz", None);
    assert_eq!(r.status, 200, "the server stopped answering: {}", r.body);
}

/// A tiny MCP client over plain HTTP: initialize (a session id), the
/// initialized notification, then calls. Enough to drive the endpoint
/// where the official SDK (tests/it/mcp.rs) cannot be made to misbehave.
pub(crate) struct Mcp<'a> {
    pub live: &'a Live,
    pub key: &'a str,
    pub session: Option<String>,
}

impl<'a> Mcp<'a> {
    pub fn post(&self, body: &serde_json::Value) -> Resp {
        let auth = format!("Bearer {}", self.key);
        let mut h: Vec<(&str, &str)> = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("Authorization", &auth),
        ];
        let sid;
        if let Some(s) = &self.session {
            sid = s.clone();
            h.push(("Mcp-Session-Id", &sid));
            h.push(("Mcp-Protocol-Version", "2025-06-18"));
        }
        call(
            self.live.addr,
            "POST",
            "/mcp",
            &h,
            body.to_string().as_bytes(),
        )
    }

    /// Opens a session; `None` when the server kept none.
    pub fn open(live: &'a Live, key: &'a str) -> Self {
        let mut m = Mcp {
            live,
            key,
            session: None,
        };
        let r = m.post(&serde_json::json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "attack", "version": "1"}}
        }));
        assert_eq!(r.status, 200, "initialize: {}", r.body);
        m.session = r.header("mcp-session-id").map(str::to_string);
        let r =
            m.post(&serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        assert!(r.status < 300, "initialized: {} {}", r.status, r.body);
        m
    }

    /// Calls a tool; the JSON-RPC message that answers it.
    pub fn call_tool(&self, name: &str, args: serde_json::Value) -> serde_json::Value {
        let r = self.post(&serde_json::json!({
            "jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": name, "arguments": args}
        }));
        assert_eq!(r.status, 200, "tools/call {name}: {}", r.body);
        rpc_message(&r.body)
    }
}

/// The JSON-RPC message in a response body: plain JSON, or the `data:` of
/// the event that carries it.
pub(crate) fn rpc_message(body: &str) -> serde_json::Value {
    if let Ok(v) = serde_json::from_str(body) {
        return v;
    }
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<serde_json::Value>(d.trim()).ok())
        .find(|v| v.get("id").is_some())
        .unwrap_or_else(|| panic!("no JSON-RPC message in {body}"))
}
