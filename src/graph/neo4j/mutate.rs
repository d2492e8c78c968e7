//! A change's way to the server: applied to the mirror (where the seed
//! constraints refuse it or not), its difference computed (`diff.rs`) and
//! written in one transaction (`write.rs`), again on a version conflict.

use super::{CONFLICT_RETRIES, Neo4jStore, diff};
use crate::error::{Error, Result};
use crate::graph::oxigraph::OxigraphStore;
use oxigraph::model::{NamedNode, Quad};
use std::sync::PoisonError;

impl Neo4jStore {
    /// Applies a change to the mirror, then its difference to the server.
    ///
    /// A change says what a source (or a record) is to be, so when another
    /// replica wrote in between (a version conflict, or the server refusing
    /// a concurrent commit) it is applied again on the catalog as it now
    /// is, a few times, before the conflict is reported.
    ///
    /// `graphs`: the named graphs the change can write (`None`: any); only
    /// their statements are compared before and after, so a write costs
    /// the size of what it touches, not of the catalog.
    pub(super) fn mutate<T>(
        &self,
        graphs: Option<&[NamedNode]>,
        f: impl Fn(&OxigraphStore) -> Result<T>,
    ) -> Result<T> {
        let _writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        let mut attempt = 0;
        loop {
            match self.mutate_once(graphs, &f) {
                Err(Error::Conflict(why)) if attempt < CONFLICT_RETRIES => {
                    attempt += 1;
                    tracing::info!(attempt, %why, "another replica wrote at the same time; applying the change again");
                    std::thread::sleep(std::time::Duration::from_millis(20 << attempt.min(5)));
                }
                other => return other,
            }
        }
    }

    fn mutate_once<T>(
        &self,
        graphs: Option<&[NamedNode]>,
        f: &impl Fn(&OxigraphStore) -> Result<T>,
    ) -> Result<T> {
        self.catch_up()?;
        let mut mirror = self.mirror.write().unwrap_or_else(PoisonError::into_inner);
        // What the server holds of what the change can touch (the mirror is
        // the server as of `version` until the change is applied).
        let before: Vec<Quad> = match graphs {
            Some(g) => mirror.store.quads_in(g)?,
            None => mirror.store.all_quads()?,
        };
        // A refused change rolls itself back in the mirror (one oxigraph
        // transaction) and never reaches the server.
        let t = std::time::Instant::now();
        let out = f(&mirror.store)?;
        tracing::debug!("bolt: mirror written in {:?}", t.elapsed());
        let t = std::time::Instant::now();
        let difference = match graphs {
            Some(g) => diff::in_graphs(&mirror.store, g, before)?,
            None => diff::whole(&mirror.store, before)?,
        };
        tracing::debug!(
            "bolt: difference of {} removed, {} added ({} new typed resources) in {:?}",
            difference.removed.len(),
            difference.added.len(),
            difference.new_typed.len(),
            t.elapsed()
        );
        if difference.removed.is_empty() && difference.added.is_empty() {
            return Ok(out);
        }
        let t = std::time::Instant::now();
        let written = self.write(&difference, mirror.version, &mirror.store);
        tracing::debug!("bolt: server written in {:?}", t.elapsed());
        match written {
            Ok(version) => {
                mirror.version = version;
                Ok(out)
            }
            Err(e) => {
                // The server is as it was; so must the mirror be.
                drop(mirror);
                if let Err(reload) = self.reload() {
                    tracing::error!(error = %reload, "cannot re-read the graph server after a failed write");
                }
                Err(e)
            }
        }
    }
}
