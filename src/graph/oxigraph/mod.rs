//! The default GraphStore: oxigraph, RocksDB on disk or in memory.
//!
//! Every source lives in its own named graphs: curated facts in
//! `urn:toolgraph:source:<name>`, links the constellation builder derived in
//! `urn:toolgraph:source:<name>#extracted`. Queries see the union of all
//! graphs; the graph name is the provenance of each link.

use super::{
    Change, GraphHit, GraphStore, LoadReport, OntologyFacts, Relation, SourceData, Sparql, ToolLink,
};
use crate::error::{Error, Result};
use crate::model::{LexEntry, PolicyFact, TermKind, Tool, Violation};
use crate::vocab::{self, encode_iri_part, percent_decode};
use oxigraph::model::{Literal, NamedNode, Quad, Term};
use oxigraph::sparql::QueryResults;
use oxigraph::store::{Store, Transaction};
use std::collections::{HashMap, HashSet};
use std::path::Path;

mod bulk;
#[cfg(feature = "neo4j")]
mod mirror;
mod quads;
mod reads;
mod records;
mod sparql;
mod validate;

use quads::{constellation_quads, parse_turtle};
use sparql::{Rows, bind_values, collect_rows, parse_fixed, prepared, sparql_err};

const Q_LEXICON: &str = include_str!("../../../queries/lexicon.rq");
const Q_ONTOLOGY: &str = include_str!("../../../queries/ontology.rq");
const Q_CANDIDATES: &str = include_str!("../../../queries/candidates.rq");
const Q_CONSTELLATION: &str = include_str!("../../../queries/constellation.rq");
const Q_POLICY: &str = include_str!("../../../queries/policy.rq");
const Q_TOOL_COUNT: &str = include_str!("../../../queries/tool_count.rq");

#[cfg(feature = "neo4j")]
pub(crate) use records::STATE_GRAPH;

/// oxigraph-backed store.
#[derive(Clone)]
pub struct OxigraphStore {
    store: Store,
    /// Record writes since the memtable was last flushed (see
    /// `records::write_records`).
    unflushed: std::sync::Arc<std::sync::atomic::AtomicU64>,
    flushing: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// The fewest inserted quads that take the bulk path (`bulk.rs`).
    bulk_from: usize,
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
    fn over(store: Store) -> Self {
        Self {
            store,
            unflushed: std::sync::Arc::default(),
            flushing: std::sync::Arc::default(),
            bulk_from: bulk::BULK_FROM,
        }
    }

    /// An in-memory store (tests, the eval harness).
    pub fn memory() -> Result<Self> {
        Ok(Self::over(Store::new().map_err(store_err)?))
    }

    /// A RocksDB store in `dir` (created if absent).
    #[cfg(feature = "rocksdb")]
    pub fn open(dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let store = Store::open(dir)
            .map_err(|e| Error::store(format!("cannot open the store at {}", dir.display()), e))?;
        let store = Self::over(store);
        for name in store.recover()? {
            tracing::warn!(source = %name, "removed a load that did not finish");
        }
        Ok(store)
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

    /// An in-memory store holding the quads of these chunks, each inserted
    /// as it comes, in one transaction; the first error stops it.
    #[cfg(feature = "neo4j")]
    pub(crate) fn from_chunks(chunks: impl IntoIterator<Item = Result<Vec<Quad>>>) -> Result<Self> {
        let store = Store::new().map_err(store_err)?;
        let mut transaction = store.start_transaction().map_err(store_err)?;
        for chunk in chunks {
            transaction.extend(chunk?.iter());
        }
        transaction.commit().map_err(store_err)?;
        Ok(Self::over(store))
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
}

impl OxigraphStore {
    /// A large change that only adds new sources, through the bulk loader
    /// (`bulk.rs`); `None` when the change is not one.
    fn try_bulk(
        &self,
        change: &Change<'_>,
        fresh: &[(&str, &Vec<Quad>, Quad, bool)],
        quads_before: usize,
    ) -> Result<Option<LoadReport>> {
        let adding: Vec<_> = fresh.iter().filter(|f| !f.3).collect();
        let inserted: usize = adding.iter().map(|f| f.1.len()).sum();
        if !change.unload.is_empty() || !change.remove_tools.is_empty() || inserted < self.bulk_from
        {
            return Ok(None);
        }
        for (name, ..) in &adding {
            if self.holds_source(name)? {
                return Ok(None);
            }
        }
        let sources: Vec<bulk::Fresh<'_>> = adding
            .iter()
            .map(|(name, quads, known, _)| bulk::Fresh {
                name,
                quads,
                known: known.clone(),
            })
            .collect();
        self.bulk_insert(&sources, change.check)?;
        Ok(Some(LoadReport {
            sources: change.load.len(),
            quads_before,
            quads_after: self.len()?,
            tools: self.tool_count()?,
            unchanged: false,
        }))
    }

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
                "rival" => Relation::Rival,
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
                unchanged: true,
            });
        }
        if let Some(report) = self.try_bulk(change, &fresh, quads_before)? {
            return Ok(report);
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
            unchanged: false,
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

    fn tools(&self) -> Result<Vec<Tool>> {
        Ok(self.read_catalog()?.0)
    }

    fn tools_and_links(&self) -> Result<(Vec<Tool>, Vec<ToolLink>)> {
        self.read_catalog()
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
                minted: row.get("curated").is_some_and(|c| c == "false"),
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
        Ok(self.read_catalog()?.1)
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
        self.read_records(kind)
    }

    fn put_records(&self, kind: &str, records: &[(String, Option<String>)]) -> Result<()> {
        self.write_records(kind, records)
    }

    fn validate(&self) -> Result<Vec<Violation>> {
        self.violations_now()
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
mod tests;
