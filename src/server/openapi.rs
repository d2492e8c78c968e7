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
        super::v1::search::prompt,
        super::v1::search::failure,
        super::v1::tools::list,
        super::v1::tools::one,
        super::v1::tools::dependencies,
        super::v1::tools::domains,
        super::v1::tools::goals,
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
        super::v1::calls::call,
        super::v1::calls::calls,
        super::v1::calls::usage,
        super::v1::calls::approvals,
        super::v1::calls::approval,
        super::v1::calls::approve,
        super::v1::calls::reject,
        super::health::healthz,
        super::health::readyz,
        super::health::scrape,
    ),
    components(schemas(super::error::ErrorBody, super::error::ErrorDetail, super::error::ErrorType)),
    modifiers(&Bearer, &ErrorResponses),
    tags(
        (name = "ranking", description = "search, resolve, select (reader keys)"),
        (name = "catalog", description = "the tools a caller may see (reader keys)"),
        (name = "admin", description = "registration, reload, policy, SPARQL (admin keys)"),
        (name = "calls", description = "calling tools through toolgraph: the call, held calls, the audit log, usage"),
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

/// The error answers every `/v1` operation can give, added to each once
/// here instead of in every handler's attribute (a handler lists only its
/// own: 404, 409, 503 where they mean something specific).
struct ErrorResponses;

impl utoipa::Modify for ErrorResponses {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::{ContentBuilder, Ref, RefOr, ResponseBuilder};
        let answer = |description: &str| {
            RefOr::T(
                ResponseBuilder::new()
                    .description(description)
                    .content(
                        "application/json",
                        ContentBuilder::new()
                            .schema(Some(Ref::from_schema_name("ErrorBody")))
                            .build(),
                    )
                    .build(),
            )
        };
        for (path, item) in openapi.paths.paths.iter_mut() {
            if !path.starts_with("/v1/") {
                continue;
            }
            for op in [
                &mut item.get,
                &mut item.post,
                &mut item.put,
                &mut item.delete,
            ]
            .into_iter()
            .flatten()
            {
                let has_body = op.request_body.is_some();
                let mut common = vec![
                    ("400", "a malformed request, naming the field and its code"),
                    ("401", "no key, or an unknown one"),
                    (
                        "403",
                        "the key may not use this route or act as this caller",
                    ),
                    ("429", "over the concurrency limit and its queue"),
                    (
                        "500",
                        "a fault of the service (see the log for the request id)",
                    ),
                    ("503", "a part the request needs does not answer"),
                    ("504", "over the time limit; the work was stopped"),
                ];
                if has_body {
                    common.push(("413", "the body is larger than the server accepts"));
                    common.push(("415", "not JSON where JSON is expected"));
                }
                for (status, description) in common {
                    op.responses
                        .responses
                        .entry(status.to_string())
                        .or_insert_with(|| answer(description));
                }
            }
        }
    }
}

pub(crate) fn routes() -> Router {
    Router::new().route(
        "/openapi.json",
        get(|| async { axum::Json(ApiDoc::openapi()) }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_v1_operation_documents_the_common_errors_and_no_internal_parameter() {
        let doc = serde_json::to_value(ApiDoc::openapi()).expect("the document serializes");
        let paths = doc["paths"].as_object().expect("paths");
        let mut operations = 0;
        for (path, item) in paths.iter().filter(|(p, _)| p.starts_with("/v1/")) {
            for (method, op) in item.as_object().expect("a path item") {
                operations += 1;
                for status in ["400", "401", "403", "429", "500", "503", "504"] {
                    assert!(
                        op["responses"][status].is_object(),
                        "{method} {path} lacks {status}"
                    );
                }
                let params = op["parameters"].as_array().cloned().unwrap_or_default();
                assert!(
                    !params.iter().any(|p| p["name"] == "key"),
                    "{method} {path} documents the caller's internal key"
                );
            }
        }
        assert!(operations >= 30, "{operations}");
        let tools = &paths["/v1/tools"]["get"]["parameters"];
        for name in [
            "org", "agent", "session", "channel", "goal", "limit", "offset",
        ] {
            assert!(
                tools
                    .as_array()
                    .is_some_and(|ps| ps.iter().any(|p| p["name"] == name)),
                "/v1/tools lacks the {name} parameter"
            );
        }
    }
}
