//! Entity extractor: turns a request (or a tool name/description) into
//! [`Mention`]s resolved to ontology nodes.
//!
//! Pipeline, one pass each, left to right:
//! 1. truncate to `max_len` bytes at a char boundary;
//! 2. structured values with a nom grammar ([`values`]): flight numbers,
//!    times, dates, durations, money, currencies, party sizes, e-mail, URL,
//!    phone, quoted strings. Their spans are masked for the later passes
//!    (structured values beat term matches on the same span);
//! 3. tokenise ([`tokens`]; identifiers such as `MAKE_RESERVATION` or
//!    `convertCurrency` are split into parts with their own sub-spans) and
//!    match ontology labels, longest multi-word match first, on lemmatised
//!    tokens ([`lemma`]; articles inside a phrase are skipped, so
//!    `make a reservation` and `MAKE_RESERVATION` meet);
//! 4. capitalised words left over become proper nouns.
//!
//! Resolution weights:
//! - a label shared by several nodes of the chosen kind resolves to **all of
//!   them with the same weight** (1.0 when the input's word forms equal the
//!   label's, 0.9 when only the lemmas match): disambiguation needs the
//!   graph context, not an arbitrary split;
//! - when a label names both a verb and an entity (`book`, `order`), the
//!   mention takes one kind from its context: after a determiner,
//!   possessive or number it is an entity; at a sentence start, after
//!   `to`/`please`/a pronoun/a modal, or when no verb was seen yet in the
//!   text, a verb; otherwise an entity;
//! - a multi-word verb label (`make a reservation`) also yields an Entity
//!   mention for each inner word that is an entity label (`reservation`):
//!   the only overlap between mentions;
//! - brands (`TermKind::Instance`): `[brand 1.0, class 0.9]` (times 0.9 for a
//!   lemma-only match). A single-word brand label with a capital letter
//!   needs a capital in the input too (`Delta` the airline, not `delta`),
//!   except inside identifiers;
//! - proper nouns: capitalised words (or runs of them) that matched nothing,
//!   are not function words, and, at a sentence start, are not common words.
//!   After `to/from/in/at/near/into/via/toward(s)/around/visit` -> `[Place 0.5]`;
//!   after `with/call/email/text/message/ask/tell` -> `[Person 0.5]`;
//!   else `[Place 0.3, Person 0.3]`.

mod lemma;
mod lexicon;
mod steps;
pub(crate) mod tokens;
mod values;
pub(crate) mod words;

use std::sync::Arc;

pub use lemma::lemma;
pub use lexicon::{Lexicon, Sees, everything};
pub use steps::steps;
pub use tokens::split_identifier;

use crate::model::{LexEntry, Mention, MentionKind, Resolved, TermKind};
use crate::vocab::ent;
use tokens::{Caps, Token};

/// Default input limit: 64 KiB.
const DEFAULT_MAX_LEN: usize = 64 * 1024;

/// The extractor: a lexicon plus the value grammar. Cheap to clone and share.
#[derive(Debug, Clone)]
pub struct Extractor {
    lexicon: Arc<Lexicon>,
    max_len: usize,
}

impl Extractor {
    /// An extractor over `lexicon`, with a 64 KiB input limit.
    pub fn new(lexicon: Lexicon) -> Self {
        Extractor {
            lexicon: Arc::new(lexicon),
            max_len: DEFAULT_MAX_LEN,
        }
    }

    /// Set the input limit in bytes; longer input is truncated at a char boundary.
    pub fn with_max_len(mut self, bytes: usize) -> Self {
        self.max_len = bytes;
        self
    }

    /// The lexicon this extractor matches against.
    pub fn lexicon(&self) -> &Lexicon {
        &self.lexicon
    }

    /// Every mention in `text`, sorted by start (then longest first):
    /// structured values, then ontology terms over the tokens outside
    /// them, then proper nouns over the tokens left.
    pub fn extract(&self, text: &str) -> Vec<Mention> {
        self.extract_seeing(text, &everything)
    }

    /// [`Extractor::extract`] for a reader who sees only some entries: the
    /// others are as if the lexicon lacked them (tokenising included), so
    /// what comes out cannot tell them from words no node has.
    pub fn extract_seeing(&self, text: &str, sees: Sees<'_>) -> Vec<Mention> {
        let text = truncate(text, self.max_len);
        let lex = &*self.lexicon;
        let vals = values::scan(text);
        let mut out: Vec<Mention> = vals.iter().map(|v| value_mention(text, v)).collect();
        let toks = tokens::tokenize(text, &|w| lex.is_whole_word(w, sees), &|l| {
            lex.is_verb_lemma(l, sees) || words::is_common_verb(l)
        });
        let usable: Vec<bool> = toks
            .iter()
            .map(|t| !vals.iter().any(|v| t.start < v.end && v.start < t.end))
            .collect();
        let used = self.terms(text, &toks, &usable, sees, &mut out);
        proper_nouns(text, &toks, &usable, &used, &mut out);
        out.sort_by(|a, b| {
            a.start
                .cmp(&b.start)
                .then(b.end.cmp(&a.end))
                .then((a.kind as u8).cmp(&(b.kind as u8)))
        });
        out
    }

    /// The ontology terms among the usable tokens; says which tokens they
    /// used.
    fn terms(
        &self,
        text: &str,
        toks: &[tokens::Token<'_>],
        usable: &[bool],
        sees: Sees<'_>,
        out: &mut Vec<Mention>,
    ) -> Vec<bool> {
        let lex = &*self.lexicon;
        let is_usable = |j: usize| usable.get(j).copied().unwrap_or(false);
        let mut used = vec![false; toks.len()];
        let mut seen_verb = false;
        let mut i = 0;
        while i < toks.len() {
            if !is_usable(i) {
                i += 1;
                continue;
            }
            let Some(m) = lex.match_at(toks, i, &is_usable, sees) else {
                i += 1;
                continue;
            };
            let last = m.tokens.last().copied().unwrap_or(i);
            for &j in &m.tokens {
                if let Some(u) = used.get_mut(j) {
                    *u = true;
                }
            }
            let before = out.len();
            term_mentions(lex, toks, text, &m, &mut seen_verb, sees, out);
            if out.len() == before {
                // nothing usable: let shorter patterns/proper nouns have it
                for &j in &m.tokens {
                    if let Some(u) = used.get_mut(j) {
                        *u = false;
                    }
                }
            }
            i = last + 1;
        }
        used
    }
}

/// A structured value as a mention.
fn value_mention(text: &str, v: &values::Value) -> Mention {
    Mention {
        start: v.start,
        end: v.end,
        kind: v.kind,
        surface: text.get(v.start..v.end).unwrap_or("").to_string(),
        value: v.value.clone(),
        iris: values::Value::iri(v.kind)
            .map(|iri| {
                vec![Resolved {
                    iri: iri.to_string(),
                    weight: 1.0,
                }]
            })
            .unwrap_or_default(),
    }
}

/// Runs of capitalised words no term or value took: a place or a person,
/// the word before telling which.
fn proper_nouns(
    text: &str,
    toks: &[tokens::Token<'_>],
    usable: &[bool],
    used: &[bool],
    out: &mut Vec<Mention>,
) {
    let is_usable = |j: usize| usable.get(j).copied().unwrap_or(false);
    let mut i = 0;
    while i < toks.len() {
        if !proper_start(toks, i, used, &is_usable) {
            i += 1;
            continue;
        }
        let mut j = i;
        while toks
            .get(j + 1)
            .is_some_and(|t| !t.hard_before && !t.sentence_start && proper_word(t))
            && is_usable(j + 1)
            && !used.get(j + 1).copied().unwrap_or(true)
        {
            j += 1;
        }
        let (Some(a), Some(b)) = (toks.get(i), toks.get(j)) else {
            break;
        };
        let prev = if i > 0 && !a.sentence_start {
            toks.get(i - 1).map(|t| t.lower.as_str())
        } else {
            None
        };
        let r = |iri: &str, weight: f32| Resolved {
            iri: iri.to_string(),
            weight,
        };
        let iris = match prev {
            Some(
                "to" | "from" | "in" | "at" | "near" | "into" | "via" | "toward" | "towards"
                | "around" | "visit",
            ) => vec![r(ent::PLACE, 0.5)],
            Some("with" | "call" | "email" | "text" | "message" | "ask" | "tell") => {
                vec![r(ent::PERSON, 0.5)]
            }
            _ => vec![r(ent::PLACE, 0.3), r(ent::PERSON, 0.3)],
        };
        out.push(Mention {
            start: a.start,
            end: b.end,
            kind: MentionKind::ProperNoun,
            surface: text.get(a.start..b.end).unwrap_or("").to_string(),
            value: toks
                .get(i..=j)
                .unwrap_or(&[])
                .iter()
                .map(|t| t.text)
                .collect::<Vec<_>>()
                .join(" "),
            iris,
        });
        i = j + 1;
    }
}

/// Longest prefix of `text` of at most `max` bytes ending on a char boundary.
pub(crate) fn truncate(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while end > 0 && !text.is_char_boundary(end) {
        end -= 1;
    }
    text.get(..end).unwrap_or("")
}

fn proper_word(t: &Token<'_>) -> bool {
    matches!(t.caps, Caps::Title | Caps::Upper)
        && !t.ident
        && t.text.chars().count() >= 2
        && !words::is_stop(&t.lower)
}

fn proper_start(
    toks: &[Token<'_>],
    i: usize,
    used: &[bool],
    usable: &dyn Fn(usize) -> bool,
) -> bool {
    let Some(t) = toks.get(i) else {
        return false;
    };
    if used.get(i).copied().unwrap_or(true) || !usable(i) || !proper_word(t) {
        return false;
    }
    // Sentence-initial capitals are only names when not a common word.
    !(t.sentence_start
        && (words::is_common_verb(&t.lemma) || SENTENCE_COMMON.contains(&t.lower.as_str())))
}

/// Capitalised only because they start a sentence.
const SENTENCE_COMMON: &[&str] = &[
    "need", "want", "looking", "like", "would", "could", "can", "is", "are", "any", "what",
    "which", "where", "when", "who", "how", "why", "hey", "hi", "hello", "thanks", "thank", "yes",
    "no", "ok", "okay", "sure", "great", "also", "and", "but", "then", "next", "first", "now",
    "just", "maybe", "actually", "tell", "give", "help", "i'd", "im", "we'd", "cheap", "cheapest",
    "best", "new", "some", "all", "my", "our", "your", "there", "here", "every",
];

const DETERMINERS: &[&str] = &[
    "a", "an", "the", "my", "your", "our", "their", "his", "her", "its", "this", "that", "these",
    "those", "some", "any", "each", "every", "all", "no", "new", "of", "per", "another",
];

const VERB_CONTEXT: &[&str] = &[
    "to", "please", "i", "we", "you", "they", "can", "could", "will", "would", "should", "must",
    "let", "lets", "and", "then", "pls", "plz", "me", "also", "just", "not", "dont", "don",
];

fn term_mentions(
    lex: &Lexicon,
    toks: &[Token<'_>],
    text: &str,
    m: &lexicon::Match<'_>,
    seen_verb: &mut bool,
    sees: Sees<'_>,
    out: &mut Vec<Mention>,
) {
    let (Some(&fi), Some(&li)) = (m.tokens.first(), m.tokens.last()) else {
        return;
    };
    let (Some(first), Some(last)) = (toks.get(fi), toks.get(li)) else {
        return;
    };
    let w = if m.exact { 1.0 } else { 0.9 };
    let entries: Vec<&LexEntry> = m.entries.iter().filter_map(|e| lex.entry(*e)).collect();
    let mut iris: Vec<Resolved> = Vec::new();
    let push = |iris: &mut Vec<Resolved>, iri: &str, weight: f32| {
        if let Some(r) = iris.iter_mut().find(|r| r.iri == iri) {
            r.weight = r.weight.max(weight);
        } else {
            iris.push(Resolved {
                iri: iri.to_string(),
                weight,
            });
        }
    };
    let prev = if fi > 0 && !first.sentence_start {
        toks.get(fi - 1)
    } else {
        None
    };
    let kind = term_kind(&entries, prev, *seen_verb);
    for e in &entries {
        match (&e.kind, kind) {
            (TermKind::Instance { class }, MentionKind::Brand) => {
                push(&mut iris, &e.iri, w);
                push(&mut iris, class, 0.9 * w);
            }
            (TermKind::Verb, MentionKind::Verb) | (TermKind::Entity, MentionKind::Entity) => {
                push(&mut iris, &e.iri, w);
            }
            _ => {}
        }
    }
    if iris.is_empty() {
        return;
    }
    if kind == MentionKind::Verb {
        *seen_verb = true;
    }
    out.push(Mention {
        start: first.start,
        end: last.end,
        kind,
        surface: text.get(first.start..last.end).unwrap_or("").to_string(),
        value: m.pattern.lemmas.join(" "),
        iris,
    });
    if kind == MentionKind::Verb && m.tokens.len() > 1 {
        inner_entities(lex, toks, &m.tokens[1..], w, sees, out);
    }
}

/// What a term's entries make it: a brand when one is an instance, a verb
/// or an entity when only one kind is there, else the context decides (a
/// determiner or a number before it: an entity; the start, a verb-taking
/// word, or no verb yet: a verb).
fn term_kind(entries: &[&LexEntry], prev: Option<&Token<'_>>, seen_verb: bool) -> MentionKind {
    let has = |k: fn(&TermKind) -> bool| entries.iter().any(|e| k(&e.kind));
    if has(|k| matches!(k, TermKind::Instance { .. })) {
        return MentionKind::Brand;
    }
    if !has(|k| *k == TermKind::Entity) {
        return MentionKind::Verb;
    }
    if !has(|k| *k == TermKind::Verb) {
        return MentionKind::Entity;
    }
    let entity_ctx = prev.is_some_and(|p| DETERMINERS.contains(&p.lower.as_str()) || p.is_number());
    let verb_ctx = prev.is_none_or(|p| VERB_CONTEXT.contains(&p.lower.as_str()));
    if entity_ctx {
        MentionKind::Entity
    } else if verb_ctx || !seen_verb {
        MentionKind::Verb
    } else {
        MentionKind::Entity
    }
}

/// The entities inside a multi-word verb phrase (its words after the first).
fn inner_entities(
    lex: &Lexicon,
    toks: &[Token<'_>],
    inner: &[usize],
    w: f32,
    sees: Sees<'_>,
    out: &mut Vec<Mention>,
) {
    for &j in inner {
        let Some(t) = toks.get(j) else { continue };
        let ents: Vec<Resolved> = lex
            .single(&t.lemma, sees)
            .filter(|e| e.kind == TermKind::Entity)
            .map(|e| Resolved {
                iri: e.iri.clone(),
                weight: w,
            })
            .collect();
        if !ents.is_empty() {
            out.push(Mention {
                start: t.start,
                end: t.end,
                kind: MentionKind::Entity,
                surface: t.text.to_string(),
                value: t.lemma.clone(),
                iris: ents,
            });
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
