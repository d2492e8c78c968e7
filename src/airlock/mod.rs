//! The airlock: no external tool reaches a planner without review.
//!
//! Operators register **sources** (an OpenAPI spec, an MCP server, a folder
//! of manifests). A scan reads a source (bounded in time and size, see
//! [`fetch`]) and turns every tool it offers into a [`PendingTool`]:
//! screened ([`screen`]), hashed ([`pin`]) and waiting for a person. Nothing
//! pending, rejected, changed or missing is in the store, so it is never
//! searched, listed or counted. **Approve** registers the tool through the
//! engine (constellation + embedding, store source `airlock/<source>/<name>`)
//! with its usage policy (rate limit, budget, access: judged by `policy/`),
//! and pins its content hash. A rescan with another hash moves it to
//! `changed` and out of search, with a diff; one that no longer lists it
//! marks it `missing`. **Health** checks switch a tool off after N failed
//! probes in a row and back on after M successes. **Gaps** count the verbs
//! resolve had to decompose; discovery (off by default) looks for tools that
//! would fill them and queues them, never straight into search.
//!
//! Everything here lives in the store as records (kinds `airlock_source`,
//! `airlock_item`, `airlock_gap`) and survives a restart; usage counters and
//! switched-off tools are the engine's (`policy::limits`).

pub mod fetch;
pub mod gaps;
pub mod pin;
pub mod screen;

use crate::engine::{Decision, Engine, Resolution, ResolveRequest};
use crate::error::{Error, Result};
use crate::import::{self, Format};
use crate::model::ToolDescriptor;
use crate::policy::limits::{Budget, Grant, UsagePolicy, now};
use gaps::Gap;
use pin::Pinned;
use screen::Reason;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

const SOURCES: &str = "airlock_source";
const ITEMS: &str = "airlock_item";
const GAPS: &str = "airlock_gap";

/// How the airlock works.
#[derive(Debug, Clone)]
pub struct AirlockOptions {
    /// Time and size limit of one scan (and of a directory read).
    pub bounds: fetch::Bounds,
    /// Consecutive failed health checks that switch a tool off.
    pub fail_after: u32,
    /// Consecutive successful checks that switch it back on.
    pub recover_after: u32,
    /// Time limit of one health probe.
    pub probe_timeout: Duration,
    /// Look for tools that fill capability gaps (off by default).
    pub discovery: bool,
    /// An API directory in the APIs.guru `list.json` format (path or URL).
    pub directory: Option<String>,
    /// Gaps discovery works on, most frequent first.
    pub gap_top: usize,
    /// Probe health checks this often under `serve` (`None`: only when asked).
    pub health_every: Option<Duration>,
    /// Run gap discovery this often under `serve` (when it is on).
    pub discover_every: Duration,
}

impl Default for AirlockOptions {
    fn default() -> Self {
        Self {
            bounds: fetch::Bounds::default(),
            fail_after: 3,
            recover_after: 2,
            probe_timeout: Duration::from_secs(5),
            discovery: false,
            directory: None,
            gap_top: 5,
            health_every: Some(Duration::from_secs(60)),
            discover_every: Duration::from_secs(3600),
        }
    }
}

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
    field: &str,
    s: &str,
    expected: &str,
) -> Result<T> {
    let v = s.trim().to_ascii_lowercase();
    serde_json::from_value(Value::String(v.clone()))
        .map_err(|_| Error::invalid_field(field, format!("unknown {field} `{v}` ({expected})")))
}

impl std::str::FromStr for SourceKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        parse_name("kind", s, "openapi, mcp or directory")
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
            "status",
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

/// A discovered tool under review.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PendingTool {
    pub id: String,
    /// The source id.
    pub source: String,
    pub name: String,
    pub status: Status,
    /// Screening findings and the item's history (changed, missing, gap).
    pub reasons: Vec<Reason>,
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
    pub discovered_at: u64,
    pub updated_at: u64,
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
    /// A URL probed on a schedule (2xx = healthy); default: the source's.
    #[serde(default)]
    pub health_url: Option<String>,
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

#[derive(Debug, Default)]
struct State {
    sources: BTreeMap<String, ToolSource>,
    items: BTreeMap<String, PendingTool>,
    gaps: BTreeMap<String, Gap>,
}

/// The airlock over one engine.
#[derive(Debug)]
pub struct Airlock {
    engine: Arc<Engine>,
    options: AirlockOptions,
    state: Mutex<State>,
}

fn short_hash(parts: &[&str]) -> String {
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

fn json<T: Serialize>(v: &T) -> Result<String> {
    serde_json::to_string(v).map_err(|e| Error::Store(format!("cannot write a record: {e}")))
}

fn read<T: for<'de> Deserialize<'de>>(kind: &str, id: &str, text: &str) -> Result<T> {
    serde_json::from_str(text)
        .map_err(|e| Error::Store(format!("record {kind}/{id} is unreadable: {e}")))
}

/// A discovered tool with the raw manifest node it came from.
struct Found {
    descriptor: ToolDescriptor,
    raw: Option<Value>,
}

/// Every string under a raw manifest node, with its JSON pointer.
fn strings(v: &Value, at: &str, out: &mut Vec<(String, String)>) {
    match v {
        Value::String(s) => out.push((at.to_string(), s.clone())),
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                strings(x, &format!("{at}/{i}"), out);
            }
        }
        Value::Object(m) => {
            for (k, x) in m {
                strings(x, &format!("{at}/{}", import::escape_pointer(k)), out);
            }
        }
        _ => {}
    }
}

/// The raw document of a manifest text (JSON or YAML), for screening.
fn raw_document(text: &str) -> Option<Value> {
    let body = text.trim_start_matches('\u{feff}');
    serde_json::from_str(body)
        .ok()
        .or_else(|| serde_yaml_ng::from_str(body).ok())
}

/// The node of `doc` a descriptor's `source` (`file#/pointer`) points at.
fn node<'a>(doc: &'a Value, descriptor: &ToolDescriptor) -> Option<&'a Value> {
    let pointer = descriptor.source.rsplit_once('#')?.1;
    doc.pointer(pointer)
}

fn content_of(found: &Found) -> Pinned {
    let d = &found.descriptor;
    let schema = found
        .raw
        .as_ref()
        .and_then(|raw| {
            raw.get("inputSchema").cloned().or_else(|| {
                let params = raw.get("parameters");
                let body = raw.get("requestBody");
                (params.is_some() || body.is_some())
                    .then(|| serde_json::json!({"parameters": params, "requestBody": body}))
            })
        })
        .unwrap_or_else(|| serde_json::to_value(&d.params).unwrap_or(Value::Null));
    Pinned {
        name: d.name.clone(),
        description: d.description.clone(),
        input_schema: schema,
    }
}

/// Screening findings for one discovered tool.
fn screening<'a>(found: &Found, registered: impl IntoIterator<Item = &'a str>) -> Vec<Reason> {
    let d = &found.descriptor;
    let mut texts: Vec<(String, String)> = Vec::new();
    match &found.raw {
        Some(raw) => strings(raw, "", &mut texts),
        None => {
            texts.push(("/description".into(), d.description.clone()));
            for p in &d.params {
                texts.push((
                    format!("/params/{}/description", p.name),
                    p.description.clone(),
                ));
            }
        }
    }
    let mut out = screen::screen_name(&d.name, registered);
    for (field, text) in texts {
        let field = field.trim_start_matches('/');
        for r in screen::screen_text(if field.is_empty() { "text" } else { field }, &text) {
            if !out
                .iter()
                .any(|o| o.code == r.code && o.message == r.message)
            {
                out.push(r);
            }
        }
    }
    out
}

/// The airlock's state as the store holds it.
fn read_state(store: &dyn crate::graph::GraphStore) -> Result<State> {
    let mut state = State::default();
    for (id, text) in store.records(SOURCES)? {
        state.sources.insert(id.clone(), read(SOURCES, &id, &text)?);
    }
    for (id, text) in store.records(ITEMS)? {
        state.items.insert(id.clone(), read(ITEMS, &id, &text)?);
    }
    for (id, text) in store.records(GAPS)? {
        state.gaps.insert(id.clone(), read(GAPS, &id, &text)?);
    }
    Ok(state)
}

impl Airlock {
    /// Opens the airlock over `engine`, reading its state from the store.
    pub fn open(engine: Arc<Engine>, options: AirlockOptions) -> Result<Self> {
        let state = read_state(engine.store())?;
        Ok(Self {
            engine,
            options,
            state: Mutex::new(state),
        })
    }

    /// Re-reads sources, review items and gaps from the store: another
    /// replica sharing a graph server changed them.
    pub fn reread(&self) -> Result<()> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        *state = read_state(self.engine.store())?;
        Ok(())
    }

    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    pub fn options(&self) -> &AirlockOptions {
        &self.options
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn save_source(&self, s: &ToolSource) -> Result<()> {
        self.engine
            .store()
            .put_records(SOURCES, &[(s.id.clone(), Some(json(s)?))])
    }

    fn save_items<'a>(&self, items: impl IntoIterator<Item = &'a PendingTool>) -> Result<()> {
        let records: Vec<(String, Option<String>)> = items
            .into_iter()
            .map(|i| Ok((i.id.clone(), Some(json(i)?))))
            .collect::<Result<_>>()?;
        if records.is_empty() {
            return Ok(());
        }
        self.engine.store().put_records(ITEMS, &records)
    }

    // ------------------------------------------------------------ sources

    /// Adds a source (not scanned yet). The same kind and location twice is
    /// a conflict.
    pub fn add_source(&self, new: NewSource) -> Result<ToolSource> {
        self.add_source_for(new, None)
    }

    fn add_source_for(&self, new: NewSource, gap: Option<&str>) -> Result<ToolSource> {
        let location = new.location.trim().to_string();
        if location.is_empty() {
            return Err(Error::invalid_field(
                "location",
                "a source needs a location",
            ));
        }
        match new.kind {
            SourceKind::Mcp if !fetch::is_url(&location) => {
                return Err(Error::invalid_field(
                    "location",
                    format!("an MCP source is an http(s) URL, not `{location}`"),
                ));
            }
            SourceKind::Directory if !std::path::Path::new(&location).is_dir() => {
                return Err(Error::invalid_field(
                    "location",
                    format!("`{location}` is not a folder"),
                ));
            }
            SourceKind::Openapi
                if !fetch::is_url(&location) && !std::path::Path::new(&location).is_file() =>
            {
                return Err(Error::invalid_field(
                    "location",
                    format!("`{location}` is neither an http(s) URL nor a file"),
                ));
            }
            _ => {}
        }
        if let Some(h) = &new.health_url
            && !fetch::is_url(h)
        {
            return Err(Error::invalid_field(
                "health_url",
                "a health check is an http(s) URL",
            ));
        }
        if new.schedule_seconds == Some(0) {
            return Err(Error::invalid_field(
                "schedule_seconds",
                "a schedule is at least 1 s",
            ));
        }
        let kind = serde_json::to_value(new.kind).unwrap_or(Value::Null);
        let id = format!(
            "src-{}",
            short_hash(&[kind.as_str().unwrap_or(""), &location])
        );
        let mut state = self.lock();
        if let Some(existing) = state.sources.get(&id) {
            return Err(Error::Conflict(format!(
                "source `{}` already reads {location}",
                existing.id
            )));
        }
        let source = ToolSource {
            id: id.clone(),
            kind: new.kind,
            location,
            schedule_seconds: new.schedule_seconds,
            health_url: new.health_url,
            created_at: now(),
            last_scanned_at: None,
            last_error: None,
            tools: 0,
            discovered_for: gap.map(str::to_string),
        };
        self.save_source(&source)?;
        state.sources.insert(id, source.clone());
        Ok(source)
    }

    pub fn sources(&self) -> Vec<ToolSource> {
        self.lock().sources.values().cloned().collect()
    }

    pub fn source(&self, id: &str) -> Result<ToolSource> {
        self.lock()
            .sources
            .get(id)
            .cloned()
            .ok_or_else(|| Error::not_found("source", id))
    }

    /// Deletes a source, its review items, and the tools approved from it
    /// (they leave search).
    pub fn delete_source(&self, id: &str) -> Result<()> {
        let mut state = self.lock();
        if !state.sources.contains_key(id) {
            return Err(Error::not_found("source", id));
        }
        let items: Vec<PendingTool> = state
            .items
            .values()
            .filter(|i| i.source == id)
            .cloned()
            .collect();
        let stores: Vec<String> = items.iter().map(|i| store_source(id, &i.name)).collect();
        self.engine.unload_sources(&stores)?;
        for i in &items {
            self.engine.set_usage_policy(&i.name, None)?;
            self.engine.set_inactive(&i.name, None)?;
        }
        let gone: Vec<(String, Option<String>)> =
            items.iter().map(|i| (i.id.clone(), None)).collect();
        self.engine.store().put_records(ITEMS, &gone)?;
        self.engine
            .store()
            .put_records(SOURCES, &[(id.to_string(), None)])?;
        for i in &items {
            state.items.remove(&i.id);
        }
        state.sources.remove(id);
        Ok(())
    }

    /// Reads what a source offers (no state touched).
    fn discover(&self, source: &ToolSource) -> Result<Vec<Found>> {
        let bounds = self.options.bounds;
        let parse = |file: &str, text: &str, format: Format| -> Result<Vec<Found>> {
            let raw = raw_document(text);
            Ok(import::parse_manifest(file, text, format)?
                .into_iter()
                .map(|descriptor| Found {
                    raw: raw.as_ref().and_then(|doc| node(doc, &descriptor)).cloned(),
                    descriptor,
                })
                .collect())
        };
        match source.kind {
            SourceKind::Openapi => {
                let text = fetch::text(&source.location, bounds)?;
                parse(&source.location, &text, Format::OpenApi)
            }
            SourceKind::Mcp => {
                let listed = fetch::mcp_tools(&source.location, bounds)?;
                parse(&source.location, &listed.to_string(), Format::Mcp)
            }
            SourceKind::Directory => {
                let mut out = Vec::new();
                for (f, text) in fetch::folder(&source.location, bounds)? {
                    match import::detect_format(&f, &text) {
                        Some(Format::Turtle) | None => continue,
                        Some(format) => out.extend(parse(&f.display().to_string(), &text, format)?),
                    }
                }
                Ok(out)
            }
        }
    }

    /// Scans a source now: new tools become pending, approved tools whose
    /// content changed leave search (`changed`, with a diff), tools no longer
    /// offered leave search (`missing`). A failed read is recorded on the
    /// source (`last_error`) and returned; nothing else changes.
    pub fn scan(&self, id: &str) -> Result<ScanReport> {
        let source = self.source(id)?;
        let found = match self.discover(&source) {
            Ok(f) => f,
            Err(e) => {
                let mut state = self.lock();
                if let Some(s) = state.sources.get_mut(id) {
                    s.last_scanned_at = Some(now());
                    s.last_error = Some(e.to_string());
                    let s = s.clone();
                    self.save_source(&s)?;
                }
                return Err(e);
            }
        };
        let mut state = self.lock();
        let report = self.reconcile(&mut state, &source, found)?;
        if let Some(s) = state.sources.get_mut(id) {
            s.last_scanned_at = Some(now());
            s.last_error = None;
            s.tools = report.discovered;
            let s = s.clone();
            self.save_source(&s)?;
        }
        Ok(report)
    }

    fn reconcile(
        &self,
        state: &mut State,
        source: &ToolSource,
        found: Vec<Found>,
    ) -> Result<ScanReport> {
        let t = now();
        let mut report = ScanReport {
            source: source.id.clone(),
            discovered: found.len(),
            ..ScanReport::default()
        };
        // Content hashes of pinned tools of every source (renames).
        let pinned: Vec<(String, String)> = state
            .items
            .values()
            .filter_map(|i| Some((i.pinned.as_ref()?.content_hash(), i.name.clone())))
            .collect();
        // Read once per scan: each tool is compared with the names other
        // sources registered (its own approved version is not a shadow).
        let registered = self.engine.registered_names();
        let mut seen = std::collections::HashSet::new();
        let mut touched: Vec<String> = Vec::new();
        let mut unload: Vec<String> = Vec::new();
        let mut restore: Vec<String> = Vec::new();
        for f in found {
            let name = f.descriptor.name.clone();
            let id = format!("tool-{}", short_hash(&[&source.id, &name]));
            if !seen.insert(id.clone()) {
                continue;
            }
            let content = content_of(&f);
            let hash = content.hash();
            let own = store_source(&source.id, &name);
            let mut reasons = screening(
                &f,
                registered
                    .iter()
                    .filter(|(_, s)| *s != own)
                    .map(|(n, _)| n.as_str()),
            );
            if let Some((_, was)) = pinned
                .iter()
                .find(|(h, n)| *h == content.content_hash() && *n != name)
            {
                reasons.push(Reason::new(
                    "possible_rename",
                    format!("same description and schema as pinned tool `{was}`"),
                ));
            }
            let existing = state.items.get(&id).cloned();
            let item = match existing {
                None => {
                    report.new.push(id.clone());
                    PendingTool {
                        id: id.clone(),
                        source: source.id.clone(),
                        name: name.clone(),
                        status: Status::Pending,
                        reasons,
                        diff: Vec::new(),
                        hash,
                        pinned_hash: None,
                        manifest: f.descriptor,
                        content,
                        pinned: None,
                        policy: None,
                        health: None,
                        review: None,
                        discovered_at: t,
                        updated_at: t,
                    }
                }
                Some(mut item) => {
                    let same_as_pin = item.pinned_hash.as_deref() == Some(hash.as_str());
                    let gaps: Vec<Reason> = item
                        .reasons
                        .iter()
                        .filter(|r| r.code == "gap")
                        .cloned()
                        .collect();
                    let before = item.status;
                    match item.status {
                        Status::Approved if same_as_pin => {
                            report.unchanged += 1;
                            continue;
                        }
                        Status::Rejected if item.hash == hash => {
                            report.unchanged += 1;
                            continue;
                        }
                        Status::Pending if item.hash == hash => {
                            report.unchanged += 1;
                            continue;
                        }
                        Status::Changed | Status::Missing if same_as_pin => {
                            item.status = Status::Approved;
                            item.diff.clear();
                            restore.push(id.clone());
                            report.restored.push(id.clone());
                        }
                        Status::Approved | Status::Changed | Status::Missing => {
                            if before == Status::Approved {
                                unload.push(store_source(&source.id, &name));
                            }
                            item.status = Status::Changed;
                            if let Some(p) = &item.pinned {
                                item.diff = p.diff(&content);
                            }
                            reasons.insert(
                                0,
                                Reason::new(
                                    "changed",
                                    "its content changed since approval: out of search until reviewed again",
                                ),
                            );
                            report.changed.push(id.clone());
                        }
                        // A rejected tool whose content changed is reviewed again.
                        Status::Rejected | Status::Pending => {
                            item.status = Status::Pending;
                            report.new.push(id.clone());
                        }
                    }
                    if item.status != Status::Approved {
                        item.reasons = reasons;
                        item.reasons.extend(gaps);
                    }
                    item.hash = hash;
                    item.manifest = f.descriptor;
                    item.content = content;
                    item.updated_at = t;
                    item
                }
            };
            touched.push(id.clone());
            state.items.insert(id, item);
        }
        for item in state.items.values_mut() {
            if item.source != source.id || seen.contains(&item.id) {
                continue;
            }
            match item.status {
                Status::Approved | Status::Changed | Status::Pending => {
                    if item.status == Status::Approved {
                        unload.push(store_source(&source.id, &item.name));
                    }
                    item.status = Status::Missing;
                    item.reasons.retain(|r| r.code != "missing");
                    item.reasons.insert(
                        0,
                        Reason::new("missing", "its source no longer offers it: out of search"),
                    );
                    item.updated_at = t;
                    report.missing.push(item.id.clone());
                    touched.push(item.id.clone());
                }
                Status::Rejected | Status::Missing => {}
            }
        }
        // The store first: a failed write leaves the review state as it was.
        self.engine.unload_sources(&unload)?;
        for id in &restore {
            if let Some(item) = state.items.get(id) {
                self.engine.register_tools(
                    &store_source(&item.source, &item.name),
                    vec![item.manifest.clone()],
                )?;
            }
        }
        self.save_items(touched.iter().filter_map(|id| state.items.get(id)))?;
        Ok(report)
    }

    /// Sources whose schedule says they are due (`now` in Unix seconds).
    pub fn due(&self, at: u64) -> Vec<String> {
        self.lock()
            .sources
            .values()
            .filter(|s| {
                s.schedule_seconds
                    .is_some_and(|every| s.last_scanned_at.is_none_or(|l| l + every <= at))
            })
            .map(|s| s.id.clone())
            .collect()
    }

    // ------------------------------------------------------------ review

    /// Review items, optionally of one status, newest change first.
    pub fn items(&self, status: Option<Status>) -> Vec<PendingTool> {
        let mut out: Vec<PendingTool> = self
            .lock()
            .items
            .values()
            .filter(|i| status.is_none_or(|s| i.status == s))
            .cloned()
            .collect();
        out.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then(a.id.cmp(&b.id)));
        out
    }

    pub fn item(&self, id: &str) -> Result<PendingTool> {
        self.lock()
            .items
            .get(id)
            .cloned()
            .ok_or_else(|| Error::not_found("pending tool", id))
    }

    /// Approves an item: registers it (searchable from now on) with its
    /// usage policy and health check, and pins its content.
    pub fn approve(&self, id: &str, approval: Approval, by: &str) -> Result<PendingTool> {
        let mut state = self.lock();
        let mut item = state
            .items
            .get(id)
            .cloned()
            .ok_or_else(|| Error::not_found("pending tool", id))?;
        if item.status == Status::Missing {
            return Err(Error::Conflict(format!(
                "`{}` is no longer offered by its source: rescan it first",
                item.name
            )));
        }
        if item.status == Status::Approved {
            return Err(Error::Conflict(format!(
                "`{}` is approved already",
                item.name
            )));
        }
        if let Some(h) = &approval.health_url
            && !fetch::is_url(h)
        {
            return Err(Error::invalid_field(
                "health_url",
                "a health check is an http(s) URL",
            ));
        }
        let policy = UsagePolicy {
            rate_limit: approval.rate_limit,
            budget: approval.budget,
            access: approval.access,
        };
        // Checked before anything is written.
        let policy = self.engine.check_usage_policy(&policy)?;
        self.engine.register_tools(
            &store_source(&item.source, &item.name),
            vec![item.manifest.clone()],
        )?;
        self.engine
            .set_usage_policy(&item.name, (!policy.is_empty()).then(|| policy.clone()))?;
        let health_url = approval.health_url.or_else(|| {
            state
                .sources
                .get(&item.source)
                .and_then(|s| s.health_url.clone())
        });
        item.health = health_url.map(|url| Health {
            url,
            active: true,
            ..Health::default()
        });
        self.engine.set_inactive(&item.name, None)?;
        item.status = Status::Approved;
        item.pinned = Some(item.content.clone());
        item.pinned_hash = Some(item.hash.clone());
        item.diff.clear();
        item.policy = (!policy.is_empty()).then_some(policy);
        item.review = Some(Review {
            action: "approved".into(),
            by: by.to_string(),
            at: now(),
            reason: None,
        });
        item.updated_at = now();
        self.save_items([&item])?;
        state.items.insert(id.to_string(), item.clone());
        Ok(item)
    }

    /// Rejects an item (an approved one leaves search); it stays rejected
    /// across rescans until its content changes.
    pub fn reject(&self, id: &str, reason: &str, by: &str) -> Result<PendingTool> {
        if reason.trim().is_empty() {
            return Err(Error::invalid_field(
                "reason",
                "say why the tool is rejected",
            ));
        }
        let mut state = self.lock();
        let mut item = state
            .items
            .get(id)
            .cloned()
            .ok_or_else(|| Error::not_found("pending tool", id))?;
        if item.status == Status::Approved {
            self.engine
                .unload_sources(&[store_source(&item.source, &item.name)])?;
        }
        item.status = Status::Rejected;
        item.review = Some(Review {
            action: "rejected".into(),
            by: by.to_string(),
            at: now(),
            reason: Some(reason.trim().to_string()),
        });
        item.updated_at = now();
        self.save_items([&item])?;
        state.items.insert(id.to_string(), item.clone());
        Ok(item)
    }

    // ------------------------------------------------------------ health

    /// Probes every approved tool with a health check once: N failures in a
    /// row switch it off (out of search, reason recorded), M successes in a
    /// row switch it back on.
    pub fn probe(&self) -> Result<Vec<ProbeReport>> {
        let targets: Vec<(String, String, String)> = self
            .lock()
            .items
            .values()
            .filter(|i| i.status == Status::Approved)
            .filter_map(|i| Some((i.id.clone(), i.name.clone(), i.health.as_ref()?.url.clone())))
            .collect();
        let mut out = Vec::new();
        for (id, name, url) in targets {
            let p = fetch::probe(&url, self.options.probe_timeout);
            let mut state = self.lock();
            let Some(item) = state.items.get_mut(&id) else {
                continue;
            };
            let Some(h) = item.health.as_mut() else {
                continue;
            };
            h.checks += 1;
            h.last_checked_at = Some(now());
            h.last_latency_ms = Some((p.latency_ms * 10.0).round() / 10.0);
            let mut switched = None;
            if p.ok {
                h.consecutive_failures = 0;
                h.consecutive_successes += 1;
                h.last_error = None;
                if !h.active && h.consecutive_successes >= self.options.recover_after {
                    self.engine.set_inactive(&name, None)?;
                    h.active = true;
                    switched = Some(format!(
                        "back on after {} successful checks",
                        h.consecutive_successes
                    ));
                }
            } else {
                h.failures += 1;
                h.consecutive_successes = 0;
                h.consecutive_failures += 1;
                h.last_error = p.error.clone();
                if h.active && h.consecutive_failures >= self.options.fail_after {
                    let why = format!(
                        "{} consecutive failed health checks of {} (last: {})",
                        h.consecutive_failures,
                        h.url,
                        p.error.as_deref().unwrap_or("?")
                    );
                    self.engine.set_inactive(&name, Some(&why))?;
                    h.active = false;
                    switched = Some(format!("switched off: {why}"));
                }
            }
            let item = item.clone();
            self.save_items([&item])?;
            out.push(ProbeReport {
                item: id,
                tool: name,
                ok: p.ok,
                latency_ms: p.latency_ms,
                error: p.error,
                switched,
            });
        }
        Ok(out)
    }

    // ------------------------------------------------------------ gaps

    /// Resolves a verb through the engine and counts a decompose outcome
    /// as a capability gap.
    pub fn resolve(&self, req: &ResolveRequest) -> Result<Resolution> {
        let resolution = self.engine.resolve(req)?;
        if resolution.decision == Decision::Decompose {
            self.record_gap(&req.verb, &resolution.reason)?;
        }
        Ok(resolution)
    }

    fn record_gap(&self, verb: &str, reason: &str) -> Result<()> {
        let verb = verb.trim().to_uppercase();
        let t = now();
        let mut state = self.lock();
        let gap = state.gaps.entry(verb.clone()).or_insert_with(|| Gap {
            verb: verb.clone(),
            count: 0,
            first_seen: t,
            last_seen: t,
            last_reason: String::new(),
            candidates: Vec::new(),
        });
        gap.count += 1;
        gap.last_seen = t;
        gap.last_reason = reason.to_string();
        let gap = gap.clone();
        self.engine
            .store()
            .put_records(GAPS, &[(verb, Some(json(&gap)?))])
    }

    /// Gaps, most frequent first.
    pub fn gaps(&self) -> Vec<Gap> {
        let mut out: Vec<Gap> = self.lock().gaps.values().cloned().collect();
        out.sort_by(|a, b| b.count.cmp(&a.count).then(a.verb.cmp(&b.verb)));
        out
    }

    /// Looks for tools that would fill the top gaps: pending items of the
    /// configured sources, and APIs of the configured directory (added as
    /// sources and scanned). Everything found waits for review with the gap
    /// as a reason; nothing goes straight into search.
    pub fn discover_gaps(&self) -> Result<DiscoveryReport> {
        if !self.options.discovery {
            return Err(Error::Forbidden(
                "gap discovery is off (serve with --discover-gaps)".into(),
            ));
        }
        let top: Vec<Gap> = self.gaps().into_iter().take(self.options.gap_top).collect();
        let mut report = DiscoveryReport {
            gaps: top.iter().map(|g| g.verb.clone()).collect(),
            ..DiscoveryReport::default()
        };
        let directory = match &self.options.directory {
            Some(loc) => {
                let text = fetch::text(loc, self.options.bounds)?;
                gaps::parse_directory(loc, &text)?
                    .into_iter()
                    .map(|api| (resolve_spec(loc, &api.spec), api))
                    .collect()
            }
            None => Vec::new(),
        };
        for gap in &top {
            let terms = gaps::verb_terms(&gap.verb);
            for (spec, api) in &directory {
                if !gaps::fills(
                    &terms,
                    &format!("{} {} {}", api.name, api.title, api.description),
                ) {
                    continue;
                }
                let Some(spec) = spec else {
                    report.errors.push(format!(
                        "{}: spec {} is not on the directory's host; not fetched",
                        api.name, api.spec
                    ));
                    continue;
                };
                let added = match self.add_source_for(
                    NewSource {
                        kind: SourceKind::Openapi,
                        location: spec.clone(),
                        schedule_seconds: None,
                        health_url: None,
                    },
                    Some(&gap.verb),
                ) {
                    Ok(s) => s.id,
                    Err(Error::Conflict(_)) => {
                        format!("src-{}", short_hash(&["openapi", spec.as_str()]))
                    }
                    Err(e) => {
                        report.errors.push(format!("{}: {e}", api.name));
                        continue;
                    }
                };
                match self.scan(&added) {
                    Ok(_) => {
                        if !report.sources.contains(&added) {
                            report.sources.push(added);
                        }
                    }
                    Err(e) => report.errors.push(format!("{}: {e}", api.name)),
                }
            }
            // Items waiting for review (from any source) that would fill it.
            let mut state = self.lock();
            let gap_sources: Vec<String> = state
                .sources
                .values()
                .filter(|s| s.discovered_for.as_deref() == Some(gap.verb.as_str()))
                .map(|s| s.id.clone())
                .collect();
            let mut marked = Vec::new();
            for item in state.items.values_mut() {
                if !matches!(item.status, Status::Pending) {
                    continue;
                }
                let text = format!("{} {}", item.name, item.manifest.description);
                let from_gap_source = gap_sources.contains(&item.source);
                if !(from_gap_source || gaps::fills(&terms, &text)) {
                    continue;
                }
                let message = format!(
                    "may fill capability gap {} (resolve decomposed it {} times)",
                    gap.verb, gap.count
                );
                item.reasons
                    .retain(|r| !(r.code == "gap" && r.evidence.as_deref() == Some(&gap.verb)));
                item.reasons.push(Reason {
                    code: "gap".into(),
                    message,
                    field: None,
                    evidence: Some(gap.verb.clone()),
                });
                marked.push(item.clone());
            }
            self.save_items(marked.iter())?;
            if let Some(g) = state.gaps.get_mut(&gap.verb) {
                for m in &marked {
                    if !g.candidates.contains(&m.id) {
                        g.candidates.push(m.id.clone());
                    }
                    if !report.candidates.contains(&m.id) {
                        report.candidates.push(m.id.clone());
                    }
                }
                let g = g.clone();
                self.engine
                    .store()
                    .put_records(GAPS, &[(g.verb.clone(), Some(json(&g)?))])?;
            }
        }
        Ok(report)
    }
}

/// Where a directory entry's spec is, if it may be fetched: a URL on the
/// directory's own host (scheme, host and port), or a path beside a
/// directory file. Anything else is another location the operator did not
/// configure.
fn resolve_spec(directory: &str, spec: &str) -> Option<String> {
    fn origin(url: &str) -> Option<&str> {
        let rest = url.split_once("://")?.1;
        let end = rest.find('/').unwrap_or(rest.len());
        Some(&url[..url.len() - rest.len() + end])
    }
    if fetch::is_url(directory) {
        if fetch::is_url(spec) {
            return (origin(spec)? == origin(directory)?).then(|| spec.to_string());
        }
        let base = directory.rsplit_once('/')?.0;
        return Some(format!("{base}/{}", spec.trim_start_matches("./")));
    }
    if fetch::is_url(spec) {
        return None;
    }
    let base = std::path::Path::new(directory).parent()?;
    Some(base.join(spec).display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directory_specs_stay_on_the_configured_host() {
        let d = "http://127.0.0.1:9000/v2/list.json";
        assert_eq!(
            resolve_spec(d, "http://127.0.0.1:9000/specs/a.json").as_deref(),
            Some("http://127.0.0.1:9000/specs/a.json")
        );
        assert_eq!(resolve_spec(d, "https://api.example.com/a.json"), None);
        assert_eq!(resolve_spec(d, "http://127.0.0.1:9001/a.json"), None);
        assert_eq!(
            resolve_spec(d, "specs/a.json").as_deref(),
            Some("http://127.0.0.1:9000/v2/specs/a.json")
        );
        assert_eq!(
            resolve_spec("/srv/dir/list.json", "a.yaml").as_deref(),
            Some("/srv/dir/a.yaml")
        );
        assert_eq!(resolve_spec("/srv/dir/list.json", "https://x/a.yaml"), None);
    }
}
