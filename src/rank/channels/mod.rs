//! The graph channel: what share of the request's evidence each tool's
//! constellation explains, through which paths.

use super::GraphPath;
use crate::catalog::Catalog;
use crate::catalog::paths::RunsByList;
use crate::graph::Relation;
use crate::model::{Mention, MentionKind, Provenance};
use crate::scope::Scope;
use crate::scratch;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::cell::{OnceCell, RefCell};

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
    /// The adjacency list itself.
    list: crate::catalog::paths::Run<'a>,
    /// Left out of the walk (see [`Deferred`]).
    deferred: bool,
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
    /// Of the strongest positive runs the walk left out, per mention, the
    /// sum of those the tool's own strongest path for the mention is at
    /// least as strong as (they cannot add to its score).
    covered: f32,
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
    /// The long runs left out of the walk, when some were.
    deferred: Option<Box<Deferred<'a>>>,
}

/// What a walk that left its long runs out keeps (see [`graph_scores`]):
/// enough to work out any tool's score exactly on demand, a bound on what
/// the runs left out can add to a tool's score, and the walk's inputs, to
/// walk everything when the bound is not enough.
#[derive(Debug, Clone)]
struct Deferred<'a> {
    /// The mentions walked, in order: their runs (a range of `runs`).
    groups: Vec<Group>,
    /// The evidence total scores are divided by.
    total: f32,
    /// No tool's score is higher than the walk's score for it (0 when the
    /// walk did not reach it) plus this; see [`GraphScores::unlisted`].
    bound: f32,
    /// The sum `bound` is of (see [`Reached::more`]).
    left_out: f32,
    /// A run left out performs a stated verb.
    stated: bool,
    scope: Scope,
    catalog: &'a Catalog,
    mentions: &'a [Mention],
    sources: Sources,
    /// Tools whose exact score was asked for: their score (`None`: no
    /// path reaches them) and, when a run left out reaches them, their
    /// own evidence.
    done: RefCell<HashMap<usize, Option<Done>>>,
    /// Every run by its list, made when a score is first asked for.
    by_list: OnceCell<RunsByList>,
}

/// One mention's runs, as walked.
#[derive(Debug, Clone, Copy)]
struct Group {
    /// The weight of its strongest positive run left out of the walk (0:
    /// none).
    left_out: f32,
    runs: (usize, usize),
    walked: u32,
    surface: usize,
    stated: bool,
}

/// A tool's exact score worked out on demand.
#[derive(Debug, Clone)]
struct Done {
    graph: ToolGraph,
    /// `None`: the walk's evidence is the tool's (no run left out reaches it).
    evidence: Option<Vec<Evidence>>,
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
    /// What the runs left out of the walk may add to `score` at most (0
    /// when none were).
    pub more: f32,
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

    /// The walk's score of tool `idx`: exact unless some runs were left
    /// out (then a lower bound on its positive part).
    fn walked(&self, idx: usize) -> Option<ToolGraph> {
        self.slot(idx).map(|s| s.graph).filter(|t| t.reached)
    }

    /// The graph score of tool `idx`, when some path reaches it (worked
    /// out on demand, once, when a run left out of the walk reaches it).
    pub fn get(&self, idx: usize) -> Option<ToolGraph> {
        let Some(d) = &self.deferred else {
            return self.walked(idx);
        };
        if let Some(done) = d.done.borrow().get(&idx) {
            return done.as_ref().map(|done| done.graph);
        }
        let mut links = Vec::new();
        if d.scope.contains(idx) {
            d.by_list
                .get_or_init(|| RunsByList::new(self.runs.iter().map(|r| r.list)))
                .links_of(d.catalog.paths(), idx, &mut links);
        }
        let reached_later = links
            .iter()
            .any(|&(run, _)| self.runs.get(run).is_some_and(|r| r.deferred));
        let done = if reached_later {
            self.replay(d, idx, &links)
        } else {
            self.walked(idx).map(|graph| Done {
                graph,
                evidence: None,
            })
        };
        let graph = done.as_ref().map(|d| d.graph);
        d.done.borrow_mut().insert(idx, done);
        graph
    }

    /// Tool `idx`'s score worked out over every run, left out or not, in
    /// the walk's order: the walk's own steps for one tool, over its
    /// `links` (run number, extracted; in run order).
    fn replay(&self, d: &Deferred<'a>, idx: usize, links: &[(usize, bool)]) -> Option<Done> {
        let mut slot = Slot::new(u32::try_from(idx).ok()?);
        let mut matched = Matched::default();
        let mut evidence = Vec::new();
        let mut links = links.iter().copied().peekable();
        for g in &d.groups {
            let mut touched = false;
            while let Some((id, extracted)) = links.next_if(|&(id, _)| id < g.runs.1) {
                let Some(run) = self.runs.get(id).filter(|_| id >= g.runs.0) else {
                    continue;
                };
                let rival = run.relation == Relation::Rival;
                let path = PathId::new(id, extracted);
                touched |= slot.offer(&self.runs, path, run.weight, g.walked, rival);
            }
            if touched {
                slot.settle(&self.runs, &mut matched, g.surface, g.stated, &mut evidence);
            }
        }
        if d.total > 0.0 {
            slot.graph.score /= d.total;
        }
        slot.graph.reached.then_some(Done {
            graph: slot.graph,
            evidence: Some(evidence),
        })
    }

    /// At most tool `idx`'s score and whether a path of it may perform a
    /// stated verb, without replaying the runs left out (what
    /// [`Self::scored`] says of a listed tool, [`Self::unlisted`] of
    /// another); its exact score once worked out. `None`: no path reaches
    /// it.
    pub fn upper(&self, idx: usize) -> Option<(f32, bool)> {
        let walked = self.slot(idx).filter(|s| s.graph.reached);
        let Some(d) = &self.deferred else {
            return walked.map(|s| (s.graph.score, s.graph.stated_verb));
        };
        if let Some(done) = d.done.borrow().get(&idx) {
            return done.as_ref().map(|x| (x.graph.score, x.graph.stated_verb));
        }
        Some(match walked {
            Some(s) => (
                s.graph.score + walk::more(d.left_out, s.covered, d.total),
                s.graph.stated_verb || d.stated,
            ),
            None => (d.bound, d.stated),
        })
    }

    /// Whether the walk reached tool `idx` (it is among [`Self::scored`]).
    pub fn listed(&self, idx: usize) -> bool {
        self.walked(idx).is_some()
    }

    /// When runs were left out of the walk: what they can add to a tool's
    /// score at most (a tool the walk did not reach scores at most this),
    /// and whether one performs a stated verb. `None`: every score the walk
    /// lists is exact and no other tool has one.
    pub fn unlisted(&self) -> Option<(f32, bool)> {
        self.deferred.as_ref().map(|d| (d.bound, d.stated))
    }

    /// The same channel with every run walked (`None` when none was left
    /// out).
    pub fn expanded(&self) -> Option<GraphScores<'a>> {
        let d = self.deferred.as_ref()?;
        let _stage = tracing::info_span!("stage", stage = "graph_expand").entered();
        Some(graph_scores(
            d.catalog,
            d.mentions,
            d.sources,
            &d.scope,
            usize::MAX,
        ))
    }

    /// Tool `idx`'s evidence, in the order found: its own entries through
    /// their links, not a scan of every tool's (a reported tool's
    /// explanation read all of it, tens of thousands of entries at 100k
    /// tools, twice per reported tool).
    fn evidence_of(&self, idx: usize) -> Vec<(Evidence, &Run<'a>)> {
        let mut found = Vec::new();
        let mut at = self.get(idx).map_or(0, |t| t.last);
        let done = self.deferred.as_ref().map(|d| d.done.borrow());
        let own = done
            .as_ref()
            .and_then(|d| d.get(&idx)?.as_ref()?.evidence.as_deref());
        let list = own.unwrap_or(&self.evidence);
        while let Some(&e) = (at as usize).checked_sub(1).and_then(|i| list.get(i)) {
            if let Some(run) = self.runs.get(e.path.run()) {
                found.push((e, run));
            }
            at = e.previous;
        }
        found.reverse();
        found
    }

    /// The tools the walk reached (any order).
    pub fn tools(&self) -> impl Iterator<Item = usize> + '_ {
        self.scored().map(|(tool, _)| tool)
    }

    /// How many tools the walk reached.
    pub fn len(&self) -> usize {
        self.reached.len()
    }

    /// The tools the walk reached with their scores, in the order held
    /// (lower bounds when runs were left out: see [`Self::unlisted`]).
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
///
/// A popular entity's list holds a few percent of a large catalog (a
/// quarter of a million tools per request at a million), nearly all of
/// them far from the top. Positive runs of at least `defer_from` links,
/// and then every negative run, are left out of the walk: a tool's exact
/// score is worked out on demand over every run ([`GraphScores::get`]),
/// and [`GraphScores::unlisted`] bounds what the runs left out add, so
/// fusion can rule out the tools only they reach without looking at them
/// (or walks everything, [`GraphScores::expanded`], when it cannot).
pub(crate) fn graph_scores<'a>(
    catalog: &'a Catalog,
    mentions: &'a [Mention],
    sources: Sources,
    scope: &Scope,
    defer_from: usize,
) -> GraphScores<'a> {
    let mut out = GraphScores::default();
    let (mut groups, total) = out.collect(catalog, mentions, sources);
    // (`None`: no run left out.)
    let left_out = out.leave_out(&mut groups, defer_from);
    let mut matched = Matched::default();
    // The slots the mention being walked touched, in the order touched.
    let mut touched: Vec<usize> = Vec::new();
    for g in &groups {
        touched.clear();
        for id in g.runs.0..g.runs.1 {
            let Some(&run) = out.runs.get(id) else {
                continue;
            };
            if run.deferred {
                continue;
            }
            if out.slot_of.is_empty() {
                out.slot_of = SLOT_OF.take(catalog.tools().len());
                out.slots = SLOTS.empty();
                out.evidence = EVIDENCE.empty();
            }
            let rival = run.relation == Relation::Rival;
            for (tool, extracted) in run.list.tools_in(scope) {
                let path = PathId::new(id, extracted);
                out.offer(tool, path, run.weight, g.walked, &mut touched, rival);
            }
        }
        out.settle(&touched, &mut matched, g.surface, g.stated);
        if g.left_out > 0.0 {
            out.cover(&touched, g.left_out);
        }
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
                    more: left_out.map_or(0.0, |sum| walk::more(sum, s.covered, total)),
                }),
        );
        out.reached = reached;
    }
    if let Some(sum) = left_out {
        out.deferred = Some(Box::new(out.deferral(
            (groups, total, sum),
            scope,
            (catalog, mentions, sources),
        )));
    }
    out
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

mod walk;

#[cfg(test)]
mod tests;
