//! The graph channel: what share of the request's evidence each tool's
//! constellation explains, through which paths.

use super::GraphPath;
use crate::catalog::Catalog;
use crate::graph::Relation;
use crate::model::{Mention, MentionKind, Provenance};
use crate::scope::Scope;
use crate::scratch;
use rustc_hash::FxHashSet as HashSet;

/// One tool's graph score for one query text.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ToolGraph {
    /// Share of the request's evidence explained, in [-1, 1].
    pub score: f32,
    /// A path performs the verb the planner stated in its `verb` field.
    pub stated_verb: bool,
    /// Some path counts for the tool (its score may still be 0).
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

/// The paths of one adjacency list the walk reached for one mention: they
/// share everything but the tool and the link's provenance.
#[derive(Debug, Clone, Copy)]
struct Run<'a> {
    mention: &'a str,
    stated: bool,
    /// The mention came from the conversation's earlier turns.
    context: bool,
    /// The mention's IRI it starts from, by position (earlier wins ties).
    iri: usize,
    node: &'a str,
    via: &'a str,
    relation: Relation,
    hops: u8,
    weight: f32,
}

/// One path: a run (by index) and the provenance of the tool's link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PathId(u32);

impl PathId {
    const NONE: Self = Self(u32::MAX);

    fn new(run: usize, extracted: bool) -> Self {
        // (Fewer than 2^31 runs: a few per mention IRI.)
        Self(u32::try_from(run).map_or(u32::MAX - 1, |r| r << 1 | u32::from(extracted)))
    }

    fn run(self) -> usize {
        (self.0 >> 1) as usize
    }

    fn extracted(self) -> bool {
        self.0 & 1 == 1
    }
}

/// A tool's strongest path of one sign for the mention being walked.
#[derive(Debug, Clone, Copy)]
struct Strongest {
    weight: f32,
    path: PathId,
}

impl Strongest {
    const NONE: Self = Self {
        weight: 0.0,
        path: PathId::NONE,
    };
}

/// A tool some path of the text reaches: its score so far, and its
/// strongest positive and negative paths for the mention being walked.
#[derive(Debug, Clone, Copy)]
struct Slot {
    tool: u32,
    graph: ToolGraph,
    /// The mention `positive` and `negative` belong to (1-based).
    mention: u32,
    positive: Strongest,
    negative: Strongest,
    /// The mention names another instance than the one the tool acts on
    /// ([`Relation::Rival`]): its positive paths (through the class the
    /// two share) do not count, its negative one does.
    rival: bool,
}

/// One path that counts for a tool, as found.
#[derive(Debug, Clone, Copy)]
struct Evidence {
    path: PathId,
    /// The mention's best positive path for this tool (not sibling evidence).
    positive: bool,
    /// The same tool's evidence before this one (1-based; 0: none).
    previous: u32,
}

/// The graph channel of one query text: a score per reached tool, and the
/// evidence behind them in one flat list (a common verb reaches thousands
/// of tools: no allocation per tool). Paths borrow the request and the
/// snapshot and are written out only for the tools that are reported.
/// Tools are found through a slot index per catalog tool, not a map:
/// fusion looks up tens of thousands of them per request at 100k tools,
/// and a hash lookup each was most of its time.
#[derive(Debug, Clone, Default)]
pub(crate) struct GraphScores<'a> {
    /// Per tool index, 1 + its slot (0: none); empty when no path reached
    /// any tool.
    slot_of: Vec<u32>,
    slots: Vec<Slot>,
    /// The tools some path reaches and their scores, in slot order: what
    /// fusion reads of every reached tool, a quarter of a slot's bytes.
    reached: Vec<Reached>,
    runs: Vec<Run<'a>>,
    evidence: Vec<Evidence>,
}

/// Slot numbers per catalog tool, all 0 between searches.
static SLOT_OF: scratch::Clean<u32> = scratch::Clean::new(0);
static SLOTS: scratch::Spare<Slot> = scratch::Spare::new();
static EVIDENCE: scratch::Spare<Evidence> = scratch::Spare::new();
static REACHED: scratch::Spare<Reached> = scratch::Spare::new();

/// One reached tool's score as fusion reads it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reached {
    tool: u32,
    pub score: f32,
    /// See [`ToolGraph::stated_verb`].
    pub stated_verb: bool,
}

/// The buffers go back to their pools (the slot numbers set back to 0
/// for the tools that had one).
impl Drop for GraphScores<'_> {
    fn drop(&mut self) {
        let slot_of = std::mem::take(&mut self.slot_of);
        if !slot_of.is_empty() {
            SLOT_OF.restore(slot_of, self.slots.iter().map(|s| s.tool as usize));
        }
        SLOTS.put(std::mem::take(&mut self.slots));
        EVIDENCE.put(std::mem::take(&mut self.evidence));
        REACHED.put(std::mem::take(&mut self.reached));
    }
}

impl<'a> GraphScores<'a> {
    fn slot(&self, idx: usize) -> Option<&Slot> {
        let at = self.slot_of.get(idx).copied()?;
        self.slots.get((at as usize).checked_sub(1)?)
    }

    /// The graph score of tool `idx`, when some path reaches it.
    pub fn get(&self, idx: usize) -> Option<&ToolGraph> {
        self.slot(idx).map(|s| &s.graph).filter(|t| t.reached)
    }

    /// Tool `idx`'s evidence, in the order found: its own entries through
    /// their links, not a scan of every tool's (a reported tool's
    /// explanation read all of it, tens of thousands of entries at 100k
    /// tools, twice per reported tool).
    fn evidence_of(&self, idx: usize) -> Vec<(Evidence, &Run<'a>)> {
        let mut found = Vec::new();
        let mut at = self.get(idx).map_or(0, |t| t.last);
        while let Some(&e) = (at as usize)
            .checked_sub(1)
            .and_then(|i| self.evidence.get(i))
        {
            if let Some(run) = self.runs.get(e.path.run()) {
                found.push((e, run));
            }
            at = e.previous;
        }
        found.reverse();
        found
    }

    /// The tools some path reaches (any order).
    pub fn tools(&self) -> impl Iterator<Item = usize> + '_ {
        self.scored().map(|(tool, _)| tool)
    }

    /// How many tools a path reaches.
    pub fn len(&self) -> usize {
        self.reached.len()
    }

    /// The tools some path reaches with their scores, in the order held.
    pub fn scored(&self) -> impl Iterator<Item = (usize, &Reached)> + '_ {
        self.reached.iter().map(|r| (r.tool as usize, r))
    }

    /// Tool `idx`'s paths, strongest first (`explain` is filled in by
    /// [`explain`]).
    pub fn paths(&self, idx: usize) -> Vec<GraphPath> {
        let mut paths: Vec<GraphPath> = self
            .evidence_of(idx)
            .into_iter()
            .map(|(e, run)| GraphPath {
                mention: run.mention.to_string(),
                node: run.node.to_string(),
                via: run.via.to_string(),
                relation: run.relation,
                hops: run.hops,
                weight: run.weight,
                provenance: if e.path.extracted() {
                    Provenance::Extracted
                } else {
                    Provenance::Curated
                },
                explain: String::new(),
                stated: run.stated,
                from_context: run.context,
            })
            .collect();
        paths.sort_by(|a, b| b.weight.total_cmp(&a.weight));
        paths
    }

    /// Surfaces of the request mentions tool `idx` matched, in request order.
    pub fn matched(&self, idx: usize) -> Vec<String> {
        self.evidence_of(idx)
            .into_iter()
            .filter(|(e, _)| e.positive)
            .map(|(_, run)| run.mention.to_string())
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
        Relation::Rival => -0.8,
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
        Relation::Rival => "actsOn another",
    }
}

/// Where a request's mentions came from: the first `explicit` from the
/// planner's `verb` field (stated intent), those from `context_from` on
/// from the conversation's earlier turns, each weighing `context_weight`
/// of a mention in the request itself.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sources {
    pub explicit: usize,
    pub context_from: usize,
    pub context_weight: f32,
}

impl Sources {
    /// Mentions of the request alone (no conversation).
    pub fn request(explicit: usize) -> Self {
        Self {
            explicit,
            context_from: usize::MAX,
            context_weight: 0.0,
        }
    }
}

/// Graph channel: per tool, the share of request evidence its constellation
/// explains. Each distinct mention counts once (its best path), entity
/// paths are weighted by the rarity of the tool-side node, sibling paths
/// subtract when the tool has nothing positive for that mention.
/// Mentions the planner's verb field states weigh [`EXPLICIT_VERB_WEIGHT`]
/// times a mention in free text, the conversation's less (see [`Sources`]).
/// Only tools in `scope` are reached. The catalog's walk hands over whole
/// adjacency lists; their paths share a weight, so each tool keeps only its
/// strongest path of each sign per mention as they stream past (no path is
/// materialised, nothing is sorted).
pub(crate) fn graph_scores<'a>(
    catalog: &'a Catalog,
    mentions: &'a [Mention],
    sources: Sources,
    scope: &Scope,
) -> GraphScores<'a> {
    let explicit = sources.explicit;
    // Distinct evidence groups: mentions with the same IRI set count once.
    let mut seen_groups: HashSet<Vec<&str>> = HashSet::default();
    let mut total = 0.0_f32;
    let mut out = GraphScores::default();
    // (tool, surface) pairs with a positive path: sibling evidence from a
    // mention with the same surface does not count against them. Surfaces
    // are numbered in order of appearance.
    let mut matched = Matched::default();
    let mut surfaces: Vec<&str> = Vec::new();
    // The slots the mention being walked touched, in the order touched.
    let mut touched: Vec<usize> = Vec::new();
    let mut walked = 0u32;
    for (i, m) in mentions.iter().enumerate() {
        let context = i >= sources.context_from;
        let w_m = mention_weight(m.kind)
            * if i < explicit && m.kind == MentionKind::Verb {
                EXPLICIT_VERB_WEIGHT
            } else if context {
                sources.context_weight
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
        walked += 1;
        touched.clear();
        let stated = i < explicit;
        let surface = m.surface.as_str();
        let surface_id = match surfaces.iter().position(|&s| s == surface) {
            Some(id) => id,
            None => {
                surfaces.push(surface);
                surfaces.len() - 1
            }
        };
        let walk = Walk {
            catalog,
            scope,
            weight: w_m,
            stated,
            context,
            walked,
        };
        out.walk(&walk, m, &mut touched);
        out.settle(&touched, &mut matched, surface_id, stated);
    }
    if total > 0.0 {
        for s in &mut out.slots {
            s.graph.score /= total;
        }
    }
    if !out.slots.is_empty() {
        let mut reached = REACHED.empty();
        reached.extend(
            out.slots
                .iter()
                .filter(|s| s.graph.reached)
                .map(|s| Reached {
                    tool: s.tool,
                    score: s.graph.score,
                    stated_verb: s.graph.stated_verb,
                }),
        );
        out.reached = reached;
    }
    out
}

/// One mention's walk: its weight and where it reaches.
struct Walk<'c, 's> {
    catalog: &'c Catalog,
    scope: &'s Scope,
    /// The mention's weight (its kind, stated or not).
    weight: f32,
    stated: bool,
    /// The mention came from the conversation.
    context: bool,
    /// The mention's number among those walked.
    walked: u32,
}

impl<'a> GraphScores<'a> {
    /// Walks the adjacency lists of one mention's nodes: each tool in scope
    /// keeps its strongest path of each sign for this mention.
    fn walk(&mut self, w: &Walk<'a, '_>, m: &'a Mention, touched: &mut Vec<usize>) {
        let catalog = w.catalog;
        for (iri, r) in m.iris.iter().enumerate() {
            catalog.paths().walk(r.iri.as_str(), |run| {
                let rarity = if matches!(run.relation, Relation::Verb | Relation::VerbBroader) {
                    1.0
                } else {
                    catalog.idf(run.via).sqrt()
                };
                let weight =
                    w.weight * r.weight.min(1.0) * relation_weight(run.relation, run.hops) * rarity;
                let id = self.runs.len();
                self.runs.push(Run {
                    mention: m.surface.as_str(),
                    stated: w.stated,
                    context: w.context,
                    iri,
                    node: r.iri.as_str(),
                    via: run.via,
                    relation: run.relation,
                    hops: run.hops,
                    weight,
                });
                if self.slot_of.is_empty() {
                    self.slot_of = SLOT_OF.take(catalog.tools().len());
                    self.slots = SLOTS.empty();
                    self.evidence = EVIDENCE.empty();
                }
                let rival = run.relation == Relation::Rival;
                for (tool, extracted) in run.tools_in(w.scope) {
                    let path = PathId::new(id, extracted);
                    self.offer(tool, path, weight, w.walked, touched, rival);
                }
            });
        }
    }

    /// Offers one path to a tool: kept when it is the tool's strongest of
    /// its sign for the mention being walked (the first of equal weights;
    /// compared rarely: one list's paths share a weight, and a tool is on
    /// few lists).
    #[inline]
    fn offer(
        &mut self,
        tool: usize,
        path: PathId,
        weight: f32,
        walked: u32,
        touched: &mut Vec<usize>,
        rival: bool,
    ) {
        let Some(at) = self.slot_of.get_mut(tool) else {
            return;
        };
        if *at == 0 {
            self.slots.push(Slot {
                tool: tool as u32,
                graph: ToolGraph::default(),
                mention: 0,
                positive: Strongest::NONE,
                negative: Strongest::NONE,
                rival: false,
            });
            // (Fewer slots than catalog tools.)
            *at = self.slots.len() as u32;
        }
        let slot = *at as usize - 1;
        let Some(s) = self.slots.get_mut(slot) else {
            return;
        };
        if s.mention != walked {
            s.mention = walked;
            s.positive = Strongest::NONE;
            s.negative = Strongest::NONE;
            s.rival = false;
            touched.push(slot);
        }
        s.rival |= rival;
        let best = if weight >= 0.0 {
            &mut s.positive
        } else {
            &mut s.negative
        };
        let stronger = best.path == PathId::NONE
            || weight.abs() > best.weight.abs()
            || (weight.abs() == best.weight.abs() && earlier(&self.runs, path, best.path));
        if stronger {
            *best = Strongest { weight, path };
        }
    }

    /// Counts one mention into each tool it touched: the best positive
    /// path, then the worst negative one unless the surface has a positive
    /// path to the tool.
    fn settle(
        &mut self,
        touched: &[usize],
        matched: &mut Matched,
        surface_id: usize,
        stated: bool,
    ) {
        for &slot in touched {
            let Some(s) = self.slots.get_mut(slot) else {
                continue;
            };
            let tool = s.tool as usize;
            for (positive, found) in [(true, s.positive), (false, s.negative)] {
                if found.path == PathId::NONE || (positive && s.rival) {
                    continue;
                }
                let t = &mut s.graph;
                if positive {
                    matched.mark(t, tool, surface_id);
                } else if !s.rival && matched.has(t, tool, surface_id) {
                    continue;
                }
                t.reached = true;
                t.score += found.weight;
                t.stated_verb |= positive
                    && stated
                    && self
                        .runs
                        .get(found.path.run())
                        .is_some_and(|r| r.relation == Relation::Verb);
                let previous = t.last;
                self.evidence.push(Evidence {
                    path: found.path,
                    positive,
                    previous,
                });
                // (Fewer than u32::MAX entries: one per tool and mention.)
                t.last = u32::try_from(self.evidence.len()).unwrap_or(previous);
            }
        }
    }
}

/// Whether path `a` comes before path `b` among a tool's paths of equal
/// weight, in the order they are listed (the mention's IRIs in order, then
/// relation, hops, tool-side node, provenance).
fn earlier(runs: &[Run<'_>], a: PathId, b: PathId) -> bool {
    let key = |p: PathId| {
        runs.get(p.run())
            .map(|r| (r.iri, r.relation, r.hops, r.via, p.extracted()))
    };
    key(a) < key(b)
}

/// Fills in the human-readable form of the paths of tool `idx`:
/// `"Southwest" -> Southwest ~1 hop(s)~ airline <-[acts on]- tool`.
pub(crate) fn explain(catalog: &Catalog, idx: usize, paths: &mut [GraphPath]) {
    let tool = catalog.name(idx);
    for p in paths.iter_mut().filter(|p| p.explain.is_empty()) {
        let node = catalog.label(&p.node);
        let earlier = if p.from_context { "earlier turn: " } else { "" };
        p.explain = earlier.to_string()
            + &if p.node == p.via {
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
mod tests;
