//! PLACEHOLDER until the evalx branch lands (same API).
#![allow(dead_code)]
pub fn tokenize(text: &str) -> Vec<String> { crate::extract::split_identifier(text) }
#[derive(Debug)] pub struct Bm25 { n: usize }
impl Bm25 { pub fn new(docs: &[String]) -> Self { Bm25 { n: docs.len() } } pub fn scores(&self, _q: &str) -> Vec<f32> { vec![0.0; self.n] } }
#[derive(Debug)] pub struct NameIndex;
impl NameIndex { pub fn new<'a>(_n: impl IntoIterator<Item = &'a str>) -> Self { NameIndex } pub fn find(&self, _r: &str) -> Vec<usize> { vec![] } }
