//! The default GraphStore: oxigraph, RocksDB on disk or in memory.
//!
//! Every source lives in its own named graphs: curated facts in
//! `urn:toolgraph:source:<name>`, links the constellation builder derived in
//! `urn:toolgraph:source:<name>#extracted`. Queries see the union of all
//! graphs; the graph name is the provenance of each link.

use super::{
    GraphHit, GraphStore, LexEntry, LoadReport, OntologyFacts, Relation, Source, SourceData,
    SparqlOutput,
};
use crate::extract::TermKind;
use crate::model::{Link, Param, Provenance, Tool, Violation};
use crate::vocab::{self, tg};
use crate::{Constellation, Error, Result};
use oxigraph::io::{RdfFormat, RdfParser};
use oxigraph::model::{BlankNode, GraphName, Literal, NamedNode, NamedOrBlankNode, Quad, Term};
use oxigraph::sparql::{QueryResults, SparqlEvaluator};
use oxigraph::store::{Store, Transaction};
use spargebra::algebra::GraphPattern;
use spargebra::term::GroundTerm;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

const Q_TOOLS: &str = include_str!("../../queries/tools.rq");
const Q_TOOL_LINKS: &str = include_str!("../../queries/tool_links.rq");
const Q_TOOL_PARAMS: &str = include_str!("../../queries/tool_params.rq");
const Q_LEXICON: &str = include_str!("../../queries/lexicon.rq");
const Q_ONTOLOGY: &str = include_str!("../../queries/ontology.rq");
const Q_CANDIDATES: &str = include_str!("../../queries/candidates.rq");
const Q_CONSTELLATION: &str = include_str!("../../queries/constellation.rq");

/// The seed constraints, one violation query each (`queries/validate/*.rq`).
pub(crate) const VALIDATION_RULES: &[(&str, &str)] = &[
    (
        "tool_without_verb",
        include_str!("../../queries/validate/tool_without_verb.rq"),
    ),
    (
        "tool_without_name",
        include_str!("../../queries/validate/tool_without_name.rq"),
    ),
    (
        "tool_without_description",
        include_str!("../../queries/validate/tool_without_description.rq"),
    ),
    (
        "undefined_verb",
        include_str!("../../queries/validate/undefined_verb.rq"),
    ),
    (
        "undefined_entity",
        include_str!("../../queries/validate/undefined_entity.rq"),
    ),
    (
        "undefined_dependency",
        include_str!("../../queries/validate/undefined_dependency.rq"),
    ),
    (
        "dependency_cycle",
        include_str!("../../queries/validate/dependency_cycle.rq"),
    ),
    (
        "duplicate_tool_name",
        include_str!("../../queries/validate/duplicate_tool_name.rq"),
    ),
    (
        "label_missing",
        include_str!("../../queries/validate/label_missing.rq"),
    ),
    (
        "broader_cycle",
        include_str!("../../queries/validate/broader_cycle.rq"),
    ),
    (
        "instance_without_class",
        include_str!("../../queries/validate/instance_without_class.rq"),
    ),
    (
        "undefined_profile_tool",
        include_str!("../../queries/validate/undefined_profile_tool.rq"),
    ),
];

/// oxigraph-backed store.
#[derive(Clone)]
pub struct OxigraphStore {
    store: Store,
}

impl std::fmt::Debug for OxigraphStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OxigraphStore").finish_non_exhaustive()
    }
}

fn store_err(e: impl std::fmt::Display) -> Error {
    Error::Store(e.to_string())
}

fn sparql_err(e: impl std::fmt::Display) -> Error {
    Error::Sparql(e.to_string())
}

fn nn(iri: &str) -> Result<NamedNode> {
    NamedNode::new(iri).map_err(|e| Error::Invalid(format!("invalid IRI <{iri}>: {e}")))
}

/// The named graph holding a source's curated facts.
pub(crate) fn source_graph(name: &str) -> String {
    format!("{}{}", vocab::SOURCE, encode_iri_part(name))
}

fn extracted_graph(name: &str) -> String {
    format!("{}#extracted", source_graph(name))
}

/// Percent-encodes what is not allowed unescaped in an IRI path segment.
fn encode_iri_part(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/:".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.trim().chars() {
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if !out.ends_with('_') && !out.is_empty() {
            out.push('_');
        }
    }
    let out = out.trim_end_matches('_').to_string();
    encode_iri_part(&out)
}

/// Wraps the innermost pattern of a parsed query in a join with a VALUES
/// table, so request values are bound structurally, never pasted as text.
fn bind_values(query: &str, var: &str, iris: &[String]) -> Result<spargebra::Query> {
    let mut parsed = spargebra::SparqlParser::new()
        .parse_query(query)
        .map_err(sparql_err)?;
    add_values(&mut parsed, var, iris)?;
    Ok(parsed)
}

/// Adds one more VALUES table to an already parsed query.
fn add_values(parsed: &mut spargebra::Query, var: &str, iris: &[String]) -> Result<()> {
    let variable = spargebra::term::Variable::new(var).map_err(sparql_err)?;
    let mut bindings = Vec::with_capacity(iris.len());
    for iri in iris {
        bindings.push(vec![Some(GroundTerm::NamedNode(nn(iri)?))]);
    }
    let values = GraphPattern::Values {
        variables: vec![variable],
        bindings,
    };
    let pattern = match parsed {
        spargebra::Query::Select { pattern, .. }
        | spargebra::Query::Construct { pattern, .. }
        | spargebra::Query::Describe { pattern, .. }
        | spargebra::Query::Ask { pattern, .. } => pattern,
    };
    inject(pattern, values);
    Ok(())
}

/// Pushes the VALUES table down to where it binds: through solution
/// modifiers, into every UNION branch, and under BIND/FILTER, so each branch
/// starts from the bound nodes instead of scanning the whole graph.
fn inject(pattern: &mut GraphPattern, values: GraphPattern) {
    match pattern {
        GraphPattern::Project { inner, .. }
        | GraphPattern::Distinct { inner }
        | GraphPattern::Reduced { inner }
        | GraphPattern::Slice { inner, .. }
        | GraphPattern::OrderBy { inner, .. }
        | GraphPattern::Group { inner, .. }
        | GraphPattern::Extend { inner, .. }
        | GraphPattern::Filter { inner, .. } => inject(inner, values),
        GraphPattern::Union { left, right } => {
            inject(left, values.clone());
            inject(right, values);
        }
        other => {
            let right = std::mem::replace(other, GraphPattern::Bgp { patterns: vec![] });
            *other = GraphPattern::Join {
                left: Box::new(values),
                right: Box::new(right),
            };
        }
    }
}

fn term_str(t: &Term) -> String {
    match t {
        Term::NamedNode(n) => n.as_str().to_string(),
        Term::BlankNode(b) => format!("_:{}", b.as_str()),
        Term::Literal(l) => l.value().to_string(),
        #[allow(unreachable_patterns)]
        other => other.to_string(),
    }
}

type Rows = Vec<HashMap<String, String>>;

fn collect_rows(results: QueryResults<'_>) -> Result<Rows> {
    let QueryResults::Solutions(solutions) = results else {
        return Err(Error::Sparql("expected a SELECT query".into()));
    };
    let mut rows = Vec::new();
    for solution in solutions {
        let solution = solution.map_err(sparql_err)?;
        let mut row = HashMap::new();
        for (var, term) in solution.iter() {
            row.insert(var.as_str().to_string(), term_str(term));
        }
        rows.push(row);
    }
    Ok(rows)
}

fn prepared(query: spargebra::Query) -> oxigraph::sparql::PreparedSparqlQuery {
    // Built without oxigraph's http-client feature: SERVICE calls fail
    // instead of reaching the network.
    let mut q = SparqlEvaluator::new().for_query(query);
    q.dataset_mut().set_default_graph_as_union();
    q
}

fn parse_fixed(query: &str) -> Result<spargebra::Query> {
    spargebra::SparqlParser::new()
        .parse_query(query)
        .map_err(sparql_err)
}

impl OxigraphStore {
    /// An in-memory store (tests, the eval harness).
    pub fn memory() -> Result<Self> {
        Ok(Self {
            store: Store::new().map_err(store_err)?,
        })
    }

    /// A RocksDB store in `dir` (created if absent).
    #[cfg(feature = "rocksdb")]
    pub fn open(dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let store = Store::open(dir).map_err(|e| {
            Error::Store(format!("cannot open the store at {}: {e}", dir.display()))
        })?;
        Ok(Self { store })
    }

    /// Without the `rocksdb` feature there is no on-disk store.
    #[cfg(not(feature = "rocksdb"))]
    pub fn open(dir: &Path) -> Result<Self> {
        Err(Error::Store(format!(
            "cannot open {}: built without the `rocksdb` feature (use --memory)",
            dir.display()
        )))
    }

    fn select(&self, query: spargebra::Query) -> Result<Rows> {
        collect_rows(
            prepared(query)
                .on_store(&self.store)
                .execute()
                .map_err(sparql_err)?,
        )
    }

    fn select_fixed(&self, query: &str) -> Result<Rows> {
        self.select(parse_fixed(query)?)
    }

    fn violations_in(transaction: &Transaction<'_>) -> Result<Vec<Violation>> {
        let mut out = Vec::new();
        for (rule, text) in VALIDATION_RULES {
            let results = prepared(parse_fixed(text)?)
                .on_transaction(transaction)
                .execute()
                .map_err(sparql_err)?;
            for row in collect_rows(results)? {
                out.push(Violation {
                    rule: (*rule).to_string(),
                    subject: row.get("subject").cloned().unwrap_or_default(),
                    message: row.get("message").cloned().unwrap_or_default(),
                });
            }
        }
        out.sort_by(|a, b| (&a.subject, &a.rule).cmp(&(&b.subject, &b.rule)));
        out.dedup();
        Ok(out)
    }
}

/// Parses one Turtle source into quads in its named graph. Errors carry
/// `file:line:col` (1-based).
pub(crate) fn parse_turtle(name: &str, text: &str) -> Result<Vec<Quad>> {
    let graph = nn(&source_graph(name))?;
    let base = format!("file:///{}", encode_iri_part(name.trim_start_matches('/')));
    let parser = RdfParser::from_format(RdfFormat::Turtle)
        .with_base_iri(base)
        .map_err(|e| Error::parse(name, None, None, e.to_string()))?
        .with_default_graph(graph);
    let mut quads = Vec::new();
    for quad in parser.for_slice(text.as_bytes()) {
        match quad {
            Ok(q) => quads.push(q),
            Err(e) => {
                let (line, col) = e
                    .location()
                    .map(|r| (Some(r.start.line + 1), Some(r.start.column + 1)))
                    .unwrap_or((None, None));
                return Err(Error::parse(name, line, col, e.to_string()));
            }
        }
    }
    Ok(quads)
}

/// Turns built constellations into quads: declared facts in the source's
/// graph, derived links in its `#extracted` graph.
pub(crate) fn constellation_quads(source: &str, items: &[Constellation]) -> Result<Vec<Quad>> {
    let curated = GraphName::NamedNode(nn(&source_graph(source))?);
    let extracted = GraphName::NamedNode(nn(&extracted_graph(source))?);
    let p = |iri: &str| nn(iri);
    let rdf_type = p(vocab::RDF_TYPE)?;
    let pref = p(vocab::SKOS_PREF_LABEL)?;
    let broader = p(vocab::SKOS_BROADER)?;
    let mut q = QuadSink {
        quads: Vec::new(),
        rdf_type: rdf_type.clone(),
        pref: pref.clone(),
    };
    let by_id: HashMap<&str, &Constellation> = items
        .iter()
        .map(|c| (c.descriptor.id.as_str(), c))
        .collect();
    for c in items {
        let d = &c.descriptor;
        let tool: NamedOrBlankNode = nn(&c.iri)?.into();
        q.push(tool.clone(), &rdf_type, nn(tg::TOOL)?.into(), &curated);
        q.push(
            tool.clone(),
            &p(tg::NAME)?,
            Literal::new_simple_literal(&d.name).into(),
            &curated,
        );
        let label = d.title.clone().unwrap_or_else(|| d.name.clone());
        q.push(
            tool.clone(),
            &pref,
            Literal::new_simple_literal(label).into(),
            &curated,
        );
        q.push(
            tool.clone(),
            &p(tg::DESCRIPTION)?,
            Literal::new_simple_literal(&d.description).into(),
            &curated,
        );
        q.text(
            &tool,
            &p(tg::MODEL_DESCRIPTION)?,
            &d.model_description,
            &curated,
        );
        q.text(&tool, &p(tg::SOURCE)?, &d.source, &curated);
        let ro_graph = if d.read_only.is_some() {
            &curated
        } else {
            &extracted
        };
        q.push(
            tool.clone(),
            &p(tg::READ_ONLY)?,
            Literal::from(c.read_only).into(),
            ro_graph,
        );
        if let Some(destructive) = d.destructive {
            q.push(
                tool.clone(),
                &p(tg::DESTRUCTIVE)?,
                Literal::from(destructive).into(),
                &curated,
            );
        }
        for param in &d.params {
            let node: NamedOrBlankNode = BlankNode::default().into();
            q.push(
                tool.clone(),
                &p(tg::PARAMETER_PROP)?,
                node.clone().into(),
                &curated,
            );
            q.push(node.clone(), &rdf_type, nn(tg::PARAMETER)?.into(), &curated);
            q.push(
                node.clone(),
                &p(tg::PARAM_NAME)?,
                Literal::new_simple_literal(&param.name).into(),
                &curated,
            );
            q.text(
                &node,
                &p(tg::PARAM_DESCRIPTION)?,
                &param.description,
                &curated,
            );
            if let Some(ty) = &param.ty {
                q.push(
                    node.clone(),
                    &p(tg::PARAM_TYPE)?,
                    Literal::new_simple_literal(ty).into(),
                    &curated,
                );
            }
            q.push(
                node,
                &p(tg::PARAM_REQUIRED)?,
                Literal::from(param.required).into(),
                &curated,
            );
        }
        for dep in &d.depends_on {
            let target = match by_id.get(dep.as_str()) {
                Some(other) => other.iri.clone(),
                None => crate::tool_iri(dep),
            };
            q.push(
                tool.clone(),
                &p(tg::DEPENDS_ON)?,
                nn(&target)?.into(),
                &curated,
            );
        }
        for integration in &d.integrations {
            let node = nn(&format!("{}{}", vocab::INTEGRATION, slug(integration)))?;
            q.push(
                tool.clone(),
                &p(tg::REQUIRES_INTEGRATION)?,
                node.clone().into(),
                &curated,
            );
            q.declare(node.into(), tg::INTEGRATION, integration, &curated)?;
        }
        for verb in &c.verbs {
            q.push(
                tool.clone(),
                &p(tg::PERFORMS)?,
                nn(&verb.iri)?.into(),
                &extracted,
            );
        }
        for (i, ent) in c.entities.iter().enumerate() {
            let rel = if ent.weight >= 0.5 {
                tg::ACTS_ON
            } else {
                tg::MENTIONS
            };
            q.push(tool.clone(), &p(rel)?, nn(&ent.iri)?.into(), &extracted);
            if i == 0 && ent.weight >= 0.9 {
                q.push(
                    tool.clone(),
                    &p(tg::PRIMARY_ENTITY)?,
                    nn(&ent.iri)?.into(),
                    &extracted,
                );
            }
        }
        for dom in &c.domains {
            let node = nn(&dom.iri)?;
            q.push(
                tool.clone(),
                &p(tg::IN_DOMAIN)?,
                node.clone().into(),
                &extracted,
            );
            q.declare(node.into(), tg::DOMAIN, &dom.label, &extracted)?;
        }
        for verb in &c.new_verbs {
            q.declare(nn(&verb.iri)?.into(), tg::VERB, &verb.label, &extracted)?;
        }
        for term in &c.new_terms {
            let node: NamedOrBlankNode = nn(&term.iri)?.into();
            q.declare(node.clone(), tg::ENTITY, &term.label, &extracted)?;
            for b in &term.broader {
                q.push(node.clone(), &broader, nn(b)?.into(), &extracted);
            }
        }
    }
    Ok(q.quads)
}

/// Collects quads; `declare` adds a typed, labelled node (verbs, terms,
/// domains, integrations all need the same two triples).
struct QuadSink {
    quads: Vec<Quad>,
    rdf_type: NamedNode,
    pref: NamedNode,
}

impl QuadSink {
    fn push(&mut self, s: NamedOrBlankNode, pred: &NamedNode, o: Term, g: &GraphName) {
        self.quads.push(Quad::new(s, pred.clone(), o, g.clone()));
    }

    /// An optional text property: nothing when `value` is empty.
    fn text(&mut self, s: &NamedOrBlankNode, pred: &NamedNode, value: &str, g: &GraphName) {
        if !value.is_empty() {
            self.push(
                s.clone(),
                pred,
                Literal::new_simple_literal(value).into(),
                g,
            );
        }
    }

    fn declare(
        &mut self,
        node: NamedOrBlankNode,
        class: &str,
        label: &str,
        g: &GraphName,
    ) -> Result<()> {
        let (rdf_type, pref) = (self.rdf_type.clone(), self.pref.clone());
        self.push(node.clone(), &rdf_type, nn(class)?.into(), g);
        self.push(node, &pref, Literal::new_simple_literal(label).into(), g);
        Ok(())
    }
}

fn parse_bool(s: Option<&String>) -> Option<bool> {
    s.map(|v| v == "true" || v == "1")
}

impl OxigraphStore {
    fn load_inner(&self, sources: &[Source], check: bool) -> Result<LoadReport> {
        // Parse everything before touching the store.
        let mut parsed = Vec::with_capacity(sources.len());
        for source in sources {
            let quads = match &source.data {
                SourceData::Turtle(text) => parse_turtle(&source.name, text)?,
                SourceData::Constellations(items) => constellation_quads(&source.name, items)?,
            };
            parsed.push((source.name.as_str(), quads));
        }
        let quads_before = self.len()?;
        let mut transaction = self.store.start_transaction().map_err(store_err)?;
        for (name, quads) in &parsed {
            for graph in [source_graph(name), extracted_graph(name)] {
                transaction
                    .remove_named_graph(&nn(&graph)?)
                    .map_err(store_err)?;
            }
            transaction.extend(quads.iter());
        }
        let violations = if check {
            Self::violations_in(&transaction)?
        } else {
            Vec::new()
        };
        if !violations.is_empty() {
            // Dropping the transaction discards every change.
            return Err(Error::Violations(violations));
        }
        transaction.commit().map_err(store_err)?;
        #[cfg(feature = "rocksdb")]
        self.store.flush().map_err(store_err)?;
        Ok(LoadReport {
            sources: sources.len(),
            quads_before,
            quads_after: self.len()?,
            tools: self.select_fixed(Q_TOOLS)?.len(),
        })
    }
}

impl GraphStore for OxigraphStore {
    fn load(&self, sources: &[Source]) -> Result<LoadReport> {
        self.load_inner(sources, true)
    }

    fn load_unchecked(&self, sources: &[Source]) -> Result<LoadReport> {
        self.load_inner(sources, false)
    }

    fn unload(&self, names: &[String]) -> Result<LoadReport> {
        let quads_before = self.len()?;
        let mut transaction = self.store.start_transaction().map_err(store_err)?;
        for name in names {
            for graph in [source_graph(name), extracted_graph(name)] {
                transaction
                    .remove_named_graph(&nn(&graph)?)
                    .map_err(store_err)?;
            }
        }
        transaction.commit().map_err(store_err)?;
        Ok(LoadReport {
            sources: names.len(),
            quads_before,
            quads_after: self.len()?,
            tools: self.select_fixed(Q_TOOLS)?.len(),
        })
    }

    fn len(&self) -> Result<usize> {
        self.store.len().map_err(store_err)
    }

    fn tools(&self) -> Result<Vec<Tool>> {
        let mut tools: BTreeMap<String, Tool> = BTreeMap::new();
        for row in self.select_fixed(Q_TOOLS)? {
            let Some(iri) = row.get("tool") else { continue };
            let name = row
                .get("name")
                .cloned()
                .unwrap_or_else(|| iri.rsplit('/').next().unwrap_or(iri).to_string());
            let id = iri
                .strip_prefix(vocab::TOOL)
                .map(percent_decode)
                .unwrap_or_else(|| name.clone());
            tools.insert(
                iri.clone(),
                Tool {
                    iri: iri.clone(),
                    id,
                    name,
                    description: row.get("description").cloned().unwrap_or_default(),
                    model_description: row.get("modelDescription").cloned().unwrap_or_default(),
                    read_only: parse_bool(row.get("readOnly")).unwrap_or(false),
                    universal: parse_bool(row.get("universal")).unwrap_or(false),
                    ..Tool::default()
                },
            );
        }
        for row in self.select_fixed(Q_TOOL_LINKS)? {
            let (Some(tool), Some(rel), Some(target)) =
                (row.get("tool"), row.get("rel"), row.get("target"))
            else {
                continue;
            };
            let Some(t) = tools.get_mut(tool) else {
                continue;
            };
            let provenance = if row.get("g").is_some_and(|g| g.ends_with("#extracted")) {
                Provenance::Extracted
            } else {
                Provenance::Curated
            };
            let label = row
                .get("label")
                .cloned()
                .unwrap_or_else(|| local_name(target).to_string());
            let link = Link {
                iri: target.clone(),
                label: label.clone(),
                provenance,
                weight: if provenance == Provenance::Curated {
                    1.0
                } else {
                    0.8
                },
            };
            let rel = rel.strip_prefix(vocab::TG).unwrap_or(rel);
            match rel {
                "performs" => t.verbs.push(link),
                "primaryEntity" => {
                    // Primary entities first, weighted highest.
                    t.entities.retain(|l| l.iri != link.iri);
                    t.entities.insert(
                        0,
                        Link {
                            weight: link.weight.max(1.0),
                            ..link
                        },
                    );
                }
                "actsOn" if !t.entities.iter().any(|l| l.iri == link.iri) => {
                    t.entities.push(link);
                }
                "mentions" if !t.entities.iter().any(|l| l.iri == link.iri) => {
                    t.entities.push(Link {
                        weight: 0.4,
                        ..link
                    });
                }
                "inDomain" => t.domains.push(link),
                "inCategory" => t.categories.push(link),
                "requiresIntegration" => t.integrations.push(label),
                "availableOnChannel" => t.channels.push(label),
                "dependsOn" => t.depends_on.push(label),
                _ => {}
            }
        }
        let mut params: HashMap<String, Vec<Param>> = HashMap::new();
        for row in self.select_fixed(Q_TOOL_PARAMS)? {
            let (Some(tool), Some(name)) = (row.get("tool"), row.get("name")) else {
                continue;
            };
            params.entry(tool.clone()).or_default().push(Param {
                name: name.clone(),
                description: row.get("description").cloned().unwrap_or_default(),
                ty: row.get("type").cloned(),
                required: parse_bool(row.get("required")).unwrap_or(false),
            });
        }
        let mut out: Vec<Tool> = tools.into_values().collect();
        for t in &mut out {
            if let Some(mut ps) = params.remove(&t.iri) {
                ps.sort_by(|a, b| b.required.cmp(&a.required).then(a.name.cmp(&b.name)));
                ps.dedup_by(|a, b| a.name == b.name);
                t.params = ps;
            }
            t.verbs.dedup_by(|a, b| a.iri == b.iri);
            t.domains.dedup_by(|a, b| a.iri == b.iri);
            t.categories.dedup_by(|a, b| a.iri == b.iri);
            t.depends_on.sort();
            t.depends_on.dedup();
            t.integrations.sort();
            t.integrations.dedup();
            t.channels.sort();
            t.channels.dedup();
        }
        out.sort_by(|a, b| a.name.cmp(&b.name).then(a.iri.cmp(&b.iri)));
        Ok(out)
    }

    fn lexicon(&self) -> Result<Vec<LexEntry>> {
        let mut out = Vec::new();
        for row in self.select_fixed(Q_LEXICON)? {
            let (Some(iri), Some(label), Some(kind)) =
                (row.get("node"), row.get("label"), row.get("kind"))
            else {
                continue;
            };
            let kind = match kind.as_str() {
                "verb" => TermKind::Verb,
                "entity" => TermKind::Entity,
                _ => match row.get("class") {
                    Some(class) => TermKind::Instance {
                        class: class.clone(),
                    },
                    None => continue,
                },
            };
            out.push(LexEntry {
                label: label.clone(),
                iri: iri.clone(),
                kind,
            });
        }
        out.sort_by(|a, b| (&a.iri, &a.label).cmp(&(&b.iri, &b.label)));
        Ok(out)
    }

    fn ontology(&self) -> Result<OntologyFacts> {
        let mut facts = OntologyFacts::default();
        for row in self.select_fixed(Q_ONTOLOGY)? {
            let (Some(kind), Some(a), Some(b)) = (row.get("kind"), row.get("a"), row.get("b"))
            else {
                continue;
            };
            let pair = (a.clone(), b.clone());
            match kind.as_str() {
                "broader" => facts.broader.push(pair),
                "sibling" => facts.siblings.push(pair),
                _ => facts.labels.push(pair),
            }
        }
        facts.broader.sort();
        facts.broader.dedup();
        facts.siblings.sort();
        facts.siblings.dedup();
        facts.labels.sort();
        facts.labels.dedup_by(|a, b| a.0 == b.0);
        Ok(facts)
    }

    fn candidates(&self, nodes: &[String], tools: Option<&[String]>) -> Result<Vec<GraphHit>> {
        if nodes.is_empty() || tools.is_some_and(<[String]>::is_empty) {
            return Ok(Vec::new());
        }
        let mut query = bind_values(Q_CANDIDATES, "node", nodes)?;
        if let Some(tools) = tools {
            add_values(&mut query, "tool", tools)?;
        }
        let mut hits = Vec::new();
        for row in self.select(query)? {
            let (Some(node), Some(tool), Some(rel), Some(via)) = (
                row.get("node"),
                row.get("tool"),
                row.get("rel"),
                row.get("via"),
            ) else {
                continue;
            };
            let relation = match rel.as_str() {
                "verb" => Relation::Verb,
                "verb_broader" => Relation::VerbBroader,
                "primary" => Relation::Primary,
                "acts_on" => Relation::ActsOn,
                "acts_on_broader" => Relation::ActsOnBroader,
                "mentions" => Relation::Mentions,
                "parameter" => Relation::Parameter,
                "sibling" => Relation::Sibling,
                _ => continue,
            };
            hits.push(GraphHit {
                tool: tool.clone(),
                node: node.clone(),
                via: via.clone(),
                relation,
                hops: row.get("hops").and_then(|h| h.parse().ok()).unwrap_or(0),
                extracted: row.get("g").is_some_and(|g| g.ends_with("#extracted")),
            });
        }
        hits.sort_by(|a, b| {
            (&a.tool, &a.node, a.relation, a.hops, &a.via)
                .cmp(&(&b.tool, &b.node, b.relation, b.hops, &b.via))
        });
        hits.dedup();
        Ok(hits)
    }

    fn constellation(&self, tool_iri: &str) -> Result<Vec<String>> {
        let query = bind_values(Q_CONSTELLATION, "tool", &[tool_iri.to_string()])?;
        let results = prepared(query)
            .on_store(&self.store)
            .execute()
            .map_err(sparql_err)?;
        let QueryResults::Graph(triples) = results else {
            return Err(Error::Sparql("expected a CONSTRUCT query".into()));
        };
        let mut lines = Vec::new();
        for t in triples {
            lines.push(format!("{} .", t.map_err(sparql_err)?));
        }
        lines.sort();
        lines.dedup();
        Ok(lines)
    }

    fn validate(&self) -> Result<Vec<Violation>> {
        let transaction = self.store.start_transaction().map_err(store_err)?;
        Self::violations_in(&transaction)
    }

    fn sparql(&self, query: &str) -> Result<SparqlOutput> {
        let parsed = match spargebra::SparqlParser::new().parse_query(query) {
            Ok(q) => q,
            Err(e) => {
                if spargebra::SparqlParser::new().parse_update(query).is_ok() {
                    return Err(Error::Invalid(
                        "refused: SPARQL updates are not allowed here (the sparql command is read-only; use `toolgraph load`)".into(),
                    ));
                }
                return Err(sparql_err(e));
            }
        };
        match prepared(parsed)
            .on_store(&self.store)
            .execute()
            .map_err(sparql_err)?
        {
            QueryResults::Boolean(b) => Ok(SparqlOutput::Boolean(b)),
            QueryResults::Graph(triples) => {
                let mut lines = Vec::new();
                for t in triples {
                    lines.push(format!("{} .", t.map_err(sparql_err)?));
                }
                Ok(SparqlOutput::Graph(lines))
            }
            QueryResults::Solutions(solutions) => {
                let vars: Vec<String> = solutions
                    .variables()
                    .iter()
                    .map(|v| v.as_str().to_string())
                    .collect();
                let mut rows = Vec::new();
                for solution in solutions {
                    let solution = solution.map_err(sparql_err)?;
                    rows.push(
                        vars.iter()
                            .map(|v| solution.get(v.as_str()).map(|t| t.to_string()))
                            .collect(),
                    );
                }
                Ok(SparqlOutput::Solutions { vars, rows })
            }
        }
    }
}

/// Decodes `%XX` escapes (the inverse of the tool IRI encoding).
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Some(b) = std::str::from_utf8(&bytes[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The last path segment or fragment of an IRI.
pub(crate) fn local_name(iri: &str) -> &str {
    iri.rsplit(['/', '#']).next().unwrap_or(iri)
}
