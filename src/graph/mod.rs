//! The graph store: tools as entity constellations, behind one trait.
//!
//! The trait speaks domain terms (load, tools, links, constellation,
//! validate), never query strings: the oxigraph backend runs the SPARQL in
//! `queries/`, the Bolt backend (`neo4j.rs`, feature `neo4j`) keeps the
//! catalog on a graph server with the Cypher in `queries/cypher/`. This
//! module depends only on `model`, `vocab` and `error`.

#[cfg(feature = "neo4j")]
mod neo4j;
mod oxigraph;

#[cfg(feature = "neo4j")]
pub use self::neo4j::Neo4jStore;
pub use self::oxigraph::OxigraphStore;

use crate::error::Result;
use crate::model::{Constellation, LexEntry, PolicyFact, Tool, Violation};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// One unit of loading: a named source whose graphs are replaced as a whole.
#[derive(Debug, Clone)]
pub struct Source {
    /// Stable name (the file path as given); reloading the same name replaces it.
    pub name: String,
    pub data: SourceData,
}

#[derive(Debug, Clone)]
pub enum SourceData {
    /// Curated Turtle (ontology, seeds).
    Turtle(String),
    /// Constellations built from a manifest (MCP, OpenAPI, JSONL).
    Constellations(Vec<Constellation>),
}

/// One change of the store, applied in one transaction: sources to load
/// (replacing those of the same name), sources to unload, tools to remove
/// (every statement about them, in whichever source), and whether to check
/// the seed constraints.
#[derive(Debug, Clone, Copy, Default)]
pub struct Change<'a> {
    pub load: &'a [Source],
    pub unload: &'a [String],
    /// Tool IRIs.
    pub remove_tools: &'a [String],
    pub check: bool,
}

/// What a load did.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
pub struct LoadReport {
    pub sources: usize,
    pub quads_before: usize,
    pub quads_after: usize,
    pub tools: usize,
    /// Every source was already there with this content: nothing was
    /// written (a restart reloading the ontology and seeds).
    #[serde(default)]
    pub unchanged: bool,
}

/// How a request node reached a tool in the graph.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    PartialOrd,
    Ord,
    utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Relation {
    /// The tool performs the requested verb.
    Verb,
    /// The tool performs a narrower verb than the requested one (or broader).
    VerbBroader,
    /// The tool's primary object is the requested entity.
    Primary,
    /// The tool acts on the requested entity.
    ActsOn,
    /// The tool acts on a narrower/broader class, `hops` away via skos:broader.
    ActsOnBroader,
    /// The tool's text mentions the entity (weak, extracted).
    Mentions,
    /// A parameter of the tool takes the entity.
    Parameter,
    /// The tool acts on a sibling of the requested class and not on the class
    /// itself: negative evidence (Restaurant requested, Airline tool).
    Sibling,
    /// The request names an instance (a brand) and the tool acts on another
    /// instance of its class, not on the named one: negative evidence that
    /// outweighs the class the two share (Lufthansa requested, Delta's
    /// flight-status tool).
    Rival,
}

/// One graph path from a request node to a tool.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GraphHit {
    pub tool: String,
    /// The request node (verb or entity IRI).
    pub node: String,
    /// The tool-side node that matched (equal to `node` for direct matches).
    pub via: String,
    pub relation: Relation,
    pub hops: u8,
    pub extracted: bool,
}

/// Tabular result of a read-only SPARQL query.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(untagged)]
pub enum SparqlOutput {
    Solutions {
        vars: Vec<String>,
        rows: Vec<Vec<Option<String>>>,
    },
    Boolean(bool),
    /// CONSTRUCT/DESCRIBE results as N-Triples lines.
    Graph(Vec<String>),
}

/// The ontology context the ranker needs beside the tools.
#[derive(Debug, Clone, Default)]
pub struct OntologyFacts {
    /// Entity/verb IRI -> its skos:broader parents.
    pub broader: Vec<(String, String)>,
    /// Named instance -> its class (`tg:instanceOf`).
    pub instance_of: Vec<(String, String)>,
    /// Pairs of sibling classes (both directions present).
    pub siblings: Vec<(String, String)>,
    /// Node IRI -> preferred label.
    pub labels: Vec<(String, String)>,
}

/// The edges of a tool's constellation the graph channel walks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LinkKind {
    /// `tg:performs` a verb.
    Performs,
    /// `tg:primaryEntity`.
    PrimaryEntity,
    /// `tg:actsOn` an entity.
    ActsOn,
    /// `tg:mentions` an entity (its text names it).
    Mentions,
    /// A `tg:parameter` whose `tg:paramEntity` is the target.
    ParamEntity,
}

/// One edge from a tool to an ontology node, with its provenance.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ToolLink {
    pub tool: String,
    pub kind: LinkKind,
    pub target: String,
    /// From the `#extracted` graph (the importer's guess), not curated.
    pub extracted: bool,
}

/// The store behind the engine. Implementations are `Send + Sync` and
/// every method is one consistent read or one transaction.
pub trait GraphStore: Send + Sync + std::fmt::Debug {
    /// Applies one change in one transaction: when any source fails to
    /// parse or (with `check`) the result violates a seed constraint,
    /// nothing changes.
    fn apply(&self, change: &Change<'_>) -> Result<LoadReport>;
    /// Replaces the given sources, checking the seed constraints.
    fn load(&self, sources: &[Source]) -> Result<LoadReport> {
        self.apply(&Change {
            load: sources,
            check: true,
            ..Change::default()
        })
    }
    /// Like [`GraphStore::load`] without the seed constraints (benchmark
    /// catalogs, `validate`, which reports violations instead).
    fn load_unchecked(&self, sources: &[Source]) -> Result<LoadReport> {
        self.apply(&Change {
            load: sources,
            ..Change::default()
        })
    }
    /// Removes sources (their curated and extracted graphs).
    fn unload(&self, names: &[String]) -> Result<LoadReport> {
        self.apply(&Change {
            unload: names,
            ..Change::default()
        })
    }
    /// The names of the sources in the store.
    fn sources(&self) -> Result<Vec<String>>;
    /// Number of quads.
    fn len(&self) -> Result<usize>;
    fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }
    /// Every tool with its constellation flattened.
    fn tools(&self) -> Result<Vec<Tool>>;
    /// [`GraphStore::tools`] and [`GraphStore::links`] in one read (a
    /// backend that reads both from the same rows reads them once).
    fn tools_and_links(&self) -> Result<(Vec<Tool>, Vec<ToolLink>)> {
        Ok((self.tools()?, self.links()?))
    }
    /// Labels of verbs, entities and instances.
    fn lexicon(&self) -> Result<Vec<LexEntry>>;
    /// Nodes (minted verbs and terms) that only these sources declare:
    /// what replacing them would drop. A manifest re-registered under its
    /// own name is built without them, as on a first load, so that it
    /// declares them again.
    fn declared_only_by(&self, sources: &[String]) -> Result<HashSet<String>>;
    /// Hierarchy, siblings and labels of ontology nodes.
    fn ontology(&self) -> Result<OntologyFacts>;
    /// Every tool's verb, entity, mention and parameter-entity edges: the
    /// snapshot walks them in memory for the graph channel.
    fn links(&self) -> Result<Vec<ToolLink>>;
    /// The constellation of one tool (by name or IRI) as N-Triples lines.
    fn constellation(&self, tool_iri: &str) -> Result<Vec<String>>;
    /// The caller policy and its context (platforms, organizations, agents,
    /// profiles, subtypes, goals, intents) as facts, sorted.
    fn policy(&self) -> Result<Vec<PolicyFact>>;
    /// Runs every seed constraint; empty when the graph is valid.
    fn validate(&self) -> Result<Vec<Violation>>;
    /// Operational records of one kind (airlock sources, pending tools,
    /// usage, health, gaps): `(id, JSON text)`, sorted by id. They live
    /// beside the catalog, never in a tool's source.
    fn records(&self, kind: &str) -> Result<Vec<(String, String)>>;
    /// Writes records of one kind in one transaction: `Some(json)` replaces
    /// the record with that id, `None` deletes it.
    fn put_records(&self, kind: &str, records: &[(String, Option<String>)]) -> Result<()>;
    /// Catches up with changes other processes made to a shared store (a
    /// graph server several replicas write to) and says what moved. A store
    /// only this process writes has nothing to catch up with.
    fn sync(&self) -> Result<Synced> {
        Ok(Synced::default())
    }

    /// Tool vectors kept in the store itself, so that replicas sharing it
    /// never embed a tool another one embedded: for each wanted `(tool IRI,
    /// content hash)`, the vector stored for that tool under `model_id` and
    /// the same hash. `None` when the store keeps no vectors (the embedded
    /// store: they live in files beside it).
    fn tool_vectors(
        &self,
        _model_id: &str,
        _wanted: &[(String, String)],
    ) -> Result<Option<Vec<Option<Vec<f32>>>>> {
        Ok(None)
    }

    /// Stores tool vectors `(tool IRI, content hash, vector)` computed by
    /// `model_id` (nothing for a store that keeps none).
    fn put_tool_vectors(
        &self,
        _model_id: &str,
        _rows: &[(String, String, Vec<f32>)],
    ) -> Result<()> {
        Ok(())
    }

    /// Read-only SPARQL (the oxigraph store; the Bolt store answers it from
    /// its mirror); `None` for a backend without it. Not part of ranking:
    /// an operator's query language.
    fn sparql(&self) -> Option<&dyn Sparql> {
        None
    }
}

impl From<OxigraphStore> for Box<dyn GraphStore> {
    fn from(store: OxigraphStore) -> Self {
        Box::new(store)
    }
}

#[cfg(feature = "neo4j")]
impl From<Neo4jStore> for Box<dyn GraphStore> {
    fn from(store: Neo4jStore) -> Self {
        Box::new(store)
    }
}

/// Where the graph server is and who we are to it.
#[derive(Clone)]
pub struct GraphServer {
    /// `bolt://host:port` (also `neo4j://`, `bolt+s://`…).
    pub url: String,
    pub user: String,
    pub password: String,
    /// The database (Neo4j: `neo4j` by default; ArcadeDB: the database name).
    pub database: String,
}

impl std::fmt::Debug for GraphServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphServer")
            .field("url", &self.url)
            .field("user", &self.user)
            .field("database", &self.database)
            .finish_non_exhaustive()
    }
}

/// The store on a graph server: the Bolt backend, when this build has it.
pub fn connect(server: &GraphServer) -> Result<Box<dyn GraphStore>> {
    #[cfg(feature = "neo4j")]
    {
        Ok(Box::new(Neo4jStore::connect(server)?))
    }
    #[cfg(not(feature = "neo4j"))]
    {
        Err(crate::error::Error::unavailable_msg(format!(
            "{}: this toolgraph was built without the graph-server backend (cargo feature `neo4j`)",
            server.url
        )))
    }
}

/// What [`GraphStore::sync`] found another process had changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Synced {
    /// Tools, ontology or policy statements: the snapshot is stale.
    pub catalog: bool,
    /// Records only (airlock state, usage policies and counters): the
    /// snapshot still holds, what is read from records does not.
    pub records: bool,
}

impl Synced {
    pub fn any(self) -> bool {
        self.catalog || self.records
    }
}

/// A store that answers read-only SPARQL from users.
pub trait Sparql {
    /// Runs one query; updates are refused.
    fn query(&self, query: &str) -> Result<SparqlOutput> {
        self.query_within(query, None)
    }
    /// Runs one query, cancelled after `limit` (an `Unavailable` error).
    fn query_within(&self, query: &str, limit: Option<std::time::Duration>)
    -> Result<SparqlOutput>;
}
