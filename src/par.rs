//! The threads a search splits its work over.
//!
//! A search runs part of its work beside the rest: the request is parsed
//! and its graph and lexical channels worked out while the query is
//! embedded (from 500k tools: while the dense pass runs), the sign-bit
//! first pass on two threads taking its chunks as they ask, and the int8
//! pass over scattered rows in two halves. That work used to go to a
//! thread started for it (`std::thread::scope`). A thread started per search allocates
//! from a fresh allocator heap, whose pages the kernel zeroes again every
//! time: `perf record` of 1M-tool searches put 15-35 % of all CPU in the
//! kernel's `clear_page_erms` under `mi_page_free_list_extend`, on those
//! short threads. Here the halves go to a few long-lived helper threads
//! instead (a rayon pool of their own, not the global one, so that a
//! registration's parallel work does not queue ahead of a search's), whose
//! heaps stay warm from one search to the next.

use std::sync::OnceLock;

/// The helper threads: one per core the process may use. `None` when
/// they could not be started; [`join`] then runs both halves here.
fn pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads.clamp(1, 8))
            .thread_name(|i| format!("toolgraph-helper-{i}"))
            .build()
            .ok()
    })
    .as_ref()
}

/// Runs `a` on a helper thread and `b` on this one; both answers. `a`
/// works under this thread's time limit ([`crate::deadline`]). A panic in
/// either comes back here once both have finished.
pub(crate) fn join<A: Send, B>(a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B) -> (A, B) {
    // A worker of another rayon pool (the eval harness's parallel
    // searches) is one of several workers already; waiting there for the
    // helper would let rayon run other jobs of that pool on this stack,
    // nesting searches.
    let elsewhere = |pool: &rayon::ThreadPool| {
        rayon::current_thread_index().is_some() && pool.current_thread_index().is_none()
    };
    let Some(pool) = pool().filter(|p| !elsewhere(p)) else {
        let a = a();
        return (a, b());
    };
    let until = crate::deadline::current();
    let mut out_a = None;
    let out_b = pool.in_place_scope(|s| {
        s.spawn(|_| out_a = Some(crate::deadline::within(until, a)));
        b()
    });
    // The scope returns only once the spawned half has run (or resumes its
    // panic), so its answer is there.
    let a = out_a.expect("a finished scope has run its spawned half");
    (a, out_b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn both_halves_run_and_answer() {
        let data: Vec<u64> = (0..10_000).collect();
        let (left, right) = data.split_at(5_000);
        let (a, b) = join(|| left.iter().sum::<u64>(), || right.iter().sum::<u64>());
        assert_eq!(a + b, data.iter().sum::<u64>());
        assert_eq!((a, b), (12_497_500, 37_497_500));
    }

    #[test]
    fn the_helper_half_runs_on_a_long_lived_thread_under_the_callers_limit() {
        let until = Instant::now() + Duration::from_secs(600);
        let names: Vec<String> = (0..4)
            .map(|_| {
                crate::deadline::within(Some(until), || {
                    join(
                        || {
                            assert_eq!(crate::deadline::current(), Some(until));
                            std::thread::current().name().unwrap_or("").to_string()
                        },
                        || (),
                    )
                    .0
                })
            })
            .collect();
        for name in &names {
            assert!(name.starts_with("toolgraph-helper-"), "{name}");
        }
    }

    #[test]
    fn on_another_pools_worker_both_halves_run_there() {
        let other = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .expect("a pool");
        let (a, b) = other.install(|| {
            join(
                || std::thread::current().name().map(str::to_string),
                || std::thread::current().name().map(str::to_string),
            )
        });
        assert_eq!(a, b, "the same thread");
        assert!(
            a.as_deref()
                .is_none_or(|n| !n.starts_with("toolgraph-helper-")),
            "{a:?}"
        );
    }

    #[test]
    fn nested_joins_finish() {
        let (a, b) = join(|| join(|| 1, || 2), || join(|| join(|| 3, || 4), || 5));
        assert_eq!((a, b), ((1, 2), ((3, 4), 5)));
    }

    #[test]
    fn a_panic_in_the_helper_half_comes_back_to_the_caller() {
        let caught = std::panic::catch_unwind(|| join(|| -> u8 { panic!("helper half") }, || 7));
        let panic = caught.expect_err("the helper's panic is resumed here");
        assert_eq!(panic.downcast_ref::<&str>(), Some(&"helper half"));
        // The pool still works afterwards.
        assert_eq!(join(|| 1, || 2), (1, 2));
    }
}
