//! Ranking for planners: search, resolve, select, the tool-selection
//! prompt, and failures reported back into the session. Each handler binds
//! the caller to its key and hands the request to the engine's service face.

use crate::engine::{
    Caller, Prompt, PromptRequest, Resolution, ResolveRequest, SearchRequest, SearchResponse,
    SelectRequest, Selection,
};
use crate::error::Field;
use crate::server::auth::Reader;
use crate::server::error::{ApiError, Fields, Json};
use crate::server::{Shared, blocking};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};

const CALLER: [Field; 6] = [
    Field::Caller,
    Field::CallerOrg,
    Field::CallerAgent,
    Field::CallerSession,
    Field::CallerChannel,
    Field::CallerGoal,
];

/// `T`'s own fields and the caller's.
pub(crate) const fn with_caller<const N: usize, const M: usize>(own: [Field; N]) -> [Field; M] {
    let mut out = [Field::Caller; M];
    let mut i = 0;
    while i < N {
        out[i] = own[i];
        i += 1;
    }
    let mut j = 0;
    while j < CALLER.len() {
        out[N + j] = CALLER[j];
        j += 1;
    }
    out
}

impl Fields for SearchRequest {
    const FIELDS: &'static [Field] = &with_caller::<8, 14>([
        Field::SearchText,
        Field::SearchVerb,
        Field::SearchMode,
        Field::SearchLimit,
        Field::SearchCandidates,
        Field::SearchDependencies,
        Field::SearchExplain,
        Field::SearchWithParameters,
    ]);
}

impl Fields for ResolveRequest {
    const FIELDS: &'static [Field] = &with_caller::<3, 9>([
        Field::ResolveVerb,
        Field::ResolveDescription,
        Field::ResolveContext,
    ]);
}

impl Fields for SelectRequest {
    const FIELDS: &'static [Field] = &with_caller::<5, 11>([
        Field::SelectSession,
        Field::SelectMessage,
        Field::SelectStrategy,
        Field::SelectMaxTools,
        Field::SelectMaxDomains,
    ]);
}

impl Fields for PromptRequest {
    const FIELDS: &'static [Field] = &with_caller::<5, 11>([
        Field::SearchText,
        Field::SearchVerb,
        Field::PromptTools,
        Field::SearchLimit,
        Field::PromptBudget,
    ]);
}

/// Rank the tools the caller may see for a request.
#[utoipa::path(post, path = "/v1/search", tag = "ranking", request_body = SearchRequest,
    responses((status = 200, description = "ranked tools, best first", body = SearchResponse)),
    security(("bearer" = [])))]
pub(crate) async fn search(
    State(s): State<Shared>,
    Reader(p): Reader,
    Json(mut req): Json<SearchRequest>,
) -> Result<axum::Json<SearchResponse>, ApiError> {
    req.caller = p.caller(req.caller)?;
    blocking(move || s.engine.search(&req))
        .await
        .map(axum::Json)
}

/// Substitute a catalog tool for a planner verb, or advise decomposition.
#[utoipa::path(post, path = "/v1/resolve", tag = "ranking", request_body = ResolveRequest,
    responses((status = 200, description = "substitute or decompose", body = Resolution)),
    security(("bearer" = [])))]
pub(crate) async fn resolve(
    State(s): State<Shared>,
    Reader(p): Reader,
    Json(mut req): Json<ResolveRequest>,
) -> Result<axum::Json<Resolution>, ApiError> {
    req.caller = p.caller(req.caller)?;
    blocking(move || s.engine.resolve(&req))
        .await
        .map(axum::Json)
}

/// Choose the tools for one conversation turn.
#[utoipa::path(post, path = "/v1/select", tag = "ranking", request_body = SelectRequest,
    responses((status = 200, description = "the turn's tools", body = Selection)),
    security(("bearer" = [])))]
pub(crate) async fn select(
    State(s): State<Shared>,
    Reader(p): Reader,
    Json(mut req): Json<SelectRequest>,
) -> Result<axum::Json<Selection>, ApiError> {
    req.caller = p.caller(req.caller)?;
    blocking(move || s.engine.select(&req))
        .await
        .map(axum::Json)
}

/// Render the tool-selection prompt: the best tools for a request (or the
/// tools named) that the caller may see, within a token budget.
#[utoipa::path(post, path = "/v1/prompt", tag = "ranking", request_body = PromptRequest,
    responses((status = 200, description = "the prompt and the tools it renders", body = Prompt)),
    security(("bearer" = [])))]
pub(crate) async fn prompt(
    State(s): State<Shared>,
    Reader(p): Reader,
    Json(mut req): Json<PromptRequest>,
) -> Result<axum::Json<Prompt>, ApiError> {
    req.caller = p.caller(req.caller)?;
    blocking(move || s.engine.prompt(&req))
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
    /// Who the conversation belongs to (a bound key implies it).
    #[serde(default)]
    pub caller: Caller,
}

impl Fields for FailureReport {
    const FIELDS: &'static [Field] =
        &with_caller::<2, 8>([Field::FailureTool, Field::FailureReason]);
}

/// Report a failed tool call: hidden for the rest of the session (of this
/// key, organization and agent).
#[utoipa::path(post, path = "/v1/sessions/{id}/failures", tag = "ranking", request_body = FailureReport,
    params(("id" = String, Path, description = "the session")),
    responses((status = 204, description = "recorded"),
        (status = 404, description = "no such tool for this caller", body = crate::server::error::ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn failure(
    State(s): State<Shared>,
    Reader(p): Reader,
    Path(id): Path<String>,
    Json(report): Json<FailureReport>,
) -> Result<StatusCode, ApiError> {
    if report.tool.trim().is_empty() {
        return Err(ApiError::invalid(
            Field::FailureTool,
            "name the tool that failed",
        ));
    }
    let reason = if report.reason.trim().is_empty() {
        "reported as failed".to_string()
    } else {
        report.reason
    };
    let caller = Caller {
        session: Some(id),
        ..p.caller(report.caller)?
    };
    blocking(move || s.engine.session_failed(&caller, &report.tool, &reason)).await?;
    Ok(StatusCode::NO_CONTENT)
}
