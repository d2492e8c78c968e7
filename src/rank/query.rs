//! What a request says, worked out once: its mentions, the text the dense
//! and lexical channels see, its steps, and the tools it names exactly.

use super::Mode;
use super::channels::Sources;
use super::payload::{cut, payload, without_payload};
use crate::catalog::Catalog;
use crate::extract::{split_identifier, steps};
use crate::model::{Mention, MentionKind};
use crate::scope::Scope;
use std::ops::Range;

/// A parsed request.
#[derive(Debug)]
pub(crate) struct Query {
    pub mode: Mode,
    /// Mentions from the planner's `verb` field (stated intent).
    pub verb_mentions: Vec<Mention>,
    /// Every mention: the verb field's first, then the text's.
    pub all_mentions: Vec<Mention>,
    /// What the graph channel weighs: `all_mentions`, then what the
    /// conversation adds (see [`Query::with_context`]).
    pub evidence: Vec<Mention>,
    /// Where `evidence` came from.
    pub sources: Sources,
    /// The request states its own verb.
    pub has_verb: bool,
    /// How little the request says itself (see [`brevity`]; 0 outside a
    /// conversation).
    pub brevity: f32,
    /// A short request with its own verb in a conversation, with the
    /// things the conversation is about: "delete it (message)". What the
    /// dense channel reads instead of `text` (BM25 reads the request: the
    /// things' words only pulled it towards the earlier tool).
    pub with_things: Option<String>,
    /// What the dense and lexical channels see: the verb's words, then the
    /// text (without a message's payload, see [`super::payload`]).
    pub text: String,
    /// The verb's words, then the whole text as written: what the values a
    /// request supplies are read from.
    pub written: String,
    /// The steps of a multi-step request (empty for one intent).
    pub steps: Vec<Step>,
    /// Tools the request names exactly (identifier, quoted, or the whole request).
    pub exact: Vec<usize>,
    /// List each match's prerequisites right after it.
    pub dependencies: bool,
}

/// One step of a multi-step request.
#[derive(Debug)]
pub(crate) struct Step {
    /// The step as written (named in explanations).
    pub label: String,
    /// What the channels see: the verb's words, then the step.
    pub text: String,
    /// The mentions this step sees: the verb field's, then the step's own.
    pub mentions: Vec<Mention>,
}

/// `text` prefixed with the words of the planner's verb, when there is one:
/// what the dense and lexical channels see of a request.
pub(crate) fn with_verb(verb: Option<&str>, text: &str) -> String {
    match verb {
        Some(v) if !v.trim().is_empty() => format!("{} {text}", split_identifier(v).join(" ")),
        _ => text.to_string(),
    }
}

/// The steps of a request text with their byte ranges (empty for one
/// intent, or without `split_steps`).
/// The most steps one request is split into.
pub const MAX_STEPS: usize = 16;

fn step_labels(text: &str, split_steps: bool) -> Vec<(Range<usize>, &str)> {
    let mut ranges = if split_steps { steps(text) } else { Vec::new() };
    if ranges.len() < 2 {
        return Vec::new();
    }
    // Every step is embedded and ranked: past MAX_STEPS the rest is one
    // last step (23,083 steps in one request computed for 160 s).
    if ranges.len() > MAX_STEPS {
        let end = ranges.last().map_or(text.len(), |r| r.end);
        ranges.truncate(MAX_STEPS);
        if let Some(last) = ranges.last_mut() {
            last.end = end;
        }
    }
    ranges
        .into_iter()
        .filter_map(|range| Some((range.clone(), text.get(range)?)))
        .collect()
}

/// What the dense channel embeds for a request, known before it is parsed:
/// the whole text, and each step's (see [`Query::text`], [`Step::text`]).
pub(crate) fn embedding_texts(
    text: &str,
    verb: Option<&str>,
    split_steps: bool,
) -> (String, Vec<String>) {
    let steps = step_labels(text, split_steps)
        .into_iter()
        .map(|(_, label)| with_verb(verb, &without_payload(label)))
        .collect();
    (with_verb(verb, &without_payload(text)), steps)
}

impl Query {
    /// Parses a request against a catalog snapshot, as a caller who may see
    /// `scope` reads it. With `split_steps`, a request of two or more steps
    /// gets them in [`Query::steps`].
    pub fn parse(
        catalog: &Catalog,
        scope: &Scope,
        text: &str,
        verb: Option<&str>,
        mode: Mode,
        split_steps: bool,
    ) -> Self {
        let sees = catalog.sees(scope);
        let verb_mentions = verb
            .map(|v| catalog.extractor().extract_seeing(v, &sees))
            .unwrap_or_default();
        let text_mentions = catalog.extractor().extract_seeing(text, &sees);
        let mut exact = catalog.named_in(text);
        if let Some(v) = verb {
            exact.extend(catalog.named_in(v));
        }
        // A message's payload ("… about the quarterly budget") is not what
        // the tool acts on: no evidence, and not read by dense or BM25.
        let said = payload(text);
        let in_payload = |m: &Mention| {
            said.as_ref()
                .is_some_and(|p| m.start >= p.start && m.end <= p.end)
        };
        let steps = step_labels(text, split_steps)
            .into_iter()
            .map(|(range, label)| {
                let mut mentions = verb_mentions.clone();
                mentions.extend(
                    text_mentions
                        .iter()
                        .filter(|m| m.start >= range.start && m.end <= range.end)
                        .filter(|m| !in_payload(m))
                        .cloned(),
                );
                Step {
                    text: with_verb(verb, &without_payload(label)),
                    label: label.to_string(),
                    mentions,
                }
            })
            .collect();
        let mut all_mentions = verb_mentions.clone();
        all_mentions.extend(text_mentions.iter().cloned());
        let mut evidence = verb_mentions.clone();
        evidence.extend(text_mentions.iter().filter(|m| !in_payload(m)).cloned());
        Self {
            mode,
            has_verb: all_mentions.iter().any(|m| m.kind == MentionKind::Verb),
            brevity: 0.0,
            with_things: None,
            sources: Sources::request(verb_mentions.len()),
            evidence,
            verb_mentions,
            all_mentions,
            text: with_verb(verb, &cut(text, said.as_ref())),
            written: with_verb(verb, text),
            steps,
            exact,
            dependencies: false,
        }
    }

    /// Every mention: the verb field's first, then the text's.
    pub fn mentions(&self) -> Vec<Mention> {
        self.all_mentions.clone()
    }

    /// Adds what the conversation so far is about to the graph evidence:
    /// its entities and brands, and its verbs when the request states
    /// none ("delete it" keeps its own verb; "do the same for Paris"
    /// borrows the earlier one), each weighing [`context_weight`] of a
    /// mention in the request. The request's own mentions, texts and
    /// steps are untouched.
    pub fn with_context(mut self, catalog: &Catalog, scope: &Scope, context: &str) -> Self {
        let context = tail(context.trim(), CONTEXT_READ_BYTES);
        if context.is_empty() {
            return self;
        }
        let has_verb = self.has_verb;
        let sees = catalog.sees(scope);
        let added: Vec<Mention> = catalog
            .extractor()
            .extract_seeing(context, &sees)
            .into_iter()
            .filter(|m| match m.kind {
                MentionKind::Entity | MentionKind::Brand => true,
                MentionKind::Verb => !has_verb,
                _ => false,
            })
            .collect();
        self.brevity = brevity(&self.text);
        self.sources = Sources {
            explicit: self.verb_mentions.len(),
            context_from: self.evidence.len(),
            context_weight: context_weight(self.brevity, has_verb),
        };
        // The things the conversation is about that the request does not
        // name (`recipe`, `cuisine`).
        let mut things: Vec<&str> = Vec::new();
        for m in added.iter().filter(|m| m.kind != MentionKind::Verb) {
            if !things.contains(&m.surface.as_str())
                && !self.all_mentions.iter().any(|o| o.surface == m.surface)
            {
                things.push(&m.surface);
            }
        }
        let things = things.join(", ");
        self.evidence.extend(added);
        // A request with its own verb that points back at something and
        // names nothing itself ("delete it", "create that one") reads as
        // itself plus the things the conversation is about ("delete it
        // (message)"): its verb stays the one that counts.
        let names_a_thing = self.all_mentions.iter().any(|m| {
            matches!(m.kind, MentionKind::Entity | MentionKind::Brand) && !is_follow_up_word(m)
        });
        if has_verb && !names_a_thing && points_back(&self.text) && !things.is_empty() {
            self.with_things = Some(format!("{} ({things})", self.text));
        }
        self
    }

    /// A follow-up that names no verb and says little itself ("what about
    /// Paris?", "and for next week?"): the conversation's last tool is
    /// likely what it asks for again.
    pub fn is_bare_follow_up(&self) -> bool {
        self.sources.context_from != usize::MAX && !self.has_verb && self.brevity >= 0.6
    }

    /// How much more than usual the graph channel weighs: in a follow-up
    /// that points back ([`Query::with_things`]), the words say little
    /// ("cancel it") and the constellation says what: the request's verb
    /// on the conversation's things.
    pub fn graph_trust(&self) -> f32 {
        if self.with_things.is_some() {
            FOLLOW_UP_GRAPH_TRUST
        } else {
            1.0
        }
    }

    /// What the dense channel embeds in a conversation: the request's own
    /// text (or [`Query::with_things`]), and the conversation's end with
    /// its weight (not with the things: they say what it is about).
    pub fn conversation_texts(&self, context: Option<&str>) -> (String, Option<(String, f32)>) {
        match &self.with_things {
            Some(t) => (t.clone(), None),
            None => (
                self.text.clone(),
                context_text(context).map(|c| (c, self.sources.context_weight)),
            ),
        }
    }
}

/// The graph channel's weight in a follow-up that points back, against
/// its usual weight: there the graph leads and the text channels break
/// ties (Seal-Tools `followup-new-verb`, nDCG@10: 1x 0.765, 3x 0.801
/// while BM25 read the things too; then 8x 0.824, 20x 0.841, 50x 0.830;
/// graph alone 0.858).
const FOLLOW_UP_GRAPH_TRUST: f32 = 20.0;

/// Words that point back at something said before.
const POINTING_BACK: &[&str] = &[
    "it", "that", "this", "them", "those", "these", "same", "one",
];

/// Whether a request points back at something said before ("cancel it").
fn points_back(text: &str) -> bool {
    crate::lexical::tokenize(text)
        .iter()
        .any(|t| POINTING_BACK.contains(&t.as_str()))
}

/// Words of a follow-up that name nothing ("now do the same again",
/// "great, next delete it"), even where a catalog mints a term of one
/// ("Next", "one").
const FOLLOW_UP_WORDS: &[&str] = &[
    "actually", "again", "also", "another", "as", "great", "just", "let", "lets", "next", "now",
    "ok", "okay", "one", "perfect", "please", "same", "thanks", "then", "too", "instead", "its",
    "there", "us", "well", "yes",
];

/// A function word or one of [`FOLLOW_UP_WORDS`].
fn says_nothing(token: &str) -> bool {
    crate::lexical::is_stopword(token) || FOLLOW_UP_WORDS.contains(&token)
}

/// A mention made only of words that say nothing ("Next", "the same one").
fn is_follow_up_word(m: &Mention) -> bool {
    crate::lexical::tokenize(&m.surface)
        .iter()
        .all(|t| says_nothing(t))
}

/// The weight of the conversation against the request at most (a bare
/// follow-up: "what about Paris?"; one that states its own verb, "delete
/// it", keeps more of its own) and at least (a request that says
/// everything itself).
const CONTEXT_MAX: f32 = 0.8;
const CONTEXT_MAX_WITH_VERB: f32 = 0.5;
const CONTEXT_MIN: f32 = 0.05;

/// How little a request says itself, in [0, 1]: 1 for one or two words
/// that name something ("delete it", "what about Paris?"), 0 for seven or
/// more.
fn brevity(text: &str) -> f32 {
    let words = crate::lexical::tokenize(text)
        .into_iter()
        .filter(|t| !says_nothing(t))
        .count();
    ((7.0 - words as f32) / 5.0).clamp(0.0, 1.0)
}

/// How much the conversation so far weighs against a request of this
/// [`brevity`], in [`CONTEXT_MIN`, `CONTEXT_MAX`]: a bare follow-up leans
/// on the earlier turns; a request that says what it wants by itself
/// hardly.
fn context_weight(brevity: f32, has_verb: bool) -> f32 {
    let max = if has_verb {
        CONTEXT_MAX_WITH_VERB
    } else {
        CONTEXT_MAX
    };
    CONTEXT_MIN + (max - CONTEXT_MIN) * brevity
}

/// The bytes of the conversation the dense channel embeds: its end (the
/// most recent turns; the model reads a few hundred words at most).
const CONTEXT_EMBED_BYTES: usize = 600;
/// The bytes of the conversation its evidence is read from: its end.
const CONTEXT_READ_BYTES: usize = 4096;

/// The last `max` bytes of `text` at most, from a word boundary.
fn tail(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    let end = &text[start..];
    end.find(char::is_whitespace)
        .map_or(end, |ws| &end[ws..])
        .trim_start()
}

/// What the dense channel embeds of a conversation: its last
/// [`CONTEXT_EMBED_BYTES`], from a word boundary (`None` when empty).
pub(crate) fn context_text(context: Option<&str>) -> Option<String> {
    let c = tail(context?.trim(), CONTEXT_EMBED_BYTES);
    (!c.is_empty()).then(|| c.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mention(surface: &str) -> Mention {
        Mention {
            start: 0,
            end: surface.len(),
            kind: MentionKind::Entity,
            surface: surface.to_string(),
            value: surface.to_lowercase(),
            iris: Vec::new(),
        }
    }

    /// "Great. Next, delete it." names nothing, though a catalog may mint
    /// a term `next` (Seal-Tools does): it still reads as pointing back.
    #[test]
    fn discourse_words_are_not_things() {
        for w in ["Next", "the same one", "Great", "please"] {
            assert!(is_follow_up_word(&mention(w)), "{w}");
        }
        for w in ["message", "next invoice", "Paris"] {
            assert!(!is_follow_up_word(&mention(w)), "{w}");
        }
        assert!(points_back("Great. Next, delete it."));
        assert!(points_back("OK, download the same one."));
    }
}
