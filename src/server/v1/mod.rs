//! `/v1`: one module per resource. Readers: search, resolve, select,
//! tools, domains, session failures. Admins also: registration, removal,
//! reload, policy, SPARQL.

pub(crate) mod admin;
pub(crate) mod search;
pub(crate) mod tools;

use super::Shared;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};

pub(crate) fn routes(state: Shared) -> Router {
    let upload = state.limits.upload_bytes;
    let body = state.limits.body_bytes;
    let uploads = Router::new()
        .route("/v1/tools", post(tools::register))
        .route("/v1/policy", axum::routing::put(admin::put_policy))
        .layer(DefaultBodyLimit::max(upload));
    Router::new()
        .route("/v1/search", post(search::search))
        .route("/v1/resolve", post(search::resolve))
        .route("/v1/select", post(search::select))
        .route("/v1/sessions/{id}/failures", post(search::failure))
        .route("/v1/tools", get(tools::list))
        .route("/v1/tools/{name}", get(tools::one).delete(tools::remove))
        .route("/v1/tools/{name}/dependencies", get(tools::dependencies))
        .route("/v1/domains", get(tools::domains))
        .route("/v1/reload", post(admin::reload))
        .route("/v1/policy", get(admin::get_policy))
        .route("/v1/policy/explain", get(admin::explain))
        .route("/v1/sparql", post(admin::sparql))
        .layer(DefaultBodyLimit::max(body))
        .merge(uploads)
        .with_state(state)
}
