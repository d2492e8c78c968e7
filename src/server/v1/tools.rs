//! The catalog as a caller sees it, and (admin) registration and removal.

use crate::engine::{
    Caller, DependencyEdge, DomainCount, GoalInfo, ListRequest, ListedTool, Registration,
    ToolFilter, ToolPage,
};
use crate::error::Field;
use crate::server::auth::{Admin, Reader};
use crate::server::error::{ApiError, CallerQuery, Fields, Query, body_error};
use crate::server::{Shared, blocking};
use axum::body::Bytes;
use axum::extract::{FromRequest, Path, Request, State};
use axum::http::{StatusCode, header};
use serde::{Deserialize, Serialize};

/// The most tools one page lists.
pub(crate) const MAX_PAGE: usize = 500;
/// Tools a page lists when the request does not say.
pub(crate) const DEFAULT_PAGE: usize = 50;

/// Query parameters of the listings besides the caller's: a page and a
/// filter.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::IntoParams, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct PageQuery {
    /// A domain: local name (`travel`), label or IRI.
    pub domain: Option<String>,
    /// A source as loaded (`seeds/travel.ttl`).
    pub source: Option<String>,
    /// Skip this many tools (catalog order).
    pub offset: Option<usize>,
    /// At most this many tools (default 50, at most 500).
    pub limit: Option<usize>,
}

impl Fields for PageQuery {
    const FIELDS: &'static [Field] = &[
        Field::ListDomain,
        Field::ListSource,
        Field::ListOffset,
        Field::ListLimit,
    ];
}

/// No parameters besides the caller's.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
pub(crate) struct NoParams {}

impl Fields for NoParams {
    const FIELDS: &'static [Field] = &[];
}

/// The tools the caller may see, one page.
#[utoipa::path(get, path = "/v1/tools", tag = "catalog", params(Caller, PageQuery),
    responses((status = 200, description = "a page of tools", body = ToolPage)),
    security(("bearer" = [])))]
pub(crate) async fn list(
    State(s): State<Shared>,
    Reader(p): Reader,
    CallerQuery(caller, q): CallerQuery<PageQuery>,
) -> Result<axum::Json<ToolPage>, ApiError> {
    let limit = q.limit.unwrap_or(DEFAULT_PAGE);
    if limit > MAX_PAGE {
        return Err(ApiError::invalid(
            Field::ListLimit,
            format!("limit is at most {MAX_PAGE}"),
        ));
    }
    let req = ListRequest {
        caller: p.caller(caller)?,
        filter: ToolFilter {
            domain: q.domain,
            source: q.source,
        },
        offset: q.offset.unwrap_or(0),
        limit: limit.max(1),
    };
    blocking(move || s.engine.list(&req)).await.map(axum::Json)
}

/// One tool the caller may see: its descriptor and its constellation.
#[utoipa::path(get, path = "/v1/tools/{name}", tag = "catalog",
    params(("name" = String, Path, description = "name, id or IRI"), Caller),
    responses((status = 200, description = "the tool", body = ListedTool),
        (status = 404, description = "no such tool for this caller", body = crate::server::error::ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn one(
    State(s): State<Shared>,
    Reader(p): Reader,
    Path(name): Path<String>,
    CallerQuery(caller, _): CallerQuery<NoParams>,
) -> Result<axum::Json<ListedTool>, ApiError> {
    let caller = p.caller(caller)?;
    blocking(move || s.engine.tool_for(&caller, &name))
        .await
        .map(axum::Json)
}

/// The `dependsOn` edges of one tool the caller may see, to tools it may
/// see: declared (kind, parameter, reason) and inferred (confidence;
/// `followed` when dependency-aware ranking uses it).
#[utoipa::path(get, path = "/v1/tools/{name}/dependencies", tag = "catalog",
    params(("name" = String, Path, description = "name, id or IRI"), Caller),
    responses((status = 200, description = "declared edges first, then inferred by confidence", body = Vec<DependencyEdge>),
        (status = 404, description = "no such tool for this caller", body = crate::server::error::ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn dependencies(
    State(s): State<Shared>,
    Reader(p): Reader,
    Path(name): Path<String>,
    CallerQuery(caller, _): CallerQuery<NoParams>,
) -> Result<axum::Json<Vec<DependencyEdge>>, ApiError> {
    let caller = p.caller(caller)?;
    blocking(move || s.engine.dependencies(&caller, Some(&name)))
        .await
        .map(axum::Json)
}

/// The domains the caller may see tools of, with counts.
#[utoipa::path(get, path = "/v1/domains", tag = "catalog", params(Caller),
    responses((status = 200, description = "domains, largest first", body = Vec<DomainCount>)),
    security(("bearer" = [])))]
pub(crate) async fn domains(
    State(s): State<Shared>,
    Reader(p): Reader,
    CallerQuery(caller, _): CallerQuery<NoParams>,
) -> Result<axum::Json<Vec<DomainCount>>, ApiError> {
    let caller = p.caller(caller)?;
    blocking(move || s.engine.domains(&caller))
        .await
        .map(axum::Json)
}

/// The goals in flow order, as the caller has them: boundary, next goals,
/// agents, the tools it has under each, and warnings for listed tools it
/// lacks (named only where it may see them).
#[utoipa::path(get, path = "/v1/goals", tag = "catalog", params(Caller),
    responses((status = 200, description = "goals, in flow order", body = Vec<GoalInfo>)),
    security(("bearer" = [])))]
pub(crate) async fn goals(
    State(s): State<Shared>,
    Reader(p): Reader,
    CallerQuery(caller, _): CallerQuery<NoParams>,
) -> Result<axum::Json<Vec<GoalInfo>>, ApiError> {
    let caller = p.caller(caller)?;
    blocking(move || s.engine.goals(&caller))
        .await
        .map(axum::Json)
}

/// Where a registration comes from.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct RegisterQuery {
    /// The source name: registering the same name again replaces its tools
    /// (default: derived from the content, so the same manifest twice is one
    /// source).
    pub source: Option<String>,
    /// turtle | mcp | openapi | jsonl (default: from the Content-Type and the content).
    pub format: Option<String>,
    /// Refuse the text when screening finds a `block` reason (default:
    /// register it and report the findings).
    #[serde(default)]
    pub strict: bool,
}

impl Fields for RegisterQuery {
    const FIELDS: &'static [Field] = &[
        Field::RegisterSource,
        Field::RegisterFormat,
        Field::RegisterStrict,
    ];
}

/// A registration body: UTF-8 text, not empty.
pub(crate) async fn text_body(req: Request) -> Result<String, ApiError> {
    let body = Bytes::from_request(req, &())
        .await
        .map_err(|e| body_error(&e.body_text(), e.status()))?;
    let text = String::from_utf8(body.to_vec()).map_err(|e| {
        ApiError::invalid(Field::RegisterBody, format!("the body is not UTF-8: {e}"))
    })?;
    if text.trim().is_empty() {
        return Err(ApiError::invalid(
            Field::RegisterBody,
            "the body is empty; send a manifest",
        ));
    }
    Ok(text)
}

/// (admin) Register tools: Turtle, an MCP `tools/list` result, an OpenAPI
/// document (JSON or YAML) or JSONL. All or nothing; only changed tools are
/// re-embedded.
#[utoipa::path(post, path = "/v1/tools", tag = "admin", params(RegisterQuery),
    request_body(content = String, description = "the manifest", content_type = "application/json"),
    responses((status = 200, description = "registered", body = Registration)),
    security(("bearer" = [])))]
pub(crate) async fn register(
    State(s): State<Shared>,
    Admin(_): Admin,
    Query(q): Query<RegisterQuery>,
    req: Request,
) -> Result<axum::Json<Registration>, ApiError> {
    let content_type = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    let text = text_body(req).await?;
    blocking(move || {
        s.engine.register_upload(
            q.source.as_deref(),
            &text,
            q.format.as_deref(),
            &content_type,
            q.strict,
        )
    })
    .await
    .map(axum::Json)
}

/// (admin) Remove a tool. A tool others depend on is refused (409); a tool
/// from a seed file comes back when that file is reloaded.
#[utoipa::path(delete, path = "/v1/tools/{name}", tag = "admin",
    params(("name" = String, Path, description = "name, id or IRI")),
    responses((status = 204, description = "removed"),
        (status = 404, description = "no such tool", body = crate::server::error::ErrorBody),
        (status = 409, description = "other tools depend on it", body = crate::server::error::ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn remove(
    State(s): State<Shared>,
    Admin(_): Admin,
    Path(name): Path<String>,
) -> Result<StatusCode, ApiError> {
    blocking(move || s.engine.remove_tool(&name)).await?;
    Ok(StatusCode::NO_CONTENT)
}
