//! The OpenAPI document, generated from the handlers and the types (utoipa),
//! so it cannot drift from them.

use axum::Router;
use axum::routing::get;
use utoipa::OpenApi;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "toolgraph",
        description = "Find and disambiguate the right tool for an AI planner, among the tools its caller may use."
    ),
    paths(
        super::v1::me::me,
        super::v1::search::search,
        super::v1::search::resolve,
        super::v1::search::select,
        super::v1::search::failure,
        super::v1::tools::list,
        super::v1::tools::one,
        super::v1::tools::dependencies,
        super::v1::tools::domains,
        super::v1::tools::register,
        super::v1::tools::remove,
        super::v1::admin::reload,
        super::v1::admin::get_policy,
        super::v1::admin::put_policy,
        super::v1::admin::explain,
        super::v1::admin::hidden,
        super::v1::admin::sparql,
        super::v1::airlock::add_source,
        super::v1::airlock::sources,
        super::v1::airlock::delete_source,
        super::v1::airlock::scan,
        super::v1::airlock::pending,
        super::v1::airlock::pending_one,
        super::v1::airlock::approve,
        super::v1::airlock::reject,
        super::v1::airlock::usage,
        super::v1::airlock::probe,
        super::v1::airlock::gaps,
        super::v1::airlock::discover,
        super::health::healthz,
        super::health::readyz,
        super::health::scrape,
    ),
    components(schemas(super::error::ErrorBody, super::error::ErrorDetail)),
    modifiers(&Bearer),
    tags(
        (name = "ranking", description = "search, resolve, select (reader keys)"),
        (name = "catalog", description = "the tools a caller may see (reader keys)"),
        (name = "admin", description = "registration, reload, policy, SPARQL (admin keys)"),
        (name = "ops", description = "health, readiness, metrics (no key)")
    )
)]
pub(crate) struct ApiDoc;

struct Bearer;

impl utoipa::Modify for Bearer {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

pub(crate) fn routes() -> Router {
    Router::new().route(
        "/openapi.json",
        get(|| async { axum::Json(ApiDoc::openapi()) }),
    )
}
