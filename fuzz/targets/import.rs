//! Any input to the importers (JSON lines, MCP `tools/list`, OpenAPI): an
//! error or descriptors with an id and a name, never a panic.

use toolgraph::import::{Format, parse_manifest};

pub fn run(data: &[u8], format: Format) {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(tools) = parse_manifest("fuzz", text, format) {
            assert!(tools.iter().all(|t| !t.id.is_empty() && !t.name.is_empty()));
        }
        let _ = toolgraph::import::detect_format(std::path::Path::new("fuzz.json"), text);
    }
}
