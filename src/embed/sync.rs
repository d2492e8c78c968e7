//! Bringing the vectors in line with the catalog: reuse what the last
//! snapshot or the disk holds for unchanged texts, take what was embedded
//! ahead or what another replica stored, embed only the rest.

use std::collections::{HashMap, HashSet};
use std::io::IsTerminal;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};

use super::packed::Packed;
use super::store::{Stored, content_hash, load_or_warn, persist};
use super::{Embedder, SyncReport, VectorIndex, embedding_text};
use crate::error::{Error, Result};
use crate::model::Tool;

/// Texts per embedder call while syncing.
const SYNC_BATCH: usize = 32;

fn progress_bar(enabled: bool, len: usize) -> indicatif::ProgressBar {
    if !enabled || len == 0 || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(len as u64);
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "embedding {bar:40} {pos}/{len} tools ({per_sec}, eta {eta})",
    ) {
        bar.set_style(style);
    }
    bar
}

/// An index with the content hash of every row and the model that built
/// it: what the next sync reuses without reading anything from disk.
#[derive(Debug, Clone, Default)]
pub struct Vectors {
    pub index: VectorIndex,
    /// sha256 of each row's [`embedding_text`], in row order.
    pub hashes: Packed,
    pub model_id: String,
}

/// Where reusable vectors come from: the previous snapshot, or the disk.
enum Reuse<'a> {
    Memory(&'a Vectors),
    Disk(Stored),
}

impl Reuse<'_> {
    fn model_id(&self) -> &str {
        match self {
            Reuse::Memory(v) => &v.model_id,
            Reuse::Disk(s) => &s.meta.model_id,
        }
    }
    fn dim(&self) -> usize {
        match self {
            Reuse::Memory(v) => v.index.dim(),
            Reuse::Disk(s) => s.meta.dim,
        }
    }
    /// Row id and content hash, in stored order.
    fn entries(&self) -> Vec<(&str, &str)> {
        match self {
            Reuse::Memory(v) => v.index.ids().iter().zip(v.hashes.iter()).collect(),
            Reuse::Disk(s) => s
                .meta
                .tools
                .iter()
                .map(|e| (e.id.as_str(), e.hash.as_str()))
                .collect(),
        }
    }
    /// Adds stored row `row` to `index` under `id` (a row kept in memory
    /// as it is kept there); `false` when there is no such row.
    fn push_into(&self, index: &mut VectorIndex, id: &str, row: usize) -> bool {
        match self {
            Reuse::Memory(v) => index.push_copy(id, &v.index, row),
            Reuse::Disk(s) => s.row(row).is_some_and(|r| index.push(id, r)),
        }
    }
    fn has_row(&self, row: usize) -> bool {
        match self {
            Reuse::Memory(v) => row < v.index.len(),
            Reuse::Disk(s) => s.row(row).is_some(),
        }
    }
}

/// Vectors kept beside a shared catalog (a graph server several replicas
/// use): asked for the tools that neither the previous snapshot nor the
/// disk covers, and given every vector embedded here.
pub trait SharedVectors {
    /// For each `(tool id, content hash)`, the vector stored for that tool
    /// under `model_id` and the same hash, if any.
    fn fetch(&self, model_id: &str, wanted: &[(&str, &str)]) -> Result<Vec<Option<Vec<f32>>>>;
    /// Stores `(tool id, content hash, vector)` rows embedded by `model_id`.
    fn store(&self, model_id: &str, rows: &[(&str, &str, &[f32])]) -> Result<()>;
}

/// Where a sync starts from and what it may reuse.
#[derive(Clone, Copy, Default)]
pub struct SyncSources<'a> {
    /// The last snapshot's vectors.
    pub previous: Option<&'a Vectors>,
    /// The directory vectors persist in.
    pub dir: Option<&'a Path>,
    /// Vectors shared through the catalog's store.
    pub shared: Option<&'a dyn SharedVectors>,
    /// Vectors embedded ahead, while the store wrote this change.
    pub ahead: Option<&'a Ahead>,
}

/// Vectors embedded ahead of a sync (on one core, while the store wrote
/// the tools they are for), keyed by the content hash of their text: a
/// sync takes one only for a tool whose text it is.
#[derive(Debug, Default)]
pub struct Ahead {
    vectors: HashMap<String, Vec<f32>>,
}

impl Ahead {
    /// Vectors computed elsewhere for `texts` (in order), e.g. by screening
    /// before the write.
    pub fn from_vectors(texts: &[String], vectors: Vec<Vec<f32>>) -> Self {
        Self {
            vectors: texts.iter().map(|t| content_hash(t)).zip(vectors).collect(),
        }
    }

    /// Vectors computed.
    pub fn len(&self) -> usize {
        self.vectors.len()
    }

    pub fn is_empty(&self) -> bool {
        self.vectors.is_empty()
    }

    /// Of `texts`, those a sync after `previous` would embed: each once,
    /// not already held by `previous` under `model_id`.
    pub fn wanted(
        texts: impl IntoIterator<Item = String>,
        previous: Option<&Vectors>,
        model_id: &str,
    ) -> Vec<String> {
        let held: HashSet<&str> = previous
            .filter(|p| p.model_id == model_id)
            .map(|p| p.hashes.iter().collect())
            .unwrap_or_default();
        let mut seen = HashSet::new();
        texts
            .into_iter()
            .filter(|t| {
                let hash = content_hash(t);
                !held.contains(hash.as_str()) && seen.insert(hash)
            })
            .collect()
    }
}

/// Texts per call while embedding ahead: one call on one core takes about
/// 80 ms, the most a stop waits.
const AHEAD_BATCH: usize = 8;

/// Embeds `texts` with [`Embedder::embed_documents_beside`], shortest
/// first, a few at a time, until all are done or `stop` is set. An error
/// (or an embedder without that mode) ends it quietly: whatever is missing,
/// the sync embeds, and reports its errors.
pub fn embed_ahead(embedder: &dyn Embedder, mut texts: Vec<String>, stop: &AtomicBool) -> Ahead {
    texts.sort_by_key(String::len);
    let dim = embedder.dim();
    let mut vectors = HashMap::with_capacity(texts.len());
    for chunk in texts.chunks(AHEAD_BATCH) {
        if stop.load(AtomicOrdering::Relaxed) {
            break;
        }
        let Some(Ok(out)) = embedder.embed_documents_beside(chunk) else {
            break;
        };
        if out.len() != chunk.len() {
            break;
        }
        for (text, v) in chunk.iter().zip(out) {
            if v.len() == dim && v.iter().all(|x| x.is_finite()) {
                vectors.insert(content_hash(text), v);
            }
        }
    }
    Ahead { vectors }
}

impl std::fmt::Debug for SyncSources<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SyncSources")
            .field("previous", &self.previous.map(|v| v.index.len()))
            .field("dir", &self.dir)
            .field("shared", &self.shared.is_some())
            .field("ahead", &self.ahead.map(Ahead::len))
            .finish()
    }
}

/// Brings the vector index in line with `tools` and returns it (see
/// [`sync_vectors`]; this form starts from the disk only).
pub fn sync_index(
    dir: Option<&Path>,
    tools: &[Tool],
    embedder: &dyn Embedder,
    progress: bool,
) -> Result<(VectorIndex, SyncReport)> {
    let from = SyncSources {
        dir,
        ..SyncSources::default()
    };
    sync_vectors(from, tools, embedder, progress).map(|(v, r)| (v.index, r))
}

/// Brings the vectors in line with `tools` and returns them.
///
/// Vectors of `previous` (the last snapshot's), else those persisted in
/// `dir`, are reused for every tool whose [`embedding_text`] hash is
/// unchanged; then what was embedded ahead is taken, then the `shared`
/// store is asked for the rest; only what is still missing is embedded
/// (batches of 32) and given to the shared store. Vectors of tools no
/// longer listed are dropped, and everything is re-embedded when the model
/// id differs. With `dir`, the result is written back atomically when
/// anything changed. Corrupt or truncated files are treated as absent (with
/// a warning). Rows follow the order of `tools`; a repeated id keeps its
/// first occurrence.
pub fn sync_vectors(
    from: SyncSources<'_>,
    tools: &[Tool],
    embedder: &dyn Embedder,
    progress: bool,
) -> Result<(Vectors, SyncReport)> {
    let model_id = embedder.model_id().to_string();
    let dim = embedder.dim();
    let wanted = wanted_texts(tools);
    let hashes: Vec<String> = wanted.iter().map(|(_, text)| content_hash(text)).collect();
    let reuse = from
        .previous
        .map(Reuse::Memory)
        .or_else(|| from.dir.and_then(load_or_warn).map(Reuse::Disk))
        .filter(|r| r.model_id() == model_id && r.dim() == dim);
    let entries = reuse.as_ref().map(Reuse::entries).unwrap_or_default();
    let stored_rows: HashMap<&str, (usize, &str)> = entries
        .iter()
        .enumerate()
        .map(|(i, (id, hash))| (*id, (i, *hash)))
        .collect();
    let mut plan = Plan::new(&wanted, &hashes, reuse.as_ref(), &stored_rows);
    plan.take_ahead(from.ahead, dim);
    let from_ahead = plan.fresh.len();
    plan.fetch_shared(from.shared, &model_id, dim)?;
    plan.embed_missing(embedder, dim, progress)?;
    if let Some(shared) = from.shared {
        plan.store_shared(shared, &model_id)?;
    }
    let index = plan.assemble(dim)?;
    let wanted_ids: HashSet<&str> = wanted.iter().map(|(id, _)| *id).collect();
    let report = SyncReport {
        embedded: plan.to_embed.len(),
        ahead: from_ahead,
        shared: plan.fetched.len(),
        reused: wanted.len() - plan.to_embed.len() - plan.fetched.len(),
        dropped: stored_rows
            .keys()
            .filter(|id| !wanted_ids.contains(*id))
            .count(),
        total: index.len(),
        model_id: model_id.clone(),
        full_reindex: reuse.is_none() && plan.fetched.is_empty(),
    };
    if let Some(dir) = from.dir {
        let same_order = entries.len() == index.len()
            && entries
                .iter()
                .zip(index.ids().iter())
                .all(|((e, _), id)| *e == id);
        if !(same_order && report.embedded == 0 && report.dropped == 0) {
            persist(dir, &index, &model_id, &hashes)?;
        }
    }
    drop(plan);
    drop(entries);
    drop(reuse);
    Ok((
        Vectors {
            index,
            hashes: hashes.iter().map(String::as_str).collect(),
            model_id,
        },
        report,
    ))
}

/// Each listed tool's id and embedding text, a repeated id once.
fn wanted_texts(tools: &[Tool]) -> Vec<(&str, String)> {
    let mut seen: HashSet<&str> = HashSet::with_capacity(tools.len());
    tools
        .iter()
        .filter(|t| {
            let fresh = seen.insert(t.id.as_str());
            if !fresh {
                tracing::warn!("tool id `{}` listed twice; keeping the first", t.id);
            }
            fresh
        })
        .map(|t| (t.id.as_str(), embedding_text(t)))
        .collect()
}

/// Where each wanted tool's vector comes from, worked out step by step.
struct Plan<'a> {
    wanted: &'a [(&'a str, String)],
    hashes: &'a [String],
    /// Where the vectors reused come from.
    reuse: Option<&'a Reuse<'a>>,
    /// The reused row of each wanted tool.
    kept: Vec<Option<usize>>,
    /// Wanted tools with no reused vector, by index.
    to_embed: Vec<usize>,
    /// Vectors embedded here (or ahead), by wanted index.
    fresh: HashMap<usize, Vec<f32>>,
    /// Vectors the shared store held, by wanted index.
    fetched: HashMap<usize, Vec<f32>>,
}

impl<'a> Plan<'a> {
    /// Which tools can keep their vector, which need one.
    fn new(
        wanted: &'a [(&'a str, String)],
        hashes: &'a [String],
        reuse: Option<&'a Reuse<'a>>,
        stored_rows: &HashMap<&str, (usize, &str)>,
    ) -> Self {
        let mut kept = Vec::with_capacity(wanted.len());
        let mut to_embed = Vec::new();
        for (i, ((id, _), hash)) in wanted.iter().zip(hashes).enumerate() {
            let row = reuse.and_then(|r| {
                let (row, h) = stored_rows.get(id)?;
                (*h == hash.as_str() && r.has_row(*row)).then_some(*row)
            });
            if row.is_none() {
                to_embed.push(i);
            }
            kept.push(row);
        }
        Self {
            wanted,
            hashes,
            reuse,
            kept,
            fresh: HashMap::with_capacity(to_embed.len()),
            to_embed,
            fetched: HashMap::new(),
        }
    }

    /// What was embedded ahead, while the store wrote (this load's work
    /// too: counted as embedded).
    fn take_ahead(&mut self, ahead: Option<&Ahead>, dim: usize) {
        let Some(ahead) = ahead else { return };
        for &i in &self.to_embed {
            if let Some(v) = ahead
                .vectors
                .get(&self.hashes[i])
                .filter(|v| v.len() == dim)
            {
                self.fresh.insert(i, v.clone());
            }
        }
    }

    /// What the shared store already holds (another replica embedded it).
    fn fetch_shared(
        &mut self,
        shared: Option<&dyn SharedVectors>,
        model_id: &str,
        dim: usize,
    ) -> Result<()> {
        let Some(shared) = shared else { return Ok(()) };
        if self.to_embed.len() == self.fresh.len() {
            return Ok(());
        }
        let asked: Vec<usize> = self
            .to_embed
            .iter()
            .copied()
            .filter(|i| !self.fresh.contains_key(i))
            .collect();
        let ask: Vec<(&str, &str)> = asked
            .iter()
            .map(|&i| (self.wanted[i].0, self.hashes[i].as_str()))
            .collect();
        let answers = shared.fetch(model_id, &ask)?;
        for (&i, v) in asked.iter().zip(answers) {
            if let Some(v) = v.filter(|v| v.len() == dim && v.iter().all(|x| x.is_finite())) {
                self.fetched.insert(i, v);
            }
        }
        let fetched = &self.fetched;
        self.to_embed.retain(|i| !fetched.contains_key(i));
        Ok(())
    }

    /// Embeds what is still missing, texts of similar length together (a
    /// batch is padded to its longest text).
    fn embed_missing(&mut self, embedder: &dyn Embedder, dim: usize, progress: bool) -> Result<()> {
        let wanted = self.wanted;
        self.to_embed
            .sort_by_key(|&i| wanted.get(i).map_or(0, |(_, t)| t.len()));
        let left: Vec<usize> = self
            .to_embed
            .iter()
            .copied()
            .filter(|i| !self.fresh.contains_key(i))
            .collect();
        let bar = progress_bar(progress, left.len());
        for chunk in left.chunks(SYNC_BATCH) {
            let texts: Vec<String> = chunk
                .iter()
                .filter_map(|&i| wanted.get(i).map(|(_, t)| t.clone()))
                .collect();
            let vectors = embedder.embed_documents(&texts)?;
            if vectors.len() != chunk.len() {
                return Err(Error::model_msg(format!(
                    "embedder returned {} vectors for {} texts",
                    vectors.len(),
                    chunk.len()
                )));
            }
            for (&i, v) in chunk.iter().zip(vectors) {
                if v.len() != dim {
                    return Err(Error::model_msg(format!(
                        "embedder returned a vector of length {} instead of {dim}",
                        v.len()
                    )));
                }
                self.fresh.insert(i, v);
            }
            bar.inc(chunk.len() as u64);
        }
        bar.finish_and_clear();
        Ok(())
    }

    /// Gives the shared store every vector embedded here.
    fn store_shared(&self, shared: &dyn SharedVectors, model_id: &str) -> Result<()> {
        if self.fresh.is_empty() {
            return Ok(());
        }
        let rows: Vec<(&str, &str, &[f32])> = self
            .to_embed
            .iter()
            .filter_map(|&i| {
                Some((
                    self.wanted[i].0,
                    self.hashes[i].as_str(),
                    self.fresh.get(&i)?.as_slice(),
                ))
            })
            .collect();
        shared.store(model_id, &rows)
    }

    /// The index: every wanted tool's vector, in order.
    fn assemble(&self, dim: usize) -> Result<VectorIndex> {
        let mut index = VectorIndex::with_capacity(dim, self.wanted.len());
        for (i, ((id, _), row)) in self.wanted.iter().zip(&self.kept).enumerate() {
            // A row that cannot be added (an id twice) is left out, as
            // `push` leaves it out.
            match (row, self.reuse) {
                (Some(row), Some(reuse)) => reuse.push_into(&mut index, id, *row),
                _ => match self.fresh.get(&i).or_else(|| self.fetched.get(&i)) {
                    Some(v) => index.push(id, v),
                    None => {
                        return Err(Error::model_msg(format!("no vector for tool `{id}`")));
                    }
                },
            };
        }
        Ok(index)
    }
}
