//! Allocator settings for the binaries that run on mimalloc (`toolgraph`
//! and the benches that measure it): one place, so what is measured is what
//! serves.

/// mimalloc's `purge_delay` (`enum mi_option_e` in mimalloc v3's
/// `include/mimalloc.h`; the Rust bindings do not name it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Keeps memory freed by one request for the next ones instead of
/// returning it to the OS a second later (mimalloc v3's default), and
/// returns it after 10 s unused. Each search runs part of its work on a
/// short thread; with the default, that thread's pages came back as fresh
/// (transparent huge) pages the kernel zeroed again on every request:
/// `perf record` through `serve` at 100k tools put 4 % of all CPU in
/// `clear_page_erms`. A/B at 100k on one host: cold p50 10.80 -> 8.31 ms,
/// graph stage 2.89 -> 1.08 ms. Never purging (-1) measured the same p50
/// but held what loading the catalog had freed: serve's RSS at 100k was
/// 2.6 GB against 1.6 GB with the 10 s delay. Call it first thing in `main`.
/// One of the crate's two `unsafe` blocks (the other calls the int8 vector
/// kernel on a CPU checked to have its features): a foreign call with no
/// pointer in it.
#[allow(unsafe_code)]
pub fn keep_freed_memory() {
    // SAFETY: sets one allocator option to a delay in milliseconds, as
    // mimalloc documents it. Harmless where mimalloc is not the global
    // allocator (its own heap is then simply unused).
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 10_000) };
}
