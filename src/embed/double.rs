//! A deterministic stand-in for the real model, for tests.

use super::{Embedder, normalize};

/// Deterministic test double: hashed word and character-trigram features,
/// L2-normalised, 384 dimensions. Texts sharing words or trigrams get a
/// positive cosine; it knows nothing of synonyms. For tests only.
#[derive(Debug, Clone)]
pub struct HashEmbedder {
    dim: usize,
    model_id: String,
}

impl Default for HashEmbedder {
    fn default() -> Self {
        Self::new()
    }
}

impl HashEmbedder {
    /// A 384-dimensional double (the dimension of MiniLM).
    pub fn new() -> Self {
        Self::with_dim(384)
    }

    /// A double with `dim` dimensions (at least 1).
    pub fn with_dim(dim: usize) -> Self {
        let dim = dim.max(1);
        Self {
            dim,
            model_id: format!("hash-trigram-v1@{dim}"),
        }
    }

    fn embed(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0.0f32; self.dim];
        let lower = text.to_lowercase();
        for word in lower.split(|c: char| !c.is_alphanumeric()) {
            if word.is_empty() {
                continue;
            }
            self.add(&mut v, word.as_bytes(), 1.0);
            let padded: Vec<char> = format!(" {word} ").chars().collect();
            for tri in padded.windows(3) {
                let s: String = tri.iter().collect();
                self.add(&mut v, s.as_bytes(), 0.5);
            }
        }
        normalize(&mut v);
        v
    }

    fn add(&self, v: &mut [f32], feature: &[u8], weight: f32) {
        let h = fnv1a(feature);
        // usize fits u64 on every supported target; modulo keeps it in range.
        let slot = (h % self.dim as u64) as usize;
        let sign = if (h >> 63) == 0 { 1.0 } else { -1.0 };
        if let Some(x) = v.get_mut(slot) {
            *x += sign * weight;
        }
    }
}

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

impl Embedder for HashEmbedder {
    fn dim(&self) -> usize {
        self.dim
    }
    fn model_id(&self) -> &str {
        &self.model_id
    }
    fn embed_query(&self, text: &str) -> crate::error::Result<Vec<f32>> {
        Ok(self.embed(text))
    }
    fn embed_documents(&self, texts: &[String]) -> crate::error::Result<Vec<Vec<f32>>> {
        Ok(texts.iter().map(|t| self.embed(t)).collect())
    }
    fn embed_documents_beside(
        &self,
        texts: &[String],
    ) -> Option<crate::error::Result<Vec<Vec<f32>>>> {
        Some(self.embed_documents(texts))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::dot;

    #[test]
    fn deterministic_normalised_and_word_sensitive() {
        let e = HashEmbedder::new();
        let a = e.embed_query("book a flight").unwrap();
        assert_eq!(a, e.embed_query("book a flight").unwrap());
        assert_eq!(a.len(), 384);
        assert!((dot(&a, &a) - 1.0).abs() < 1e-5);
        let near = e.embed_query("book flights").unwrap();
        let far = e.embed_query("sha256 checksum").unwrap();
        assert!(dot(&a, &near) > dot(&a, &far));
        assert_eq!(e.embed_query("").unwrap(), vec![0.0; 384]);
        let docs = e
            .embed_documents(&["book a flight".to_string(), String::new()])
            .unwrap();
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[0], a);
    }
}
