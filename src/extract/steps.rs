//! Splits a multi-step request ("Retrieve X. Then calculate Y. Finally,
//! create Z.") into its steps, so each step can find its own tool.
//!
//! A step boundary is a sentence end (`.`, `?`, `!`, `;` followed by
//! whitespace and an upper-case letter, digit or quote; not after an
//! abbreviation such as `Dr.` or `p.m.`), a line break, or a sequencing
//! connective inside a sentence (`, then`, `and then`, `after that`,
//! `and also`, `as well as`). Leading connectives (`Then`, `Finally,`,
//! `Additionally,` …) are stripped from a step. Steps with fewer than three
//! words are folded away: they carry details, not intents.

use nom::{
    IResult, Parser,
    branch::alt,
    bytes::complete::tag_no_case,
    character::complete::{char, multispace0, multispace1},
    combinator::{opt, recognize},
    sequence::{pair, preceded, terminated},
};
use std::ops::Range;

/// Connectives that open a new step when they start a sentence.
const LEADING: &[&str] = &[
    "once that is done",
    "in addition",
    "after that",
    "afterwards",
    "additionally",
    "subsequently",
    "furthermore",
    "moreover",
    "finally",
    "lastly",
    "then",
    "next",
    "also",
];

/// Abbreviations after which a period does not end a sentence.
const ABBREVIATIONS: &[&str] = &[
    "dr", "mr", "mrs", "ms", "st", "jr", "sr", "vs", "etc", "approx", "no", "e.g", "i.e", "a.m",
    "p.m", "ph.d", "u.s", "inc", "ltd", "co", "fig",
];

/// `, then ` / ` and then ` / ` after that ` / ` and also ` / ` as well as `
/// inside a sentence: returns the input after the connective.
fn inner_connective(input: &str) -> IResult<&str, &str> {
    recognize((
        opt(char(',')),
        multispace1,
        opt(terminated(tag_no_case("and"), multispace1)),
        alt((
            tag_no_case("then"),
            tag_no_case("after that"),
            tag_no_case("afterwards"),
            tag_no_case("also"),
            tag_no_case("as well as"),
        )),
        multispace1,
    ))
    .parse(input)
}

/// A leading connective plus its comma and spaces.
fn leading_connective(input: &str) -> IResult<&str, &str> {
    for word in LEADING {
        let r: IResult<&str, &str> = recognize(pair(
            tag_no_case(*word),
            preceded(opt(char(',')), multispace0),
        ))
        .parse(input);
        if let Ok((rest, matched)) = r {
            // a whole word: "Thenar" is not "Then"
            let word_end = input[word.len()..].chars().next();
            if word_end.is_none_or(|c| !c.is_alphanumeric()) {
                return Ok((rest, matched));
            }
        }
    }
    Err(nom::Err::Error(nom::error::Error::new(
        input,
        nom::error::ErrorKind::Tag,
    )))
}

fn ends_with_abbreviation(sentence: &str) -> bool {
    let Some(body) = sentence.strip_suffix('.') else {
        return false;
    };
    let last = body
        .rsplit(|c: char| c.is_whitespace() || c == '(')
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    // a single letter ("J. Smith") or a known abbreviation
    last.chars().count() == 1 || ABBREVIATIONS.contains(&last.as_str())
}

fn word_count(s: &str) -> usize {
    s.split(|c: char| !c.is_alphabetic())
        .filter(|w| w.chars().count() >= 2)
        .count()
}

/// Byte ranges of the steps of `text`; a single range covering the text
/// when it is one step.
pub fn steps(text: &str) -> Vec<Range<usize>> {
    // 1. sentences
    let mut sentences: Vec<Range<usize>> = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let boundary = if c == b'\n' {
            Some((i, i + 1))
        } else if matches!(c, b'.' | b'?' | b'!' | b';') {
            let ws = text[i + 1..]
                .find(|ch: char| !ch.is_whitespace())
                .unwrap_or(text.len() - i - 1);
            let next = text[i + 1 + ws..].chars().next();
            let opens = next
                .is_some_and(|n| n.is_uppercase() || n.is_ascii_digit() || n == '"' || n == '\'');
            if ws > 0 && opens && !(c == b'.' && ends_with_abbreviation(&text[start..=i])) {
                Some((i + 1, i + 1 + ws))
            } else {
                None
            }
        } else {
            None
        };
        if let Some((end, next_start)) = boundary {
            sentences.push(start..end);
            start = next_start;
            i = next_start;
        } else {
            i += 1;
        }
    }
    if start < text.len() {
        sentences.push(start..text.len());
    }
    // 2. connectives inside sentences, 3. strip leading connectives
    let mut out: Vec<Range<usize>> = Vec::new();
    for s in sentences {
        let mut piece_start = s.start;
        let mut j = s.start;
        while j < s.end {
            // a connective starts with a comma or ASCII whitespace (what
            // `multispace1` accepts): only try there, always a char boundary
            if matches!(bytes[j], b',' | b' ' | b'\t' | b'\r' | b'\n')
                && let Ok((rest, _)) = inner_connective(&text[j..s.end])
            {
                out.push(piece_start..j);
                piece_start = s.end - rest.len();
                j = piece_start;
                continue;
            }
            j += 1;
        }
        out.push(piece_start..s.end);
    }
    let mut steps: Vec<Range<usize>> = Vec::new();
    for r in out {
        let mut r = r;
        let trimmed_start = r.start + (text[r.clone()].len() - text[r.clone()].trim_start().len());
        r.start = trimmed_start;
        if let Ok((rest, _)) = leading_connective(&text[r.clone()]) {
            r.start = r.end - rest.len();
        }
        let body = text[r.clone()].trim_end();
        r.end = r.start + body.len();
        if word_count(&text[r.clone()]) >= 3 {
            steps.push(r);
        }
    }
    if steps.len() < 2 {
        return std::iter::once(0..text.len()).collect();
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::steps;

    fn texts(t: &str) -> Vec<&str> {
        steps(t).into_iter().map(|r| &t[r]).collect()
    }

    #[test]
    fn splits_sentences_and_strips_connectives() {
        let t = "Calculate the sludge production rate for 0.87 cubic meters per day. Then, retrieve the treatment plan for patient O2073. Finally, obtain the forensic analysis report for sample Xh.";
        assert_eq!(
            texts(t),
            vec![
                "Calculate the sludge production rate for 0.87 cubic meters per day.",
                "retrieve the treatment plan for patient O2073.",
                "obtain the forensic analysis report for sample Xh.",
            ]
        );
    }

    #[test]
    fn splits_on_inner_connectives() {
        assert_eq!(
            texts("Book a flight to Paris and then reserve a table for two"),
            vec!["Book a flight to Paris", "reserve a table for two"]
        );
        assert_eq!(
            texts("find the weather in Oslo, then convert 100 USD to EUR"),
            vec!["find the weather in Oslo", "convert 100 USD to EUR"]
        );
    }

    #[test]
    fn one_step_stays_whole() {
        for t in [
            "Can I find any peer-reviewed papers?",
            "dinner for two at 8pm",
            "Book with Dr. Smith at 2:47 p.m. Tuesday for a checkup",
            "Tell me about the program in New York for Ph.D. students please",
            "",
            "Then.",
        ] {
            let all = steps(t);
            assert_eq!(all.len(), 1, "{t:?}");
            assert_eq!(all[0], 0..t.len(), "{t:?}");
        }
    }

    #[test]
    fn short_detail_sentences_are_folded_away() {
        // "ID 42." has fewer than three words: a detail, not a step
        let t = "Retrieve the account balance for my user. ID 42. Then send an email to my manager";
        assert_eq!(
            texts(t),
            vec![
                "Retrieve the account balance for my user.",
                "send an email to my manager"
            ]
        );
    }

    #[test]
    fn never_panics_on_odd_input() {
        for t in [
            "é. É. ü",
            ". . .",
            "\n\n\n",
            "a. B",
            "x, then",
            "ÄÖ; Ü é then é",
        ] {
            for r in steps(t) {
                assert!(t.get(r).is_some());
            }
        }
    }
}
