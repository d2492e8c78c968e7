//! How RDF statements are held on the graph server: a relationship per
//! statement, typed from a closed predicate list, literal objects as
//! `(:Literal)` nodes, node labels mirroring `rdf:type`.

use crate::error::{Error, Result};
use crate::vocab::{self, tg};
use neo4rs::BoltType;
use oxigraph::model::{BlankNode, GraphName, Literal, NamedNode, NamedOrBlankNode, Quad, Term};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Relationship types by predicate: a closed list (a type is never built from
/// data); any other predicate is a `STATEMENT` with its IRI in `p`.
pub(super) const REL_TYPES: &[(&str, &str)] = &[
    (vocab::RDF_TYPE, "TYPE"),
    (vocab::RDFS_LABEL, "LABEL"),
    (vocab::SKOS_PREF_LABEL, "PREF_LABEL"),
    (vocab::SKOS_ALT_LABEL, "ALT_LABEL"),
    (vocab::SKOS_BROADER, "BROADER"),
    (tg::NAME, "NAME"),
    (tg::DESCRIPTION, "DESCRIPTION"),
    (tg::MODEL_DESCRIPTION, "MODEL_DESCRIPTION"),
    (tg::PERFORMS, "PERFORMS"),
    (tg::ACTS_ON, "ACTS_ON"),
    (tg::PRIMARY_ENTITY, "PRIMARY_ENTITY"),
    (tg::MENTIONS, "MENTIONS"),
    (tg::IN_DOMAIN, "IN_DOMAIN"),
    (tg::IN_CATEGORY, "IN_CATEGORY"),
    (tg::REQUIRES_INTEGRATION, "REQUIRES_INTEGRATION"),
    (tg::AVAILABLE_ON_CHANNEL, "AVAILABLE_ON_CHANNEL"),
    (tg::READ_ONLY, "READ_ONLY"),
    (tg::DESTRUCTIVE, "DESTRUCTIVE"),
    (tg::DEPENDS_ON, "DEPENDS_ON"),
    (tg::UNIVERSAL, "UNIVERSAL"),
    (tg::PARAMETER_PROP, "HAS_PARAMETER"),
    (tg::PARAM_NAME, "PARAM_NAME"),
    (tg::PARAM_TYPE, "PARAM_TYPE"),
    (tg::PARAM_DESCRIPTION, "PARAM_DESCRIPTION"),
    (tg::PARAM_REQUIRED, "PARAM_REQUIRED"),
    (tg::PARAM_ENTITY, "PARAM_ENTITY"),
    (tg::SOURCE, "SOURCE"),
    (tg::INSTANCE_OF, "INSTANCE_OF"),
    (tg::EVIDENCES, "EVIDENCES"),
    (tg::SIBLING_OF, "SIBLING_OF"),
    (tg::DEPENDENCY, "HAS_DEPENDENCY"),
    (tg::DEPENDENCY_ON, "DEPENDENCY_ON"),
    (tg::DEPENDENCE_TYPE, "DEPENDENCE_TYPE"),
    (tg::DEPENDENCY_PARAMETER, "DEPENDENCY_PARAMETER"),
    (tg::DEPENDENCY_REASON, "DEPENDENCY_REASON"),
];
pub(super) const OTHER_PREDICATE: &str = "STATEMENT";

/// Node labels by class (`rdf:type`).
pub(super) const LABELS: &[(&str, &str)] = &[
    (tg::TOOL, "Tool"),
    (tg::VERB, "Verb"),
    (tg::ENTITY, "Entity"),
    (tg::INSTANCE, "Instance"),
    (tg::DOMAIN, "Domain"),
    (tg::CATEGORY, "Category"),
    (tg::INTEGRATION, "Integration"),
    (tg::CHANNEL, "Channel"),
    (tg::PROFILE, "Profile"),
    (tg::GOAL, "Goal"),
    (tg::PARAMETER, "Parameter"),
    (tg::PLATFORM, "Platform"),
    (tg::ORGANIZATION, "Organization"),
    (tg::AGENT, "Agent"),
    (tg::AGENT_SUBTYPE, "AgentSubtype"),
    (tg::INTENT, "Intent"),
];

pub(super) fn rel_type(predicate: &str) -> &'static str {
    REL_TYPES
        .iter()
        .find(|(p, _)| *p == predicate)
        .map_or(OTHER_PREDICATE, |(_, t)| t)
}

pub(super) fn node_id(n: &NamedOrBlankNode) -> String {
    match n {
        NamedOrBlankNode::NamedNode(n) => n.as_str().to_string(),
        NamedOrBlankNode::BlankNode(b) => format!("_:{}", b.as_str()),
    }
}

pub(super) fn parse_node(s: &str) -> Result<NamedOrBlankNode> {
    match s.strip_prefix("_:") {
        Some(id) => BlankNode::new(id)
            .map(Into::into)
            .map_err(|e| Error::store(format!("a blank node id `{s}` on the server"), e)),
        None => NamedNode::new(s)
            .map(Into::into)
            .map_err(|e| Error::store(format!("an IRI `{s}` on the server"), e)),
    }
}

/// One statement as the server holds it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Statement {
    pub k: String,
    pub s: String,
    pub p: String,
    pub g: String,
    pub object: Object,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Object {
    Resource(String),
    Literal {
        value: String,
        dt: String,
        lang: String,
    },
}

pub(super) fn key(q: &Quad) -> String {
    let digest = Sha256::digest(q.to_string().as_bytes());
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}

pub(super) fn encode(q: &Quad) -> Result<Statement> {
    let object = match &q.object {
        Term::NamedNode(n) => Object::Resource(n.as_str().to_string()),
        Term::BlankNode(b) => Object::Resource(format!("_:{}", b.as_str())),
        Term::Literal(l) => Object::Literal {
            value: l.value().to_string(),
            dt: l.datatype().as_str().to_string(),
            lang: l.language().unwrap_or_default().to_string(),
        },
        #[allow(unreachable_patterns)]
        _ => {
            return Err(Error::store_msg(format!(
                "a statement the graph server cannot hold: {q}"
            )));
        }
    };
    let g = match &q.graph_name {
        GraphName::NamedNode(n) => n.as_str().to_string(),
        GraphName::BlankNode(b) => format!("_:{}", b.as_str()),
        GraphName::DefaultGraph => String::new(),
    };
    Ok(Statement {
        k: key(q),
        s: node_id(&q.subject),
        p: q.predicate.as_str().to_string(),
        g,
        object,
    })
}

pub(super) fn decode(st: &Statement) -> Result<Quad> {
    let subject = parse_node(&st.s)?;
    let predicate = NamedNode::new(&st.p)
        .map_err(|e| Error::store(format!("a predicate `{}` on the server", st.p), e))?;
    let object: Term = match &st.object {
        Object::Resource(o) => match parse_node(o)? {
            NamedOrBlankNode::NamedNode(n) => n.into(),
            NamedOrBlankNode::BlankNode(b) => b.into(),
        },
        Object::Literal { value, dt, lang } => {
            if !lang.is_empty() {
                Literal::new_language_tagged_literal(value, lang)
                    .map_err(|e| Error::store(format!("a language tag `{lang}`"), e))?
                    .into()
            } else if dt.is_empty() {
                Literal::new_simple_literal(value).into()
            } else {
                let dt = NamedNode::new(dt)
                    .map_err(|e| Error::store(format!("a datatype `{dt}`"), e))?;
                Literal::new_typed_literal(value, dt).into()
            }
        }
    };
    let graph: GraphName = if st.g.is_empty() {
        GraphName::DefaultGraph
    } else {
        match parse_node(&st.g)? {
            NamedOrBlankNode::NamedNode(n) => n.into(),
            NamedOrBlankNode::BlankNode(b) => b.into(),
        }
    };
    Ok(Quad::new(subject, predicate, object, graph))
}

/// One batch of [`subject_batches`]: subjects with their statements.
pub(super) type Subjects<'a> = Vec<(&'a str, Vec<&'a Statement>)>;

/// The rows of one batch for `create_statements.cypher`, and the lists they
/// use as (row key, relationship type, literal objects).
pub(super) type SubjectRows = (Vec<BoltType>, Vec<(String, &'static str, bool)>);

/// Statements grouped by subject, in batches of about `batch` statements;
/// a subject with more than `batch` statements is a batch of its own.
/// Rows are built from a batch only when it is sent ([`subject_rows`]), so
/// a large write never holds every batch's parameters at once.
pub(super) fn subject_batches(statements: &[Statement], batch: usize) -> Vec<Subjects<'_>> {
    let mut by_subject: BTreeMap<&str, Vec<&Statement>> = BTreeMap::new();
    for st in statements {
        by_subject.entry(st.s.as_str()).or_default().push(st);
    }
    let mut out: Vec<Subjects<'_>> = Vec::new();
    let mut current: Subjects<'_> = Vec::new();
    let mut size = 0;
    for (subject, statements) in by_subject {
        if size > 0 && size + statements.len() > batch {
            out.push(std::mem::take(&mut current));
            size = 0;
        }
        size += statements.len();
        current.push((subject, statements));
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// One batch as rows of `create_statements.cypher`, one per subject:
/// `{s, L_<TYPE>: [{k, p, g, v, dt, lang}], R_<TYPE>: [{k, p, g, o}]}`, a
/// list per relationship type and object kind the subject has (the keys
/// come from the closed list of types, never from data).
pub(super) fn subject_rows(subjects: &[(&str, Vec<&Statement>)]) -> SubjectRows {
    let mut rows: Vec<BoltType> = Vec::with_capacity(subjects.len());
    let mut lists: BTreeSet<(String, &'static str, bool)> = BTreeSet::new();
    for (subject, statements) in subjects {
        let mut items: BTreeMap<(&'static str, bool), Vec<BoltType>> = BTreeMap::new();
        for st in statements {
            let mut item: HashMap<String, String> = HashMap::from([
                ("k".to_string(), st.k.clone()),
                ("p".to_string(), st.p.clone()),
                ("g".to_string(), st.g.clone()),
            ]);
            let literal = match &st.object {
                Object::Resource(o) => {
                    item.insert("o".into(), o.clone());
                    false
                }
                Object::Literal { value, dt, lang } => {
                    item.insert("v".into(), value.clone());
                    item.insert("dt".into(), dt.clone());
                    item.insert("lang".into(), lang.clone());
                    true
                }
            };
            items
                .entry((rel_type(&st.p), literal))
                .or_default()
                .push(BoltType::from(item));
        }
        let mut row: HashMap<String, BoltType> =
            HashMap::from([("s".to_string(), BoltType::from(*subject))]);
        for ((rel, literal), list) in items {
            let key = format!("{}_{rel}", if literal { "L" } else { "R" });
            lists.insert((key.clone(), rel, literal));
            row.insert(key, BoltType::from(list));
        }
        rows.push(BoltType::from(row));
    }
    (rows, lists.into_iter().collect())
}
