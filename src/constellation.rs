//! PLACEHOLDER until the extractor branch lands (same API).
#![allow(dead_code)]
use crate::{Link, ToolDescriptor};
#[derive(Debug, Clone, serde::Serialize)]
pub struct NewTerm { pub iri: String, pub label: String, pub broader: Vec<String> }
#[derive(Debug, Clone, serde::Serialize)]
pub struct Constellation { pub descriptor: ToolDescriptor, pub iri: String, pub verbs: Vec<Link>, pub entities: Vec<Link>, pub domains: Vec<Link>, pub new_terms: Vec<NewTerm>, pub read_only: bool, pub depends_on: Vec<String> }
pub fn tool_iri(id: &str) -> String { format!("{}{}", crate::iri::TOOL, id) }
pub fn build(desc: &ToolDescriptor, _x: &crate::Extractor) -> Constellation { Constellation { descriptor: desc.clone(), iri: tool_iri(&desc.id), verbs: vec![], entities: vec![], domains: vec![], new_terms: vec![], read_only: false, depends_on: desc.depends_on.clone() } }
