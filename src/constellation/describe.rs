//! A tool's description (and title): the verb when the name has none, the
//! entities it names, its object; and the last-resort verb an imported
//! tool must have.

use super::name::NameSlot;
use super::{Parts, add_mention_entities, description_object, label_of, mint_verb};
use crate::extract::{lemma, words};
use crate::model::{MentionKind, ToolDescriptor};

impl Parts<'_> {
    /// The description's verb (when the name gave none) and entities.
    pub(super) fn description(&mut self, desc: &ToolDescriptor, name: &NameSlot) {
        let x = self.x;
        let mut text = desc.description.clone();
        if let Some(t) = &desc.title {
            text = format!("{t}. {text}");
        }
        let desc_ms = x.extract(&text);
        let first_verb = desc_ms.iter().position(|m| m.kind == MentionKind::Verb);
        if self.verbs.is_empty() {
            if let Some(m) = first_verb.and_then(|i| desc_ms.get(i)) {
                for r in &m.iris {
                    self.verbs.add(&r.iri, &label_of(x, &r.iri), 0.8 * r.weight);
                }
                self.verb_lemma = Some(m.value.clone());
            } else if let Some(w) = text.split_whitespace().next() {
                let l = lemma(w.trim_matches(|c: char| !c.is_alphanumeric()));
                // a common verb, or the word the name starts with (`acquireCustomers`
                // / "Acquire new customers"): both are verbs with little doubt
                let name_first = name.verb_slot && name.first.as_deref() == Some(l.as_str());
                if !words::is_stop(&l) && (words::is_common_verb(&l) || name_first) {
                    mint_verb(&l, 0.4, &mut self.verbs, &mut self.new_verbs);
                    self.verb_lemma = Some(l);
                }
            }
        }
        if self.verbs.is_empty() {
            self.last_resort_verb(desc, name);
        }
        let object = desc_ms
            .iter()
            .enumerate()
            .find(|(i, m)| first_verb.is_none_or(|v| *i > v) && m.kind == MentionKind::Entity)
            .map(|(i, _)| i);
        for (i, m) in desc_ms.iter().enumerate() {
            let w = if Some(i) == object { 0.8 } else { 0.7 };
            add_mention_entities(x, m, w, 0.5, &mut self.entities, &mut self.domains);
        }
        if self.entities.is_empty() {
            description_object(x, &text, &desc_ms, &mut self.entities, &mut self.new_terms);
        }
    }

    /// Imported tools must have a verb: an open-vocabulary one from the
    /// description: its first word when it reads as one ("Provides …",
    /// "Talk to …"; not an acronym such as "API"), else the word after an
    /// early "to" ("API to monetize …"), else the name's verb slot
    /// (`grabObject`), else an agent noun ("Ad Generator" generates).
    fn last_resort_verb(&mut self, desc: &ToolDescriptor, name: &NameSlot) {
        let words: Vec<&str> = desc
            .description
            .split_whitespace()
            .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
            .collect();
        // never a function word ("The AI has to …" must not mint verb:the)
        let wordlike = |w: &&str| {
            w.chars().count() >= 3
                && w.chars().all(char::is_alphabetic)
                && !words::is_stop(&w.to_lowercase())
        };
        let first = words.first().copied().filter(wordlike);
        let acronym = |w: &str| w.chars().filter(|c| c.is_uppercase()).count() > 1;
        let inflected = first.filter(|w| w.ends_with('s') && lemma(w) != w.to_lowercase());
        let opening = first.filter(|w| !acronym(w));
        let after_to = words
            .iter()
            .take(6)
            .position(|w| w.eq_ignore_ascii_case("to"))
            .and_then(|i| words.get(i + 1).copied())
            .filter(wordlike);
        let slot = name.first.clone().filter(|_| name.verb_slot).filter(|l| {
            l.chars().count() >= 3 && l.chars().all(char::is_alphabetic) && !words::is_stop(l)
        });
        let doer = words
            .iter()
            .filter_map(|w| agent_noun(w))
            .next()
            .map(|l| (l, "description"))
            .or_else(|| {
                crate::lexical::tokenize(&desc.name)
                    .iter()
                    .rev()
                    .filter_map(|t| agent_noun(t))
                    .next()
                    .map(|l| (l, "name"))
            });
        let choice = inflected
            .or(opening)
            .or(after_to)
            .map(|w| (lemma(w), "description"))
            .or_else(|| slot.map(|l| (l, "name")))
            .or(doer);
        if let Some((l, from)) = choice {
            mint_verb(&l, 0.3, &mut self.verbs, &mut self.new_verbs);
            self.warnings.push(format!(
                "tool `{}`: no verb the ontology knows; minted verb:{l} from its {from}",
                desc.name
            ));
            self.verb_lemma = Some(l);
        }
    }
}

/// The verb an agent noun says the tool does: "Ad Generator" generates,
/// `AppBuilder` builds, "Ad Assistant" assists.
fn agent_noun(w: &str) -> Option<String> {
    let lower = w.to_lowercase();
    let stem = lower
        .strip_suffix("er")
        .or_else(|| lower.strip_suffix("or"))
        .or_else(|| lower.strip_suffix("ant"))?;
    (lower.chars().count() >= 6 && lower.chars().all(char::is_alphabetic))
        .then(|| lemma(&format!("{stem}ing")))
}
