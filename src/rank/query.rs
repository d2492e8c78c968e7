//! What a request says, worked out once: its mentions, the text the dense
//! and lexical channels see, its steps, and the tools it names exactly.

use super::Mode;
use crate::catalog::Catalog;
use crate::extract::{split_identifier, steps};
use crate::model::Mention;
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
    /// What the dense and lexical channels see: the verb's words, then the text.
    pub text: String,
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
        .map(|(_, label)| with_verb(verb, label))
        .collect();
    (with_verb(verb, text), steps)
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
        let mut exact = catalog.name_index().find(text);
        if let Some(v) = verb {
            exact.extend(catalog.name_index().find(v));
        }
        let steps = step_labels(text, split_steps)
            .into_iter()
            .map(|(range, label)| {
                let mut mentions = verb_mentions.clone();
                mentions.extend(
                    text_mentions
                        .iter()
                        .filter(|m| m.start >= range.start && m.end <= range.end)
                        .cloned(),
                );
                Step {
                    text: with_verb(verb, label),
                    label: label.to_string(),
                    mentions,
                }
            })
            .collect();
        let mut all_mentions = verb_mentions.clone();
        all_mentions.extend(text_mentions.iter().cloned());
        Self {
            mode,
            verb_mentions,
            all_mentions,
            text: with_verb(verb, text),
            steps,
            exact,
            dependencies: false,
        }
    }

    /// Every mention: the verb field's first, then the text's.
    pub fn mentions(&self) -> Vec<Mention> {
        self.all_mentions.clone()
    }
}
