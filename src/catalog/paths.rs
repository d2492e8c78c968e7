//! The graph channel's paths, walked in memory over the snapshot.
//!
//! The same relations as `queries/candidates.rq` (verb, narrower/broader
//! verb, primary entity, acts on, acts on a broader/narrower class or an
//! instance's class up to two hops, mentions, parameter entity, and the
//! negative sibling evidence), evaluated over adjacency lists built once
//! per snapshot from the store's tool links and ontology facts. A search
//! then costs what its paths cost, not a query over the whole store
//! (Seal-Tools, 4,256 tools: the graph stage took 82 ms per request as
//! SPARQL). `tests/it/store.rs` holds the walk to the SPARQL query.

use crate::graph::{LinkKind, OntologyFacts, Relation, ToolLink};
use crate::scope::Scope;
use std::collections::HashMap;

/// Tools per target node, each with its link's provenance in one
/// [`Linked`] (4 bytes, not 16 as `(usize, bool)`: a walk streams tens of
/// thousands of them per request at 100k tools, and what it reads evicts
/// the embedding model from the cache).
type Adjacent = HashMap<String, List>;

/// One adjacency list: its number among the snapshot's lists (see
/// [`Paths::lists_of`]) and its links, in tool order.
#[derive(Debug, Default)]
struct List {
    id: u32,
    links: Vec<Linked>,
}

/// A tool index and whether its link was extracted (the lowest bit);
/// ordered by tool, then provenance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Linked(u32);

impl Linked {
    /// `None` past 2^31 tools.
    fn new(tool: usize, extracted: bool) -> Option<Self> {
        let t = u32::try_from(tool).ok().filter(|&t| t < 1 << 31)?;
        Some(Self(t << 1 | u32::from(extracted)))
    }

    fn tool(self) -> usize {
        (self.0 >> 1) as usize
    }

    fn extracted(self) -> bool {
        self.0 & 1 == 1
    }
}

#[derive(Debug, Default)]
pub(crate) struct Paths {
    performs: Adjacent,
    primary: Adjacent,
    acts_on: Adjacent,
    mentions: Adjacent,
    param: Adjacent,
    /// skos:broader parents, and the inverse.
    broader: HashMap<String, Vec<String>>,
    narrower: HashMap<String, Vec<String>>,
    instance_of: HashMap<String, Vec<String>>,
    /// A class's instances (the inverse of `instance_of`).
    instances: HashMap<String, Vec<String>>,
    /// Both directions.
    siblings: HashMap<String, Vec<String>>,
    /// Per tool, the lists it is on (`on[starts[t]..starts[t + 1]]`), each
    /// as its list's number and the link's provenance (`id << 1 |
    /// extracted`), ascending: whether one tool is on a list, without
    /// searching the list (the graph channel asks it of the few tools
    /// fusion looks at, when the walk left long lists out).
    starts: Vec<u32>,
    on: Vec<u32>,
}

fn pairs(list: &[(String, String)], inverse: bool) -> HashMap<String, Vec<String>> {
    let mut out: HashMap<String, Vec<String>> = HashMap::new();
    for (a, b) in list {
        let (from, to) = if inverse { (b, a) } else { (a, b) };
        let v = out.entry(from.clone()).or_default();
        if !v.contains(to) {
            v.push(to.clone());
        }
    }
    out
}

fn list<'m>(m: &'m HashMap<String, Vec<String>>, k: &str) -> &'m [String] {
    m.get(k).map_or(&[], Vec::as_slice)
}

/// One path from a request node to a tool in scope, borrowed from the
/// request and the snapshot: what the SPARQL query lists, one row each.
#[cfg(test)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Hit<'a> {
    /// Tool index.
    pub tool: usize,
    /// The request node (verb or entity IRI).
    pub node: &'a str,
    pub relation: Relation,
    pub hops: u8,
    /// The tool-side node that matched (equal to `node` for direct matches).
    pub via: &'a str,
    /// The tool-side link was derived by the importer.
    pub extracted: bool,
}

impl Paths {
    /// `tool_index` maps a tool IRI to its index in the snapshot; links of
    /// other IRIs are dropped.
    pub fn build(
        links: &[ToolLink],
        facts: &OntologyFacts,
        tool_index: impl Fn(&str) -> Option<usize>,
    ) -> Self {
        let mut p = Paths {
            broader: pairs(&facts.broader, false),
            narrower: pairs(&facts.broader, true),
            instance_of: pairs(&facts.instance_of, false),
            instances: pairs(&facts.instance_of, true),
            ..Paths::default()
        };
        let mut siblings = facts.siblings.clone();
        siblings.extend(facts.siblings.iter().map(|(a, b)| (b.clone(), a.clone())));
        p.siblings = pairs(&siblings, false);
        for l in links {
            let Some(linked) = tool_index(&l.tool).and_then(|t| Linked::new(t, l.extracted)) else {
                continue;
            };
            let adj = match l.kind {
                LinkKind::Performs => &mut p.performs,
                LinkKind::PrimaryEntity => &mut p.primary,
                LinkKind::ActsOn => &mut p.acts_on,
                LinkKind::Mentions => &mut p.mentions,
                LinkKind::ParamEntity => &mut p.param,
            };
            adj.entry(l.target.clone()).or_default().links.push(linked);
        }
        // Each list in tool order, once per (tool, provenance): a walk's
        // paths then come out as a few sorted runs, cheap to merge.
        for adj in [
            &mut p.performs,
            &mut p.primary,
            &mut p.acts_on,
            &mut p.mentions,
            &mut p.param,
        ] {
            for v in adj.values_mut() {
                v.links.sort_unstable();
                v.links.dedup();
                v.links.shrink_to_fit();
            }
        }
        p.index_lists();
        p
    }

    /// Numbers every list and builds the per-tool index of the lists each
    /// tool is on (a count, then a fill, as a sparse matrix's rows).
    fn index_lists(&mut self) {
        let mut lists: Vec<&mut List> = [
            &mut self.performs,
            &mut self.primary,
            &mut self.acts_on,
            &mut self.mentions,
            &mut self.param,
        ]
        .into_iter()
        .flat_map(|adj| adj.values_mut())
        .collect();
        let tools = lists
            .iter()
            .flat_map(|l| l.links.last())
            .map(|l| l.tool() + 1)
            .max()
            .unwrap_or(0);
        let mut starts = vec![0u32; tools + 1];
        for (id, list) in lists.iter_mut().enumerate() {
            // (Fewer than 2^31 lists: one per linked node.)
            list.id = u32::try_from(id).unwrap_or(u32::MAX >> 1);
            for l in &list.links {
                starts[l.tool() + 1] += 1;
            }
        }
        for t in 0..tools {
            starts[t + 1] += starts[t];
        }
        let mut on = vec![0u32; starts[tools] as usize];
        let mut next = starts.clone();
        for list in &lists {
            for l in &list.links {
                let at = &mut next[l.tool()];
                on[*at as usize] = list.id << 1 | u32::from(l.extracted());
                *at += 1;
            }
        }
        for t in 0..tools {
            on[starts[t] as usize..starts[t + 1] as usize].sort_unstable();
        }
        self.starts = starts;
        self.on = on;
    }

    /// The lists tool `tool` is on (see [`Paths::on`]).
    fn lists_of(&self, tool: usize) -> &[u32] {
        match (self.starts.get(tool), self.starts.get(tool + 1)) {
            (Some(&a), Some(&b)) => self.on.get(a as usize..b as usize).unwrap_or_default(),
            _ => &[],
        }
    }

    /// Every adjacency list a path from the request node `node` runs
    /// through, handed to `visit` one at a time: the same paths as
    /// `queries/candidates.rq`, without materialising one per tool (a
    /// common verb or entity reaches tens of thousands of tools at 100k;
    /// a path each, sorted per node, was a third of a warm search). A list
    /// may come more than once (a node both broader and narrower, a
    /// sibling of two classes): the same paths again.
    pub fn walk<'s>(&'s self, node: &'s str, mut visit: impl FnMut(Run<'s>)) {
        let mut emit =
            |adj: &'s Adjacent, via: &'s str, relation, hops, unless: Option<&'s List>| {
                if let Some(list) = adj.get(via) {
                    visit(Run {
                        via,
                        relation,
                        hops,
                        tools: &list.links,
                        id: list.id,
                        unless: unless.map_or(&[], |u| &u.links),
                        unless_id: unless.map(|u| u.id),
                    });
                }
            };
        emit(&self.performs, node, Relation::Verb, 0, None);
        for via in list(&self.broader, node)
            .iter()
            .chain(list(&self.narrower, node))
        {
            emit(&self.performs, via, Relation::VerbBroader, 1, None);
        }
        emit(&self.primary, node, Relation::Primary, 0, None);
        emit(&self.acts_on, node, Relation::ActsOn, 0, None);
        // the request names a narrower class or an instance
        let parents = || {
            list(&self.broader, node)
                .iter()
                .chain(list(&self.instance_of, node))
        };
        for via in parents() {
            emit(&self.acts_on, via, Relation::ActsOnBroader, 1, None);
        }
        for parent in parents() {
            for via in list(&self.broader, parent) {
                emit(&self.acts_on, via, Relation::ActsOnBroader, 2, None);
            }
        }
        // the request names a broader class than the tool's
        for via in list(&self.narrower, node) {
            emit(&self.acts_on, via, Relation::ActsOnBroader, 1, None);
        }
        emit(&self.mentions, node, Relation::Mentions, 0, None);
        emit(&self.param, node, Relation::Parameter, 0, None);
        // negative evidence: another instance of the named instance's
        // class, for tools not acting on the named one
        let on_node = self.acts_on.get(node);
        for cls in list(&self.instance_of, node) {
            for via in list(&self.instances, cls).iter().filter(|&v| v != node) {
                emit(&self.acts_on, via, Relation::Rival, 1, on_node);
            }
        }
        // negative evidence: a sibling of the class (or of the instance's
        // class), for tools not acting on the class itself
        for cls in std::iter::once(node).chain(parents().map(String::as_str)) {
            let on_cls = self.acts_on.get(cls);
            for via in list(&self.siblings, cls) {
                emit(&self.acts_on, via, Relation::Sibling, 1, on_cls);
            }
        }
    }

    /// Whether any path from `node` reaches a tool in `scope`.
    pub fn reaches(&self, node: &str, scope: &Scope) -> bool {
        let mut found = false;
        self.walk(node, |run| {
            found = found || run.tools_in(scope).next().is_some();
        });
        found
    }

    /// Every path from `nodes` to a tool `scope` may see, without
    /// duplicates: grouped by node (each distinct node once, in the order
    /// of `nodes`), then sorted by tool, relation, hops, via (the walk's
    /// paths one by one, as the SPARQL query lists them).
    #[cfg(test)]
    pub fn candidates<'s>(&'s self, nodes: &'s [String], scope: &Scope) -> Vec<Hit<'s>> {
        let mut found: Vec<Hit<'s>> = Vec::new();
        for (n, node) in nodes.iter().enumerate() {
            if nodes[..n].contains(node) {
                continue;
            }
            let start = found.len();
            self.walk(node, |run| {
                found.extend(run.tools_in(scope).map(|(tool, extracted)| Hit {
                    tool,
                    node,
                    relation: run.relation,
                    hops: run.hops,
                    via: run.via,
                    extracted,
                }));
            });
            found[start..].sort_unstable();
            let mut group = found.split_off(start);
            group.dedup();
            found.append(&mut group);
        }
        found
    }
}

/// One adjacency list a walk reaches: each tool on it (in scope, and not
/// left out) has a path from the request node through `via`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Run<'s> {
    /// The tool-side node (the request node itself for direct matches).
    pub via: &'s str,
    pub relation: Relation,
    pub hops: u8,
    /// In tool order.
    tools: &'s [Linked],
    /// Tools with no path here, in tool order: for sibling evidence, those
    /// acting on the class itself.
    unless: &'s [Linked],
    /// The numbers of the two lists.
    id: u32,
    unless_id: Option<u32>,
}

impl<'s> Run<'s> {
    /// How many links the run lists (tools in or out of scope, those it
    /// leaves out included): what walking it costs.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// The run's tools in `scope` (tool index, extracted link), in tool
    /// order, without those it leaves out (a merge of two sorted lists).
    pub fn tools_in<'r>(&self, scope: &'r Scope) -> impl Iterator<Item = (usize, bool)> + 'r
    where
        's: 'r,
    {
        let mut unless = self.unless.iter().map(|l| l.tool()).peekable();
        self.tools
            .iter()
            .map(|l| (l.tool(), l.extracted()))
            .filter(move |&(t, _)| {
                while unless.next_if(|&u| u < t).is_some() {}
                scope.contains(t) && unless.peek() != Some(&t)
            })
    }
}

/// A request's runs by the list each walks, so that one tool's links on all
/// of them are read from its own few lists at once. (At a million tools
/// fusion asks this of several hundred tools per request; asking every run
/// in turn, then every run again to replay the tool's score, was most of
/// that time.) It holds no borrow of the paths (they are passed to
/// [`Self::links_of`]): kept in a `OnceCell`, a borrow would make the
/// ranking's channels invariant in their lifetime.
#[derive(Debug, Clone, Default)]
pub(crate) struct RunsByList {
    /// List number → the runs walking it (their numbers, in order) with
    /// the list of tools each leaves out.
    by_list: rustc_hash::FxHashMap<u32, Vec<(u32, Option<u32>)>>,
}

impl RunsByList {
    /// The runs, numbered in the order given (fewer than 2^32).
    pub fn new<'s>(runs: impl IntoIterator<Item = Run<'s>>) -> Self {
        let mut out = Self::default();
        for (number, run) in runs.into_iter().enumerate() {
            out.by_list
                .entry(run.id)
                .or_default()
                .push((number as u32, run.unless_id));
        }
        out
    }

    /// Tool `tool`'s links on the runs as (run number, extracted), in run
    /// order and, within a run, as [`Run::tools_in`] yields them (none on a
    /// run that leaves the tool out; scope is the caller's to check), into
    /// `out` (emptied first); `paths`: the runs' own.
    pub fn links_of(&self, paths: &Paths, tool: usize, out: &mut Vec<(usize, bool)>) {
        out.clear();
        let on = paths.lists_of(tool);
        for &e in on {
            for &(run, unless) in self.by_list.get(&(e >> 1)).into_iter().flatten() {
                if unless.is_none_or(|u| !on.iter().any(|x| x >> 1 == u)) {
                    out.push((run as usize, e & 1 == 1));
                }
            }
        }
        // (Stable: a run's links stay in the order of the tool's lists.)
        out.sort_by_key(|&(run, _)| run);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Embeddings, Engine, EngineOptions};
    use crate::graph::{GraphStore, OxigraphStore};
    use crate::import::{Format, bundled, collect_files};
    use std::collections::HashSet;

    type Key = (String, String, Relation, u8, String, bool);

    fn key(h: &crate::graph::GraphHit) -> Key {
        let h = h.clone();
        (h.tool, h.node, h.relation, h.hops, h.via, h.extracted)
    }

    /// The walk finds exactly the paths `queries/candidates.rq` finds, for
    /// every verb, entity and instance of the ontology, on the seeds plus an
    /// imported catalog (extracted links, parameter entities, minted verbs).
    /// The seeds with MetaTool's tools in a store, their IRIs by index,
    /// the paths built over them, and every node of the lexicon.
    fn seeds_and_metatool() -> (OxigraphStore, Vec<String>, Paths, Vec<String>) {
        let engine = Engine::open(EngineOptions::memory(Embeddings::Off)).unwrap();
        let turtle = collect_files(&[bundled("ontology"), bundled("seeds")]).unwrap();
        engine.load_paths(&turtle, None).unwrap();
        let mut sources = engine.prepare(&turtle, None).unwrap();
        let metatool = bundled("benches/datasets/metatool/tools.jsonl");
        sources.extend(engine.prepare(&[metatool], Some(Format::Jsonl)).unwrap());
        let store = OxigraphStore::memory().unwrap();
        store.load_unchecked(&sources).unwrap();
        let iris: Vec<String> = store.tools().unwrap().into_iter().map(|t| t.iri).collect();
        let by_iri: HashMap<&str, usize> = iris
            .iter()
            .enumerate()
            .map(|(i, t)| (t.as_str(), i))
            .collect();
        let paths = Paths::build(&store.links().unwrap(), &store.ontology().unwrap(), |iri| {
            by_iri.get(iri).copied()
        });
        let mut nodes: Vec<String> = store
            .lexicon()
            .unwrap()
            .into_iter()
            .map(|e| e.iri)
            .collect();
        nodes.sort();
        nodes.dedup();
        (store, iris, paths, nodes)
    }

    #[test]
    fn the_walk_equals_the_sparql_query_for_every_node() {
        let (store, tools, paths, nodes) = seeds_and_metatool();
        let by_iri: HashMap<String, usize> = tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.clone(), i))
            .collect();
        let all = Scope::all(tools.len());
        assert!(nodes.len() > 700, "{} nodes", nodes.len());
        let walk = |nodes: &[String], scope: &Scope| -> Vec<_> {
            let mut v: Vec<_> = paths
                .candidates(nodes, scope)
                .iter()
                .map(|h| -> Key {
                    (
                        tools[h.tool].clone(),
                        h.node.to_string(),
                        h.relation,
                        h.hops,
                        h.via.to_string(),
                        h.extracted,
                    )
                })
                .collect();
            v.sort();
            v
        };
        let sparql = |nodes: &[String], scope: &Scope| -> Vec<_> {
            let mut v: Vec<_> = store
                .candidates(nodes)
                .unwrap()
                .iter()
                .filter(|h| by_iri.get(&h.tool).is_some_and(|&i| scope.contains(i)))
                .map(key)
                .collect();
            v.sort();
            v.dedup();
            v
        };
        let mut total = 0;
        let mut relations = HashSet::new();
        for node in &nodes {
            let one = std::slice::from_ref(node);
            let expected = sparql(one, &all);
            assert_eq!(walk(one, &all), expected, "node {node}");
            total += expected.len();
            relations.extend(expected.iter().map(|k| k.2));
        }
        // every relation of the query is exercised, not just the direct ones
        assert_eq!(relations.len(), 9, "{relations:?}");
        assert!(total > 1000, "{total} paths");
        // several nodes at once, and a scope that hides every other tool
        let mut half = Scope::none(tools.len());
        for i in (0..tools.len()).step_by(2) {
            half.insert(i);
        }
        for chunk in nodes.chunks(37) {
            assert_eq!(walk(chunk, &all), sparql(chunk, &all));
            assert_eq!(walk(chunk, &half), sparql(chunk, &half));
        }
        assert!(walk(&[], &all).is_empty());
        assert!(walk(&["urn:not-a-node".to_string()], &all).is_empty());
    }

    /// One tool's links on a request's runs, read from its own lists, are
    /// the runs' entries for it (none where a run leaves it out), in run
    /// order: on every run of every node alone, and on a few nodes' runs
    /// at once.
    #[test]
    fn a_tools_own_lists_name_its_links_on_every_run() {
        let (_store, tools, paths, nodes) = seeds_and_metatool();
        let all = Scope::all(tools.len());
        let check = |runs: &[Run]| {
            let mut listed: Vec<Vec<(usize, bool)>> = vec![Vec::new(); tools.len()];
            for (n, run) in runs.iter().enumerate() {
                for (t, extracted) in run.tools_in(&all) {
                    listed[t].push((n, extracted));
                }
            }
            let by_list = RunsByList::new(runs.iter().copied());
            let mut out = Vec::new();
            for (t, want) in listed.iter().enumerate() {
                by_list.links_of(&paths, t, &mut out);
                assert_eq!(&out, want, "tool {t}");
            }
        };
        let (mut runs, mut left_out) = (0, 0);
        for node in &nodes {
            paths.walk(node, |run| {
                runs += 1;
                left_out += run.unless.len();
                check(&[run]);
            });
        }
        assert!(
            runs > 1000 && left_out > 0,
            "{runs} runs, {left_out} left out"
        );
        for chunk in nodes.chunks(50) {
            let mut runs = Vec::new();
            for node in chunk {
                paths.walk(node, |run| runs.push(run));
            }
            check(&runs);
        }
    }
}
