//! Every tool with its constellation flattened, from the store's rows.

use super::sparql::term_str;
use super::{OxigraphStore, nn, source_name, store_err};
use crate::error::Result;
use crate::graph::{LinkKind, ToolLink};
use crate::model::{Dependency, Link, Param, Provenance, Tool};
use crate::vocab::{self, local_name, tg};
use oxigraph::model::{GraphName, NamedNode, NamedOrBlankNode, Term};
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

const Q_NODE_LABELS: &str = include_str!("../../../queries/node_labels.rq");
const Q_TOOL_DEPENDENCIES: &str = include_str!("../../../queries/tool_dependencies.rq");

/// The relations a tool's links are read from, the strongest four first
/// (in that order), then the rest.
const LINK_RELATIONS: [&str; 9] = [
    tg::PERFORMS,
    tg::PRIMARY_ENTITY,
    tg::ACTS_ON,
    tg::MENTIONS,
    tg::IN_DOMAIN,
    tg::IN_CATEGORY,
    tg::REQUIRES_INTEGRATION,
    tg::AVAILABLE_ON_CHANNEL,
    tg::DEPENDS_ON,
];

/// A literal's lexical value; another term as the SPARQL rows show it.
fn literal(term: Term) -> String {
    match term {
        Term::Literal(l) => l.destruct().0,
        other => term_str(&other),
    }
}

/// The source a curated source graph holds (`None` for other graphs).
fn graph_source(graph: &GraphName) -> Option<String> {
    match graph {
        GraphName::NamedNode(g) => source_name(g.as_str()),
        _ => None,
    }
}

/// The kind, parameter and reason of qualified dependencies, by (tool,
/// target).
type Qualified = HashMap<(String, String), Dependency>;

/// Labels and names of the nodes tools link to.
struct Labels {
    labels: HashMap<String, (u8, String)>,
    names: HashMap<String, String>,
}

pub(super) fn parse_bool(s: Option<&String>) -> Option<bool> {
    s.map(|v| v == "true" || v == "1")
}

/// Keeps the least `value` seen for `key`.
fn keep_least<V: Ord>(map: &mut HashMap<String, V>, key: String, value: V) {
    match map.entry(key) {
        Entry::Occupied(mut e) => {
            if value < *e.get() {
                e.insert(value);
            }
        }
        Entry::Vacant(e) => {
            e.insert(value);
        }
    }
}

impl OxigraphStore {
    // Every choice below is independent of the order the store returns rows
    // in (which differs between backends, and between two parses of the same
    // Turtle): a tool two sources describe gets the same description, links
    // and parameters on every store, so the same embedding text and ranking.
    /// The tools and the links the graph channel walks, from one set of
    /// scans on two threads: the tools' own facts and parameters on one,
    /// the link relations on the other. (Read apart, the link scans ran
    /// twice: at 300k tools the tools took 157 s and the links another
    /// 58 s, one thread each.)
    pub(super) fn read_catalog(&self) -> Result<(Vec<Tool>, Vec<ToolLink>)> {
        let (own, linked) = std::thread::scope(|s| {
            let linked = s.spawn(|| self.link_rows());
            let own = self.own_facts();
            let linked = linked
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (own, linked)
        });
        let (mut tools, params, labels) = own?;
        let (rows, qualified) = linked?;
        let mut links = tool_links(&rows, &params);
        Self::attach_links(&mut tools, &rows, &qualified, &labels);
        let params = params.into_params(&tools);
        links.sort();
        links.dedup();
        Ok((finish(tools, params), links))
    }

    /// Every tool with its own facts, the parameter rows, the link targets'
    /// labels.
    fn own_facts(&self) -> Result<(BTreeMap<String, Tool>, ParamRows, Labels)> {
        let tools = self.base_tools()?;
        let params = self.param_rows(&tools)?;
        let labels = self.node_labels()?;
        Ok((tools, params, labels))
    }

    /// The rows of every link relation whose subject is a tool (sorted:
    /// strongest relation first, curated before extracted, then by
    /// target), and the qualified dependencies.
    fn link_rows(&self) -> Result<(Vec<LinkRow>, Qualified)> {
        // Which subjects are tools, read on this thread too (a few seconds
        // at 300k): the rows are filtered as they are scanned, not held
        // for every subject until the other thread's tools are known.
        let mut tools: HashSet<Arc<str>> = HashSet::new();
        self.scan(vocab::RDF_TYPE, Some(tg::TOOL), |iri, _, _| {
            tools.insert(iri.into());
        })?;
        let mut rows: Vec<LinkRow> = Vec::new();
        for (order, rel) in LINK_RELATIONS.into_iter().enumerate() {
            self.scan(rel, None, |tool, target, graph| {
                let GraphName::NamedNode(graph) = graph else {
                    return;
                };
                if let Some(tool) = tools.get(tool.as_str()) {
                    let extracted = graph.as_str().ends_with("#extracted");
                    rows.push(LinkRow {
                        tool: Arc::clone(tool),
                        order: order.min(4),
                        rel,
                        extracted,
                        target: term_str(&target),
                    });
                }
            })?;
        }
        rows.sort_unstable();
        Ok((rows, self.qualified_dependencies()?))
    }

    /// Every (subject, object, graph) of one predicate, decoded, in index
    /// order: a scan of one index, where a SPARQL join costs a seek per row
    /// (30,000 tools' facts read by a SPARQL query with six OPTIONALs took
    /// 1.6 s).
    fn scan(
        &self,
        predicate: &str,
        object: Option<&str>,
        mut each: impl FnMut(String, Term, GraphName),
    ) -> Result<()> {
        let predicate = nn(predicate)?;
        let object = object.map(nn).transpose()?;
        for quad in self.store.quads_for_pattern(
            None,
            Some(predicate.as_ref()),
            object.as_ref().map(|o| o.as_ref().into()),
            None,
        ) {
            let quad = quad.map_err(store_err)?;
            let subject = match quad.subject {
                NamedOrBlankNode::NamedNode(n) => n.into_string(),
                NamedOrBlankNode::BlankNode(b) => format!("_:{}", b.as_str()),
            };
            each(subject, quad.object, quad.graph_name);
        }
        Ok(())
    }

    /// Each tool (`?tool a tg:Tool` in any graph) with its name, texts,
    /// flags and source. Several sources describing a tool give the smallest name,
    /// the fullest texts, read-only or universal only when all agree, the
    /// first upstream in a fixed order, the smallest source).
    fn base_tools(&self) -> Result<BTreeMap<String, Tool>> {
        let mut tools: BTreeMap<String, Tool> = BTreeMap::new();
        // Each source's name once, shared by its tools.
        let mut sources: HashMap<String, Arc<str>> = HashMap::new();
        self.scan(vocab::RDF_TYPE, Some(tg::TOOL), |iri, _, graph| {
            let t = tools.entry(iri).or_default();
            if let Some(name) = graph_source(&graph)
                && (t.source.is_empty() || *name < *t.source)
            {
                t.source = shared(&mut sources, name);
            }
        })?;
        let mut names: HashMap<String, String> = HashMap::new();
        self.scan(tg::NAME, None, |iri, name, _| {
            if tools.contains_key(&iri) {
                keep_least(&mut names, iri, literal(name));
            }
        })?;
        for (predicate, description) in [(tg::DESCRIPTION, true), (tg::MODEL_DESCRIPTION, false)] {
            self.scan(predicate, None, |iri, value, _| {
                let Some(t) = tools.get_mut(&iri) else { return };
                let value = literal(value);
                let field = if description {
                    &mut t.description
                } else {
                    &mut t.model_description
                };
                if (value.len(), &value) > (field.len(), &*field) {
                    *field = value;
                }
            })?;
        }
        // Read-only or universal: at least one value, and every value true.
        let mut flags: HashMap<(String, bool), bool> = HashMap::new();
        for (predicate, read_only) in [(tg::READ_ONLY, true), (tg::UNIVERSAL, false)] {
            self.scan(predicate, None, |iri, value, _| {
                if tools.contains_key(&iri) {
                    let yes = parse_bool(Some(&literal(value))).unwrap_or(false);
                    *flags.entry((iri, read_only)).or_insert(true) &= yes;
                }
            })?;
        }
        // An upstream that does not parse is no upstream (the call answers
        // `no_upstream`; the store was written by this code).
        let mut upstreams: HashMap<String, (String, Box<crate::model::Upstream>)> = HashMap::new();
        self.scan(tg::UPSTREAM, None, |iri, value, _| {
            if !tools.contains_key(&iri) {
                return;
            }
            let Ok(upstream) = serde_json::from_str::<Box<crate::model::Upstream>>(&literal(value))
            else {
                return;
            };
            let key = serde_json::to_string(&upstream).unwrap_or_default();
            match upstreams.entry(iri) {
                Entry::Occupied(mut e) if key < e.get().0 => {
                    e.insert((key, upstream));
                }
                Entry::Occupied(_) => {}
                Entry::Vacant(e) => {
                    e.insert((key, upstream));
                }
            }
        })?;
        for (iri, t) in &mut tools {
            t.name = names
                .remove(iri)
                .unwrap_or_else(|| iri.rsplit('/').next().unwrap_or(iri).to_string());
            t.id = vocab::tool_id(iri).unwrap_or_else(|| t.name.clone());
            t.iri.clone_from(iri);
            t.read_only = flags.get(&(iri.clone(), true)).copied().unwrap_or(false);
            t.universal = flags.get(&(iri.clone(), false)).copied().unwrap_or(false);
            t.upstream = upstreams.remove(iri).map(|(_, u)| u);
        }
        Ok(tools)
    }

    /// The kind, parameter and reason of qualified dependencies, by (tool,
    /// target).
    fn qualified_dependencies(&self) -> Result<Qualified> {
        let mut qualified: Qualified = HashMap::new();
        for mut row in self.select_fixed(Q_TOOL_DEPENDENCIES)? {
            let (Some(tool), Some(on)) = (row.remove("tool"), row.remove("on")) else {
                continue;
            };
            qualified.insert(
                (tool, on),
                Dependency {
                    on: String::new(),
                    facts: crate::model::DependencyFacts {
                        kind: row.remove("kind"),
                        parameter: row.remove("parameter"),
                        reason: row.remove("reason"),
                    },
                },
            );
        }
        Ok(qualified)
    }

    /// Of a node's labels, the preferred one (then the smallest); and of
    /// its names the smallest: a dependency names the tool it needs.
    fn node_labels(&self) -> Result<Labels> {
        let mut labels: HashMap<String, (u8, String)> = HashMap::new();
        let mut names: HashMap<String, String> = HashMap::new();
        for mut row in self.select_fixed(Q_NODE_LABELS)? {
            let (Some(node), Some(label)) = (row.remove("node"), row.remove("label")) else {
                continue;
            };
            let rank = row
                .get("labelRank")
                .and_then(|r| r.parse::<u8>().ok())
                .unwrap_or(3);
            if rank == 1 {
                keep_least(&mut names, node.clone(), label.clone());
            }
            keep_least(&mut labels, node, (rank, label));
        }
        Ok(Labels { labels, names })
    }

    /// Each tool's links, strongest relation first (`rows` in that order).
    fn attach_links(
        tools: &mut BTreeMap<String, Tool>,
        rows: &[LinkRow],
        qualified: &Qualified,
        Labels { labels, names }: &Labels,
    ) {
        // Each target's IRI and label once, shared by every link to it.
        let mut shared: HashMap<&str, (Arc<str>, Arc<str>)> = HashMap::new();
        for LinkRow {
            tool,
            rel,
            extracted,
            target,
            ..
        } in rows
        {
            let Some(t) = tools.get_mut(&**tool) else {
                continue;
            };
            let provenance = if *extracted {
                Provenance::Extracted
            } else {
                Provenance::Curated
            };
            let (iri, label) = shared.entry(target.as_str()).or_insert_with(|| {
                let label = labels
                    .get(target)
                    .map_or_else(|| local_name(target), |(_, l)| l.as_str());
                (target.as_str().into(), label.into())
            });
            let link = Link {
                iri: iri.clone(),
                label: label.clone(),
                provenance,
                weight: if provenance == Provenance::Curated {
                    1.0
                } else {
                    0.8
                },
            };
            match *rel {
                tg::PERFORMS => t.verbs.push(link),
                tg::PRIMARY_ENTITY => {
                    // Primary entities first, weighted highest.
                    t.entities.retain(|l| l.iri != link.iri);
                    t.entities.insert(
                        0,
                        Link {
                            weight: link.weight.max(1.0),
                            ..link
                        },
                    );
                }
                tg::ACTS_ON if !t.entities.iter().any(|l| l.iri == link.iri) => {
                    t.entities.push(link);
                }
                tg::MENTIONS if !t.entities.iter().any(|l| l.iri == link.iri) => {
                    t.entities.push(Link {
                        weight: 0.4,
                        ..link
                    });
                }
                tg::IN_DOMAIN => t.domains.push(link),
                tg::IN_CATEGORY => t.categories.push(link),
                tg::REQUIRES_INTEGRATION => t.integrations.push(link),
                tg::AVAILABLE_ON_CHANNEL => t.channels.push(link),
                tg::DEPENDS_ON => {
                    let key = (tool.to_string(), target.clone());
                    let qualifiers = qualified.get(&key).cloned().unwrap_or_default();
                    t.depends_on.push(Dependency {
                        on: names
                            .get(target)
                            .cloned()
                            .unwrap_or_else(|| label.to_string()),
                        ..qualifiers
                    });
                }
                _ => {}
            }
        }
    }

    /// The parameter rows of every tool: which tool owns which parameter
    /// node (in which graph), and each node's facts.
    fn param_rows(&self, tools: &BTreeMap<String, Tool>) -> Result<ParamRows> {
        let mut rows = ParamRows::default();
        self.scan(tg::PARAMETER_PROP, None, |tool, node, graph| {
            if let (GraphName::NamedNode(g), true) = (graph, tools.contains_key(&tool)) {
                rows.owners.push((tool, term_str(&node), g));
            }
        })?;
        let owned: HashSet<&str> = rows.owners.iter().map(|(_, n, _)| n.as_str()).collect();
        let mut nodes: HashMap<String, (Vec<String>, Param)> = HashMap::new();
        self.scan(tg::PARAM_NAME, None, |node, name, _| {
            if owned.contains(node.as_str()) {
                nodes.entry(node).or_default().0.push(literal(name));
            }
        })?;
        // Types, entities and descriptions repeat over thousands of tools:
        // each distinct one is held once.
        let mut pool: HashMap<String, Arc<str>> = HashMap::new();
        let least = |slot: &mut Option<Arc<str>>, value: String, pool: &mut HashMap<_, _>| {
            if slot.as_deref().is_none_or(|s| value.as_str() < s) {
                *slot = Some(shared(pool, value));
            }
        };
        self.scan(tg::PARAM_TYPE, None, |node, value, _| {
            if let Some((_, p)) = nodes.get_mut(&node) {
                least(&mut p.ty, literal(value), &mut pool);
            }
        })?;
        let mut entities = Vec::new();
        self.scan(tg::PARAM_ENTITY, None, |node, value, graph| {
            if !owned.contains(node.as_str()) {
                return;
            }
            let value = literal(value);
            if let Some((_, p)) = nodes.get_mut(&node) {
                least(&mut p.entity, value.clone(), &mut pool);
            }
            if let GraphName::NamedNode(g) = graph {
                entities.push((node, value, g));
            }
        })?;
        self.scan(tg::PARAM_DESCRIPTION, None, |node, value, _| {
            if let Some((_, p)) = nodes.get_mut(&node) {
                let value = literal(value);
                if (value.len(), std::cmp::Reverse(value.as_str()))
                    > (p.description.len(), std::cmp::Reverse(&*p.description))
                {
                    p.description = shared(&mut pool, value);
                }
            }
        })?;
        self.scan(tg::PARAM_REQUIRED, None, |node, value, _| {
            if let Some((_, p)) = nodes.get_mut(&node) {
                p.required |= parse_bool(Some(&literal(value))).unwrap_or(false);
            }
        })?;
        drop(owned);
        rows.nodes = nodes;
        rows.entities = entities;
        Ok(rows)
    }
}

/// A tool's row of one link relation; the order sorts a tool's rows
/// strongest relation first, curated before extracted, then by target.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct LinkRow {
    tool: Arc<str>,
    /// The relation's place in [`LINK_RELATIONS`] (the four strongest
    /// apart, the rest together).
    order: usize,
    rel: &'static str,
    extracted: bool,
    target: String,
}

/// The tools' parameters as the store holds them.
#[derive(Default)]
struct ParamRows {
    /// (tool, parameter node, graph) of each `tg:parameter`.
    owners: Vec<(String, String, NamedNode)>,
    /// Per parameter node its name(s) and, of several values, the longest
    /// description, the smallest type and entity, required when any says
    /// so (what `Param::canonical` would keep of every combination).
    nodes: HashMap<String, (Vec<String>, Param)>,
    /// (parameter node, entity, graph) of each `tg:paramEntity`.
    entities: Vec<(String, String, NamedNode)>,
}

impl ParamRows {
    /// Each tool's parameters, by tool IRI.
    fn into_params(self, tools: &BTreeMap<String, Tool>) -> HashMap<String, Vec<Param>> {
        let mut owners: HashMap<&str, Vec<&String>> = HashMap::new();
        for (tool, node, _) in &self.owners {
            if let Some((tool, _)) = tools.get_key_value(tool) {
                owners.entry(node.as_str()).or_default().push(tool);
            }
        }
        let mut params: HashMap<String, Vec<Param>> = HashMap::new();
        for (node, (names, facts)) in self.nodes {
            for tool in owners.get(node.as_str()).into_iter().flatten() {
                for name in &names {
                    params.entry((*tool).clone()).or_default().push(Param {
                        name: name.clone(),
                        ..facts.clone()
                    });
                }
            }
        }
        params
    }
}

/// The edges the graph channel walks, for every tool: verbs, entities,
/// mentions and parameter entities (a `tg:parameter` node's
/// `tg:paramEntity` in the same graph), each marked when it comes from an
/// `#extracted` graph. `queries/candidates.rq` is the same walk as one
/// SPARQL query.
fn tool_links(rows: &[LinkRow], params: &ParamRows) -> Vec<ToolLink> {
    let extracted = |g: &NamedNode| g.as_str().ends_with("#extracted");
    let mut out: Vec<ToolLink> = rows
        .iter()
        .filter_map(|r| {
            let kind = match r.rel {
                tg::PERFORMS => LinkKind::Performs,
                tg::PRIMARY_ENTITY => LinkKind::PrimaryEntity,
                tg::ACTS_ON => LinkKind::ActsOn,
                tg::MENTIONS => LinkKind::Mentions,
                _ => return None,
            };
            Some(ToolLink {
                tool: r.tool.to_string(),
                kind,
                target: r.target.clone(),
                extracted: r.extracted,
            })
        })
        .collect();
    let mut owners: HashMap<(&str, &NamedNode), Vec<&str>> = HashMap::new();
    for (tool, node, g) in &params.owners {
        owners.entry((node, g)).or_default().push(tool);
    }
    for (node, target, g) in &params.entities {
        for tool in owners.get(&(node.as_str(), g)).into_iter().flatten() {
            out.push(ToolLink {
                tool: (*tool).to_string(),
                kind: LinkKind::ParamEntity,
                target: target.clone(),
                extracted: extracted(g),
            });
        }
    }
    out
}

/// `value`, held once in `pool` however often it is read.
fn shared(pool: &mut HashMap<String, Arc<str>>, value: String) -> Arc<str> {
    Arc::clone(pool.entry(value).or_insert_with_key(|v| v.as_str().into()))
}

/// The tools in name order, their parameters canonical and their links
/// deduplicated, every list exactly its length.
fn finish(tools: BTreeMap<String, Tool>, mut params: HashMap<String, Vec<Param>>) -> Vec<Tool> {
    let mut out: Vec<Tool> = tools.into_values().collect();
    for t in &mut out {
        if let Some(ps) = params.remove(&t.iri) {
            t.params = Param::canonical(ps);
        }
        t.verbs.dedup_by(|a, b| a.iri == b.iri);
        t.domains.dedup_by(|a, b| a.iri == b.iri);
        t.categories.dedup_by(|a, b| a.iri == b.iri);
        t.depends_on.sort();
        t.depends_on.dedup_by(|a, b| a.on == b.on);
        for links in [&mut t.integrations, &mut t.channels] {
            links.sort_by(|a, b| a.iri.cmp(&b.iri));
            links.dedup_by(|a, b| a.iri == b.iri);
        }
        // The catalog keeps them for the life of the snapshot: no room to
        // grow (pushed one by one, they held up to twice their length).
        t.params.shrink_to_fit();
        t.depends_on.shrink_to_fit();
        for links in [
            &mut t.verbs,
            &mut t.entities,
            &mut t.domains,
            &mut t.categories,
            &mut t.integrations,
            &mut t.channels,
        ] {
            links.shrink_to_fit();
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name).then(a.iri.cmp(&b.iri)));
    out
}
