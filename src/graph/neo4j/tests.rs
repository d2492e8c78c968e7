//! Unit tests of the Bolt backend that need no server.

use super::codec::*;
use super::*;
use crate::vocab::{self, tg};
use oxigraph::model::{BlankNode, Literal, NamedNode};

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
    ];
    for q in &quads {
        let st = encode(q).unwrap();
        assert_eq!(&decode(&st).unwrap(), q);
        assert_eq!(st.k, key(q));
        assert_eq!(st.k.len(), 32);
    }
    assert_eq!(rel_type(tg::PERFORMS), "PERFORMS");
    assert_eq!(rel_type("urn:x:other"), OTHER_PREDICATE);
}

#[test]
fn query_files_name_only_listed_identifiers() {
    for (_, t) in REL_TYPES {
        let q = with_identifier(Q_CREATE_LINKS, "__TYPE__", t);
        assert!(q.contains(&format!("[:{t} {{")), "{q}");
        assert!(!q.contains("//"));
    }
    for (_, l) in LABELS {
        assert!(with_identifier(Q_LABEL, "__LABEL__", l).contains(&format!("SET n:{l}")));
    }
}
