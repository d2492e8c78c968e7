//! How RDF statements are held on the graph server: a relationship per
//! statement whose object is a resource, typed from a closed predicate
//! list; a subject's literal statements as properties of its node (exact
//! parallel lists, and a readable copy per listed predicate); node labels
//! mirroring `rdf:type`. A type statement whose class has a label is the
//! label and an entry of those lists, not a relationship (the label says
//! it, as in neosemantics' default): 354k of the 1.63M relationships a
//! 100k-tool catalog had otherwise.

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

/// Whether `class` has a node label (its type statements are held as the
/// label and a property entry, [`Object::Class`]).
pub(super) fn labelled(class: &str) -> bool {
    LABELS.iter().any(|(c, _)| *c == class)
}

/// `lit_dt` of a property entry whose value is a class's IRI
/// ([`Object::Class`]); JSON-LD's keyword for "an IRI", never a datatype
/// IRI.
pub(super) const CLASS_DATATYPE: &str = "@id";

/// Whether a quad is held in its subject's properties on the server (a
/// literal statement, or a type statement of a labelled class) rather than
/// as a relationship.
pub(super) fn held_as_property(q: &Quad) -> bool {
    match &q.object {
        Term::Literal(_) => true,
        Term::NamedNode(class) => {
            q.predicate.as_str() == vocab::RDF_TYPE && labelled(class.as_str())
        }
        _ => false,
    }
}

/// The predicate a relationship type names; `None` for `STATEMENT` (its
/// predicate is its `p`) and any type outside the list.
pub(super) fn predicate_of(rel: &str) -> Option<&'static str> {
    REL_TYPES.iter().find(|(_, t)| *t == rel).map(|(p, _)| *p)
}

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

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Object {
    Resource(String),
    /// The class of a type statement whose class has a label: the label
    /// and an entry of the subject's property lists, no relationship.
    Class(String),
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

/// A statement as the server holds it: a relationship's with its key, a
/// literal one without (it is a property of its subject, where no key is
/// kept; hashing the 1.5M literal statements of a 100k-tool registration
/// was half of the encoding's time).
pub(super) fn encode(q: &Quad) -> Result<Statement> {
    let mut st = encode_unkeyed(q)?;
    if matches!(st.object, Object::Resource(_)) {
        st.k = key(q);
    }
    Ok(st)
}

/// A statement without its key: literal statements live in their
/// subject's properties, where no key is kept.
pub(super) fn encode_unkeyed(q: &Quad) -> Result<Statement> {
    let object = match &q.object {
        Term::NamedNode(n) if held_as_property(q) => Object::Class(n.as_str().to_string()),
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
        k: String::new(),
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
        Object::Class(c) => NamedNode::new(c)
            .map_err(|e| Error::store(format!("a class `{c}` on the server"), e))?
            .into(),
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

/// The list properties that hold a subject's literal statements and its
/// types of labelled classes, in parallel (predicate, graph, value,
/// datatype or [`CLASS_DATATYPE`], language).
pub(super) const LITERAL_LISTS: [&str; 5] = ["lit_p", "lit_g", "lit_v", "lit_dt", "lit_lang"];

/// One subject's part of a write: the relationships it gains, and whether
/// the statements held as its properties changed (then all of them are
/// written again, from the mirror as the write leaves it).
#[derive(Debug)]
pub(super) struct SubjectWrite<'a> {
    pub s: &'a str,
    pub links: Vec<&'a Statement>,
    /// `Some` when its property statements changed: the relationship types
    /// of the removed literal ones, whose readable properties go when none
    /// is left.
    pub literals: Option<BTreeSet<&'static str>>,
}

/// A difference's work by subject, in batches of about `batch` statements
/// (a subject is never split; one larger than a batch is a batch of its
/// own). Rows are built from a batch only when it is sent ([`subject_rows`]),
/// so a large write never holds every batch's parameters at once.
pub(super) fn subject_batches<'a>(
    removed: &'a [Statement],
    added: &'a [Statement],
    batch: usize,
) -> Vec<Vec<SubjectWrite<'a>>> {
    let mut by_subject: BTreeMap<&str, (SubjectWrite<'a>, usize)> = BTreeMap::new();
    fn entry<'m, 'a>(
        by_subject: &'m mut BTreeMap<&'a str, (SubjectWrite<'a>, usize)>,
        s: &'a str,
    ) -> &'m mut (SubjectWrite<'a>, usize) {
        by_subject.entry(s).or_insert_with(|| {
            let write = SubjectWrite {
                s,
                links: Vec::new(),
                literals: None,
            };
            (write, 0)
        })
    }
    for st in added {
        let (write, weight) = entry(&mut by_subject, st.s.as_str());
        *weight += 1;
        match st.object {
            Object::Resource(_) => write.links.push(st),
            Object::Class(_) | Object::Literal { .. } => {
                write.literals.get_or_insert_with(BTreeSet::new);
            }
        }
    }
    for st in removed {
        if matches!(st.object, Object::Resource(_)) {
            continue;
        }
        let (write, weight) = entry(&mut by_subject, st.s.as_str());
        *weight += 1;
        let dropped = write.literals.get_or_insert_with(BTreeSet::new);
        if let Object::Literal { .. } = st.object {
            dropped.insert(rel_type(&st.p));
        }
    }
    let mut out: Vec<Vec<SubjectWrite<'a>>> = Vec::new();
    let mut current: Vec<SubjectWrite<'a>> = Vec::new();
    let mut size = 0;
    for (_, (write, weight)) in by_subject {
        if size > 0 && size + weight > batch {
            out.push(std::mem::take(&mut current));
            size = 0;
        }
        size += weight;
        current.push(write);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// One batch for `create_statements.cypher`: its rows, the link lists they
/// use as (row key, relationship type), and the distinct objects of its
/// links: by IRI (`objects`, each looked up or created) and by the node id
/// this write's creation returned (`known`); an item names its object by
/// place in `objects` then `known`. `by_id`: every row names its subject by
/// node id (`sid`), else by IRI (`s`).
pub(super) struct SubjectRows {
    pub rows: Vec<BoltType>,
    pub lists: Vec<(String, &'static str)>,
    pub objects: Vec<String>,
    pub known: Vec<i64>,
    pub by_id: bool,
}

/// One batch as rows of `create_statements.cypher`, one per subject:
/// `{s | sid, props, R_<TYPE>: [{k, g, o}]}` (and `p` in `R_STATEMENT`'s
/// items), a list per relationship type the subject gains (the keys come
/// from the closed list of types, never from data; `o` the object's place
/// in the batch's distinct objects, each looked up once however many links
/// reach it) and `props` the properties its literal statements set (empty
/// when they did not change). `ids`: the node ids of the resources this
/// write created, by IRI (a lookup by id is a fifth of one by IRI inside a
/// large transaction on ArcadeDB). `literals_of` gives a subject's literal
/// statements as the write leaves them.
pub(super) fn subject_rows(
    subjects: &[SubjectWrite<'_>],
    ids: &HashMap<String, i64>,
    literals_of: impl Fn(&str) -> Result<Vec<Statement>>,
) -> Result<SubjectRows> {
    // The objects first: their places are in `objects`, then in `known`.
    let mut objects: Vec<String> = Vec::new();
    let mut known: Vec<i64> = Vec::new();
    let mut slots: HashMap<&str, (bool, usize)> = HashMap::new();
    for st in subjects.iter().flat_map(|w| &w.links) {
        let Object::Resource(o) = &st.object else {
            continue;
        };
        slots.entry(o.as_str()).or_insert_with(|| match ids.get(o) {
            Some(&id) => {
                known.push(id);
                (true, known.len() - 1)
            }
            None => {
                objects.push(o.clone());
                (false, objects.len() - 1)
            }
        });
    }
    // Every link's object has a slot (the loop above saw them all); a
    // missing one is an error, never a place Cypher would read from the end.
    let place = |o: &str| -> Result<i64> {
        match slots.get(o) {
            Some(&(true, i)) => Ok((objects.len() + i) as i64),
            Some(&(false, i)) => Ok(i as i64),
            None => Err(Error::store_msg(format!(
                "a link object `{o}` outside its batch"
            ))),
        }
    };
    let by_id = !subjects.is_empty() && subjects.iter().all(|w| ids.contains_key(w.s));
    let mut rows: Vec<BoltType> = Vec::with_capacity(subjects.len());
    let mut lists: BTreeSet<(String, &'static str)> = BTreeSet::new();
    for write in subjects {
        let mut items: BTreeMap<&'static str, Vec<BoltType>> = BTreeMap::new();
        for st in &write.links {
            let Object::Resource(o) = &st.object else {
                continue;
            };
            let rel = rel_type(&st.p);
            let mut item: HashMap<String, BoltType> = HashMap::from([
                ("k".to_string(), BoltType::from(st.k.as_str())),
                ("g".to_string(), BoltType::from(st.g.as_str())),
                ("o".to_string(), BoltType::from(place(o)?)),
            ]);
            // A listed type names its predicate; only a STATEMENT keeps it.
            if rel == OTHER_PREDICATE {
                item.insert("p".to_string(), BoltType::from(st.p.as_str()));
            }
            items.entry(rel).or_default().push(BoltType::from(item));
        }
        let props = match &write.literals {
            Some(dropped) => literal_props(literals_of(write.s)?, dropped),
            None => HashMap::new(),
        };
        let subject = match ids.get(write.s) {
            Some(&id) if by_id => ("sid".to_string(), BoltType::from(id)),
            _ => ("s".to_string(), BoltType::from(write.s)),
        };
        let mut row: HashMap<String, BoltType> =
            HashMap::from([subject, ("props".to_string(), BoltType::from(props))]);
        for (rel, list) in items {
            let key = format!("R_{rel}");
            lists.insert((key.clone(), rel));
            row.insert(key, BoltType::from(list));
        }
        rows.push(BoltType::from(row));
    }
    Ok(SubjectRows {
        rows,
        lists: lists.into_iter().collect(),
        objects,
        known,
        by_id,
    })
}

/// The properties a subject's property statements (all of them: literal
/// ones and types of labelled classes) set: the exact statements as
/// [`LITERAL_LISTS`], and a readable copy of each listed predicate's first
/// literal value under its type in lower case (`name`, `description`,
/// `param_type`…). Null, which removes a property, for the lists when none
/// is left and for `dropped` types no statement has now.
pub(super) fn literal_props(
    mut literals: Vec<Statement>,
    dropped: &BTreeSet<&'static str>,
) -> HashMap<String, BoltType> {
    let null = || BoltType::Null(neo4rs::BoltNull);
    let mut props: HashMap<String, BoltType> = HashMap::new();
    literals.sort_by(|a, b| (&a.p, &a.g, &a.object).cmp(&(&b.p, &b.g, &b.object)));
    let mut columns: [Vec<String>; 5] = Default::default();
    for st in &literals {
        let (value, dt, lang) = match &st.object {
            Object::Literal { value, dt, lang } => (value.as_str(), dt.as_str(), lang.as_str()),
            Object::Class(class) => (class.as_str(), CLASS_DATATYPE, ""),
            Object::Resource(_) => continue,
        };
        for (column, v) in columns
            .iter_mut()
            .zip([st.p.as_str(), &st.g, value, dt, lang])
        {
            column.push(v.to_string());
        }
        // A readable copy of a literal value (a class's label says it).
        let rel = rel_type(&st.p);
        if rel != OTHER_PREDICATE && matches!(st.object, Object::Literal { .. }) {
            props
                .entry(rel.to_ascii_lowercase())
                .or_insert_with(|| BoltType::from(value));
        }
    }
    for rel in dropped.iter().filter(|r| **r != OTHER_PREDICATE) {
        props.entry(rel.to_ascii_lowercase()).or_insert_with(null);
    }
    let empty = columns[0].is_empty();
    for (name, column) in LITERAL_LISTS.iter().zip(columns) {
        let value = if empty {
            null()
        } else {
            BoltType::from(column)
        };
        props.insert((*name).to_string(), value);
    }
    props
}
