//! Names: a tool whose name equals or looks like a registered tool's from
//! another source (the collision attacks: `send_email` registered again by
//! a second server, `sеnd_email` with a Cyrillic е).

use super::hidden::{hidden_char, visible};
use super::{Reason, Severity};
use unicode_normalization::UnicodeNormalization;

/// A name with look-alike characters folded: compatibility forms, Cyrillic
/// and Greek letters that look Latin, `0`/`1`/`I`, `rn`, and separators.
pub fn skeleton(name: &str) -> String {
    let folded: String = name
        .nfkc()
        .map(|c| match c {
            'I' | '1' | '|' => 'l',
            '0' => 'o',
            '5' => 's',
            _ => c,
        })
        .flat_map(char::to_lowercase)
        .map(|c| match c {
            'а' | 'α' => 'a',
            'в' | 'β' => 'b',
            'с' | 'ϲ' => 'c',
            'ԁ' => 'd',
            'е' | 'ε' | 'ё' => 'e',
            'ɡ' => 'g',
            'һ' => 'h',
            'і' | 'ι' | 'ı' => 'i',
            'ј' => 'j',
            'κ' | 'к' => 'k',
            'ⅼ' => 'l',
            'м' => 'm',
            'п' | 'η' => 'n',
            'о' | 'ο' | 'σ' => 'o',
            'р' | 'ρ' => 'p',
            'ԛ' => 'q',
            'ѕ' => 's',
            'т' | 'τ' => 't',
            'υ' | 'ц' => 'u',
            'ν' => 'v',
            'ԝ' | 'ω' => 'w',
            'х' | 'χ' => 'x',
            'у' | 'γ' => 'y',
            'ᴢ' => 'z',
            other => other,
        })
        .filter(|c| !matches!(c, '_' | '-' | '.' | ' ' | ':' | '/') && hidden_char(*c).is_none())
        .collect();
    folded.replace("rn", "m").replace("vv", "w")
}

/// Registered names, indexed once for many lookups: by lowercase name and
/// by skeleton (screening 5,000 tools against 5,000 names folds each name
/// once, not 5,000 times).
#[derive(Debug, Default)]
pub struct Registered<'a> {
    by_name: std::collections::HashMap<String, &'a str>,
    by_skeleton: std::collections::HashMap<String, Vec<&'a str>>,
}

impl<'a> Registered<'a> {
    pub fn new(names: impl IntoIterator<Item = &'a str>) -> Self {
        let mut r = Self::default();
        for n in names {
            r.by_name.entry(n.to_lowercase()).or_insert(n);
            r.by_skeleton.entry(skeleton(n)).or_default().push(n);
        }
        r
    }
}

/// Findings on a tool's name against the names already registered (by
/// other sources or tools).
pub fn screen_name<'a>(name: &str, registered: impl IntoIterator<Item = &'a str>) -> Vec<Reason> {
    screen_name_in(name, &Registered::new(registered))
}

/// [`screen_name`] against an index built once.
pub fn screen_name_in(name: &str, registered: &Registered<'_>) -> Vec<Reason> {
    let mut out = Vec::new();
    let odd: Vec<String> = name
        .chars()
        .filter(|c| !c.is_ascii() || hidden_char(*c).is_some())
        .map(visible)
        .collect();
    if !odd.is_empty() {
        out.push(Reason {
            code: "confusable".into(),
            message: "the name has characters outside ASCII".into(),
            field: Some("name".into()),
            evidence: Some(odd.join(" ")),
            severity: Severity::Warn,
        });
    }
    if let Some(other) = registered.by_name.get(&name.to_lowercase()) {
        out.push(Reason {
            code: "shadows".into(),
            message: format!("has the name of registered tool `{other}`"),
            field: Some("name".into()),
            evidence: Some(other.to_string()),
            severity: Severity::Warn,
        });
    }
    let look_alikes = registered.by_skeleton.get(&skeleton(name));
    for other in look_alikes.into_iter().flatten() {
        if other.eq_ignore_ascii_case(name) {
            continue;
        }
        if spelling(other) == spelling(name) {
            // `sendEmail` beside `send_email`: the same name in another
            // convention (servers differ), not a look-alike character.
            out.push(Reason {
                code: "shadows".into(),
                message: format!("has the name of registered tool `{other}`, spelt another way"),
                field: Some("name".into()),
                evidence: Some(other.to_string()),
                severity: Severity::Warn,
            });
        } else {
            out.push(Reason {
                code: "confusable".into(),
                message: format!(
                    "differs from registered tool `{other}` only by look-alike characters"
                ),
                field: Some("name".into()),
                evidence: Some(other.to_string()),
                severity: Severity::Block,
            });
        }
    }
    out
}

/// A name lowercased without its separators: what naming conventions
/// change (`sendEmail`, `send_email`, `send-email`).
fn spelling(name: &str) -> String {
    name.chars()
        .filter(|c| !matches!(c, '_' | '-' | '.' | ' ' | ':' | '/'))
        .flat_map(char::to_lowercase)
        .collect()
}
