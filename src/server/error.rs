//! The one table from library errors to HTTP: a status and a stable code
//! per kind. 5xx details are logged with the request, never sent.

use crate::error::Error;
use axum::http::StatusCode;

/// The HTTP status and the stable error code of an error.
pub(crate) fn status_and_code(e: &Error) -> (StatusCode, &'static str) {
    match e {
        Error::Parse { .. } => (StatusCode::BAD_REQUEST, "invalid_input"),
        Error::InvalidTool { .. } => (StatusCode::BAD_REQUEST, "invalid_tool"),
        Error::Invalid { .. } => (StatusCode::BAD_REQUEST, "invalid_request"),
        Error::Violations(_) => (StatusCode::BAD_REQUEST, "constraint_violation"),
        Error::NotFound { .. } => (StatusCode::NOT_FOUND, "not_found"),
        Error::Forbidden(_) => (StatusCode::FORBIDDEN, "forbidden"),
        Error::Conflict(_) => (StatusCode::CONFLICT, "conflict"),
        Error::Unavailable(_) => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
        Error::Io { .. } | Error::Store(_) | Error::Sparql(_) | Error::Model(_) => {
            (StatusCode::INTERNAL_SERVER_ERROR, "internal")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_its_status() {
        let cases = [
            (Error::invalid("x"), 400),
            (Error::not_found("tool", "x"), 404),
            (Error::Forbidden("x".into()), 403),
            (Error::Conflict("x".into()), 409),
            (Error::Unavailable("x".into()), 503),
            (Error::Store("x".into()), 500),
            (Error::Violations(Vec::new()), 400),
        ];
        for (e, status) in cases {
            assert_eq!(status_and_code(&e).0.as_u16(), status, "{e}");
        }
    }
}
