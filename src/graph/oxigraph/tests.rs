//! The embedded store on small Turtle documents.

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

const BULK_ONTOLOGY: &str = r#"
    @prefix tg: <https://toolgraph.dev/ns#> .
    @prefix skos: <http://www.w3.org/2004/02/skos/core#> .
    <https://toolgraph.dev/verb/book> a tg:Verb ; skos:prefLabel "book" .
    <https://toolgraph.dev/entity/Flight> a tg:Entity ; skos:prefLabel "flight" .
"#;

fn bulk_tool(name: &str, verb: bool) -> String {
    let performs = if verb {
        "tg:performs <https://toolgraph.dev/verb/book> ;"
    } else {
        ""
    };
    format!(
        r#"@prefix tg: <https://toolgraph.dev/ns#> .
        <https://toolgraph.dev/tool/{name}> a tg:Tool ; tg:name "{name}" ; {performs}
            tg:description "Books a flight" ; tg:actsOn <https://toolgraph.dev/entity/Flight> ."#
    )
}

fn turtle(name: &str, text: String) -> Source {
    Source {
        name: name.into(),
        data: SourceData::Turtle(text),
    }
}

/// Every quad as text, sorted (no blank nodes in these sources).
fn dump(store: &OxigraphStore) -> Vec<String> {
    let mut out: Vec<String> = store.store.iter().map(|q| q.unwrap().to_string()).collect();
    out.sort();
    out
}

#[test]
fn the_bulk_path_stores_what_a_transaction_stores() {
    let dir = tempfile::tempdir().unwrap();
    let mut bulk = OxigraphStore::open(&dir.path().join("bulk")).unwrap();
    bulk.bulk_from = 0;
    let mut transaction = OxigraphStore::open(&dir.path().join("transaction")).unwrap();
    transaction.bulk_from = usize::MAX;
    for store in [&bulk, &transaction] {
        store
            .load(&[turtle("ontology.ttl", BULK_ONTOLOGY.into())])
            .unwrap();
        let report = store
            .load(&[turtle("tools.ttl", bulk_tool("book_flight", true))])
            .unwrap();
        assert_eq!(report.tools, 1);
        // Replaced: not a pure addition, so the transaction path, in both.
        store
            .load(&[turtle("tools.ttl", bulk_tool("reserve_flight", true))])
            .unwrap();
    }
    let got = dump(&bulk);
    assert_eq!(got, dump(&transaction));
    assert!(got.iter().any(|q| q.contains("reserve_flight")), "{got:?}");
    assert!(!got.iter().any(|q| q.contains("book_flight")), "{got:?}");
    assert!(!got.iter().any(|q| q.contains("#loading")), "{got:?}");
    assert!(got.iter().any(|q| q.contains("#contentHash")), "{got:?}");
}

#[test]
fn a_bulk_load_that_breaks_a_constraint_leaves_the_store_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = OxigraphStore::open(dir.path()).unwrap();
    store
        .load(&[turtle("ontology.ttl", BULK_ONTOLOGY.into())])
        .unwrap();
    store.bulk_from = 0;
    let before = dump(&store);
    let err = store
        .load(&[turtle("tools.ttl", bulk_tool("no_verb", false))])
        .unwrap_err();
    let Error::Violations(v) = err else {
        panic!("{err}")
    };
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].rule, "tool_without_verb");
    assert!(v[0].subject.ends_with("no_verb"), "{v:?}");
    assert_eq!(dump(&store), before);
    assert_eq!(store.sources().unwrap(), ["ontology.ttl"]);
}

#[test]
fn a_bulk_load_cut_short_is_gone_when_the_store_opens_again() {
    let dir = tempfile::tempdir().unwrap();
    let before = {
        let store = OxigraphStore::open(dir.path()).unwrap();
        store
            .load(&[turtle("ontology.ttl", BULK_ONTOLOGY.into())])
            .unwrap();
        let before = dump(&store);
        // The ingest happened, the process died before the check.
        let quads = parse_turtle("tools.ttl", &bulk_tool("book_flight", true)).unwrap();
        let known = quads[0].clone();
        store
            .ingest(&[bulk::Fresh {
                name: "tools.ttl",
                quads: &quads,
                known,
            }])
            .unwrap();
        assert!(dump(&store).iter().any(|q| q.contains("book_flight")));
        before
    };
    let store = OxigraphStore::open(dir.path()).unwrap();
    assert_eq!(dump(&store), before);
    assert_eq!(store.sources().unwrap(), ["ontology.ttl"]);
}
