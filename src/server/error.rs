//! Errors on the wire: the one table of error codes (code, HTTP status,
//! type), the one JSON shape every 4xx and 5xx answer has
//! (`{"error": {"code", "type", "message", "field"?, "request_id"?}}`), and
//! the JSON and query extractors that answer malformed input in that shape,
//! naming the field and its code. 5xx details are logged with the request
//! id, never sent.

use crate::error::{CallFailure, Error, Field, Kind};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// Who is at fault, for a client deciding what to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorType {
    /// The request: fix it before sending it again.
    InvalidRequest,
    /// The key: another key, or none, is needed.
    Auth,
    /// The service is busy or a part it needs does not answer: retry.
    System,
    /// A fault of the service (logged with the request id).
    Internal,
}

/// The table of codes that are not a request field or a missing thing:
/// variant, stable code, status, type.
macro_rules! make_error_codes {
    ($($(#[$doc:meta])* $name:ident => $code:literal, $status:ident, $kind:ident;)*) => {
        /// A stable error code. Request fields and missing things have one
        /// each (from [`Field`] and [`Kind`]); the rest are in this table.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Code {
            $($(#[$doc])* $name,)*
            /// A request field with a bad value (`invalid_search_limit`).
            Field(Field),
            /// Nothing of this kind, for this caller (`tool_not_found`).
            NotFound(Kind),
            /// A call through the gateway refused or failed (`no_upstream`).
            Call(CallFailure),
        }

        impl Code {
            /// The table's own codes (fields and kinds not included).
            pub const TABLE: &'static [Code] = &[$(Code::$name,)*];

            pub fn name(self) -> &'static str {
                match self {
                    $(Code::$name => $code,)*
                    Code::Field(f) => f.code(),
                    Code::NotFound(k) => k.code(),
                    Code::Call(c) => c.code(),
                }
            }

            pub fn status(self) -> StatusCode {
                match self {
                    $(Code::$name => StatusCode::$status,)*
                    Code::Field(_) => StatusCode::BAD_REQUEST,
                    Code::NotFound(_) => StatusCode::NOT_FOUND,
                    Code::Call(c) => call_status(c),
                }
            }

            pub fn kind(self) -> ErrorType {
                match self {
                    $(Code::$name => ErrorType::$kind,)*
                    Code::Field(_) | Code::NotFound(_) => ErrorType::InvalidRequest,
                    Code::Call(CallFailure::NoUpstream) => ErrorType::InvalidRequest,
                    Code::Call(_) => ErrorType::System,
                }
            }
        }
    };
}

make_error_codes! {
    /// A request that is wrong as a whole (no one field at fault).
    InvalidRequest => "invalid_request", BAD_REQUEST, InvalidRequest;
    /// The body is not JSON, or has a syntax error (line and column said).
    MalformedJson => "malformed_json", BAD_REQUEST, InvalidRequest;
    /// A field the request type does not have.
    UnknownField => "unknown_field", BAD_REQUEST, InvalidRequest;
    /// The body is empty where one is needed.
    MissingBody => "missing_body", BAD_REQUEST, InvalidRequest;
    /// A manifest, Turtle or OpenAPI document that does not parse (its place said).
    InvalidInput => "invalid_input", BAD_REQUEST, InvalidRequest;
    /// A manifest parsed but one of its tools is unusable.
    InvalidTool => "invalid_tool", BAD_REQUEST, InvalidRequest;
    /// The change breaks a seed constraint; nothing was written.
    ConstraintViolation => "constraint_violation", BAD_REQUEST, InvalidRequest;
    /// Not `application/json` where JSON is expected.
    InvalidContentType => "invalid_content_type", UNSUPPORTED_MEDIA_TYPE, InvalidRequest;
    PayloadTooLarge => "payload_too_large", PAYLOAD_TOO_LARGE, InvalidRequest;
    UriTooLong => "uri_too_long", URI_TOO_LONG, InvalidRequest;
    HeadersTooLarge => "headers_too_large", REQUEST_HEADER_FIELDS_TOO_LARGE, InvalidRequest;
    /// No route with this path (see `/openapi.json`).
    RouteNotFound => "route_not_found", NOT_FOUND, InvalidRequest;
    MethodNotAllowed => "method_not_allowed", METHOD_NOT_ALLOWED, InvalidRequest;
    NotAcceptable => "not_acceptable", NOT_ACCEPTABLE, InvalidRequest;
    /// The change conflicts with the current state.
    Conflict => "conflict", CONFLICT, InvalidRequest;
    /// No `Authorization: Bearer KEY` header, on a server with keys.
    MissingAuthorizationHeader => "missing_authorization_header", UNAUTHORIZED, Auth;
    /// A key this server does not know.
    InvalidApiKey => "invalid_api_key", UNAUTHORIZED, Auth;
    /// An admin route asked with a reader key.
    AdminKeyRequired => "admin_key_required", FORBIDDEN, Auth;
    /// The key is bound to another organization or agent than the request names.
    CallerNotAllowed => "caller_not_allowed", FORBIDDEN, Auth;
    /// The service refuses the operation (switched off, or not for this key).
    Forbidden => "forbidden", FORBIDDEN, Auth;
    /// Over the concurrency limit and its queue (see `Retry-After`).
    TooManyRequests => "too_many_requests", TOO_MANY_REQUESTS, System;
    /// The request ran past its time limit; its work was stopped.
    Timeout => "timeout", GATEWAY_TIMEOUT, System;
    /// A part the request needs does not answer (a source, the model, the store).
    Unavailable => "unavailable", SERVICE_UNAVAILABLE, System;
    Internal => "internal", INTERNAL_SERVER_ERROR, Internal;
}

/// The status of a refused or failed call: the tool cannot be called
/// (422), a limit (429, retry later), the upstream failed (502), did not
/// answer in time (504), or the tool or its credentials are not there (503).
fn call_status(c: CallFailure) -> StatusCode {
    match c {
        CallFailure::NoUpstream => StatusCode::UNPROCESSABLE_ENTITY,
        CallFailure::Limited => StatusCode::TOO_MANY_REQUESTS,
        CallFailure::SwitchedOff | CallFailure::Credentials => StatusCode::SERVICE_UNAVAILABLE,
        CallFailure::Upstream | CallFailure::Output => StatusCode::BAD_GATEWAY,
        CallFailure::UpstreamTimeout => StatusCode::GATEWAY_TIMEOUT,
    }
}

impl Code {
    /// The code of a library error.
    pub fn of(e: &Error) -> Code {
        match e {
            Error::Parse { .. } => Code::InvalidInput,
            Error::InvalidTool { .. } => Code::InvalidTool,
            Error::Invalid { field: Some(f), .. } => Code::Field(*f),
            Error::Invalid { field: None, .. } => Code::InvalidRequest,
            Error::Violations(_) => Code::ConstraintViolation,
            Error::NotFound { kind, .. } => Code::NotFound(*kind),
            Error::Forbidden(_) => Code::Forbidden,
            Error::Conflict(_) => Code::Conflict,
            Error::Unavailable { .. } => Code::Unavailable,
            Error::Timeout(_) => Code::Timeout,
            Error::Call { failure, .. } => Code::Call(*failure),
            Error::Io { .. } | Error::Store { .. } | Error::Sparql { .. } | Error::Model { .. } => {
                Code::Internal
            }
        }
    }

    /// The code of an answer that left axum or a layer without one.
    pub fn of_status(status: StatusCode) -> Code {
        match status {
            StatusCode::NOT_FOUND => Code::RouteNotFound,
            StatusCode::METHOD_NOT_ALLOWED => Code::MethodNotAllowed,
            StatusCode::PAYLOAD_TOO_LARGE => Code::PayloadTooLarge,
            StatusCode::UNSUPPORTED_MEDIA_TYPE => Code::InvalidContentType,
            StatusCode::NOT_ACCEPTABLE => Code::NotAcceptable,
            StatusCode::URI_TOO_LONG => Code::UriTooLong,
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE => Code::HeadersTooLarge,
            StatusCode::UNAUTHORIZED => Code::MissingAuthorizationHeader,
            StatusCode::FORBIDDEN => Code::Forbidden,
            StatusCode::TOO_MANY_REQUESTS => Code::TooManyRequests,
            StatusCode::GATEWAY_TIMEOUT => Code::Timeout,
            StatusCode::SERVICE_UNAVAILABLE => Code::Unavailable,
            s if s.is_server_error() => Code::Internal,
            _ => Code::InvalidRequest,
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
    /// Stable, machine-readable (the README's error-code table):
    /// `invalid_search_limit`, `tool_not_found`, `invalid_api_key`,
    /// `too_many_requests`, `timeout`, `internal`…
    pub code: String,
    /// Who is at fault.
    #[serde(rename = "type")]
    pub kind: ErrorType,
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
    pub code: Code,
    pub message: String,
    pub field: Option<String>,
    /// Seconds to wait before retrying (429, 503).
    pub retry_after: Option<u64>,
}

impl ApiError {
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            field: None,
            retry_after: None,
        }
    }

    pub fn status(&self) -> StatusCode {
        self.code.status()
    }

    pub fn field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    /// A request field that is wrong, with its code and path.
    pub fn invalid(field: Field, message: impl Into<String>) -> Self {
        Self::new(Code::Field(field), message).field(field.path())
    }
}

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        let code = Code::of(&e);
        if code.kind() == ErrorType::Internal {
            // Logged inside the request's span, which carries its id.
            tracing::error!(error = %e.report(), "request failed");
            return Self::new(
                code,
                "internal error; see the server log for this request id",
            );
        }
        let message = match &e {
            Error::Violations(v) => {
                let lines: Vec<String> = v.iter().map(ToString::to_string).collect();
                format!("{e}: {}", lines.join("; "))
            }
            _ => e.report(),
        };
        Self {
            code,
            message,
            field: e.field().map(|(_, at)| at),
            retry_after: (code == Code::Unavailable).then_some(5),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.code.name().to_string(),
                kind: self.code.kind(),
                message: self.message,
                field: self.field,
                request_id: super::REQUEST_ID.try_with(Clone::clone).ok(),
            },
        };
        let status = self.code.status();
        let mut resp = (status, axum::Json(body)).into_response();
        if let Some(s) = self.retry_after
            && let Ok(v) = HeaderValue::from_str(&s.to_string())
        {
            resp.headers_mut().insert(header::RETRY_AFTER, v);
        }
        if status == StatusCode::UNAUTHORIZED {
            resp.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        resp
    }
}

/// A request type's fields, for naming a malformed one by its code: each
/// top-level key of its JSON (or query string) is one [`Field`].
pub(crate) trait Fields {
    const FIELDS: &'static [Field];

    /// The field a serde path (`limit`, `caller.org`, `candidates[3]`) is in.
    fn field_at(path: &str) -> Option<Field> {
        let plain: String = path
            .split('.')
            .map(|seg| seg.split('[').next().unwrap_or(seg))
            .collect::<Vec<_>>()
            .join(".");
        Self::FIELDS
            .iter()
            .copied()
            .filter(|f| plain == f.path() || plain.starts_with(&format!("{}.", f.path())))
            .max_by_key(|f| f.path().len())
    }
}

/// A JSON body, parsed strictly: a syntax error names its line and column,
/// a wrong type names the field and its code, an unknown field is named;
/// always the one error shape (axum's own extractor answers in plain text,
/// and 422 for types).
#[derive(Debug)]
pub struct Json<T>(pub T);

impl<T: DeserializeOwned + Fields, S: Send + Sync> FromRequest<S> for Json<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let ct = req
            .headers()
            .get(header::CONTENT_TYPE)
            .map(|v| v.to_str().unwrap_or("").to_ascii_lowercase());
        match ct {
            Some(ct) if ct.starts_with("application/json") || ct.contains("+json") => {}
            Some(ct) => {
                return Err(ApiError::new(
                    Code::InvalidContentType,
                    format!("expected a JSON body (Content-Type: application/json), got `{ct}`"),
                ));
            }
            None => {
                return Err(ApiError::new(
                    Code::InvalidContentType,
                    "expected a JSON body: send Content-Type: application/json",
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
            Code::PayloadTooLarge,
            "the request body is larger than this server accepts",
        )
    } else {
        ApiError::new(
            Code::InvalidRequest,
            format!("cannot read the body: {text}"),
        )
    }
}

/// Parses a JSON body into `T` with the place and code of any error.
pub fn parse_json<T: DeserializeOwned + Fields>(bytes: &[u8]) -> Result<T, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::new(
            Code::MissingBody,
            "the body is empty; expected a JSON object",
        ));
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value: T = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if inner.is_syntax() || inner.is_eof() {
            return ApiError::new(
                Code::MalformedJson,
                format!(
                    "malformed JSON at line {} column {}: {}",
                    inner.line(),
                    inner.column(),
                    strip_position(&inner.to_string())
                ),
            );
        }
        field_error::<T>(&path, &strip_position(&inner.to_string()))
    })?;
    de.end().map_err(|e| {
        ApiError::new(
            Code::MalformedJson,
            format!(
                "malformed JSON at line {} column {}: trailing characters after the object",
                e.line(),
                e.column()
            ),
        )
    })?;
    Ok(value)
}

/// A value serde refused at `path`: an unknown field, a missing one, or a
/// field of the wrong type or value (its code from `T`'s fields).
fn field_error<T: Fields>(path: &str, message: &str) -> ApiError {
    if let Some(name) = unknown_field(message) {
        let inside = path.rsplit_once('.').map(|(p, _)| p).unwrap_or("");
        let at = if inside.is_empty() || inside == "." {
            name
        } else {
            format!("{inside}.{name}")
        };
        return ApiError::new(Code::UnknownField, format!("unknown field: {message}")).field(at);
    }
    let at = missing_field(message)
        .map(|m| {
            if path == "." || path.is_empty() {
                m
            } else {
                format!("{path}.{m}")
            }
        })
        .unwrap_or_else(|| path.to_string());
    match T::field_at(&at) {
        Some(f) => ApiError::new(Code::Field(f), message).field(at),
        None if at != "." && !at.is_empty() => {
            ApiError::new(Code::InvalidRequest, message).field(at)
        }
        None => ApiError::new(Code::InvalidRequest, message),
    }
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

/// The name in "missing field `text`".
fn missing_field(message: &str) -> Option<String> {
    let rest = message.strip_prefix("missing field `")?;
    rest.split('`').next().map(str::to_string)
}

/// Query parameters, parsed strictly (an unknown parameter is a 400 naming
/// it; a bad value names its field and code).
#[derive(Debug)]
pub struct Query<T>(pub T);

impl<T: DeserializeOwned + Fields, S: Send + Sync> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let query = parts.uri.query().unwrap_or("");
        let de = serde_urlencoded::Deserializer::new(form_urlencoded::parse(query.as_bytes()));
        serde_path_to_error::deserialize(de)
            .map(Query)
            .map_err(|e| {
                let path = e.path().to_string();
                field_error::<T>(&path, &e.into_inner().to_string())
            })
    }
}

/// The caller's five query parameters (`org`, `agent`, `session`,
/// `channel`, `goal`) and a route's own ones, parsed strictly: the caller
/// is defined once ([`Caller`](crate::engine::Caller)), the rest by `T`.
#[derive(Debug)]
pub struct CallerQuery<T>(pub crate::engine::Caller, pub T);

/// The query parameters that are the caller's.
const CALLER_PARAMS: [&str; 5] = ["org", "agent", "session", "channel", "goal"];

impl<T: DeserializeOwned + Fields, S: Send + Sync> FromRequestParts<S> for CallerQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let query = parts.uri.query().unwrap_or("");
        let (caller, own): (Vec<_>, Vec<_>) = form_urlencoded::parse(query.as_bytes())
            .partition(|(k, _)| CALLER_PARAMS.contains(&k.as_ref()));
        let mut who = crate::engine::Caller::default();
        for (k, v) in caller {
            let slot = match k.as_ref() {
                "org" => &mut who.org,
                "agent" => &mut who.agent,
                "session" => &mut who.session,
                "channel" => &mut who.channel,
                _ => &mut who.goal,
            };
            *slot = Some(v.into_owned());
        }
        let own = serde_urlencoded::to_string(&own).unwrap_or_default();
        let de = serde_urlencoded::Deserializer::new(form_urlencoded::parse(own.as_bytes()));
        let rest = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            field_error::<T>(&path, &e.into_inner().to_string())
        })?;
        Ok(CallerQuery(who, rest))
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

    impl Fields for Req {
        const FIELDS: &'static [Field] = &[Field::SearchText, Field::SearchLimit];
    }

    #[test]
    fn every_kind_has_its_status() {
        let cases = [
            (Error::invalid("x"), 400),
            (Error::invalid_field(Field::SearchLimit, "x"), 400),
            (Error::not_found(Kind::Tool, "x"), 404),
            (Error::Forbidden("x".into()), 403),
            (Error::Conflict("x".into()), 409),
            (Error::unavailable_msg("x"), 503),
            (Error::Timeout("x".into()), 504),
            (Error::store_msg("x"), 500),
            (Error::Violations(Vec::new()), 400),
        ];
        for (e, status) in cases {
            assert_eq!(Code::of(&e).status().as_u16(), status, "{e}");
        }
        assert_eq!(
            Code::of(&Error::not_found(Kind::Tool, "x")).name(),
            "tool_not_found"
        );
    }

    #[test]
    fn the_table_has_one_entry_per_code() {
        let mut seen = std::collections::HashSet::new();
        for c in Code::TABLE {
            assert!(seen.insert(c.name()), "{} twice", c.name());
        }
        for f in Field::ALL {
            assert!(
                seen.insert(f.code()),
                "{} is a field and a table code",
                f.code()
            );
        }
    }

    #[test]
    fn malformed_json_names_the_place_the_field_and_its_code() {
        let e = parse_json::<Req>(b"{\"text\": \"a\",\n \"limit\": }").unwrap_err();
        assert!(e.message.contains("line 2 column"), "{}", e.message);
        assert_eq!(e.code, Code::MalformedJson);
        let e = parse_json::<Req>(br#"{"txet": "book a table"}"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("txet"), "{}", e.message);
        assert_eq!(e.code, Code::UnknownField);
        let e = parse_json::<Req>(br#"{"text": "a", "limit": "ten"}"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("limit"), "{}", e.message);
        assert_eq!(e.code.name(), "invalid_search_limit");
        let e = parse_json::<Req>(br#"{"text": "a", "limit": -1}"#).unwrap_err();
        assert_eq!(e.code.name(), "invalid_search_limit");
        let e = parse_json::<Req>(b"{}").unwrap_err();
        assert!(e.message.contains("missing field `text`"), "{}", e.message);
        assert_eq!(e.code.name(), "invalid_search_text");
        let e = parse_json::<Req>(b"  ").unwrap_err();
        assert_eq!(e.code, Code::MissingBody);
        assert!(parse_json::<Req>(br#"{"text": "a"} x"#).is_err());
        assert!(parse_json::<Req>(br#"{"text": "a"}"#).is_ok());
    }
}
