//! Integration tests: one binary, one module per area.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod airlock;
mod cli;
mod common;
mod console;
mod deps;
mod embed;
mod eval;
mod extract;
mod http;
mod import;
mod mcp;
mod policy;
mod process;
mod rank;
mod server;
mod store;
