//! Who the key is: what a client (the console) needs to know before it
//! shows admin screens or fixes the caller's organization.

use crate::server::Shared;
use crate::server::auth::{Reader, Role};
use crate::server::error::ApiError;
use axum::extract::State;
use serde::Serialize;

/// The request's key as the server resolved it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub(crate) struct Me {
    /// `reader` or `admin`.
    pub role: String,
    /// The organization every request with this key acts as.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub org: Option<String>,
    /// The agent every request with this key acts as.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The key's name (never the key).
    pub name: String,
    /// The server has no keys: anyone on loopback is an admin.
    pub open: bool,
}

/// The role and binding of the request's key.
#[utoipa::path(get, path = "/v1/me", tag = "catalog",
    responses((status = 200, description = "the key's role and binding", body = Me)),
    security(("bearer" = [])))]
pub(crate) async fn me(
    State(s): State<Shared>,
    Reader(p): Reader,
) -> Result<axum::Json<Me>, ApiError> {
    Ok(axum::Json(Me {
        role: match p.role {
            Role::Admin => "admin",
            Role::Reader => "reader",
        }
        .into(),
        org: p.org,
        agent: p.agent,
        name: p.name,
        open: s.keys.is_open(),
    }))
}
