//! The graph channel: what share of the request's evidence each tool's
//! constellation explains, through which paths.

use super::GraphPath;
use crate::catalog::{Catalog, Hit};
use crate::graph::Relation;
use crate::model::{Mention, MentionKind, Provenance};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// One tool's graph score for one query text.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ToolGraph {
    /// Share of the request's evidence explained, in [-1, 1].
    pub score: f32,
    /// A path performs the verb the planner stated in its `verb` field.
    pub stated_verb: bool,
    /// Some path reaches the tool (its score may still be 0).
    reached: bool,
    /// The request surfaces (numbered in order of appearance, the first
    /// [`SURFACE_BITS`]) with a positive path to the tool.
    surfaces: u32,
    /// The tool's last evidence (1-based; 0: none); each evidence links
    /// to the tool's one before it.
    last: u32,
}

/// Surfaces tracked in a tool's slot; later ones (rare) in a set.
const SURFACE_BITS: usize = 32;

/// One path's contribution, before it is written out.
#[derive(Debug, Clone, Copy)]
struct Evidence<'a> {
    mention: &'a str,
    hit: Hit<'a>,
    weight: f32,
    stated: bool,
    /// The mention's best positive path for this tool (not sibling evidence).
    positive: bool,
    /// The same tool's evidence before this one (1-based; 0: none).
    previous: u32,
}

/// The graph channel of one query text: a score per reached tool, and the
/// evidence behind them in one flat list (a common verb reaches thousands
/// of tools: no allocation per tool). Paths borrow the request and the
/// snapshot and are written out only for the tools that are reported.
/// Scores are a slot per catalog tool, not a map: fusion looks up tens of
/// thousands of them per request at 100k tools, and a hash lookup each was
/// most of its time.
#[derive(Debug, Clone, Default)]
pub(crate) struct GraphScores<'a> {
    /// Per tool index; empty when no path reached any tool.
    per_tool: Vec<ToolGraph>,
    /// The tools some path reaches, in the order first reached.
    reached: Vec<usize>,
    evidence: Vec<Evidence<'a>>,
}

impl<'a> GraphScores<'a> {
    /// The graph score of tool `idx`, when some path reaches it.
    pub fn get(&self, idx: usize) -> Option<&ToolGraph> {
        self.per_tool.get(idx).filter(|t| t.reached)
    }

    /// Tool `idx`'s evidence, in the order found: its own entries through
    /// their links, not a scan of every tool's (a reported tool's
    /// explanation read all of it, tens of thousands of entries at 100k
    /// tools, twice per reported tool).
    fn evidence_of(&self, idx: usize) -> Vec<&Evidence<'a>> {
        let mut found = Vec::new();
        let mut at = self.per_tool.get(idx).map_or(0, |t| t.last);
        while let Some(e) = (at as usize)
            .checked_sub(1)
            .and_then(|i| self.evidence.get(i))
        {
            found.push(e);
            at = e.previous;
        }
        found.reverse();
        found
    }

    /// The tools some path reaches (any order).
    pub fn tools(&self) -> impl Iterator<Item = usize> + '_ {
        self.reached.iter().copied()
    }

    /// Tool `idx`'s paths, strongest first (`explain` is filled in by
    /// [`explain`]).
    pub fn paths(&self, idx: usize) -> Vec<GraphPath> {
        let mut paths: Vec<GraphPath> = self
            .evidence_of(idx)
            .into_iter()
            .map(|e| GraphPath {
                mention: e.mention.to_string(),
                node: e.hit.node.to_string(),
                via: e.hit.via.to_string(),
                relation: e.hit.relation,
                hops: e.hit.hops,
                weight: e.weight,
                provenance: if e.hit.extracted {
                    Provenance::Extracted
                } else {
                    Provenance::Curated
                },
                explain: String::new(),
                stated: e.stated,
            })
            .collect();
        paths.sort_by(|a, b| b.weight.total_cmp(&a.weight));
        paths
    }

    /// Surfaces of the request mentions tool `idx` matched, in request order.
    pub fn matched(&self, idx: usize) -> Vec<String> {
        self.evidence_of(idx)
            .into_iter()
            .filter(|e| e.positive)
            .map(|e| e.mention.to_string())
            .collect()
    }
}

/// The (tool, surface) pairs with a positive path: a bit per surface in
/// the tool's slot for the first [`SURFACE_BITS`] surfaces (a set insert
/// per path was a large share of the channel at 100k tools), a set past
/// them.
#[derive(Debug, Default)]
struct Matched {
    late: HashSet<(usize, usize)>,
}

impl Matched {
    fn bit(surface: usize) -> Option<u32> {
        (surface < SURFACE_BITS).then(|| 1u32 << surface)
    }

    fn mark(&mut self, slot: &mut ToolGraph, tool: usize, surface: usize) {
        match Self::bit(surface) {
            Some(b) => slot.surfaces |= b,
            None => {
                self.late.insert((tool, surface));
            }
        }
    }

    fn has(&self, slot: &ToolGraph, tool: usize, surface: usize) -> bool {
        match Self::bit(surface) {
            Some(b) => slot.surfaces & b != 0,
            None => self.late.contains(&(tool, surface)),
        }
    }
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
/// `hits` come as the catalog's path walk gives them (`Paths::candidates`):
/// grouped by node, each node once, in tool order.
pub(crate) fn graph_scores<'a>(
    catalog: &Catalog,
    mentions: &'a [Mention],
    explicit: usize,
    hits: &[Hit<'a>],
) -> GraphScores<'a> {
    // node -> its hits, in tool order (the walk groups them by node).
    let by_node: Vec<&[Hit<'a>]> = hits.chunk_by(|a, b| a.node == b.node).collect();
    let of_node = |iri: &str| {
        by_node
            .iter()
            .find(|g| g.first().is_some_and(|h| h.node == iri))
            .copied()
    };
    // An entity's rarity, looked up once per node (a popular entity is the
    // `via` of tens of thousands of hits at 100k tools). Keyed by the
    // address of the snapshot's string: hashing the IRI itself per hit
    // cost more than the rest of the channel.
    let mut rarity: HashMap<(usize, usize), f32> = HashMap::default();
    // Distinct evidence groups: mentions with the same IRI set count once.
    let mut seen_groups: HashSet<Vec<&str>> = HashSet::default();
    let mut total = 0.0_f32;
    let mut out = GraphScores {
        per_tool: if hits.is_empty() {
            Vec::new()
        } else {
            vec![ToolGraph::default(); catalog.tools.len()]
        },
        reached: Vec::new(),
        evidence: Vec::with_capacity(hits.len().min(1 << 16)),
    };
    // (tool, surface) pairs with a positive path: sibling evidence from a
    // mention with the same surface does not count against them. Surfaces
    // are numbered in order of appearance.
    let mut matched = Matched::default();
    let mut surfaces: Vec<&str> = Vec::new();
    // One mention's weighted paths: (tool, weight, hit), the hit by
    // reference: the sort below moves 24-byte entries, not 72-byte ones
    // (at 100k tools the sort and its copies were about a tenth of a warm
    // search's profile).
    let mut weighted: Vec<(usize, f32, &Hit<'a>)> = Vec::new();
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
        weighted.clear();
        for r in &m.iris {
            for h in of_node(r.iri.as_str()).into_iter().flatten() {
                let is_verb = matches!(h.relation, Relation::Verb | Relation::VerbBroader);
                let rarity = if is_verb {
                    1.0
                } else {
                    *rarity
                        .entry((h.via.as_ptr() as usize, h.via.len()))
                        .or_insert_with(|| catalog.idf(h.via).sqrt())
                };
                let w = w_m * r.weight.min(1.0) * relation_weight(h.relation, h.hops) * rarity;
                weighted.push((h.tool, w, h));
            }
        }
        // Grouped by tool, in the order found (a stable sort; one IRI's
        // hits are in tool order already).
        weighted.sort_by_key(|w| w.0);
        let stated = i < explicit;
        let surface = m.surface.as_str();
        let surface_id = match surfaces.iter().position(|&s| s == surface) {
            Some(id) => id,
            None => {
                surfaces.push(surface);
                surfaces.len() - 1
            }
        };
        // Per tool, the best positive path (the first of equal weights),
        // then the worst negative one; only they become paths (a common
        // verb reaches thousands of tools).
        for group in weighted.chunk_by(|a, b| a.0 == b.0) {
            let strongest = |positive: bool| {
                group.iter().filter(|w| (w.1 >= 0.0) == positive).fold(
                    None,
                    |best: Option<&(usize, f32, &Hit<'a>)>, w| match best {
                        Some(b) if w.1.abs() <= b.1.abs() => Some(b),
                        _ => Some(w),
                    },
                )
            };
            for (positive, found) in [(true, strongest(true)), (false, strongest(false))] {
                let Some(&(tool, weight, hit)) = found else {
                    continue;
                };
                // Hits come from the same snapshot: every tool has a slot.
                let Some(t) = out.per_tool.get_mut(tool) else {
                    continue;
                };
                if positive {
                    matched.mark(t, tool, surface_id);
                } else if matched.has(t, tool, surface_id) {
                    continue;
                }
                if !t.reached {
                    t.reached = true;
                    out.reached.push(tool);
                }
                t.score += weight;
                t.stated_verb |= positive && stated && hit.relation == Relation::Verb;
                let previous = t.last;
                out.evidence.push(Evidence {
                    mention: surface,
                    hit: *hit,
                    weight,
                    stated,
                    positive,
                    previous,
                });
                // (Fewer than u32::MAX entries: one per tool and mention.)
                t.last = u32::try_from(out.evidence.len()).unwrap_or(previous);
            }
        }
    }
    if total > 0.0 {
        for &tool in &out.reached {
            out.per_tool[tool].score /= total;
        }
    }
    out
}

/// Fills in the human-readable form of the paths of tool `idx`:
/// `"Southwest" -> Southwest ~1 hop(s)~ airline <-[acts on]- tool`.
pub(crate) fn explain(catalog: &Catalog, idx: usize, paths: &mut [GraphPath]) {
    let tool = catalog.tools.get(idx).map_or("", |t| t.name.as_str());
    for p in paths.iter_mut().filter(|p| p.explain.is_empty()) {
        let node = catalog.label(&p.node);
        p.explain = if p.node == p.via {
            format!(
                "\"{}\" -> {node} <-[{}]- {tool}",
                p.mention,
                relation_verb(p.relation)
            )
        } else {
            let via = catalog.label(&p.via);
            format!(
                "\"{}\" -> {node} ~{} hop(s)~ {via} <-[{}]- {tool}",
                p.mention,
                p.hops,
                relation_verb(p.relation)
            )
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matched_surfaces_are_kept_per_tool_in_bits_and_past_them_in_a_set() {
        let mut m = Matched::default();
        let (mut a, mut b) = (ToolGraph::default(), ToolGraph::default());
        for s in [0, 31, 32, 100] {
            assert!(!m.has(&a, 1, s));
            m.mark(&mut a, 1, s);
            assert!(m.has(&a, 1, s), "surface {s}");
            assert!(!m.has(&b, 2, s), "surface {s} of another tool");
        }
        assert!(!m.has(&a, 1, 1) && !m.has(&a, 1, 33));
        m.mark(&mut b, 2, 33);
        assert!(m.has(&b, 2, 33) && !m.has(&a, 1, 33));
        assert_eq!(a.surfaces, 1 | 1 << 31);
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
}
