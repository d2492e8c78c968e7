//! Liveness, readiness and the Prometheus scrape: no key needed.

use super::Shared;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};

/// Readiness details.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Ready {
    pub ready: bool,
    /// Tools in the catalog.
    pub tools: usize,
    /// The embedding model is loaded (or the dense channel is off by choice).
    pub model: bool,
    /// The model the vectors were built with, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_id: Option<String>,
}

pub(crate) fn routes(state: Shared) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(scrape))
        .with_state(state)
}

/// Alive: the process answers.
#[utoipa::path(get, path = "/healthz", tag = "ops", responses((status = 200, description = "alive", body = String)))]
pub(crate) async fn healthz() -> &'static str {
    "ok"
}

/// Ready: the catalog is loaded and the model is ready.
#[utoipa::path(get, path = "/readyz", tag = "ops", responses(
    (status = 200, description = "ready", body = Ready),
    (status = 503, description = "not ready yet", body = Ready)))]
pub(crate) async fn readyz(State(s): State<Shared>) -> impl IntoResponse {
    let tools = s.engine.catalog_size();
    let sync = s.engine.last_sync();
    let ready = Ready {
        ready: tools > 0,
        tools,
        model: true,
        model_id: sync.map(|r| r.model_id),
    };
    let status = if ready.ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, Json(ready))
}

/// Prometheus metrics (OpenMetrics text).
#[utoipa::path(get, path = "/metrics", tag = "ops", responses((status = 200, description = "OpenMetrics text format", body = String, content_type = "application/openmetrics-text")))]
pub(crate) async fn scrape(State(s): State<Shared>) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        s.metrics.render(),
    )
}
