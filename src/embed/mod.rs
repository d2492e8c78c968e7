//! PLACEHOLDER until the embed branch lands (same API).
#![allow(dead_code)]
use std::path::{Path, PathBuf};
pub trait Embedder: Send + Sync + std::fmt::Debug { fn dim(&self) -> usize; fn model_id(&self) -> &str; fn embed_query(&self, text: &str) -> crate::Result<Vec<f32>>; fn embed_documents(&self, texts: &[String]) -> crate::Result<Vec<Vec<f32>>>; }
pub fn default_model_dir() -> PathBuf { PathBuf::from("/nonexistent") }
#[derive(Debug)] pub struct FastEmbedder;
impl FastEmbedder { pub fn load(_d: &Path) -> crate::Result<Self> { Err(crate::Error::Model("x".into())) } }
impl Embedder for FastEmbedder { fn dim(&self) -> usize { 384 } fn model_id(&self) -> &str { "x" } fn embed_query(&self, _t: &str) -> crate::Result<Vec<f32>> { Ok(vec![]) } fn embed_documents(&self, _t: &[String]) -> crate::Result<Vec<Vec<f32>>> { Ok(vec![]) } }
#[derive(Debug, Default)] pub struct HashEmbedder;
impl Embedder for HashEmbedder { fn dim(&self) -> usize { 384 } fn model_id(&self) -> &str { "x" } fn embed_query(&self, _t: &str) -> crate::Result<Vec<f32>> { Ok(vec![]) } fn embed_documents(&self, _t: &[String]) -> crate::Result<Vec<Vec<f32>>> { Ok(vec![]) } }
#[derive(Debug, Clone)] pub struct VectorIndex { ids: Vec<String> }
impl VectorIndex { pub fn ids(&self) -> &[String] { &self.ids } pub fn scores(&self, _q: &[f32]) -> Vec<f32> { vec![] } }
#[derive(Debug, Clone, serde::Serialize)] pub struct SyncReport { pub embedded: usize, pub reused: usize, pub dropped: usize, pub total: usize, pub model_id: String, pub full_reindex: bool }
pub fn sync_index(_d: Option<&Path>, _t: &[crate::Tool], _e: &dyn Embedder, _p: bool) -> crate::Result<(VectorIndex, SyncReport)> { Err(crate::Error::Model("x".into())) }
