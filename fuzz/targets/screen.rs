//! Arbitrary bytes through screening: as one field's text (lossy UTF-8),
//! as a manifest entry (when they parse as JSON) and as a tool name against
//! registered names. Never a panic; every reason has a known code, a
//! field, and evidence that is valid text; the worst severity comes first.

use toolgraph::screen::{self, Reason, SCREENING_CODES};

fn check(reasons: &[Reason]) {
    for r in reasons {
        assert!(
            SCREENING_CODES.contains(&r.code.as_str()),
            "unknown code {}",
            r.code
        );
        assert!(r.field.is_some(), "{r:?}");
    }
    for w in reasons.windows(2) {
        assert!(w[0].severity >= w[1].severity, "{reasons:?}");
    }
}

pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = screen::screen_text("description", &text);
    let texts = vec![("description".to_string(), text.to_string())];
    check(&screen::screen_tool(
        &text,
        &texts,
        ["send_email", "get_weather", text.as_ref()],
        &["list_files"],
    ));
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(data) {
        let texts = screen::texts_of_json(&v);
        check(&screen::screen_tool("tool", &texts, [], &[]));
        let _ = screen::learned::text_of_entry(&v);
    }
}
