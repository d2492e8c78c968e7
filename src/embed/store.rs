//! Persisted vectors with incremental re-indexing.
//!
//! A directory holds two files, each replaced atomically (temp + rename):
//! - `vectors.bin`: `TGVECS01`, dim (u32 LE), 0 (u32), count (u64 LE), then
//!   `count * dim` f32 LE, row-major;
//! - `vectors.json`: model id, dim, the sha256 of `vectors.bin`, and per row
//!   the tool id and the sha256 of its [`embedding_text`].
//!
//! Anything that does not add up (bad magic, wrong size, hash mismatch,
//! non-finite values, unreadable JSON) is treated as absent, with a warning.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{VectorIndex, Vectors, embedding_text};
use crate::error::{Error, Result};
use crate::model::Tool;

const BIN: &str = "vectors.bin";
const META: &str = "vectors.json";
const MAGIC: &[u8; 8] = b"TGVECS01";
const HEADER: usize = 24;
const FORMAT: u32 = 1;

/// What [`sync_index`] did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct SyncReport {
    /// Tools embedded now (new, changed, or all on a full re-index).
    pub embedded: usize,
    /// Of those, tools embedded ahead: on one core while the store wrote
    /// them.
    #[serde(default)]
    pub ahead: usize,
    /// Tools whose stored vector was kept.
    pub reused: usize,
    /// Stored vectors removed because their tool is gone.
    pub dropped: usize,
    /// Tools whose vector came from the shared store (a graph server
    /// another replica wrote it to), not embedded here.
    #[serde(default)]
    pub shared: usize,
    /// Rows in the resulting index.
    pub total: usize,
    pub model_id: String,
    /// True when nothing stored could be used: no index yet, a corrupt one,
    /// or one built by another model.
    pub full_reindex: bool,
}

/// The state of a persisted index, compared with a tool list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IndexHealth {
    /// Rows stored (0 when absent or corrupt).
    pub count: usize,
    /// Model that built it (empty when absent or corrupt).
    pub model_id: String,
    pub dim: usize,
    /// Tools whose content hash differs or that have no usable vector
    /// (all of them when the model differs).
    pub stale: usize,
}

#[derive(Debug, Serialize, Deserialize)]
pub(super) struct Meta {
    format: u32,
    pub model_id: String,
    pub dim: usize,
    bin_sha256: String,
    pub tools: Vec<Entry>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Entry {
    pub id: String,
    pub hash: String,
}

/// A validated persisted index.
pub(super) struct Stored {
    pub meta: Meta,
    data: Vec<f32>,
}

impl Stored {
    pub(super) fn row(&self, i: usize) -> Option<&[f32]> {
        let start = i.checked_mul(self.meta.dim)?;
        self.data.get(start..start.checked_add(self.meta.dim)?)
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn content_hash(text: &str) -> String {
    hex(&Sha256::digest(text.as_bytes()))
}

/// Reads and validates `dir`; `Ok(None)` when absent, `Err(reason)` when corrupt.
fn load(dir: &Path) -> std::result::Result<Option<Stored>, String> {
    let meta_path = dir.join(META);
    let bin_path = dir.join(BIN);
    let meta_bytes = match std::fs::read(&meta_path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return if bin_path.exists() {
                Err(format!("{} without {META}", bin_path.display()))
            } else {
                Ok(None)
            };
        }
        Err(e) => return Err(format!("{}: {e}", meta_path.display())),
    };
    let meta: Meta =
        serde_json::from_slice(&meta_bytes).map_err(|e| format!("{}: {e}", meta_path.display()))?;
    if meta.format != FORMAT {
        return Err(format!(
            "{}: unknown format {}",
            meta_path.display(),
            meta.format
        ));
    }
    let bin = std::fs::read(&bin_path).map_err(|e| format!("{}: {e}", bin_path.display()))?;
    if hex(&Sha256::digest(&bin)) != meta.bin_sha256 {
        return Err(format!("{}: checksum mismatch", bin_path.display()));
    }
    let data = decode_bin(&bin).map_err(|e| format!("{}: {e}", bin_path.display()))?;
    let (dim, count) = (data.0, data.1.len().checked_div(data.0).unwrap_or(0));
    if dim != meta.dim || count != meta.tools.len() || (dim == 0 && !meta.tools.is_empty()) {
        return Err(format!(
            "{} holds {count}x{dim}, {META} says {}x{}",
            bin_path.display(),
            meta.tools.len(),
            meta.dim
        ));
    }
    let unique: HashSet<&str> = meta.tools.iter().map(|e| e.id.as_str()).collect();
    if unique.len() != meta.tools.len() {
        return Err(format!("{}: duplicate tool ids", meta_path.display()));
    }
    Ok(Some(Stored { meta, data: data.1 }))
}

/// Decodes `vectors.bin` into (dim, values).
fn decode_bin(bin: &[u8]) -> std::result::Result<(usize, Vec<f32>), String> {
    let header = bin.get(..HEADER).ok_or("truncated header")?;
    if header.get(..8) != Some(MAGIC.as_slice()) {
        return Err("bad magic".into());
    }
    let u32_at = |at: usize| -> Option<u32> {
        let b: [u8; 4] = header.get(at..at + 4)?.try_into().ok()?;
        Some(u32::from_le_bytes(b))
    };
    let dim = u32_at(8).ok_or("truncated header")? as usize;
    let count_bytes: [u8; 8] = header
        .get(16..24)
        .and_then(|b| b.try_into().ok())
        .ok_or("truncated header")?;
    let count = usize::try_from(u64::from_le_bytes(count_bytes)).map_err(|_| "count too large")?;
    let body = bin.get(HEADER..).unwrap_or_default();
    let expected = count
        .checked_mul(dim)
        .and_then(|n| n.checked_mul(4))
        .ok_or("size overflow")?;
    if body.len() != expected {
        return Err(format!(
            "truncated: {} bytes of vectors, expected {expected}",
            body.len()
        ));
    }
    let mut values = Vec::with_capacity(count * dim);
    for chunk in body.chunks_exact(4) {
        let b: [u8; 4] = chunk.try_into().map_err(|_| "bad chunk")?;
        let x = f32::from_le_bytes(b);
        if !x.is_finite() {
            return Err("non-finite value".into());
        }
        values.push(x);
    }
    Ok((dim, values))
}

fn encode_bin(index: &VectorIndex) -> Vec<u8> {
    let values = index.values();
    let mut out = Vec::with_capacity(HEADER + values.len() * 4);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&u32::try_from(index.dim()).unwrap_or(u32::MAX).to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&(index.len() as u64).to_le_bytes());
    for x in values {
        out.extend_from_slice(&x.to_le_bytes());
    }
    out
}

/// Writes `bytes` to `dir/name` atomically: a temp file in `dir`, fsync, rename.
fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> Result<()> {
    let path = dir.join(name);
    let tmp: PathBuf = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, &path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::io(path, e));
    }
    Ok(())
}

pub(super) fn persist(
    dir: &Path,
    index: &VectorIndex,
    model_id: &str,
    hashes: &[String],
) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let bin = encode_bin(index);
    let meta = Meta {
        format: FORMAT,
        model_id: model_id.to_string(),
        dim: index.dim(),
        bin_sha256: hex(&Sha256::digest(&bin)),
        tools: index
            .ids()
            .iter()
            .zip(hashes)
            .map(|(id, hash)| Entry {
                id: id.to_string(),
                hash: hash.clone(),
            })
            .collect(),
    };
    let json = serde_json::to_vec(&meta)
        .map_err(|e| Error::store(format!("cannot serialise {META}"), e))?;
    // The binary first: a crash between the two renames leaves a checksum
    // mismatch, which the next sync treats as absent.
    write_atomic(dir, BIN, &bin)?;
    write_atomic(dir, META, &json)
}

pub(super) fn load_or_warn(dir: &Path) -> Option<Stored> {
    match load(dir) {
        Ok(s) => s,
        Err(reason) => {
            tracing::warn!("ignoring corrupt vector index ({reason}); re-embedding every tool");
            None
        }
    }
}

/// The vectors persisted in `dir`, as stored: `None` when absent or
/// corrupt (with a warning). What `toolgraph migrate` copies.
pub fn read_vectors(dir: &Path) -> Option<Vectors> {
    let stored = load_or_warn(dir)?;
    let mut index = VectorIndex::with_capacity(stored.meta.dim, stored.meta.tools.len());
    for (i, entry) in stored.meta.tools.iter().enumerate() {
        index.push(&entry.id, stored.row(i)?);
    }
    let hashes = stored.meta.tools.iter().map(|e| e.hash.as_str()).collect();
    Some(Vectors {
        index,
        hashes,
        model_id: stored.meta.model_id,
    })
}

/// Compares the index persisted in `dir` with `tools` without embedding
/// anything. An absent or corrupt index reports count 0 and every tool stale.
pub fn index_health(dir: &Path, tools: &[Tool], model_id: &str) -> Result<IndexHealth> {
    let Some(stored) = load_or_warn(dir) else {
        return Ok(IndexHealth {
            count: 0,
            model_id: String::new(),
            dim: 0,
            stale: tools.len(),
        });
    };
    let stale = if stored.meta.model_id != model_id {
        tools.len()
    } else {
        let hashes: HashMap<&str, &str> = stored
            .meta
            .tools
            .iter()
            .map(|e| (e.id.as_str(), e.hash.as_str()))
            .collect();
        tools
            .iter()
            .filter(|t| {
                hashes.get(t.id.as_str()) != Some(&content_hash(&embedding_text(t)).as_str())
            })
            .count()
    };
    Ok(IndexHealth {
        count: stored.meta.tools.len(),
        model_id: stored.meta.model_id,
        dim: stored.meta.dim,
        stale,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::HashEmbedder;
    use crate::embed::{Embedder, sync_index};

    fn tools(n: usize) -> Vec<Tool> {
        (0..n)
            .map(|i| Tool {
                id: format!("t{i}"),
                name: format!("tool_number_{i}"),
                description: format!("Does thing {i}"),
                ..Default::default()
            })
            .collect()
    }

    #[test]
    fn incremental_sync_with_the_double() {
        let tmp = tempfile::tempdir().unwrap();
        let e = HashEmbedder::new();
        let mut list = tools(5);
        let (idx, r) = sync_index(Some(tmp.path()), &list, &e, false).unwrap();
        assert_eq!((r.embedded, r.reused, r.dropped, r.total), (5, 0, 0, 5));
        assert!(r.full_reindex);
        assert_eq!(
            idx.ids().iter().collect::<Vec<_>>(),
            ["t0", "t1", "t2", "t3", "t4"]
        );

        let (idx2, r) = sync_index(Some(tmp.path()), &list, &e, false).unwrap();
        assert_eq!((r.embedded, r.reused, r.full_reindex), (0, 5, false));
        assert_eq!(idx.get("t3"), idx2.get("t3"));

        list[2].description = "changed".into();
        list.remove(4);
        let h = index_health(tmp.path(), &list, e.model_id()).unwrap();
        assert_eq!((h.count, h.dim, h.stale), (5, 384, 1));
        let (_, r) = sync_index(Some(tmp.path()), &list, &e, false).unwrap();
        assert_eq!((r.embedded, r.reused, r.dropped, r.total), (1, 3, 1, 4));
        let h = index_health(tmp.path(), &list, e.model_id()).unwrap();
        assert_eq!((h.count, h.stale), (4, 0));
        let h = index_health(tmp.path(), &list, "other").unwrap();
        assert_eq!(h.stale, 4);

        let other = HashEmbedder::with_dim(16);
        let (idx, r) = sync_index(Some(tmp.path()), &list, &other, false).unwrap();
        assert_eq!(
            (r.embedded, r.reused, r.dropped, r.full_reindex),
            (4, 0, 0, true)
        );
        assert_eq!(idx.dim(), 16);
    }

    #[test]
    fn memory_only_and_duplicate_ids() {
        let e = HashEmbedder::new();
        let mut list = tools(3);
        list.push(list[0].clone());
        let (idx, r) = sync_index(None, &list, &e, true).unwrap();
        assert_eq!((r.embedded, r.total), (3, 3));
        assert_eq!(idx.len(), 3);
    }

    #[test]
    fn every_kind_of_corruption_is_treated_as_absent() {
        let e = HashEmbedder::with_dim(8);
        let list = tools(4);
        let tmp = tempfile::tempdir().unwrap();
        sync_index(Some(tmp.path()), &list, &e, false).unwrap();
        let good_bin = std::fs::read(tmp.path().join(BIN)).unwrap();
        let good_meta = std::fs::read(tmp.path().join(META)).unwrap();

        let mut flipped = good_bin.clone();
        *flipped.last_mut().unwrap() ^= 0x55;
        let mut bad_count = good_bin.clone();
        bad_count[16] = 0xff;
        let cases: Vec<(&str, Vec<u8>, Vec<u8>)> = vec![
            (
                "truncated bin",
                good_bin[..good_bin.len() - 3].to_vec(),
                good_meta.clone(),
            ),
            ("empty bin", Vec::new(), good_meta.clone()),
            ("flipped bin", flipped, good_meta.clone()),
            ("bad count", bad_count, good_meta.clone()),
            ("garbage meta", good_bin.clone(), b"{not json".to_vec()),
            ("empty meta", good_bin.clone(), Vec::new()),
        ];
        for (name, bin, meta) in cases {
            std::fs::write(tmp.path().join(BIN), &bin).unwrap();
            std::fs::write(tmp.path().join(META), &meta).unwrap();
            assert!(load(tmp.path()).is_err(), "{name} must be detected");
            let h = index_health(tmp.path(), &list, e.model_id()).unwrap();
            assert_eq!((h.count, h.stale), (0, 4), "{name}");
            let (idx, r) = sync_index(Some(tmp.path()), &list, &e, false).unwrap();
            assert_eq!(
                (r.embedded, r.full_reindex, idx.len()),
                (4, true, 4),
                "{name}"
            );
            let (_, r) = sync_index(Some(tmp.path()), &list, &e, false).unwrap();
            assert_eq!(r.reused, 4, "{name}: rebuilt index is reused");
        }
        std::fs::remove_file(tmp.path().join(META)).unwrap();
        assert!(load(tmp.path()).is_err(), "bin without meta");
    }

    #[test]
    fn decode_rejects_non_finite_values() {
        let mut idx = VectorIndex::new(2);
        idx.push("a", &[1.0, 0.0]);
        let mut bin = encode_bin(&idx);
        let n = bin.len();
        bin[n - 4..].copy_from_slice(&f32::NAN.to_le_bytes());
        assert!(decode_bin(&bin).is_err());
        assert_eq!(decode_bin(&encode_bin(&idx)).unwrap(), (2, vec![1.0, 0.0]));
    }
}
