//! What the graph-server store's mirror needs to send a change as a
//! difference of the graphs it wrote, not of the whole catalog.

use super::{META_GRAPH, OxigraphStore, extracted_graph, nn, source_graph, store_err};
use crate::error::Result;
use crate::graph::Change;
use oxigraph::model::{GraphName, NamedNode, NamedOrBlankNode, Quad, Term};
use std::collections::HashSet;

impl OxigraphStore {
    /// The named graphs `apply(change)` can write: each loaded or unloaded
    /// source's curated and extracted graphs and the meta graph (content
    /// hashes, load markers); `None` when it can write anywhere (removing
    /// tools removes their statements from every graph).
    pub(crate) fn graphs_written(change: &Change<'_>) -> Result<Option<Vec<NamedNode>>> {
        if !change.remove_tools.is_empty() {
            return Ok(None);
        }
        let names = change
            .load
            .iter()
            .map(|s| s.name.as_str())
            .chain(change.unload.iter().map(String::as_str));
        let mut graphs = vec![nn(META_GRAPH)?];
        for name in names {
            graphs.push(nn(&source_graph(name))?);
            graphs.push(nn(&extracted_graph(name))?);
        }
        graphs.sort();
        graphs.dedup();
        Ok(Some(graphs))
    }

    /// Every quad of these named graphs.
    pub(crate) fn quads_in(&self, graphs: &[NamedNode]) -> Result<Vec<Quad>> {
        let mut out = Vec::new();
        for g in graphs {
            for q in self
                .store
                .quads_for_pattern(None, None, None, Some(g.as_ref().into()))
            {
                out.push(q.map_err(store_err)?);
            }
        }
        Ok(out)
    }

    /// Every quad about one subject, in every graph.
    pub(crate) fn quads_about(&self, subject: &NamedOrBlankNode) -> Result<Vec<Quad>> {
        self.store
            .quads_for_pattern(Some(subject.as_ref()), None, None, None)
            .map(|q| q.map_err(store_err))
            .collect()
    }

    /// Whether every quad that names `node`, as subject or as object, is in
    /// one of `graphs`.
    pub(crate) fn named_only_in(
        &self,
        node: &NamedOrBlankNode,
        graphs: &HashSet<GraphName>,
    ) -> Result<bool> {
        let object: Term = node.clone().into();
        let about = self
            .store
            .quads_for_pattern(Some(node.as_ref()), None, None, None);
        let to = self
            .store
            .quads_for_pattern(None, None, Some(object.as_ref()), None);
        for q in about.chain(to) {
            if !graphs.contains(&q.map_err(store_err)?.graph_name) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Whether this store holds other quads than `before`, told apart for
    /// the quads of graph `apart` and for all others: `(others, apart)`.
    /// Both are sets, so equal sizes and every quad of `before` held here
    /// mean the same quads.
    pub(crate) fn differs_from(
        &self,
        before: &OxigraphStore,
        apart: &NamedNode,
    ) -> Result<(bool, bool)> {
        let in_apart = |s: &OxigraphStore| {
            s.store
                .quads_for_pattern(None, None, None, Some(apart.as_ref().into()))
                .count()
        };
        let (now_apart, before_apart) = (in_apart(self), in_apart(before));
        if before.store.is_empty().map_err(store_err)? {
            // A replica's first read: whatever is here is new.
            let others = self.store.iter().any(|q| {
                q.is_ok_and(|q| !matches!(&q.graph_name, GraphName::NamedNode(g) if g == apart))
            });
            return Ok((others, now_apart > 0));
        }
        let now_others = self.store.len().map_err(store_err)? - now_apart;
        let before_others = before.store.len().map_err(store_err)? - before_apart;
        let mut others = now_others != before_others;
        let mut apart_changed = now_apart != before_apart;
        for q in before.store.iter() {
            if others && apart_changed {
                break;
            }
            let q = q.map_err(store_err)?;
            let is_apart = matches!(&q.graph_name, GraphName::NamedNode(g) if g == apart);
            let known = if is_apart { apart_changed } else { others };
            if !known && !self.store.contains(&q).map_err(store_err)? {
                *(if is_apart {
                    &mut apart_changed
                } else {
                    &mut others
                }) = true;
            }
        }
        Ok((others, apart_changed))
    }
}
