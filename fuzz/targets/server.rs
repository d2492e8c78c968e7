//! One server in process for the request targets: the seeded catalog (no
//! embeddings), open (no keys), driven through the router itself on a
//! current-thread runtime: the extractors, the middleware and the error
//! shape, without sockets.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use tower::ServiceExt;

/// The repository (the fuzz crate sits one folder below it).
fn repo() -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    if here.join("seeds").is_dir() {
        here
    } else {
        here.join("..")
    }
}

struct Server {
    runtime: tokio::runtime::Runtime,
    app: axum::Router,
}

fn server() -> &'static Server {
    static S: OnceLock<Server> = OnceLock::new();
    S.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let engine =
            toolgraph::Engine::open(toolgraph::EngineOptions::memory(toolgraph::Embeddings::Off))
                .expect("an engine");
        engine
            .load_paths(&[repo().join("ontology"), repo().join("seeds")], None)
            .expect("the seeds load");
        let app = {
            let _rt = runtime.enter();
            toolgraph::server::router(Arc::new(engine), toolgraph::server::ServeOptions::default())
                .expect("a router")
        };
        Server { runtime, app }
    })
}

/// Sends one request; the status and the body.
pub fn send(method: &str, path: &str, headers: &[(&str, &str)], body: Vec<u8>) -> (u16, Vec<u8>) {
    let s = server();
    let Ok(method) = axum::http::Method::from_bytes(method.as_bytes()) else {
        return (0, Vec::new());
    };
    let mut req = axum::http::Request::builder()
        .method(method)
        .uri(path)
        .header("host", "127.0.0.1");
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let Ok(req) = req.body(axum::body::Body::from(body)) else {
        return (0, Vec::new());
    };
    s.runtime.block_on(async {
        let resp = s
            .app
            .clone()
            .oneshot(req)
            .await
            .expect("the router never fails");
        let status = resp.status().as_u16();
        let bytes = axum::body::to_bytes(resp.into_body(), 64 << 20)
            .await
            .map(|b| b.to_vec())
            .unwrap_or_default();
        (status, bytes)
    })
}

/// What every answer must be: no 500, no panic text, an error in the one
/// JSON shape.
pub fn check(status: u16, body: &[u8], what: &str) {
    assert_ne!(status, 500, "{what}: {}", String::from_utf8_lossy(body));
    let text = String::from_utf8_lossy(body);
    assert!(!text.contains("panicked"), "{what}: {text}");
    if status >= 400 && !what.starts_with("mcp") {
        let v: serde_json::Value = serde_json::from_slice(body)
            .unwrap_or_else(|e| panic!("{what}: {status} not JSON ({e}): {text}"));
        assert!(v["error"]["code"].is_string(), "{what}: {text}");
    }
}
