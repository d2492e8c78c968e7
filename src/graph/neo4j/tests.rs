//! Unit tests of the Bolt backend that need no server.

use super::codec::*;
use super::*;
use crate::vocab::{self, tg};
use oxigraph::model::{BlankNode, Literal, NamedNode, Term};

#[test]
fn a_transient_commit_failure_is_a_conflict_to_retry() {
    let server = GraphServer {
        url: "bolt://127.0.0.1:7687".into(),
        user: "root".into(),
        password: String::new(),
        database: "tg".into(),
    };
    // What neo4rs 0.8 returned for a concurrent commit on ArcadeDB.
    let commit = neo4rs::Error::UnexpectedMessage(
        "unexpected response for COMMIT: Failure(Failure { metadata: BoltMap { value: \
         {BoltString { value: \"code\" }: String(BoltString { value: \
         \"Neo.TransientError.Transaction.DeadlockDetected\" })} } })"
            .into(),
    );
    assert!(matches!(bolt_err(&server, commit), Error::Conflict(_)));
    let other = neo4rs::Error::UnexpectedMessage("unexpected response for BEGIN: Ignored".into());
    assert!(matches!(bolt_err(&server, other), Error::Store { .. }));
}

#[test]
fn statements_round_trip_through_their_server_form() {
    let g = NamedNode::new("urn:toolgraph:source:seeds/x.ttl").unwrap();
    let s = NamedNode::new("https://toolgraph.dev/tool/a").unwrap();
    let quads = vec![
        Quad::new(
            s.clone(),
            NamedNode::new(tg::PERFORMS).unwrap(),
            NamedNode::new("https://toolgraph.dev/verb/book").unwrap(),
            g.clone(),
        ),
        Quad::new(
            s.clone(),
            NamedNode::new(vocab::RDFS_LABEL).unwrap(),
            Literal::new_language_tagged_literal("réserver", "fr").unwrap(),
            g.clone(),
        ),
        Quad::new(
            s.clone(),
            NamedNode::new(tg::READ_ONLY).unwrap(),
            Literal::from(true),
            g.clone(),
        ),
        Quad::new(
            BlankNode::new("b0").unwrap(),
            NamedNode::new("urn:x:other").unwrap(),
            Literal::new_simple_literal("plain"),
            GraphName::DefaultGraph,
        ),
        // A type of a labelled class is the label and a property entry.
        Quad::new(
            s.clone(),
            NamedNode::new(vocab::RDF_TYPE).unwrap(),
            NamedNode::new(tg::TOOL).unwrap(),
            g.clone(),
        ),
        // Any other type is a relationship.
        Quad::new(
            s.clone(),
            NamedNode::new(vocab::RDF_TYPE).unwrap(),
            NamedNode::new("urn:x:Class").unwrap(),
            g.clone(),
        ),
    ];
    for q in &quads {
        let st = encode(q).unwrap();
        assert_eq!(&decode(&st).unwrap(), q);
        assert_eq!(
            held_as_property(q),
            !matches!(st.object, Object::Resource(_)),
            "{q}"
        );
        if held_as_property(q) {
            // A property of its subject: no key is kept.
            assert!(st.k.is_empty(), "{q}");
        } else {
            assert_eq!(st.k, key(q));
            assert_eq!(st.k.len(), 32);
        }
    }
    assert_eq!(rel_type(tg::PERFORMS), "PERFORMS");
    assert_eq!(rel_type("urn:x:other"), OTHER_PREDICATE);
    // Every listed type names its predicate back (the read needs no `p`).
    for (p, t) in REL_TYPES {
        assert_eq!(predicate_of(t), Some(*p));
    }
    assert_eq!(predicate_of(OTHER_PREDICATE), None);
    assert_eq!(predicate_of("UNKNOWN"), None);
}

/// A listed relationship type names its predicate, so its items carry no
/// `p`; a STATEMENT keeps it, and goes by its own clause.
#[test]
fn only_a_statement_relationship_keeps_its_predicate() {
    let g = NamedNode::new("urn:g:s").unwrap();
    let tool = NamedNode::new("urn:t:a").unwrap();
    let quad = |p: &str, o: &str| {
        Quad::new(
            tool.clone(),
            NamedNode::new(p).unwrap(),
            NamedNode::new(o).unwrap(),
            g.clone(),
        )
    };
    let added: Vec<Statement> = [
        quad(tg::PERFORMS, "urn:v:book"),
        quad("urn:x:link", "urn:t:b"),
    ]
    .iter()
    .map(|q| encode(q).unwrap())
    .collect();
    let batches = subject_batches(&[], &added, 10);
    let batch = subject_rows(&batches[0], &HashMap::new(), |_| Ok(Vec::new())).unwrap();
    assert_eq!(
        batch.lists,
        [
            ("R_PERFORMS".to_string(), "PERFORMS"),
            ("R_STATEMENT".to_string(), OTHER_PREDICATE)
        ]
    );
    assert_eq!(batch.objects, ["urn:v:book", "urn:t:b"]);
    let row = row_json(&batch, 0);
    let (listed, other) = (&row["R_PERFORMS"][0], &row["R_STATEMENT"][0]);
    assert_eq!(listed.get("p"), None, "{listed}");
    assert_eq!((&listed["g"], &listed["o"]), (&"urn:g:s".into(), &0.into()));
    assert_eq!(other["p"], "urn:x:link");
    assert_eq!(other["o"], 1);
    assert_eq!(other["k"].as_str().map(str::len), Some(32));
    // The clauses: the listed type's keeps no `p`, the STATEMENT's does.
    let link = with_identifier(Q_CREATE_LINK, "__TYPE__", "PERFORMS");
    assert!(link.contains("[:PERFORMS {k: it.k, g: it.g}]"), "{link}");
    assert!(Q_CREATE_STATEMENT.contains("[:STATEMENT {k: it.k, p: it.p, g: it.g}]"));
}

#[test]
fn query_files_name_only_listed_identifiers() {
    for (_, t) in REL_TYPES {
        let q = with_identifier(Q_CREATE_LINK, "__TYPE__", t);
        assert!(q.contains(&format!("[:{t} {{")), "{q}");
        assert!(!q.contains("//"));
    }
    for (_, l) in LABELS {
        assert!(with_identifier(Q_LABEL, "__LABEL__", l).contains(&format!("SET e:{l}")));
    }
}

#[test]
fn a_write_goes_by_subject_links_as_relationships_and_literals_as_properties() {
    let tool = NamedNode::new("urn:t:a").unwrap();
    let other = NamedNode::new("urn:t:b").unwrap();
    let verb = NamedNode::new("urn:v:book").unwrap();
    let g = NamedNode::new("urn:g:s").unwrap();
    let quad = |s: &NamedNode, p: &str, o: Term| {
        Quad::new(s.clone(), NamedNode::new(p).unwrap(), o, g.clone())
    };
    let added = [
        quad(&tool, tg::PERFORMS, verb.clone().into()),
        quad(&tool, tg::NAME, Literal::new_simple_literal("a").into()),
        quad(
            &tool,
            "urn:x:other",
            Literal::new_simple_literal("x").into(),
        ),
        quad(&other, tg::PERFORMS, verb.clone().into()),
    ];
    let removed = [quad(
        &other,
        tg::DESCRIPTION,
        Literal::new_simple_literal("old").into(),
    )];
    let added: Vec<Statement> = added.iter().map(|q| encode(q).unwrap()).collect();
    let removed: Vec<Statement> = removed.iter().map(|q| encode(q).unwrap()).collect();
    // Both subjects fit in one batch of 5: one row each.
    let batches = subject_batches(&removed, &added, 5);
    assert_eq!(batches.len(), 1);
    let a = &batches[0][0];
    assert_eq!((a.s, a.links.len()), ("urn:t:a", 1));
    assert_eq!(a.literals, Some(Default::default()), "its literals changed");
    let b = &batches[0][1];
    assert_eq!(
        b.literals,
        Some(["DESCRIPTION"].into()),
        "lost a description"
    );
    // The literals come from the mirror as the write leaves it.
    let now = |s: &str| -> Result<Vec<Statement>> {
        Ok(match s {
            "urn:t:a" => added[1..3].to_vec(),
            _ => Vec::new(),
        })
    };
    let batch = subject_rows(&batches[0], &HashMap::new(), now).unwrap();
    assert_eq!(batch.rows.len(), 2, "one row per subject");
    assert_eq!(batch.lists, [("R_PERFORMS".to_string(), "PERFORMS")]);
    assert_eq!(batch.objects, ["urn:v:book"], "one lookup for both links");
    let (a, b) = (row_json(&batch, 0), row_json(&batch, 1));
    assert_eq!(a["R_PERFORMS"][0]["o"], 0);
    let props = &a["props"];
    assert_eq!(props["name"], "a", "a readable copy");
    assert_eq!(props["lit_p"], serde_json::json!([tg::NAME, "urn:x:other"]));
    assert_eq!(props["lit_v"], serde_json::json!(["a", "x"]));
    assert_eq!(props["lit_g"], serde_json::json!(["urn:g:s", "urn:g:s"]));
    assert_eq!(
        props.get("statement"),
        None,
        "no copy for unlisted predicates"
    );
    // b's last literal went: every list and its description are removed.
    for key in [
        "lit_p",
        "lit_g",
        "lit_v",
        "lit_dt",
        "lit_lang",
        "description",
    ] {
        assert_eq!(b["props"][key], serde_json::Value::Null, "{key}");
        assert!(
            b["props"].get(key).is_some(),
            "{key} set to null, not left out"
        );
    }
    // A batch never splits a subject; one larger than a batch is its own.
    assert_eq!(subject_batches(&removed, &added, 3).len(), 2);
    assert_eq!(subject_batches(&removed, &added, 1).len(), 2);
    assert!(subject_batches(&[], &[], 4).is_empty());
    // Every clause the lists name is valid text: a closed identifier each.
    for (key, rel) in &batch.lists {
        let clause = with_identifier(Q_CREATE_LINK, "__TYPE__", rel);
        assert!(with_identifier(&clause, "__KEY__", key).contains(&format!("row.{key}")));
    }
}

/// A type of a labelled class goes with its subject's literal statements:
/// an entry of the lists (`@id` for a datatype), no relationship, no
/// readable copy (the label says it); any other type stays a link.
#[test]
fn a_type_of_a_labelled_class_is_a_property_entry_not_a_link() {
    let g = NamedNode::new("urn:g:s").unwrap();
    let tool = NamedNode::new("urn:t:a").unwrap();
    let quad = |p: &str, o: Term| Quad::new(tool.clone(), NamedNode::new(p).unwrap(), o, g.clone());
    let class = |c: &str| Term::from(NamedNode::new(c).unwrap());
    let quads = [
        quad(vocab::RDF_TYPE, class(tg::TOOL)),
        quad(vocab::RDF_TYPE, class("urn:x:Class")),
        quad(tg::NAME, Literal::new_simple_literal("a").into()),
    ];
    let added: Vec<Statement> = quads.iter().map(|q| encode(q).unwrap()).collect();
    assert_eq!(added[0].object, Object::Class(tg::TOOL.to_string()));
    let batches = subject_batches(&[], &added, 10);
    let write = &batches[0][0];
    assert_eq!(write.links.len(), 1, "only the unlabelled class's type");
    assert_eq!(write.literals, Some(Default::default()));
    let now = |_: &str| -> Result<Vec<Statement>> { Ok(vec![added[0].clone(), added[2].clone()]) };
    let batch = subject_rows(&batches[0], &HashMap::new(), now).unwrap();
    assert_eq!(batch.lists, [("R_TYPE".to_string(), "TYPE")]);
    assert_eq!(batch.objects, ["urn:x:Class"]);
    let props = &row_json(&batch, 0)["props"];
    assert_eq!(
        props["lit_p"],
        serde_json::json!([vocab::RDF_TYPE, tg::NAME])
    );
    assert_eq!(props["lit_v"], serde_json::json!([tg::TOOL, "a"]));
    let string = "http://www.w3.org/2001/XMLSchema#string";
    assert_eq!(props["lit_dt"], serde_json::json!([CLASS_DATATYPE, string]));
    assert_eq!(props["lit_lang"], serde_json::json!(["", ""]));
    assert_eq!(props["name"], "a");
    assert_eq!(props.get("type"), None, "the label says it");
    // Losing it rewrites the subject's entries; no readable copy to drop.
    let batches = subject_batches(&added[..1], &[], 10);
    assert_eq!(batches[0][0].literals, Some(Default::default()));
}

/// A batch's row `i` as JSON, by key, for assertions.
fn row_json(batch: &SubjectRows, i: usize) -> HashMap<String, serde_json::Value> {
    let BoltType::Map(m) = &batch.rows[i] else {
        panic!("a row is a map")
    };
    m.value
        .iter()
        .map(|(k, v)| (k.value.clone(), bolt_json(v)))
        .collect()
}

/// A Bolt value as JSON, for assertions.
fn bolt_json(v: &BoltType) -> serde_json::Value {
    match v {
        BoltType::String(s) => s.value.clone().into(),
        BoltType::Integer(i) => i.value.into(),
        BoltType::Null(_) => serde_json::Value::Null,
        BoltType::List(l) => l.value.iter().map(bolt_json).collect(),
        BoltType::Map(m) => m
            .value
            .iter()
            .map(|(k, v)| (k.value.clone(), bolt_json(v)))
            .collect::<serde_json::Map<_, _>>()
            .into(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_resource_is_new_only_when_no_statement_named_it_before() {
    use crate::graph::{GraphStore, Source, SourceData};
    let store = OxigraphStore::memory().unwrap();
    let turtle = |name: &str, text: &str| Source {
        name: name.into(),
        data: SourceData::Turtle(format!("@prefix tg: <{}> .\n{text}", vocab::TG)),
    };
    let first = [turtle(
        "a.ttl",
        "<urn:t:old> a tg:Tool . <urn:t:user> tg:dependsOn <urn:t:named> .",
    )];
    store.load_unchecked(&first).unwrap();
    let second = [turtle(
        "b.ttl",
        "<urn:t:new> a tg:Tool ; tg:dependsOn <urn:t:old> .
         <urn:t:old> a tg:Entity .
         <urn:t:named> a tg:Tool .
         _:p a tg:Parameter .",
    )];
    let change = crate::graph::Change {
        load: &second,
        unload: &[],
        remove_tools: &[],
        check: false,
    };
    let graphs = OxigraphStore::graphs_written(&change).unwrap().unwrap();
    let before = store.quads_in(&graphs).unwrap();
    store.load_unchecked(&second).unwrap();
    let difference = diff::in_graphs(&store, &graphs, before).unwrap();
    assert!(difference.removed.is_empty());
    assert_eq!(difference.added.len(), 5, "{:?}", difference.added);
    let mut new: Vec<&str> = difference.new_typed.iter().map(String::as_str).collect();
    new.sort_unstable();
    // The old tool (a subject before) and the named one (an object before)
    // have nodes on the server already; the blank parameter is new.
    assert_eq!(new.len(), 2, "{new:?}");
    assert_eq!(new[1], "urn:t:new");
    assert!(new[0].starts_with("_:"), "{new:?}");
}

/// Resources this write created are named by the node ids their creation
/// returned: a batch whose every subject has one goes by id, and objects
/// with one come after those by IRI.
#[test]
fn created_resources_are_named_by_their_node_ids() {
    let g = NamedNode::new("urn:g:s").unwrap();
    let quad = |s: &str, p: &str, o: &str| {
        Quad::new(
            NamedNode::new(s).unwrap(),
            NamedNode::new(p).unwrap(),
            NamedNode::new(o).unwrap(),
            g.clone(),
        )
    };
    let added: Vec<Statement> = [
        quad("urn:t:a", tg::PERFORMS, "urn:v:book"),
        quad("urn:t:a", tg::PARAMETER_PROP, "urn:t:a/p"),
        quad("urn:t:b", tg::PERFORMS, "urn:v:book"),
    ]
    .iter()
    .map(|q| encode(q).unwrap())
    .collect();
    let batches = subject_batches(&[], &added, 10);
    let ids: HashMap<String, i64> = [("urn:t:a", 7), ("urn:t:b", 8), ("urn:t:a/p", 9)]
        .map(|(i, n)| (i.to_string(), n))
        .into();
    let batch = subject_rows(&batches[0], &ids, |_| Ok(Vec::new())).unwrap();
    assert!(batch.by_id);
    assert_eq!(batch.objects, ["urn:v:book"]);
    assert_eq!(batch.known, [9]);
    let a = row_json(&batch, 0);
    assert_eq!((a["sid"].clone(), a.get("s")), (7.into(), None));
    assert_eq!(a["R_PERFORMS"][0]["o"], 0, "by IRI first");
    assert_eq!(a["R_HAS_PARAMETER"][0]["o"], 1, "then by id");
    assert_eq!(row_json(&batch, 1)["sid"], 8);
    // One subject without an id: the whole batch goes by IRI.
    let some: HashMap<String, i64> = [("urn:t:a".to_string(), 7)].into();
    let batch = subject_rows(&batches[0], &some, |_| Ok(Vec::new())).unwrap();
    assert!(!batch.by_id);
    assert_eq!(row_json(&batch, 0)["s"], "urn:t:a");
    assert_eq!(batch.known, Vec::<i64>::new());
    assert_eq!(batch.objects, ["urn:v:book", "urn:t:a/p"]);
}

#[test]
fn a_relationship_row_reads_as_its_statement_in_any_layout() {
    let row = |cells: [&str; 8]| cells.map(|c| (!c.is_empty()).then(|| c.to_string()));
    let tool = "https://toolgraph.dev/tool/a";
    let g = "urn:toolgraph:source:seeds/x.ttl";
    // A listed predicate named by the relationship's type alone.
    let verb = "https://toolgraph.dev/verb/book";
    let (st, legacy) =
        read::relationship(row([tool, "", "PERFORMS", g, verb, "", "", ""])).unwrap();
    assert_eq!(
        (st.p.as_str(), st.g.as_str(), legacy),
        (tg::PERFORMS, g, false)
    );
    assert!(matches!(&st.object, Object::Resource(o) if o == verb));
    // A predicate outside the list keeps its IRI in `p`.
    let other = "https://example.org/seeAlso";
    let (st, _) = read::relationship(row([tool, other, "STATEMENT", g, verb, "", "", ""])).unwrap();
    assert_eq!(st.p, other);
    // Earlier layouts: a type of a labelled class as a relationship, and a
    // literal node; both counted for the move at connect.
    let class = tg::TOOL.to_string();
    let (st, legacy) = read::relationship(row([
        tool,
        vocab::RDF_TYPE,
        "STATEMENT",
        g,
        &class,
        "",
        "",
        "",
    ]))
    .unwrap();
    assert!(legacy && matches!(&st.object, Object::Class(c) if *c == class));
    let (st, legacy) = read::relationship(row([
        tool,
        tg::DESCRIPTION,
        "STATEMENT",
        g,
        "",
        "Books",
        "",
        "en",
    ]))
    .unwrap();
    assert!(legacy);
    assert!(
        matches!(&st.object, Object::Literal { value, lang, .. } if value == "Books" && lang == "en")
    );
    // No predicate at all is named as an error.
    let err = read::relationship(row([tool, "", "WHATEVER", g, verb, "", "", ""])).unwrap_err();
    assert!(err.to_string().contains("no predicate"), "{err}");
}

#[test]
fn a_subjects_property_lists_read_as_its_statements_or_are_refused() {
    let s = "https://toolgraph.dev/tool/a".to_string();
    let g = "urn:toolgraph:source:seeds/x.ttl".to_string();
    let lists = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let class = tg::TOOL.to_string();
    let columns = [
        lists(&[tg::NAME, vocab::RDF_TYPE]),
        vec![g.clone(), g.clone()],
        lists(&["book_flight", &class]),
        lists(&["", CLASS_DATATYPE]),
        lists(&["", ""]),
    ];
    let read = read::held_as_properties(s.clone(), columns).unwrap();
    assert_eq!(read.len(), 2);
    assert!(matches!(&read[0].object, Object::Literal { value, .. } if value == "book_flight"));
    assert!(matches!(&read[1].object, Object::Class(c) if *c == class));
    assert!(read.iter().all(|st| st.s == s && st.g == g));
    let uneven = [
        lists(&[tg::NAME]),
        vec![],
        lists(&["x"]),
        lists(&[""]),
        lists(&[""]),
    ];
    let err = read::held_as_properties(s, uneven).unwrap_err();
    assert!(err.to_string().contains("differ in length"), "{err}");
}

#[test]
fn a_mirror_built_from_chunks_stops_at_the_first_error_and_tells_changes_apart() {
    let g = NamedNode::new("urn:toolgraph:source:seeds/x.ttl").unwrap();
    let state = NamedNode::new_unchecked(crate::graph::oxigraph::STATE_GRAPH);
    let quad = |s: &str, graph: &NamedNode| {
        Quad::new(
            NamedNode::new(format!("https://toolgraph.dev/tool/{s}")).unwrap(),
            NamedNode::new(tg::NAME).unwrap(),
            Literal::new_simple_literal(s),
            graph.clone(),
        )
    };
    let build =
        |chunks: Vec<Vec<Quad>>| OxigraphStore::from_chunks(chunks.into_iter().map(Ok)).unwrap();
    let empty = OxigraphStore::memory().unwrap();
    let a = build(vec![
        vec![quad("a", &g)],
        vec![quad("b", &g), quad("r", &state)],
    ]);
    assert_eq!(GraphStore::len(&a).unwrap(), 3);
    // First read: what is there is new, told apart by graph.
    assert_eq!(a.differs_from(&empty, &state).unwrap(), (true, true));
    let only_catalog = build(vec![vec![quad("a", &g)]]);
    assert_eq!(
        only_catalog.differs_from(&empty, &state).unwrap(),
        (true, false)
    );
    // The same quads in other chunks: nothing changed.
    let same = build(vec![
        vec![quad("r", &state), quad("b", &g)],
        vec![quad("a", &g)],
    ]);
    assert_eq!(same.differs_from(&a, &state).unwrap(), (false, false));
    // As many quads, one of them another: a catalog change only.
    let swapped = build(vec![vec![quad("a", &g), quad("c", &g), quad("r", &state)]]);
    assert_eq!(swapped.differs_from(&a, &state).unwrap(), (true, false));
    // A record gone: a records change only.
    let fewer = build(vec![vec![quad("a", &g), quad("b", &g)]]);
    assert_eq!(fewer.differs_from(&a, &state).unwrap(), (false, true));
    assert_eq!(empty.differs_from(&a, &state).unwrap(), (true, true));
    // A chunk that failed stops the build with its error.
    let chunks = vec![
        Ok(vec![quad("a", &g)]),
        Err(Error::store_msg("a chunk refused")),
        Ok(vec![quad("b", &g)]),
    ];
    let err = OxigraphStore::from_chunks(chunks).unwrap_err();
    assert!(err.to_string().contains("a chunk refused"), "{err}");
}
