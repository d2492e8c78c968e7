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
/// One of the crate's few `unsafe` blocks (with [`trim_c_heap`] and the
/// int8 vector kernel, called on a CPU checked to have its features): a
/// foreign call with no pointer in it.
#[allow(unsafe_code)]
pub fn keep_freed_memory() {
    // SAFETY: sets one allocator option to a delay in milliseconds, as
    // mimalloc documents it. Harmless where mimalloc is not the global
    // allocator (its own heap is then simply unused).
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 10_000) };
}

/// mimalloc's `allow_thp` (same header, same enum).
const MI_OPTION_ALLOW_THP: libmimalloc_sys::mi_option_t = 43;

/// No transparent huge pages for this process. mimalloc v3 asks for them
/// on its arenas (`madvise(MADV_HUGEPAGE)`, honoured where the kernel's
/// THP mode is `madvise`); the purge delay then gives back 64 KiB pieces
/// of those 2 MiB pages and the kernel's `khugepaged` fills them in again
/// as whole huge pages, so RSS climbs under steady load with nothing more
/// allocated. `serve` on the 100k perf store, 4 connections: 677 -> 840 MB
/// over 180 s and still rising with huge pages (506 MB of them at the
/// end), 646 -> 670 MB flat after 50 s without. 40 s runs alternated,
/// without / with: 161 / 151 / 170 / 173 q/s (p50 24.3 / 26.1 / 23.3 /
/// 22.6 ms), RSS +4.0 / +10.3 / +3.2 / +9.5 %. Sets the option for the
/// arenas mimalloc reserves from now on and `prctl(PR_SET_THP_DISABLE)` for
/// the rest (mimalloc reads the option only at its own start, before
/// `main`). Call it first thing in `main`; a no-op off Linux.
#[allow(unsafe_code)]
pub fn no_transparent_huge_pages() {
    // SAFETY: sets one allocator option to 0, as mimalloc documents it.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_ALLOW_THP, 0) };
    #[cfg(target_os = "linux")]
    {
        unsafe extern "C" {
            fn prctl(option: std::ffi::c_int, ...) -> std::ffi::c_int;
        }
        /// `PR_SET_THP_DISABLE` (`linux/prctl.h`).
        const PR_SET_THP_DISABLE: std::ffi::c_int = 41;
        // SAFETY: prctl(2) with integer arguments only; failure (an old
        // kernel) leaves huge pages as they were.
        let (on, zero): (std::ffi::c_ulong, std::ffi::c_ulong) = (1, 0);
        unsafe { prctl(PR_SET_THP_DISABLE, on, zero, zero, zero) };
    }
}

/// Caps glibc at two malloc arenas for the C and C++ parts (RocksDB, ONNX
/// Runtime; Rust allocates through mimalloc). glibc opens up to 8 arenas
/// per core, one per thread that contends, and memory one blocking-pool
/// thread freed stays in its arena while another grows. A small effect,
/// measured by the soak (`benches/results/soak.json`): lives ended at
/// 1.23-1.48 GB before, 1.26-1.44 GB after (the later lives 1.26-1.30).
/// Call it first thing in `main`. A no-op where the C library is not glibc.
#[allow(unsafe_code)]
pub fn limit_c_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        unsafe extern "C" {
            fn mallopt(param: std::ffi::c_int, value: std::ffi::c_int) -> std::ffi::c_int;
        }
        /// glibc's `M_ARENA_MAX` (`malloc.h`).
        const M_ARENA_MAX: std::ffi::c_int = -8;
        // SAFETY: glibc's `mallopt(3)`: two integers, no pointers; called
        // before other threads allocate.
        unsafe { mallopt(M_ARENA_MAX, 2) };
    }
}

/// Returns to the OS what the C and C++ parts (RocksDB, ONNX Runtime)
/// freed into glibc's arenas, every `every`, on a thread of its own. Rust
/// allocations go through mimalloc; RocksDB's read, write and compaction
/// buffers and ONNX Runtime's temporaries go through glibc, which keeps
/// freed pages in per-thread arenas. Under the soak (mixed traffic with
/// writes at 32 connections) that retained memory made RSS climb for
/// minutes after warm-up. A no-op where the C library is not glibc.
#[allow(unsafe_code)]
pub fn trim_c_heap(every: std::time::Duration) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        unsafe extern "C" {
            fn malloc_trim(pad: usize) -> std::ffi::c_int;
        }
        let _ = std::thread::Builder::new()
            .name("toolgraph-trim".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(every);
                    // SAFETY: glibc's `malloc_trim(3)`: takes a byte count,
                    // returns whether memory was released; no pointers.
                    unsafe { malloc_trim(0) };
                }
            });
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = every;
}

/// Returns to the OS, now, the memory mimalloc holds free: what building a
/// snapshot freed (the store's read-back, the lists and maps it was built
/// from, the previous snapshot when no request holds it any more). Left
/// to the purge delay, most of it stayed: its pages are spread over the
/// heaps of the threads that read the store (abandoned when they ended)
/// and partly filled, and only pages with nothing live are purged. `serve`
/// on the 100k perf store: ready at 1.58 GB RSS without this, 0.86 GB with
/// it; after a 20 s load test 1.16 against 1.05 GB. Called after every
/// publish; a no-op where mimalloc is not the global allocator (its own
/// heap is then empty).
#[allow(unsafe_code)]
pub fn release_freed() {
    // SAFETY: `mi_collect(force)` takes a flag and touches only
    // mimalloc's own free lists; safe to call from any thread at any time.
    unsafe { libmimalloc_sys::mi_collect(true) };
}
