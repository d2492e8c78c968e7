//! The graph-server backend against a live Bolt server: one contract suite
//! run on both stores, replicas sharing one server, parity with the embedded
//! store.
//!
//! The server is ArcadeDB with its Bolt plugin, installed by
//! `scripts/setup-bolt.sh` (which `scripts/test.sh` runs) and started once
//! for this test binary by `scripts/bolt-server.sh` on free loopback ports;
//! every test gets a database of its own. A missing server fails the Bolt
//! tests with that instruction: they never pass without one.

use crate::common::{root, source, turtle_sources};
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};
use toolgraph::Error;
use toolgraph::graph::{
    GraphServer, GraphStore, Neo4jStore, OxigraphStore, Source, SourceData, Synced,
};

const PASSWORD: &str = "toolgraph-test-1";

/// The Bolt server of this test binary.
pub struct BoltServer {
    pub bolt_port: u16,
    http_port: u16,
    log: std::path::PathBuf,
    /// The wrapper holding the server: it stops the server when this
    /// process exits (its stdin closes), so no server outlives the tests.
    _child: Mutex<Child>,
    _root: tempfile::TempDir,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap()
}

impl BoltServer {
    /// The server, started on first use.
    pub fn get() -> &'static BoltServer {
        static SERVER: OnceLock<BoltServer> = OnceLock::new();
        SERVER.get_or_init(Self::start)
    }

    fn start() -> BoltServer {
        let home = std::env::var_os("TOOLGRAPH_BOLT_HOME")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| dirs::home_dir().unwrap().join(".cache/toolgraph/arcadedb"));
        assert!(
            home.join("arcadedb_embedded/jre/bin/java").exists(),
            "no Bolt test server at {}: run scripts/setup-bolt.sh",
            home.display()
        );
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("server.log");
        let (bolt_port, http_port) = (free_port(), free_port());
        let script = root().join("scripts/bolt-server.sh");
        // sh keeps the server as a child and kills it when our end of its
        // stdin closes (this process exited, however it ended).
        let child = Command::new("sh")
            .arg("-c")
            .arg(r#"exec 3<&0; "$@" >"$LOG" 2>&1 & S=$!; (cat <&3 >/dev/null; kill $S 2>/dev/null) & wait $S"#)
            .arg("sh")
            .arg(&script)
            .args(["--bolt-port", &bolt_port.to_string()])
            .args(["--http-port", &http_port.to_string()])
            .arg("--root")
            .arg(dir.path().join("root"))
            .args(["--database", "toolgraph"])
            .env("LOG", &log)
            .env("TOOLGRAPH_BOLT_HOME", &home)
            .env("TOOLGRAPH_GRAPH_PASSWORD", PASSWORD)
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        let server = BoltServer {
            bolt_port,
            http_port,
            log,
            _child: Mutex::new(child),
            _root: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if TcpStream::connect(("127.0.0.1", bolt_port)).is_ok()
                && TcpStream::connect(("127.0.0.1", http_port)).is_ok()
            {
                break;
            }
            let exited = server._child.lock().unwrap().try_wait().unwrap();
            assert!(
                exited.is_none() && Instant::now() < deadline,
                "the Bolt server did not start ({exited:?}):\n{}",
                server.log_tail()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        server
    }

    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    pub fn url(&self) -> String {
        format!("bolt://127.0.0.1:{}", self.bolt_port)
    }

    /// A new, empty database on the server, for one test; dropped with it
    /// (the server keeps every open database's caches in its heap).
    pub fn database(&'static self, prefix: &str) -> Database {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let name = format!("{prefix}{}", NEXT.fetch_add(1, Ordering::Relaxed));
        let status = self.command(&format!("create database {name}"));
        assert!(
            status.contains(" 200"),
            "creating database {name}: {status}\n{}",
            self.log_tail()
        );
        Database {
            server: GraphServer {
                url: self.url(),
                user: "root".into(),
                password: PASSWORD.into(),
                database: name,
            },
            on: self,
        }
    }

    /// Runs a server command over ArcadeDB's HTTP API; the status line.
    fn command(&self, command: &str) -> String {
        let body = serde_json::json!({ "command": command });
        self.post("/api/v1/server", &body).0
    }

    /// POSTs JSON to ArcadeDB's HTTP API: the status line and the body.
    fn post(&self, path: &str, body: &serde_json::Value) -> (String, String) {
        let body = body.to_string();
        let mut stream = TcpStream::connect(("127.0.0.1", self.http_port)).unwrap();
        let auth = base64(format!("root:{PASSWORD}").as_bytes());
        write!(
            stream,
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic {auth}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut reader = BufReader::new(stream);
        let mut status = String::new();
        reader.read_line(&mut status).unwrap();
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut reader, &mut rest).unwrap();
        let body = rest
            .split_once("\r\n\r\n")
            .map_or("", |(_, b)| b)
            .to_string();
        (status, body)
    }
}

impl Database {
    /// One number from a Cypher query run by the server itself (its HTTP
    /// API, not our driver): what a Cypher user of the graph sees.
    fn cypher_count(&self, query: &str, params: serde_json::Value) -> u64 {
        let (status, body) = self.on.post(
            &format!("/api/v1/command/{}", self.server.database),
            &serde_json::json!({ "language": "cypher", "command": query, "params": params }),
        );
        assert!(status.contains(" 200"), "{query}: {status} {body}");
        let v: serde_json::Value =
            serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
        v["result"][0]["n"]
            .as_u64()
            .unwrap_or_else(|| panic!("{query}: {body}"))
    }
}

/// A test's database on the Bolt server, dropped at the end of the test.
pub struct Database {
    server: GraphServer,
    on: &'static BoltServer,
}

impl std::ops::Deref for Database {
    type Target = GraphServer;
    fn deref(&self) -> &GraphServer {
        &self.server
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        let status = self
            .on
            .command(&format!("drop database {}", self.server.database));
        if !status.contains(" 200") {
            eprintln!("dropping database {}: {status}", self.server.database);
        }
    }
}

fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A fresh empty store of one backend, and how to open a second handle on
/// the same data (another replica) where the backend allows it.
pub struct Fresh {
    pub store: Box<dyn GraphStore>,
    server: Option<Database>,
    _dir: Option<tempfile::TempDir>,
}

impl Fresh {
    /// The embedded store on disk (RocksDB), as `serve` uses it.
    pub fn embedded() -> Fresh {
        let dir = tempfile::tempdir().unwrap();
        Fresh {
            store: Box::new(OxigraphStore::open(&dir.path().join("graph")).unwrap()),
            server: None,
            _dir: Some(dir),
        }
    }

    /// A new database on the live Bolt server.
    pub fn bolt() -> Fresh {
        let server = BoltServer::get().database("contract");
        Fresh {
            store: Box::new(Neo4jStore::connect(&server).unwrap()),
            server: Some(server),
            _dir: None,
        }
    }

    /// Another handle on the same data, reading the backend afresh (for the
    /// Bolt store: a new connection and mirror, what another replica sees).
    fn reopened(&self) -> Option<Box<dyn GraphStore>> {
        let server = self.server.as_ref()?;
        Some(Box::new(Neo4jStore::connect(server).unwrap()))
    }
}

fn seeds() -> Vec<Source> {
    turtle_sources(&["ontology", "seeds"])
}

/// What a store holds, in a form two stores can be compared by.
fn fingerprint(store: &dyn GraphStore) -> (usize, Vec<String>, Vec<String>) {
    let mut tools: Vec<String> = store
        .tools()
        .unwrap()
        .into_iter()
        .map(|t| {
            let mut verbs: Vec<&str> = t.verbs.iter().map(|v| &*v.iri).collect();
            verbs.sort();
            format!("{} {} {}", t.name, verbs.join(","), t.params.len())
        })
        .collect();
    tools.sort();
    (store.len().unwrap(), tools, store.sources().unwrap())
}

// ---------------------------------------------------------------------------
// The contract: every case runs on both stores.

fn loads_the_seeds_and_reads_back_full_constellations(fresh: fn() -> Fresh) {
    let f = fresh();
    let store = f.store.as_ref();
    assert!(store.is_empty().unwrap());
    let report = store.load(&seeds()).unwrap();
    assert!(report.tools >= 150, "{report:?}");
    assert_eq!(report.quads_after, store.len().unwrap());
    assert!(store.validate().unwrap().is_empty());
    assert!(
        store
            .sources()
            .unwrap()
            .contains(&"seeds/travel.ttl".to_string())
    );
    let tools = store.tools().unwrap();
    let seat = tools
        .iter()
        .find(|t| t.name == "airline_seat_reserve")
        .unwrap();
    assert!(seat.verbs.iter().any(|v| v.iri.ends_with("/verb/reserve")));
    for entity in ["/entity/Airline", "/entity/Seat"] {
        assert!(seat.entities.iter().any(|e| e.iri.ends_with(entity)));
    }
    assert!(
        seat.verbs
            .iter()
            .all(|v| v.provenance == toolgraph::model::Provenance::Curated)
    );
    assert!(!seat.params.is_empty() && !seat.description.is_empty());
    let universal = tools.iter().find(|t| t.name == "query_org_data").unwrap();
    assert!(universal.universal && universal.read_only);
    if let Some(other) = f.reopened() {
        assert_eq!(fingerprint(other.as_ref()), fingerprint(store));
    }
}

fn a_refused_batch_leaves_the_store_as_it_was(fresh: fn() -> Fresh) {
    let f = fresh();
    let store = f.store.as_ref();
    store.load(&seeds()).unwrap();
    let before = fingerprint(store);
    // A syntax error: named by file:line:col.
    let mut sources = turtle_sources(&["seeds"]);
    sources.push(Source {
        name: "seeds/broken.ttl".into(),
        data: SourceData::Turtle(
            "@prefix tg: <https://toolgraph.dev/ns#> .\n<urn:y> tg:name \"unterminated .\n".into(),
        ),
    });
    let err = store.load(&sources).unwrap_err();
    assert!(matches!(err, Error::Parse { .. }), "{err}");
    assert!(err.to_string().starts_with("seeds/broken.ttl:2:"), "{err}");
    assert_eq!(fingerprint(store), before);
    // A seed constraint: a tool without a verb.
    let travel = std::fs::read_to_string(root().join("seeds/travel.ttl")).unwrap();
    let edited = travel.replace("tg:performs verb:search ;", "");
    assert_ne!(edited, travel);
    let err = store
        .load(&[Source {
            name: "seeds/travel.ttl".into(),
            data: SourceData::Turtle(edited),
        }])
        .unwrap_err();
    let Error::Violations(v) = &err else {
        panic!("{err}")
    };
    assert!(
        v.iter()
            .any(|v| v.rule == "tool_without_verb" && v.subject.ends_with("/tool/flight_search"))
    );
    assert_eq!(fingerprint(store), before);
    // Nothing reached the backend either.
    if let Some(other) = f.reopened() {
        assert_eq!(fingerprint(other.as_ref()), before);
    }
}

fn candidates_carry_their_path_evidence(fresh: fn() -> Fresh) {
    let f = fresh();
    f.store.load(&seeds()).unwrap();
    let engine = toolgraph::Engine::open_with(
        f.store,
        toolgraph::EngineOptions::memory(toolgraph::Embeddings::Off),
    )
    .unwrap();
    let r = engine
        .search(&toolgraph::SearchRequest {
            text: "reserve a seat on a Southwest flight".into(),
            mode: toolgraph::rank::Mode::Graph,
            limit: 10,
            ..toolgraph::SearchRequest::default()
        })
        .unwrap();
    let rank_of = |tool: &str| r.matches.iter().position(|m| m.tool == tool);
    let seat = rank_of("airline_seat_reserve").expect("airline_seat_reserve not found");
    assert!(
        rank_of("restaurant_table_reserve").is_none_or(|table| seat < table),
        "{:?}",
        r.matches.iter().map(|m| &m.tool).collect::<Vec<_>>()
    );
    let paths = &r.matches[seat].details.paths;
    assert!(
        paths
            .iter()
            .any(|p| p.relation == toolgraph::graph::Relation::Verb),
        "{paths:?}"
    );
    assert!(
        paths.iter().any(|p| matches!(
            p.relation,
            toolgraph::graph::Relation::ActsOnBroader | toolgraph::graph::Relation::ActsOn
        ) && p.explain.to_lowercase().contains("airline")),
        "{paths:?}"
    );
}

fn constellation_is_the_tools_statements(fresh: fn() -> Fresh) {
    let f = fresh();
    f.store.load(&seeds()).unwrap();
    let iri = format!("{}restaurant_table_reserve", toolgraph::vocab::TOOL);
    let lines = f.store.constellation(&iri).unwrap();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("/ns#performs>") && l.contains("/verb/reserve>"))
    );
    assert!(lines.iter().any(|l| l.contains("/ns#paramName>")));
    assert!(lines.iter().all(|l| l.ends_with(" .")));
}

fn dependencies_come_back_with_their_kind(fresh: fn() -> Fresh) {
    let f = fresh();
    f.store.load(&seeds()).unwrap();
    let tools = f.store.tools().unwrap();
    let book = tools
        .iter()
        .find(|t| t.name == "person_calendar_book")
        .unwrap();
    let on: Vec<&str> = book.depends_on.iter().map(|d| d.on.as_str()).collect();
    // By name, once each: never the target's display label ("Get a customer").
    assert_eq!(on, ["customer_get", "person_calendar_search"], "{on:?}");
    // Every other link shows its target's preferred label.
    assert!(
        book.verbs
            .iter()
            .all(|l| !l.label.is_empty() && !l.label.contains('/'))
    );
    assert!(
        book.entities
            .first()
            .is_some_and(|e| !e.label.contains('/')),
        "{:?}",
        book.entities
    );
    let with_links = tools.iter().filter(|t| !t.depends_on.is_empty()).count();
    assert!(with_links >= 3, "{with_links}");
}

fn lexicon_and_ontology_facts(fresh: fn() -> Fresh) {
    let f = fresh();
    f.store.load(&seeds()).unwrap();
    let lexicon = f.store.lexicon().unwrap();
    assert!(lexicon.iter().any(|e| e.label == "Southwest"
        && matches!(&e.kind, toolgraph::model::TermKind::Instance { class } if class.ends_with("/entity/Airline"))));
    assert!(
        lexicon
            .iter()
            .any(|e| e.label.eq_ignore_ascii_case("make a reservation")
                && e.iri.ends_with("/verb/reserve"))
    );
    let facts = f.store.ontology().unwrap();
    assert!(
        facts
            .siblings
            .iter()
            .any(|(a, b)| a.ends_with("/entity/Restaurant") && b.ends_with("/entity/Airline"))
    );
    assert!(
        facts
            .broader
            .iter()
            .any(|(a, _)| a.ends_with("/entity/Airline"))
    );
    assert!(
        facts
            .labels
            .iter()
            .any(|(a, l)| a.ends_with("/entity/Airline") && l == "airline")
    );
    assert!(!f.store.policy().unwrap().is_empty());
    assert!(!f.store.links().unwrap().is_empty());
}

fn reloading_is_idempotent_and_replacing_a_source_replaces_it(fresh: fn() -> Fresh) {
    let f = fresh();
    let store = f.store.as_ref();
    store.load(&seeds()).unwrap();
    let before = fingerprint(store);
    store.load(&seeds()).unwrap();
    assert_eq!(fingerprint(store), before);
    // A changed source replaces its old statements, it does not add to them.
    let path = root().join("seeds/travel.ttl");
    let mut travel = source(&path);
    let SourceData::Turtle(text) = &travel.data else {
        unreachable!()
    };
    let renamed = text.replace(
        "tg:name \"flight_search\"",
        "tg:name \"flight_search_renamed\"",
    );
    assert_ne!(&renamed, text);
    travel.data = SourceData::Turtle(renamed);
    store.load(&[travel]).unwrap();
    let names: Vec<String> = store.tools().unwrap().into_iter().map(|t| t.name).collect();
    assert!(names.contains(&"flight_search_renamed".to_string()));
    assert!(!names.contains(&"flight_search".to_string()));
    assert_eq!(store.len().unwrap(), before.0);
    if let Some(other) = f.reopened() {
        assert_eq!(fingerprint(other.as_ref()), fingerprint(store));
    }
    // Unloading removes every statement of the source.
    store.unload(&["seeds/travel.ttl".to_string()]).unwrap();
    assert!(
        !store
            .sources()
            .unwrap()
            .contains(&"seeds/travel.ttl".to_string())
    );
    if let Some(other) = f.reopened() {
        assert_eq!(fingerprint(other.as_ref()), fingerprint(store));
    }
}

fn records_are_written_and_deleted_in_one_go(fresh: fn() -> Fresh) {
    let f = fresh();
    let store = f.store.as_ref();
    store
        .put_records(
            "airlock_source",
            &[
                ("b".into(), Some(r#"{"url":"http://x/b"}"#.into())),
                ("a".into(), Some(r#"{"url":"http://x/a"}"#.into())),
            ],
        )
        .unwrap();
    let got = store.records("airlock_source").unwrap();
    assert_eq!(
        got,
        vec![
            ("a".to_string(), r#"{"url":"http://x/a"}"#.to_string()),
            ("b".to_string(), r#"{"url":"http://x/b"}"#.to_string()),
        ]
    );
    store
        .put_records("airlock_source", &[("a".into(), None)])
        .unwrap();
    assert_eq!(store.records("airlock_source").unwrap().len(), 1);
    assert!(store.records("other_kind").unwrap().is_empty());
    if let Some(other) = f.reopened() {
        assert_eq!(
            other.records("airlock_source").unwrap(),
            store.records("airlock_source").unwrap()
        );
    }
}

/// The seeds plus an MCP manifest that describes some seed tools again
/// (charge_card, refund_payment, send_email) with other texts.
fn seeds_and_overlapping_manifest() -> Vec<Source> {
    let engine = toolgraph::Engine::open_with(
        OxigraphStore::memory().unwrap(),
        toolgraph::EngineOptions::memory(toolgraph::Embeddings::Off),
    )
    .unwrap();
    let files =
        toolgraph::import::collect_files(&[root().join("tests/fixtures/mcp/tools_list.json")])
            .unwrap();
    let mut sources = seeds();
    sources.extend(engine.prepare(&files, None).unwrap());
    sources
}

fn full_tools(store: &dyn GraphStore) -> String {
    let mut tools = store.tools().unwrap();
    tools.sort_by(|a, b| a.iri.cmp(&b.iri));
    format!("{tools:#?}")
}

fn a_tool_two_sources_describe_reads_the_same_whatever_the_row_order(fresh: fn() -> Fresh) {
    let f = fresh();
    let sources = seeds_and_overlapping_manifest();
    f.store.load(&sources).unwrap();
    let tools = f.store.tools().unwrap();
    // Two sources describe it (the smaller name is its source).
    let charge = tools.iter().find(|t| t.name == "charge_card").unwrap();
    assert!(
        charge.source.ends_with("tools_list.json"),
        "{}",
        charge.source
    );
    // The same sources, loaded the other way round into another store: every
    // description, link, weight and parameter reads the same.
    let reference = OxigraphStore::memory().unwrap();
    let reversed: Vec<Source> = sources.iter().rev().cloned().collect();
    reference.load(&reversed).unwrap();
    assert_eq!(full_tools(f.store.as_ref()), full_tools(&reference));
    if let Some(other) = f.reopened() {
        assert_eq!(full_tools(other.as_ref()), full_tools(&reference));
    }
}

macro_rules! contract {
    ($($case:ident),* $(,)?) => {
        mod oxigraph_store {
            $(#[test] fn $case() { super::$case(super::Fresh::embedded) })*
        }
        mod bolt_store {
            $(#[test] fn $case() { super::$case(super::Fresh::bolt) })*
        }
    };
}

contract!(
    loads_the_seeds_and_reads_back_full_constellations,
    a_refused_batch_leaves_the_store_as_it_was,
    candidates_carry_their_path_evidence,
    constellation_is_the_tools_statements,
    dependencies_come_back_with_their_kind,
    lexicon_and_ontology_facts,
    reloading_is_idempotent_and_replacing_a_source_replaces_it,
    records_are_written_and_deleted_in_one_go,
    a_tool_two_sources_describe_reads_the_same_whatever_the_row_order,
);

// ---------------------------------------------------------------------------
// Replicas on one server.

#[test]
fn a_replica_catches_up_with_writes_made_through_another() {
    let server = BoltServer::get().database("replica");
    let a = Neo4jStore::connect(&server).unwrap();
    let b = Neo4jStore::connect(&server).unwrap();
    let nothing = Synced::default();
    assert_eq!(b.sync().unwrap(), nothing, "nothing was written yet");
    a.load(&seeds()).unwrap();
    // b answers from what it last read until it catches up.
    assert!(b.is_empty().unwrap());
    assert!(b.sync().unwrap().catalog);
    assert_eq!(fingerprint(&b), fingerprint(&a));
    assert_eq!(
        b.sync().unwrap(),
        nothing,
        "caught up: nothing more to read"
    );
    // A record (usage, airlock state) is not a catalog change: replicas
    // re-read records without rebuilding their snapshot.
    b.put_records("airlock_gap", &[("x".into(), Some("{}".into()))])
        .unwrap();
    assert_eq!(
        a.sync().unwrap(),
        Synced {
            catalog: false,
            records: true
        }
    );
    assert_eq!(a.records("airlock_gap").unwrap().len(), 1);
    assert_eq!(a.server_version().unwrap(), b.server_version().unwrap());
    // A write catches up first; what it caught up with is still reported.
    b.put_records("airlock_gap", &[("y".into(), Some("{}".into()))])
        .unwrap();
    a.put_records("airlock_source", &[("s".into(), Some("{}".into()))])
        .unwrap();
    assert_eq!(a.records("airlock_gap").unwrap().len(), 2);
    assert_eq!(
        a.sync().unwrap(),
        Synced {
            catalog: false,
            records: true
        },
        "b's record, absorbed by a's own write, was never reported"
    );
    assert_eq!(a.sync().unwrap(), nothing);
}

#[test]
fn the_server_holds_a_property_graph_that_mirrors_the_ontology() {
    let db = BoltServer::get().database("shape");
    let store = Neo4jStore::connect(&db).unwrap();
    store.load(&seeds()).unwrap();
    let tools = store.tools().unwrap();
    let reserve = format!("{}reserve", toolgraph::vocab::VERB);
    let reserving = tools
        .iter()
        .filter(|t| t.verbs.iter().any(|v| *v.iri == reserve))
        .count() as u64;
    assert!(reserving >= 5, "{reserving}");
    let none = serde_json::json!({});
    // Labels from rdf:type, relationship types from the predicates.
    let tool_nodes = "MATCH (t:Tool) RETURN count(t) AS n";
    assert_eq!(
        db.cypher_count(tool_nodes, none.clone()),
        tools.len() as u64
    );
    assert_eq!(
        db.cypher_count(
            "MATCH (t:Tool)-[:PERFORMS]->(v:Verb {iri: $verb}) RETURN count(DISTINCT t) AS n",
            serde_json::json!({ "verb": reserve }),
        ),
        reserving
    );
    let broader = "MATCH (:Tool)-[:ACTS_ON]->(e:Entity)-[:BROADER]->(:Entity) RETURN count(e) AS n";
    assert!(db.cypher_count(broader, none.clone()) > 0);
    let deps = "MATCH (:Tool)-[r:DEPENDS_ON]->(:Tool) RETURN count(r) AS n";
    assert!(db.cypher_count(deps, none.clone()) >= 3);
    // A listed type names its predicate: only a STATEMENT keeps `p`.
    let typed_with_p = "MATCH ()-[r]->() WHERE r.k IS NOT NULL AND r.p IS NOT NULL \
                        AND type(r) <> 'STATEMENT' RETURN count(r) AS n";
    assert_eq!(db.cypher_count(typed_with_p, none.clone()), 0);
    let statement_without_p = "MATCH ()-[r:STATEMENT]->() WHERE r.p IS NULL RETURN count(r) AS n";
    assert_eq!(db.cypher_count(statement_without_p, none.clone()), 0);
    // Literal statements are their node's properties: a readable copy of
    // each listed predicate, and the exact statements as parallel lists.
    let readable = "MATCH (t:Tool) WHERE t.name IS NOT NULL AND t.description IS NOT NULL \
                    AND size(t.lit_p) = size(t.lit_v) AND size(t.lit_p) >= 2 RETURN count(t) AS n";
    assert_eq!(db.cypher_count(readable, none.clone()), tools.len() as u64);
    assert_eq!(
        db.cypher_count(
            "MATCH (t:Tool {name: 'restaurant_table_reserve'})-[:PERFORMS]->(v:Verb {iri: $verb}) RETURN count(v) AS n",
            serde_json::json!({ "verb": reserve }),
        ),
        1
    );
    let nodes = "MATCH (n:Literal) RETURN count(n) AS n";
    assert_eq!(db.cypher_count(nodes, none.clone()), 0, "no literal nodes");
    // Removing a source takes its nodes, labels and literals with it.
    let literals = "MATCH (n:Resource) WHERE n.lit_p IS NOT NULL RETURN sum(size(n.lit_p)) AS n";
    let before = db.cypher_count(literals, none.clone());
    store.unload(&["seeds/travel.ttl".to_string()]).unwrap();
    let left = store.tools().unwrap().len() as u64;
    assert!(left < tools.len() as u64);
    assert_eq!(db.cypher_count(tool_nodes, none.clone()), left);
    assert!(db.cypher_count(literals, none.clone()) < before);
    let orphans = "MATCH (n:Resource) WHERE NOT (n)--() AND n.lit_p IS NULL RETURN count(n) AS n";
    assert_eq!(db.cypher_count(orphans, none.clone()), 0);
    // Resources new to the catalog are created without a lookup: loading
    // the source again (its tools new, their entities not) and a resource
    // new with two types leave one node per resource, with every label.
    store.load(&seeds()).unwrap();
    assert_eq!(
        db.cypher_count(tool_nodes, none.clone()),
        tools.len() as u64
    );
    let twice = "urn:toolgraph:test:twice";
    let text = format!(
        "@prefix tg: <{}> .\n<{twice}> a tg:Entity, tg:Instance .",
        toolgraph::vocab::TG
    );
    store
        .load_unchecked(&[Source {
            name: "twice.ttl".into(),
            data: SourceData::Turtle(text),
        }])
        .unwrap();
    let iri = serde_json::json!({ "iri": twice });
    for label in ["Resource", "Entity", "Instance"] {
        let q = format!("MATCH (n:{label} {{iri: $iri}}) RETURN count(n) AS n");
        assert_eq!(db.cypher_count(&q, iri.clone()), 1, "{label}");
    }
    let doubled =
        "MATCH (n:Resource) WITH n.iri AS iri, count(n) AS c WHERE c > 1 RETURN count(iri) AS n";
    assert_eq!(db.cypher_count(doubled, none), 0, "one node per resource");
}

#[test]
fn a_type_is_a_label_and_a_property_entry_while_a_source_gives_it() {
    let db = BoltServer::get().database("types");
    let store = Neo4jStore::connect(&db).unwrap();
    store.load(&seeds()).unwrap();
    let tools = store.tools().unwrap();
    let none = serde_json::json!({});
    let twice = "urn:toolgraph:test:twice";
    let iri = serde_json::json!({ "iri": twice });
    // A type of a labelled class is the label and a property entry, never
    // a relationship; a label goes only when no source gives the type.
    let classes = serde_json::json!({ "classes": [toolgraph::vocab::tg::TOOL,
        toolgraph::vocab::tg::ENTITY, toolgraph::vocab::tg::INSTANCE, toolgraph::vocab::tg::VERB] });
    let type_links = "MATCH ()-[r:TYPE]->(c:Resource) WHERE c.iri IN $classes RETURN count(r) AS n";
    assert_eq!(db.cypher_count(type_links, classes), 0);
    let typed_entry = "MATCH (t:Tool) WHERE '@id' IN t.lit_dt RETURN count(t) AS n";
    assert_eq!(
        db.cypher_count(typed_entry, none.clone()),
        tools.len() as u64
    );
    let source = |name: &str, types: &str| Source {
        name: name.into(),
        data: SourceData::Turtle(format!(
            "@prefix tg: <{}> .\n<{twice}> a {types} .",
            toolgraph::vocab::TG
        )),
    };
    store
        .load_unchecked(&[
            source("twice.ttl", "tg:Entity, tg:Instance"),
            source("again.ttl", "tg:Instance"),
        ])
        .unwrap();
    let labels = |db: &Database| {
        ["Entity", "Instance"].map(|label| {
            let q = format!("MATCH (n:{label} {{iri: $iri}}) RETURN count(n) AS n");
            db.cypher_count(&q, iri.clone())
        })
    };
    let entries = "MATCH (n:Resource {iri: $iri}) RETURN size(n.lit_p) AS n";
    assert_eq!(labels(&db), [1, 1]);
    assert_eq!(db.cypher_count(entries, iri.clone()), 3);
    store.unload(&["again.ttl".to_string()]).unwrap();
    assert_eq!(labels(&db), [1, 1], "twice.ttl still gives Instance");
    assert_eq!(db.cypher_count(entries, iri.clone()), 2);
    store
        .load_unchecked(&[source("twice.ttl", "tg:Entity")])
        .unwrap();
    assert_eq!(labels(&db), [1, 0], "no source gives Instance any more");
    assert_eq!(db.cypher_count(entries, iri.clone()), 1);
    store.unload(&["twice.ttl".to_string()]).unwrap();
    let nodes = "MATCH (n:Resource {iri: $iri}) RETURN count(n) AS n";
    assert_eq!(db.cypher_count(nodes, iri), 0, "an orphan once untyped");
}

#[test]
fn literal_nodes_and_type_links_an_earlier_version_wrote_become_properties_at_connect() {
    let db = BoltServer::get().database("legacy");
    let tool = format!("{}legacy_tool", toolgraph::vocab::TOOL);
    let g = "urn:toolgraph:source:legacy.ttl";
    // The layout before: a relationship to a (:Literal) node per literal.
    let old = "CREATE (t:Resource:Tool {iri: $tool}), (c:Resource {iri: $class}), \
               (t)-[:TYPE {k: 'k0', p: $type, g: $g}]->(c), \
               (t)-[:NAME {k: 'k1', p: $name, g: $g}]->(:Literal {k: 'k1', value: 'legacy_tool', dt: $string, lang: ''}), \
               (t)-[:LABEL {k: 'k2', p: $label, g: $g}]->(:Literal {k: 'k2', value: 'outil', dt: $lang_string, lang: 'fr'}) \
               RETURN count(*) AS n";
    let params = serde_json::json!({
        "tool": tool, "class": toolgraph::vocab::tg::TOOL, "g": g,
        "type": toolgraph::vocab::RDF_TYPE, "name": toolgraph::vocab::tg::NAME,
        "label": toolgraph::vocab::RDFS_LABEL,
        "string": "http://www.w3.org/2001/XMLSchema#string",
        "lang_string": "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString",
    });
    assert_eq!(db.cypher_count(old, params), 1);
    let store = Neo4jStore::connect(&db).unwrap();
    let none = serde_json::json!({});
    let count = |q: &str| db.cypher_count(q, none.clone());
    assert_eq!(count("MATCH (n:Literal) RETURN count(n) AS n"), 0);
    // The type relationship too: the label and a property entry now.
    assert_eq!(count("MATCH ()-[r:TYPE]->() RETURN count(r) AS n"), 0);
    assert_eq!(
        count(
            "MATCH (t:Tool {name: 'legacy_tool'}) WHERE size(t.lit_p) = 3 AND t.label = 'outil' RETURN count(t) AS n"
        ),
        1
    );
    // The same three statements, read back by this replica and a new one.
    let lines = |s: &Neo4jStore| {
        let mut l = s.constellation(&tool).unwrap();
        l.sort();
        l
    };
    let read = lines(&store);
    assert_eq!(read.len(), 3, "{read:?}");
    assert!(read.iter().any(|l| l.contains("\"outil\"@fr")), "{read:?}");
    assert_eq!(lines(&Neo4jStore::connect(&db).unwrap()), read);
    assert_eq!(store.len().unwrap(), 3);
}

#[test]
fn concurrent_writers_never_lose_each_others_sources() {
    let server = BoltServer::get().database("writers");
    let a = Neo4jStore::connect(&server).unwrap();
    let b = Neo4jStore::connect(&server).unwrap();
    let ontology = turtle_sources(&["ontology"]);
    a.load_unchecked(&ontology).unwrap();
    let source_named = |name: &str, tool: &str| Source {
        name: name.into(),
        data: SourceData::Turtle(format!(
            "@prefix tg: <https://toolgraph.dev/ns#> .\n@prefix verb: <https://toolgraph.dev/verb/> .\n<https://toolgraph.dev/tool/{tool}> a tg:Tool ; tg:name \"{tool}\" ; tg:description \"A tool.\" ; tg:performs verb:search .\n"
        )),
    };
    let conflicts = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for (store, prefix) in [(&a, "a"), (&b, "b")] {
            let conflicts = &conflicts;
            s.spawn(move || {
                for i in 0..5 {
                    let src =
                        source_named(&format!("{prefix}{i}.ttl"), &format!("{prefix}_tool_{i}"));
                    // A conflict means nothing was written: try again.
                    for attempt in 0.. {
                        match store.load_unchecked(std::slice::from_ref(&src)) {
                            Ok(_) => break,
                            Err(Error::Conflict(_)) if attempt < 20 => {
                                conflicts.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(e) => panic!("{e}"),
                        }
                    }
                }
            });
        }
    });
    let fresh = Neo4jStore::connect(&server).unwrap();
    let sources = fresh.sources().unwrap();
    for prefix in ["a", "b"] {
        for i in 0..5 {
            assert!(
                sources.contains(&format!("{prefix}{i}.ttl")),
                "{prefix}{i}.ttl lost ({} conflicts retried): {sources:?}",
                conflicts.load(Ordering::Relaxed)
            );
        }
    }
    assert_eq!(fresh.tools().unwrap().len(), 10);
}

#[test]
fn tool_vectors_are_kept_per_model_and_text() {
    let f = Fresh::bolt();
    f.store.load(&seeds()).unwrap();
    let seat = format!("{}airline_seat_reserve", toolgraph::vocab::TOOL);
    let table = format!("{}restaurant_table_reserve", toolgraph::vocab::TOOL);
    let v: Vec<f32> = (0..384).map(|i| (i as f32 * 0.37).sin()).collect();
    f.store
        .put_tool_vectors("m1", &[(seat.clone(), "h1".into(), v.clone())])
        .unwrap();
    let got = f
        .store
        .tool_vectors(
            "m1",
            &[(seat.clone(), "h1".into()), (table.clone(), "h1".into())],
        )
        .unwrap()
        .unwrap();
    assert_eq!(got, vec![Some(v.clone()), None]);
    // Another text or another model: not reusable.
    let other_text = f
        .store
        .tool_vectors("m1", &[(seat.clone(), "h2".into())])
        .unwrap();
    assert_eq!(other_text, Some(vec![None]));
    let other_model = f
        .store
        .tool_vectors("m2", &[(seat.clone(), "h1".into())])
        .unwrap();
    assert_eq!(other_model, Some(vec![None]));
    // The embedded store keeps its vectors in files, not in the graph.
    let embedded = Fresh::embedded();
    assert_eq!(
        embedded
            .store
            .tool_vectors("m1", &[(seat, "h1".into())])
            .unwrap(),
        None
    );
}

fn real_model() -> toolgraph::EngineOptions {
    toolgraph::EngineOptions::memory(toolgraph::Embeddings::Model(
        toolgraph::embed::default_model_dir(),
    ))
}

#[test]
fn a_new_replica_starts_from_the_servers_vectors_and_embeds_nothing() {
    let server = BoltServer::get().database("vectors");
    let a =
        toolgraph::Engine::open_with(Neo4jStore::connect(&server).unwrap(), real_model()).unwrap();
    let first = a
        .load_paths(&[root().join("ontology"), root().join("seeds")], None)
        .unwrap();
    let embedded = first.embeddings.unwrap().embedded;
    assert!(embedded >= 150, "{embedded}");
    // Every tool node carries its vector, model and text hash.
    assert_eq!(
        server.cypher_count(
            "MATCH (t:Tool) WHERE t.embedding IS NOT NULL AND t.embedding_model IS NOT NULL AND t.embedding_hash IS NOT NULL RETURN count(t) AS n",
            serde_json::json!({}),
        ),
        a.catalog_size() as u64
    );
    let b =
        toolgraph::Engine::open_with(Neo4jStore::connect(&server).unwrap(), real_model()).unwrap();
    assert_eq!(b.embeddings_computed(), 0, "the second replica re-embedded");
    assert_eq!(b.catalog_size(), a.catalog_size());
    // A tool registered through a: b catches up, reusing a's vector.
    a.load_paths(&[root().join("tests/fixtures/mcp/tools_list.json")], None)
        .unwrap();
    assert!(b.sync().unwrap().catalog);
    assert_eq!(b.embeddings_computed(), 0);
    assert_eq!(b.catalog_size(), a.catalog_size());
    let r = b
        .search(&toolgraph::SearchRequest {
            text: "reserve seat 14C on flight WN175".into(),
            limit: 5,
            ..toolgraph::SearchRequest::default()
        })
        .unwrap();
    assert!(
        r.matches.iter().any(|m| m.tool == "reserve_seat"),
        "{:?}",
        r.matches.iter().map(|m| &m.tool).collect::<Vec<_>>()
    );
    assert!(!b.sync().unwrap().any());
}

// ---------------------------------------------------------------------------
// Parity with the embedded store.

/// The seed requests of the ranking tests.
const SEED_REQUESTS: &[(Option<&str>, &str)] = &[
    (
        Some("MAKE_RESERVATION"),
        "Southwest flight 175 to Denver tomorrow, window seat",
    ),
    (
        Some("MAKE_RESERVATION"),
        "dinner for two at 8pm at an Italian restaurant",
    ),
    (
        Some("MAKE_RESERVATION"),
        "a room at the Hilton in Paris for 2 nights",
    ),
    (
        Some("MAKE_RESERVATION"),
        "an SUV from Hertz at the airport on Friday",
    ),
    (
        Some("MAKE_RESERVATION"),
        "a checkup with my doctor at the clinic next Tuesday",
    ),
    (
        Some("MAKE_RESERVATION"),
        "two tickets for the concert at Madison Square Garden",
    ),
    (Some("MAKE_RESERVATION"), ""),
    (None, "reserve a seat on a Southwest flight"),
    (None, "a table for two at an Italian restaurant tonight"),
    (None, "person_calendar_book"),
    (None, "refund the last payment of this customer"),
    (None, "send the invoice by email"),
];

fn top5(engine: &toolgraph::Engine, verb: Option<&str>, text: &str) -> Vec<(String, f32)> {
    engine
        .search(&toolgraph::SearchRequest {
            text: text.into(),
            verb: verb.map(str::to_string),
            limit: 5,
            ..toolgraph::SearchRequest::default()
        })
        .unwrap()
        .matches
        .into_iter()
        .map(|m| (m.tool, m.score))
        .collect()
}

#[test]
fn the_seed_requests_get_the_same_top5_on_both_backends() {
    let server = BoltServer::get().database("parity");
    let bolt =
        toolgraph::Engine::open_with(Neo4jStore::connect(&server).unwrap(), real_model()).unwrap();
    bolt.load_paths(&[root().join("ontology"), root().join("seeds")], None)
        .unwrap();
    let embedded = crate::rank::real();
    for (verb, text) in SEED_REQUESTS {
        let (a, b) = (top5(embedded, *verb, text), top5(&bolt, *verb, text));
        assert_eq!(a.len(), 5, "{verb:?} {text:?}: {a:?}");
        let names = |v: &[(String, f32)]| v.iter().map(|(t, _)| t.clone()).collect::<Vec<_>>();
        assert_eq!(names(&a), names(&b), "{verb:?} {text:?}");
        for ((_, x), (_, y)) in a.iter().zip(&b) {
            assert!((x - y).abs() < 1e-4, "{verb:?} {text:?}: {a:?} vs {b:?}");
        }
    }
    // Latency, reported (not asserted): the same requests, 20 rounds each,
    // query embeddings cached after the first round on both.
    let latency = |engine: &toolgraph::Engine| {
        let mut times = Vec::new();
        for _ in 0..20 {
            for (verb, text) in SEED_REQUESTS {
                let t = Instant::now();
                top5(engine, *verb, text);
                times.push(t.elapsed());
            }
        }
        times.sort();
        (times[times.len() / 2], times[times.len() * 99 / 100])
    };
    let (e50, e99) = latency(embedded);
    let (b50, b99) = latency(&bolt);
    eprintln!(
        "seed search latency over {} requests: embedded p50 {e50:?} p99 {e99:?}; bolt p50 {b50:?} p99 {b99:?}",
        SEED_REQUESTS.len() * 20
    );
}

#[test]
fn seal_tools_joint_top1_on_the_bolt_store_matches_the_embedded_store() {
    use toolgraph::eval::{self, EvalOptions, RunSpec, Setting};
    let tools = root().join("benches/datasets/sealtools/tools.jsonl");
    let mut queries =
        eval::load_queries(&root().join("benches/datasets/sealtools/queries.jsonl")).unwrap();
    queries.truncate(300);
    let spec = RunSpec {
        dataset: "sealtools".into(),
        tools: tools.clone(),
        queries,
        modes: vec![toolgraph::rank::Mode::Joint],
        setting: Setting::Global,
        options: EvalOptions::default(),
        embeddings: toolgraph::Embeddings::Off,
        progress: false,
        rank: None,
        dependencies: false,
        context: true,
        compare_context: false,
    };
    // The embedded store on disk, as the eval harness builds it.
    let dir = tempfile::tempdir().unwrap();
    let mut opts = real_model();
    opts.data_dir = Some(dir.path().to_path_buf());
    opts.strict = false;
    let embedded = toolgraph::Engine::open(opts).unwrap();
    embedded
        .load_paths(&[root().join("ontology")], None)
        .unwrap();
    embedded
        .load_paths(&[tools], Some(toolgraph::import::Format::Jsonl))
        .unwrap();
    let on_embedded = eval::run_on(&embedded, &spec).unwrap()[0].overall.clone();
    let top1_embedded = on_embedded.top1;
    drop(embedded);
    // Migrated (statements and vectors) to the Bolt server; a replica there.
    let server = BoltServer::get().database("sealtools");
    let started = Instant::now();
    let m = toolgraph::migrate::migrate(dir.path(), &Neo4jStore::connect(&server).unwrap(), false)
        .unwrap();
    let migrate_time = started.elapsed();
    assert!(m.tools >= 4000 && m.vectors == m.tools, "{m:?}");
    let mut opts = real_model();
    opts.strict = false;
    let started = Instant::now();
    let bolt = toolgraph::Engine::open_with(Neo4jStore::connect(&server).unwrap(), opts).unwrap();
    let open_time = started.elapsed();
    assert_eq!(bolt.embeddings_computed(), 0, "the replica re-embedded");
    let on_bolt = eval::run_on(&bolt, &spec).unwrap()[0].overall.clone();
    let top1_bolt = on_bolt.top1;
    // One registration into the 4k-tool catalog (a new MCP manifest, its
    // tools embedded), timed on both backends: writes are where they differ.
    let manifest = root().join("tests/fixtures/mcp/tools_list.json");
    let register = |engine: &toolgraph::Engine| {
        let started = Instant::now();
        let outcome = engine
            .load_paths(std::slice::from_ref(&manifest), None)
            .unwrap();
        assert!(outcome.embeddings.unwrap().embedded > 0);
        started.elapsed()
    };
    let register_bolt = register(&bolt);
    let mut opts = real_model();
    opts.data_dir = Some(dir.path().to_path_buf());
    opts.strict = false;
    let register_embedded = register(&toolgraph::Engine::open(opts).unwrap());
    // Latency reported, not asserted: the query embeddings are computed on both.
    eprintln!(
        "sealtools joint top1 over 300 queries: embedded {top1_embedded:.4}, bolt {top1_bolt:.4}; search p50/p99 embedded {:.1}/{:.1} ms, bolt {:.1}/{:.1} ms; migrate {} statements in {migrate_time:?}, replica open {open_time:?}; registering an MCP manifest into it: embedded {register_embedded:?}, bolt {register_bolt:?}",
        on_embedded.p50_ms, on_embedded.p99_ms, on_bolt.p50_ms, on_bolt.p99_ms, m.statements
    );
    assert!(top1_embedded > 0.8, "{top1_embedded}");
    assert!(
        (top1_embedded - top1_bolt).abs() <= 0.005,
        "embedded {top1_embedded} vs bolt {top1_bolt}"
    );
}

// ---------------------------------------------------------------------------
// The binary on the graph server.

fn toolgraph_on(server: &GraphServer, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_toolgraph"))
        .args(args)
        .args(["--graph", &server.url, "--graph-user", &server.user])
        .args(["--graph-database", &server.database])
        .current_dir(root())
        .env_remove("TOOLGRAPH_DATA")
        .env("TOOLGRAPH_GRAPH_PASSWORD", &server.password)
        .output()
        .unwrap()
}

fn output_text(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn migrate_copies_a_data_dir_and_every_command_then_runs_on_the_server() {
    let server = BoltServer::get().database("cli");
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let d = data.to_str().unwrap();
    let load = Command::new(env!("CARGO_BIN_EXE_toolgraph"))
        .args(["load", "ontology", "seeds", "--data", d])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(load.status.success(), "{}", output_text(&load));

    let migrated = toolgraph_on(&server, &["migrate", "--from", d, "--to", &server.url]);
    let text = output_text(&migrated);
    assert!(migrated.status.success(), "{text}");
    let tools: usize = text
        .split(" tools)")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{text}"));
    assert!(tools >= 150, "{text}");
    assert!(
        text.contains(&format!("and {tools} tool vectors")),
        "{text}"
    );
    commands_answer_as_on_the_data_dir(&server, d, tools);
    migration_and_credentials_errors(&server, d);
}

/// The server's catalog is the data dir's: the same tools, the same SPARQL
/// answers, search, and a load that embeds only its new tools.
fn commands_answer_as_on_the_data_dir(server: &GraphServer, d: &str, tools: usize) {
    let listed = toolgraph_on(server, &["tools"]);
    assert!(listed.status.success(), "{}", output_text(&listed));
    let local = Command::new(env!("CARGO_BIN_EXE_toolgraph"))
        .args(["tools", "--data", d])
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(output_text(&listed), output_text(&local));
    assert!(output_text(&listed).contains(" tools\n"));
    // The operator's read-only SPARQL answers from the server's statements.
    let count = "SELECT (COUNT(?t) AS ?n) WHERE { ?t a <https://toolgraph.dev/ns#Tool> }";
    let remote = toolgraph_on(server, &["sparql", count]);
    assert!(remote.status.success(), "{}", output_text(&remote));
    let local = Command::new(env!("CARGO_BIN_EXE_toolgraph"))
        .args(["sparql", count, "--data", d])
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(output_text(&remote), output_text(&local));
    assert!(
        output_text(&remote).contains(&tools.to_string()),
        "{}",
        output_text(&remote)
    );
    let update = toolgraph_on(server, &["sparql", "DELETE WHERE { ?s ?p ?o }"]);
    assert!(!update.status.success());
    let search = toolgraph_on(
        server,
        &[
            "search",
            "dinner for two at 8pm at an Italian restaurant",
            "--json",
        ],
    );
    assert!(search.status.success(), "{}", output_text(&search));
    let r: serde_json::Value = serde_json::from_slice(&search.stdout).unwrap();
    assert_eq!(r["matches"][0]["tool"], "restaurant_table_reserve", "{r}");
    let added = toolgraph_on(server, &["load", "tests/fixtures/mcp/tools_list.json"]);
    let text = output_text(&added);
    assert!(added.status.success(), "{text}");
    assert!(text.contains(" embedded, "), "{text}");
    assert!(!text.contains("full re-index"), "{text}");
}

/// A second migration would overwrite it: refused without --replace; a
/// missing password or wrong credentials are errors that name the place.
fn migration_and_credentials_errors(server: &GraphServer, d: &str) {
    let again = toolgraph_on(server, &["migrate", "--from", d, "--to", &server.url]);
    assert!(!again.status.success());
    assert!(
        output_text(&again).contains("--replace"),
        "{}",
        output_text(&again)
    );
    // The password comes from the environment, and its absence is named.
    let no_password = Command::new(env!("CARGO_BIN_EXE_toolgraph"))
        .args(["tools", "--graph", &server.url])
        .env_remove("TOOLGRAPH_GRAPH_PASSWORD")
        .output()
        .unwrap();
    assert!(!no_password.status.success());
    assert!(
        output_text(&no_password).contains("TOOLGRAPH_GRAPH_PASSWORD"),
        "{}",
        output_text(&no_password)
    );
    // Wrong credentials are an error naming the server, not a panic. (A user
    // that does not exist: ArcadeDB locks a user out after a few failed
    // logins, and root is every other test's user.)
    let wrong = Command::new(env!("CARGO_BIN_EXE_toolgraph"))
        .args([
            "tools",
            "--graph",
            &server.url,
            "--graph-user",
            "not-a-user",
        ])
        .args(["--graph-database", &server.database])
        .env("TOOLGRAPH_GRAPH_PASSWORD", "not-the-password")
        .output()
        .unwrap();
    assert!(!wrong.status.success());
    let text = output_text(&wrong);
    assert!(
        text.contains(&server.url) && !text.contains("panicked"),
        "{text}"
    );
}

#[test]
fn two_serve_processes_on_one_server_see_each_others_registrations() {
    use crate::http::call;
    let server = BoltServer::get().database("serve");
    let args = [
        "--graph",
        server.url.as_str(),
        "--graph-user",
        server.user.as_str(),
        "--graph-database",
        server.database.as_str(),
        "--graph-poll",
        "0.5",
        "--schedule-tick",
        "0",
        "--source-root",
        "/",
    ];
    let env = [("TOOLGRAPH_GRAPH_PASSWORD", PASSWORD)];
    let a = crate::process::Server::start(&args, &env);
    let b = crate::process::Server::start(&args, &env);
    let search = |addr| {
        call(
            addr,
            "POST",
            "/v1/search",
            &[("Content-Type", "application/json")],
            br#"{"text": "reserve seat 14C on flight WN175", "limit": 5}"#,
        )
        .json()
    };
    let has_reserve_seat = |v: &serde_json::Value| {
        v["matches"]
            .as_array()
            .is_some_and(|m| m.iter().any(|m| m["tool"] == "reserve_seat"))
    };
    assert!(!has_reserve_seat(&search(b.addr)));
    let body = std::fs::read(root().join("tests/fixtures/mcp/tools_list.json")).unwrap();
    let registered = call(
        a.addr,
        "POST",
        "/v1/tools?source=crm-mcp",
        &[("Content-Type", "application/json")],
        &body,
    );
    assert!(registered.status < 300, "{}", registered.body);
    let acknowledged = Instant::now();
    assert!(has_reserve_seat(&search(a.addr)));
    loop {
        if has_reserve_seat(&search(b.addr)) {
            break;
        }
        assert!(
            acknowledged.elapsed() < Duration::from_secs(30),
            "the other replica never saw the registration"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    eprintln!(
        "a registration through one replica was found through the other after {:?} (poll 0.5 s)",
        acknowledged.elapsed()
    );
    let count = |addr| {
        crate::http::get(addr, "/v1/tools?limit=1", None).json()["total"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(count(a.addr), count(b.addr));
    records_travel_between_replicas(a.addr, b.addr);
}

/// Records travel too, without a catalog change: an airlock review queue,
/// then a usage counter, written through `a`, enforced through `b`.
fn records_travel_between_replicas(a: std::net::SocketAddr, b: std::net::SocketAddr) {
    use crate::http::call;
    let post = |addr, path: &str, body: serde_json::Value| {
        call(
            addr,
            "POST",
            path,
            &[("Content-Type", "application/json")],
            body.to_string().as_bytes(),
        )
    };
    let eventually = |what: &str, ok: &dyn Fn() -> bool| {
        let started = Instant::now();
        while !ok() {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the other replica never saw {what}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    let spec = root().join("tests/fixtures/openapi/travel.yaml");
    let added = post(
        a,
        "/v1/sources",
        serde_json::json!({"kind": "openapi", "location": spec}),
    );
    assert_eq!(added.status, 201, "{}", added.body);
    let source = added.json()["id"].as_str().unwrap().to_string();
    let scanned = post(
        a,
        &format!("/v1/sources/{source}/scan"),
        serde_json::json!({}),
    );
    assert_eq!(scanned.status, 200, "{}", scanned.body);
    let pending_on = |addr| crate::http::get(addr, "/v1/pending", None).json();
    let status_item = pending_on(a)
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == "getFlightStatus")
        .cloned()
        .unwrap_or_else(|| panic!("{}", pending_on(a)));
    eventually("the review queue", &|| {
        pending_on(b)
            .as_array()
            .is_some_and(|items| items.iter().any(|i| i["id"] == status_item["id"]))
    });
    let approved = post(
        a,
        &format!(
            "/v1/pending/{}/approve",
            status_item["id"].as_str().unwrap()
        ),
        serde_json::json!({"rate_limit": 1, "access": {"orgs": ["acme"]}}),
    );
    assert_eq!(approved.status, 200, "{}", approved.body);
    let explain_on = |addr| {
        crate::http::get(
            addr,
            "/v1/policy/explain?tool=getFlightStatus&org=acme",
            None,
        )
        .json()
    };
    eventually("the approved tool", &|| explain_on(b)["allowed"] == true);
    let used = post(
        a,
        "/v1/usage",
        serde_json::json!({"tool": "getFlightStatus", "org": "acme"}),
    );
    assert_eq!(used.status, 200, "{}", used.body);
    eventually("the usage counter", &|| explain_on(b)["allowed"] == false);
    let e = explain_on(b);
    assert!(
        e.to_string()
            .contains("rate limit reached for organization acme"),
        "{e}"
    );
}
