//! The default GraphStore: oxigraph, RocksDB on disk or in memory.
//!
//! Every source lives in its own named graphs: curated facts in
//! `urn:toolgraph:source:<name>`, links the constellation builder derived in
//! `urn:toolgraph:source:<name>#extracted`. Queries see the union of all
//! graphs; the graph name is the provenance of each link.

use super::{
    Change, GraphHit, GraphStore, LinkKind, LoadReport, OntologyFacts, Relation, SourceData,
    Sparql, ToolLink,
};
use crate::error::{Error, Result};
use crate::model::{
    Dependency, LexEntry, Link, Param, PolicyFact, Provenance, TermKind, Tool, Violation,
};
use crate::vocab::{self, encode_iri_part, local_name, percent_decode};
use oxigraph::model::{Literal, NamedNode, Quad, Term};
use oxigraph::sparql::QueryResults;
use oxigraph::store::{Store, Transaction};
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

mod quads;
mod sparql;

use quads::{constellation_quads, parse_turtle};
use sparql::{Rows, bind_values, collect_rows, parse_fixed, prepared, sparql_err};

const Q_TOOLS: &str = include_str!("../../../queries/tools.rq");
const Q_TOOL_LINKS: &str = include_str!("../../../queries/tool_links.rq");
const Q_NODE_LABELS: &str = include_str!("../../../queries/node_labels.rq");
const Q_TOOL_PARAMS: &str = include_str!("../../../queries/tool_params.rq");
const Q_TOOL_DEPENDENCIES: &str = include_str!("../../../queries/tool_dependencies.rq");
const Q_TOOL_SOURCES: &str = include_str!("../../../queries/tool_sources.rq");
const Q_LEXICON: &str = include_str!("../../../queries/lexicon.rq");
const Q_ONTOLOGY: &str = include_str!("../../../queries/ontology.rq");
const Q_CANDIDATES: &str = include_str!("../../../queries/candidates.rq");
const Q_GRAPH_LINKS: &str = include_str!("../../../queries/graph_links.rq");
const Q_CONSTELLATION: &str = include_str!("../../../queries/constellation.rq");
const Q_POLICY: &str = include_str!("../../../queries/policy.rq");
const Q_TOOL_COUNT: &str = include_str!("../../../queries/tool_count.rq");
const Q_RECORDS: &str = include_str!("../../../queries/records.rq");
#[cfg(feature = "neo4j")]
const Q_ALL_RECORDS: &str = include_str!("../../../queries/all_records.rq");

/// The graph holding operational records (`queries/records.rq`).
pub(crate) const STATE_GRAPH: &str = "urn:toolgraph:state";
const RECORD_KIND: &str = "https://toolgraph.dev/ns#recordKind";
const RECORD_ID: &str = "https://toolgraph.dev/ns#recordId";
const RECORD_VALUE: &str = "https://toolgraph.dev/ns#recordValue";

fn record_kind_iri(kind: &str) -> String {
    format!("urn:toolgraph:record-kind:{}", encode_iri_part(kind))
}

fn record_iri(kind: &str, id: &str) -> String {
    format!(
        "urn:toolgraph:record:{}/{}",
        encode_iri_part(kind),
        encode_iri_part(id)
    )
}

/// The seed constraints, one violation query each (`queries/validate/*.rq`).
pub(crate) const VALIDATION_RULES: &[(&str, &str)] = &[
    (
        "tool_without_verb",
        include_str!("../../../queries/validate/tool_without_verb.rq"),
    ),
    (
        "tool_without_name",
        include_str!("../../../queries/validate/tool_without_name.rq"),
    ),
    (
        "tool_without_description",
        include_str!("../../../queries/validate/tool_without_description.rq"),
    ),
    (
        "undefined_verb",
        include_str!("../../../queries/validate/undefined_verb.rq"),
    ),
    (
        "undefined_entity",
        include_str!("../../../queries/validate/undefined_entity.rq"),
    ),
    (
        "undefined_dependency",
        include_str!("../../../queries/validate/undefined_dependency.rq"),
    ),
    (
        "dependency_cycle",
        include_str!("../../../queries/validate/dependency_cycle.rq"),
    ),
    (
        "duplicate_tool_name",
        include_str!("../../../queries/validate/duplicate_tool_name.rq"),
    ),
    (
        "label_missing",
        include_str!("../../../queries/validate/label_missing.rq"),
    ),
    (
        "broader_cycle",
        include_str!("../../../queries/validate/broader_cycle.rq"),
    ),
    (
        "instance_without_class",
        include_str!("../../../queries/validate/instance_without_class.rq"),
    ),
    (
        "undefined_profile_tool",
        include_str!("../../../queries/validate/undefined_profile_tool.rq"),
    ),
    (
        "undefined_policy_tool",
        include_str!("../../../queries/validate/undefined_policy_tool.rq"),
    ),
    (
        "undefined_policy_reference",
        include_str!("../../../queries/validate/undefined_policy_reference.rq"),
    ),
    (
        "agent_policy",
        include_str!("../../../queries/validate/agent_policy.rq"),
    ),
];

/// oxigraph-backed store.
#[derive(Clone)]
pub struct OxigraphStore {
    store: Store,
}

impl std::fmt::Debug for OxigraphStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OxigraphStore").finish_non_exhaustive()
    }
}

fn store_err(e: impl Into<crate::error::BoxError>) -> Error {
    Error::store("the embedded store failed", e)
}

fn nn(iri: &str) -> Result<NamedNode> {
    NamedNode::new(iri).map_err(|e| Error::invalid(format!("invalid IRI <{iri}>: {e}")))
}

/// The graph holding each source's content hash (of its last checked load).
const META_GRAPH: &str = "urn:toolgraph:meta";
const CONTENT_HASH: &str = "https://toolgraph.dev/ns#contentHash";

/// sha256 over a source's quads in order, blank nodes named by first
/// appearance (parsing the same text twice gives other blank node ids).
fn content_hash(quads: &[Quad]) -> String {
    use sha2::Digest;
    let mut blanks: HashMap<String, usize> = HashMap::new();
    let mut h = sha2::Sha256::new();
    let mut term = |t: String, h: &mut sha2::Sha256| {
        let t = if let Some(id) = t.strip_prefix("_:") {
            let n = blanks.len();
            format!("_:b{}", *blanks.entry(id.to_string()).or_insert(n))
        } else {
            t
        };
        h.update(t.as_bytes());
        h.update([0u8]);
    };
    for q in quads {
        term(q.subject.to_string(), &mut h);
        term(q.predicate.to_string(), &mut h);
        term(q.object.to_string(), &mut h);
        term(q.graph_name.to_string(), &mut h);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The named graph holding a source's curated facts.
pub(crate) fn source_graph(name: &str) -> String {
    format!("{}{}", vocab::SOURCE, encode_iri_part(name))
}

/// The source name of a curated source graph (`None` for other graphs).
fn source_name(graph: &str) -> Option<String> {
    let encoded = graph.strip_prefix(vocab::SOURCE)?;
    (!encoded.contains('#')).then(|| percent_decode(encoded))
}

fn extracted_graph(name: &str) -> String {
    format!("{}#extracted", source_graph(name))
}

impl OxigraphStore {
    /// An in-memory store (tests, the eval harness).
    pub fn memory() -> Result<Self> {
        Ok(Self {
            store: Store::new().map_err(store_err)?,
        })
    }

    /// A RocksDB store in `dir` (created if absent).
    #[cfg(feature = "rocksdb")]
    pub fn open(dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let store = Store::open(dir)
            .map_err(|e| Error::store(format!("cannot open the store at {}", dir.display()), e))?;
        Ok(Self { store })
    }

    /// Without the `rocksdb` feature there is no on-disk store.
    #[cfg(not(feature = "rocksdb"))]
    pub fn open(dir: &Path) -> Result<Self> {
        Err(Error::store_msg(format!(
            "cannot open {}: built without the `rocksdb` feature (use --memory)",
            dir.display()
        )))
    }

    /// Every quad of every graph (the Bolt store mirrors them).
    #[cfg(feature = "neo4j")]
    pub(crate) fn all_quads(&self) -> Result<Vec<Quad>> {
        self.store
            .iter()
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(store_err)
    }

    /// An in-memory store holding exactly these quads (no validation: they
    /// come from a store that validated them).
    #[cfg(feature = "neo4j")]
    pub(crate) fn from_quads(quads: impl IntoIterator<Item = Quad>) -> Result<Self> {
        let store = Store::new().map_err(store_err)?;
        store.extend(quads).map_err(store_err)?;
        Ok(Self { store })
    }

    /// Every record as `(kind, id, JSON text)` (what moves to a graph
    /// server's record nodes).
    #[cfg(feature = "neo4j")]
    pub(crate) fn all_records(&self) -> Result<Vec<(String, String, String)>> {
        let prefix = "urn:toolgraph:record-kind:";
        Ok(self
            .select_fixed(Q_ALL_RECORDS)?
            .into_iter()
            .filter_map(|mut row| {
                let kind = row.remove("kind")?;
                let kind = crate::vocab::percent_decode(kind.strip_prefix(prefix)?);
                Some((kind, row.remove("id")?, row.remove("value")?))
            })
            .collect())
    }

    /// Removes every quad of one graph in one transaction.
    #[cfg(feature = "neo4j")]
    pub(crate) fn drop_graph(&self, graph: &oxigraph::model::GraphName) -> Result<()> {
        self.store.clear_graph(graph.as_ref()).map_err(store_err)
    }

    /// Replaces everything with these quads in one transaction (the
    /// Bolt store's mirror when a catalog is migrated onto its server).
    #[cfg(feature = "neo4j")]
    pub(crate) fn replace_all(&self, quads: &[Quad]) -> Result<()> {
        let old = self.all_quads()?;
        let mut transaction = self.store.start_transaction().map_err(store_err)?;
        for q in &old {
            transaction.remove(q);
        }
        transaction.extend(quads.iter());
        transaction.commit().map_err(store_err)
    }

    fn select(&self, query: spargebra::Query) -> Result<Rows> {
        collect_rows(
            prepared(query)
                .on_store(&self.store)
                .execute()
                .map_err(sparql_err)?,
        )
    }

    fn select_fixed(&self, query: &str) -> Result<Rows> {
        self.select(parse_fixed(query)?)
    }

    fn violations_in(transaction: &Transaction<'_>) -> Result<Vec<Violation>> {
        let mut out = Vec::new();
        for (rule, text) in VALIDATION_RULES {
            let results = prepared(parse_fixed(text)?)
                .on_transaction(transaction)
                .execute()
                .map_err(sparql_err)?;
            for row in collect_rows(results)? {
                out.push(Violation {
                    rule: (*rule).to_string(),
                    subject: row.get("subject").cloned().unwrap_or_default(),
                    message: row.get("message").cloned().unwrap_or_default(),
                });
            }
        }
        out.sort_by(|a, b| (&a.subject, &a.rule).cmp(&(&b.subject, &b.rule)));
        out.dedup();
        Ok(out)
    }
}

fn parse_bool(s: Option<&String>) -> Option<bool> {
    s.map(|v| v == "true" || v == "1")
}

impl OxigraphStore {
    fn tool_count(&self) -> Result<usize> {
        Ok(self
            .select_fixed(Q_TOOL_COUNT)?
            .first()
            .and_then(|r| r.get("n"))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0))
    }

    /// Every statement about `tool` (and its parameter nodes), in any graph.
    fn tool_quads(&self, transaction: &Transaction<'_>, tool: &str) -> Result<Vec<Quad>> {
        let subject = nn(tool)?;
        let mut out = Vec::new();
        let mut blanks = Vec::new();
        for q in transaction.quads_for_pattern(Some(subject.as_ref().into()), None, None, None) {
            let q = q.map_err(store_err)?;
            if let Term::BlankNode(b) = &q.object {
                blanks.push((b.clone(), q.graph_name.clone()));
            }
            out.push(q);
        }
        for (b, g) in blanks {
            for q in
                transaction.quads_for_pattern(Some(b.as_ref().into()), None, None, Some(g.as_ref()))
            {
                out.push(q.map_err(store_err)?);
            }
        }
        Ok(out)
    }

    /// Graph paths from request nodes (verbs, entities, instances) to every
    /// tool they reach, as one SPARQL query (`queries/candidates.rq`). The
    /// engine walks the same relations in memory over its snapshot; this is
    /// the reference that walk is tested against.
    pub fn candidates(&self, nodes: &[String]) -> Result<Vec<GraphHit>> {
        if nodes.is_empty() {
            return Ok(Vec::new());
        }
        let query = bind_values(Q_CANDIDATES, "node", nodes)?;
        let mut hits = Vec::new();
        for row in self.select(query)? {
            let (Some(node), Some(tool), Some(rel), Some(via)) = (
                row.get("node"),
                row.get("tool"),
                row.get("rel"),
                row.get("via"),
            ) else {
                continue;
            };
            let relation = match rel.as_str() {
                "verb" => Relation::Verb,
                "verb_broader" => Relation::VerbBroader,
                "primary" => Relation::Primary,
                "acts_on" => Relation::ActsOn,
                "acts_on_broader" => Relation::ActsOnBroader,
                "mentions" => Relation::Mentions,
                "parameter" => Relation::Parameter,
                "sibling" => Relation::Sibling,
                _ => continue,
            };
            hits.push(GraphHit {
                tool: tool.clone(),
                node: node.clone(),
                via: via.clone(),
                relation,
                hops: row.get("hops").and_then(|h| h.parse().ok()).unwrap_or(0),
                extracted: row.get("g").is_some_and(|g| g.ends_with("#extracted")),
            });
        }
        hits.sort_by(|a, b| {
            (&a.tool, &a.node, a.relation, a.hops, &a.via)
                .cmp(&(&b.tool, &b.node, b.relation, b.hops, &b.via))
        });
        hits.dedup();
        Ok(hits)
    }
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

impl GraphStore for OxigraphStore {
    fn apply(&self, change: &Change<'_>) -> Result<LoadReport> {
        // Parse everything before touching the store.
        let mut parsed = Vec::with_capacity(change.load.len());
        for source in change.load {
            let quads = match &source.data {
                SourceData::Turtle(text) => parse_turtle(&source.name, text)?,
                SourceData::Constellations(items) => constellation_quads(&source.name, items)?,
            };
            parsed.push((source.name.as_str(), quads));
        }
        let quads_before = self.len()?;
        // A source whose content equals what a checked load stored before is
        // not rewritten (restarts reload the ontology and seeds; a 100k-tool
        // catalog registered again unchanged costs minutes of index writes).
        let meta = nn(META_GRAPH)?;
        let hash_pred = nn(CONTENT_HASH)?;
        let mut fresh = Vec::with_capacity(parsed.len());
        for (name, quads) in &parsed {
            let hash = content_hash(quads);
            let known = Quad::new(
                nn(&source_graph(name))?,
                hash_pred.clone(),
                Literal::new_simple_literal(&hash),
                meta.clone(),
            );
            let unchanged = self.store.contains(&known).map_err(store_err)?;
            fresh.push((*name, quads, known, unchanged));
        }
        if change.unload.is_empty() && change.remove_tools.is_empty() && fresh.iter().all(|f| f.3) {
            return Ok(LoadReport {
                sources: change.load.len(),
                quads_before,
                quads_after: quads_before,
                tools: self.tool_count()?,
            });
        }
        let mut transaction = self.store.start_transaction().map_err(store_err)?;
        let replaced = fresh.iter().filter(|f| !f.3).map(|f| f.0);
        for name in replaced.chain(change.unload.iter().map(String::as_str)) {
            let graph = nn(&source_graph(name))?;
            // Its recorded content hash goes with it.
            let old: Vec<Quad> = transaction
                .quads_for_pattern(
                    Some(graph.as_ref().into()),
                    Some(hash_pred.as_ref()),
                    None,
                    Some(meta.as_ref().into()),
                )
                .collect::<std::result::Result<_, _>>()
                .map_err(store_err)?;
            for q in &old {
                transaction.remove(q);
            }
            for graph in [source_graph(name), extracted_graph(name)] {
                transaction
                    .remove_named_graph(&nn(&graph)?)
                    .map_err(store_err)?;
            }
        }
        for (_, quads, known, unchanged) in &fresh {
            if !unchanged {
                transaction.extend(quads.iter());
                if change.check {
                    transaction.insert(known);
                }
            }
        }
        if !change.remove_tools.is_empty() {
            // The sources of removed tools changed: forget every hash.
            transaction.remove_named_graph(&meta).map_err(store_err)?;
        }
        for tool in change.remove_tools {
            for q in self.tool_quads(&transaction, tool)? {
                transaction.remove(&q);
            }
        }
        let violations = if change.check {
            Self::violations_in(&transaction)?
        } else {
            Vec::new()
        };
        if !violations.is_empty() {
            // Dropping the transaction discards every change.
            return Err(Error::Violations(violations));
        }
        transaction.commit().map_err(store_err)?;
        #[cfg(feature = "rocksdb")]
        self.store.flush().map_err(store_err)?;
        Ok(LoadReport {
            sources: change.load.len() + change.unload.len(),
            quads_before,
            quads_after: self.len()?,
            tools: self.tool_count()?,
        })
    }

    fn sources(&self) -> Result<Vec<String>> {
        let mut out: Vec<String> = self
            .store
            .named_graphs()
            .filter_map(|g| match g {
                Ok(oxigraph::model::NamedOrBlankNode::NamedNode(n)) => source_name(n.as_str()),
                _ => None,
            })
            .collect();
        out.sort();
        out.dedup();
        Ok(out)
    }

    fn declared_only_by(&self, sources: &[String]) -> Result<HashSet<String>> {
        let rdf_type = oxigraph::model::vocab::rdf::TYPE;
        let graphs: Vec<NamedNode> = sources
            .iter()
            .flat_map(|s| [source_graph(s), extracted_graph(s)])
            .map(|g| nn(&g))
            .collect::<Result<_>>()?;
        let mut out = HashSet::new();
        for g in &graphs {
            for quad in
                self.store
                    .quads_for_pattern(None, Some(rdf_type), None, Some(g.as_ref().into()))
            {
                let quad = quad.map_err(store_err)?;
                let oxigraph::model::NamedOrBlankNode::NamedNode(node) = quad.subject else {
                    continue;
                };
                if out.contains(node.as_str()) {
                    continue;
                }
                let mut elsewhere = false;
                for other in self.store.quads_for_pattern(
                    Some(node.as_ref().into()),
                    Some(rdf_type),
                    None,
                    None,
                ) {
                    let other = other.map_err(store_err)?;
                    let in_batch = match &other.graph_name {
                        oxigraph::model::GraphName::NamedNode(n) => graphs.contains(n),
                        _ => false,
                    };
                    if !in_batch {
                        elsewhere = true;
                        break;
                    }
                }
                if !elsewhere {
                    out.insert(node.as_str().to_string());
                }
            }
        }
        Ok(out)
    }

    fn len(&self) -> Result<usize> {
        self.store.len().map_err(store_err)
    }

    // Every choice below is independent of the order the store returns rows
    // in (which differs between backends, and between two parses of the same
    // Turtle): a tool two sources describe gets the same description, links
    // and parameters on every store, so the same embedding text and ranking.
    fn tools(&self) -> Result<Vec<Tool>> {
        let mut tools: BTreeMap<String, Tool> = BTreeMap::new();
        for row in self.select_fixed(Q_TOOLS)? {
            let Some(iri) = row.get("tool") else { continue };
            let name = row
                .get("name")
                .cloned()
                .unwrap_or_else(|| iri.rsplit('/').next().unwrap_or(iri).to_string());
            let id = vocab::tool_id(iri).unwrap_or_else(|| name.clone());
            let text = |k: &str| row.get(k).cloned().unwrap_or_default();
            let read_only = parse_bool(row.get("readOnly")).unwrap_or(false);
            let universal = parse_bool(row.get("universal")).unwrap_or(false);
            match tools.get_mut(iri) {
                // Several sources describe it: the smallest name, the fullest
                // texts, and read-only or universal only when all agree.
                Some(t) => {
                    if name < t.name {
                        t.name = name;
                    }
                    for (field, value) in [
                        (&mut t.description, text("description")),
                        (&mut t.model_description, text("modelDescription")),
                    ] {
                        if (value.len(), &value) > (field.len(), field) {
                            *field = value;
                        }
                    }
                    t.read_only &= read_only;
                    t.universal &= universal;
                }
                None => {
                    tools.insert(
                        iri.clone(),
                        Tool {
                            iri: iri.clone(),
                            id,
                            name,
                            description: text("description"),
                            model_description: text("modelDescription"),
                            read_only,
                            universal,
                            ..Tool::default()
                        },
                    );
                }
            }
        }
        // kind, parameter and reason of qualified dependencies, by (tool, target)
        let mut qualified: HashMap<(String, String), Dependency> = HashMap::new();
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
        // Of a node's labels, the preferred one (then the smallest); and of
        // its names the smallest: a dependency names the tool it needs.
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
        // Strongest relation first (a target both acted on and mentioned is
        // acted on), curated before extracted, then by target.
        let rank = |row: &HashMap<String, String>| {
            let rel = row
                .get("rel")
                .map_or("", |r| r.strip_prefix(vocab::TG).unwrap_or(r));
            let order = ["performs", "primaryEntity", "actsOn", "mentions"]
                .iter()
                .position(|r| *r == rel)
                .unwrap_or(4);
            let extracted = row.get("g").is_some_and(|g| g.ends_with("#extracted"));
            (
                row.get("tool").cloned(),
                order,
                rel.to_string(),
                extracted,
                row.get("target").cloned(),
            )
        };
        let mut link_rows = self.select_fixed(Q_TOOL_LINKS)?;
        link_rows.sort_by_cached_key(rank);
        for row in link_rows {
            let (Some(tool), Some(rel), Some(target)) =
                (row.get("tool"), row.get("rel"), row.get("target"))
            else {
                continue;
            };
            let Some(t) = tools.get_mut(tool) else {
                continue;
            };
            let provenance = if row.get("g").is_some_and(|g| g.ends_with("#extracted")) {
                Provenance::Extracted
            } else {
                Provenance::Curated
            };
            let label = labels
                .get(target)
                .map_or_else(|| local_name(target).to_string(), |(_, l)| l.clone());
            let link = Link {
                iri: target.clone(),
                label: label.clone(),
                provenance,
                weight: if provenance == Provenance::Curated {
                    1.0
                } else {
                    0.8
                },
            };
            let rel = rel.strip_prefix(vocab::TG).unwrap_or(rel);
            match rel {
                "performs" => t.verbs.push(link),
                "primaryEntity" => {
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
                "actsOn" if !t.entities.iter().any(|l| l.iri == link.iri) => {
                    t.entities.push(link);
                }
                "mentions" if !t.entities.iter().any(|l| l.iri == link.iri) => {
                    t.entities.push(Link {
                        weight: 0.4,
                        ..link
                    });
                }
                "inDomain" => t.domains.push(link),
                "inCategory" => t.categories.push(link),
                "requiresIntegration" => t.integrations.push(link),
                "availableOnChannel" => t.channels.push(link),
                "dependsOn" => {
                    let key = (tool.clone(), target.clone());
                    let qualifiers = qualified.get(&key).cloned().unwrap_or_default();
                    t.depends_on.push(Dependency {
                        on: names.get(target).cloned().unwrap_or(label),
                        ..qualifiers
                    });
                }
                _ => {}
            }
        }
        let mut params: HashMap<String, Vec<Param>> = HashMap::new();
        for row in self.select_fixed(Q_TOOL_PARAMS)? {
            let (Some(tool), Some(name)) = (row.get("tool"), row.get("name")) else {
                continue;
            };
            params.entry(tool.clone()).or_default().push(Param {
                name: name.clone(),
                description: row.get("description").cloned().unwrap_or_default(),
                ty: row.get("type").cloned(),
                required: parse_bool(row.get("required")).unwrap_or(false),
                entity: row.get("entity").cloned(),
            });
        }
        for row in self.select_fixed(Q_TOOL_SOURCES)? {
            let (Some(tool), Some(g)) = (row.get("tool"), row.get("g")) else {
                continue;
            };
            let (Some(t), Some(name)) = (tools.get_mut(tool), source_name(g)) else {
                continue;
            };
            if t.source.is_empty() || name < t.source {
                t.source = name;
            }
        }
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
        }
        out.sort_by(|a, b| a.name.cmp(&b.name).then(a.iri.cmp(&b.iri)));
        Ok(out)
    }

    fn lexicon(&self) -> Result<Vec<LexEntry>> {
        let mut out = Vec::new();
        for row in self.select_fixed(Q_LEXICON)? {
            let (Some(iri), Some(label), Some(kind)) =
                (row.get("node"), row.get("label"), row.get("kind"))
            else {
                continue;
            };
            let kind = match kind.as_str() {
                "verb" => TermKind::Verb,
                "entity" => TermKind::Entity,
                _ => match row.get("class") {
                    Some(class) => TermKind::Instance {
                        class: class.clone(),
                    },
                    None => continue,
                },
            };
            out.push(LexEntry {
                label: label.clone(),
                iri: iri.clone(),
                kind,
            });
        }
        out.sort_by(|a, b| (&a.iri, &a.label).cmp(&(&b.iri, &b.label)));
        Ok(out)
    }

    fn ontology(&self) -> Result<OntologyFacts> {
        let mut facts = OntologyFacts::default();
        for row in self.select_fixed(Q_ONTOLOGY)? {
            let (Some(kind), Some(a), Some(b)) = (row.get("kind"), row.get("a"), row.get("b"))
            else {
                continue;
            };
            let pair = (a.clone(), b.clone());
            match kind.as_str() {
                "broader" => facts.broader.push(pair),
                "instance" => facts.instance_of.push(pair),
                "sibling" => facts.siblings.push(pair),
                _ => facts.labels.push(pair),
            }
        }
        facts.broader.sort();
        facts.broader.dedup();
        facts.instance_of.sort();
        facts.instance_of.dedup();
        facts.siblings.sort();
        facts.siblings.dedup();
        facts.labels.sort();
        facts.labels.dedup_by(|a, b| a.0 == b.0);
        Ok(facts)
    }

    fn links(&self) -> Result<Vec<ToolLink>> {
        let mut out = Vec::new();
        for row in self.select_fixed(Q_GRAPH_LINKS)? {
            let (Some(tool), Some(rel), Some(target)) =
                (row.get("tool"), row.get("rel"), row.get("target"))
            else {
                continue;
            };
            let kind = match local_name(rel) {
                "performs" => LinkKind::Performs,
                "primaryEntity" => LinkKind::PrimaryEntity,
                "actsOn" => LinkKind::ActsOn,
                "mentions" => LinkKind::Mentions,
                "paramEntity" => LinkKind::ParamEntity,
                _ => continue,
            };
            out.push(ToolLink {
                tool: tool.clone(),
                kind,
                target: target.clone(),
                extracted: row.get("g").is_some_and(|g| g.ends_with("#extracted")),
            });
        }
        out.sort();
        out.dedup();
        Ok(out)
    }

    fn constellation(&self, tool_iri: &str) -> Result<Vec<String>> {
        let query = bind_values(Q_CONSTELLATION, "tool", &[tool_iri.to_string()])?;
        let results = prepared(query)
            .on_store(&self.store)
            .execute()
            .map_err(sparql_err)?;
        let QueryResults::Graph(triples) = results else {
            return Err(Error::sparql_msg("expected a CONSTRUCT query"));
        };
        let mut lines = Vec::new();
        for t in triples {
            lines.push(format!("{} .", t.map_err(sparql_err)?));
        }
        lines.sort();
        lines.dedup();
        Ok(lines)
    }

    fn records(&self, kind: &str) -> Result<Vec<(String, String)>> {
        let query = bind_values(Q_RECORDS, "kind", &[record_kind_iri(kind)])?;
        Ok(self
            .select(query)?
            .into_iter()
            .filter_map(|mut row| Some((row.remove("id")?, row.remove("value")?)))
            .collect())
    }

    fn put_records(&self, kind: &str, records: &[(String, Option<String>)]) -> Result<()> {
        let graph = nn(STATE_GRAPH)?;
        let (kind_p, id_p, value_p) = (nn(RECORD_KIND)?, nn(RECORD_ID)?, nn(RECORD_VALUE)?);
        let kind_iri = nn(&record_kind_iri(kind))?;
        let mut transaction = self.store.start_transaction().map_err(store_err)?;
        for (id, value) in records {
            let subject = nn(&record_iri(kind, id))?;
            let old: Vec<Quad> = transaction
                .quads_for_pattern(
                    Some(subject.as_ref().into()),
                    None,
                    None,
                    Some(graph.as_ref().into()),
                )
                .collect::<std::result::Result<_, _>>()
                .map_err(store_err)?;
            for q in &old {
                transaction.remove(q);
            }
            if let Some(value) = value {
                let quad = |p: &NamedNode, o: Term| {
                    Quad::new(subject.clone(), p.clone(), o, graph.clone())
                };
                transaction.insert(&quad(&kind_p, kind_iri.clone().into()));
                transaction.insert(&quad(&id_p, Literal::new_simple_literal(id).into()));
                transaction.insert(&quad(&value_p, Literal::new_simple_literal(value).into()));
            }
        }
        transaction.commit().map_err(store_err)?;
        #[cfg(feature = "rocksdb")]
        self.store.flush().map_err(store_err)?;
        Ok(())
    }

    fn validate(&self) -> Result<Vec<Violation>> {
        let transaction = self.store.start_transaction().map_err(store_err)?;
        Self::violations_in(&transaction)
    }

    fn policy(&self) -> Result<Vec<PolicyFact>> {
        let mut out: Vec<PolicyFact> = self
            .select_fixed(Q_POLICY)?
            .into_iter()
            .filter_map(|mut row| {
                Some(PolicyFact {
                    subject: row.remove("subject")?,
                    class: row.remove("class")?,
                    property: row.remove("property")?,
                    value: row.remove("value")?,
                    reason: row.remove("reason"),
                })
            })
            .collect();
        out.sort();
        out.dedup();
        Ok(out)
    }

    fn sparql(&self) -> Option<&dyn Sparql> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Source;

    #[test]
    fn lexicon_reads_verbs_entities_and_instances() {
        let ttl = r#"
            @prefix tg: <https://toolgraph.dev/ns#> .
            @prefix skos: <http://www.w3.org/2004/02/skos/core#> .
            <https://toolgraph.dev/verb/book> a tg:Verb ; skos:prefLabel "book"@en ; skos:altLabel "reserve" .
            <https://toolgraph.dev/entity/Airline> a tg:Entity ; skos:prefLabel "airline" .
            <https://toolgraph.dev/brand/southwest> a tg:Instance ; tg:instanceOf <https://toolgraph.dev/entity/Airline> ;
                skos:prefLabel "Southwest" .
        "#;
        let store = OxigraphStore::memory().unwrap();
        store
            .load_unchecked(&[Source {
                name: "lexicon.ttl".into(),
                data: SourceData::Turtle(ttl.into()),
            }])
            .unwrap();
        let es = store.lexicon().unwrap();
        let got: Vec<_> = es.iter().map(|e| (e.label.as_str(), &e.kind)).collect();
        assert_eq!(
            got,
            [
                (
                    "Southwest",
                    &TermKind::Instance {
                        class: crate::vocab::ENT.to_string() + "Airline"
                    }
                ),
                ("airline", &TermKind::Entity),
                ("book", &TermKind::Verb),
                ("reserve", &TermKind::Verb),
            ]
        );
    }
}
