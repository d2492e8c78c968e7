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
