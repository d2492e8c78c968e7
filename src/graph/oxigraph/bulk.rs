//! Large registrations without a giant transaction.
//!
//! A transaction buffers every write in an indexed batch and then in one
//! memtable: registering 30,000 new tools (0.95M quads) that way took 72 s
//! and 2.6 GB, and the cost grows faster than the catalog (10k: 17 s). When
//! a change only *adds* sources the store has never held and inserts at
//! least [`BULK_FROM`] quads, the quads are written by oxigraph's bulk
//! loader instead: sorted files ingested into every index in one atomic
//! step.
//!
//! The bulk loader cannot be rolled back and does not validate, so the
//! ingest carries a marker per source (`<source graph> tg:loading true` in
//! the meta graph). The seed constraints then run on the store; a violation
//! removes the ingested graphs again and the load fails as a transaction
//! would have. Only then the markers go (and the content hashes are
//! recorded) in one small transaction. A process that dies in between
//! leaves markers behind, and [`OxigraphStore::recover`] removes those
//! sources when the store is opened next: a load is either all there or
//! not there at all.

use super::{META_GRAPH, OxigraphStore, extracted_graph, nn, source_graph, store_err};
use crate::error::{Error, Result};
use oxigraph::model::{Literal, NamedOrBlankNode, Quad, Term};

/// The fewest inserted quads that take the bulk path (about 3,000 tools).
pub(super) const BULK_FROM: usize = 100_000;

/// The bulk loader's memory target (its default is 2 GB per thread).
/// Registering 100k new tools: peak RSS 4.40 GB at the default, 2.70 GB
/// at 512 MB, and 41 s instead of 43.
const BULK_MEMORY_MB: usize = 512;

const LOADING: &str = "https://toolgraph.dev/ns#loading";

/// One source of a bulk insert: its name, its quads, the content-hash quad
/// to record once it is checked.
pub(super) struct Fresh<'a> {
    pub(super) name: &'a str,
    pub(super) quads: &'a [Quad],
    pub(super) known: Quad,
}

fn marker(name: &str) -> Result<Quad> {
    Ok(Quad::new(
        nn(&source_graph(name))?,
        nn(LOADING)?,
        Term::Literal(Literal::from(true)),
        nn(META_GRAPH)?,
    ))
}

impl OxigraphStore {
    /// Whether the store holds anything of this source already.
    pub(super) fn holds_source(&self, name: &str) -> Result<bool> {
        for graph in [source_graph(name), extracted_graph(name)] {
            if self
                .store
                .contains_named_graph(nn(&graph)?.as_ref())
                .map_err(store_err)?
            {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Adds new sources with the bulk loader (see the module docs); with
    /// `check`, the seed constraints hold afterwards or nothing was added.
    pub(super) fn bulk_insert(&self, sources: &[Fresh<'_>], check: bool) -> Result<()> {
        self.ingest(sources)?;
        if check {
            let violations = crate::graph::GraphStore::validate(self)?;
            if !violations.is_empty() {
                self.forget(sources.iter().map(|s| s.name))?;
                return Err(Error::Violations(violations));
            }
        }
        let mut transaction = self.store.start_transaction().map_err(store_err)?;
        for source in sources {
            transaction.remove(&marker(source.name)?);
            if check {
                transaction.insert(&source.known);
            }
        }
        transaction.commit().map_err(store_err)
    }

    /// The quads and their markers, in one atomic ingest.
    pub(super) fn ingest(&self, sources: &[Fresh<'_>]) -> Result<()> {
        let markers = sources
            .iter()
            .map(|s| marker(s.name))
            .collect::<Result<Vec<_>>>()?;
        let mut loader = self
            .store
            .bulk_loader()
            .with_max_memory_size_in_megabytes(BULK_MEMORY_MB);
        loader
            .load_quads(
                markers
                    .into_iter()
                    .chain(sources.iter().flat_map(|s| s.quads.iter().cloned())),
            )
            .map_err(store_err)?;
        loader.commit().map_err(store_err)
    }

    /// Removes what loads that never finished left (their markers say
    /// which). Returns the sources removed.
    pub(crate) fn recover(&self) -> Result<Vec<String>> {
        let loading = nn(LOADING)?;
        let meta = nn(META_GRAPH)?;
        let mut names = Vec::new();
        for quad in self.store.quads_for_pattern(
            None,
            Some(loading.as_ref()),
            None,
            Some(meta.as_ref().into()),
        ) {
            let quad = quad.map_err(store_err)?;
            if let NamedOrBlankNode::NamedNode(graph) = quad.subject {
                names.extend(super::source_name(graph.as_str()));
            }
        }
        self.forget(names.iter().map(String::as_str))?;
        Ok(names)
    }

    /// Drops these sources' graphs, then their markers (a crash in the
    /// middle leaves the markers, and the next open finishes the job).
    fn forget<'a>(&self, names: impl Iterator<Item = &'a str> + Clone) -> Result<()> {
        for name in names.clone() {
            for graph in [source_graph(name), extracted_graph(name)] {
                // Its statements go with it.
                self.store
                    .remove_named_graph(nn(&graph)?.as_ref())
                    .map_err(store_err)?;
            }
        }
        for name in names {
            self.store.remove(&marker(name)?).map_err(store_err)?;
        }
        Ok(())
    }
}
