//! Operator routes (admin key): reload, policy, policy explain, SPARQL.

use crate::engine::{Caller, Explanation, PolicyFact, Registration, ReloadReport, SparqlOutput};
use crate::error::Field;
use crate::server::auth::Admin;
use crate::server::error::{ApiError, CallerQuery, Fields, Json, Query};
use crate::server::v1::tools::{NoParams, text_body};
use crate::server::{Shared, blocking};
use axum::extract::{Request, State};
use serde::{Deserialize, Serialize};

/// (admin) Reload the ontology and seeds from disk: validated first, swapped
/// atomically; requests in flight finish on the old catalog, and a broken
/// file changes nothing.
#[utoipa::path(post, path = "/v1/reload", tag = "admin",
    responses((status = 200, description = "reloaded", body = ReloadReport)),
    security(("bearer" = [])))]
pub(crate) async fn reload(
    State(s): State<Shared>,
    Admin(_): Admin,
) -> Result<axum::Json<ReloadReport>, ApiError> {
    let paths = s.reload.clone();
    blocking(move || s.engine.reload(&paths))
        .await
        .map(axum::Json)
}

/// The policy as the graph holds it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct PolicyView {
    /// Every policy fact: subject, class, property, value, reason.
    pub facts: Vec<PolicyFact>,
}

/// (admin) The caller policy, as facts.
#[utoipa::path(get, path = "/v1/policy", tag = "admin",
    responses((status = 200, description = "the policy facts", body = PolicyView)),
    security(("bearer" = [])))]
pub(crate) async fn get_policy(
    State(s): State<Shared>,
    Admin(_): Admin,
) -> Result<axum::Json<PolicyView>, ApiError> {
    blocking(move || s.engine.policy_facts())
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

impl Fields for PolicyQuery {
    const FIELDS: &'static [Field] = &[Field::PolicySource];
}

/// (admin) Write policy Turtle as one source, validated with everything
/// else, all or nothing.
#[utoipa::path(put, path = "/v1/policy", tag = "admin", params(PolicyQuery),
    request_body(content = String, description = "policy Turtle", content_type = "text/turtle"),
    responses((status = 200, description = "written", body = Registration)),
    security(("bearer" = [])))]
pub(crate) async fn put_policy(
    State(s): State<Shared>,
    Admin(_): Admin,
    Query(q): Query<PolicyQuery>,
    req: Request,
) -> Result<axum::Json<Registration>, ApiError> {
    let text = text_body(req).await?;
    let source = q.source.unwrap_or_else(|| "api/policy.ttl".into());
    blocking(move || s.engine.put_policy(&source, &text))
        .await
        .map(axum::Json)
}

/// Which tool to explain.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct ExplainQuery {
    pub tool: String,
}

impl Fields for ExplainQuery {
    const FIELDS: &'static [Field] = &[Field::ExplainTool];
}

/// (admin) Each policy layer's verdict on one tool for one caller.
#[utoipa::path(get, path = "/v1/policy/explain", tag = "admin", params(ExplainQuery, Caller),
    responses((status = 200, description = "the verdicts", body = Explanation),
        (status = 404, description = "no such tool", body = crate::server::error::ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn explain(
    State(s): State<Shared>,
    Admin(_): Admin,
    CallerQuery(caller, q): CallerQuery<ExplainQuery>,
) -> Result<axum::Json<Explanation>, ApiError> {
    blocking(move || s.engine.explain_policy(&caller, &q.tool))
        .await
        .map(axum::Json)
}

/// (admin) The tools a caller may not see, or must have approved, each with
/// every layer's verdict and the deciding layer.
#[utoipa::path(get, path = "/v1/policy/hidden", tag = "admin", params(Caller),
    responses((status = 200, description = "the verdicts, catalog order", body = Vec<Explanation>)),
    security(("bearer" = [])))]
pub(crate) async fn hidden(
    State(s): State<Shared>,
    Admin(_): Admin,
    CallerQuery(caller, _): CallerQuery<NoParams>,
) -> Result<axum::Json<Vec<Explanation>>, ApiError> {
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

impl Fields for SparqlRequest {
    const FIELDS: &'static [Field] = &[Field::SparqlQuery];
}

/// (admin) Run a read-only SPARQL query over the store, with a time limit.
#[utoipa::path(post, path = "/v1/sparql", tag = "admin", request_body = SparqlRequest,
    responses((status = 200, description = "solutions, a boolean, or N-Triples lines", body = SparqlOutput)),
    security(("bearer" = [])))]
pub(crate) async fn sparql(
    State(s): State<Shared>,
    Admin(_): Admin,
    Json(req): Json<SparqlRequest>,
) -> Result<axum::Json<SparqlOutput>, ApiError> {
    let limit = s.limits.sparql_timeout;
    // The query's token is cancelled at `limit`, but the evaluator checks it
    // only between steps (a cross join of three scans answered 8.6 s after
    // a 10 s limit, and past the 30 s request limit on a loaded machine):
    // the answer does not wait for that check.
    let work = blocking(move || s.engine.sparql(&req.query, limit));
    match tokio::time::timeout(limit + SPARQL_GRACE, work).await {
        Ok(answer) => answer.map(axum::Json),
        Err(_) => Err(ApiError::from(crate::error::Error::Timeout(format!(
            "the query ran longer than {:.1} s and was cancelled",
            limit.as_secs_f32()
        )))),
    }
}

/// How long past its limit a cancelled query's answer may wait for the
/// evaluator to notice.
const SPARQL_GRACE: std::time::Duration = std::time::Duration::from_millis(250);
