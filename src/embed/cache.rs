//! A small LRU of query embeddings: planners repeat themselves (retries,
//! the same step in many requests), and the forward pass is the one real
//! cost of a search. Keyed by the exact texts of one embedder call, so a hit
//! returns what that call returned.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// Vectors of one embedder call.
pub(crate) type Batch = Arc<Vec<Vec<f32>>>;

#[derive(Debug)]
pub(crate) struct QueryCache {
    inner: Mutex<Lru>,
}

#[derive(Debug)]
struct Lru {
    map: HashMap<Vec<String>, (u64, Batch)>,
    tick: u64,
    cap: usize,
}

impl QueryCache {
    pub fn new(cap: usize) -> Self {
        Self {
            inner: Mutex::new(Lru {
                map: HashMap::new(),
                tick: 0,
                cap,
            }),
        }
    }

    /// Whether the vectors of `texts` are cached (a hint: another thread
    /// may evict them before they are asked for).
    pub fn contains(&self, texts: &[String]) -> bool {
        let lru = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        lru.map.contains_key(texts)
    }

    /// The cached vectors of `texts`, or those `embed` returns (then cached).
    pub fn get_or_embed<E>(
        &self,
        texts: &[String],
        embed: impl FnOnce() -> Result<Vec<Vec<f32>>, E>,
    ) -> Result<Batch, E> {
        {
            let mut lru = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
            lru.tick += 1;
            let tick = lru.tick;
            if let Some((used, batch)) = lru.map.get_mut(texts) {
                *used = tick;
                return Ok(Arc::clone(batch));
            }
        }
        let batch: Batch = Arc::new(embed()?);
        let mut lru = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if lru.cap == 0 {
            return Ok(batch);
        }
        if lru.map.len() >= lru.cap
            && let Some(oldest) = lru
                .map
                .iter()
                .min_by_key(|(_, (used, _))| *used)
                .map(|(k, _)| k.clone())
        {
            lru.map.remove(&oldest);
        }
        let tick = lru.tick;
        lru.map.insert(texts.to_vec(), (tick, Arc::clone(&batch)));
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
