//! Hidden content: text a reviewer reading the description would not see.
//! Invisible characters (zero-width, bidi controls, Unicode tags, private
//! use, other controls), HTML comments and styles that hide text, and text
//! pushed far past the visible part (a long run of spaces inside a line,
//! many blank lines before more text). The indentation and line breaks of
//! a docstring are visible layout, not hiding places.

use super::{Reason, Severity, snippet};

/// Shown instead of an invisible character.
pub(crate) fn visible(c: char) -> String {
    format!("U+{:04X}", c as u32)
}

pub(crate) fn hidden_char(c: char) -> Option<&'static str> {
    match c as u32 {
        0x200B..=0x200D | 0x2060..=0x2064 | 0xFEFF | 0x180E | 0x00AD => Some("zero-width"),
        0x202A..=0x202E | 0x2066..=0x2069 | 0x200E | 0x200F | 0x061C => Some("bidi control"),
        0xE0000..=0xE007F => Some("tag"),
        0xE000..=0xF8FF | 0xF0000..=0xFFFFD | 0x100000..=0x10FFFD => Some("private use"),
        0x00..=0x08 | 0x0B | 0x0C | 0x0E..=0x1F | 0x7F..=0x9F => Some("control"),
        _ => None,
    }
}

/// Spaces or tabs between two visible characters of one line that push
/// the rest out of view.
const LONG_GAP: usize = 40;
/// Indentation deeper than any layout uses.
const DEEP_INDENT: usize = 60;
/// Blank lines before more text that push it out of view.
const MANY_BLANK_LINES: usize = 5;

fn finding(field: &str, message: String, evidence: Option<String>) -> Reason {
    Reason {
        code: "hidden_content".into(),
        message,
        field: Some(field.into()),
        evidence,
        severity: Severity::Block,
    }
}

/// The longest gap inside a line, the deepest indentation of a line with
/// text, and the most blank lines followed by text.
fn layout(text: &str) -> (usize, usize, usize) {
    let (mut gap, mut indent, mut blank_run, mut blanks_before_text) = (0, 0, 0, 0);
    for line in text.split('\n') {
        let trimmed = line.trim_start_matches([' ', '\t']);
        if trimmed.trim().is_empty() {
            blank_run += 1;
            continue;
        }
        blanks_before_text = blanks_before_text.max(blank_run);
        blank_run = 0;
        indent = indent.max(line.len() - trimmed.len());
        let mut run = 0;
        for c in trimmed.trim_end().chars() {
            if c == ' ' || c == '\t' {
                run += 1;
                gap = gap.max(run);
            } else {
                run = 0;
            }
        }
    }
    (gap, indent, blanks_before_text)
}

pub(super) fn hidden(field: &str, text: &str, out: &mut Vec<Reason>) {
    let mut kinds: Vec<(&str, String)> = Vec::new();
    for c in text.chars() {
        if let Some(kind) = hidden_char(c)
            && !kinds.iter().any(|(k, _)| *k == kind)
        {
            kinds.push((kind, visible(c)));
        }
    }
    for (kind, example) in kinds {
        out.push(finding(
            field,
            format!("contains invisible {kind} characters"),
            Some(example),
        ));
    }
    let lower = text.to_lowercase();
    if let Some(at) = lower.find("<!--") {
        out.push(finding(
            field,
            "contains an HTML comment".into(),
            Some(snippet(text, at, 60)),
        ));
    }
    for style in [
        "display:none",
        "display: none",
        "visibility:hidden",
        "font-size:0",
    ] {
        if let Some(at) = lower.find(style) {
            out.push(finding(
                field,
                "contains markup that hides text".into(),
                Some(snippet(text, at, 60)),
            ));
            break;
        }
    }
    let (gap, indent, blanks) = layout(text);
    if gap >= LONG_GAP || indent >= DEEP_INDENT || blanks >= MANY_BLANK_LINES {
        out.push(finding(
            field,
            format!(
                "pushes text out of view ({} spaces inside a line, {blanks} blank lines before more text)",
                gap.max(indent)
            ),
            None,
        ));
    }
}
