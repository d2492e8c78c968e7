//! The HTTP API over a real socket on loopback: the `/v1` routes, keys and
//! roles, limits, the one error shape, registration, reload, metrics.

use crate::common::root;
use crate::http::{Live, assert_error_shape, call, get, post_json};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use toolgraph::server::{KeyEntry, Keys, Limits, Role, ServeOptions};
use toolgraph::{Embeddings, Engine, EngineOptions};

const ADMIN: &str = "admin-key-for-tests-0123456789";
const CAFE: &str = "reader-key-corner-cafe-0123456789";
const SUPPORT: &str = "reader-key-acme-support-0123456789";
const READER: &str = "reader-key-unbound-0123456789";

fn keys() -> Keys {
    let entry = |key: &str, role, org: Option<&str>, agent: Option<&str>| KeyEntry {
        key: key.into(),
        role,
        org: org.map(str::to_string),
        agent: agent.map(str::to_string),
        name: None,
    };
    Keys::from_entries(vec![
        entry(ADMIN, Role::Admin, None, None),
        entry(CAFE, Role::Reader, Some("corner_cafe"), None),
        entry(SUPPORT, Role::Reader, None, Some("acme_support")),
        entry(READER, Role::Reader, None, None),
    ])
}

fn seeded(embeddings: Embeddings) -> Engine {
    let engine = Engine::open(EngineOptions::memory(embeddings)).unwrap();
    engine
        .load_paths(&[root().join("ontology"), root().join("seeds")], None)
        .unwrap();
    engine
}

/// A keyed server over the seeds with the real model, shared by the tests.
fn live() -> &'static Live {
    static L: OnceLock<Live> = OnceLock::new();
    L.get_or_init(|| {
        let engine = seeded(Embeddings::Model(toolgraph::embed::default_model_dir()));
        Live::start(
            Arc::new(engine),
            ServeOptions {
                keys: keys(),
                ..ServeOptions::default()
            },
        )
    })
}

#[test]
fn the_v1_routes_answer_planners() {
    let a = live().addr;
    let r = post_json(
        a,
        "/v1/search",
        Some(READER),
        r#"{"text": "a table for two at an Italian restaurant tonight", "limit": 3}"#,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let v = r.json();
    assert_eq!(v["matches"][0]["tool"], "restaurant_table_reserve");
    assert!(
        !v["matches"][0]["details"]["paths"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert!(r.header("x-request-id").is_some());
    let r = post_json(
        a,
        "/v1/search",
        Some(READER),
        r#"{"text": "a table for two at an Italian restaurant", "explain": false}"#,
    );
    assert!(
        r.json()["matches"][0]["details"]["paths"]
            .as_array()
            .unwrap()
            .is_empty()
    );

    let r = post_json(
        a,
        "/v1/resolve",
        Some(READER),
        r#"{"verb": "CONVERT_CURRENCY", "context": "100 USD to EUR"}"#,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["decision"], "substitute");

    let r = post_json(
        a,
        "/v1/select",
        Some(READER),
        r#"{"session": "http-1", "message": "Add a reminder for tomorrow"}"#,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["domains"][0], "reminders");
    the_catalog_routes_answer(a);
    the_ops_routes_answer(a);
}

/// Listings, one tool, domains, a session failure.
fn the_catalog_routes_answer(a: std::net::SocketAddr) {
    let page = get(a, "/v1/tools?limit=5&offset=10", Some(READER)).json();
    assert_eq!(page["tools"].as_array().unwrap().len(), 5);
    assert_eq!(page["total"], 181);
    assert_eq!(page["offset"], 10);
    let r = get(a, "/v1/tools/airline_seat_reserve", Some(READER));
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["name"], "airline_seat_reserve");
    assert!(r.json()["verbs"].as_array().is_some(), "the constellation");
    let r = get(a, "/v1/tools/nope", Some(READER));
    assert_eq!(r.status, 404);
    assert_eq!(assert_error_shape(&r)["error"]["code"], "tool_not_found");
    let d = get(a, "/v1/domains?org=acme", Some(READER)).json();
    assert!(
        d.as_array()
            .unwrap()
            .iter()
            .any(|x| x["domain"] == "travel")
    );
    let r = post_json(
        a,
        "/v1/prompt",
        Some(READER),
        r#"{"text": "book the technician for Tuesday", "limit": 3, "context": "Customer: Jane Roe", "caller": {"goal": "BOOK_APPOINTMENT"}}"#,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let prompt = r.json()["prompt"].as_str().unwrap().to_string();
    assert!(
        prompt.starts_with("You are executing goal: BOOK_APPOINTMENT"),
        "{prompt}"
    );
    assert!(
        prompt.contains("Available tools for this goal:"),
        "{prompt}"
    );
    assert!(prompt.contains("Customer: Jane Roe"), "{prompt}");
    let g = get(a, "/v1/goals?org=acme", Some(READER));
    assert_eq!(g.status, 200, "{}", g.body);
    let goals = g.json();
    assert_eq!(goals[0]["goal"], "UNDERSTAND_REQUEST", "{}", g.body);
    assert!(goals.as_array().unwrap().len() >= 10, "{}", g.body);

    let r = post_json(
        a,
        "/v1/sessions/http-2/failures",
        Some(READER),
        r#"{"tool": "send_sms", "reason": "gateway down"}"#,
    );
    assert_eq!(r.status, 204, "{}", r.body);
    let r = get(a, "/v1/tools/send_sms?session=http-2", Some(READER));
    assert_eq!(r.status, 404, "failed tools are hidden for the session");
}

/// Health, readiness, metrics, the OpenAPI document.
fn the_ops_routes_answer(a: std::net::SocketAddr) {
    assert_eq!(get(a, "/healthz", None).status, 200);
    let ready = get(a, "/readyz", None);
    assert_eq!(ready.status, 200);
    assert_eq!(ready.json()["tools"], 181);
    let m = get(a, "/metrics", None).body;
    assert!(
        m.contains("toolgraph_requests_total{method=\"POST\",route=\"/v1/search\",status=\"200\"}"),
        "{m}"
    );
    assert!(m.contains("toolgraph_catalog_tools 181"), "{m}");
    assert!(
        m.contains("toolgraph_stage_duration_seconds_count{stage=\"graph\"}"),
        "{m}"
    );
    assert!(m.contains("stage=\"scope\""), "{m}");
    let doc = get(a, "/openapi.json", None).json();
    for path in [
        "/v1/search",
        "/v1/resolve",
        "/v1/select",
        "/v1/tools",
        "/v1/tools/{name}",
        "/v1/reload",
        "/v1/sparql",
    ] {
        assert!(
            doc["paths"][path].is_object(),
            "{path} missing from the OpenAPI document"
        );
    }
}

#[test]
fn every_4xx_has_the_one_error_shape_naming_the_place() {
    let a = live().addr;
    let r = post_json(a, "/v1/search", Some(READER), r#"{"txet": "book a table"}"#);
    assert_eq!(r.status, 400);
    let v = assert_error_shape(&r);
    assert_eq!(v["error"]["field"], "txet", "{}", r.body);
    let r = post_json(a, "/v1/search", Some(READER), "{}");
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(assert_error_shape(&r)["error"]["field"], "text");
    let r = post_json(
        a,
        "/v1/search",
        Some(READER),
        "{\"text\": \"a\",\n \"limit\": }",
    );
    assert_eq!(r.status, 400);
    let m = assert_error_shape(&r)["error"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(m.contains("line 2 column"), "{m}");
    let r = post_json(
        a,
        "/v1/search",
        Some(READER),
        r#"{"text": "a", "limit": "ten"}"#,
    );
    assert_eq!(assert_error_shape(&r)["error"]["field"], "limit");
    assert_eq!(
        assert_error_shape(&r)["error"]["code"],
        "invalid_search_limit"
    );
    let r = post_json(
        a,
        "/v1/search",
        Some(READER),
        r#"{"text": "a", "limit": 1000000000000, "dependencies": true}"#,
    );
    assert_eq!(r.status, 400, "one maximum for every transport");
    assert_eq!(
        assert_error_shape(&r)["error"]["code"],
        "invalid_search_limit"
    );
    let r = post_json(
        a,
        "/v1/search",
        Some(READER),
        r#"{"text": "a", "caller": {"orgg": "x"}}"#,
    );
    assert_eq!(r.status, 400);
    assert_eq!(assert_error_shape(&r)["error"]["field"], "caller.orgg");
    assert_eq!(assert_error_shape(&r)["error"]["code"], "unknown_field");
    let r = post_json(
        a,
        "/v1/search",
        Some(READER),
        r#"{"text": "a", "caller": {"org": "nope"}}"#,
    );
    assert_eq!(assert_error_shape(&r)["error"]["field"], "caller.org");
    assert_eq!(
        assert_error_shape(&r)["error"]["code"],
        "invalid_caller_org"
    );
    let r = call(
        a,
        "POST",
        "/v1/search",
        &[
            ("Content-Type", "text/plain"),
            ("Authorization", &format!("Bearer {READER}")),
        ],
        b"text",
    );
    assert_eq!(r.status, 415);
    assert_error_shape(&r);
    let big = format!(r#"{{"text": "{}"}}"#, "x".repeat(2 << 20));
    let r = post_json(a, "/v1/search", Some(READER), &big);
    assert_eq!(r.status, 413);
    assert_eq!(assert_error_shape(&r)["error"]["code"], "payload_too_large");
    let r = get(a, "/v1/search", Some(READER));
    assert_eq!(r.status, 405);
    assert_error_shape(&r);
    let r = get(a, "/v2/nothing", Some(READER));
    assert_eq!(r.status, 404);
    assert_error_shape(&r);
    let r = get(a, "/v1/tools?limitt=3", Some(READER));
    assert_eq!(assert_error_shape(&r)["error"]["field"], "limitt");
}

#[test]
fn keys_and_roles_decide_who_may_do_what() {
    let a = live().addr;
    let r = post_json(a, "/v1/search", None, r#"{"text": "book a table"}"#);
    assert_eq!(r.status, 401);
    assert_eq!(r.header("www-authenticate"), Some("Bearer"));
    assert_error_shape(&r);
    assert_eq!(
        post_json(
            a,
            "/v1/search",
            Some("wrong-key-000000000000"),
            r#"{"text": "x"}"#
        )
        .status,
        401
    );
    // Admin routes: 401 without a key, 403 with a reader key.
    assert_eq!(post_json(a, "/v1/reload", None, "").status, 401);
    let r = post_json(a, "/v1/reload", Some(READER), "");
    assert_eq!(r.status, 403);
    assert_error_shape(&r);
    assert_eq!(
        post_json(a, "/v1/sparql", Some(CAFE), r#"{"query": "ASK {}"}"#).status,
        403
    );
    assert_eq!(get(a, "/v1/policy", Some(READER)).status, 403);
    // A key bound to an organization cannot act as another one.
    let r = post_json(
        a,
        "/v1/search",
        Some(CAFE),
        r#"{"text": "charge the card", "caller": {"org": "acme"}}"#,
    );
    assert_eq!(r.status, 403, "{}", r.body);
    assert_eq!(assert_error_shape(&r)["error"]["field"], "caller.org");
    // ... and what its policy denies is absent everywhere.
    let listed = get(a, "/v1/tools?limit=500", Some(CAFE)).json();
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(!names.contains(&"create_invoice_stripe"));
    assert!(names.len() < 181);
    assert_eq!(listed["total"].as_u64().unwrap() as usize, names.len());
    let r = post_json(
        a,
        "/v1/search",
        Some(CAFE),
        r#"{"text": "create an invoice with stripe", "limit": 20}"#,
    );
    assert!(!r.body.contains("create_invoice_stripe"), "{}", r.body);
    assert_eq!(
        get(a, "/v1/tools/create_invoice_stripe", Some(CAFE)).status,
        404
    );
    assert_eq!(
        get(a, "/v1/tools/create_invoice_stripe", Some(ADMIN)).status,
        200
    );
    // Admins see what the policy decides for anyone.
    let r = get(
        a,
        "/v1/policy/explain?tool=create_invoice_stripe&org=corner_cafe",
        Some(ADMIN),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["deciding"], "organization");
    let r = post_json(
        a,
        "/v1/sparql",
        Some(ADMIN),
        r#"{"query": "SELECT (COUNT(*) AS ?n) WHERE { ?t a <https://toolgraph.dev/ns#Tool> }"}"#,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body.contains("181"), "{}", r.body);
    let r = post_json(
        a,
        "/v1/sparql",
        Some(ADMIN),
        r#"{"query": "DELETE WHERE { ?s ?p ?o }"}"#,
    );
    assert_eq!(r.status, 400);
    assert_eq!(assert_error_shape(&r)["error"]["field"], "query");
}

#[test]
fn registration_removal_and_reload_are_all_or_nothing() {
    // Its own server: this test changes the catalog.
    let dir = tempfile::tempdir().unwrap();
    for sub in ["ontology", "seeds"] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        for f in std::fs::read_dir(root().join(sub)).unwrap() {
            let f = f.unwrap().path();
            std::fs::copy(&f, dir.path().join(sub).join(f.file_name().unwrap())).unwrap();
        }
    }
    let paths = vec![dir.path().join("ontology"), dir.path().join("seeds")];
    let engine = Engine::open(EngineOptions::memory(Embeddings::Off)).unwrap();
    engine.load_paths(&paths, None).unwrap();
    let live = Live::start(
        Arc::new(engine),
        ServeOptions {
            keys: keys(),
            reload: paths,
            ..ServeOptions::default()
        },
    );
    let a = live.addr;
    let n = registration_is_all_or_nothing(a);
    removal_refuses_prerequisites(a, n);
    reload_is_all_or_nothing(a, dir.path());
}

/// Registering a manifest, again, broken: all or nothing. Says how many
/// tools it registered.
fn registration_is_all_or_nothing(a: std::net::SocketAddr) -> u64 {
    let mcp = std::fs::read(root().join("tests/fixtures/mcp/tools_list.json")).unwrap();
    let admin = format!("Bearer {ADMIN}");
    let r = call(
        a,
        "POST",
        "/v1/tools?source=crm-mcp",
        &[
            ("Content-Type", "application/json"),
            ("Authorization", &admin),
        ],
        &mcp,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let reg = r.json();
    assert_eq!(reg["source"], "crm-mcp");
    let n = reg["tools"].as_u64().unwrap();
    assert!(n >= 3, "{}", r.body);
    assert_eq!(reg["store"]["tools"].as_u64().unwrap(), 181 + n);
    // The same manifest again: the same source, nothing new.
    let again = call(
        a,
        "POST",
        "/v1/tools?source=crm-mcp",
        &[
            ("Content-Type", "application/json"),
            ("Authorization", &admin),
        ],
        &mcp,
    )
    .json();
    assert_eq!(again["store"]["tools"], reg["store"]["tools"]);
    // A broken manifest changes nothing and says where.
    let r = call(
        a,
        "POST",
        "/v1/tools",
        &[
            ("Content-Type", "application/json"),
            ("Authorization", &admin),
        ],
        b"{\"tools\": [ {\"name\": 1} ]}",
    );
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body.contains("/tools/0"), "{}", r.body);
    let turtle = b"@prefix tg: <https://toolgraph.dev/ns#> .\n<urn:x> tg:name \"x\" \n<urn:y> .\n";
    let r = call(
        a,
        "POST",
        "/v1/tools?source=bad.ttl",
        &[("Content-Type", "text/turtle"), ("Authorization", &admin)],
        turtle,
    );
    assert_eq!(r.status, 400);
    assert!(r.body.contains("bad.ttl:3:"), "{}", r.body);
    let total = |a| {
        get(a, "/v1/tools?limit=1", Some(ADMIN)).json()["total"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(total(a), 181 + n);
    n
}

/// Remove one registered tool; a prerequisite of others is refused.
fn removal_refuses_prerequisites(a: std::net::SocketAddr, n: u64) {
    let admin = format!("Bearer {ADMIN}");
    let total = get(a, "/v1/tools?limit=1", Some(ADMIN)).json()["total"].as_u64();
    assert_eq!(total, Some(181 + n));
    // Remove one registered tool; a prerequisite of others is refused.
    let first = get(a, "/v1/tools?source=crm-mcp&limit=1", Some(ADMIN)).json()["tools"][0]["name"]
        .as_str()
        .unwrap()
        .to_string();
    let r = call(
        a,
        "DELETE",
        &format!("/v1/tools/{first}"),
        &[("Authorization", &admin)],
        b"",
    );
    assert_eq!(r.status, 204, "{}", r.body);
    assert_eq!(
        get(a, &format!("/v1/tools/{first}"), Some(ADMIN)).status,
        404
    );
    let r = call(
        a,
        "DELETE",
        "/v1/tools/contact_search",
        &[("Authorization", &admin)],
        b"",
    );
    assert_eq!(r.status, 409, "contact_update depends on it: {}", r.body);
    assert!(r.body.contains("contact_update"));
    assert_eq!(
        call(
            a,
            "DELETE",
            "/v1/tools/nope",
            &[("Authorization", &admin)],
            b""
        )
        .status,
        404
    );
}

/// Reload with a broken file: 400 with file:line:col, the old catalog
/// answers; fixed, and a seed file gone, it reloads; policy writes go
/// through the same validation.
fn reload_is_all_or_nothing(a: std::net::SocketAddr, dir: &std::path::Path) {
    let admin = format!("Bearer {ADMIN}");
    // Reload with a broken file: 400 with file:line:col, the old catalog answers.
    let travel = dir.join("seeds/travel.ttl");
    let good = std::fs::read_to_string(&travel).unwrap();
    std::fs::write(
        &travel,
        good.replacen(
            "tool:flight_search a tg:Tool ;",
            "tool:flight_search a tg:Tool ;;; ]",
            1,
        ),
    )
    .unwrap();
    let r = post_json(a, "/v1/reload", Some(ADMIN), "");
    assert_eq!(r.status, 400, "{}", r.body);
    let m = assert_error_shape(&r)["error"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        m.contains("travel.ttl:")
            && m.split("travel.ttl:")
                .nth(1)
                .unwrap()
                .split(':')
                .take(2)
                .all(|x| x.parse::<u32>().is_ok()),
        "{m}"
    );
    let r = post_json(
        a,
        "/v1/search",
        Some(READER),
        r#"{"text": "find a flight to Denver", "mode": "graph"}"#,
    );
    assert_eq!(r.status, 200);
    assert!(r.body.contains("flight_search"));
    // Fixed, and a seed file gone: the reload removes its tools.
    std::fs::write(&travel, good).unwrap();
    std::fs::remove_file(dir.join("seeds/health.ttl")).unwrap();
    let r = post_json(a, "/v1/reload", Some(ADMIN), "");
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(
        r.json()["removed"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s.as_str().unwrap().ends_with("health.ttl"))
    );
    assert_eq!(
        get(a, "/v1/tools/doctor_appointment_book", Some(ADMIN)).status,
        404
    );
    // Policy writes go through the same validation.
    let r = call(a, "PUT", "/v1/policy?source=extra-policy.ttl", &[("Content-Type", "text/turtle"), ("Authorization", &admin)],
        b"@prefix tg: <https://toolgraph.dev/ns#> .\n<https://toolgraph.dev/agent/lost> a tg:Agent .\n");
    assert_eq!(
        r.status, 400,
        "an agent without an organization: {}",
        r.body
    );
    assert!(r.body.contains("agent_policy"), "{}", r.body);
}

#[test]
fn limits_answer_429_and_504_in_the_error_shape() {
    let engine = Arc::new(seeded(Embeddings::Off));
    // A request that outlives the request time limit (a cross product the
    // SPARQL watchdog cancels a little later, so no thread stays busy).
    let slow = Live::start(
        engine.clone(),
        ServeOptions {
            limits: Limits {
                request_timeout: Duration::from_millis(200),
                sparql_timeout: Duration::from_secs(2),
                ..Limits::default()
            },
            ..ServeOptions::default()
        },
    );
    let r = post_json(
        slow.addr,
        "/v1/sparql",
        None,
        r#"{"query": "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"}"#,
    );
    assert_eq!(r.status, 504, "{}", r.body);
    assert_eq!(assert_error_shape(&r)["error"]["code"], "timeout");
    // One request at a time, no queue: a second one meanwhile is told to retry.
    let busy = Live::start(
        engine,
        ServeOptions {
            limits: Limits {
                max_in_flight: 1,
                max_queue: 0,
                sparql_timeout: Duration::from_secs(3),
                ..Limits::default()
            },
            ..ServeOptions::default()
        },
    );
    let a = busy.addr;
    let long = std::thread::spawn(move || {
        post_json(
            a,
            "/v1/sparql",
            None,
            r#"{"query": "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"}"#,
        )
    });
    std::thread::sleep(Duration::from_millis(400));
    let r = post_json(a, "/v1/search", None, r#"{"text": "reserve a table"}"#);
    assert_eq!(r.status, 429, "{}", r.body);
    assert_eq!(r.header("retry-after"), Some("1"));
    assert_error_shape(&r);
    let long = long.join().unwrap();
    assert_eq!(long.status, 504, "the SPARQL time limit: {}", long.body);
    assert!(long.body.contains("cancelled"), "{}", long.body);
}

#[test]
fn request_ids_are_a_clients_plain_token_or_ours() {
    let a = live().addr;
    let with = |id: &str| {
        let r = call(
            a,
            "GET",
            "/v1/me",
            &[
                ("authorization", &format!("Bearer {READER}")),
                ("x-request-id", id),
            ],
            b"",
        );
        r.header("x-request-id").unwrap_or_default().to_string()
    };
    assert_eq!(with("gateway-7f3a.1_b"), "gateway-7f3a.1_b");
    let long = "x".repeat(200);
    let replaced = with(&long);
    assert_eq!(replaced.len(), 16, "{replaced}");
    assert!(replaced.bytes().all(|b| b.is_ascii_hexdigit()));
    let r = post_json(
        a,
        "/v1/search",
        Some(READER),
        r#"{"text": "x", "limit": -1}"#,
    );
    let id = r.header("x-request-id").unwrap().to_string();
    assert_eq!(assert_error_shape(&r)["error"]["request_id"], id.as_str());
}
