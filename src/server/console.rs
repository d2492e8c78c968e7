//! The operator console: a dependency-free page served at `/`, its script,
//! style and icon embedded in the binary. It speaks only the `/v1` API with
//! the key the operator types in, so it can do exactly what that key can.
//!
//! The assets are public (they hold no data); a strict Content-Security-Policy
//! keeps the page to its own origin: no inline script, no other host.

use axum::Router;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use sha2::{Digest, Sha256};
use std::sync::OnceLock;

/// What the page may load and talk to: its own origin, nothing else.
pub(crate) const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

struct Asset {
    path: &'static str,
    content_type: &'static str,
    body: &'static str,
}

const ASSETS: &[Asset] = &[
    Asset {
        path: "/",
        content_type: "text/html; charset=utf-8",
        body: include_str!("console/index.html"),
    },
    Asset {
        path: "/console/app.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_str!("console/app.js"),
    },
    Asset {
        path: "/console/app.css",
        content_type: "text/css; charset=utf-8",
        body: include_str!("console/app.css"),
    },
    Asset {
        path: "/console/icon.svg",
        content_type: "image/svg+xml",
        body: include_str!("console/icon.svg"),
    },
];

/// Strong validators, computed once: the assets only change with the binary.
fn etags() -> &'static [String] {
    static TAGS: OnceLock<Vec<String>> = OnceLock::new();
    TAGS.get_or_init(|| {
        ASSETS
            .iter()
            .map(|a| {
                let digest = Sha256::digest(a.body.as_bytes());
                let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
                format!("\"{hex}\"")
            })
            .collect()
    })
}

fn serve(i: usize, headers: &HeaderMap) -> Response {
    let asset = &ASSETS[i];
    let tag = &etags()[i];
    let fresh = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == tag));
    let mut resp = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        ([(header::CONTENT_TYPE, asset.content_type)], asset.body).into_response()
    };
    let h = resp.headers_mut();
    if let Ok(v) = HeaderValue::from_str(tag) {
        h.insert(header::ETAG, v);
    }
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    resp
}

/// `GET /` and `GET /console/*`: the page and its assets (no key needed).
pub(crate) fn routes() -> Router {
    let mut router = Router::new();
    for (i, asset) in ASSETS.iter().enumerate() {
        router = router.route(
            asset.path,
            get(move |headers: HeaderMap| async move { serve(i, &headers) }),
        );
    }
    // Browsers ask for /favicon.ico whatever the page says: the same icon.
    let icon = ASSETS
        .iter()
        .position(|a| a.path == "/console/icon.svg")
        .unwrap_or(0);
    router.route(
        "/favicon.ico",
        get(move |headers: HeaderMap| async move { serve(icon, &headers) }),
    )
}
