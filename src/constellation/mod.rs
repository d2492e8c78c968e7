//! Constellation builder: links a tool descriptor to ontology verbs,
//! entities and domains, using the extractor on its name, description and
//! parameters.
//!
//! Weights (all links are [`Provenance::Extracted`]):
//! - verb: the first verb in the NAME (1.0 × match weight), else the first
//!   verb of the description (0.8 ×), else a common English verb that starts
//!   the name (0.5) or the description (0.4; also any word that starts both
//!   the name and the description), minted as `verb:<lemma>` and listed in
//!   [`Constellation::new_verbs`]. The first word of a multi-word name is
//!   the verb slot unless it is an entity or brand: it never becomes a term;
//! - entities: name terms 1.0 × (0.6 inside a domain prefix), brand classes
//!   0.9 and the brand instance itself (at most 0.85, so never primary), open-vocabulary name nouns 0.8 (compounds 0.9); the description's
//!   first entity after its verb 0.8, other description entities 0.7,
//!   description values 0.5, the description's object noun as an open term
//!   0.5 (only when nothing else was found); parameter names 0.4, parameter
//!   descriptions 0.3;
//! - domains: tags 1.0 (`a/b` gives `a` 1.0 and `b` 0.8), name prefix
//!   (`Movies_1_`, `math.`, `github__`) 0.9, brands 0.7 (name) / 0.5 (description).
//!
//! Links are deduplicated by IRI keeping the maximum weight and sorted by
//! weight (stable: first seen first), so the output is deterministic.

mod describe;
mod name;

use crate::extract::{Extractor, lemma, tokens, words};
use crate::model::{
    Constellation, Link, Mention, MentionKind, NewTerm, Provenance, ToolDescriptor,
};
use crate::vocab::{self, local_name, tool_iri};

/// Links deduplicated by IRI (max weight), in first-seen order.
#[derive(Default)]
struct Links(Vec<Link>);

impl Links {
    fn add(&mut self, iri: &str, label: &str, weight: f32) {
        if iri.is_empty() || weight.is_nan() || weight <= 0.0 {
            return;
        }
        let weight = weight.min(1.0);
        if let Some(l) = self.0.iter_mut().find(|l| &*l.iri == iri) {
            l.weight = l.weight.max(weight);
        } else {
            self.0.push(Link {
                iri: iri.into(),
                label: label.into(),
                provenance: Provenance::Extracted,
                weight,
            });
        }
    }
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    fn done(mut self) -> Vec<Link> {
        self.0.sort_by(|a, b| b.weight.total_cmp(&a.weight));
        self.0
    }
}

fn label_of(x: &Extractor, iri: &str) -> String {
    x.lexicon()
        .labels(iri)
        .first()
        .map(|s| s.to_string())
        .unwrap_or_else(|| local_name(iri).to_string())
}

/// Byte length of a domain prefix in a tool name (`Movies_1_`, `math.`,
/// `github__`), with the prefix word.
fn name_prefix(name: &str) -> Option<(usize, &str)> {
    if let Some((head, _)) = name.split_once("__")
        && !head.is_empty()
        && head.chars().all(|c| c.is_alphanumeric() || c == '-')
    {
        return Some((head.len() + 2, head));
    }
    if let Some((head, rest)) = name.split_once('.')
        && !head.is_empty()
        && !rest.is_empty()
        && head.chars().all(char::is_alphabetic)
    {
        return Some((head.len() + 1, head));
    }
    let mut parts = name.splitn(3, '_');
    if let (Some(a), Some(b), Some(_)) = (parts.next(), parts.next(), parts.next())
        && !a.is_empty()
        && a.chars().all(char::is_alphabetic)
        && !b.is_empty()
        && b.chars().all(|c| c.is_ascii_digit())
    {
        return Some((a.len() + b.len() + 2, a));
    }
    None
}

fn is_term_kind(k: MentionKind) -> bool {
    matches!(
        k,
        MentionKind::Verb | MentionKind::Entity | MentionKind::Brand
    )
}

/// A constellation under construction: the links found so far.
struct Parts<'x> {
    x: &'x Extractor,
    verbs: Links,
    entities: Links,
    domains: Links,
    new_terms: Vec<NewTerm>,
    new_verbs: Vec<NewTerm>,
    /// The verb's lemma, as the tool's text says it (read-only or not).
    verb_lemma: Option<String>,
    warnings: Vec<String>,
}

/// Build the constellation of one tool: its name, then its description,
/// then its parameters (see the weights above).
pub fn build(desc: &ToolDescriptor, x: &Extractor) -> Constellation {
    let mut parts = Parts {
        x,
        verbs: Links::default(),
        entities: Links::default(),
        domains: Links::default(),
        new_terms: Vec::new(),
        new_verbs: Vec::new(),
        verb_lemma: None,
        warnings: Vec::new(),
    };
    let name = parts.name(desc);
    parts.description(desc, &name);
    parts.parameters(desc);
    parts.finish(desc)
}

impl Parts<'_> {
    /// Parameter names and descriptions: the terms they name.
    fn parameters(&mut self, desc: &ToolDescriptor) {
        for p in &desc.params {
            for (text, w) in [(p.name.as_str(), 0.4), (&*p.description, 0.3)] {
                for m in self.x.extract(text) {
                    if is_term_kind(m.kind) {
                        add_mention_entities(
                            self.x,
                            &m,
                            w,
                            0.0,
                            &mut self.entities,
                            &mut self.domains,
                        );
                    }
                }
            }
        }
    }

    fn finish(self, desc: &ToolDescriptor) -> Constellation {
        let read_only = desc.read_only.unwrap_or_else(|| {
            self.verb_lemma
                .as_deref()
                .and_then(|v| v.split_whitespace().next())
                .is_some_and(words::is_read_verb)
                || self
                    .verbs
                    .0
                    .first()
                    .is_some_and(|l| words::is_read_verb(&lemma(local_name(&l.iri))))
        });
        Constellation {
            descriptor: desc.clone(),
            iri: tool_iri(&desc.id),
            verbs: self.verbs.done(),
            entities: self.entities.done(),
            domains: self.domains.done(),
            new_terms: self.new_terms,
            new_verbs: self.new_verbs,
            read_only,
            depends_on: desc.depends_on.clone(),
            warnings: self.warnings,
        }
    }
}

/// The most a brand instance link weighs: below the 0.9 a primary entity
/// needs, so the tool still acts primarily on the brand's class.
const BRAND_INSTANCE_MAX: f32 = 0.85;

/// Entity links (and brand domains) carried by one mention. `w` scales
/// entity and value weights; `brand_domain` is the brand's domain weight.
fn add_mention_entities(
    x: &Extractor,
    m: &Mention,
    w: f32,
    brand_domain: f32,
    entities: &mut Links,
    domains: &mut Links,
) {
    match m.kind {
        MentionKind::Entity => {
            for r in &m.iris {
                entities.add(&r.iri, &label_of(x, &r.iri), w * r.weight);
            }
        }
        MentionKind::Brand => {
            // iris: [brand, class, …]: the classes are what the tool acts on.
            for r in m.iris.iter().filter(|r| r.iri.starts_with(vocab::ENT)) {
                entities.add(&r.iri, &label_of(x, &r.iri), w * r.weight);
            }
            // and the brand itself, so a request naming it prefers this
            // tool to another brand's twin (never the primary entity).
            for r in m.iris.iter().filter(|r| r.iri.starts_with(vocab::BRAND)) {
                let weight = (w * r.weight).min(BRAND_INSTANCE_MAX);
                entities.add(&r.iri, &label_of(x, &r.iri), weight);
            }
            if brand_domain > 0.0
                && let Some(iri) = vocab::mint(vocab::DOMAIN, &m.value)
            {
                domains.add(&iri, &m.surface, brand_domain);
            }
        }
        MentionKind::Verb | MentionKind::ProperNoun | MentionKind::Quoted => {}
        _ => {
            for r in &m.iris {
                entities.add(&r.iri, &label_of(x, &r.iri), 0.5 * w * r.weight);
            }
        }
    }
}

fn mint_verb(l: &str, w: f32, verbs: &mut Links, new_verbs: &mut Vec<NewTerm>) {
    // a function word is never a verb ("The AI has to …")
    if words::is_stop(l) {
        return;
    }
    let Some(iri) = vocab::mint(vocab::VERB, l) else {
        return;
    };
    verbs.add(&iri, l, w);
    if !new_verbs.iter().any(|t| t.iri == iri) {
        new_verbs.push(NewTerm {
            iri,
            label: l.to_string(),
            broader: Vec::new(),
        });
    }
}

fn mint_term(
    toks: &[&tokens::Token<'_>],
    broader: Vec<String>,
    w: f32,
    entities: &mut Links,
    new_terms: &mut Vec<NewTerm>,
) {
    let label = toks
        .iter()
        .map(|t| t.lemma.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let Some(iri) = vocab::mint(vocab::TERM, &label) else {
        return;
    };
    entities.add(&iri, &label, w);
    if !new_terms.iter().any(|t| t.iri == iri) {
        new_terms.push(NewTerm {
            iri,
            label,
            broader,
        });
    }
}

/// The description's direct object as an open term: after the first verb
/// (or the first word), skip determiners, take words up to a function word,
/// a participle or punctuation, and keep the last one (the head noun).
fn description_object(
    x: &Extractor,
    text: &str,
    ms: &[Mention],
    entities: &mut Links,
    new_terms: &mut Vec<NewTerm>,
) {
    let lex = x.lexicon();
    let toks = tokens::tokenize(
        text,
        &|w| lex.is_whole_word(w, &crate::extract::everything),
        &|l| lex.is_verb_lemma(l, &crate::extract::everything) || words::is_common_verb(l),
    );
    let start = ms
        .iter()
        .find(|m| m.kind == MentionKind::Verb)
        .map_or(0, |m| m.end);
    let mut iter = toks.iter().filter(|t| t.start >= start).peekable();
    if start == 0 {
        iter.next(); // the first word is the (unknown) verb
    }
    let mut head: Option<&tokens::Token<'_>> = None;
    for t in iter {
        if t.hard_before && head.is_some() {
            break;
        }
        let stop = words::is_stop(&t.lower);
        if stop && head.is_none() {
            continue;
        }
        if stop
            || t.lower.ends_with("ed")
            || t.lower.ends_with("ing")
            || t.lower.chars().any(|c| c.is_ascii_digit())
        {
            break;
        }
        head = Some(t);
    }
    if let Some(h) = head
        && h.lower.chars().count() >= 3
        && !ms.iter().any(|m| m.start <= h.start && h.end <= m.end)
    {
        mint_term(&[h], Vec::new(), 0.5, entities, new_terms);
    }
}

#[cfg(test)]
mod tests;
