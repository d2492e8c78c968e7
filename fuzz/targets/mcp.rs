//! Arbitrary bytes as JSON-RPC to the MCP endpoint, with or without a
//! session id: a JSON-RPC error, an HTTP error in the one shape, or an
//! answer; never 500, never 415 for a body that merely is not JSON.

use super::server::{check, send};

pub fn run(data: &[u8]) {
    let Some((&first, body)) = data.split_first() else {
        return;
    };
    let mut headers = vec![
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ];
    if first & 1 == 1 {
        headers.push(("mcp-session-id", "fuzz-session"));
        headers.push(("mcp-protocol-version", "2025-06-18"));
    }
    let (status, out) = send("POST", "/mcp", &headers, body.to_vec());
    assert_ne!(status, 415, "{}", String::from_utf8_lossy(&out));
    check(status, &out, "mcp");
}
