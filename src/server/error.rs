//! Errors on the wire: the one table from library errors to an HTTP status
//! and a stable code, the one JSON shape every 4xx and 5xx answer has
//! (`{"error": {"code", "message", "field"?, "request_id"?}}`), and the JSON
//! and query extractors that answer malformed input in that shape, naming
//! the place. 5xx details are logged with the request id, never sent.

use crate::error::Error;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// The HTTP status and the stable error code of a library error.
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

/// The body of every error answer.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

/// What went wrong, where.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ErrorDetail {
    /// Stable, machine-readable: `invalid_request`, `invalid_input`,
    /// `unauthorized`, `forbidden`, `not_found`, `payload_too_large`,
    /// `too_many_requests`, `timeout`, `unavailable`, `internal`…
    pub code: String,
    pub message: String,
    /// The request field or parameter at fault, when one is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// The id in the `x-request-id` header and in the server's logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// An error answer.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    pub field: Option<String>,
    /// Seconds to wait before retrying (429, 503).
    pub retry_after: Option<u64>,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            field: None,
            retry_after: None,
        }
    }

    pub fn field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_request", message)
    }
}

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        let (status, code) = status_and_code(&e);
        let field = match &e {
            Error::Invalid { field, .. } => field.clone(),
            _ => None,
        };
        if status == StatusCode::INTERNAL_SERVER_ERROR {
            // Logged inside the request's span, which carries its id.
            tracing::error!(error = %e, "request failed");
            return Self::new(
                status,
                code,
                "internal error; see the server log for this request id",
            );
        }
        let message = match &e {
            Error::Violations(v) => {
                let lines: Vec<String> = v.iter().map(ToString::to_string).collect();
                format!("{e}: {}", lines.join("; "))
            }
            _ => e.to_string(),
        };
        Self {
            status,
            code,
            message,
            field,
            retry_after: None,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.code.to_string(),
                message: self.message,
                field: self.field,
                request_id: super::REQUEST_ID.try_with(Clone::clone).ok(),
            },
        };
        let mut resp = (self.status, axum::Json(body)).into_response();
        if let Some(s) = self.retry_after
            && let Ok(v) = HeaderValue::from_str(&s.to_string())
        {
            resp.headers_mut().insert(header::RETRY_AFTER, v);
        }
        if self.status == StatusCode::UNAUTHORIZED {
            resp.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        resp
    }
}

/// A JSON body, parsed strictly: a syntax error names its line and column,
/// a wrong type or an unknown field names the field; always the one error
/// shape (axum's own extractor answers in plain text, and 422 for types).
#[derive(Debug)]
pub struct Json<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for Json<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        if let Some(ct) = req.headers().get(header::CONTENT_TYPE) {
            let ct = ct.to_str().unwrap_or("").to_ascii_lowercase();
            if !(ct.starts_with("application/json") || ct.contains("+json")) {
                return Err(ApiError::new(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "unsupported_media_type",
                    format!("expected a JSON body (Content-Type: application/json), got `{ct}`"),
                ));
            }
        }
        let bytes = axum::body::Bytes::from_request(req, state)
            .await
            .map_err(|e| body_error(&e.body_text(), e.status()))?;
        parse_json(&bytes).map(Json)
    }
}

/// Turns a body read failure into the error shape (413 past the limit).
pub fn body_error(text: &str, status: StatusCode) -> ApiError {
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::new(
            status,
            "payload_too_large",
            "the request body is larger than this server accepts",
        )
    } else {
        ApiError::new(
            status,
            "invalid_request",
            format!("cannot read the body: {text}"),
        )
    }
}

/// Parses a JSON body into `T` with the place of any error.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::bad_request(
            "the body is empty; expected a JSON object",
        ));
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value: T = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let place = if inner.is_syntax() || inner.is_eof() {
            format!(" at line {} column {}", inner.line(), inner.column())
        } else {
            String::new()
        };
        let message = strip_position(&inner.to_string());
        let field =
            unknown_field(&message).or_else(|| (path != "." && path != "?").then(|| path.clone()));
        let mut err = ApiError::bad_request(format!("malformed JSON{place}: {message}"));
        err.field = field;
        err
    })?;
    de.end().map_err(|e| {
        ApiError::bad_request(format!(
            "malformed JSON at line {} column {}: trailing characters after the object",
            e.line(),
            e.column()
        ))
    })?;
    Ok(value)
}

/// serde's "… at line 1 column 12" suffix, dropped (the place is said first).
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

/// The name in "unknown field `txet`, expected …".
fn unknown_field(message: &str) -> Option<String> {
    let rest = message.strip_prefix("unknown field `")?;
    rest.split('`').next().map(str::to_string)
}

/// Query parameters, parsed strictly (an unknown parameter is a 400 naming it).
#[derive(Debug)]
pub struct Query<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let query = parts.uri.query().unwrap_or("");
        let de = serde_urlencoded::Deserializer::new(form_urlencoded::parse(query.as_bytes()));
        serde_path_to_error::deserialize(de)
            .map(Query)
            .map_err(|e| {
                let path = e.path().to_string();
                let message = e.into_inner().to_string();
                let field = unknown_field(&message).or_else(|| (path != ".").then_some(path));
                let mut err = ApiError::bad_request(format!("bad query parameter: {message}"));
                err.field = field;
                err
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Req {
        text: String,
        #[serde(default)]
        limit: usize,
    }

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

    #[test]
    fn malformed_json_names_the_place_and_the_field() {
        let e = parse_json::<Req>(b"{\"text\": \"a\",\n \"limit\": }").unwrap_err();
        assert!(e.message.contains("line 2 column"), "{}", e.message);
        let e = parse_json::<Req>(br#"{"txet": "book a table"}"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("txet"), "{}", e.message);
        let e = parse_json::<Req>(br#"{"text": "a", "limit": "ten"}"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("limit"), "{}", e.message);
        let e = parse_json::<Req>(b"{}").unwrap_err();
        assert!(e.message.contains("missing field `text`"), "{}", e.message);
        let e = parse_json::<Req>(b"  ").unwrap_err();
        assert!(e.message.contains("empty"));
        assert!(parse_json::<Req>(br#"{"text": "a"} x"#).is_err());
        assert!(parse_json::<Req>(br#"{"text": "a"}"#).is_ok());
    }
}
