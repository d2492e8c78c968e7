//! Writing: Turtle sources and built constellations as quads, each source
//! in its own named graph (derived links in its `#extracted` graph).

use super::{extracted_graph, nn, source_graph};
use crate::error::{Error, Result};
use crate::model::{Constellation, Dependency, Param};
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
    let mut q = QuadSink {
        quads: Vec::new(),
        rdf_type: nn(vocab::RDF_TYPE)?,
        pref: nn(vocab::SKOS_PREF_LABEL)?,
    };
    let g = Graphs {
        curated: GraphName::NamedNode(nn(&source_graph(source))?),
        extracted: GraphName::NamedNode(nn(&extracted_graph(source))?),
    };
    let by_id: HashMap<&str, &Constellation> = items
        .iter()
        .map(|c| (c.descriptor.id.as_str(), c))
        .collect();
    for c in items {
        let tool: NamedOrBlankNode = nn(&c.iri)?.into();
        g.declared(&mut q, &tool, c)?;
        g.params(&mut q, &tool, &c.descriptor.params)?;
        g.dependencies(&mut q, &tool, &c.descriptor.depends_on, &by_id)?;
        g.integrations(&mut q, &tool, &c.descriptor.integrations)?;
        g.categories(&mut q, &tool, &c.descriptor.categories)?;
        g.derived(&mut q, &tool, c)?;
    }
    Ok(q.quads)
}

/// A source's two graphs.
struct Graphs {
    curated: GraphName,
    extracted: GraphName,
}

impl Graphs {
    /// What the descriptor declares: type, name, label, texts, flags.
    fn declared(&self, q: &mut QuadSink, tool: &NamedOrBlankNode, c: &Constellation) -> Result<()> {
        let d = &c.descriptor;
        let curated = &self.curated;
        let text = |v: &str| -> Term { Literal::new_simple_literal(v).into() };
        q.push(
            tool.clone(),
            &q.rdf_type.clone(),
            nn(tg::TOOL)?.into(),
            curated,
        );
        q.push(tool.clone(), &nn(tg::NAME)?, text(&d.name), curated);
        let label = d.title.clone().unwrap_or_else(|| d.name.clone());
        q.push(tool.clone(), &q.pref.clone(), text(&label), curated);
        q.push(
            tool.clone(),
            &nn(tg::DESCRIPTION)?,
            text(&d.description),
            curated,
        );
        q.text(
            tool,
            &nn(tg::MODEL_DESCRIPTION)?,
            &d.model_description,
            curated,
        );
        q.text(tool, &nn(tg::SOURCE)?, &d.source, curated);
        if let Some(up) = &d.upstream {
            let json = serde_json::to_string(up)
                .map_err(|e| crate::error::Error::store("cannot write an upstream", e))?;
            q.push(tool.clone(), &nn(tg::UPSTREAM)?, text(&json), curated);
        }
        let ro_graph = if d.read_only.is_some() {
            curated
        } else {
            &self.extracted
        };
        q.push(
            tool.clone(),
            &nn(tg::READ_ONLY)?,
            Literal::from(c.read_only).into(),
            ro_graph,
        );
        if let Some(destructive) = d.destructive {
            q.push(
                tool.clone(),
                &nn(tg::DESTRUCTIVE)?,
                Literal::from(destructive).into(),
                curated,
            );
        }
        Ok(())
    }

    /// The integrations the tool needs, declared as nodes.
    fn integrations(
        &self,
        q: &mut QuadSink,
        tool: &NamedOrBlankNode,
        integrations: &[String],
    ) -> Result<()> {
        for integration in integrations {
            let Some(iri) = vocab::mint(vocab::INTEGRATION, integration) else {
                continue;
            };
            let node = nn(&iri)?;
            q.push(
                tool.clone(),
                &nn(tg::REQUIRES_INTEGRATION)?,
                node.clone().into(),
                &self.curated,
            );
            q.declare(node.into(), tg::INTEGRATION, integration, &self.curated)?;
        }
        Ok(())
    }

    /// The categories the descriptor declares (names are minted in the
    /// category namespace; the ontology declares them).
    fn categories(
        &self,
        q: &mut QuadSink,
        tool: &NamedOrBlankNode,
        categories: &[String],
    ) -> Result<()> {
        for c in categories {
            let iri = if c.starts_with(vocab::CATEGORY) {
                Some(c.clone())
            } else {
                vocab::mint(vocab::CATEGORY, c)
            };
            if let Some(iri) = iri {
                q.push(
                    tool.clone(),
                    &nn(tg::IN_CATEGORY)?,
                    nn(&iri)?.into(),
                    &self.curated,
                );
            }
        }
        Ok(())
    }

    /// One blank node per parameter: name, description, type, entity,
    /// whether it is required.
    fn params(&self, q: &mut QuadSink, tool: &NamedOrBlankNode, params: &[Param]) -> Result<()> {
        let curated = &self.curated;
        for param in params {
            let node: NamedOrBlankNode = BlankNode::default().into();
            q.push(
                tool.clone(),
                &nn(tg::PARAMETER_PROP)?,
                node.clone().into(),
                curated,
            );
            q.push(
                node.clone(),
                &q.rdf_type.clone(),
                nn(tg::PARAMETER)?.into(),
                curated,
            );
            q.push(
                node.clone(),
                &nn(tg::PARAM_NAME)?,
                Literal::new_simple_literal(&param.name).into(),
                curated,
            );
            q.text(
                &node,
                &nn(tg::PARAM_DESCRIPTION)?,
                &param.description,
                curated,
            );
            if let Some(ty) = &param.ty {
                q.push(
                    node.clone(),
                    &nn(tg::PARAM_TYPE)?,
                    Literal::new_simple_literal(&**ty).into(),
                    curated,
                );
            }
            if let Some(entity) = &param.entity {
                q.push(
                    node.clone(),
                    &nn(tg::PARAM_ENTITY)?,
                    nn(entity)?.into(),
                    curated,
                );
            }
            q.push(
                node,
                &nn(tg::PARAM_REQUIRED)?,
                Literal::from(param.required).into(),
                curated,
            );
        }
        Ok(())
    }

    /// A plain `dependsOn` edge per dependency (every reader works with
    /// it), and for a qualified one a node of its own with the facts.
    fn dependencies(
        &self,
        q: &mut QuadSink,
        tool: &NamedOrBlankNode,
        deps: &[Dependency],
        by_id: &HashMap<&str, &Constellation>,
    ) -> Result<()> {
        let curated = &self.curated;
        for dep in deps {
            let target = match by_id.get(dep.on.as_str()) {
                Some(other) => other.iri.clone(),
                None => vocab::tool_iri(&dep.on),
            };
            q.push(
                tool.clone(),
                &nn(tg::DEPENDS_ON)?,
                nn(&target)?.into(),
                curated,
            );
            if !dep.is_qualified() {
                continue;
            }
            let node: NamedOrBlankNode = BlankNode::default().into();
            q.push(
                tool.clone(),
                &nn(tg::DEPENDENCY)?,
                node.clone().into(),
                curated,
            );
            q.push(
                node.clone(),
                &nn(tg::DEPENDENCY_ON)?,
                nn(&target)?.into(),
                curated,
            );
            let qualifiers = [
                (tg::DEPENDENCE_TYPE, &dep.facts.kind),
                (tg::DEPENDENCY_PARAMETER, &dep.facts.parameter),
                (tg::DEPENDENCY_REASON, &dep.facts.reason),
            ];
            for (pred, value) in qualifiers {
                if let Some(v) = value {
                    q.text(&node, &nn(pred)?, v, curated);
                }
            }
        }
        Ok(())
    }

    /// What the builder derived: verbs, entities, domains, minted nodes.
    fn derived(&self, q: &mut QuadSink, tool: &NamedOrBlankNode, c: &Constellation) -> Result<()> {
        let extracted = &self.extracted;
        for verb in &c.verbs {
            q.push(
                tool.clone(),
                &nn(tg::PERFORMS)?,
                nn(&verb.iri)?.into(),
                extracted,
            );
        }
        for (i, ent) in c.entities.iter().enumerate() {
            let rel = if ent.weight >= 0.5 {
                tg::ACTS_ON
            } else {
                tg::MENTIONS
            };
            q.push(tool.clone(), &nn(rel)?, nn(&ent.iri)?.into(), extracted);
            if i == 0 && ent.weight >= 0.9 {
                q.push(
                    tool.clone(),
                    &nn(tg::PRIMARY_ENTITY)?,
                    nn(&ent.iri)?.into(),
                    extracted,
                );
            }
        }
        for dom in &c.domains {
            let node = nn(&dom.iri)?;
            q.push(
                tool.clone(),
                &nn(tg::IN_DOMAIN)?,
                node.clone().into(),
                extracted,
            );
            q.declare(node.into(), tg::DOMAIN, &dom.label, extracted)?;
        }
        for verb in &c.new_verbs {
            q.declare(nn(&verb.iri)?.into(), tg::VERB, &verb.label, extracted)?;
        }
        let broader = nn(vocab::SKOS_BROADER)?;
        for term in &c.new_terms {
            let node: NamedOrBlankNode = nn(&term.iri)?.into();
            q.declare(node.clone(), tg::ENTITY, &term.label, extracted)?;
            for b in &term.broader {
                q.push(node.clone(), &broader, nn(b)?.into(), extracted);
            }
        }
        Ok(())
    }
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
