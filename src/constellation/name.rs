//! A tool's name: its domain prefix and tags, its verb, the entities it
//! names, and open-vocabulary terms for what the ontology does not know.

use super::{Parts, add_mention_entities, label_of, mint_term, mint_verb, name_prefix};
use crate::extract::{tokens, words};
use crate::model::{MentionKind, ToolDescriptor};
use crate::vocab;

/// What the description step needs to know of the name.
pub(super) struct NameSlot {
    /// The first word of the name's body is its verb slot.
    pub verb_slot: bool,
    /// That word's lemma.
    pub first: Option<String>,
}

impl Parts<'_> {
    /// Domains from the tags and the name's prefix, then the name itself.
    pub(super) fn name(&mut self, desc: &ToolDescriptor) -> NameSlot {
        for tag in &desc.tags {
            for (k, seg) in tag.split('/').enumerate() {
                if let Some(iri) = vocab::mint(vocab::DOMAIN, seg) {
                    let w = if k == 0 { 1.0 } else { 0.8 };
                    self.domains.add(&iri, seg.trim(), w);
                }
            }
        }
        let prefix = name_prefix(&desc.name);
        let prefix_end = prefix.map_or(0, |(n, _)| n);
        if let Some((_, word)) = prefix
            && let Some(iri) = vocab::mint(vocab::DOMAIN, word)
        {
            self.domains.add(&iri, word, 0.9);
        }
        self.name_terms(&desc.name, prefix_end)
    }

    /// The name's verb and entities, and open terms for its other words.
    fn name_terms(&mut self, name: &str, prefix_end: usize) -> NameSlot {
        let x = self.x;
        let lex = x.lexicon();
        let name_ms = x.extract(name);
        if let Some(m) = name_ms
            .iter()
            .find(|m| m.kind == MentionKind::Verb && m.start >= prefix_end)
        {
            for r in &m.iris {
                self.verbs.add(&r.iri, &label_of(x, &r.iri), r.weight);
            }
            self.verb_lemma = Some(m.value.clone());
        }
        for m in &name_ms {
            let pw = if m.end <= prefix_end { 0.6 } else { 1.0 };
            add_mention_entities(x, m, pw, 0.7, &mut self.entities, &mut self.domains);
        }
        // open vocabulary from the name
        let toks = tokens::tokenize(
            name,
            &|w| lex.is_whole_word(w, &crate::extract::everything),
            &|l| lex.is_verb_lemma(l, &crate::extract::everything) || words::is_common_verb(l),
        );
        let in_kind = |t: &tokens::Token<'_>, k: MentionKind| {
            name_ms
                .iter()
                .any(|m| m.kind == k && m.start <= t.start && t.end <= m.end)
        };
        let body: Vec<&tokens::Token<'_>> = toks.iter().filter(|t| t.start >= prefix_end).collect();
        // the verb slot: the first body token when it is a verb
        // (also any non-entity first word of a multi-word name: `acquireCustomers`)
        let verb_slot = body.first().is_some_and(|t| {
            lex.is_verb_lemma(&t.lemma, &crate::extract::everything)
                || words::is_common_verb(&t.lemma)
                || in_kind(t, MentionKind::Verb)
                || (body.len() >= 2
                    && !in_kind(t, MentionKind::Entity)
                    && !in_kind(t, MentionKind::Brand))
        });
        if self.verbs.is_empty()
            && let Some(t) = body.first()
            && verb_slot
            && words::is_common_verb(&t.lemma)
        {
            mint_verb(&t.lemma, 0.5, &mut self.verbs, &mut self.new_verbs);
            self.verb_lemma = Some(t.lemma.clone());
        }
        let covered = |t: &tokens::Token<'_>| {
            name_ms
                .iter()
                .any(|m| m.kind != MentionKind::ProperNoun && m.start <= t.start && t.end <= m.end)
        };
        for run in runs(&body, verb_slot) {
            for &t in &run {
                if !covered(t) {
                    mint_term(
                        &[t],
                        Vec::new(),
                        0.8,
                        &mut self.entities,
                        &mut self.new_terms,
                    );
                }
            }
            // compound: unmatched modifiers + an ontology entity head
            if let Some((head, mods)) = run.split_last()
                && !mods.is_empty()
                && mods.iter().all(|t| !covered(t))
            {
                let heads: Vec<String> = name_ms
                    .iter()
                    .filter(|m| {
                        m.kind == MentionKind::Entity && m.start == head.start && m.end == head.end
                    })
                    .flat_map(|m| m.iris.iter().map(|r| r.iri.clone()))
                    .collect();
                if !heads.is_empty() {
                    mint_term(&run, heads, 0.9, &mut self.entities, &mut self.new_terms);
                }
            }
        }
        NameSlot {
            verb_slot,
            first: body.first().map(|t| t.lemma.clone()),
        }
    }
}

/// The runs of term words in the name's body: broken by the verb slot,
/// function words, digits and one-letter words.
fn runs<'t>(body: &[&'t tokens::Token<'t>], verb_slot: bool) -> Vec<Vec<&'t tokens::Token<'t>>> {
    let mut run = Vec::new();
    let mut runs = Vec::new();
    for (k, t) in body.iter().enumerate() {
        let skip = (k == 0 && verb_slot)
            || words::is_stop(&t.lower)
            || t.lower.chars().any(|c| c.is_ascii_digit())
            || t.lower.chars().count() < 2;
        if skip {
            if !run.is_empty() {
                runs.push(std::mem::take(&mut run));
            }
            continue;
        }
        run.push(*t);
    }
    if !run.is_empty() {
        runs.push(run);
    }
    runs
}
