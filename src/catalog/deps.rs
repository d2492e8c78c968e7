//! Prerequisites: the `dependsOn` edges a catalog declares and the ones its
//! tools imply, built once per snapshot.
//!
//! A **declared** edge comes from a manifest or the Turtle (curated,
//! confidence 1). An **inferred** edge (extracted, never stored with the
//! curated ones) links a tool to the tools that produce what one of its
//! required parameters takes:
//!
//! - the parameter denotes an entity: its `paramEntity` when an ontologist
//!   gave one, else the entity its name names (`playlist_id` -> playlist,
//!   `employee_id` -> employee; an identifier suffix makes it stronger than
//!   a bare noun such as `location`);
//! - a producer has that entity as its primary entity, performs a verb under
//!   search, list, create or get, and does not itself require that entity;
//! - the confidence multiplies the parameter's evidence, the verb (search
//!   and list produce identifiers, create mints them, get mostly needs
//!   one), a shared domain, and how many tools produce the entity (many
//!   producers, less certainty about any one).
//!
//! Ranking follows inferred edges only at or above its threshold
//! ([`INFER_THRESHOLD`] by default), chosen from the precision measured on
//! labelled dependencies (tests/it/deps.rs, README "Dependencies").

use crate::extract::Extractor;
use crate::lexical::tokenize;
use crate::model::{DependencyFacts, MentionKind, Provenance, Tool};
use crate::scope::Scope;
use crate::vocab;
use petgraph::graphmap::DiGraphMap;
use std::collections::{HashMap, HashSet, VecDeque};

/// Inferred edges below this confidence are kept for inspection but not
/// followed by ranking.
pub const INFER_THRESHOLD: f32 = 0.7;

/// Producers considered per parameter (best first).
const MAX_PRODUCERS: usize = 3;

/// Producers scanned per entity before giving up on finding same-domain ones.
const SCAN: usize = 64;

/// Prerequisites listed per tool at most (transitively).
pub const MAX_PREREQUISITES: usize = 16;

/// Parameter-name endings that make the rest of the name an entity's
/// identifier (`playlist_id`, `case_number`, `api_key`).
const ID_SUFFIXES: &[&str] = &[
    "id",
    "ids",
    "identifier",
    "key",
    "code",
    "number",
    "no",
    "uuid",
    "token",
    "handle",
    "ref",
    "reference",
];

/// Entities whose values a user states (a date, an amount, an address):
/// no tool needs to run to obtain them.
const VALUE_ENTITIES: &[&str] = &[
    vocab::ent::TIME,
    vocab::ent::DATE,
    vocab::ent::DURATION,
    vocab::ent::MONEY,
    vocab::ent::CURRENCY,
    vocab::ent::PARTY_SIZE,
    vocab::ent::EMAIL_ADDRESS,
    vocab::ent::URL,
    vocab::ent::PHONE_NUMBER,
];

/// One edge: the tool at `to` should run first.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Edge {
    pub provenance: Provenance,
    /// 1 for declared edges.
    pub confidence: f32,
    pub facts: DependencyFacts,
}

impl Edge {
    /// Whether ranking follows it: declared, or inferred at or above
    /// `min_inferred`.
    pub fn followed(&self, min_inferred: f32) -> bool {
        self.provenance == Provenance::Curated || self.confidence >= min_inferred
    }
}

/// Producers a rule finds for one parameter: (tool, confidence, why).
pub(crate) type Found = Vec<(usize, f32, &'static str)>;

/// Which of a tool's (index) edges a prerequisite walk takes.
pub(crate) type Choose<'e> = dyn Fn(usize, Vec<(usize, &'e Edge)>) -> Vec<(usize, &'e Edge)> + 'e;

/// A tool to run before another, as ranking and responses list it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Prerequisite<'a> {
    pub idx: usize,
    /// The tool that needs it directly (the match, or another prerequisite
    /// nearer to it).
    pub of: usize,
    pub edge: &'a Edge,
    /// Edges from the match (1: a direct prerequisite).
    pub depth: usize,
    /// Product of the edge confidences from the match.
    pub confidence: f32,
    /// Some edge on the way is inferred.
    pub inferred: bool,
}

/// Declared and inferred edges between tool indexes.
#[derive(Debug, Default)]
pub(crate) struct Dependencies {
    graph: DiGraphMap<usize, Edge>,
}

impl Dependencies {
    pub fn build(
        tools: &[Tool],
        by_name: impl Fn(&str) -> Option<usize>,
        broader: &HashMap<String, Vec<String>>,
        extractor: &Extractor,
    ) -> Self {
        // Only tools with an edge are nodes (a node per catalog tool held
        // ~50 bytes each); `edges` answers none for the others.
        let mut graph = DiGraphMap::new();
        for (i, t) in tools.iter().enumerate() {
            for dep in &t.depends_on {
                if let Some(j) = by_name(&dep.on)
                    && j != i
                {
                    graph.add_edge(
                        i,
                        j,
                        Edge {
                            provenance: Provenance::Curated,
                            confidence: 1.0,
                            facts: dep.facts.clone(),
                        },
                    );
                }
            }
        }
        for (i, j, edge) in infer(tools, broader, extractor) {
            if !graph.contains_edge(i, j) {
                graph.add_edge(i, j, edge);
            }
        }
        Self { graph }
    }

    /// Every edge out of `idx` (any confidence): declared first, then
    /// inferred by confidence, then by catalog order.
    pub fn edges(&self, idx: usize) -> Vec<(usize, &Edge)> {
        if !self.graph.contains_node(idx) {
            return Vec::new();
        }
        let mut out: Vec<(usize, &Edge)> = self.graph.edges(idx).map(|(_, j, e)| (j, e)).collect();
        out.sort_by(|a, b| {
            (a.1.provenance != Provenance::Curated)
                .cmp(&(b.1.provenance != Provenance::Curated))
                .then(b.1.confidence.total_cmp(&a.1.confidence))
                .then(a.0.cmp(&b.0))
        });
        out
    }

    /// Tools to run before `idx` that `scope` may see, nearest first
    /// (breadth first: direct prerequisites, then theirs), following
    /// declared edges and inferred ones at or above `min_inferred`;
    /// cycle-safe (each tool once), never through a tool outside the scope,
    /// at most [`MAX_PREREQUISITES`].
    #[cfg(test)]
    pub fn prerequisites(
        &self,
        idx: usize,
        scope: &Scope,
        min_inferred: f32,
    ) -> Vec<Prerequisite<'_>> {
        self.prerequisites_chosen(idx, scope, min_inferred, &|_, edges| edges)
    }

    /// [`Dependencies::prerequisites`], where `choose` decides which of a
    /// tool's followed edges (in scope, in [`Dependencies::edges`] order)
    /// the walk takes: those it leaves out are not listed, nor is anything
    /// reached only through them.
    pub fn prerequisites_chosen<'e>(
        &'e self,
        idx: usize,
        scope: &Scope,
        min_inferred: f32,
        choose: &Choose<'e>,
    ) -> Vec<Prerequisite<'e>> {
        let mut out: Vec<Prerequisite<'_>> = Vec::new();
        let mut seen = HashSet::from([idx]);
        let mut queue = VecDeque::from([(idx, 0usize, 1.0f32, false)]);
        while let Some((at, depth, confidence, inferred)) = queue.pop_front() {
            let next: Vec<(usize, &Edge)> = self
                .edges(at)
                .into_iter()
                .filter(|&(j, e)| scope.contains(j) && e.followed(min_inferred))
                .collect();
            for (j, edge) in choose(at, next) {
                if out.len() >= MAX_PREREQUISITES {
                    return out;
                }
                if !seen.insert(j) {
                    continue;
                }
                let p = Prerequisite {
                    idx: j,
                    of: at,
                    edge,
                    depth: depth + 1,
                    confidence: confidence * edge.confidence,
                    inferred: inferred || edge.provenance != Provenance::Curated,
                };
                queue.push_back((j, p.depth, p.confidence, p.inferred));
                out.push(p);
            }
        }
        out
    }

    /// [`Dependencies::prerequisites`] in running order: each tool after
    /// the ones it needs (depth first, post-order), the match last and left
    /// out.
    #[cfg(test)]
    pub fn running_order(&self, idx: usize, scope: &Scope, min_inferred: f32) -> Vec<usize> {
        self.order_of(idx, &self.prerequisites(idx, scope, min_inferred))
    }

    /// The running order of prerequisites already walked for `idx`.
    pub fn order_of(&self, idx: usize, walked: &[Prerequisite<'_>]) -> Vec<usize> {
        let set: HashSet<usize> = walked.iter().map(|p| p.idx).collect();
        let mut order = Vec::with_capacity(set.len());
        let mut done = HashSet::new();
        self.post_order(idx, &set, &mut done, &mut order);
        order.retain(|&n| n != idx);
        order
    }

    fn post_order(
        &self,
        at: usize,
        set: &HashSet<usize>,
        done: &mut HashSet<usize>,
        order: &mut Vec<usize>,
    ) {
        if !done.insert(at) {
            return;
        }
        let mut next: Vec<usize> = self
            .graph
            .neighbors(at)
            .filter(|j| set.contains(j))
            .collect();
        next.sort_unstable();
        for j in next {
            self.post_order(j, set, done, order);
        }
        order.push(at);
    }
}

/// What a producing verb is worth: search and list hand out identifiers,
/// create mints them, get usually needs one already.
fn producer_weight(verbs: &[String], broader: &HashMap<String, Vec<String>>) -> Option<f32> {
    let weight_of = |iri: &str| match iri.strip_prefix(vocab::VERB) {
        Some("search" | "list" | "find") => Some(1.0),
        Some("create") => Some(0.9),
        Some("get") => Some(0.8),
        _ => None,
    };
    let mut best: Option<f32> = None;
    for v in verbs {
        // the verb and its ancestors, breadth first, a few levels up
        let mut frontier = vec![v.as_str()];
        for _ in 0..4 {
            let mut next = Vec::new();
            for f in frontier {
                if let Some(w) = weight_of(f) {
                    best = Some(best.map_or(w, |b: f32| b.max(w)));
                }
                next.extend(broader.get(f).into_iter().flatten().map(String::as_str));
            }
            if next.is_empty() {
                break;
            }
            frontier = next;
        }
    }
    best
}

/// The entities a required parameter denotes, with the strength of that
/// reading: curated `paramEntity` 1.0; a name ending in an identifier
/// suffix 0.9 (the rest names the entity); a bare name 0.6.
fn param_entities(
    p: &crate::model::Param,
    extractor: &Extractor,
    by_label: &HashMap<String, Vec<String>>,
) -> Vec<(String, f32)> {
    if let Some(e) = &p.entity {
        return vec![(e.to_string(), 1.0)];
    }
    let mut words: Vec<String> = tokenize(&p.name)
        .into_iter()
        .map(|w| w.to_lowercase())
        .collect();
    let strength = match words.last() {
        Some(last) if words.len() > 1 && ID_SUFFIXES.contains(&last.as_str()) => {
            words.pop();
            0.9
        }
        _ => 0.6,
    };
    let head = words.join(" ");
    if head.is_empty() {
        return Vec::new();
    }
    let mut out: Vec<(String, f32)> = Vec::new();
    let mut add = |iri: &str, w: f32| match out.iter_mut().find(|(i, _)| i == iri) {
        Some((_, old)) => *old = old.max(w),
        None => out.push((iri.to_string(), w)),
    };
    // the producers' own label for the entity ("playlist")
    for iri in by_label.get(&head).into_iter().flatten() {
        add(iri, strength);
    }
    // the ontology's labels and synonyms, for the phrase's head noun
    let last_start = head.rfind(' ').map_or(0, |i| i + 1);
    for m in extractor.extract(&head) {
        if m.kind != MentionKind::Entity || m.end < head.len() || m.start > last_start {
            continue;
        }
        for r in &m.iris {
            add(&r.iri, strength * 0.9 * r.weight.min(1.0));
        }
    }
    out.retain(|(iri, _)| !VALUE_ENTITIES.contains(&iri.as_str()));
    out
}

/// Leading name words of a tool that hands out what the rest of its name
/// names.
const NAME_VERBS: &[&str] = &[
    "get", "list", "search", "find", "fetch", "retrieve", "lookup", "query", "create", "generate",
    "read",
];

/// What a parameter name says it takes, as name keys with their strength:
/// the whole name (`country code`, 1.0); without an identifier suffix
/// (`playlist`, 0.9) and its plural (`playlists`, 0.9).
fn name_keys(param: &str) -> Vec<(String, f32)> {
    let words: Vec<String> = tokenize(param)
        .into_iter()
        .map(|w| w.to_lowercase())
        .collect();
    if words.is_empty() {
        return Vec::new();
    }
    let mut out = vec![(words.join(" "), 1.0)];
    if words.len() > 1
        && words
            .last()
            .is_some_and(|l| ID_SUFFIXES.contains(&l.as_str()))
    {
        let head = words[..words.len() - 1].join(" ");
        out.push((format!("{head}s"), 0.9));
        out.push((head, 0.9));
    }
    out
}

/// A required parameter and the entities it denotes, with their strength.
type ParamRead<'a> = (&'a crate::model::Param, Vec<(String, f32)>);

/// Who produces what: tools by the primary entity they produce (best verb
/// first), entity IRIs by label, and tools by the words their name
/// produces (`get_current_location` -> "current location", "location").
struct Producers<'t> {
    by_entity: HashMap<&'t str, Vec<(usize, f32)>>,
    by_label: HashMap<String, Vec<String>>,
    /// Name ending -> (tool, verb weight, whether the ending is the whole
    /// rest of the name).
    by_name: HashMap<String, Vec<(usize, f32, bool)>>,
}

impl<'t> Producers<'t> {
    fn of(tools: &'t [Tool], broader: &HashMap<String, Vec<String>>) -> Self {
        let mut by_entity: HashMap<&str, Vec<(usize, f32)>> = HashMap::new();
        let mut by_label: HashMap<String, Vec<String>> = HashMap::new();
        let mut by_name: HashMap<String, Vec<(usize, f32, bool)>> = HashMap::new();
        for (j, t) in tools.iter().enumerate() {
            let verbs: Vec<String> = t.verbs.iter().map(|v| v.iri.to_string()).collect();
            let Some(w) = producer_weight(&verbs, broader) else {
                continue;
            };
            if let Some(primary) = t.entities.first() {
                by_entity.entry(&*primary.iri).or_default().push((j, w));
                let labels = by_label.entry(primary.label.to_lowercase()).or_default();
                if !labels.iter().any(|l| **l == *primary.iri) {
                    labels.push(primary.iri.to_string());
                }
            }
            let words: Vec<String> = tokenize(&t.name)
                .into_iter()
                .map(|w| w.to_lowercase())
                .collect();
            let Some(first) = words.first() else { continue };
            if !NAME_VERBS.contains(&first.as_str()) || words.len() < 2 {
                continue;
            }
            let rest = &words[1..];
            for k in 0..rest.len() {
                by_name
                    .entry(rest[k..].join(" "))
                    .or_default()
                    .push((j, w, k == 0));
            }
        }
        for list in by_entity.values_mut() {
            list.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        }
        Self {
            by_entity,
            by_label,
            by_name,
        }
    }
}

/// Candidate edges `(consumer, producer, edge)`, best producers per
/// parameter; a pair keeps its best confidence.
fn infer(
    tools: &[Tool],
    broader: &HashMap<String, Vec<String>>,
    extractor: &Extractor,
) -> Vec<(usize, usize, Edge)> {
    let producers = Producers::of(tools, broader);
    // each required parameter's entities, read once: what a tool needs
    // (to tell a producer from a consumer) and what to look producers up by
    let reads: Vec<Vec<ParamRead<'_>>> = tools
        .iter()
        .map(|t| {
            t.params
                .iter()
                .filter(|p| p.required)
                .map(|p| (p, param_entities(p, extractor, &producers.by_label)))
                .collect()
        })
        .collect();
    let typed = super::typed::TypedProducers::of(tools);
    let routes = super::rest::Routes::of(tools);
    let mut best: HashMap<(usize, usize), Edge> = HashMap::new();
    for i in 0..tools.len() {
        for read in &reads[i] {
            let p = read.0;
            let named = producers_of(tools, &producers, &reads, i, read)
                .into_iter()
                .take(MAX_PRODUCERS)
                .map(|(j, c)| (j, c, "produces it"));
            let mut by_kind = typed.of_param(tools, i, &p.name);
            by_kind.extend(routes.of_param(tools, i, &p.name));
            for (j, confidence, why) in named.chain(by_kind.into_iter().take(MAX_PRODUCERS)) {
                let edge = Edge {
                    provenance: Provenance::Extracted,
                    confidence,
                    facts: DependencyFacts {
                        kind: Some("PARAMETER_INFERRED".into()),
                        parameter: Some(p.name.clone()),
                        reason: Some(format!(
                            "`{}` takes what `{}` hands out: {why}",
                            p.name, tools[j].name
                        )),
                    },
                };
                match best.get_mut(&(i, j)) {
                    Some(old) if old.confidence >= confidence => {}
                    _ => {
                        best.insert((i, j), edge);
                    }
                }
            }
        }
    }
    let mut out: Vec<(usize, usize, Edge)> =
        best.into_iter().map(|((i, j), e)| (i, j, e)).collect();
    out.sort_by_key(|e| (e.0, e.1));
    out
}

/// The producers of one required parameter of tool `i`, strongest first,
/// each once: tools producing an entity it denotes (not needing it
/// themselves), and tools named after what it takes.
fn producers_of(
    tools: &[Tool],
    producers: &Producers<'_>,
    reads: &[Vec<ParamRead<'_>>],
    i: usize,
    (p, entities): &ParamRead<'_>,
) -> Vec<(usize, f32)> {
    let t = &tools[i];
    let needs = |j: usize, entity: &str| {
        reads[j]
            .iter()
            .any(|(_, es)| es.iter().any(|(e, _)| e == entity))
    };
    let mut found: Vec<(usize, f32)> = Vec::new();
    for (entity, strength) in entities {
        let Some(list) = producers.by_entity.get(entity.as_str()) else {
            continue;
        };
        let spread = 1.0 / (1.0 + 0.35 * (list.len() as f32).ln());
        for &(j, verb) in list.iter().take(SCAN) {
            if j == i || needs(j, entity) {
                continue;
            }
            let shared = tools[j]
                .domains
                .iter()
                .any(|d| t.domains.iter().any(|o| o.iri == d.iri));
            let domain = if shared || t.domains.is_empty() {
                1.0
            } else {
                0.75
            };
            found.push((j, strength * verb * domain * spread));
        }
    }
    // a producer named after what the parameter takes
    // (`country_code` <- get_country_code, `playlist_id` <- list_playlists)
    for (key, strength) in name_keys(&p.name) {
        let Some(list) = producers.by_name.get(&key) else {
            continue;
        };
        let spread = 1.0 / (1.0 + 0.35 * (list.len() as f32).ln());
        for &(j, verb, whole) in list.iter().take(SCAN) {
            let takes_it_too = tools[j]
                .params
                .iter()
                .any(|q| q.required && q.name.eq_ignore_ascii_case(&p.name));
            if j == i || takes_it_too {
                continue;
            }
            let whole = if whole { 1.0 } else { 0.85 };
            found.push((j, strength * whole * verb * spread));
        }
    }
    found.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut seen = HashSet::new();
    found.retain(|f| seen.insert(f.0));
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::Lexicon;
    use crate::model::{Dependency, Link, Param};

    fn tool(name: &str, deps: &[&str]) -> Tool {
        Tool {
            name: name.into(),
            depends_on: deps.iter().map(|d| Dependency::on(*d)).collect(),
            ..Tool::default()
        }
    }

    fn build(tools: &[Tool]) -> Dependencies {
        let by_name = |name: &str| tools.iter().position(|t| t.name.eq_ignore_ascii_case(name));
        let extractor = Extractor::new(Lexicon::new(Vec::new()));
        Dependencies::build(tools, by_name, &HashMap::new(), &extractor)
    }

    #[test]
    fn nearest_first_each_once_and_never_outside_the_scope() {
        // 0 -> 1 -> 2 -> 0 (a cycle), 0 -> 3, 3 -> 4
        let tools = [
            tool("a", &["b", "d"]),
            tool("b", &["c"]),
            tool("c", &["a"]),
            tool("d", &["e"]),
            tool("e", &[]),
        ];
        let deps = build(&tools);
        let all = Scope::all(tools.len());
        let got: Vec<(usize, usize, usize)> = deps
            .prerequisites(0, &all, 0.5)
            .iter()
            .map(|p| (p.idx, p.of, p.depth))
            .collect();
        assert_eq!(got, [(1, 0, 1), (3, 0, 1), (2, 1, 2), (4, 3, 2)]);
        // running order: each after what it needs
        assert_eq!(deps.running_order(0, &all, 0.5), [2, 1, 4, 3]);
        // without `d` in scope, `e` (reached only through it) is not listed
        let scope = Scope::of(tools.len(), [0, 1, 2, 4]);
        let got: Vec<usize> = deps
            .prerequisites(0, &scope, 0.5)
            .iter()
            .map(|p| p.idx)
            .collect();
        assert_eq!(got, [1, 2]);
        assert!(deps.prerequisites(4, &all, 0.5).is_empty());
    }

    #[test]
    fn an_identifier_parameter_links_to_the_tool_that_lists_its_entity() {
        let link = |iri: &str, label: &str| Link {
            iri: iri.into(),
            label: label.into(),
            provenance: Provenance::Curated,
            weight: 1.0,
        };
        let playlist = link("https://toolgraph.dev/entity/Playlist", "playlist");
        let mut list = tool("list_playlists", &[]);
        list.verbs = vec![link(&format!("{}list", vocab::VERB), "list")];
        list.entities = vec![playlist.clone()];
        let mut add = tool("add_song", &[]);
        add.verbs = vec![link(&format!("{}update", vocab::VERB), "update")];
        add.entities = vec![playlist];
        add.params = vec![
            Param {
                name: "playlist_id".into(),
                required: true,
                ..Param::default()
            },
            Param {
                name: "at".into(),
                required: true,
                ..Param::default()
            },
        ];
        let deps = build(&[list, add]);
        let edges: Vec<(usize, &Edge)> = deps.edges(1);
        assert_eq!(edges.len(), 1, "{edges:?}");
        let (to, edge) = edges[0];
        assert_eq!(to, 0);
        assert_eq!(edge.provenance, Provenance::Extracted);
        assert_eq!(edge.facts.parameter.as_deref(), Some("playlist_id"));
        // an identifier suffix (0.9) from the only producer, verb list (1.0)
        assert!((edge.confidence - 0.9).abs() < 1e-6, "{edge:?}");
        assert!(
            edge.facts
                .reason
                .as_deref()
                .is_some_and(|r| r.contains("list_playlists"))
        );
        // the producer needs nothing back
        assert!(deps.edges(0).is_empty());
    }
}
