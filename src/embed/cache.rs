//! A small LRU of query embeddings: planners repeat themselves (retries,
//! the same step in many requests), and the forward pass is the one real
//! cost of a search. Keyed by the exact texts of one embedder call, so a hit
//! returns what that call returned.

use lru::LruCache;
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, PoisonError};

/// Vectors of one embedder call.
pub(crate) type Batch = Arc<Vec<Vec<f32>>>;

#[derive(Debug)]
pub(crate) struct QueryCache {
    /// `None`: caching off (a capacity of 0).
    inner: Option<Mutex<LruCache<Vec<String>, Batch>>>,
}

impl QueryCache {
    pub fn new(cap: usize) -> Self {
        Self {
            inner: NonZeroUsize::new(cap).map(|cap| Mutex::new(LruCache::new(cap))),
        }
    }

    /// Whether the vectors of `texts` are cached (a hint: another thread
    /// may evict them before they are asked for).
    pub fn contains(&self, texts: &[String]) -> bool {
        self.inner.as_ref().is_some_and(|lru| {
            lru.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .contains(texts)
        })
    }

    /// The cached vectors of `texts`, or those `embed` returns (then cached,
    /// the least recently used entry making room).
    pub fn get_or_embed<E>(
        &self,
        texts: &[String],
        embed: impl FnOnce() -> Result<Vec<Vec<f32>>, E>,
    ) -> Result<Batch, E> {
        let Some(lru) = &self.inner else {
            return embed().map(Arc::new);
        };
        if let Some(batch) = lru
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(texts)
        {
            return Ok(Arc::clone(batch));
        }
        let batch: Batch = Arc::new(embed()?);
        lru.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .put(texts.to_vec(), Arc::clone(&batch));
        Ok(batch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hits_skip_the_embedder_and_the_oldest_entry_goes() {
        let cache = QueryCache::new(2);
        let calls = std::cell::Cell::new(0);
        let embed = |x: f32| {
            calls.set(calls.get() + 1);
            Ok::<_, ()>(vec![vec![x]])
        };
        let a = vec!["a".to_string()];
        let b = vec!["b".to_string()];
        let c = vec!["c".to_string()];
        assert_eq!(cache.get_or_embed(&a, || embed(1.0)).unwrap()[0], [1.0]);
        assert_eq!(cache.get_or_embed(&a, || embed(9.0)).unwrap()[0], [1.0]);
        assert_eq!(calls.get(), 1);
        cache.get_or_embed(&b, || embed(2.0)).unwrap();
        cache.get_or_embed(&a, || embed(9.0)).unwrap(); // a is now the newest
        cache.get_or_embed(&c, || embed(3.0)).unwrap(); // evicts b
        assert_eq!(cache.get_or_embed(&b, || embed(4.0)).unwrap()[0], [4.0]); // evicts a
        assert_eq!(cache.get_or_embed(&c, || embed(9.0)).unwrap()[0], [3.0]);
        assert_eq!(calls.get(), 4);
        assert!(cache.contains(&b) && cache.contains(&c) && !cache.contains(&a));
    }
}
