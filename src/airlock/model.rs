//! The airlock's records: sources, review items, their health, reviews,
//! and the reports of scans and probes.

use super::pin::{self, Pinned};
use crate::error::{Error, Field, Result};
use crate::model::ToolDescriptor;
use crate::policy::limits::{Budget, Grant, UsagePolicy};
use crate::screen::Reason;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What kind of place a source is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    /// An OpenAPI 3 spec: a file or an http(s) URL.
    Openapi,
    /// An MCP server URL (Streamable HTTP); its `tools/list` is read.
    Mcp,
    /// A folder of manifests (MCP, OpenAPI, JSONL).
    Directory,
}

/// Parses a snake_case enum value the way its JSON form is written (one
/// spelling for the API, the command line and the store).
pub fn parse_name<T: serde::de::DeserializeOwned>(
    field: Field,
    s: &str,
    expected: &str,
) -> Result<T> {
    let v = s.trim().to_ascii_lowercase();
    serde_json::from_value(Value::String(v.clone())).map_err(|_| {
        let name = field.path();
        Error::invalid_field(field, format!("unknown {name} `{v}` ({expected})"))
    })
}

impl std::str::FromStr for SourceKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        parse_name(Field::SourceKind, s, "openapi, mcp or directory")
    }
}

/// A source to add.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewSource {
    pub kind: SourceKind,
    /// A file, a folder, or an http(s) URL.
    pub location: String,
    /// Rescan every this many seconds (off when absent).
    #[serde(default)]
    pub schedule_seconds: Option<u64>,
    /// A URL probed for the health of every tool of this source.
    #[serde(default)]
    pub health_url: Option<String>,
    /// Private hosts, addresses or networks (`10.1.0.0/16`) this source's
    /// scans and its tools' calls may reach, besides the operator's
    /// `--airlock-allow` for every source.
    #[serde(default)]
    pub allow: Vec<String>,
}

/// A registered source of tool definitions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ToolSource {
    pub id: String,
    pub kind: SourceKind,
    pub location: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule_seconds: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health_url: Option<String>,
    pub created_at: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_scanned_at: Option<u64>,
    /// Why the last scan failed (cleared by a successful one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// Tools the last successful scan found.
    #[serde(default)]
    pub tools: usize,
    /// Added by gap discovery for this verb.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discovered_for: Option<String>,
    /// Private hosts this source (its scans, its tools' calls) may reach.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
}

/// Where a discovered tool stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Waiting for review; not searchable.
    Pending,
    /// Registered and searchable, pinned to the approved content.
    Approved,
    /// Refused; stays refused across rescans until its content changes.
    Rejected,
    /// Approved once, then its content changed: out of search until reviewed.
    Changed,
    /// No longer offered by its source: out of search.
    Missing,
}

impl std::str::FromStr for Status {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        parse_name(
            Field::ReviewStatus,
            s,
            "pending, approved, rejected, changed or missing",
        )
    }
}

/// A person's decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Review {
    /// `approved` or `rejected`.
    pub action: String,
    pub by: String,
    pub at: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// An approval over a `block` finding: why (and the codes overridden).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub override_reason: Option<String>,
}

/// A tool's health as its probes saw it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Health {
    pub url: String,
    pub active: bool,
    pub consecutive_failures: u32,
    pub consecutive_successes: u32,
    pub checks: u64,
    pub failures: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_latency_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_checked_at: Option<u64>,
}

/// What one check does to a tool's health: `Some(Some(why))` switches it
/// off, `Some(None)` back on.
pub type Switch = Option<Option<String>>;

impl Health {
    /// Counts one check (a probe or a call) into the health; says whether
    /// it switches the tool: off after `fail_after` failures in a row, on
    /// again after `recover_after` successes. `what` names the checks in
    /// the reason ("health checks of URL", "calls").
    pub fn count(
        &mut self,
        ok: bool,
        latency_ms: f64,
        error: Option<&str>,
        (fail_after, recover_after): (u32, u32),
        what: &str,
    ) -> Switch {
        self.checks += 1;
        self.last_checked_at = Some(crate::policy::limits::now());
        self.last_latency_ms = Some((latency_ms * 10.0).round() / 10.0);
        if ok {
            self.consecutive_failures = 0;
            self.consecutive_successes += 1;
            self.last_error = None;
            if !self.active && self.consecutive_successes >= recover_after {
                self.active = true;
                return Some(None);
            }
            return None;
        }
        self.failures += 1;
        self.consecutive_successes = 0;
        self.consecutive_failures += 1;
        self.last_error = error.map(str::to_string);
        if self.active && self.consecutive_failures >= fail_after {
            self.active = false;
            return Some(Some(format!(
                "{} consecutive failed {what} (last: {})",
                self.consecutive_failures,
                error.unwrap_or("?")
            )));
        }
        None
    }
}

/// A discovered tool under review.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PendingTool {
    pub id: String,
    /// The source id.
    pub source: String,
    pub name: String,
    pub status: Status,
    /// Screening findings and the item's history (changed, missing, gap),
    /// worst first.
    pub reasons: Vec<Reason>,
    /// The worst reason's severity: `block` items are approved only with
    /// an override and a reason.
    #[serde(default)]
    pub severity: crate::screen::Severity,
    /// The learned screen's probability that the tool is poisoned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f32>,
    /// What changed since the approved (pinned) version.
    #[serde(default)]
    pub diff: Vec<pin::Change>,
    /// sha256 of the current content's canonical form.
    pub hash: String,
    /// The hash approval pinned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned_hash: Option<String>,
    /// The tool as the importer read it.
    #[schema(value_type = Object)]
    pub manifest: ToolDescriptor,
    #[schema(value_type = Object)]
    pub content: Pinned,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Object)]
    pub pinned: Option<Pinned>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<UsagePolicy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<Health>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<Review>,
    /// Categories the approval set (IRIs); they override the manifest's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<String>,
    pub discovered_at: u64,
    pub updated_at: u64,
}

impl PendingTool {
    /// The descriptor registered for this item: its manifest, with the
    /// categories its approval set and none other. A source's own
    /// `x-toolgraph.categories` are not trusted: an external server naming
    /// `support` would put its tool into every support agent's profile.
    /// Without approved categories the catalog infers one.
    pub(crate) fn registered(&self) -> ToolDescriptor {
        let mut d = self.manifest.clone();
        d.categories = self.categories.clone();
        d
    }

    /// Orders the reasons worst first and sets the item's severity from
    /// them. Reasons written before screening had severities take their
    /// code's (an `instruction` blocks), so an old finding is not
    /// approvable without an override either.
    pub(super) fn settle_severity(&mut self) {
        use crate::screen::Severity;
        for r in &mut self.reasons {
            if r.severity == Severity::Info {
                r.severity = match r.code.as_str() {
                    "instruction" | "sensitive_path" | "hidden_content" | "confusable" => {
                        Severity::Block
                    }
                    "shadows" => Severity::Warn,
                    _ => Severity::Info,
                };
            }
        }
        crate::screen::worst_first(&mut self.reasons);
        self.severity = crate::screen::severity_of(&self.reasons);
    }

    /// A tool a scan found for the first time: pending review.
    pub(super) fn discovered(
        id: String,
        source: &str,
        manifest: ToolDescriptor,
        content: Pinned,
        reasons: Vec<Reason>,
        at: u64,
    ) -> Self {
        Self {
            id,
            source: source.to_string(),
            name: manifest.name.clone(),
            status: Status::Pending,
            reasons,
            severity: crate::screen::Severity::Info,
            score: None,
            diff: Vec::new(),
            hash: content.hash(),
            pinned_hash: None,
            manifest,
            content,
            pinned: None,
            policy: None,
            health: None,
            review: None,
            categories: Vec::new(),
            discovered_at: at,
            updated_at: at,
        }
    }
}

/// An approval: the usage policy, and a health check.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Approval {
    #[serde(default)]
    pub rate_limit: Option<u32>,
    #[serde(default)]
    pub budget: Option<Budget>,
    #[serde(default)]
    pub access: Option<Grant>,
    /// What one call through the gateway costs against a `cost` budget
    /// (default 1).
    #[serde(default)]
    pub cost_per_call: Option<f64>,
    /// A URL probed on a schedule (2xx = healthy); default: the source's.
    #[serde(default)]
    pub health_url: Option<String>,
    /// Why an item with a `block` screening finding is approved all the
    /// same (required for such an item; recorded in its review).
    #[serde(default)]
    pub override_reason: Option<String>,
    /// The categories the tool belongs to (`booking`, or IRIs declared by
    /// the ontology): what agents' profiles and goals name. Empty: the
    /// manifest's own, else one inferred from the curated tools it
    /// resembles.
    #[serde(default)]
    pub categories: Vec<String>,
}

/// What one scan found.
#[derive(Debug, Clone, Default, Serialize, utoipa::ToSchema)]
pub struct ScanReport {
    pub source: String,
    pub discovered: usize,
    /// Item ids by what happened to them.
    pub new: Vec<String>,
    pub changed: Vec<String>,
    pub missing: Vec<String>,
    pub unchanged: usize,
    /// Came back with the approved content: searchable again.
    pub restored: Vec<String>,
}

/// One health probe's outcome.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct ProbeReport {
    pub item: String,
    pub tool: String,
    pub ok: bool,
    pub latency_ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Switched off or back on by this probe.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub switched: Option<String>,
}

/// What a discovery run did.
#[derive(Debug, Clone, Default, Serialize, utoipa::ToSchema)]
pub struct DiscoveryReport {
    /// Gaps looked at, most frequent first.
    pub gaps: Vec<String>,
    /// Pending items marked as possibly filling a gap.
    pub candidates: Vec<String>,
    /// Sources added from the API directory.
    pub sources: Vec<String>,
    /// Directory entries that could not be read (the run goes on).
    pub errors: Vec<String>,
}

pub(super) fn short_hash(parts: &[&str]) -> String {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update([0u8]);
    }
    h.finalize()
        .iter()
        .take(6)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The store source an approved tool is registered under.
pub fn store_source(source: &str, name: &str) -> String {
    format!("airlock/{source}/{name}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A source's own categories are not trusted: only the approval's
    /// reach the catalog (else the catalog infers one).
    #[test]
    fn a_source_cannot_pick_its_tools_categories() {
        let manifest = ToolDescriptor {
            id: "t".into(),
            name: "t".into(),
            description: "d".into(),
            categories: vec!["support".into()],
            ..ToolDescriptor::default()
        };
        let content = Pinned {
            name: "t".into(),
            description: "d".into(),
            input_schema: serde_json::json!({}),
            upstream: None,
        };
        let mut item = PendingTool::discovered("i".into(), "s", manifest, content, Vec::new(), 0);
        assert!(item.registered().categories.is_empty());
        item.categories = vec!["https://toolgraph.dev/category/information".into()];
        assert_eq!(item.registered().categories, item.categories);
    }
}
