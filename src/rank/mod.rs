//! Joint ranking: graph + dense + lexical channels, fusion, disambiguation,
//! calibrated confidence. Pure functions over a [`Catalog`] snapshot and the
//! graph hits the store returned; the engine does the I/O.

mod confidence;
mod disambiguate;

pub use confidence::{Calibration, CalibrationReport, ReliabilityBin, fit_calibration};
pub(crate) use disambiguate::disambiguate;
pub use disambiguate::{Clarify, Contender};

use crate::catalog::Catalog;
use crate::graph::{GraphHit, Relation};
use crate::model::{Mention, MentionKind};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

/// Which channels rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Graph + dense + lexical, fused (the default).
    #[default]
    Joint,
    Graph,
    Dense,
    Lexical,
}

impl std::str::FromStr for Mode {
    type Err = crate::Error;
    fn from_str(s: &str) -> crate::Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "joint" => Ok(Mode::Joint),
            "graph" => Ok(Mode::Graph),
            "dense" => Ok(Mode::Dense),
            "lexical" | "bm25" => Ok(Mode::Lexical),
            other => Err(crate::Error::Invalid(format!(
                "unknown mode `{other}` (expected joint, graph, dense or lexical)"
            ))),
        }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Mode::Joint => "joint",
            Mode::Graph => "graph",
            Mode::Dense => "dense",
            Mode::Lexical => "lexical",
        })
    }
}

/// Fusion weights and thresholds. Defaults were tuned on the dev datasets
/// with `toolgraph eval` (see README, "Ranking").
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RankConfig {
    /// Weight of the graph channel (evidence coverage in [-1, 1]).
    pub w_graph: f32,
    /// Weight of the dense channel (raw cosine).
    pub w_dense: f32,
    /// Weight of the lexical channel (BM25 / best BM25 of the request),
    /// scaled by the request's lexical trust (see `lexical_trust_k`).
    pub w_lexical: f32,
    /// Lexical trust = (best BM25 / (best BM25 + k))^power: a request that
    /// shares many rare words with some tool (long, specific requests)
    /// leans on BM25; a vague one leans on the embeddings.
    pub lexical_trust_k: f32,
    pub lexical_trust_power: f32,
    /// Bonus when the tool performs the verb the planner stated in its
    /// `verb` field (stated intent outranks similar-sounding tools).
    pub w_stated_verb: f32,
    /// Contenders: candidates whose fused score is within this of the top.
    pub ambiguity_margin: f32,
    /// Abstain when the top match's confidence is below this.
    pub abstain_below: f32,
    /// `resolve` substitutes when confidence clears this.
    pub substitute_above: f32,
    /// Index parameter names for BM25 besides name and description
    /// (off reproduces the name + description BM25 references).
    #[serde(default = "yes")]
    pub lexical_params: bool,
    /// Rank each step of a multi-step request on its own as well.
    #[serde(default = "yes")]
    pub steps: bool,
    /// The exact-name guarantee (off reproduces plain BM25 references).
    #[serde(default = "yes")]
    pub exact_names: bool,
    /// A step's score must beat the whole request's by this much to count
    /// (a fragment of a one-intent request should not outvote the whole).
    #[serde(default)]
    pub step_discount: f32,
    /// A multi-step request lists each step's best tool right after the top
    /// match, so every step is covered before any step's runner-up.
    #[serde(default = "yes")]
    pub step_cover: bool,
}

fn yes() -> bool {
    true
}

impl Default for RankConfig {
    fn default() -> Self {
        Self {
            w_graph: 0.1,
            w_dense: 1.0,
            w_lexical: 1.0,
            lexical_trust_k: 10.0,
            lexical_trust_power: 3.0,
            w_stated_verb: 0.15,
            ambiguity_margin: 0.06,
            abstain_below: 0.15,
            substitute_above: 0.6,
            lexical_params: true,
            steps: true,
            exact_names: true,
            step_discount: 0.06,
            step_cover: true,
        }
    }
}

/// One graph path that contributed to a tool's graph score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphPath {
    /// The request text that produced the node.
    pub mention: String,
    /// The request node (verb, entity or instance IRI).
    pub node: String,
    /// The tool-side node it reached.
    pub via: String,
    pub relation: Relation,
    pub hops: u8,
    /// Contribution to the graph score (negative for sibling evidence).
    pub weight: f32,
    /// `extracted` when the tool-side link was derived, `curated` otherwise.
    pub provenance: crate::Provenance,
    /// Human-readable: `"Southwest" -> Southwest -[instanceOf]-> airline <-[actsOn]- tool`.
    pub explain: String,
    /// The mention came from the planner's `verb` field.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stated: bool,
}

/// Why a tool scored what it scored. Every match carries one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScoreDetails {
    /// Graph evidence coverage: share of the request's verb/entity evidence
    /// the tool's constellation explains, minus sibling conflicts.
    pub graph: f32,
    /// Cosine between the request and the tool embedding.
    pub dense: f32,
    /// BM25 divided by the best BM25 for this request.
    pub lexical: f32,
    /// Raw BM25 score.
    pub bm25: f32,
    /// How much the lexical channel is trusted for this request, in [0, 1]
    /// (from the request's best BM25); joint adds `w_lexical * lexical_trust * lexical`.
    #[serde(default)]
    pub lexical_trust: f32,
    /// The request names this tool (exact-name guarantee).
    pub exact_name: bool,
    /// The fused score the order is based on.
    pub fused: f32,
    /// Labels of the request terms the graph matched.
    pub matched: Vec<String>,
    /// Graph paths behind `graph`.
    pub paths: Vec<GraphPath>,
    /// Set when disambiguation moved or kept this tool on top, naming the facts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    /// The step of a multi-step request this score comes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    /// Set when this is the best tool for a step of a multi-step request
    /// (naming the step): it is listed right after the top match, ahead of
    /// higher-scoring runners-up of other steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_for_step: Option<String>,
}

/// A scored tool before confidence and disambiguation.
#[derive(Debug, Clone)]
pub(crate) struct Scored {
    pub idx: usize,
    pub details: ScoreDetails,
}

/// How much more a verb the planner states explicitly weighs than one in text.
pub(crate) const EXPLICIT_VERB_WEIGHT: f32 = 2.0;

/// Evidence weight of a mention kind: what a request term is worth.
fn mention_weight(kind: MentionKind) -> f32 {
    match kind {
        MentionKind::Verb => 1.0,
        MentionKind::Entity => 1.0,
        MentionKind::Brand => 1.0,
        MentionKind::FlightNumber => 0.7,
        MentionKind::Currency | MentionKind::Money => 0.6,
        MentionKind::Quantity => 0.5,
        MentionKind::Email | MentionKind::Phone | MentionKind::Url => 0.5,
        MentionKind::Time | MentionKind::Date | MentionKind::Duration => 0.3,
        MentionKind::ProperNoun => 0.3,
        MentionKind::Quoted => 0.0,
    }
}

fn relation_weight(rel: Relation, hops: u8) -> f32 {
    match rel {
        Relation::Verb => 1.0,
        Relation::VerbBroader => 0.5,
        Relation::Primary => 1.0,
        Relation::ActsOn => 0.85,
        Relation::ActsOnBroader => 0.7 * 0.6_f32.powi(i32::from(hops.saturating_sub(1))),
        Relation::Parameter => 0.5,
        Relation::Mentions => 0.4,
        Relation::Sibling => -0.8,
    }
}

fn relation_verb(rel: Relation) -> &'static str {
    match rel {
        Relation::Verb => "performs",
        Relation::VerbBroader => "performs (related verb)",
        Relation::Primary => "primaryEntity",
        Relation::ActsOn => "actsOn",
        Relation::ActsOnBroader => "actsOn (via broader)",
        Relation::Mentions => "mentions",
        Relation::Parameter => "parameter",
        Relation::Sibling => "actsOn sibling",
    }
}

/// The request nodes to bind in the graph query, from the mentions.
pub(crate) fn request_nodes(mentions: &[Mention]) -> Vec<String> {
    let mut nodes: Vec<String> = mentions
        .iter()
        .filter(|m| mention_weight(m.kind) > 0.0)
        .flat_map(|m| m.iris.iter().map(|r| r.iri.clone()))
        .collect();
    nodes.sort();
    nodes.dedup();
    nodes
}

/// Graph channel: per tool, the share of request evidence its constellation
/// explains. Each distinct mention counts once (its best path), entity
/// paths are weighted by the rarity of the tool-side node, sibling paths
/// subtract when the tool has nothing positive for that mention.
/// The first `explicit` mentions came from the planner's verb field: stated
/// intent, weighted [`EXPLICIT_VERB_WEIGHT`] times a mention in free text.
pub(crate) fn graph_scores(
    catalog: &Catalog,
    mentions: &[Mention],
    explicit: usize,
    hits: &[GraphHit],
) -> HashMap<usize, (f32, Vec<GraphPath>, Vec<String>)> {
    // node -> hits
    let mut by_node: HashMap<&str, Vec<&GraphHit>> = HashMap::new();
    for h in hits {
        by_node.entry(h.node.as_str()).or_default().push(h);
    }
    // Distinct evidence groups: mentions with the same IRI set count once.
    let mut seen_groups: HashSet<Vec<&str>> = HashSet::new();
    let mut total = 0.0_f32;
    let mut per_tool: HashMap<usize, (f32, Vec<GraphPath>, Vec<String>)> = HashMap::new();
    for (i, m) in mentions.iter().enumerate() {
        let w_m = mention_weight(m.kind)
            * if i < explicit && m.kind == MentionKind::Verb {
                EXPLICIT_VERB_WEIGHT
            } else {
                1.0
            };
        if w_m <= 0.0 || m.iris.is_empty() {
            continue;
        }
        let mut key: Vec<&str> = m.iris.iter().map(|r| r.iri.as_str()).collect();
        key.sort();
        if !seen_groups.insert(key) {
            continue;
        }
        total += w_m;
        // best positive and worst negative path per tool for this mention
        let mut best: HashMap<usize, (f32, GraphPath)> = HashMap::new();
        let mut worst: HashMap<usize, (f32, GraphPath)> = HashMap::new();
        for r in &m.iris {
            for h in by_node.get(r.iri.as_str()).into_iter().flatten() {
                let Some(&idx) = catalog.by_iri.get(&h.tool) else {
                    continue;
                };
                let is_verb = matches!(h.relation, Relation::Verb | Relation::VerbBroader);
                let rarity = if is_verb {
                    1.0
                } else {
                    catalog.idf(&h.via).sqrt()
                };
                let w = w_m * r.weight.min(1.0) * relation_weight(h.relation, h.hops) * rarity;
                let path = GraphPath {
                    mention: m.surface.clone(),
                    node: h.node.clone(),
                    via: h.via.clone(),
                    relation: h.relation,
                    hops: h.hops,
                    weight: w,
                    provenance: if h.extracted {
                        crate::Provenance::Extracted
                    } else {
                        crate::Provenance::Curated
                    },
                    explain: explain_path(catalog, m, h),
                    stated: i < explicit,
                };
                let slot = if w >= 0.0 { &mut best } else { &mut worst };
                let better = match slot.get(&idx) {
                    Some((old, _)) => w.abs() > old.abs(),
                    None => true,
                };
                if better {
                    slot.insert(idx, (w, path));
                }
            }
        }
        for (idx, (w, path)) in best {
            let e = per_tool.entry(idx).or_default();
            e.0 += w;
            e.2.push(m.surface.clone());
            e.1.push(path);
        }
        for (idx, (w, path)) in worst {
            let e = per_tool.entry(idx).or_default();
            if e.2.contains(&m.surface) {
                continue;
            }
            e.0 += w;
            e.1.push(path);
        }
    }
    if total > 0.0 {
        for v in per_tool.values_mut() {
            v.0 /= total;
            v.1.sort_by(|a, b| b.weight.total_cmp(&a.weight));
        }
    }
    per_tool
}

fn explain_path(catalog: &Catalog, m: &Mention, h: &GraphHit) -> String {
    let tool = catalog
        .by_iri
        .get(&h.tool)
        .map(|&i| catalog.tools[i].name.clone())
        .unwrap_or_else(|| h.tool.clone());
    let node = catalog.label(&h.node);
    if h.node == h.via {
        format!(
            "\"{}\" -> {node} <-[{}]- {tool}",
            m.surface,
            relation_verb(h.relation)
        )
    } else {
        let via = catalog.label(&h.via);
        format!(
            "\"{}\" -> {node} ~{} hop(s)~ {via} <-[{}]- {tool}",
            m.surface,
            h.hops,
            relation_verb(h.relation)
        )
    }
}

/// Inputs of one fusion run.
pub(crate) struct ChannelScores<'a> {
    pub graph: &'a HashMap<usize, (f32, Vec<GraphPath>, Vec<String>)>,
    /// Cosine per tool index (None when embeddings are off).
    pub dense: Option<&'a [f32]>,
    /// BM25 per tool index.
    pub bm25: &'a [f32],
    pub exact: &'a [usize],
}

/// Fuses the channels for the allowed tools; returns them best first.
pub(crate) fn fuse(
    mode: Mode,
    cfg: &RankConfig,
    allowed: &[usize],
    ch: &ChannelScores<'_>,
) -> Vec<Scored> {
    let max_bm25 = allowed
        .iter()
        .filter_map(|&i| ch.bm25.get(i).copied())
        .fold(0.0_f32, f32::max);
    let lexical_trust = if max_bm25 > 0.0 {
        (max_bm25 / (max_bm25 + cfg.lexical_trust_k.max(1e-3))).powf(cfg.lexical_trust_power)
    } else {
        0.0
    };
    let exact: HashSet<usize> = ch.exact.iter().copied().collect();
    let mut out: Vec<Scored> = allowed
        .iter()
        .map(|&idx| {
            let (graph, paths, matched) =
                ch.graph
                    .get(&idx)
                    .cloned()
                    .unwrap_or((0.0, Vec::new(), Vec::new()));
            let dense = ch.dense.and_then(|d| d.get(idx).copied()).unwrap_or(0.0);
            let bm25 = ch.bm25.get(idx).copied().unwrap_or(0.0);
            let lexical = if max_bm25 > 0.0 { bm25 / max_bm25 } else { 0.0 };
            let is_exact = cfg.exact_names
                && exact.contains(&idx)
                && matches!(mode, Mode::Joint | Mode::Lexical);
            let mut fused = match mode {
                Mode::Joint => {
                    cfg.w_graph * graph
                        + cfg.w_dense * dense
                        + cfg.w_lexical * lexical_trust * lexical
                }
                Mode::Graph => graph,
                Mode::Dense => dense,
                Mode::Lexical => lexical,
            };
            if mode == Mode::Joint
                && paths
                    .iter()
                    .any(|p| p.stated && p.relation == Relation::Verb)
            {
                fused += cfg.w_stated_verb;
            }
            if is_exact {
                fused += 10.0;
            }
            Scored {
                idx,
                details: ScoreDetails {
                    graph,
                    dense,
                    lexical,
                    bm25,
                    lexical_trust,
                    exact_name: is_exact,
                    fused,
                    matched,
                    paths,
                    decided_by: None,
                    step: None,
                    best_for_step: None,
                },
            }
        })
        .collect();
    sort_by_score(&mut out);
    out
}

/// Best fused score first; equal scores in catalog order (deterministic).
pub(crate) fn sort_by_score(scored: &mut [Scored]) {
    scored.sort_by(|a, b| {
        b.details
            .fused
            .total_cmp(&a.details.fused)
            .then(a.idx.cmp(&b.idx))
    });
}

/// Takes a ranked list and moves the tools marked `best_for_step` right
/// after the top match, ahead of everything else; both groups keep their
/// order (a stable partition: score order, tie-breaks and disambiguation
/// stay as they were).
pub(crate) fn move_step_winners_up(scored: &mut [Scored]) {
    if let Some(rest) = scored.get_mut(1..) {
        rest.sort_by_key(|s| s.details.best_for_step.is_none());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scored(idx: usize, fused: f32, step: Option<&str>) -> Scored {
        Scored {
            idx,
            details: ScoreDetails {
                fused,
                best_for_step: step.map(str::to_string),
                ..ScoreDetails::default()
            },
        }
    }

    #[test]
    fn step_winners_move_right_after_the_top_match_keeping_their_order() {
        // Ranked by score: 1, 2, 5, 4, 0, 3.
        let mut v = vec![
            scored(1, 0.9, Some("a")),
            scored(2, 0.8, None),
            scored(5, 0.7, None),
            scored(4, 0.6, Some("c")),
            scored(0, 0.5, None),
            scored(3, 0.4, Some("b")),
        ];
        move_step_winners_up(&mut v);
        let order: Vec<usize> = v.iter().map(|s| s.idx).collect();
        assert_eq!(order, [1, 4, 3, 2, 5, 0]);
        // The top match stays first even when it is no step's best.
        let mut v = vec![
            scored(1, 0.9, None),
            scored(7, 0.85, None),
            scored(0, 0.2, Some("a")),
        ];
        move_step_winners_up(&mut v);
        let order: Vec<usize> = v.iter().map(|s| s.idx).collect();
        assert_eq!(order, [1, 0, 7]);
    }

    #[test]
    fn relation_weights_discount_hops_and_penalise_siblings() {
        assert!(relation_weight(Relation::ActsOn, 0) > relation_weight(Relation::ActsOnBroader, 1));
        assert!(
            relation_weight(Relation::ActsOnBroader, 1)
                > relation_weight(Relation::ActsOnBroader, 2)
        );
        assert!(relation_weight(Relation::Sibling, 1) < 0.0);
    }

    #[test]
    fn mode_parses_and_prints() {
        for m in [Mode::Joint, Mode::Graph, Mode::Dense, Mode::Lexical] {
            assert_eq!(m.to_string().parse::<Mode>().unwrap(), m);
        }
        assert!("vector".parse::<Mode>().is_err());
    }
}
