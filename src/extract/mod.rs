//! PLACEHOLDER until the extractor branch lands (same API).
#![allow(dead_code)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TermKind { Verb, Entity, Instance { class: String } }
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LexEntry { pub label: String, pub iri: String, pub kind: TermKind }
#[derive(Debug, Clone, Default)]
pub struct Lexicon;
impl Lexicon { pub fn new(_e: impl IntoIterator<Item = LexEntry>) -> Self { Lexicon } }
#[derive(Debug, Clone, Default)]
pub struct Extractor;
impl Extractor {
    pub fn new(_l: Lexicon) -> Self { Extractor }
    pub fn extract(&self, _t: &str) -> Vec<crate::Mention> { Vec::new() }
}
pub fn split_identifier(s: &str) -> Vec<String> { s.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(|w| w.to_lowercase()).collect() }
