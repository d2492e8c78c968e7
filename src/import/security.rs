//! An OpenAPI operation's security requirement as the gateway sends it: the
//! first scheme toolgraph can send (bearer, OAuth2/OpenID Connect bearer
//! tokens, an API key in a header or the query).

use super::Resolver;
use crate::model::{AuthScheme, UpstreamAuth};
use serde_json::{Map, Value};

/// The operation's security (its own, else the document's): the first
/// requirement whose scheme toolgraph can send (bearer, API key in a
/// header or the query). The secret is named after the integration the
/// operation declares, else the API's title, else the scheme.
pub(super) fn operation_auth(
    top: &Map<String, Value>,
    op: &Map<String, Value>,
    refs: &dyn Resolver,
    api_title: Option<&str>,
    integration: Option<&str>,
) -> Option<UpstreamAuth> {
    let requirements = op
        .get("security")
        .or_else(|| top.get("security"))?
        .as_array()?;
    let schemes = top
        .get("components")
        .and_then(|c| c.get("securitySchemes"))?;
    for req in requirements {
        for scheme_name in req.as_object()?.keys() {
            let Some(scheme) = schemes.get(scheme_name) else {
                continue;
            };
            let Ok(scheme) = refs.resolve(scheme) else {
                continue;
            };
            let ty = scheme.get("type").and_then(Value::as_str);
            let (kind, name) = match ty {
                Some("http")
                    if scheme
                        .get("scheme")
                        .and_then(Value::as_str)
                        .is_some_and(|s| s.eq_ignore_ascii_case("bearer")) =>
                {
                    (AuthScheme::Bearer, None)
                }
                Some("oauth2" | "openIdConnect") => (AuthScheme::Bearer, None),
                Some("apiKey") => {
                    let name = scheme.get("name").and_then(Value::as_str)?.to_string();
                    match scheme.get("in").and_then(Value::as_str) {
                        Some("header") => (AuthScheme::Header, Some(name)),
                        Some("query") => (AuthScheme::Query, Some(name)),
                        _ => continue,
                    }
                }
                _ => continue,
            };
            let secret = integration
                .map(str::to_string)
                .or_else(|| api_title.map(|t| t.to_ascii_lowercase()))
                .unwrap_or_else(|| scheme_name.clone());
            return Some(UpstreamAuth {
                secret,
                scheme: kind,
                name,
            });
        }
    }
    None
}
