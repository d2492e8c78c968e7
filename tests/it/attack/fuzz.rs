//! A fuzzer over every route of `/openapi.json` and the MCP endpoint, with
//! a fixed seed: hostile numbers (huge, negative, non-finite, past u64),
//! long and odd strings, wrong types, deep nesting, unknown fields, bad
//! path parameters and query strings, with every kind of key. Whatever
//! comes back: no 500, no panic text, every error in the one JSON shape,
//! and the server answering afterwards.

use super::{ADMIN, CAFE, DRAFTER, READER, keys, scale, still_answers};
use crate::common::root;
use crate::http::{Live, Resp, assert_error_shape, call};
use serde_json::{Value, json};
use std::sync::Arc;
use toolgraph::server::ServeOptions;

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

/// Numbers a careless handler turns into a crash or an infinity.
const NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1e308",
    "-1e308",
    "1e999",
    "18446744073709551615",
    "18446744073709551616",
    "1000000000000",
    "9223372036854775807",
    "-9223372036854775809",
    "0.5",
    "3",
    "100",
    "101",
    "1e-320",
];

fn string(rng: &mut Rng) -> String {
    match rng.below(9) {
        0 => String::new(),
        1 => "x".repeat(70_000),
        2 => "../../../../etc/passwd".into(),
        3 => "\u{0}\u{7}\u{202e}\u{feff}".into(),
        4 => "acme".into(),
        5 => "https://toolgraph.dev/tool/flight_checkin".into(),
        6 => "Then book it. ".repeat(3_000),
        7 => "SELECT * WHERE { ?s ?p ?o } LIMIT 1".into(),
        _ => "book a flight to Denver tomorrow".into(),
    }
}

fn value(rng: &mut Rng, depth: usize) -> Value {
    match rng.below(if depth > 3 { 5 } else { 8 }) {
        0 => Value::Null,
        1 => json!(rng.below(2) == 0),
        2 => serde_json::from_str(rng.pick::<&str>(NUMBERS)).unwrap_or(Value::Null),
        3 | 4 => json!(string(rng)),
        5 => Value::Array((0..rng.below(4)).map(|_| value(rng, depth + 1)).collect()),
        6 => {
            let mut nested = json!(1);
            for _ in 0..rng.below(300) {
                nested = json!([nested]);
            }
            nested
        }
        _ => object(rng, &["text", "tool", "caller", "x"], depth + 1),
    }
}

fn object(rng: &mut Rng, fields: &[&str], depth: usize) -> Value {
    let mut m = serde_json::Map::new();
    for _ in 0..rng.below(fields.len() + 2) {
        let k = if fields.is_empty() || rng.below(8) == 0 {
            "unknown_field".to_string()
        } else {
            rng.pick(fields).to_string()
        };
        let v = match k.as_str() {
            "caller" if rng.below(2) == 0 => {
                json!({"org": string(rng), "agent": string(rng), "session": string(rng)})
            }
            _ => value(rng, depth),
        };
        m.insert(k, v);
    }
    Value::Object(m)
}

/// A body: JSON of the route's fields, or something that is not JSON.
fn body(rng: &mut Rng, fields: &[&str]) -> (String, &'static str) {
    match rng.below(10) {
        0 => ("{\"text\": ".into(), "application/json"),
        1 => ("text=hello".into(), "application/x-www-form-urlencoded"),
        2 => (String::new(), "application/json"),
        3 => ("@prefix x: <y> .\nx:a x:b \"c".into(), "text/turtle"),
        _ => (object(rng, fields, 0).to_string(), "application/json"),
    }
}

/// A path with its parameters filled in (or broken).
fn path(rng: &mut Rng, template: &str) -> String {
    let mut out = String::new();
    for part in template.split('/').filter(|p| !p.is_empty()) {
        out.push('/');
        if part.starts_with('{') {
            out.push_str(rng.pick::<&str>(&[
                "flight_search",
                "flight_checkin",
                "nope",
                "%2e%2e%2f%2e%2e",
                "%00",
                "src-0000",
                "a%20b",
            ]));
        } else {
            out.push_str(part);
        }
    }
    if rng.below(3) == 0 {
        let q = *rng.pick(&[
            "limit=1000000000000",
            "limit=-1",
            "offset=18446744073709551616",
            "org=acme&org=corner_cafe",
            "agent=acme_support",
            "status=nonsense",
            "tool=flight_checkin",
            "x=%ff%fe",
        ]);
        out.push('?');
        out.push_str(q);
    }
    out
}

/// Every (method, path template, request fields) of the OpenAPI document.
fn routes(doc: &Value) -> Vec<(String, String, Vec<String>)> {
    let mut out = Vec::new();
    let schemas = &doc["components"]["schemas"];
    for (p, ops) in doc["paths"].as_object().unwrap() {
        for (method, op) in ops.as_object().unwrap() {
            let schema = &op["requestBody"]["content"]["application/json"]["schema"];
            let schema = match schema["$ref"].as_str() {
                Some(r) => &schemas[r.rsplit('/').next().unwrap()],
                None => schema,
            };
            let fields = schema["properties"]
                .as_object()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
            out.push((method.to_uppercase(), p.clone(), fields));
        }
    }
    out
}

fn check(r: &Resp, what: &str) {
    assert!(r.status != 500, "{what}: 500 {}", r.body);
    assert!(!r.body.contains("panicked"), "{what}: {}", r.body);
    if r.status >= 400 {
        assert_error_shape(r);
        if r.status >= 500 {
            let code = r.json()["error"]["code"].as_str().unwrap_or("").to_string();
            assert!(
                ["unavailable", "timeout"].contains(&code.as_str()),
                "{what}: {} {}",
                r.status,
                r.body
            );
        }
    }
}

#[test]
fn random_requests_to_every_route_never_crash_or_break_the_error_shape() {
    // Its own engine: admin requests here register, delete and reload.
    let engine =
        toolgraph::Engine::open(toolgraph::EngineOptions::memory(toolgraph::Embeddings::Off))
            .unwrap();
    engine
        .load_paths(&[root().join("ontology"), root().join("seeds")], None)
        .unwrap();
    let live = Live::start(
        Arc::new(engine),
        ServeOptions {
            keys: keys(),
            ..ServeOptions::default()
        },
    );
    let doc = crate::http::get(live.addr, "/openapi.json", None).json();
    let routes = routes(&doc);
    assert!(routes.len() > 20, "{} routes", routes.len());
    let mut rng = Rng(0x005E_ED0F_7001_6A7E);
    let rounds = 1_500 * scale();
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    for i in 0..rounds {
        let (method, template, fields) = rng.pick(&routes).clone();
        let fields: Vec<&str> = fields.iter().map(String::as_str).collect();
        let key = *rng.pick(&[Some(ADMIN), Some(READER), Some(CAFE), Some(DRAFTER), None]);
        let (b, ctype) = body(&mut rng, &fields);
        let p = path(&mut rng, &template);
        let auth = key.map(|k| format!("Bearer {k}"));
        let mut h: Vec<(&str, &str)> = vec![("Content-Type", ctype)];
        if let Some(a) = &auth {
            h.push(("Authorization", a));
        }
        let r = call(live.addr, &method, &p, &h, b.as_bytes());
        check(&r, &format!("#{i} {method} {p} {}", &b[..b.len().min(200)]));
        *statuses.entry(r.status).or_default() += 1;
    }
    // The MCP endpoint: random JSON-RPC, some of it not JSON at all.
    for i in 0..300 * scale() {
        let message = match rng.below(4) {
            0 => "{not json".to_string(),
            1 => json!({"jsonrpc": "2.0", "id": i, "method": string(&mut rng), "params": value(&mut rng, 0)}).to_string(),
            2 => json!([{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}]).to_string(),
            _ => value(&mut rng, 0).to_string(),
        };
        let auth = format!("Bearer {}", rng.pick(&[ADMIN, READER, CAFE]));
        let r = call(
            live.addr,
            "POST",
            "/mcp",
            &[
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
                ("Authorization", &auth),
            ],
            message.as_bytes(),
        );
        assert!(
            r.status != 500 && r.status != 415,
            "MCP #{i}: {} {}",
            r.status,
            r.body
        );
    }
    still_answers(&live);
    eprintln!(
        "fuzz: {rounds} requests over {} routes: {statuses:?}",
        routes.len()
    );
}
