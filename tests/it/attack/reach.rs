//! Hostile sources: what the airlock is asked to fetch. With no allowance
//! and a source root, every private address (the cloud's metadata, the
//! server itself, addresses in disguise), credentials in a URL, and every
//! file outside the root (`/proc/self/environ`, the keys file, `../`, a
//! symbolic link out of a folder) is refused, naming the field; a name that
//! resolves to loopback is refused when the scan connects.

use super::{ADMIN, keys, with_key};
use crate::common::root;
use crate::http::{Live, assert_error_shape};
use serde_json::json;
use std::sync::Arc;
use toolgraph::airlock::AirlockOptions;
use toolgraph::airlock::reach::Reach;
use toolgraph::server::ServeOptions;
use toolgraph::{Embeddings, Engine, EngineOptions};

fn add(live: &Live, body: serde_json::Value) -> crate::http::Resp {
    with_key(live, "POST", "/v1/sources", Some(ADMIN), &body.to_string())
}

/// A server whose airlock allows nothing private and reads files under
/// `sources` only.
fn server(sources: &std::path::Path) -> Live {
    let engine = Engine::open(EngineOptions::memory(Embeddings::Off)).unwrap();
    engine.load_paths(&[root().join("ontology")], None).unwrap();
    Live::start(
        Arc::new(engine),
        ServeOptions {
            keys: keys(),
            airlock: AirlockOptions {
                reach: Reach {
                    allow: Vec::new(),
                    source_root: Some(sources.to_path_buf()),
                },
                ..AirlockOptions::default()
            },
            ..ServeOptions::default()
        },
    )
}

fn scan(live: &Live, body: serde_json::Value) -> crate::http::Resp {
    let r = add(live, body);
    assert_eq!(r.status, 201, "{}", r.body);
    let id = r.json()["id"].as_str().unwrap().to_string();
    with_key(
        live,
        "POST",
        &format!("/v1/sources/{id}/scan"),
        Some(ADMIN),
        "",
    )
}

#[test]
fn the_airlock_reaches_only_what_the_operator_allows() {
    let dir = tempfile::tempdir().unwrap();
    let sources = dir.path().join("sources");
    std::fs::create_dir_all(sources.join("manifests")).unwrap();
    std::fs::write(sources.join("manifests/ok.json"), r#"{"tools": []}"#).unwrap();
    let secret = dir.path().join("keys.json");
    std::fs::write(
        &secret,
        r#"[{"key": "top-secret-key-0123456789", "role": "admin"}]"#,
    )
    .unwrap();
    std::fs::copy(
        root().join("tests/fixtures/openapi/travel.yaml"),
        sources.join("travel.yaml"),
    )
    .unwrap();
    let live = server(&sources);
    let own = format!("http://{}/v1/tools", live.addr);
    for location in [
        "http://169.254.169.254/latest/meta-data/",
        own.as_str(),
        "http://0x7f000001/openapi.json",
        "http://2130706433/openapi.json",
        "http://127.1/openapi.json",
        "http://[::ffff:127.0.0.1]/openapi.json",
        "http://10.0.0.8/openapi.json",
        "http://user:pass@api.example.com/openapi.json",
        "/proc/self/environ",
        secret.to_str().unwrap(),
        "../keys.json",
        "manifests/../../keys.json",
    ] {
        let r = add(&live, json!({"kind": "openapi", "location": location}));
        assert_eq!(r.status, 400, "{location}: {}", r.body);
        let e = assert_error_shape(&r);
        assert_eq!(e["error"]["field"], "location", "{location}: {}", r.body);
        assert!(!r.body.contains("top-secret"), "{}", r.body);
    }
    // An MCP source and a health check at the metadata address.
    let r = add(
        &live,
        json!({"kind": "mcp", "location": "http://169.254.169.254/mcp"}),
    );
    assert_eq!(r.status, 400, "{}", r.body);
    let r = add(
        &live,
        json!({"kind": "openapi", "location": "travel.yaml", "health_url": "http://169.254.169.254/"}),
    );
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.json()["error"]["field"], "health_url", "{}", r.body);
    // A folder whose manifest links out of the root.
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&secret, sources.join("manifests/leak.json")).unwrap();
        let r = scan(&live, json!({"kind": "directory", "location": "manifests"}));
        assert_eq!(r.status, 400, "{}", r.body);
        assert!(
            r.body.contains("links out of the source root"),
            "{}",
            r.body
        );
        assert!(!r.body.contains("top-secret"), "{}", r.body);
    }
    // A name is checked where the scan connects: `localhost` is loopback.
    let location = format!("http://localhost:{}/openapi.json", live.addr.port());
    let r = scan(&live, json!({"kind": "openapi", "location": location}));
    assert_eq!(r.status, 503, "{}", r.body);
    assert!(
        r.body.contains("loopback") && r.body.contains("refused"),
        "{}",
        r.body
    );
    let pending = with_key(&live, "GET", "/v1/pending", Some(ADMIN), "").json();
    assert_eq!(
        pending,
        json!([]),
        "the server's own API became pending items"
    );
    // A file under the root is fine.
    let r = add(&live, json!({"kind": "openapi", "location": "travel.yaml"}));
    assert_eq!(r.status, 201, "{}", r.body);
}
