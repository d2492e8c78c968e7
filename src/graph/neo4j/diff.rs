//! What a change did to the mirror, as the server is to receive it: the
//! statements removed and added, and the typed resources that are new to
//! the catalog (no statement named them before), which the write creates
//! with their label instead of looking each up first.

use super::codec::node_id;
use crate::error::Result;
use crate::graph::oxigraph::OxigraphStore;
use oxigraph::model::{GraphName, NamedNode, NamedOrBlankNode, Quad, Term};
use rayon::prelude::*;
use std::collections::HashSet;

/// A change's difference.
#[derive(Debug)]
pub(super) struct Difference {
    pub removed: Vec<Quad>,
    pub added: Vec<Quad>,
    /// Resources (as the server names them) that `added` gives a type and
    /// that no statement named before the change.
    pub new_typed: HashSet<String>,
}

/// The difference between `before` (the quads of `graphs` before the change)
/// and what `graphs` hold in `now`. A graph that held nothing before (a
/// registration's usual case) is added whole, without set differences.
pub(super) fn in_graphs(
    now: &OxigraphStore,
    graphs: &[NamedNode],
    before: Vec<Quad>,
) -> Result<Difference> {
    let held: HashSet<&GraphName> = before.iter().map(|q| &q.graph_name).collect();
    let fresh: HashSet<GraphName> = graphs
        .iter()
        .map(|g| GraphName::NamedNode(g.clone()))
        .filter(|g| !held.contains(g))
        .collect();
    let mut added = Vec::new();
    let mut changed: HashSet<Quad> = HashSet::new();
    for q in now.quads_in(graphs)? {
        if fresh.contains(&q.graph_name) {
            added.push(q);
        } else {
            changed.insert(q);
        }
    }
    let before: HashSet<Quad> = before.into_iter().collect();
    let removed: Vec<Quad> = before.difference(&changed).cloned().collect();
    added.extend(changed.difference(&before).cloned());
    let new_typed = new_typed(now, &added, &removed, &fresh)?;
    Ok(Difference {
        removed,
        added,
        new_typed,
    })
}

/// The difference between every quad the server held (`held`) and every
/// quad of `now` (a change of any graph); no resource is taken as new.
pub(super) fn whole(now: &OxigraphStore, held: Vec<Quad>) -> Result<Difference> {
    let now: HashSet<Quad> = now.all_quads()?.into_iter().collect();
    let held: HashSet<Quad> = held.into_iter().collect();
    Ok(Difference {
        removed: held.difference(&now).cloned().collect(),
        added: now.difference(&held).cloned().collect(),
        new_typed: HashSet::new(),
    })
}

/// Of the subjects of `added`'s type statements, those every statement
/// naming them (as subject or object) is in a graph new to the catalog,
/// and no removed statement named: the server has no node for them yet.
fn new_typed(
    now: &OxigraphStore,
    added: &[Quad],
    removed: &[Quad],
    fresh: &HashSet<GraphName>,
) -> Result<HashSet<String>> {
    if fresh.is_empty() {
        return Ok(HashSet::new());
    }
    let gone: HashSet<String> = removed
        .iter()
        .flat_map(|q| {
            let object = match &q.object {
                Term::NamedNode(n) => Some(node_id(&n.clone().into())),
                Term::BlankNode(b) => Some(node_id(&b.clone().into())),
                _ => None,
            };
            std::iter::once(node_id(&q.subject)).chain(object)
        })
        .collect();
    let typed: HashSet<&NamedOrBlankNode> = added
        .iter()
        .filter(|q| q.predicate.as_str() == crate::vocab::RDF_TYPE)
        .map(|q| &q.subject)
        .collect();
    let typed: Vec<&NamedOrBlankNode> = typed.into_iter().collect();
    // A seek or two each: 100k tools' parameters and all, on every core.
    typed
        .par_iter()
        .filter_map(|subject| {
            let id = node_id(subject);
            if gone.contains(&id) {
                return None;
            }
            match now.named_only_in(subject, fresh) {
                Ok(true) => Some(Ok(id)),
                Ok(false) => None,
                Err(e) => Some(Err(e)),
            }
        })
        .collect()
}
