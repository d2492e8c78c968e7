//! The graph-server backend over Bolt (neo4rs): Neo4j 5, or ArcadeDB's Bolt
//! plugin. Many stateless toolgraph replicas can share one server.
//!
//! On the server the catalog is a labelled property graph: every RDF
//! statement whose object is a resource is a relationship
//! `(:Resource {iri})-[:PERFORMS {k, g}]->(:Resource)` whose type mirrors
//! the predicate (`PERFORMS`, `ACTS_ON`, `BROADER`, `DEPENDS_ON`, `TYPE`…;
//! `STATEMENT` for predicates outside the closed list below, with the
//! predicate IRI in `p`), `g` the source graph and `k` a key of the
//! statement (a listed type keeps no `p` since 2026-12: one property fewer
//! on 1.6M relationships at 100k tools; what was written before still
//! reads); a
//! node's literal statements are its properties: the exact statements as
//! parallel lists `lit_p`, `lit_g`, `lit_v`, `lit_dt`, `lit_lang`, and a
//! readable copy of each listed predicate's value (`name`, `description`,
//! `param_type`…). One node per subject, not a node and a relationship per
//! literal: on ArcadeDB those were 56 % of a registration's server time.
//! Nodes carry labels mirroring their `rdf:type` (`Tool`, `Verb`, `Entity`,
//! `Domain`, `Organization`…). `(:Catalog {id: 'catalog', version})` counts
//! the writes.
//!
//! Reads are answered from an in-memory mirror of the server's statements
//! (an [`OxigraphStore`]), so every read — tools, lexicon, ontology, links,
//! constellation, policy, records, validation — means what it means on the
//! embedded store. The mirror is built at open and rebuilt by [`GraphStore::sync`]
//! when the server's version moved (another replica wrote). A write is
//! applied to the mirror first (parsing and the seed constraints: a refused
//! batch changes nothing anywhere), then its difference goes to the server in
//! one transaction that also increments the version, only if nobody wrote
//! since this replica last read it (else: a conflict, the mirror is reloaded,
//! nothing written).
//!
//! The driver is async; the trait is sync: each call runs on the store's own
//! small runtime, on a scoped thread, so it can be called from anywhere (a
//! blocking-pool thread, the CLI, a test).

mod codec;
mod diff;
mod mutate;
mod read;
mod records;
#[cfg(test)]
mod tests;
mod write;

use super::oxigraph::{OxigraphStore, STATE_GRAPH};
use super::{Change, GraphServer, GraphStore, LoadReport, OntologyFacts, Sparql, Synced, ToolLink};
use crate::error::{Error, Result};
use crate::model::{LexEntry, PolicyFact, Tool, Violation};
use neo4rs::{BoltType, ConfigBuilder, Graph, Query};
use oxigraph::model::{GraphName, Quad};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Mutex, PoisonError, RwLock};

const Q_SCHEMA: &str = include_str!("../../../queries/cypher/schema.cypher");
const Q_VERSION: &str = include_str!("../../../queries/cypher/version.cypher");
const Q_BUMP: &str = include_str!("../../../queries/cypher/bump_version.cypher");
const Q_STATEMENTS: &str = include_str!("../../../queries/cypher/statements.cypher");
const Q_DELETE: &str = include_str!("../../../queries/cypher/delete_statements.cypher");
const Q_CREATE: &str = include_str!("../../../queries/cypher/create_statements.cypher");
const Q_CREATE_LINK: &str = include_str!("../../../queries/cypher/create_link_clause.cypher");
const Q_KNOWN_OBJECTS: &str = include_str!("../../../queries/cypher/create_known_objects.cypher");
const Q_SUBJECTS: &str = include_str!("../../../queries/cypher/create_subjects.cypher");
const Q_SUBJECTS_BY_ID: &str = include_str!("../../../queries/cypher/create_subjects_by_id.cypher");
const Q_CHECKED: &str = include_str!("../../../queries/cypher/create_checked.cypher");
const Q_CREATE_STATEMENT: &str =
    include_str!("../../../queries/cypher/create_statement_clause.cypher");
const Q_LITERALS: &str = include_str!("../../../queries/cypher/literals.cypher");
const Q_LEGACY_LITERALS: &str =
    include_str!("../../../queries/cypher/delete_legacy_literals.cypher");
const Q_LEGACY_TYPES: &str = include_str!("../../../queries/cypher/delete_legacy_types.cypher");
const Q_LABEL: &str = include_str!("../../../queries/cypher/label.cypher");
const Q_LABEL_NEW: &str = include_str!("../../../queries/cypher/create_labelled.cypher");
const Q_UNLABEL: &str = include_str!("../../../queries/cypher/unlabel.cypher");
const Q_ORPHANS: &str = include_str!("../../../queries/cypher/delete_orphans.cypher");
const Q_TOOL_VECTORS: &str = include_str!("../../../queries/cypher/tool_vectors.cypher");
const Q_PUT_TOOL_VECTORS: &str = include_str!("../../../queries/cypher/put_tool_vectors.cypher");

/// Rows per `UNWIND` batch.
const BATCH: usize = 2_000;
/// Tool vectors per `UNWIND` batch (384 floats each).
const VECTOR_BATCH: usize = 500;
/// How often a change is applied again after another replica's write got
/// in first.
const CONFLICT_RETRIES: u32 = 8;

/// The server's statements as this replica last read or wrote them.
struct Mirror {
    store: OxigraphStore,
    version: i64,
    /// Statements the last read found in an earlier toolgraph's layout
    /// (literal ones as `(:Literal)` nodes, types of labelled classes as
    /// `TYPE` relationships), moved into properties at connect.
    legacy: usize,
}

/// A [`GraphStore`] on a graph server over Bolt.
pub struct Neo4jStore {
    graph: Graph,
    runtime: tokio::runtime::Runtime,
    server: GraphServer,
    mirror: RwLock<Mirror>,
    writer: Mutex<()>,
    /// What re-reads inside this store (catching up before a write, or
    /// after a failed one) found changed and [`GraphStore::sync`] has not
    /// reported yet: the engine must still hear of it.
    unreported: Mutex<Synced>,
    /// The records version this replica last saw (records live as nodes
    /// of their own, outside the mirror: `records.rs`).
    records_seen: Mutex<i64>,
}

impl std::fmt::Debug for Neo4jStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Neo4jStore")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

fn bolt_err(server: &GraphServer, e: neo4rs::Error) -> Error {
    match e {
        neo4rs::Error::IOError { .. }
        | neo4rs::Error::ConnectionError
        | neo4rs::Error::AuthenticationError(_) => Error::unavailable(
            format!("graph server {} (database {})", server.url, server.database),
            e,
        ),
        neo4rs::Error::Neo4j(e) if e.kind() == neo4rs::Neo4jErrorKind::Transient => {
            Error::Conflict(format!(
                "graph server {}: {} ({}); nothing was written, try again",
                server.url,
                e.message(),
                e.code()
            ))
        }
        // neo4rs 0.8 hands a failed COMMIT back as an unexpected message
        // carrying the server's failure (ArcadeDB answers concurrent commits
        // on the same page with `Neo.TransientError.Transaction.
        // DeadlockDetected`): the transaction is rolled back, so it is a
        // conflict to retry like the parsed transient errors above.
        neo4rs::Error::UnexpectedMessage(m) if m.contains("Neo.TransientError") => {
            Error::Conflict(format!(
                "graph server {}: {m}; nothing was written, try again",
                server.url
            ))
        }
        other => Error::store(format!("graph server {}", server.url), other),
    }
}

/// A query file without its `//` comment lines.
fn cypher(text: &str) -> String {
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A query file with a schema identifier from one of the closed lists above.
fn with_identifier(text: &str, placeholder: &str, identifier: &str) -> String {
    debug_assert!(
        identifier
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
    );
    cypher(text).replace(placeholder, identifier)
}

impl Neo4jStore {
    /// Connects, creates the constraints and indexes the server supports,
    /// and reads the catalog into the mirror.
    pub fn connect(server: &GraphServer) -> Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("toolgraph-bolt")
            .enable_all()
            .build()
            .map_err(|e| Error::unavailable("cannot start the Bolt driver", e))?;
        let config = ConfigBuilder::default()
            .uri(server.url.as_str())
            .user(server.user.as_str())
            .password(server.password.as_str())
            .db(server.database.as_str())
            .max_connections(4)
            .build()
            .map_err(|e| bolt_err(server, e))?;
        let graph = std::thread::scope(|s| {
            s.spawn(|| runtime.block_on(Graph::connect(config)))
                .join()
                .unwrap_or_else(|_| Err(neo4rs::Error::ConnectionError))
        })
        .map_err(|e| bolt_err(server, e))?;
        let store = Self {
            graph,
            runtime,
            server: server.clone(),
            mirror: RwLock::new(Mirror {
                store: OxigraphStore::memory()?,
                version: -1,
                legacy: 0,
            }),
            writer: Mutex::new(()),
            unreported: Mutex::new(Synced::default()),
            records_seen: Mutex::new(0),
        };
        // A plain round trip first: a wrong address or password is named here.
        store.fetch(neo4rs::query("RETURN 1 AS one"), &[])?;
        for statement in cypher(Q_SCHEMA).split(';') {
            let statement = statement.trim();
            if statement.is_empty() {
                continue;
            }
            if let Err(e) = store.run(vec![neo4rs::query(statement)]) {
                tracing::warn!(error = %e, statement, "the graph server refused a schema statement");
            }
        }
        let t = std::time::Instant::now();
        store.reload()?;
        tracing::debug!("bolt: statements read in {:?}", t.elapsed());
        store.move_legacy_statements()?;
        store.move_legacy_records()?;
        // The first read is where this replica starts, not a change.
        store.sync()?;
        Ok(store)
    }

    /// Copies every statement of `source` (an embedded store) onto the
    /// server in one transaction. A server that already holds a catalog is
    /// refused unless `replace`, which makes it exactly `source`'s.
    pub fn copy_from(&self, source: &OxigraphStore, replace: bool) -> Result<LoadReport> {
        // The catalog's statements; records go to record nodes below.
        let quads: Vec<Quad> = source
            .all_quads()?
            .into_iter()
            .filter(
                |q| !matches!(&q.graph_name, GraphName::NamedNode(g) if g.as_str() == STATE_GRAPH),
            )
            .collect();
        let sources = GraphStore::sources(source)?.len();
        let tools = GraphStore::tools(source)?.len();
        let report = self.mutate(None, |m| {
            let before = GraphStore::len(m)?;
            if before > 0 && !replace {
                return Err(Error::Conflict(format!(
                    "the graph server {} (database {}) already holds {before} statements; pass --replace to overwrite them",
                    self.server.url, self.server.database
                )));
            }
            m.replace_all(&quads)?;
            let after = quads.len();
            Ok(LoadReport {
                sources,
                quads_before: before,
                quads_after: after,
                tools,
                unchanged: false,
            })
        })?;
        let mut by_kind: BTreeMap<String, Vec<(String, Option<String>)>> = BTreeMap::new();
        for (kind, id, json) in source.all_records()? {
            by_kind.entry(kind).or_default().push((id, Some(json)));
        }
        for (kind, rows) in by_kind {
            self.write_records(&kind, &rows)?;
        }
        Ok(report)
    }

    /// The server this store talks to.
    pub fn server(&self) -> &GraphServer {
        &self.server
    }

    /// Runs a future on the driver's runtime from any thread.
    fn block<T: Send>(&self, f: impl std::future::Future<Output = T> + Send) -> T {
        std::thread::scope(|s| {
            s.spawn(|| self.runtime.block_on(f))
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p))
        })
    }

    /// Runs queries in one auto-commit session each.
    fn run(&self, queries: Vec<Query>) -> Result<()> {
        self.block(async {
            for q in queries {
                self.graph.run(q).await?;
            }
            Ok::<_, neo4rs::Error>(())
        })
        .map_err(|e| bolt_err(&self.server, e))
    }

    /// Rows of one query, as strings (or nothing for a null).
    fn fetch(&self, q: Query, columns: &[&str]) -> Result<Vec<Vec<Option<String>>>> {
        self.block(async {
            let mut stream = self.graph.execute(q).await?;
            let mut out = Vec::new();
            while let Some(row) = stream.next().await? {
                let mut values = Vec::with_capacity(columns.len());
                for c in columns {
                    values.push(
                        row.get::<Option<String>>(c)
                            .or_else(|_| {
                                row.get::<Option<i64>>(c).map(|v| v.map(|n| n.to_string()))
                            })
                            .unwrap_or(None),
                    );
                }
                out.push(values);
            }
            Ok::<_, neo4rs::Error>(out)
        })
        .map_err(|e| bolt_err(&self.server, e))
    }

    /// The server's catalog version (0 before the first write).
    pub fn server_version(&self) -> Result<i64> {
        let rows = self.fetch(neo4rs::query(&cypher(Q_VERSION)), &["version"])?;
        Ok(rows
            .first()
            .and_then(|r| r[0].as_deref())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0))
    }

    /// Re-reads the server when its version moved, noting what changed
    /// for the next [`GraphStore::sync`].
    fn catch_up(&self) -> Result<()> {
        let known = self
            .mirror
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .version;
        if self.server_version()? != known {
            self.reload()?;
        }
        Ok(())
    }

    fn read<T>(&self, f: impl FnOnce(&OxigraphStore) -> Result<T>) -> Result<T> {
        f(&self
            .mirror
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .store)
    }
}

impl GraphStore for Neo4jStore {
    fn apply(&self, change: &Change<'_>) -> Result<LoadReport> {
        let graphs = OxigraphStore::graphs_written(change)?;
        self.mutate(graphs.as_deref(), |m| m.apply(change))
    }

    fn sources(&self) -> Result<Vec<String>> {
        self.read(GraphStore::sources)
    }

    fn len(&self) -> Result<usize> {
        self.read(GraphStore::len)
    }

    fn tools(&self) -> Result<Vec<Tool>> {
        self.read(GraphStore::tools)
    }

    fn tools_and_links(&self) -> Result<(Vec<Tool>, Vec<ToolLink>)> {
        self.read(GraphStore::tools_and_links)
    }

    fn lexicon(&self) -> Result<Vec<LexEntry>> {
        self.read(GraphStore::lexicon)
    }

    fn declared_only_by(&self, sources: &[String]) -> Result<HashSet<String>> {
        self.read(|m| m.declared_only_by(sources))
    }

    fn ontology(&self) -> Result<OntologyFacts> {
        self.read(GraphStore::ontology)
    }

    fn links(&self) -> Result<Vec<ToolLink>> {
        self.read(GraphStore::links)
    }

    fn constellation(&self, tool_iri: &str) -> Result<Vec<String>> {
        self.read(|m| m.constellation(tool_iri))
    }

    fn policy(&self) -> Result<Vec<PolicyFact>> {
        self.read(GraphStore::policy)
    }

    fn validate(&self) -> Result<Vec<Violation>> {
        self.read(GraphStore::validate)
    }

    fn records(&self, kind: &str) -> Result<Vec<(String, String)>> {
        self.read_records(kind)
    }

    fn put_records(&self, kind: &str, records: &[(String, Option<String>)]) -> Result<()> {
        self.write_records(kind, records)
    }

    fn tool_vectors(
        &self,
        model_id: &str,
        wanted: &[(String, String)],
    ) -> Result<Option<Vec<Option<Vec<f32>>>>> {
        let t = std::time::Instant::now();
        let text = cypher(Q_TOOL_VECTORS);
        // Batches on two pooled connections at once (the even ones and the
        // odd ones): the server looks one up while the driver parses the
        // other's floats.
        let lane = |first: usize| {
            let text = &text;
            async move {
                let mut out: Vec<(String, Vec<f32>)> = Vec::new();
                for chunk in wanted.chunks(VECTOR_BATCH).skip(first).step_by(2) {
                    let rows: Vec<HashMap<String, BoltType>> = chunk
                        .iter()
                        .map(|(iri, hash)| {
                            HashMap::from([
                                ("iri".to_string(), BoltType::from(iri.as_str())),
                                ("hash".to_string(), BoltType::from(hash.as_str())),
                            ])
                        })
                        .collect();
                    let q = neo4rs::query(text)
                        .param("rows", rows)
                        .param("model", model_id);
                    let mut stream = self.graph.execute(q).await?;
                    while let Some(row) = stream.next().await? {
                        let iri: String = row
                            .get("iri")
                            .map_err(neo4rs::Error::DeserializationError)?;
                        let v: Vec<f64> = row
                            .get("embedding")
                            .map_err(neo4rs::Error::DeserializationError)?;
                        out.push((iri, v.into_iter().map(|x| x as f32).collect()));
                    }
                }
                Ok::<_, neo4rs::Error>(out)
            }
        };
        let (a, b) = self
            .block(async { tokio::try_join!(lane(0), lane(1)) })
            .map_err(|e| bolt_err(&self.server, e))?;
        let mut found: HashMap<String, Vec<f32>> = a.into_iter().chain(b).collect();
        tracing::debug!(
            "bolt: {} tool vectors read in {:?}",
            found.len(),
            t.elapsed()
        );
        Ok(Some(
            wanted.iter().map(|(iri, _)| found.remove(iri)).collect(),
        ))
    }

    fn put_tool_vectors(&self, model_id: &str, rows: &[(String, String, Vec<f32>)]) -> Result<()> {
        let text = cypher(Q_PUT_TOOL_VECTORS);
        let queries = rows
            .chunks(VECTOR_BATCH)
            .map(|chunk| {
                let rows: Vec<HashMap<String, BoltType>> = chunk
                    .iter()
                    .map(|(iri, hash, v)| {
                        HashMap::from([
                            ("iri".to_string(), BoltType::from(iri.as_str())),
                            ("hash".to_string(), BoltType::from(hash.as_str())),
                            ("v".to_string(), BoltType::from(v.clone())),
                        ])
                    })
                    .collect();
                neo4rs::query(&text)
                    .param("rows", rows)
                    .param("model", model_id)
            })
            .collect();
        self.run(queries)
    }

    /// The operator's read-only SPARQL, answered by the mirror: the same
    /// statements the server holds, as of this replica's last read.
    fn sparql(&self) -> Option<&dyn Sparql> {
        Some(self)
    }

    fn sync(&self) -> Result<Synced> {
        self.catch_up()?;
        self.catch_up_records()?;
        Ok(std::mem::take(
            &mut *self
                .unreported
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        ))
    }
}

impl Sparql for Neo4jStore {
    fn query_within(
        &self,
        query: &str,
        limit: Option<std::time::Duration>,
    ) -> Result<crate::graph::SparqlOutput> {
        self.read(|m| m.query_within(query, limit))
    }
}
