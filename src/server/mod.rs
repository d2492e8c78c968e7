//! HTTP API (axum): the async shell around the sync engine. Engine calls
//! run on the blocking pool; error statuses come from one table
//! ([`error`]); 5xx details are logged, not sent.

mod error;

use crate::engine::{Engine, Resolution, ResolveRequest, SearchRequest, SearchResponse};
use crate::error::Error;
use crate::model::Tool;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use std::sync::Arc;

struct ApiError(Error);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, _code) = error::status_and_code(&self.0);
        let message = if status.is_server_error() {
            tracing::error!("internal error: {}", self.0);
            "internal error".to_string()
        } else {
            self.0.to_string()
        };
        (status, Json(serde_json::json!({ "error": message }))).into_response()
    }
}

type Shared = Arc<Engine>;

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> crate::error::Result<T> + Send + 'static,
) -> Result<T, ApiError> {
    match tokio::task::spawn_blocking(f).await {
        Ok(r) => r.map_err(ApiError),
        Err(e) => Err(ApiError(Error::Store(format!("worker failed: {e}")))),
    }
}

async fn health(State(engine): State<Shared>) -> Json<serde_json::Value> {
    let tools = engine.tools().len();
    Json(serde_json::json!({ "status": "ok", "tools": tools, "index": engine.last_sync() }))
}

async fn tools(State(engine): State<Shared>) -> Json<Vec<Tool>> {
    Json(engine.tools())
}

async fn tool(
    State(engine): State<Shared>,
    Path(name): Path<String>,
) -> Result<Json<Tool>, ApiError> {
    engine
        .tool(&name)
        .map(Json)
        .ok_or_else(|| ApiError(Error::invalid(format!("no tool named `{name}`"))))
}

async fn search(
    State(engine): State<Shared>,
    Json(req): Json<SearchRequest>,
) -> Result<Json<SearchResponse>, ApiError> {
    blocking(move || engine.search(&req)).await.map(Json)
}

async fn resolve(
    State(engine): State<Shared>,
    Json(req): Json<ResolveRequest>,
) -> Result<Json<Resolution>, ApiError> {
    blocking(move || engine.resolve(&req)).await.map(Json)
}

/// The routes, for tests and embedding in another server.
pub fn router(engine: Arc<Engine>) -> Router {
    Router::new()
        .route("/health", get(health))
        .route("/tools", get(tools))
        .route("/tools/{name}", get(tool))
        .route("/search", post(search))
        .route("/resolve", post(resolve))
        .with_state(engine)
}

/// Serves the API on `addr` until Ctrl-C.
pub fn serve(engine: Engine, addr: &str) -> crate::error::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Unavailable(format!("cannot start the runtime: {e}")))?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| Error::invalid(format!("cannot listen on {addr}: {e}")))?;
        eprintln!("toolgraph serving on http://{addr} (POST /search, POST /resolve, GET /tools, GET /health)");
        axum::serve(listener, router(Arc::new(engine)))
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await
            .map_err(|e| Error::Unavailable(format!("server failed: {e}")))
    })
}
