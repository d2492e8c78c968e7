#![no_main]
//! See `targets/` for what this target checks.

libfuzzer_sys::fuzz_target!(|data: &[u8]| toolgraph_fuzz::screen::run(data));
