//! The time limit of the request this thread is working for.
//!
//! The server answers 504 when a request runs past its limit, but the
//! blocking work behind it went on (a 1 MB request of 23,083 steps answered
//! 504 at 30 s and computed until 160 s). The server sets the limit on the
//! blocking thread before it calls the engine ([`within`]); the engine's
//! long loops call [`check`] between units of work (a step, an embedding
//! batch, a dependency walk) and stop with [`Error::Timeout`]. Writes are
//! not cut short: a registration either commits or rolls back whole.
//! Threads without a limit (the CLI, tests, the eval harness) never stop.

use crate::error::{Error, Result};
use std::cell::Cell;
use std::time::Instant;

thread_local! {
    static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Runs `f` on this thread with `until` as its time limit (the previous
/// limit comes back afterwards, also on a panic).
pub fn within<T>(until: Option<Instant>, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<Instant>);
    impl Drop for Restore {
        fn drop(&mut self) {
            DEADLINE.with(|d| d.set(self.0));
        }
    }
    let _restore = Restore(DEADLINE.with(|d| d.replace(until)));
    f()
}

/// The limit this thread works under, to hand to threads it starts.
pub fn current() -> Option<Instant> {
    DEADLINE.with(Cell::get)
}

/// `Err(Timeout)` once this thread's request is past its limit.
pub fn check() -> Result<()> {
    match current() {
        Some(until) if Instant::now() >= until => Err(Error::Timeout(
            "the request ran past its time limit and was stopped".into(),
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_limit_holds_inside_and_is_restored_after() {
        assert!(check().is_ok());
        let past = Instant::now().checked_sub(Duration::from_millis(1));
        within(past, || {
            assert!(matches!(check(), Err(Error::Timeout(_))));
            let later = Instant::now() + Duration::from_secs(60);
            within(Some(later), || assert!(check().is_ok()));
            assert!(check().is_err());
        });
        assert!(check().is_ok());
        assert_eq!(current(), None);
    }
}
