//! The airlock (admin key): sources, the review queue, health probes and
//! capability gaps; and usage (`POST /v1/usage`, any key), which planners
//! and executors report so rate limits and budgets can be enforced.

use crate::airlock::{
    Approval, DiscoveryReport, Gap, NewSource, PendingTool, ProbeReport, ScanReport, Status,
    ToolSource,
};
use crate::engine::{Caller, UsageEvent, UsageReport};
use crate::error::Field;
use crate::server::auth::{Admin, Reader};
use crate::server::error::{ApiError, ErrorBody, Fields, Json, Query};
use crate::server::{Shared, blocking};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};

impl Fields for NewSource {
    const FIELDS: &'static [Field] = &[
        Field::SourceKind,
        Field::SourceLocation,
        Field::SourceSchedule,
        Field::SourceHealthUrl,
        Field::SourceAllow,
    ];
}

impl Fields for Approval {
    const FIELDS: &'static [Field] = &[
        Field::ApprovalRateLimit,
        Field::ApprovalBudget,
        Field::ApprovalAccess,
        Field::ApprovalHealthUrl,
    ];
}

impl Fields for UsageEvent {
    const FIELDS: &'static [Field] = &[
        Field::UsageTool,
        Field::UsageOrg,
        Field::UsageAgent,
        Field::UsageCost,
    ];
}

/// (admin) Add a source of tool definitions: an OpenAPI spec (file or URL),
/// an MCP server (Streamable HTTP URL) or a folder of manifests. Not scanned
/// until asked (or its schedule comes).
#[utoipa::path(post, path = "/v1/sources", tag = "airlock", request_body = NewSource,
    responses((status = 201, description = "added", body = ToolSource),
        (status = 409, description = "the same location is a source already", body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn add_source(
    State(s): State<Shared>,
    Admin(_): Admin,
    Json(new): Json<NewSource>,
) -> Result<(StatusCode, axum::Json<ToolSource>), ApiError> {
    blocking(move || s.airlock.add_source(new))
        .await
        .map(|src| (StatusCode::CREATED, axum::Json(src)))
}

/// (admin) The sources, with their last scan and last error.
#[utoipa::path(get, path = "/v1/sources", tag = "airlock",
    responses((status = 200, description = "the sources", body = [ToolSource])),
    security(("bearer" = [])))]
pub(crate) async fn sources(
    State(s): State<Shared>,
    Admin(_): Admin,
) -> Result<axum::Json<Vec<ToolSource>>, ApiError> {
    Ok(axum::Json(s.airlock.sources()))
}

/// (admin) Delete a source, its review items and the tools approved from it.
#[utoipa::path(delete, path = "/v1/sources/{id}", tag = "airlock",
    params(("id" = String, Path, description = "source id")),
    responses((status = 204, description = "deleted"),
        (status = 404, description = "no such source", body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn delete_source(
    State(s): State<Shared>,
    Admin(_): Admin,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    blocking(move || s.airlock.delete_source(&id)).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// (admin) Scan a source now (bounded in time and size). A failed read is
/// answered 503 and recorded as the source's `last_error`.
#[utoipa::path(post, path = "/v1/sources/{id}/scan", tag = "airlock",
    params(("id" = String, Path, description = "source id")),
    responses((status = 200, description = "what the scan found", body = ScanReport),
        (status = 404, description = "no such source", body = ErrorBody),
        (status = 503, description = "the source could not be read", body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn scan(
    State(s): State<Shared>,
    Admin(_): Admin,
    Path(id): Path<String>,
) -> Result<axum::Json<ScanReport>, ApiError> {
    blocking(move || s.airlock.scan(&id)).await.map(axum::Json)
}

/// Which review items to list.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct PendingQuery {
    /// pending, approved, rejected, changed or missing (default: all).
    pub status: Option<String>,
    /// Skip this many items (most recently updated first).
    pub offset: Option<usize>,
    /// At most this many items (default 100, at most 500).
    pub limit: Option<usize>,
}

impl Fields for PendingQuery {
    const FIELDS: &'static [Field] = &[
        Field::ReviewStatus,
        Field::PendingOffset,
        Field::PendingLimit,
    ];
}

/// Review items a page lists when the request does not say.
const PENDING_PAGE: usize = 100;
/// The most review items one page lists.
const MAX_PENDING_PAGE: usize = 500;

/// (admin) Review items, one page, most recently updated first:
/// discovered tools with their status, screening reasons and, for a changed
/// tool, the diff against what was approved. `X-Total-Count` says how many
/// there are in all.
#[utoipa::path(get, path = "/v1/pending", tag = "airlock", params(PendingQuery),
    responses((status = 200, description = "the items", body = [PendingTool],
        headers(("x-total-count" = usize, description = "items in all, over every page")))),
    security(("bearer" = [])))]
pub(crate) async fn pending(
    State(s): State<Shared>,
    Admin(_): Admin,
    Query(q): Query<PendingQuery>,
) -> Result<impl axum::response::IntoResponse, ApiError> {
    let status = q
        .status
        .as_deref()
        .map(str::parse::<Status>)
        .transpose()
        .map_err(ApiError::from)?;
    let limit = q.limit.unwrap_or(PENDING_PAGE);
    if limit == 0 || limit > MAX_PENDING_PAGE {
        return Err(ApiError::invalid(
            Field::PendingLimit,
            format!("limit is 1 to {MAX_PENDING_PAGE}"),
        ));
    }
    let (page, total) = s.airlock.items_page(status, q.offset.unwrap_or(0), limit);
    Ok(([("x-total-count", total.to_string())], axum::Json(page)))
}

/// (admin) One review item.
#[utoipa::path(get, path = "/v1/pending/{id}", tag = "airlock",
    params(("id" = String, Path, description = "item id")),
    responses((status = 200, description = "the item", body = PendingTool),
        (status = 404, description = "no such item", body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn pending_one(
    State(s): State<Shared>,
    Admin(_): Admin,
    Path(id): Path<String>,
) -> Result<axum::Json<PendingTool>, ApiError> {
    s.airlock.item(&id).map(axum::Json).map_err(ApiError::from)
}

/// (admin) Approve a review item: it is registered (searchable) with its
/// usage policy and pinned to its current content.
#[utoipa::path(post, path = "/v1/pending/{id}/approve", tag = "airlock",
    params(("id" = String, Path, description = "item id")),
    request_body = Approval,
    responses((status = 200, description = "approved", body = PendingTool),
        (status = 404, description = "no such item", body = ErrorBody),
        (status = 409, description = "approved already, or missing from its source", body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn approve(
    State(s): State<Shared>,
    Admin(p): Admin,
    Path(id): Path<String>,
    Json(approval): Json<Approval>,
) -> Result<axum::Json<PendingTool>, ApiError> {
    blocking(move || s.airlock.approve(&id, approval, &p.name))
        .await
        .map(axum::Json)
}

/// A rejection.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Rejection {
    pub reason: String,
}

impl Fields for Rejection {
    const FIELDS: &'static [Field] = &[Field::RejectReason];
}

/// (admin) Reject a review item, saying why; it stays rejected across
/// rescans until its content changes.
#[utoipa::path(post, path = "/v1/pending/{id}/reject", tag = "airlock",
    params(("id" = String, Path, description = "item id")),
    request_body = Rejection,
    responses((status = 200, description = "rejected", body = PendingTool),
        (status = 404, description = "no such item", body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn reject(
    State(s): State<Shared>,
    Admin(p): Admin,
    Path(id): Path<String>,
    Json(r): Json<Rejection>,
) -> Result<axum::Json<PendingTool>, ApiError> {
    blocking(move || s.airlock.reject(&id, &r.reason, &p.name))
        .await
        .map(axum::Json)
}

/// Report one call of a tool, counted against its usage policy for the
/// organization (a key bound to an organization counts for it only). Over
/// its rate limit or budget, the tool leaves that organization's results.
#[utoipa::path(post, path = "/v1/usage", tag = "airlock", request_body = UsageEvent,
    responses((status = 200, description = "counted", body = UsageReport),
        (status = 404, description = "no such tool for this caller", body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn usage(
    State(s): State<Shared>,
    Reader(p): Reader,
    Json(mut event): Json<UsageEvent>,
) -> Result<axum::Json<UsageReport>, ApiError> {
    let caller = p.caller(Caller {
        org: event.org.take(),
        agent: event.agent.take(),
        ..Caller::default()
    })?;
    blocking(move || s.engine.record_usage(&caller, &event))
        .await
        .map(axum::Json)
}

/// (admin) Probe every approved tool's health check now.
#[utoipa::path(post, path = "/v1/health/probe", tag = "airlock",
    responses((status = 200, description = "each probe", body = [ProbeReport])),
    security(("bearer" = [])))]
pub(crate) async fn probe(
    State(s): State<Shared>,
    Admin(_): Admin,
) -> Result<axum::Json<Vec<ProbeReport>>, ApiError> {
    blocking(move || s.airlock.probe()).await.map(axum::Json)
}

/// (admin) Capability gaps: verbs resolve had to decompose, most frequent
/// first.
#[utoipa::path(get, path = "/v1/gaps", tag = "airlock",
    responses((status = 200, description = "the gaps", body = [Gap])),
    security(("bearer" = [])))]
pub(crate) async fn gaps(
    State(s): State<Shared>,
    Admin(_): Admin,
) -> Result<axum::Json<Vec<Gap>>, ApiError> {
    Ok(axum::Json(s.airlock.gaps()))
}

/// (admin) Look for tools that would fill the top gaps now (needs
/// `--discover-gaps`); what is found waits in the review queue.
#[utoipa::path(post, path = "/v1/gaps/discover", tag = "airlock",
    responses((status = 200, description = "what was found", body = DiscoveryReport),
        (status = 403, description = "not an admin key, or discovery is off", body = ErrorBody),
        (status = 503, description = "the directory could not be read", body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn discover(
    State(s): State<Shared>,
    Admin(_): Admin,
) -> Result<axum::Json<DiscoveryReport>, ApiError> {
    blocking(move || s.airlock.discover_gaps())
        .await
        .map(axum::Json)
}
