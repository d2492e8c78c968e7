//! Conversations the service remembers, in memory only (a restart forgets
//! them): tools that failed in them, the domains and tools of recent turns.
//! Idle sessions expire after a time to live; past the cap the least
//! recently used one goes.

use lru::LruCache;
use std::num::NonZeroUsize;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Failures one conversation remembers, at most.
pub(crate) const MAX_FAILED: usize = 32;
/// Characters of a failure's reason kept.
pub(crate) const MAX_REASON: usize = 200;

/// What one conversation remembers.
#[derive(Debug, Clone, Default)]
pub(crate) struct Session {
    /// Tools that failed at run time, with why: hidden for the rest of it.
    pub failed: Vec<(String, String)>,
    /// Domain IRIs of recent turns, most recent first.
    pub domains: Vec<String>,
    /// Tools called in it through the gateway, most recent first (the
    /// intent broker keeps them in its selection).
    pub recent_tools: Vec<String>,
    /// The texts of its last searches, oldest first (at most
    /// [`MAX_TURNS`], each cut at [`MAX_TURN_BYTES`]): the context of a
    /// search in it that brings none.
    pub turns: Vec<String>,
}

/// Earlier turns a conversation remembers, at most.
pub(crate) const MAX_TURNS: usize = 3;
/// Bytes of a remembered turn kept (three fit a search's `context`).
pub(crate) const MAX_TURN_BYTES: usize = 1_000;

impl Session {
    /// Remembers a search's text as the latest turn.
    pub fn remember_turn(&mut self, text: &str) {
        let text = text.trim();
        if text.is_empty() {
            return;
        }
        let kept = crate::extract::truncate(text, MAX_TURN_BYTES);
        self.turns.push(kept.to_string());
        let extra = self.turns.len().saturating_sub(MAX_TURNS);
        self.turns.drain(..extra);
    }
}

#[derive(Debug)]
pub(crate) struct Sessions {
    inner: Mutex<LruCache<String, (Instant, Session)>>,
    ttl: Duration,
}

impl Default for Sessions {
    fn default() -> Self {
        Self::new(Duration::from_secs(60 * 60), 10_000)
    }
}

impl Sessions {
    pub fn new(ttl: Duration, cap: usize) -> Self {
        let cap = NonZeroUsize::new(cap).unwrap_or(NonZeroUsize::MIN);
        Self {
            inner: Mutex::new(LruCache::new(cap)),
            ttl,
        }
    }

    /// The session's state (empty for an unknown or expired one).
    pub fn get(&self, id: &str) -> Session {
        let mut map = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        match map.peek(id) {
            Some((seen, s)) if seen.elapsed() <= self.ttl => s.clone(),
            Some(_) => {
                map.pop(id);
                Session::default()
            }
            None => Session::default(),
        }
    }

    /// Changes a session (creating it) and marks it used; past the cap the
    /// least recently used session goes.
    pub fn update(&self, id: &str, change: impl FnOnce(&mut Session)) {
        let mut map = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let ttl = self.ttl;
        if map.peek(id).is_some_and(|(seen, _)| seen.elapsed() > ttl) {
            map.pop(id);
        }
        let entry = map.get_or_insert_mut(id.to_string(), || (Instant::now(), Session::default()));
        entry.0 = Instant::now();
        change(&mut entry.1);
    }

    /// Number of live sessions.
    pub fn len(&self) -> usize {
        let map = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        map.iter()
            .filter(|(_, (seen, _))| seen.elapsed() <= self.ttl)
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_expire_and_stay_under_the_cap() {
        let s = Sessions::new(Duration::from_secs(3600), 2);
        s.update("a", |x| x.domains.push("d1".into()));
        s.update("b", |_| {});
        s.update("c", |x| x.domains.push("d3".into()));
        assert!(
            s.get("a").domains.is_empty(),
            "least recently used goes first"
        );
        assert_eq!(s.get("c").domains, ["d3"]);
        let gone = Sessions::new(Duration::from_millis(0), 10);
        gone.update("a", |x| x.domains.push("d1".into()));
        std::thread::sleep(Duration::from_millis(5));
        assert!(gone.get("a").domains.is_empty());
    }
}
