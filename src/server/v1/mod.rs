//! `/v1`: one module per resource. Readers: search, resolve, select,
//! tools, domains, session failures, usage. Admins also: registration,
//! removal, reload, policy, SPARQL, and the airlock (sources, review queue,
//! health probes, gaps).

pub(crate) mod admin;
pub(crate) mod airlock;
pub(crate) mod calls;
pub(crate) mod me;
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
        .route("/v1/me", get(me::me))
        .route("/v1/search", post(search::search))
        .route("/v1/resolve", post(search::resolve))
        .route("/v1/select", post(search::select))
        .route("/v1/prompt", post(search::prompt))
        .route("/v1/sessions/{id}/failures", post(search::failure))
        .route("/v1/tools", get(tools::list))
        .route("/v1/tools/{name}", get(tools::one).delete(tools::remove))
        .route("/v1/tools/{name}/dependencies", get(tools::dependencies))
        .route("/v1/domains", get(tools::domains))
        .route("/v1/goals", get(tools::goals))
        .route("/v1/reload", post(admin::reload))
        .route("/v1/policy", get(admin::get_policy))
        .route("/v1/policy/explain", get(admin::explain))
        .route("/v1/policy/hidden", get(admin::hidden))
        .route("/v1/sparql", post(admin::sparql))
        .route(
            "/v1/sources",
            post(airlock::add_source).get(airlock::sources),
        )
        .route(
            "/v1/sources/{id}",
            axum::routing::delete(airlock::delete_source),
        )
        .route("/v1/sources/{id}/scan", post(airlock::scan))
        .route("/v1/pending", get(airlock::pending))
        .route("/v1/pending/{id}", get(airlock::pending_one))
        .route("/v1/pending/{id}/approve", post(airlock::approve))
        .route("/v1/pending/{id}/reject", post(airlock::reject))
        .route("/v1/usage", post(airlock::usage))
        .route("/v1/health/probe", post(airlock::probe))
        .route("/v1/gaps", get(airlock::gaps))
        .route("/v1/gaps/discover", post(airlock::discover))
        .route("/v1/call", post(calls::call))
        .route("/v1/calls", get(calls::calls))
        .route("/v1/usage/tools", get(calls::usage))
        .route("/v1/approvals", get(calls::approvals))
        .route("/v1/approvals/{id}", get(calls::approval))
        .route("/v1/approvals/{id}/approve", post(calls::approve))
        .route("/v1/approvals/{id}/reject", post(calls::reject))
        .layer(DefaultBodyLimit::max(body))
        .merge(uploads)
        .with_state(state)
}
