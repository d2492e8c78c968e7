//! Sources: adding, listing, deleting, and scanning them. A scan reads the
//! source without any lock, works out what changed (a pure plan over the
//! items as they were), then writes the items and only then the catalog.

use super::model::{
    NewSource, PendingTool, ScanReport, SourceKind, Status, ToolSource, short_hash, store_source,
};
use super::pin::Pinned;
use super::reach::Reach;
use super::{Airlock, ITEMS, SOURCES, fetch};
use crate::error::{Error, Field, Kind, Result};
use crate::import::{self, Format};
use crate::model::{ToolDescriptor, Upstream};
use crate::policy::limits::now;
use crate::screen::{self, Reason};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};

/// A discovered tool with the raw manifest node it came from.
pub(super) struct Found {
    pub descriptor: ToolDescriptor,
    pub raw: Option<Value>,
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
        upstream: d.upstream.clone(),
    }
}

/// What screening reads of one discovered tool: every string of its raw
/// entry, or its parsed texts.
fn to_screen(found: &Found) -> crate::engine::ToScreen {
    match &found.raw {
        Some(raw) => crate::engine::ToScreen::of_raw(&found.descriptor, raw),
        None => crate::engine::ToScreen::of_descriptor(&found.descriptor),
    }
}

/// What one scan changes: items to write, catalog sources to unload,
/// items to register again, and the report.
#[derive(Default)]
struct Plan {
    items: Vec<PendingTool>,
    unload: Vec<String>,
    restore: Vec<PendingTool>,
    report: ScanReport,
}

/// What a scan compares each found tool with.
struct Known<'a> {
    source: &'a ToolSource,
    /// The source's items as they were.
    items: &'a BTreeMap<String, PendingTool>,
    /// Content hashes of pinned tools of every source, with their names.
    pinned: &'a [(String, String)],
    /// Each found tool's screening (by name), computed before the plan.
    screened: &'a HashMap<String, screen::Screening>,
    at: u64,
}

impl Known<'_> {
    /// The plan of a scan that found `found`.
    fn plan(&self, found: Vec<Found>) -> Plan {
        let mut plan = Plan {
            report: ScanReport {
                source: self.source.id.clone(),
                discovered: found.len(),
                ..ScanReport::default()
            },
            ..Plan::default()
        };
        let mut seen = HashSet::new();
        for f in found {
            let id = format!(
                "tool-{}",
                short_hash(&[&self.source.id, &f.descriptor.name])
            );
            if seen.insert(id.clone()) {
                self.found_one(&mut plan, id, f);
            }
        }
        for item in self.items.values().filter(|i| !seen.contains(&i.id)) {
            self.gone(&mut plan, item.clone());
        }
        plan
    }

    /// A tool the source still (or newly) offers.
    fn found_one(&self, plan: &mut Plan, id: String, f: Found) {
        let name = f.descriptor.name.clone();
        let content = content_of(&f);
        let hash = content.hash();
        let screened = self.screened.get(&name);
        let mut reasons = screened.map(|s| s.reasons.clone()).unwrap_or_default();
        let score = screened.and_then(|s| s.score);
        if let Some((_, was)) = self
            .pinned
            .iter()
            .find(|(h, n)| *h == content.content_hash() && *n != name)
        {
            reasons.push(Reason::new(
                "possible_rename",
                format!("same description and schema as pinned tool `{was}`"),
            ));
        }
        let Some(mut item) = self.items.get(&id).cloned() else {
            plan.report.new.push(id.clone());
            let mut item = PendingTool::discovered(
                id,
                &self.source.id,
                f.descriptor,
                content,
                reasons,
                self.at,
            );
            item.score = score;
            plan.items.push(item);
            return;
        };
        // A pin from before upstreams were pinned matches the same content
        // without its upstream (and takes the upstream on from here).
        let legacy = item
            .pinned
            .as_ref()
            .is_some_and(|p| p.upstream.is_none())
            .then(|| content.hash_without_upstream());
        let same_as_pin = item.pinned_hash.as_deref() == Some(hash.as_str())
            || (legacy.is_some() && item.pinned_hash == legacy);
        let gaps: Vec<Reason> = item
            .reasons
            .iter()
            .filter(|r| r.code == "gap")
            .cloned()
            .collect();
        match item.status {
            Status::Approved if same_as_pin => {
                plan.report.unchanged += 1;
                return;
            }
            Status::Rejected | Status::Pending if item.hash == hash => {
                plan.report.unchanged += 1;
                return;
            }
            Status::Changed | Status::Missing if same_as_pin => {
                item.status = Status::Approved;
                item.diff.clear();
                plan.report.restored.push(id.clone());
            }
            Status::Approved | Status::Changed | Status::Missing => {
                if item.status == Status::Approved {
                    plan.unload.push(store_source(&self.source.id, &name));
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
                    )
                    .with_severity(screen::Severity::Warn),
                );
                plan.report.changed.push(id.clone());
            }
            // A rejected tool whose content changed is reviewed again.
            Status::Rejected | Status::Pending => {
                item.status = Status::Pending;
                plan.report.new.push(id.clone());
            }
        }
        if item.status != Status::Approved {
            item.reasons = reasons;
            item.reasons.extend(gaps);
            item.score = score;
        }
        item.hash = hash;
        item.manifest = f.descriptor;
        item.content = content;
        item.updated_at = self.at;
        if item.status == Status::Approved {
            plan.restore.push(item.clone());
        }
        plan.items.push(item);
    }

    /// An item the source no longer offers.
    fn gone(&self, plan: &mut Plan, mut item: PendingTool) {
        match item.status {
            Status::Approved | Status::Changed | Status::Pending => {
                if item.status == Status::Approved {
                    plan.unload.push(store_source(&self.source.id, &item.name));
                }
                item.status = Status::Missing;
                item.reasons.retain(|r| r.code != "missing");
                item.reasons.insert(
                    0,
                    Reason::new("missing", "its source no longer offers it: out of search"),
                );
                item.updated_at = self.at;
                plan.report.missing.push(item.id.clone());
                plan.items.push(item);
            }
            Status::Rejected | Status::Missing => {}
        }
    }
}

impl Airlock {
    /// Adds a source (not scanned yet). The same kind and location twice is
    /// a conflict.
    pub fn add_source(&self, new: NewSource) -> Result<ToolSource> {
        self.add_source_for(new, None)
    }

    pub(super) fn add_source_for(&self, new: NewSource, gap: Option<&str>) -> Result<ToolSource> {
        let location = new.location.trim().to_string();
        Reach::check_allowances(&new.allow, Field::SourceAllow)?;
        let reach = self.options.reach.with(&new.allow);
        check_location(new.kind, &location, &reach)?;
        if let Some(h) = &new.health_url {
            if !fetch::is_url(h) {
                return Err(Error::invalid_field(
                    Field::SourceHealthUrl,
                    "a health check is an http(s) URL",
                ));
            }
            reach.check_url(h, Field::SourceHealthUrl)?;
        }
        if new.schedule_seconds == Some(0) {
            return Err(Error::invalid_field(
                Field::SourceSchedule,
                "a schedule is at least 1 s",
            ));
        }
        let kind = serde_json::to_value(new.kind).unwrap_or(Value::Null);
        let id = format!(
            "src-{}",
            short_hash(&[kind.as_str().unwrap_or(""), &location])
        );
        let _one = self.one_change();
        if let Some(existing) = self.lock().sources.get(&id) {
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
            allow: new.allow,
            created_at: now(),
            last_scanned_at: None,
            last_error: None,
            tools: 0,
            discovered_for: gap.map(str::to_string),
        };
        self.save_source(&source)?;
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
            .ok_or_else(|| Error::not_found(Kind::Source, id))
    }

    /// Sources whose schedule says they are due now.
    pub fn due_now(&self) -> Vec<String> {
        let at = now();
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

    /// Deletes a source, its review items, and the tools approved from it
    /// (they leave search). The records go first; the catalog follows.
    pub fn delete_source(&self, id: &str) -> Result<()> {
        let _one = self.one_change();
        let items: Vec<PendingTool> = {
            let state = self.lock();
            if !state.sources.contains_key(id) {
                return Err(Error::not_found(Kind::Source, id));
            }
            state
                .items
                .values()
                .filter(|i| i.source == id)
                .cloned()
                .collect()
        };
        let gone: Vec<(String, Option<String>)> =
            items.iter().map(|i| (i.id.clone(), None)).collect();
        self.engine.store().put_records(ITEMS, &gone)?;
        self.engine
            .store()
            .put_records(SOURCES, &[(id.to_string(), None)])?;
        {
            let mut state = self.lock();
            for i in &items {
                state.items.remove(&i.id);
            }
            state.sources.remove(id);
        }
        let stores: Vec<String> = items.iter().map(|i| store_source(id, &i.name)).collect();
        self.catalog_write(|| self.engine.unload_sources(&stores))?;
        for i in &items {
            self.engine.set_usage_policy(&i.name, None)?;
            self.engine.set_inactive(&i.name, None)?;
        }
        Ok(())
    }

    /// Reads what a source offers (no state touched, no lock held).
    fn discover(&self, source: &ToolSource) -> Result<Vec<Found>> {
        let bounds = self.options.bounds;
        let reach = &self.options.reach.with(&source.allow);
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
                let text = fetch::text(&source.location, bounds, reach)?;
                let mut found = parse(&source.location, &text, Format::OpenApi)?;
                // A spec with a relative (or no) server URL is served where
                // it was read from.
                for f in &mut found {
                    if let Some(Upstream::Http { url, .. }) = &mut f.descriptor.upstream
                        && !fetch::is_url(url)
                        && let Some(base) = origin(&source.location)
                    {
                        *url = format!("{base}{url}");
                    }
                }
                Ok(found)
            }
            SourceKind::Mcp => {
                let listed = fetch::mcp_tools(&source.location, bounds, reach)?;
                let mut found = parse(&source.location, &listed.to_string(), Format::Mcp)?;
                // Calls go to the server the list came from, whatever a
                // listed tool claims.
                for f in &mut found {
                    f.descriptor.upstream = Some(Upstream::Mcp {
                        url: source.location.clone(),
                        tool: f.descriptor.name.clone(),
                        auth: None,
                        output_schema: f
                            .raw
                            .as_ref()
                            .and_then(|raw| raw.get("outputSchema"))
                            .filter(|s| s.is_object())
                            .cloned(),
                    });
                }
                Ok(found)
            }
            SourceKind::Directory => {
                let mut out = Vec::new();
                for (f, text) in fetch::folder(&source.location, bounds, reach)? {
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
        let found = self.discover(&source);
        let _one = self.one_change();
        let mut source = self.source(id)?;
        source.last_scanned_at = Some(now());
        let found = match found {
            Ok(f) => f,
            Err(e) => {
                source.last_error = Some(e.report());
                self.save_source(&source)?;
                return Err(e);
            }
        };
        let (items, pinned) = {
            let state = self.lock();
            let items: BTreeMap<String, PendingTool> = state
                .items
                .iter()
                .filter(|(_, i)| i.source == id)
                .map(|(k, i)| (k.clone(), i.clone()))
                .collect();
            let pinned: Vec<(String, String)> = state
                .items
                .values()
                .filter_map(|i| Some((i.pinned.as_ref()?.content_hash(), i.name.clone())))
                .collect();
            (items, pinned)
        };
        let to_screen: Vec<_> = found.iter().map(to_screen).collect();
        let screened: HashMap<String, screen::Screening> = self
            .engine
            .screen_tools(&format!("airlock/{id}"), &to_screen)
            .into_iter()
            .map(|s| (s.tool.clone(), s))
            .collect();
        let plan = Known {
            source: &source,
            items: &items,
            pinned: &pinned,
            screened: &screened,
            at: now(),
        }
        .plan(found);
        // The records first: the catalog follows them (and `heal` makes it
        // agree should the catalog write fail or the process stop).
        self.save_items(&plan.items)?;
        self.catalog_write(|| {
            self.engine.unload_sources(&plan.unload)?;
            for item in &plan.restore {
                self.engine.register_tools(
                    &store_source(&item.source, &item.name),
                    vec![item.registered()],
                )?;
            }
            Ok(())
        })?;
        source.last_error = None;
        source.tools = plan.report.discovered;
        self.save_source(&source)?;
        Ok(plan.report)
    }
}

/// `scheme://host[:port]` of a URL (none for a file path).
fn origin(location: &str) -> Option<String> {
    let (scheme, rest) = location.split_once("://")?;
    let host = rest.split(['/', '?', '#']).next()?;
    Some(format!("{scheme}://{host}"))
}

/// A source's location, checked for its kind and for what the airlock may
/// reach (a URL's scheme and host, a file's place under the source root).
fn check_location(kind: SourceKind, location: &str, reach: &Reach) -> Result<()> {
    let bad = |message: String| Err(Error::invalid_field(Field::SourceLocation, message));
    if location.is_empty() {
        return bad("a source needs a location".into());
    }
    if fetch::is_url(location) {
        if kind == SourceKind::Directory {
            return bad(format!("a directory source is a folder, not `{location}`"));
        }
        return reach.check_url(location, Field::SourceLocation);
    }
    if kind == SourceKind::Mcp {
        return bad(format!("an MCP source is an http(s) URL, not `{location}`"));
    }
    let path = match reach.file(location, Field::SourceLocation) {
        Err(Error::Unavailable { .. }) => {
            return bad(format!("`{location}` does not exist or cannot be read"));
        }
        r => r?,
    };
    match kind {
        SourceKind::Directory if !path.is_dir() => bad(format!("`{location}` is not a folder")),
        SourceKind::Openapi if !path.is_file() => {
            bad(format!("`{location}` is neither an http(s) URL nor a file"))
        }
        _ => Ok(()),
    }
}
