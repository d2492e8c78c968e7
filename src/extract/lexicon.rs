//! The lexicon: ontology labels indexed for longest multi-word matching.
//!
//! Labels are tokenised like the input, articles (`a`, `an`, `the`) are
//! dropped and every token is lemmatised; the label is indexed under its
//! first lemma. Labels with the same lemma sequence form one *pattern*
//! whose targets are every node carrying such a label. At match time the
//! longest pattern wins; among its targets, those whose exact lower-case
//! word forms equal the input's are preferred (so "booking" picks the
//! entity labelled "booking" over the verb "book").

use std::collections::{HashMap, HashSet};

use super::lemma::lemma;
use super::tokens::{Caps, Token};
use crate::model::{LexEntry, TermKind};

#[derive(Debug)]
pub(crate) struct Target {
    pub entry: usize,
    /// Lower-case word forms of the label (articles dropped).
    pub exact: Vec<String>,
    /// The label has an upper-case letter (`Southwest`): a single-word
    /// instance then needs an upper-case letter in the input too.
    pub cased: bool,
}

#[derive(Debug)]
pub(crate) struct Pattern {
    pub lemmas: Vec<String>,
    pub targets: Vec<Target>,
}

/// Every label of the ontology's verbs, entities and instances, indexed for
/// matching. Built once, immutable, cheap to share behind an `Arc`.
#[derive(Debug, Default)]
pub struct Lexicon {
    entries: Vec<LexEntry>,
    patterns: Vec<Pattern>,
    /// First lemma -> pattern indices, longest first.
    by_first: HashMap<String, Vec<usize>>,
    by_iri: HashMap<String, Vec<usize>>,
    /// Lower-case single-word labels (keeps `PayPal` from being camel-split)
    /// of curated nodes.
    whole: HashSet<String>,
    /// Lemmas of single-word verb labels of curated nodes.
    verbs: HashSet<String>,
    /// The same two for minted nodes, with their entries: a word only a
    /// minted node has counts only for a reader who [`Sees`] one of them.
    minted_whole: HashMap<String, Vec<usize>>,
    minted_verbs: HashMap<String, Vec<usize>>,
}

/// Which entries a reader may match: every one when building constellations,
/// the curated ones plus the minted ones leading to tools a caller may see
/// when reading a caller's request (so a term only a hidden tool brought is
/// matched exactly as a word no tool knows).
pub type Sees<'a> = &'a dyn Fn(&LexEntry) -> bool;

/// Sees every entry.
pub fn everything(_: &LexEntry) -> bool {
    true
}

/// A successful match of one pattern.
#[derive(Debug)]
pub(crate) struct Match<'l> {
    /// Indices of the matched tokens (articles skipped inside are not listed).
    pub tokens: Vec<usize>,
    pub pattern: &'l Pattern,
    /// Entry indices of the chosen targets.
    pub entries: Vec<usize>,
    /// The input's word forms equal the label's (not only the lemmas).
    pub exact: bool,
}

pub(crate) fn is_article(w: &str) -> bool {
    matches!(w, "a" | "an" | "the")
}

/// Lower-case words of a label: split on anything not alphanumeric.
pub(crate) fn label_words(label: &str) -> Vec<String> {
    let words: Vec<String> = label
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let content: Vec<String> = words.iter().filter(|w| !is_article(w)).cloned().collect();
    if content.is_empty() { words } else { content }
}

impl Lexicon {
    /// Index `entries` (duplicates are dropped).
    pub fn new(entries: impl IntoIterator<Item = LexEntry>) -> Self {
        let mut seen = HashSet::new();
        let mut lex = Lexicon::default();
        let mut by_key: HashMap<Vec<String>, usize> = HashMap::new();
        for e in entries {
            let words = label_words(&e.label);
            if words.is_empty() || e.iri.is_empty() {
                continue;
            }
            if !seen.insert((e.iri.clone(), words.clone(), e.kind.clone())) {
                continue;
            }
            let idx = lex.entries.len();
            let lemmas: Vec<String> = words.iter().map(|w| lemma(w)).collect();
            if words.len() == 1 {
                let verb = e.kind == TermKind::Verb;
                if e.minted {
                    lex.minted_whole
                        .entry(words[0].clone())
                        .or_default()
                        .push(idx);
                    if verb {
                        lex.minted_verbs
                            .entry(lemmas[0].clone())
                            .or_default()
                            .push(idx);
                    }
                } else {
                    lex.whole.insert(words[0].clone());
                    if verb {
                        lex.verbs.insert(lemmas[0].clone());
                    }
                }
            }
            let target = Target {
                entry: idx,
                exact: words,
                cased: e.label.chars().any(char::is_uppercase),
            };
            let p = *by_key.entry(lemmas.clone()).or_insert_with(|| {
                lex.patterns.push(Pattern {
                    lemmas,
                    targets: Vec::new(),
                });
                lex.patterns.len() - 1
            });
            if let Some(pat) = lex.patterns.get_mut(p) {
                pat.targets.push(target);
            }
            lex.by_iri.entry(e.iri.clone()).or_default().push(idx);
            lex.entries.push(e);
        }
        for (i, p) in lex.patterns.iter().enumerate() {
            if let Some(first) = p.lemmas.first() {
                lex.by_first.entry(first.clone()).or_default().push(i);
            }
        }
        let patterns = &lex.patterns;
        for v in lex.by_first.values_mut() {
            v.sort_by_key(|i| std::cmp::Reverse(patterns.get(*i).map_or(0, |p| p.lemmas.len())));
        }
        lex
    }

    /// Number of distinct (node, label) entries.
    /// Every entry, in the order given (duplicates dropped).
    pub fn entries(&self) -> &[LexEntry] {
        &self.entries
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when the lexicon has no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The labels known for a node, in insertion order.
    pub fn labels(&self, iri: &str) -> Vec<&str> {
        self.by_iri
            .get(iri)
            .map(|v| {
                v.iter()
                    .filter_map(|i| self.entries.get(*i))
                    .map(|e| e.label.as_str())
                    .collect()
            })
            .unwrap_or_default()
    }

    pub(crate) fn entry(&self, i: usize) -> Option<&LexEntry> {
        self.entries.get(i)
    }

    pub(crate) fn is_whole_word(&self, lower: &str, sees: Sees<'_>) -> bool {
        self.whole.contains(lower) || self.any_seen(self.minted_whole.get(lower), sees)
    }

    pub(crate) fn is_verb_lemma(&self, lemma: &str, sees: Sees<'_>) -> bool {
        self.verbs.contains(lemma) || self.any_seen(self.minted_verbs.get(lemma), sees)
    }

    fn any_seen(&self, entries: Option<&Vec<usize>>, sees: Sees<'_>) -> bool {
        entries
            .into_iter()
            .flatten()
            .filter_map(|&i| self.entries.get(i))
            .any(sees)
    }

    /// Entries of single-word labels with this lemma that the reader sees.
    pub(crate) fn single<'s>(
        &'s self,
        lemma: &str,
        sees: Sees<'s>,
    ) -> impl Iterator<Item = &'s LexEntry> {
        self.by_first
            .get(lemma)
            .into_iter()
            .flatten()
            .filter_map(|p| self.patterns.get(*p))
            .filter(|p| p.lemmas.len() == 1)
            .flat_map(|p| p.targets.iter())
            .filter_map(|t| self.entries.get(t.entry))
            .filter(move |e| sees(e))
    }

    /// Longest pattern starting at token `i` with a target the reader
    /// sees; `usable(j)` says token `j` may take part (not already inside a
    /// structured value).
    pub(crate) fn match_at(
        &self,
        toks: &[Token<'_>],
        i: usize,
        usable: &dyn Fn(usize) -> bool,
        sees: Sees<'_>,
    ) -> Option<Match<'_>> {
        let first = toks.get(i)?;
        let cands = self.by_first.get(&first.lemma)?;
        for &p in cands {
            let Some(pat) = self.patterns.get(p) else {
                continue;
            };
            let Some(idxs) = follow(toks, i, &pat.lemmas, usable) else {
                continue;
            };
            let words: Vec<&str> = idxs
                .iter()
                .filter_map(|j| toks.get(*j))
                .map(|t| t.lower.as_str())
                .collect();
            let allowed: Vec<&Target> = pat
                .targets
                .iter()
                .filter(|t| {
                    let Some(e) = self.entries.get(t.entry).filter(|e| sees(e)) else {
                        return false;
                    };
                    match e.kind {
                        TermKind::Instance { .. } if t.cased && idxs.len() == 1 => idxs
                            .iter()
                            .filter_map(|j| toks.get(*j))
                            .all(|tok| tok.ident || tok.caps != Caps::Lower),
                        _ => true,
                    }
                })
                .collect();
            if allowed.is_empty() {
                continue;
            }
            let exact: Vec<usize> = allowed
                .iter()
                .filter(|t| t.exact.iter().map(String::as_str).eq(words.iter().copied()))
                .map(|t| t.entry)
                .collect();
            let (entries, is_exact) = if exact.is_empty() {
                (allowed.iter().map(|t| t.entry).collect(), false)
            } else {
                (exact, true)
            };
            return Some(Match {
                tokens: idxs,
                pattern: pat,
                entries,
                exact: is_exact,
            });
        }
        None
    }
}

/// Match `lemmas` from token `i`, skipping articles in the input between
/// pattern words. Never crosses punctuation or unusable tokens.
fn follow(
    toks: &[Token<'_>],
    i: usize,
    lemmas: &[String],
    usable: &dyn Fn(usize) -> bool,
) -> Option<Vec<usize>> {
    let mut idxs = vec![i];
    let mut j = i + 1;
    for want in lemmas.iter().skip(1) {
        loop {
            let t = toks.get(j)?;
            if !usable(j) || t.hard_before {
                return None;
            }
            if &t.lemma == want {
                idxs.push(j);
                j += 1;
                break;
            }
            if is_article(&t.lower) {
                j += 1;
                continue;
            }
            return None;
        }
    }
    Some(idxs)
}
