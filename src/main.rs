#![allow(clippy::result_large_err)] // the library error carries its location; cold path
//! The `toolgraph` command line (see `cli/`).

mod cli;

/// Search allocates small, short-lived buffers per request on many threads;
/// mimalloc serves them from thread-local pages instead of glibc's shared
/// arenas (measured in benches/perf.rs, which uses the same allocator).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    toolgraph::alloc::keep_freed_memory();
    toolgraph::alloc::no_transparent_huge_pages();
    toolgraph::alloc::limit_c_arenas();
    cli::main()
}
