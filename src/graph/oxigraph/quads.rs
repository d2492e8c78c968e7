//! Writing: Turtle sources and built constellations as quads, each source
//! in its own named graph (derived links in its `#extracted` graph).

use super::{extracted_graph, nn, source_graph};
use crate::error::{Error, Result};
use crate::model::Constellation;
use crate::vocab::{self, encode_iri_part, tg};
use oxigraph::io::{RdfFormat, RdfParser};
use oxigraph::model::{BlankNode, GraphName, Literal, NamedNode, NamedOrBlankNode, Quad, Term};
use std::collections::HashMap;

/// Parses one Turtle source into quads in its named graph. Errors carry
/// `file:line:col` (1-based).
pub(super) fn parse_turtle(name: &str, text: &str) -> Result<Vec<Quad>> {
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
pub(super) fn constellation_quads(source: &str, items: &[Constellation]) -> Result<Vec<Quad>> {
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
            if let Some(entity) = &param.entity {
                q.push(
                    node.clone(),
                    &p(tg::PARAM_ENTITY)?,
                    nn(entity)?.into(),
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
            let target = match by_id.get(dep.on.as_str()) {
                Some(other) => other.iri.clone(),
                None => vocab::tool_iri(&dep.on),
            };
            q.push(
                tool.clone(),
                &p(tg::DEPENDS_ON)?,
                nn(&target)?.into(),
                &curated,
            );
            if dep.is_qualified() {
                // the plain edge above keeps every dependsOn reader working;
                // the qualifiers hang off a node of their own
                let node: NamedOrBlankNode = BlankNode::default().into();
                q.push(
                    tool.clone(),
                    &p(tg::DEPENDENCY)?,
                    node.clone().into(),
                    &curated,
                );
                q.push(
                    node.clone(),
                    &p(tg::DEPENDENCY_ON)?,
                    nn(&target)?.into(),
                    &curated,
                );
                let qualifiers = [
                    (tg::DEPENDENCE_TYPE, &dep.facts.kind),
                    (tg::DEPENDENCY_PARAMETER, &dep.facts.parameter),
                    (tg::DEPENDENCY_REASON, &dep.facts.reason),
                ];
                for (pred, value) in qualifiers {
                    if let Some(v) = value {
                        q.text(&node, &p(pred)?, v, &curated);
                    }
                }
            }
        }
        for integration in &d.integrations {
            let Some(iri) = vocab::mint(vocab::INTEGRATION, integration) else {
                continue;
            };
            let node = nn(&iri)?;
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
