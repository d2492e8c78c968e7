//! Files to inputs: which files a load reads, in which format, parsed.

use super::{Format, detect_format, parse_manifest};
use crate::error::{Error, Result};
use crate::model::ToolDescriptor;
use std::path::{Path, PathBuf};

/// One parsed input of a load.
#[derive(Debug, Clone)]
pub enum Input {
    /// Curated Turtle, loaded by the store as it is.
    Turtle { name: String, text: String },
    /// Tools from a manifest (MCP, OpenAPI, JSONL), to be linked to the ontology.
    Manifest {
        name: String,
        tools: Vec<ToolDescriptor>,
    },
}

/// Parses one named text in `format`, or in the format its name and
/// content show.
pub fn parse_input(name: &str, text: &str, format: Option<Format>) -> Result<Input> {
    let format = match format {
        Some(f) => f,
        None => detect_format(Path::new(name), text).ok_or_else(|| {
            Error::parse(
                name,
                None,
                None,
                "cannot tell the format (use --format turtle|mcp|openapi|jsonl)",
            )
        })?,
    };
    Ok(match format {
        Format::Turtle => Input::Turtle {
            name: name.to_string(),
            text: text.to_string(),
        },
        other => Input::Manifest {
            name: name.to_string(),
            tools: parse_manifest(name, text, other)?,
        },
    })
}

/// Reads and parses files; the first bad one fails them all.
pub fn read_files(files: &[PathBuf], format: Option<Format>) -> Result<Vec<Input>> {
    files
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
            parse_input(&path.display().to_string(), &text, format)
        })
        .collect()
}

/// Collects the loadable files under `paths` (directories recursively,
/// sorted). Linked folders are followed, each real folder once, so a link
/// that points back up the tree is not walked forever.
pub fn collect_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    fn walk(
        dir: &Path,
        seen: &mut std::collections::HashSet<PathBuf>,
        out: &mut Vec<PathBuf>,
    ) -> Result<()> {
        let real = std::fs::canonicalize(dir).map_err(|e| Error::io(dir, e))?;
        if !seen.insert(real) {
            return Ok(());
        }
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| Error::io(dir, e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, seen, out)?;
            } else if matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("ttl" | "json" | "jsonl" | "yaml" | "yml")
            ) {
                out.push(p);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for p in paths {
        if p.is_dir() {
            walk(p, &mut seen, &mut out)?;
        } else if p.exists() {
            out.push(p.clone());
        } else {
            return Err(Error::io(
                p,
                std::io::Error::new(std::io::ErrorKind::NotFound, "no such file or directory"),
            ));
        }
    }
    Ok(out)
}

/// A bundled folder (`ontology`, `seeds`): the working directory's when it
/// has one, else the crate's.
pub fn bundled(dir: &str) -> PathBuf {
    let local = PathBuf::from(dir);
    if local.is_dir() {
        local
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_back_up_the_tree_is_walked_once() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("seeds/more")).unwrap();
        std::fs::write(root.join("seeds/a.ttl"), "").unwrap();
        std::fs::write(root.join("seeds/more/b.json"), "{}").unwrap();
        std::fs::write(root.join("seeds/more/notes.txt"), "").unwrap();
        std::os::unix::fs::symlink(root.join("seeds"), root.join("seeds/more/up")).unwrap();
        let files = collect_files(&[root.join("seeds")]).unwrap();
        let names: Vec<_> = files
            .iter()
            .map(|p| p.strip_prefix(root).unwrap().display().to_string())
            .collect();
        assert_eq!(names, ["seeds/a.ttl", "seeds/more/b.json"]);
    }
}
