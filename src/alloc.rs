//! Allocator settings for the binaries that run on mimalloc (`toolgraph`
//! and the benches that measure it): one place, so what is measured is what
//! serves.

/// mimalloc's `purge_delay` (`enum mi_option_e` in mimalloc v3's
/// `include/mimalloc.h`; the Rust bindings do not name it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Keeps memory freed by one request for the next instead of returning it
/// to the OS a second later. Each search runs part of its work on a short
/// thread; with purging on, that thread's pages came back as fresh
/// (transparent huge) pages the kernel zeroed again on every request.
/// Off: 100k tools, same host, A/B: warm search p50 6.42 -> 5.42 ms, graph
/// stage 1.72 -> 1.09 ms. The resident set stays at its peak instead (the
/// load test's RSS check covers that). Call it first thing in `main`.
/// The crate's one `unsafe` block: a foreign call with no pointer in it.
#[allow(unsafe_code)]
pub fn keep_freed_memory() {
    // SAFETY: sets one allocator option; -1 ("never purge") is a value
    // mimalloc documents for it. Harmless where mimalloc is not the global
    // allocator (its own heap is then simply unused).
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
}
