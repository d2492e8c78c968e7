//! Gap discovery: for the most frequent capability gaps, pending items that
//! would fill them, and APIs of the configured directory (added as sources
//! and scanned). Everything found waits for review with the gap as a
//! reason; nothing goes straight into search.

use super::gaps::{self, Gap};
use super::model::{DiscoveryReport, NewSource, PendingTool, SourceKind, Status, short_hash};
use super::{Airlock, fetch};
use crate::error::{Error, Result};
use crate::screen::Reason;

impl Airlock {
    /// Gaps, most frequent first.
    pub fn gaps(&self) -> Vec<Gap> {
        self.gaps.all()
    }

    /// Looks for tools that would fill the top gaps.
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
                let text = fetch::text(loc, self.options.bounds, &self.options.reach)?;
                gaps::parse_directory(loc, &text)?
                    .into_iter()
                    .map(|api| (resolve_spec(loc, &api.spec), api))
                    .collect()
            }
            None => Vec::new(),
        };
        for gap in &top {
            let terms = gaps::verb_terms(&gap.verb);
            self.scan_directory(gap, &terms, &directory, &mut report);
            self.mark_candidates(gap, &terms, &mut report)?;
        }
        Ok(report)
    }

    /// Adds and scans the directory's APIs that would fill `gap`.
    fn scan_directory(
        &self,
        gap: &Gap,
        terms: &[String],
        directory: &[(Option<String>, gaps::DirectoryApi)],
        report: &mut DiscoveryReport,
    ) {
        for (spec, api) in directory {
            let text = format!("{} {} {}", api.name, api.title, api.description);
            if !gaps::fills(terms, &text) {
                continue;
            }
            let Some(spec) = spec else {
                report.errors.push(format!(
                    "{}: spec {} is not on the directory's host; not fetched",
                    api.name, api.spec
                ));
                continue;
            };
            let new = NewSource {
                kind: SourceKind::Openapi,
                location: spec.clone(),
                schedule_seconds: None,
                health_url: None,
                allow: Vec::new(),
            };
            let added = match self.add_source_for(new, Some(&gap.verb)) {
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
                Ok(_) if !report.sources.contains(&added) => report.sources.push(added),
                Ok(_) => {}
                Err(e) => report.errors.push(format!("{}: {e}", api.name)),
            }
        }
    }

    /// Marks the pending items (of any source) that would fill `gap`.
    fn mark_candidates(
        &self,
        gap: &Gap,
        terms: &[String],
        report: &mut DiscoveryReport,
    ) -> Result<()> {
        let _one = self.one_change();
        let marked: Vec<PendingTool> = {
            let state = self.lock();
            let gap_sources: Vec<&String> = state
                .sources
                .values()
                .filter(|s| s.discovered_for.as_deref() == Some(gap.verb.as_str()))
                .map(|s| &s.id)
                .collect();
            state
                .items
                .values()
                .filter(|i| i.status == Status::Pending)
                .filter(|i| {
                    gap_sources.contains(&&i.source)
                        || gaps::fills(terms, &format!("{} {}", i.name, i.manifest.description))
                })
                .cloned()
                .map(|mut item| {
                    item.reasons
                        .retain(|r| !(r.code == "gap" && r.evidence.as_deref() == Some(&gap.verb)));
                    item.reasons.push(Reason {
                        code: "gap".into(),
                        message: format!(
                            "may fill capability gap {} (resolve decomposed it {} times)",
                            gap.verb, gap.count
                        ),
                        field: None,
                        evidence: Some(gap.verb.clone()),
                        severity: crate::screen::Severity::Info,
                    });
                    item
                })
                .collect()
        };
        self.save_items(&marked)?;
        let ids: Vec<String> = marked.iter().map(|m| m.id.clone()).collect();
        for id in &ids {
            if !report.candidates.contains(id) {
                report.candidates.push(id.clone());
            }
        }
        self.gaps.update(&gap.verb, |g| {
            for id in ids {
                if !g.candidates.contains(&id) {
                    g.candidates.push(id);
                }
            }
        })
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
