//! The call path over HTTP: `POST /v1/call` (any key: the caller its key
//! stands for), the audit log `GET /v1/calls` and the usage view
//! `GET /v1/usage/tools` (admin), and held calls `GET /v1/approvals`
//! (an admin sees every one, a reader key its own) and their decisions
//! `POST /v1/approvals/{id}/approve|reject` (admin).

use crate::error::Field;
use crate::gateway::audit::CallRecord;
use crate::gateway::{
    ApprovalRequest, ApprovalStatus, CallAnswer, CallRequest, CallStatus, MAX_PAGE, ToolUsage,
};
use crate::server::auth::{Admin, Reader, Role};
use crate::server::error::{ApiError, ErrorBody, Fields, Json, Query};
use crate::server::{Shared, blocking};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde::{Deserialize, Serialize};

impl Fields for CallRequest {
    const FIELDS: &'static [Field] =
        &super::search::with_caller::<2, 8>([Field::CallTool, Field::CallArguments]);
}

/// Call a tool through toolgraph: the caller's policy decides whether it
/// may (a tool it cannot see answers `tool_not_found`, as an unknown one),
/// the arguments are checked against the tool's input schema (nothing
/// leaves otherwise), rate limits and budgets are counted, and a tool that
/// requires approval is held (202, `approval` names the request to poll).
#[utoipa::path(post, path = "/v1/call", tag = "calls", request_body = CallRequest,
    responses((status = 200, description = "the upstream answered", body = CallAnswer),
        (status = 202, description = "held until an operator approves it", body = CallAnswer),
        (status = 404, description = "no tool of this name the caller may see (`tool_not_found`)", body = ErrorBody),
        (status = 422, description = "the tool has no upstream (`no_upstream`)", body = ErrorBody),
        (status = 429, description = "a rate limit or budget is spent (`limit_reached`)", body = ErrorBody),
        (status = 502, description = "the upstream failed (`upstream_error`)", body = ErrorBody),
        (status = 503, description = "switched off, or no credentials for it", body = ErrorBody),
        (status = 504, description = "the upstream did not answer in time", body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn call(
    State(s): State<Shared>,
    Reader(p): Reader,
    Json(mut req): Json<CallRequest>,
) -> Result<impl IntoResponse, ApiError> {
    req.caller = p.caller(std::mem::take(&mut req.caller))?;
    let answer = blocking(move || s.gateway.call(&req)).await?;
    let status = match answer.status {
        CallStatus::PendingApproval => StatusCode::ACCEPTED,
        _ => StatusCode::OK,
    };
    Ok((status, axum::Json(answer)))
}

/// A page of a listing.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct CallsQuery {
    /// Only this tool's calls.
    pub tool: Option<String>,
    /// Skip this many records (newest first).
    pub offset: Option<usize>,
    /// At most this many (default 100, at most 500).
    pub limit: Option<usize>,
}

impl Fields for CallsQuery {
    const FIELDS: &'static [Field] = &[Field::ListTool, Field::CallsOffset, Field::CallsLimit];
}

/// (admin) The audit log: one record per call, newest first (who, tool,
/// when, duration, status, upstream status; arguments and results as
/// hashes unless the server keeps payloads). `X-Total-Count` says how many.
#[utoipa::path(get, path = "/v1/calls", tag = "calls", params(CallsQuery),
    responses((status = 200, description = "the records", body = [CallRecord],
        headers(("x-total-count" = usize, description = "records in all")))),
    security(("bearer" = [])))]
pub(crate) async fn calls(
    State(s): State<Shared>,
    Admin(_): Admin,
    Query(q): Query<CallsQuery>,
) -> Result<impl IntoResponse, ApiError> {
    let limit = q.limit.unwrap_or(100);
    if limit == 0 || limit > MAX_PAGE {
        return Err(ApiError::invalid(
            Field::CallsLimit,
            format!("limit is 1 to {MAX_PAGE}"),
        ));
    }
    let (page, total) = blocking(move || {
        s.gateway
            .calls(q.tool.as_deref(), q.offset.unwrap_or(0), limit)
    })
    .await?;
    Ok(([("x-total-count", total.to_string())], axum::Json(page)))
}

/// (admin) The usage view: per tool, calls, errors, latency (p50, p95 over
/// the last 100 calls), whether it is on, and each organization's budget
/// spent and left.
#[utoipa::path(get, path = "/v1/usage/tools", tag = "calls",
    responses((status = 200, description = "per tool", body = [ToolUsage])),
    security(("bearer" = [])))]
pub(crate) async fn usage(
    State(s): State<Shared>,
    Admin(_): Admin,
) -> Result<axum::Json<Vec<ToolUsage>>, ApiError> {
    Ok(axum::Json(s.gateway.usage()))
}

/// Which approval requests to list.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct ApprovalsQuery {
    /// pending, running, done, failed, rejected or interrupted (default: all).
    pub status: Option<ApprovalStatus>,
}

impl Fields for ApprovalsQuery {
    const FIELDS: &'static [Field] = &[Field::ReviewStatus];
}

/// Held calls, newest first: every one for an admin key, a reader key's
/// own otherwise.
#[utoipa::path(get, path = "/v1/approvals", tag = "calls", params(ApprovalsQuery),
    responses((status = 200, description = "the requests", body = [ApprovalRequest])),
    security(("bearer" = [])))]
pub(crate) async fn approvals(
    State(s): State<Shared>,
    Reader(p): Reader,
    Query(q): Query<ApprovalsQuery>,
) -> Result<axum::Json<Vec<ApprovalRequest>>, ApiError> {
    let key = (p.role != Role::Admin).then_some(p.id);
    Ok(axum::Json(s.gateway.approvals(key.as_deref(), q.status)))
}

/// One held call (a reader key sees only its own; another's is not found).
#[utoipa::path(get, path = "/v1/approvals/{id}", tag = "calls",
    params(("id" = String, Path, description = "the request id")),
    responses((status = 200, description = "the request", body = ApprovalRequest),
        (status = 404, description = "no such request for this key", body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn approval(
    State(s): State<Shared>,
    Reader(p): Reader,
    Path(id): Path<String>,
) -> Result<axum::Json<ApprovalRequest>, ApiError> {
    let key = (p.role != Role::Admin).then_some(p.id);
    s.gateway
        .approval(&id, key.as_deref())
        .map(axum::Json)
        .map_err(ApiError::from)
}

/// An operator's reason.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ApprovalDecision {
    #[serde(default)]
    pub reason: Option<String>,
}

impl Fields for ApprovalDecision {
    const FIELDS: &'static [Field] = &[Field::RejectReason];
}

/// (admin) Approve a held call: it runs now, once (its caller's policy,
/// limits and credentials as they are now); the answer is in the request.
#[utoipa::path(post, path = "/v1/approvals/{id}/approve", tag = "calls",
    params(("id" = String, Path, description = "the request id")), request_body = ApprovalDecision,
    responses((status = 200, description = "approved and run", body = ApprovalRequest),
        (status = 404, description = "no such request", body = ErrorBody),
        (status = 409, description = "decided already", body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn approve(
    State(s): State<Shared>,
    Admin(p): Admin,
    Path(id): Path<String>,
    Json(d): Json<ApprovalDecision>,
) -> Result<axum::Json<ApprovalRequest>, ApiError> {
    decide(s, p, id, true, d).await
}

async fn decide(
    s: Shared,
    p: crate::server::auth::Principal,
    id: String,
    approve: bool,
    d: ApprovalDecision,
) -> Result<axum::Json<ApprovalRequest>, ApiError> {
    blocking(move || s.gateway.decide(&id, approve, &p.name, d.reason))
        .await
        .map(axum::Json)
}

/// (admin) Reject a held call: the upstream is never called.
#[utoipa::path(post, path = "/v1/approvals/{id}/reject", tag = "calls",
    params(("id" = String, Path, description = "the request id")), request_body = ApprovalDecision,
    responses((status = 200, description = "rejected", body = ApprovalRequest),
        (status = 404, description = "no such request", body = ErrorBody),
        (status = 409, description = "decided already", body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn reject(
    State(s): State<Shared>,
    Admin(p): Admin,
    Path(id): Path<String>,
    Json(d): Json<ApprovalDecision>,
) -> Result<axum::Json<ApprovalRequest>, ApiError> {
    decide(s, p, id, false, d).await
}
