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
        for clause in [Q_CREATE_LINK, Q_CREATE_LITERAL] {
            let q = with_identifier(clause, "__TYPE__", t);
            assert!(q.contains(&format!("[:{t} {{")), "{q}");
            assert!(!q.contains("//"));
        }
    }
    for (_, l) in LABELS {
        assert!(with_identifier(Q_LABEL, "__LABEL__", l).contains(&format!("SET e:{l}")));
    }
}

#[test]
fn statements_are_grouped_by_subject_in_batches_with_one_list_per_type_and_kind() {
    let tool = NamedNode::new("urn:t:a").unwrap();
    let other = NamedNode::new("urn:t:b").unwrap();
    let verb = NamedNode::new("urn:v:book").unwrap();
    let g = NamedNode::new("urn:g:s").unwrap();
    let quads = [
        Quad::new(
            tool.clone(),
            NamedNode::new(tg::PERFORMS).unwrap(),
            verb.clone(),
            g.clone(),
        ),
        Quad::new(
            tool.clone(),
            NamedNode::new(tg::NAME).unwrap(),
            Literal::new_simple_literal("a"),
            g.clone(),
        ),
        Quad::new(
            tool.clone(),
            NamedNode::new("urn:x:other").unwrap(),
            Literal::new_simple_literal("x"),
            g.clone(),
        ),
        Quad::new(
            other.clone(),
            NamedNode::new(tg::NAME).unwrap(),
            Literal::new_simple_literal("b"),
            g.clone(),
        ),
    ];
    let statements: Vec<Statement> = quads.iter().map(|q| encode(q).unwrap()).collect();
    // Both subjects fit in one batch of 4: one row each, the union of lists.
    let batches = subject_batches(&statements, 4);
    assert_eq!(batches.len(), 1);
    let (rows, lists) = subject_rows(&batches[0]);
    assert_eq!(rows.len(), 2, "one row per subject");
    let keys: Vec<&str> = lists.iter().map(|(k, _, _)| k.as_str()).collect();
    assert_eq!(keys, ["L_NAME", "L_STATEMENT", "R_PERFORMS"]);
    assert!(lists.contains(&("R_PERFORMS".to_string(), "PERFORMS", false)));
    assert!(lists.contains(&("L_NAME".to_string(), "NAME", true)));
    // A batch never splits a subject: 3 statements of one, then 1 of the other.
    let batches = subject_batches(&statements, 3);
    assert_eq!(batches.len(), 2);
    let (first, first_lists) = subject_rows(&batches[0]);
    assert_eq!(first.len(), 1);
    assert_eq!(first_lists.len(), 3, "urn:t:a's three lists");
    assert_eq!(
        subject_rows(&batches[1]).1,
        vec![("L_NAME".to_string(), "NAME", true)]
    );
    // A subject larger than a batch is a batch of its own.
    assert_eq!(subject_batches(&statements, 1).len(), 2);
    assert!(subject_batches(&[], 4).is_empty());
    // Every clause the lists name is valid text: a closed identifier each.
    for (key, rel, _) in &lists {
        let clause = with_identifier(Q_CREATE_LINK, "__TYPE__", rel);
        assert!(with_identifier(&clause, "__KEY__", key).contains(&format!("row.{key}")));
    }
}
