//! The accuracy gate: compare a run's reports with a stored baseline
//! (JSON lines, as `toolgraph eval --append` writes them).

use super::report::{Regression, Report, compare_to_baseline};
use crate::error::{Error, Result};
use std::path::Path;

/// Reads reports written one JSON object per line; errors name the line.
pub fn read_reports(path: &Path) -> Result<Vec<Report>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let file = path.display().to_string();
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| {
                Error::parse(
                    &file,
                    Some(i as u64 + 1),
                    Some(e.column() as u64),
                    e.to_string(),
                )
            })
        })
        .collect()
}

/// The metrics of `reports` that dropped more than `max_drop` below the
/// baseline in `path`. Only the baseline's rows for the datasets and
/// settings this run covers are compared (one gate script runs many evals).
pub fn gate(reports: &[Report], path: &Path, max_drop: f64) -> Result<Vec<Regression>> {
    let baseline: Vec<Report> = read_reports(path)?
        .into_iter()
        .filter(|b| {
            reports
                .iter()
                .any(|r| r.dataset == b.dataset && r.setting == b.setting)
        })
        .collect();
    Ok(compare_to_baseline(reports, &baseline, max_drop))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_baseline_line_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("b.jsonl");
        std::fs::write(&p, "\n{not json}\n").unwrap();
        let err = read_reports(&p).unwrap_err().to_string();
        assert!(err.contains("b.jsonl:2:"), "{err}");
    }
}
