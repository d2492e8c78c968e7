//! Operator routes (admin key): reload, policy, policy explain, SPARQL, and
//! the registration report.

use crate::embed::SyncReport;
use crate::engine::Registration;
use crate::graph::{LoadReport, SparqlOutput};
use crate::policy::{Caller, Explanation};
use crate::server::error::{ApiError, ErrorBody, Json, Query, body_error};
use crate::server::{Principal, Shared, blocking};
use axum::Extension;
use axum::body::Bytes;
use axum::extract::{FromRequest, Request, State};
use serde::{Deserialize, Serialize};

/// What a reload did.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct ReloadReport {
    pub files: Vec<String>,
    /// Sources that no longer exist on disk, removed.
    pub removed: Vec<String>,
    pub store: LoadReport,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embeddings: Option<SyncReport>,
}

/// (admin) Reload the ontology and seeds from disk: validated first, swapped
/// atomically; requests in flight finish on the old catalog, and a broken
/// file changes nothing.
#[utoipa::path(post, path = "/v1/reload", tag = "admin",
    responses(
        (status = 200, description = "reloaded", body = ReloadReport),
        (status = 400, description = "a broken file (file:line:col) or a constraint violation; nothing changed", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 429, body = ErrorBody),
        (status = 504, body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn reload(
    State(s): State<Shared>,
    Extension(p): Extension<Principal>,
) -> Result<axum::Json<ReloadReport>, ApiError> {
    p.admin()?;
    let paths = s.reload.clone();
    blocking(move || s.engine.reload(&paths))
        .await
        .map(|(outcome, removed)| {
            axum::Json(ReloadReport {
                files: outcome.files,
                removed,
                store: outcome.store,
                embeddings: outcome.embeddings,
            })
        })
}

/// The policy as the graph holds it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct PolicyView {
    /// Every policy fact: subject, class, property, value, reason.
    pub facts: Vec<crate::model::PolicyFact>,
}

/// (admin) The caller policy, as facts.
#[utoipa::path(get, path = "/v1/policy", tag = "admin",
    responses(
        (status = 200, description = "the policy facts", body = PolicyView),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 429, body = ErrorBody),
        (status = 504, body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn get_policy(
    State(s): State<Shared>,
    Extension(p): Extension<Principal>,
) -> Result<axum::Json<PolicyView>, ApiError> {
    p.admin()?;
    blocking(move || s.engine.store().policy())
        .await
        .map(|facts| axum::Json(PolicyView { facts }))
}

/// Which source a policy write replaces.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct PolicyQuery {
    /// The source to replace (default `api/policy.ttl`).
    pub source: Option<String>,
}

/// (admin) Write policy Turtle as one source, validated with everything
/// else, all or nothing.
#[utoipa::path(put, path = "/v1/policy", tag = "admin", params(PolicyQuery),
    request_body(content = String, description = "policy Turtle", content_type = "text/turtle"),
    responses(
        (status = 200, description = "written", body = Registration),
        (status = 400, description = "broken Turtle (line:col) or a constraint violation; nothing changed", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 413, body = ErrorBody),
        (status = 429, body = ErrorBody), (status = 504, body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn put_policy(
    State(s): State<Shared>,
    Extension(p): Extension<Principal>,
    Query(q): Query<PolicyQuery>,
    req: Request,
) -> Result<axum::Json<Registration>, ApiError> {
    p.admin()?;
    let body = Bytes::from_request(req, &())
        .await
        .map_err(|e| body_error(&e.body_text(), e.status()))?;
    let text = String::from_utf8(body.to_vec())
        .map_err(|e| ApiError::bad_request(format!("the body is not UTF-8: {e}")))?;
    let source = q.source.unwrap_or_else(|| "api/policy.ttl".into());
    blocking(move || {
        s.engine
            .register_text(Some(&source), &text, Some(crate::import::Format::Turtle))
    })
    .await
    .map(axum::Json)
}

/// Whom and what to explain.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct ExplainQuery {
    pub tool: String,
    pub org: Option<String>,
    pub agent: Option<String>,
    pub session: Option<String>,
    pub channel: Option<String>,
    pub goal: Option<String>,
}

/// (admin) Each policy layer's verdict on one tool for one caller.
#[utoipa::path(get, path = "/v1/policy/explain", tag = "admin", params(ExplainQuery),
    responses(
        (status = 200, description = "the verdicts", body = Explanation),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 429, body = ErrorBody), (status = 504, body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn explain(
    State(s): State<Shared>,
    Extension(p): Extension<Principal>,
    Query(q): Query<ExplainQuery>,
) -> Result<axum::Json<Explanation>, ApiError> {
    p.admin()?;
    let caller = Caller {
        org: q.org,
        agent: q.agent,
        session: q.session,
        channel: q.channel,
        goal: q.goal,
    };
    let tool = q.tool;
    blocking(move || s.engine.explain_policy(&caller, &tool))
        .await
        .map(axum::Json)
}

/// Whose view of the catalog to explain.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct CallerQuery {
    pub org: Option<String>,
    pub agent: Option<String>,
    pub session: Option<String>,
    pub channel: Option<String>,
    pub goal: Option<String>,
}

/// (admin) The tools a caller may not see, or must have approved, each with
/// every layer's verdict and the deciding layer.
#[utoipa::path(get, path = "/v1/policy/hidden", tag = "admin", params(CallerQuery),
    responses(
        (status = 200, description = "the verdicts, catalog order", body = Vec<Explanation>),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 429, body = ErrorBody), (status = 504, body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn hidden(
    State(s): State<Shared>,
    Extension(p): Extension<Principal>,
    Query(q): Query<CallerQuery>,
) -> Result<axum::Json<Vec<Explanation>>, ApiError> {
    p.admin()?;
    let caller = Caller {
        org: q.org,
        agent: q.agent,
        session: q.session,
        channel: q.channel,
        goal: q.goal,
    };
    blocking(move || s.engine.hidden_from(&caller))
        .await
        .map(axum::Json)
}

/// A read-only SPARQL query.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SparqlRequest {
    pub query: String,
}

/// (admin) Run a read-only SPARQL query over the store, with a time limit.
#[utoipa::path(post, path = "/v1/sparql", tag = "admin", request_body = SparqlRequest,
    responses(
        (status = 200, description = "solutions, a boolean, or N-Triples lines", body = SparqlOutput),
        (status = 400, description = "a malformed query or an update", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 413, body = ErrorBody),
        (status = 415, body = ErrorBody), (status = 429, body = ErrorBody),
        (status = 503, description = "the store speaks no SPARQL, or the query ran out of time", body = ErrorBody),
        (status = 504, body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn sparql(
    State(s): State<Shared>,
    Extension(p): Extension<Principal>,
    Json(req): Json<SparqlRequest>,
) -> Result<axum::Json<SparqlOutput>, ApiError> {
    p.admin()?;
    let limit = s.limits.sparql_timeout;
    // The store cancels the query at the limit; the answer does not wait
    // for the cancellation to take effect.
    let work = blocking(move || s.engine.sparql(&req.query, limit));
    match tokio::time::timeout(limit + std::time::Duration::from_millis(250), work).await {
        Ok(r) => r.map(axum::Json),
        Err(_) => Err(ApiError::from(crate::error::Error::Unavailable(format!(
            "the query ran longer than {:.1} s and was cancelled",
            limit.as_secs_f32()
        )))),
    }
}
