//! Capability gaps: verbs resolve could not substitute, and where a tool
//! that fills one might be found (a pending item, or an API listed in an
//! API directory in the APIs.guru `list.json` format).

use super::{GAPS, json, read};
use crate::engine::{Engine, Observer};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};

/// Distinct verbs counted at most (a verb beyond is not counted: a caller
/// cannot grow the log without bound).
pub const MAX_GAPS: usize = 10_000;
/// Characters of a verb and of a reason kept.
const MAX_VERB: usize = 128;
const MAX_REASON: usize = 1_000;

/// A verb resolve had to decompose, counted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Gap {
    pub verb: String,
    /// Decompose outcomes for this verb.
    pub count: u64,
    pub first_seen: u64,
    pub last_seen: u64,
    /// The last outcome's reason.
    pub last_reason: String,
    /// Pending items discovery found for it (ids).
    #[serde(default)]
    pub candidates: Vec<String>,
}

/// The capability gaps, counted as the engine tells of decomposed verbs
/// (it subscribes as the engine's [`Observer`]), kept as records.
#[derive(Debug)]
pub struct GapLog {
    engine: Weak<Engine>,
    gaps: Mutex<BTreeMap<String, Gap>>,
}

fn read_gaps(engine: &Engine) -> Result<BTreeMap<String, Gap>> {
    engine
        .store()
        .records(GAPS)?
        .into_iter()
        .map(|(id, text)| Ok((id.clone(), read(GAPS, &id, &text)?)))
        .collect()
}

impl GapLog {
    pub(super) fn open(engine: &Arc<Engine>) -> Result<Self> {
        Ok(Self {
            gaps: Mutex::new(read_gaps(engine)?),
            engine: Arc::downgrade(engine),
        })
    }

    /// Re-reads the gaps another replica counted.
    pub(super) fn reread(&self) -> Result<()> {
        if let Some(engine) = self.engine.upgrade() {
            let gaps = read_gaps(&engine)?;
            *self.gaps.lock().unwrap_or_else(PoisonError::into_inner) = gaps;
        }
        Ok(())
    }

    /// The gaps, most frequent first.
    pub fn all(&self) -> Vec<Gap> {
        let mut out: Vec<Gap> = self
            .gaps
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .cloned()
            .collect();
        out.sort_by(|a, b| b.count.cmp(&a.count).then(a.verb.cmp(&b.verb)));
        out
    }

    /// Changes one gap (if counted) and writes it.
    pub(super) fn update(&self, verb: &str, change: impl FnOnce(&mut Gap)) -> Result<()> {
        let gap = {
            let mut gaps = self.gaps.lock().unwrap_or_else(PoisonError::into_inner);
            let Some(g) = gaps.get_mut(verb) else {
                return Ok(());
            };
            change(g);
            g.clone()
        };
        self.save(&gap)
    }

    fn save(&self, gap: &Gap) -> Result<()> {
        match self.engine.upgrade() {
            Some(engine) => engine
                .store()
                .put_records(GAPS, &[(gap.verb.clone(), Some(json(gap)?))]),
            None => Ok(()),
        }
    }

    fn record(&self, verb: &str, reason: &str) -> Result<()> {
        let verb: String = verb.trim().to_uppercase().chars().take(MAX_VERB).collect();
        let t = crate::policy::limits::now();
        let gap = {
            let mut gaps = self.gaps.lock().unwrap_or_else(PoisonError::into_inner);
            if !gaps.contains_key(&verb) && gaps.len() >= MAX_GAPS {
                return Ok(());
            }
            let gap = gaps.entry(verb.clone()).or_insert_with(|| Gap {
                verb: verb.clone(),
                count: 0,
                first_seen: t,
                last_seen: t,
                last_reason: String::new(),
                candidates: Vec::new(),
            });
            gap.count += 1;
            gap.last_seen = t;
            gap.last_reason = reason.chars().take(MAX_REASON).collect();
            gap.clone()
        };
        self.save(&gap)
    }
}

impl Observer for GapLog {
    fn decomposed(&self, verb: &str, reason: &str) {
        if let Err(e) = self.record(verb, reason) {
            tracing::warn!(error = %e.report(), verb, "cannot count a capability gap");
        }
    }
}

/// Words of a verb that say nothing about what would fill it.
const GENERIC: &[&str] = &[
    "get", "make", "do", "the", "a", "an", "of", "to", "for", "and", "with", "new", "item", "data",
    "info", "run", "perform", "handle", "manage",
];

fn stem(word: &str) -> String {
    word.chars().take(6).collect()
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 1)
        .map(|w| stem(&w.to_lowercase()))
        .collect()
}

/// The verb's telling words, stemmed (`TRANSLATE_TEXT` -> `transl`, `text`).
pub fn verb_terms(verb: &str) -> Vec<String> {
    let mut out: Vec<String> = verb
        .split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| w.len() > 1 && !GENERIC.contains(&w.as_str()))
        .map(|w| stem(&w))
        .collect();
    out.dedup();
    out
}

/// True when every telling word of the verb occurs in `text` (stemmed).
pub fn fills(terms: &[String], text: &str) -> bool {
    if terms.is_empty() {
        return false;
    }
    let have = words(text);
    terms.iter().all(|t| have.contains(t))
}

/// One API of a directory.
#[derive(Debug, Clone, PartialEq)]
pub struct DirectoryApi {
    pub name: String,
    pub title: String,
    pub description: String,
    /// The spec's location (URL, or a path relative to the directory file).
    pub spec: String,
}

/// Reads an APIs.guru `list.json`: `{"provider:api": {"preferred": "v1",
/// "versions": {"v1": {"info": {..}, "swaggerUrl": .., "swaggerYamlUrl": ..}}}}`.
pub fn parse_directory(file: &str, text: &str) -> Result<Vec<DirectoryApi>> {
    let v: Value = serde_json::from_str(text).map_err(|e| {
        Error::parse(
            file,
            Some(e.line() as u64),
            Some(e.column() as u64),
            e.to_string(),
        )
    })?;
    let apis = v
        .as_object()
        .ok_or_else(|| Error::parse_at(file, "", "an API directory is a JSON object"))?;
    let mut out = Vec::new();
    for (name, api) in apis {
        let pointer = format!("/{}", crate::import::escape_pointer(name));
        let versions = api
            .get("versions")
            .and_then(Value::as_object)
            .ok_or_else(|| {
                Error::parse_at(
                    file,
                    format!("{pointer}/versions"),
                    "missing `versions` object",
                )
            })?;
        let preferred = api.get("preferred").and_then(Value::as_str);
        let Some((vname, version)) = preferred
            .and_then(|p| versions.get_key_value(p))
            .or_else(|| versions.iter().next_back())
        else {
            continue;
        };
        let at = format!(
            "{pointer}/versions/{}",
            crate::import::escape_pointer(vname)
        );
        let spec = version
            .get("swaggerUrl")
            .or_else(|| version.get("swaggerYamlUrl"))
            .and_then(Value::as_str)
            .ok_or_else(|| {
                Error::parse_at(file, format!("{at}/swaggerUrl"), "missing the spec's URL")
            })?;
        let info = version.get("info");
        let field = |k: &str| {
            info.and_then(|i| i.get(k))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let categories = info
            .and_then(|i| i.get("x-apisguru-categories"))
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_default();
        out.push(DirectoryApi {
            name: name.clone(),
            title: field("title"),
            description: format!("{} {categories}", field("description")),
            spec: spec.to_string(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbs_match_directory_entries_by_their_telling_words() {
        let t = verb_terms("TRANSLATE_TEXT");
        assert_eq!(t, vec!["transl", "text"]);
        assert!(fills(
            &t,
            "Translation API: translates text between 100 languages"
        ));
        assert!(!fills(&t, "Text to speech"));
        assert!(verb_terms("GET_DATA").is_empty());
        let dir = r#"{"example.com:translate": {"preferred": "1.0", "versions": {"1.0": {
            "info": {"title": "Translate", "description": "Translates text", "x-apisguru-categories": ["text"]},
            "swaggerUrl": "specs/translate.json"}}}}"#;
        let apis = parse_directory("list.json", dir).unwrap();
        assert_eq!(apis[0].spec, "specs/translate.json");
        let err = parse_directory("list.json", r#"{"x": {"versions": {"1": {}}}}"#).unwrap_err();
        assert!(
            err.to_string()
                .contains("list.json at /x/versions/1/swaggerUrl"),
            "{err}"
        );
    }
}
