//! What each fuzz target checks, as plain functions over bytes: the
//! libFuzzer binaries in `fuzz_targets/` call them (`cargo +nightly fuzz
//! run NAME`), and `tests/it/fuzz_smoke.rs` runs a few thousand inputs
//! through each in CI without libFuzzer.

pub mod extract;
pub mod import;
pub mod mcp;
pub mod request_json;
pub mod screen;
pub mod server;
pub mod turtle;
