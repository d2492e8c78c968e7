//! Upstream credentials: per organization and name (an integration), from
//! a secrets file the operator keeps private (`--secrets FILE`, refused
//! unless only its owner may read it) or from environment variables the
//! file names. A secret is sent to its upstream and nowhere else: never
//! logged, never returned, never in metrics, errors, audit records or the
//! console; [`Secrets::scrub`] takes any that an upstream echoes back out
//! of what the gateway passes on.
//!
//! ```json
//! {"acme": {"petstore": "sk-live-…", "github": {"env": "ACME_GITHUB_TOKEN"}},
//!  "*":    {"weather": {"env": "WEATHER_KEY"}}}
//! ```
//! `*` holds secrets every organization uses (and callers without one).

use crate::error::{Error, Result};
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;

/// The organization whose secrets every caller may use.
const EVERYONE: &str = "*";

/// Secrets by (organization, name). Debug output shows names only.
#[derive(Default, Clone)]
pub struct Secrets {
    by: HashMap<(String, String), String>,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut names: Vec<String> = self.by.keys().map(|(o, n)| format!("{o}/{n}")).collect();
        names.sort();
        f.debug_struct("Secrets").field("names", &names).finish()
    }
}

impl Secrets {
    /// Reads the secrets file; refused when others than its owner may read
    /// or write it (mode must be 0600 or 0400), or when a named environment
    /// variable is unset. Errors name the place, never a value.
    pub fn load(path: &Path) -> Result<Self> {
        let io = |e| Error::Io {
            path: path.to_path_buf(),
            source: e,
        };
        let meta = std::fs::metadata(path).map_err(io)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = meta.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                return Err(Error::Forbidden(format!(
                    "{}: the secrets file has mode {mode:o}; make it readable by its owner only (chmod 600)",
                    path.display()
                )));
            }
        }
        let _ = meta;
        let text = std::fs::read_to_string(path).map_err(io)?;
        Self::parse(&path.display().to_string(), &text, |v| {
            std::env::var(v).ok()
        })
    }

    /// Parses the secrets text; `env` reads an environment variable.
    pub fn parse(file: &str, text: &str, env: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let root: Value = serde_json::from_str(text).map_err(|e| {
            Error::parse(
                file,
                Some(e.line() as u64),
                Some(e.column() as u64),
                "the secrets file is not JSON (its text is not repeated here)",
            )
        })?;
        let Value::Object(orgs) = root else {
            return Err(Error::parse_at(
                file,
                "/",
                "the secrets file is an object of organizations",
            ));
        };
        let mut by = HashMap::new();
        for (org, names) in orgs {
            let Value::Object(names) = names else {
                return Err(Error::parse_at(
                    file,
                    format!("/{org}"),
                    "an organization's secrets are an object of names",
                ));
            };
            for (name, v) in names {
                let at = format!("/{org}/{name}");
                let value = match &v {
                    Value::String(s) if !s.is_empty() => s.clone(),
                    Value::Object(o) => match o.get("env").and_then(Value::as_str) {
                        Some(var) => env(var).filter(|s| !s.is_empty()).ok_or_else(|| {
                            Error::parse_at(
                                file,
                                at.clone(),
                                format!("environment variable `{var}` is not set"),
                            )
                        })?,
                        None => {
                            return Err(Error::parse_at(
                                file,
                                at,
                                "a secret is a string or {\"env\": \"VARIABLE\"}",
                            ));
                        }
                    },
                    _ => {
                        return Err(Error::parse_at(
                            file,
                            at,
                            "a secret is a non-empty string or {\"env\": \"VARIABLE\"}",
                        ));
                    }
                };
                by.insert((org.clone(), name), value);
            }
        }
        Ok(Secrets { by })
    }

    /// The secret `name` of organization `org` (its local name), else the
    /// one every organization uses.
    pub fn get(&self, org: Option<&str>, name: &str) -> Option<&str> {
        org.and_then(|o| self.by.get(&(o.to_string(), name.to_string())))
            .or_else(|| self.by.get(&(EVERYONE.to_string(), name.to_string())))
            .map(String::as_str)
    }

    pub fn is_empty(&self) -> bool {
        self.by.is_empty()
    }

    /// `text` with every secret replaced by `[secret]`.
    pub fn scrub(&self, text: &str) -> String {
        let mut out = text.to_string();
        for s in self.by.values() {
            if s.len() >= 4 && out.contains(s.as_str()) {
                out = out.replace(s.as_str(), "[secret]");
            }
        }
        out
    }

    /// Every string in `v` scrubbed.
    pub fn scrub_json(&self, v: &mut Value) {
        if self.by.is_empty() {
            return;
        }
        match v {
            Value::String(s) => *s = self.scrub(s),
            Value::Array(a) => a.iter_mut().for_each(|x| self.scrub_json(x)),
            Value::Object(o) => o.values_mut().for_each(|x| self.scrub_json(x)),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_by_org_then_everyone_and_errors_name_the_place_not_the_value() {
        let s = Secrets::parse(
            "s.json",
            r#"{"acme": {"petstore": "sk-acme-1", "gh": {"env": "GH"}}, "*": {"petstore": "sk-all"}}"#,
            |v| (v == "GH").then(|| "ghp-xyz".to_string()),
        )
        .unwrap();
        assert_eq!(s.get(Some("acme"), "petstore"), Some("sk-acme-1"));
        assert_eq!(s.get(Some("corner_cafe"), "petstore"), Some("sk-all"));
        assert_eq!(s.get(None, "petstore"), Some("sk-all"));
        assert_eq!(s.get(Some("acme"), "gh"), Some("ghp-xyz"));
        assert_eq!(s.get(Some("corner_cafe"), "gh"), None);
        assert!(!format!("{s:?}").contains("sk-acme-1"));
        assert_eq!(s.scrub("token sk-acme-1 echoed"), "token [secret] echoed");

        let e = Secrets::parse("s.json", r#"{"acme": {"x": {"env": "NOPE"}}}"#, |_| None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("/acme/x") && e.contains("NOPE"), "{e}");
        let e = Secrets::parse("s.json", r#"{"acme": {"x": "sk-sec"#, |_| None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("s.json:1") && !e.contains("sk-sec"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn a_file_others_may_read_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("secrets.json");
        std::fs::write(&p, r#"{"acme": {"a": "sk-1234"}}"#).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = Secrets::load(&p).unwrap_err().to_string();
        assert!(e.contains("chmod 600"), "{e}");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(
            Secrets::load(&p).unwrap().get(Some("acme"), "a"),
            Some("sk-1234")
        );
    }
}
