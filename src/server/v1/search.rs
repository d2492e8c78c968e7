//! Ranking for planners: search, resolve, select, and failures reported
//! back into the session.

use crate::engine::{Resolution, ResolveRequest, SearchRequest, SearchResponse, SelectRequest};
use crate::select::Selection;
use crate::server::error::{ApiError, ErrorBody, Json};
use crate::server::{Principal, Shared, blocking};
use axum::Extension;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};

/// Rank the tools the caller may see for a request.
#[utoipa::path(post, path = "/v1/search", tag = "ranking", request_body = SearchRequest,
    responses(
        (status = 200, description = "ranked tools, best first", body = SearchResponse),
        (status = 400, description = "a malformed request, naming the field", body = ErrorBody),
        (status = 401, description = "no or unknown key", body = ErrorBody),
        (status = 403, description = "the key cannot act as this caller", body = ErrorBody),
        (status = 413, description = "body too large", body = ErrorBody),
        (status = 415, description = "not JSON", body = ErrorBody),
        (status = 429, description = "over the concurrency limit and queue", body = ErrorBody),
        (status = 504, description = "over the time limit", body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn search(
    State(s): State<Shared>,
    Extension(p): Extension<Principal>,
    Json(mut req): Json<SearchRequest>,
) -> Result<axum::Json<SearchResponse>, ApiError> {
    req.caller = p.caller(req.caller)?;
    blocking(move || s.engine.search(&req))
        .await
        .map(axum::Json)
}

/// Substitute a catalog tool for a planner verb, or advise decomposition.
#[utoipa::path(post, path = "/v1/resolve", tag = "ranking", request_body = ResolveRequest,
    responses(
        (status = 200, description = "substitute or decompose", body = Resolution),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody), (status = 429, body = ErrorBody),
        (status = 504, body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn resolve(
    State(s): State<Shared>,
    Extension(p): Extension<Principal>,
    Json(mut req): Json<ResolveRequest>,
) -> Result<axum::Json<Resolution>, ApiError> {
    req.caller = p.caller(req.caller)?;
    blocking(move || s.airlock.resolve(&req))
        .await
        .map(axum::Json)
}

/// Choose the tools for one conversation turn.
#[utoipa::path(post, path = "/v1/select", tag = "ranking", request_body = SelectRequest,
    responses(
        (status = 200, description = "the turn's tools", body = Selection),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody), (status = 429, body = ErrorBody),
        (status = 504, body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn select(
    State(s): State<Shared>,
    Extension(p): Extension<Principal>,
    Json(mut req): Json<SelectRequest>,
) -> Result<axum::Json<Selection>, ApiError> {
    req.caller = p.caller(req.caller)?;
    blocking(move || s.engine.select(&req))
        .await
        .map(axum::Json)
}

/// A tool call that failed in a conversation: the tool is hidden for the
/// rest of it.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FailureReport {
    pub tool: String,
    #[serde(default)]
    pub reason: String,
}

/// Report a failed tool call: hidden for the rest of the session.
#[utoipa::path(post, path = "/v1/sessions/{id}/failures", tag = "ranking", request_body = FailureReport,
    params(("id" = String, Path, description = "the session")),
    responses(
        (status = 204, description = "recorded"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 413, body = ErrorBody),
        (status = 415, body = ErrorBody), (status = 429, body = ErrorBody), (status = 504, body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn failure(
    State(s): State<Shared>,
    Path(id): Path<String>,
    Json(report): Json<FailureReport>,
) -> Result<StatusCode, ApiError> {
    if report.tool.trim().is_empty() {
        return Err(ApiError::bad_request("name the tool that failed").field("tool"));
    }
    let reason = if report.reason.trim().is_empty() {
        "reported as failed".to_string()
    } else {
        report.reason
    };
    s.engine.session_failed(&id, &report.tool, &reason);
    Ok(StatusCode::NO_CONTENT)
}
