//! Dense embeddings: the [`Embedder`] trait, the offline MiniLM model
//! ([`FastEmbedder`]), a deterministic test double ([`HashEmbedder`]), the
//! exact vector index ([`VectorIndex`]) and its on-disk cache with
//! incremental re-indexing ([`sync_index`]).
//!
//! What text is embedded for a tool is decided in one place:
//! [`embedding_text`].

#![allow(clippy::result_large_err)] // crate::error::Error carries a Location; errors are cold

mod cache;
mod double;
mod fastembed;
mod index;
mod int8;
mod packed;
mod store;
mod sync;
mod text;

use std::path::PathBuf;

pub(crate) use cache::QueryCache;
pub use double::HashEmbedder;
pub use fastembed::FastEmbedder;
pub(crate) use index::QueryCodes;
pub use index::VectorIndex;
pub use packed::Packed;
pub(crate) use store::content_hash;
pub use store::{IndexHealth, SyncReport, index_health, read_vectors};
pub(crate) use sync::{Ahead, embed_ahead};
pub use sync::{SharedVectors, SyncSources, Vectors, sync_index, sync_vectors};
pub(crate) use text::descriptor_text;
pub use text::embedding_text;

/// Name of the model directory under `~/.cache/toolgraph/models/`.
pub(crate) const MODEL_DIR_NAME: &str = "all-MiniLM-L6-v2-int8";

/// Turns text into fixed-size, L2-normalised vectors.
///
/// `model_id` is stored with persisted vectors: a different id forces a full
/// re-index, so it must change whenever the vectors would.
pub trait Embedder: Send + Sync + std::fmt::Debug {
    /// Length of every vector this embedder returns.
    fn dim(&self) -> usize;
    /// Identifies the model and its weights (e.g. `all-MiniLM-L6-v2-int8@8199be6f`).
    fn model_id(&self) -> &str;
    /// Embeds one search request.
    fn embed_query(&self, text: &str) -> crate::error::Result<Vec<f32>>;
    /// Embeds many documents, in order; batches internally.
    fn embed_documents(&self, texts: &[String]) -> crate::error::Result<Vec<Vec<f32>>>;
    /// Embeds documents like [`Embedder::embed_documents`] (the same
    /// vectors) but on one core, for work that runs beside other work: a
    /// registration embeds its new tools while the store writes them.
    /// `None` when the embedder has no such mode.
    fn embed_documents_beside(
        &self,
        _texts: &[String],
    ) -> Option<crate::error::Result<Vec<Vec<f32>>>> {
        None
    }
}

/// Where the setup script installs the model: `$TOOLGRAPH_MODEL_DIR`, else
/// `~/.cache/toolgraph/models/all-MiniLM-L6-v2-int8`.
pub fn default_model_dir() -> PathBuf {
    match std::env::var_os("TOOLGRAPH_MODEL_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => dirs::home_dir()
            .unwrap_or_else(|| PathBuf::from("."))
            .join(".cache")
            .join("toolgraph")
            .join("models")
            .join(MODEL_DIR_NAME),
    }
}

/// Scales `v` to unit length in place (a zero or non-finite vector is left as zeros).
pub(crate) fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm.is_finite() && norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    } else {
        v.iter_mut().for_each(|x| *x = 0.0);
    }
}

/// Dot product, unrolled so the compiler vectorises it.
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; 8];
    let (ac, ar) = (a.chunks_exact(8), a.chunks_exact(8).remainder());
    let (bc, br) = (b.chunks_exact(8), b.chunks_exact(8).remainder());
    for (x, y) in ac.zip(bc) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    let tail: f32 = ar.iter().zip(br).map(|(x, y)| x * y).sum();
    acc.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_matches_naive_for_odd_lengths() {
        for n in [0usize, 1, 7, 8, 9, 384, 385] {
            let a: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
            let b: Vec<f32> = (0..n).map(|i| (i as f32 * 0.11).cos()).collect();
            let naive: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!((dot(&a, &b) - naive).abs() < 1e-4, "n={n}");
        }
    }

    #[test]
    fn normalize_gives_unit_length_and_zeroes_degenerate_vectors() {
        let mut v = vec![3.0, 4.0];
        normalize(&mut v);
        assert_eq!(v, vec![0.6, 0.8]);
        let mut z = vec![0.0, 0.0];
        normalize(&mut z);
        assert_eq!(z, vec![0.0, 0.0]);
        let mut n = vec![f32::NAN, 1.0];
        normalize(&mut n);
        assert_eq!(n, vec![0.0, 0.0]);
    }
}
