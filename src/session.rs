//! Conversations the service remembers, in memory only (a restart forgets
//! them): tools that failed in them, the domains and tools of recent turns.
//! Idle sessions expire after a time to live; past the cap the least
//! recently used one goes.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Failures one conversation remembers, at most.
pub(crate) const MAX_FAILED: usize = 64;
/// Characters of a failure's reason kept.
pub(crate) const MAX_REASON: usize = 500;

/// What one conversation remembers.
#[derive(Debug, Clone, Default)]
pub(crate) struct Session {
    /// Tools that failed at run time, with why: hidden for the rest of it.
    pub failed: Vec<(String, String)>,
    /// Domain IRIs of recent turns, most recent first.
    pub domains: Vec<String>,
    /// Tools the intent broker chose last.
    pub recent_tools: Vec<String>,
}

#[derive(Debug)]
pub(crate) struct Sessions {
    inner: Mutex<HashMap<String, (Instant, Session)>>,
    ttl: Duration,
    cap: usize,
}

impl Default for Sessions {
    fn default() -> Self {
        Self::new(Duration::from_secs(60 * 60), 10_000)
    }
}

impl Sessions {
    pub fn new(ttl: Duration, cap: usize) -> Self {
        Self {
            inner: Mutex::new(HashMap::new()),
            ttl,
            cap: cap.max(1),
        }
    }

    /// The session's state (empty for an unknown or expired one).
    pub fn get(&self, id: &str) -> Session {
        let mut map = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        match map.get(id) {
            Some((seen, s)) if seen.elapsed() <= self.ttl => s.clone(),
            Some(_) => {
                map.remove(id);
                Session::default()
            }
            None => Session::default(),
        }
    }

    /// Changes a session (creating it), marks it used, and keeps the store
    /// within its time to live and cap.
    pub fn update(&self, id: &str, change: impl FnOnce(&mut Session)) {
        let mut map = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let ttl = self.ttl;
        map.retain(|_, (seen, _)| seen.elapsed() <= ttl);
        let entry = map
            .entry(id.to_string())
            .or_insert_with(|| (Instant::now(), Session::default()));
        entry.0 = Instant::now();
        change(&mut entry.1);
        while map.len() > self.cap {
            let Some(oldest) = map
                .iter()
                .min_by_key(|(_, (seen, _))| *seen)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            map.remove(&oldest);
        }
    }
}

impl Sessions {
    /// Number of live sessions.
    pub fn len(&self) -> usize {
        let map = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        map.values()
            .filter(|(seen, _)| seen.elapsed() <= self.ttl)
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
