//! Dependency-aware ordering: with `dependencies: true`, each match is
//! followed by the tools it needs (declared `dependsOn` edges, then inferred
//! ones at or above the threshold), so a planner gets the tool *and* what
//! feeds it in one list.
//!
//! - Matches keep their order; a prerequisite is listed right after the
//!   first match that needs it (nearest first) and not again later.
//! - A prerequisite's confidence is the needing match's confidence times
//!   the chain's edge confidences, or its own when that is higher (a tool
//!   that also matches the request on its own).
//! - Only tools of the scope are listed or walked through (the catalog's
//!   traversal never leaves it); each tool once, so cycles end.

use super::{PrerequisiteOf, RankedTool, ScoreDetails};
use crate::catalog::Catalog;
use crate::catalog::deps::Prerequisite;
use crate::model::Provenance;
use crate::scope::Scope;
use std::collections::{HashMap, HashSet};

/// The first `limit` tools: each ranked tool, then its prerequisites, each
/// with its own prerequisites in running order. `details` scores a
/// prerequisite the ranking did not keep. Every tool's prerequisites are
/// walked once.
pub(crate) fn place(
    catalog: &Catalog,
    scope: &Scope,
    ranked: Vec<RankedTool>,
    details: impl Fn(usize) -> ScoreDetails,
    min_inferred: f32,
    limit: usize,
) -> Vec<RankedTool> {
    let own: HashMap<usize, usize> = ranked.iter().enumerate().map(|(i, r)| (r.idx, i)).collect();
    let mut out: Vec<RankedTool> = Vec::new();
    let mut placed: HashSet<usize> = HashSet::new();
    for i in 0..ranked.len() {
        if out.len() >= limit {
            break;
        }
        let r = &ranked[i];
        if !placed.insert(r.idx) {
            continue;
        }
        let walked = catalog.prerequisites(r.idx, scope, min_inferred);
        let base = r.confidence;
        out.push(RankedTool {
            prerequisites: catalog.running_order_of(r.idx, &walked),
            ..r.clone()
        });
        for p in &walked {
            if out.len() >= limit {
                break;
            }
            if !placed.insert(p.idx) {
                continue;
            }
            let (own_confidence, mut d) = match own.get(&p.idx) {
                Some(&j) => (ranked[j].confidence, ranked[j].details.clone()),
                None => (0.0, details(p.idx)),
            };
            d.prerequisite_of = Some(explain(catalog, p));
            out.push(RankedTool {
                idx: p.idx,
                confidence: (base * p.confidence).max(own_confidence),
                details: d,
                prerequisites: catalog.running_order(p.idx, scope, min_inferred),
            });
        }
    }
    out
}

/// The `prerequisite_of` record of one listed prerequisite.
fn explain(catalog: &Catalog, p: &Prerequisite<'_>) -> PrerequisiteOf {
    let name = |i: usize| catalog.tools().get(i).map_or("", |t| t.name.as_str());
    let tool = name(p.of).to_string();
    let edge = p.edge;
    let mut facts = vec![match edge.provenance {
        Provenance::Curated => "declared".to_string(),
        Provenance::Extracted => format!("inferred, confidence {:.2}", edge.confidence),
    }];
    if let Some(kind) = &edge.facts.kind {
        facts.push(kind.clone());
    }
    if let Some(param) = &edge.facts.parameter {
        facts.push(format!("parameter `{param}`"));
    }
    let mut explain = format!("runs before `{tool}` ({})", facts.join(", "));
    if let Some(reason) = &edge.facts.reason {
        explain.push_str(": ");
        explain.push_str(reason);
    }
    PrerequisiteOf {
        tool,
        provenance: edge.provenance,
        confidence: edge.confidence,
        depth: p.depth,
        facts: edge.facts.clone(),
        explain,
    }
}
