//! Integration tests: one binary, one module per area.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod embed;
