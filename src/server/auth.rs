//! Keys and roles, resolved once per request at the edge: the key (a
//! `Bearer` token) gives a role (reader or admin) and may bind the caller to
//! an organization and an agent, which a request cannot then change.
//!
//! Keys come from `TOOLGRAPH_ADMIN_KEY` (one admin key) and/or a keys file
//! (`--keys FILE`, JSON: `[{"key": "…", "role": "reader", "org": "acme",
//! "agent": "acme_support", "name": "support bot"}]`). With no key at all the
//! server is open and binds to loopback only. Keys are compared in constant
//! time and never logged.

use super::error::{ApiError, Code};
use crate::engine::Caller;
use crate::error::{Error, Result};
use axum::extract::{FromRequestParts, Request};
use axum::http::header;
use axum::http::request::Parts;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// What a key may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Search, resolve, select, listings.
    Reader,
    /// Everything, including registration, reload, policy and SPARQL.
    Admin,
}

/// One key of a keys file.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyEntry {
    pub key: String,
    pub role: Role,
    /// The organization every request with this key acts as.
    #[serde(default)]
    pub org: Option<String>,
    /// The agent every request with this key acts as.
    #[serde(default)]
    pub agent: Option<String>,
    /// A name for logs and metrics (never the key).
    #[serde(default)]
    pub name: Option<String>,
}

impl std::fmt::Debug for KeyEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyEntry")
            .field("role", &self.role)
            .field("org", &self.org)
            .field("agent", &self.agent)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// The keys a server accepts (none: open).
#[derive(Debug, Clone, Default)]
pub struct Keys {
    entries: Vec<KeyEntry>,
}

/// Who a request is, once its key is checked.
#[derive(Debug, Clone)]
pub struct Principal {
    pub role: Role,
    pub org: Option<String>,
    pub agent: Option<String>,
    pub name: String,
    /// Which key, distinct for distinct keys (a digest of the key, never
    /// the key): what sessions and MCP sessions are owned by. Names are
    /// for people and may repeat (two unnamed reader keys are both
    /// "reader").
    pub id: String,
}

/// The id of a key: the first 8 bytes of its SHA-256, in hex.
fn key_id(key: &str) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(key.as_bytes());
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

impl Keys {
    /// Keys from an admin key and/or a keys file.
    pub fn load(admin: Option<&str>, file: Option<&Path>) -> Result<Self> {
        let mut entries = Vec::new();
        if let Some(k) = admin.filter(|k| !k.trim().is_empty()) {
            entries.push(KeyEntry {
                key: k.trim().to_string(),
                role: Role::Admin,
                org: None,
                agent: None,
                name: Some("admin".into()),
            });
        }
        if let Some(path) = file {
            let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
            let file_name = path.display().to_string();
            let mut de = serde_json::Deserializer::from_str(&text);
            let listed: Vec<KeyEntry> = serde_path_to_error::deserialize(&mut de).map_err(|e| {
                let pointer = e.path().to_string();
                let inner = e.into_inner();
                Error::Parse {
                    location: crate::error::Location {
                        file: file_name.clone(),
                        line: Some(inner.line() as u64),
                        column: Some(inner.column() as u64),
                        pointer: (pointer != ".").then_some(pointer),
                    },
                    message: inner.to_string(),
                }
            })?;
            for (i, k) in listed.iter().enumerate() {
                if k.key.trim().len() < 16 {
                    return Err(Error::parse(
                        &file_name,
                        None,
                        None,
                        format!("key #{i}: keys must be at least 16 characters"),
                    ));
                }
            }
            entries.extend(listed);
        }
        Ok(Self { entries })
    }

    /// Keys given directly (tests, embedding).
    pub fn from_entries(entries: Vec<KeyEntry>) -> Self {
        Self { entries }
    }

    /// True when no key is configured (the server is open).
    pub fn is_open(&self) -> bool {
        self.entries.is_empty()
    }

    /// The principal of a request, from its `Authorization: Bearer` header.
    pub fn check(&self, req: &Request) -> std::result::Result<Principal, ApiError> {
        if self.is_open() {
            return Ok(Principal {
                role: Role::Admin,
                org: None,
                agent: None,
                name: "open".into(),
                id: "open".into(),
            });
        }
        let token = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
            })
            .map(str::trim)
            .ok_or_else(|| {
                ApiError::new(
                    Code::MissingAuthorizationHeader,
                    "this server needs a key: Authorization: Bearer KEY",
                )
            })?;
        // Every entry is compared, in constant time, whatever matches.
        let mut found: Option<&KeyEntry> = None;
        for e in &self.entries {
            if constant_time_eq(e.key.as_bytes(), token.as_bytes()) {
                found = Some(e);
            }
        }
        let e = found.ok_or_else(|| ApiError::new(Code::InvalidApiKey, "unknown key"))?;
        Ok(Principal {
            role: e.role,
            org: e.org.clone(),
            agent: e.agent.clone(),
            name: e
                .name
                .clone()
                .unwrap_or_else(|| format!("{:?}", e.role).to_lowercase()),
            id: key_id(&e.key),
        })
    }
}

/// Equal bytes, in time that depends only on the lengths (subtle).
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    use subtle::ConstantTimeEq;
    bool::from(a.ct_eq(b))
}

/// The request's principal, as the key check left it in the extensions.
fn principal(parts: &Parts) -> std::result::Result<Principal, ApiError> {
    parts.extensions.get::<Principal>().cloned().ok_or_else(|| {
        ApiError::new(
            Code::Internal,
            "the request reached a handler without its key checked",
        )
    })
}

/// Any key (a reader's or an admin's): handlers that take a `Reader` serve
/// every key.
#[derive(Debug, Clone)]
pub struct Reader(pub Principal);

impl<S: Send + Sync> FromRequestParts<S> for Reader {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> std::result::Result<Self, ApiError> {
        principal(parts).map(Reader)
    }
}

/// An admin key: a handler that takes an `Admin` cannot be reached with a
/// reader key (answered 403 `admin_key_required` before the handler runs).
#[derive(Debug, Clone)]
pub struct Admin(pub Principal);

impl<S: Send + Sync> FromRequestParts<S> for Admin {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> std::result::Result<Self, ApiError> {
        let p = principal(parts)?;
        match p.role {
            Role::Admin => Ok(Admin(p)),
            Role::Reader => Err(ApiError::new(
                Code::AdminKeyRequired,
                "this route needs an admin key",
            )),
        }
    }
}

impl Principal {
    /// The caller a request acts as: the key's organization and agent, which
    /// the request may repeat but not change.
    pub fn caller(&self, requested: Caller) -> std::result::Result<Caller, ApiError> {
        let mut caller = requested;
        caller.key = Some(self.id.clone());
        for (bound, asked, what) in [
            (&self.org, &mut caller.org, "org"),
            (&self.agent, &mut caller.agent, "agent"),
        ] {
            match (bound, asked.as_ref()) {
                (Some(b), Some(a)) if !a.eq_ignore_ascii_case(b) => {
                    return Err(ApiError::new(
                        Code::CallerNotAllowed,
                        format!("this key acts as {what} `{b}`; it cannot act as {what} `{a}`"),
                    )
                    .field(format!("caller.{what}")));
                }
                (Some(b), _) => *asked = Some(b.clone()),
                (None, _) => {}
            }
        }
        Ok(caller)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_time_comparison_is_equality() {
        assert!(constant_time_eq(b"secret-key-123456", b"secret-key-123456"));
        assert!(!constant_time_eq(
            b"secret-key-123456",
            b"secret-key-123457"
        ));
        assert!(!constant_time_eq(b"secret", b"secret-longer"));
        assert!(constant_time_eq(b"", b""));
    }

    #[test]
    fn a_bound_key_cannot_act_as_another_org() {
        let p = Principal {
            role: Role::Reader,
            org: Some("acme".into()),
            agent: None,
            name: "t".into(),
            id: key_id("reader-key-0123456789"),
        };
        let c = p.caller(Caller::default()).unwrap();
        assert_eq!(c.key.as_deref(), Some(p.id.as_str()));
        assert_ne!(
            key_id("reader-key-0123456789"),
            key_id("reader-key-0123456780")
        );
        assert_eq!(c.org.as_deref(), Some("acme"));
        let err = p
            .caller(Caller {
                org: Some("corner_cafe".into()),
                ..Caller::default()
            })
            .unwrap_err();
        assert_eq!(err.code, Code::CallerNotAllowed);
        assert_eq!(err.status().as_u16(), 403);
    }

    #[test]
    fn key_files_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("keys.json");
        std::fs::write(&f, r#"[{"key": "short", "role": "reader"}]"#).unwrap();
        assert!(
            Keys::load(None, Some(&f))
                .unwrap_err()
                .to_string()
                .contains("16")
        );
        std::fs::write(&f, r#"[{"key": "0123456789abcdef", "role": "boss"}]"#).unwrap();
        let e = Keys::load(None, Some(&f)).unwrap_err().to_string();
        assert!(e.contains("keys.json") && e.contains("role"), "{e}");
        std::fs::write(
            &f,
            r#"[{"key": "0123456789abcdef", "role": "reader", "org": "acme"}]"#,
        )
        .unwrap();
        let k = Keys::load(Some("admin-key-0123456789"), Some(&f)).unwrap();
        assert!(!k.is_open());
        assert!(
            format!("{k:?}").find("0123456789abcdef").is_none(),
            "keys never printed"
        );
    }
}
