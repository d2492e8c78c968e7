//! Disambiguation between close candidates: what tells them apart in the
//! graph, whether the request evidences it, and a question when it doesn't.

use super::{RankConfig, Scored};
use crate::catalog::Catalog;
use crate::model::Mention;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashSet};

/// One side of an ambiguity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Contender {
    pub tool: String,
    /// Labels of the graph facts only this contender has.
    pub facts: Vec<String>,
    /// Its catalog index (the engine's, never on the wire).
    #[serde(skip)]
    pub(crate) idx: usize,
}

/// Returned when close candidates stay close: what would decide.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Clarify {
    /// A one-line question a planner can ask ("a restaurant table or an airline seat?").
    pub question: String,
    pub contenders: Vec<Contender>,
}

/// At most this many close candidates are compared.
pub(crate) const MAX_CONTENDERS: usize = 4;

/// Facts of a tool that can tell it apart: entities it acts on (not weak
/// mentions), its verbs and its domains.
fn facts(catalog: &Catalog, idx: usize) -> Vec<(String, f32)> {
    let Some(t) = catalog.tools().get(idx) else {
        return Vec::new();
    };
    let mut out: Vec<(String, f32)> = Vec::new();
    for e in t.entities.iter().filter(|l| l.weight >= 0.5) {
        out.push((
            e.iri.to_string(),
            catalog.idf(&e.iri)
                + if std::ptr::eq(e, &t.entities[0]) {
                    1.0
                } else {
                    0.0
                },
        ));
    }
    for v in &t.verbs {
        out.push((v.iri.to_string(), 0.5));
    }
    for d in &t.domains {
        out.push((d.iri.to_string(), 0.3));
    }
    out
}

fn with_article(label: &str) -> String {
    let first = label.chars().next().map(|c| c.to_ascii_lowercase());
    let article = if matches!(first, Some('a' | 'e' | 'i' | 'o' | 'u')) {
        "an"
    } else {
        "a"
    };
    format!("{article} {label}")
}

/// The contender the request's distinguishing evidence decides for, if any.
/// Evidence overturns the fused gap above a contender only in proportion
/// to how much more the request evidences it than the runner-up (a soft,
/// bounded boost: `margin * a / (a + 1)`).
fn decisive(support: &[(f32, Vec<String>)], scored: &[Scored], cfg: &RankConfig) -> Option<usize> {
    let (winner, weight) = support
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.0.total_cmp(&b.1.0).then(b.0.cmp(&a.0)))
        .map(|(i, s)| (i, s.0))?;
    let runner_up = support
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != winner)
        .map(|(_, s)| s.0)
        .fold(0.0_f32, f32::max);
    if weight <= 0.0 || weight <= runner_up {
        return None;
    }
    let advantage = weight - runner_up;
    let boost = cfg.ambiguity_margin * advantage / (advantage + 1.0);
    let gap = scored[0].details.fused - scored[winner].details.fused;
    (winner == 0 || boost > gap).then_some(winner)
}

/// Reorders close candidates by the distinguishing facts the request
/// evidences; returns a clarification when nothing decides.
pub(crate) fn disambiguate(
    catalog: &Catalog,
    scored: &mut [Scored],
    mentions: &[Mention],
    cfg: &RankConfig,
) -> Option<Clarify> {
    let top = scored.first()?;
    if top.details.exact_name {
        return None;
    }
    let cutoff = top.details.fused - cfg.ambiguity_margin;
    let n = scored
        .iter()
        .take(MAX_CONTENDERS)
        .take_while(|s| s.details.fused >= cutoff)
        .count();
    if n < 2 {
        return None;
    }
    let evidence = evidenced(catalog, mentions);
    let distinguishing = distinguishing(catalog, &scored[..n]);
    // Evidence weight per contender.
    let support: Vec<(f32, Vec<String>)> = distinguishing
        .iter()
        .map(|d| {
            let hit: Vec<&(String, f32)> =
                d.iter().filter(|(iri, _)| evidence.contains(iri)).collect();
            (
                hit.iter().map(|(_, w)| *w).sum(),
                hit.iter().map(|(iri, _)| catalog.label(iri)).collect(),
            )
        })
        .collect();
    if let Some(winner) = decisive(&support, scored, cfg) {
        let labels: BTreeSet<String> = support[winner].1.iter().cloned().collect();
        let names = labels.into_iter().collect::<Vec<_>>().join(", ");
        let top_fused = scored[0].details.fused;
        if winner != 0 {
            scored[..n].swap(0, winner);
            scored[0].details.fused = top_fused + 1e-3;
            scored[1..n].sort_by(|a, b| b.details.fused.total_cmp(&a.details.fused));
        }
        scored[0].details.decided_by = Some(format!("the request names {names}"));
        return None;
    }
    // Nothing (or a tie) decides: ask.
    Some(clarify(catalog, &scored[..n], &distinguishing))
}

/// What the request evidences: its nodes and their ancestors.
fn evidenced(catalog: &Catalog, mentions: &[Mention]) -> HashSet<String> {
    let mut evidence: HashSet<String> = HashSet::new();
    for m in mentions {
        for r in &m.iris {
            for (node, _) in catalog.ancestors(&r.iri, 2) {
                evidence.insert(node);
            }
        }
    }
    evidence
}

/// Each contender's facts that no other contender has, strongest first.
fn distinguishing(catalog: &Catalog, contenders: &[Scored]) -> Vec<Vec<(String, f32)>> {
    let all: Vec<Vec<(String, f32)>> = contenders.iter().map(|s| facts(catalog, s.idx)).collect();
    let mut out: Vec<Vec<(String, f32)>> = Vec::with_capacity(all.len());
    for (i, own) in all.iter().enumerate() {
        let others: HashSet<&str> = all
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .flat_map(|(_, f)| f.iter().map(|(iri, _)| iri.as_str()))
            .collect();
        let mut d: Vec<(String, f32)> = own
            .iter()
            .filter(|(iri, _)| !others.contains(iri.as_str()))
            .cloned()
            .collect();
        d.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        d.dedup_by(|a, b| a.0 == b.0);
        out.push(d);
    }
    out
}

/// The question that would decide between close contenders, naming each
/// one's distinguishing facts.
fn clarify(
    catalog: &Catalog,
    contenders: &[Scored],
    distinguishing: &[Vec<(String, f32)>],
) -> Clarify {
    let contenders: Vec<Contender> = contenders
        .iter()
        .zip(distinguishing)
        .map(|(s, d)| Contender {
            idx: s.idx,
            tool: catalog
                .tools()
                .get(s.idx)
                .map(|t| t.name.clone())
                .unwrap_or_default(),
            facts: d
                .iter()
                .take(4)
                .map(|(iri, _)| catalog.label(iri))
                .collect(),
        })
        .collect();
    let options: Vec<String> = contenders
        .iter()
        .map(|c| match c.facts.first() {
            Some(f) => with_article(f),
            None => format!("`{}`", c.tool),
        })
        .collect();
    let mut question = match options.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}?", rest.join(", ")),
        _ => format!("{}?", options.join("")),
    };
    if let Some(c) = question.get_mut(0..1) {
        c.make_ascii_uppercase();
    }
    Clarify {
        question,
        contenders,
    }
}

#[cfg(test)]
mod tests {
    use super::with_article;

    #[test]
    fn articles() {
        assert_eq!(with_article("airline seat"), "an airline seat");
        assert_eq!(with_article("restaurant table"), "a restaurant table");
    }
}
