//! Dependency-aware ordering: with `dependencies: true`, each match is
//! followed by the tools it needs (declared `dependsOn` edges, then inferred
//! ones at or above the threshold), so a planner gets the tool *and* what
//! feeds it in one list, and each match a small plan.
//!
//! - Only what the request needs: a prerequisite that produces a parameter
//!   the request already gives (an e-mail, a date, a place, an id…; see
//!   [`super::supplied`]) is left out, with what gave it, unless it checks
//!   that value (`validate_email` still runs on a given address).
//! - Among alternative producers of one parameter (any of 29 logins makes a
//!   session), the one the request supports best is walked; the others are
//!   named in the plan step.
//! - Matches keep their order; a prerequisite is listed right after the
//!   first match that needs it (nearest first) and not again later; a tool
//!   the request names exactly is never pushed below its own place.
//! - A prerequisite's confidence is the needing match's confidence times
//!   the chain's edge confidences, times the request's support for it
//!   (half for none, whole for the best match's), or its own when that is
//!   higher.
//! - Only tools of the scope are listed or walked through (the catalog's
//!   traversal never leaves it); each tool once, so cycles end.

use super::supplied::Supplied;
use super::{Plan, PlanStep, PrerequisiteOf, RankedTool, ScoreDetails, SuppliedParameter};
use crate::catalog::Catalog;
use crate::catalog::deps::{Edge, Prerequisite};
use crate::model::Provenance;
use crate::scope::Scope;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

/// The first `limit` tools: each ranked tool, then its prerequisites, each
/// with its own prerequisites in running order. `details` scores a
/// prerequisite the ranking did not keep. Every tool's prerequisites are
/// walked once.
pub(crate) fn place(
    catalog: &Catalog,
    scope: &Scope,
    request: &Supplied<'_>,
    ranked: Vec<RankedTool>,
    details: impl Fn(usize) -> ScoreDetails,
    min_inferred: f32,
    limit: usize,
) -> Vec<RankedTool> {
    let own: HashMap<usize, usize> = ranked.iter().enumerate().map(|(i, r)| (r.idx, i)).collect();
    let scores = Scores {
        ranked: &ranked,
        own: &own,
        best: ranked
            .first()
            .map_or(0.0, |r| r.details.fused)
            .max(f32::EPSILON),
        details: &details,
        scored: RefCell::default(),
    };
    let support = |idx: usize| scores.support(idx);
    let chooser = Chooser {
        catalog,
        request,
        support: &support,
        notes: RefCell::default(),
    };
    let walk = |idx: usize| {
        chooser.notes.replace(Notes::default());
        let walked = catalog.prerequisites_chosen(idx, scope, min_inferred, &|at, edges| {
            chooser.choose(at, edges)
        });
        let plan = chooser.notes.take().plan(catalog, &walked, idx);
        (walked, plan)
    };
    // Tools the request names, by their place in the ranking.
    let named: Vec<usize> = (0..ranked.len())
        .filter(|&i| ranked[i].details.exact_name)
        .collect();
    let mut out: Vec<RankedTool> = Vec::new();
    let mut placed: HashSet<usize> = HashSet::new();
    // Named tools listed early (to keep their place) whose prerequisites
    // come at their own turn.
    let mut early: HashSet<usize> = HashSet::new();
    for i in 0..ranked.len() {
        if out.len() >= limit {
            break;
        }
        let r = &ranked[i];
        let first_time = placed.insert(r.idx);
        if !first_time && !early.remove(&r.idx) {
            continue;
        }
        let (walked, plan) = walk(r.idx);
        let base = r.confidence;
        let entry = RankedTool {
            prerequisites: catalog.running_order_of(r.idx, &walked),
            plan: Some(plan),
            ..r.clone()
        };
        match out.iter_mut().find(|t| t.idx == r.idx && !first_time) {
            Some(t) => *t = entry,
            None => out.push(entry),
        }
        for p in &walked {
            // A named tool further down reached its place: it goes first.
            for &n in &named {
                if n > i && n <= out.len() && out.len() < limit && placed.insert(ranked[n].idx) {
                    early.insert(ranked[n].idx);
                    out.push(ranked[n].clone());
                }
            }
            if out.len() >= limit {
                break;
            }
            if !placed.insert(p.idx) {
                continue;
            }
            let (own_confidence, mut d) = scores.listed(p.idx);
            d.prerequisite_of = Some(explain(catalog, p));
            let needed = base * p.confidence * (0.5 + 0.5 * support(p.idx));
            let (theirs, plan) = walk(p.idx);
            out.push(RankedTool {
                idx: p.idx,
                confidence: needed.max(own_confidence),
                details: d,
                prerequisites: catalog.running_order_of(p.idx, &theirs),
                plan: Some(plan),
            });
        }
    }
    for t in &mut out {
        if t.plan.as_ref().is_some_and(Plan::is_empty) {
            t.plan = None;
        }
    }
    out
}

/// The request's scores of the tools a walk meets: the ranked ones', or
/// worked out once for the others.
struct Scores<'r, 'd> {
    ranked: &'r [RankedTool],
    own: &'r HashMap<usize, usize>,
    /// The top match's fused score.
    best: f32,
    details: &'d dyn Fn(usize) -> ScoreDetails,
    scored: RefCell<HashMap<usize, ScoreDetails>>,
}

impl Scores<'_, '_> {
    fn details(&self, idx: usize) -> ScoreDetails {
        self.read(idx, ScoreDetails::clone)
    }

    /// Reads tool `idx`'s details in place (worked out once).
    fn read<T>(&self, idx: usize, f: impl FnOnce(&ScoreDetails) -> T) -> T {
        if let Some(&j) = self.own.get(&idx) {
            return f(&self.ranked[j].details);
        }
        f(self
            .scored
            .borrow_mut()
            .entry(idx)
            .or_insert_with(|| (self.details)(idx)))
    }

    /// A tool's own confidence (0 when the ranking did not keep it) and
    /// details.
    fn listed(&self, idx: usize) -> (f32, ScoreDetails) {
        match self.own.get(&idx) {
            Some(&j) => (self.ranked[j].confidence, self.ranked[j].details.clone()),
            None => (0.0, self.details(idx)),
        }
    }

    /// How much the request supports a tool, in [0, 1]: 1 when it names
    /// it, else its fused score against the top match's.
    fn support(&self, idx: usize) -> f32 {
        self.read(idx, |d| {
            if d.exact_name {
                1.0
            } else {
                (d.fused / self.best).clamp(0.0, 1.0)
            }
        })
    }
}

/// Decides a walk's edges tool by tool, and writes down why.
struct Chooser<'c, 'q, 's> {
    catalog: &'c Catalog,
    request: &'q Supplied<'q>,
    support: &'s dyn Fn(usize) -> f32,
    notes: RefCell<Notes>,
}

/// What one walk left out: the producers of parameters the request gives,
/// and the alternatives of each producer it chose.
#[derive(Default)]
struct Notes {
    supplied: Vec<SuppliedParameter>,
    alternatives: Vec<(usize, Vec<String>)>,
}

impl<'c> Chooser<'c, '_, '_> {
    fn name(&self, idx: usize) -> String {
        self.catalog.name(idx).to_string()
    }

    /// Tool `at`'s edges to walk: those without a parameter, and for each
    /// parameter the request does not give, its best-supported producer.
    fn choose<'e>(&self, at: usize, edges: Vec<(usize, &'e Edge)>) -> Vec<(usize, &'e Edge)> {
        let mut keep = Vec::new();
        let mut by_parameter: Vec<(&'e str, Vec<(usize, &'e Edge)>)> = Vec::new();
        for (j, e) in edges {
            match e.facts.parameter.as_deref() {
                None => keep.push((j, e)),
                Some(p) => match by_parameter.iter_mut().find(|(q, _)| *q == p) {
                    Some((_, group)) => group.push((j, e)),
                    None => by_parameter.push((p, vec![(j, e)])),
                },
            }
        }
        let tool = self.catalog.tools().get(at);
        for (parameter, group) in by_parameter {
            let given = tool.and_then(|t| self.request.value_for(t, parameter));
            let group: Vec<(usize, &Edge)> = match &given {
                Some(value) => {
                    let (checks, producers): (Vec<_>, Vec<_>) =
                        group.into_iter().partition(|&(j, _)| self.checks(j));
                    let mut notes = self.notes.borrow_mut();
                    for (j, _) in producers {
                        notes.supplied.push(SuppliedParameter {
                            tool: self.name(j),
                            feeds: self.name(at),
                            parameter: parameter.to_string(),
                            value: value.clone(),
                        });
                    }
                    checks
                }
                None => group,
            };
            let Some(&(first, _)) = group.first() else {
                continue;
            };
            if group.len() == 1 {
                keep.push(group[0]);
                continue;
            }
            // Alternative producers: the best supported (the first of
            // equals, in edge order: declared, then by confidence).
            let mut best = (first, (self.support)(first));
            for &(j, _) in &group[1..] {
                let s = (self.support)(j);
                if s > best.1 {
                    best = (j, s);
                }
            }
            let chosen = group.iter().find(|(j, _)| *j == best.0).copied();
            keep.extend(chosen);
            self.notes.borrow_mut().alternatives.push((
                best.0,
                group
                    .iter()
                    .filter(|(j, _)| *j != best.0)
                    .map(|&(j, _)| self.name(j))
                    .collect(),
            ));
        }
        keep
    }

    /// Whether tool `idx` checks a value rather than producing it
    /// (`validate_email`, `verify_address`): it runs on a given value too.
    fn checks(&self, idx: usize) -> bool {
        const CHECKS: &[&str] = &["validate", "verify", "check", "confirm", "sanitize"];
        self.catalog.tools().get(idx).is_some_and(|t| {
            crate::extract::split_identifier(&t.name)
                .first()
                .is_some_and(|w| CHECKS.contains(&w.as_str()))
        })
    }
}

impl Notes {
    /// The plan of one tool's walked prerequisites: a step each, in
    /// running order, with the parameter it feeds and its alternatives,
    /// and the parameters the request gives.
    fn plan(self, catalog: &Catalog, walked: &[Prerequisite<'_>], idx: usize) -> Plan {
        let alternatives = self.alternatives;
        let steps = catalog
            .running_order_of(idx, walked)
            .into_iter()
            .filter_map(|i| walked.iter().find(|p| p.idx == i))
            .map(|p| PlanStep {
                tool: catalog.name(p.idx).to_string(),
                feeds: catalog.name(p.of).to_string(),
                parameter: p.edge.facts.parameter.clone(),
                alternatives: alternatives
                    .iter()
                    .find(|(j, _)| *j == p.idx)
                    .map(|(_, a)| a.clone())
                    .unwrap_or_default(),
            })
            .collect();
        Plan {
            steps,
            supplied: self.supplied,
        }
    }
}

/// The `prerequisite_of` record of one listed prerequisite.
fn explain(catalog: &Catalog, p: &Prerequisite<'_>) -> PrerequisiteOf {
    let tool = catalog.name(p.of).to_string();
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
