//! Where a validation violation is written: the Turtle line naming its bad
//! reference (the last `<iri>` of the message), searched from the line
//! that starts the subject's statement; else the subject's own line.
//! Spellings tried: `<iri>` and `prefix:local` for every `@prefix` the
//! file declares.

use crate::graph::{Source, SourceData};
use crate::model::Violation;

/// The file's prefixes (`@prefix p: <ns> .` and `PREFIX p: <ns>`).
fn prefixes(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let l = line.trim_start();
        let rest = l
            .strip_prefix("@prefix")
            .or_else(|| l.strip_prefix("PREFIX"))
            .or_else(|| l.strip_prefix("prefix"));
        let Some(rest) = rest else { continue };
        let Some((name, ns)) = rest.split_once(':') else {
            continue;
        };
        let ns = ns.trim();
        if let Some(ns) = ns.strip_prefix('<').and_then(|n| n.split_once('>')) {
            out.push((name.trim().to_string(), ns.0.to_string()));
        }
    }
    out
}

/// The ways a file may write `iri`.
fn spellings(iri: &str, prefixes: &[(String, String)]) -> Vec<String> {
    let mut out = vec![format!("<{iri}>")];
    for (p, ns) in prefixes {
        if let Some(local) = iri.strip_prefix(ns.as_str())
            && !local.is_empty()
            && !local.contains('/')
        {
            out.push(format!("{p}:{local}"));
        }
    }
    out
}

/// Whether `line` holds `word` with no name character right after it
/// (`verb:reserv` is not found in `verb:reserve`).
fn holds(line: &str, word: &str) -> bool {
    line.match_indices(word).any(|(i, _)| {
        let before = line[..i].chars().next_back();
        let after = line[i + word.len()..].chars().next();
        let name = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        !name(before) && !name(after) && !matches!(after, Some(':') | Some('-'))
    })
}

/// `file:line` of the violation in `sources` (Turtle ones), if found.
pub(super) fn locate(sources: &[Source], v: &Violation) -> Option<String> {
    let subject = v.subject.trim_matches(['<', '>']);
    let target = v
        .message
        .rmatch_indices('<')
        .find_map(|(i, _)| v.message[i + 1..].split_once('>').map(|(t, _)| t))
        .filter(|t| *t != subject);
    for source in sources {
        let SourceData::Turtle(text) = &source.data else {
            continue;
        };
        let prefixes = prefixes(text);
        let subj = spellings(subject, &prefixes);
        let lines: Vec<&str> = text.lines().collect();
        let Some(start) = lines.iter().position(|l| {
            let l = l.trim_start();
            subj.iter()
                .any(|s| l.starts_with(s.as_str()) && holds(l, s))
        }) else {
            continue;
        };
        let line = target
            .and_then(|t| {
                let want = spellings(t, &prefixes);
                lines[start..]
                    .iter()
                    .take_while({
                        let mut ended = false;
                        move |l| {
                            let go = !ended;
                            ended = l.trim_end().ends_with(" .") || l.trim_end() == ".";
                            go
                        }
                    })
                    .position(|l| want.iter().any(|w| holds(l, w)))
                    .map(|p| start + p)
            })
            .unwrap_or(start);
        return Some(format!("{}:{}", source.name, line + 1));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_in_a_goal_is_found_on_its_line() {
        let text = "@prefix tg: <https://toolgraph.dev/ns#> .\n@prefix verb: <https://toolgraph.dev/verb/> .\n@prefix goal: <https://toolgraph.dev/goal/> .\n\ngoal:X a tg:Goal ;\n    tg:allowsOperation verb:reserve ,\n        verb:reserv ;\n    tg:order 1 .\n";
        let sources = vec![Source {
            name: "seeds/goals.ttl".into(),
            data: SourceData::Turtle(text.into()),
        }];
        let v = Violation {
            rule: "undefined_policy_reference".into(),
            subject: "https://toolgraph.dev/goal/X".into(),
            message: "<https://toolgraph.dev/goal/X> tg:allowsOperation <https://toolgraph.dev/verb/reserv>, which is not a tg:Verb".into(),
            location: None,
        };
        assert_eq!(locate(&sources, &v).as_deref(), Some("seeds/goals.ttl:7"));
        let v = Violation {
            message: "no label".into(),
            ..v
        };
        assert_eq!(locate(&sources, &v).as_deref(), Some("seeds/goals.ttl:5"));
    }
}
