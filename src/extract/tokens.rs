//! Tokeniser shared by the extractor, the lexicon and the constellation builder.
//!
//! A *chunk* is a run of alphanumeric characters joined by connectors
//! (`_`, `-`, `.`, `'`) that sit between two alphanumerics. A chunk is an
//! *identifier* when it contains `_`, a `.` between letters, two or more
//! `-`, or a camelCase hump (`convertCurrency`, or PascalCase whose first
//! hump is a verb: `FindMovies`). Identifiers are split into parts on
//! connectors and camel humps; brand-like words (`PayPal`, `YouTube`,
//! `iPhone`) stay whole.

use super::lemma::lemma;

/// Letter case of a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Caps {
    Lower,
    /// First letter upper, some lower (`Denver`, `PayPal`).
    Title,
    /// Every letter upper (`NYC`, `MAKE`).
    Upper,
    /// No letters (numbers).
    None,
}

/// One word of the input with its byte span.
#[derive(Debug, Clone)]
pub(crate) struct Token<'a> {
    pub start: usize,
    pub end: usize,
    pub text: &'a str,
    pub lower: String,
    pub lemma: String,
    /// Something other than whitespace or an identifier connector separates
    /// this token from the previous one (punctuation, a quote, a bracket).
    pub hard_before: bool,
    /// First token of the text or of a sentence.
    pub sentence_start: bool,
    /// Part of a split identifier (`MAKE_RESERVATION`, `convertCurrency`).
    pub ident: bool,
    pub caps: Caps,
}

impl Token<'_> {
    pub fn is_number(&self) -> bool {
        self.text.chars().all(|c| c.is_ascii_digit())
    }
}

fn is_connector(c: char) -> bool {
    matches!(c, '_' | '-' | '.' | '\'' | '\u{2019}')
}

/// Byte spans of the chunks of `text`.
fn chunks(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut it = text.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        if !c.is_alphanumeric() {
            continue;
        }
        let start = i;
        let mut end = i + c.len_utf8();
        loop {
            let rest = text.get(end..).unwrap_or("");
            let mut cs = rest.chars();
            match cs.next() {
                Some(n) if n.is_alphanumeric() => {
                    end += n.len_utf8();
                }
                Some(n) if is_connector(n) => {
                    // Allow a run of connectors only if an alphanumeric follows.
                    let conn_len: usize = rest
                        .chars()
                        .take_while(|c| is_connector(*c))
                        .map(char::len_utf8)
                        .sum();
                    let after = rest.get(conn_len..).and_then(|r| r.chars().next());
                    let run = rest.get(..conn_len).unwrap_or("");
                    let ok_run = run.chars().all(|c| c == '_') || run.chars().count() == 1;
                    match after {
                        Some(a) if a.is_alphanumeric() && ok_run => end += conn_len,
                        _ => break,
                    }
                }
                _ => break,
            }
        }
        // Skip the consumed characters in the iterator.
        while let Some(&(j, _)) = it.peek() {
            if j < end {
                it.next();
            } else {
                break;
            }
        }
        out.push((start, end));
    }
    out
}

/// Split a part (no connectors) at camel humps: `convertCurrency`,
/// `HTTPServer` -> `HTTP`, `Server`. Returns byte ranges relative to `s`.
fn camel_ranges(s: &str) -> Vec<(usize, usize)> {
    let cs: Vec<(usize, char)> = s.char_indices().collect();
    let mut out = Vec::new();
    let mut start = 0;
    for k in 1..cs.len() {
        let (i, c) = cs[k];
        let p = cs[k - 1].1;
        let next_lower = cs.get(k + 1).is_some_and(|(_, n)| n.is_lowercase());
        let boundary = (c.is_uppercase() && (p.is_lowercase() || p.is_ascii_digit()))
            || (c.is_uppercase() && p.is_uppercase() && next_lower)
            || (c.is_alphabetic() && p.is_ascii_digit())
            || (c.is_ascii_digit() && p.is_alphabetic() && s.contains('_'));
        if boundary {
            out.push((start, i));
            start = i;
        }
    }
    out.push((start, s.len()));
    out
}

fn has_hump(s: &str) -> bool {
    let cs: Vec<char> = s.chars().collect();
    cs.windows(2)
        .any(|w| w[0].is_lowercase() && w[1].is_uppercase())
}

fn caps_of(s: &str) -> Caps {
    let mut letters = s.chars().filter(|c| c.is_alphabetic());
    let Some(first) = letters.next() else {
        return Caps::None;
    };
    let rest_upper = s
        .chars()
        .filter(|c| c.is_alphabetic())
        .all(|c| c.is_uppercase());
    if rest_upper {
        Caps::Upper
    } else if first.is_uppercase() {
        Caps::Title
    } else {
        Caps::Lower
    }
}

/// Split a chunk into parts on connectors; returns (relative range, connector before).
fn connector_parts(chunk: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in chunk.char_indices() {
        if is_connector(c) {
            if let Some(s) = start.take() {
                out.push((s, i));
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        out.push((s, chunk.len()));
    }
    out
}

/// Tokenise `text`. `keep_whole(lower)` says a camel-cased word is a known
/// single label (`paypal`); `is_verb(lemma)` says a word is a verb, which
/// makes a PascalCase word an identifier (`FindMovies`).
pub(crate) fn tokenize<'a>(
    text: &'a str,
    keep_whole: &dyn Fn(&str) -> bool,
    is_verb: &dyn Fn(&str) -> bool,
) -> Vec<Token<'a>> {
    let mut out: Vec<Token<'a>> = Vec::new();
    let mut prev_end = 0;
    for (cs, ce) in chunks(text) {
        let chunk = text.get(cs..ce).unwrap_or("");
        let gap = text.get(prev_end..cs).unwrap_or("");
        let hard = !out.is_empty() && gap.chars().any(|c| !c.is_whitespace());
        let sentence = out.is_empty()
            || gap
                .chars()
                .any(|c| matches!(c, '.' | '!' | '?' | ';' | ':' | '\n' | '\u{2022}'));
        prev_end = ce;
        let (ranges, ident) = word_ranges(chunk, keep_whole, is_verb);
        // Drop clitics after an apostrophe ("Denver's" -> "Denver").
        let mut first_in_chunk = true;
        for (a, b) in ranges {
            let s = cs + a;
            let e = cs + b;
            let t = text.get(s..e).unwrap_or("");
            if t.is_empty() {
                continue;
            }
            let after_apos = s > 0
                && text
                    .get(..s)
                    .and_then(|p| p.chars().last())
                    .is_some_and(|c| c == '\'' || c == '\u{2019}');
            if after_apos
                && !first_in_chunk
                && matches!(t, "s" | "t" | "ll" | "re" | "ve" | "d" | "m" | "S")
            {
                continue;
            }
            let lower = t.to_lowercase();
            out.push(Token {
                start: s,
                end: e,
                text: t,
                lemma: lemma(&lower),
                lower,
                hard_before: first_in_chunk && hard,
                sentence_start: first_in_chunk && sentence,
                ident,
                caps: caps_of(t),
            });
            first_in_chunk = false;
        }
    }
    out
}

/// The words of one chunk (byte ranges inside it), and whether the chunk
/// is an identifier: `snake_case`, `dotted.names`, `many-hyphens`, or a
/// camel-cased word that splits (its humps are words).
fn word_ranges(
    chunk: &str,
    keep_whole: &dyn Fn(&str) -> bool,
    is_verb: &dyn Fn(&str) -> bool,
) -> (Vec<(usize, usize)>, bool) {
    let has_us = chunk.contains('_');
    let dot_letters = chunk.char_indices().any(|(i, c)| {
        c == '.'
            && chunk[..i].chars().last().is_some_and(char::is_alphabetic)
            && chunk[i + 1..]
                .chars()
                .next()
                .is_some_and(char::is_alphabetic)
            && chunk[i + 1..]
                .chars()
                .nth(1)
                .is_some_and(char::is_alphanumeric)
    });
    let hyphens = chunk.matches('-').count();
    let mut ident = has_us || dot_letters || hyphens >= 2;
    let numberish = chunk
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '.' | ',' | '-' | '\''));
    if numberish {
        return (vec![(0, chunk.len())], ident);
    }
    // Camel decision per part.
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    for (ps, pe) in connector_parts(chunk) {
        let part = &chunk[ps..pe];
        let lower = part.to_lowercase();
        let split = has_hump(part) && !keep_whole(&lower) && {
            let humps = camel_ranges(part);
            let first = humps
                .first()
                .and_then(|(a, b)| part.get(*a..*b))
                .unwrap_or("");
            let starts_lower = part.chars().next().is_some_and(char::is_lowercase);
            ident || (starts_lower && first.chars().count() >= 2) || is_verb(&lemma(first))
        };
        if split {
            ident = true;
            for (a, b) in camel_ranges(part) {
                ranges.push((ps + a, ps + b));
            }
        } else {
            // identifiers still split letter->digit boundaries after `_`
            ranges.push((ps, pe));
        }
    }
    (ranges, ident)
}

/// Split an identifier into lower-case words: `MAKE_RESERVATION` ->
/// `["make", "reservation"]`, `convertCurrency` -> `["convert", "currency"]`,
/// `get-user-profile`, `Movies_1_FindMovies` -> `["movies", "1", "find",
/// "movies"]`, `math.triangle_area_heron` -> `["math", "triangle", "area",
/// "heron"]`. Every camel hump is split, whatever the word.
pub fn split_identifier(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (cs, ce) in chunks(s) {
        let chunk = s.get(cs..ce).unwrap_or("");
        for (ps, pe) in connector_parts(chunk) {
            let part = &chunk[ps..pe];
            for (a, b) in camel_ranges(part) {
                if let Some(w) = part.get(a..b)
                    && !w.is_empty()
                {
                    out.push(w.to_lowercase());
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<String> {
        tokenize(s, &|w| w == "paypal", &|w| w == "find")
            .into_iter()
            .map(|t| t.text.to_string())
            .collect()
    }

    #[test]
    fn splits_identifiers() {
        assert_eq!(
            split_identifier("MAKE_RESERVATION"),
            ["make", "reservation"]
        );
        assert_eq!(split_identifier("convertCurrency"), ["convert", "currency"]);
        assert_eq!(
            split_identifier("get-user-profile"),
            ["get", "user", "profile"]
        );
        assert_eq!(
            split_identifier("Movies_1_FindMovies"),
            ["movies", "1", "find", "movies"]
        );
        assert_eq!(
            split_identifier("math.triangle_area_heron"),
            ["math", "triangle", "area", "heron"]
        );
        assert_eq!(split_identifier("HTTPServer"), ["http", "server"]);
        assert_eq!(split_identifier("task_create"), ["task", "create"]);
        assert!(split_identifier("").is_empty());
        assert!(split_identifier("__--..").is_empty());
    }

    #[test]
    fn tokenises_text() {
        assert_eq!(
            toks("Fly to Denver's airport."),
            ["Fly", "to", "Denver", "airport"]
        );
        assert_eq!(toks("pay with PayPal"), ["pay", "with", "PayPal"]);
        assert_eq!(toks("FindMovies now"), ["Find", "Movies", "now"]);
        assert_eq!(toks("YouTube"), ["YouTube"]);
        assert_eq!(toks("convertCurrency"), ["convert", "Currency"]);
        let t = tokenize("a, b. C_d", &|_| false, &|_| false);
        assert!(t[1].hard_before && !t[1].sentence_start);
        assert!(t[2].sentence_start && t[2].ident && t[3].ident);
        assert!(!t[3].hard_before);
    }
}
