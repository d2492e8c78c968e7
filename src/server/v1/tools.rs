//! The catalog as a caller sees it, and (admin) registration and removal.

use crate::engine::{
    DependencyEdge, DomainCount, ListRequest, ListedTool, Registration, ToolFilter, ToolPage,
};
use crate::import::Format;
use crate::policy::Caller;
use crate::server::error::{ApiError, ErrorBody, Query, body_error};
use crate::server::{Principal, Shared, blocking};
use axum::Extension;
use axum::body::Bytes;
use axum::extract::{FromRequest, Path, Request, State};
use axum::http::{StatusCode, header};
use serde::{Deserialize, Serialize};

/// Query parameters of the listings: the caller, a page, a filter.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::IntoParams, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct ToolsQuery {
    pub org: Option<String>,
    pub agent: Option<String>,
    pub session: Option<String>,
    pub channel: Option<String>,
    pub goal: Option<String>,
    /// A domain: local name (`travel`), label or IRI.
    pub domain: Option<String>,
    /// A source as loaded (`seeds/travel.ttl`).
    pub source: Option<String>,
    /// Skip this many tools (catalog order).
    pub offset: Option<usize>,
    /// At most this many tools (default 50, at most 500).
    pub limit: Option<usize>,
}

impl ToolsQuery {
    fn caller(&self) -> Caller {
        Caller {
            org: self.org.clone(),
            agent: self.agent.clone(),
            session: self.session.clone(),
            channel: self.channel.clone(),
            goal: self.goal.clone(),
        }
    }
}

/// The tools the caller may see, one page.
#[utoipa::path(get, path = "/v1/tools", tag = "catalog", params(ToolsQuery),
    responses(
        (status = 200, description = "a page of tools", body = ToolPage),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 429, body = ErrorBody), (status = 504, body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn list(
    State(s): State<Shared>,
    Extension(p): Extension<Principal>,
    Query(q): Query<ToolsQuery>,
) -> Result<axum::Json<ToolPage>, ApiError> {
    let limit = q.limit.unwrap_or(50);
    if limit > 500 {
        return Err(ApiError::bad_request("limit is at most 500").field("limit"));
    }
    let req = ListRequest {
        caller: p.caller(q.caller())?,
        filter: ToolFilter {
            domain: q.domain.clone(),
            source: q.source.clone(),
        },
        offset: q.offset.unwrap_or(0),
        limit: limit.max(1),
    };
    blocking(move || s.engine.list(&req)).await.map(axum::Json)
}

/// One tool the caller may see: its descriptor and its constellation.
#[utoipa::path(get, path = "/v1/tools/{name}", tag = "catalog",
    params(("name" = String, Path, description = "name, id or IRI"), ToolsQuery),
    responses(
        (status = 200, description = "the tool", body = ListedTool),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, description = "no such tool for this caller", body = ErrorBody),
        (status = 429, body = ErrorBody), (status = 504, body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn one(
    State(s): State<Shared>,
    Extension(p): Extension<Principal>,
    Path(name): Path<String>,
    Query(q): Query<ToolsQuery>,
) -> Result<axum::Json<ListedTool>, ApiError> {
    let caller = p.caller(q.caller())?;
    blocking(move || s.engine.tool_for(&caller, &name))
        .await
        .map(axum::Json)
}

/// The `dependsOn` edges of one tool the caller may see, to tools it may
/// see: declared (kind, parameter, reason) and inferred (confidence;
/// `followed` when dependency-aware ranking uses it).
#[utoipa::path(get, path = "/v1/tools/{name}/dependencies", tag = "catalog",
    params(("name" = String, Path, description = "name, id or IRI"), ToolsQuery),
    responses(
        (status = 200, description = "declared edges first, then inferred by confidence", body = Vec<DependencyEdge>),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, description = "no such tool for this caller", body = ErrorBody),
        (status = 429, body = ErrorBody), (status = 504, body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn dependencies(
    State(s): State<Shared>,
    Extension(p): Extension<Principal>,
    Path(name): Path<String>,
    Query(q): Query<ToolsQuery>,
) -> Result<axum::Json<Vec<DependencyEdge>>, ApiError> {
    let caller = p.caller(q.caller())?;
    blocking(move || s.engine.dependencies(&caller, Some(&name)))
        .await
        .map(axum::Json)
}

/// The domains the caller may see tools of, with counts.
#[utoipa::path(get, path = "/v1/domains", tag = "catalog", params(ToolsQuery),
    responses(
        (status = 200, description = "domains, largest first", body = Vec<DomainCount>),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 429, body = ErrorBody), (status = 504, body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn domains(
    State(s): State<Shared>,
    Extension(p): Extension<Principal>,
    Query(q): Query<ToolsQuery>,
) -> Result<axum::Json<Vec<DomainCount>>, ApiError> {
    let caller = p.caller(q.caller())?;
    blocking(move || s.engine.domains(&caller))
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
}

/// The format a Content-Type names, when it names one.
fn format_of(content_type: &str) -> Option<Format> {
    let ct = content_type.split(';').next().unwrap_or("").trim();
    match ct {
        "text/turtle" | "application/x-turtle" => Some(Format::Turtle),
        "application/x-ndjson"
        | "application/jsonl"
        | "application/x-jsonlines"
        | "application/jsonlines" => Some(Format::Jsonl),
        "application/yaml"
        | "application/x-yaml"
        | "text/yaml"
        | "application/openapi+yaml"
        | "application/vnd.oai.openapi" => Some(Format::OpenApi),
        _ => None,
    }
}

/// (admin) Register tools: Turtle, an MCP `tools/list` result, an OpenAPI
/// document (JSON or YAML) or JSONL. All or nothing; only changed tools are
/// re-embedded.
#[utoipa::path(post, path = "/v1/tools", tag = "admin", params(RegisterQuery),
    request_body(content = String, description = "the manifest", content_type = "application/json"),
    responses(
        (status = 200, description = "registered", body = Registration),
        (status = 400, description = "malformed or invalid, naming the place", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 413, body = ErrorBody),
        (status = 429, body = ErrorBody), (status = 504, body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn register(
    State(s): State<Shared>,
    Extension(p): Extension<Principal>,
    Query(q): Query<RegisterQuery>,
    req: Request,
) -> Result<axum::Json<Registration>, ApiError> {
    p.admin()?;
    let content_type = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    let body = Bytes::from_request(req, &())
        .await
        .map_err(|e| body_error(&e.body_text(), e.status()))?;
    let text = String::from_utf8(body.to_vec())
        .map_err(|e| ApiError::bad_request(format!("the body is not UTF-8: {e}")))?;
    if text.trim().is_empty() {
        return Err(ApiError::bad_request("the body is empty; send a manifest"));
    }
    let format = match &q.format {
        Some(f) => Some(
            f.parse::<Format>()
                .map_err(|e| ApiError::from(e).field("format"))?,
        ),
        None => format_of(&content_type),
    };
    blocking(move || s.engine.register_text(q.source.as_deref(), &text, format))
        .await
        .map(axum::Json)
}

/// (admin) Remove a tool. A tool others depend on is refused (409); a tool
/// from a seed file comes back when that file is reloaded.
#[utoipa::path(delete, path = "/v1/tools/{name}", tag = "admin",
    params(("name" = String, Path, description = "name, id or IRI")),
    responses(
        (status = 204, description = "removed"),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, description = "other tools depend on it", body = ErrorBody),
        (status = 429, body = ErrorBody), (status = 504, body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn remove(
    State(s): State<Shared>,
    Extension(p): Extension<Principal>,
    Path(name): Path<String>,
) -> Result<StatusCode, ApiError> {
    p.admin()?;
    blocking(move || s.engine.remove_tool(&name)).await?;
    Ok(StatusCode::NO_CONTENT)
}
