#![no_main]
//! Any input to the jsonl importer: an error or descriptors, never a panic.

use libfuzzer_sys::fuzz_target;
use toolgraph::import::{Format, parse_manifest};

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(tools) = parse_manifest("fuzz", text, Format::Jsonl) {
            assert!(tools.iter().all(|t| !t.id.is_empty() && !t.name.is_empty()));
        }
        let _ = toolgraph::import::detect_format(std::path::Path::new("fuzz.json"), text);
    }
});
