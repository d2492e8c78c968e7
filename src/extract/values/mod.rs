//! Structured values (nom grammar): flight numbers, times, dates, durations,
//! money, currencies, party sizes, e-mail addresses, URLs, phone numbers and
//! quoted strings.
//!
//! The scanner tries every parser at each word start (and at `$ € £ ¥ + (`
//! and quote characters), keeps the longest parse that ends on a word
//! boundary, and moves on past it: earliest start wins, then longest.
//! Normalised values:
//! - time: 24-hour `HH:MM` (`8pm` -> `20:00`, `noon` -> `12:00`);
//! - date: ISO `YYYY-MM-DD` when absolute with a year, `--MM-DD` (XSD
//!   gMonthDay) without a year (`Dec 1` -> `--12-01`), the lower-cased words
//!   for relative dates (`tomorrow`, `next monday`, `friday`);
//! - duration: count and singular unit (`2 nights` -> `2 night`);
//! - money: ISO code and amount without grouping (`$1,200` -> `USD 1200`);
//! - currency: ISO code; quantity: the count (`party of four` -> `4`);
//! - flight number: digits (`flight 175` -> `175`) or code and digits
//!   (`WN175` -> `WN 175`); phone: digits with a leading `+` if given;
//!   quoted: the inner text.

use nom::{
    IResult, Parser,
    branch::alt,
    bytes::complete::{tag, tag_no_case, take_while_m_n},
    character::complete::{char, digit1, satisfy, space0, space1},
    combinator::{map, not, opt, peek, recognize, value, verify},
    multi::many0,
    sequence::{preceded, terminated},
};

mod calendar;
mod contact;
mod money;

use calendar::{date, duration, quantity, time};
use contact::{email, phone, quoted, url};
use money::{currency, currency_word, iso_code, money};

use crate::model::MentionKind;
use crate::vocab::ent;

/// A structured value found in the text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Value {
    pub start: usize,
    pub end: usize,
    pub kind: MentionKind,
    pub value: String,
}

impl Value {
    /// The entity class this kind of value is evidence for.
    pub fn iri(kind: MentionKind) -> Option<&'static str> {
        Some(match kind {
            MentionKind::FlightNumber => ent::FLIGHT,
            MentionKind::Time => ent::TIME,
            MentionKind::Date => ent::DATE,
            MentionKind::Duration => ent::DURATION,
            MentionKind::Money => ent::MONEY,
            MentionKind::Currency => ent::CURRENCY,
            MentionKind::Quantity => ent::PARTY_SIZE,
            MentionKind::Email => ent::EMAIL_ADDRESS,
            MentionKind::Url => ent::URL,
            MentionKind::Phone => ent::PHONE_NUMBER,
            _ => return None,
        })
    }
}

type Res<'a, T> = IResult<&'a str, T>;

/// A value parser: the kind and the normalised value.
type ValueParser = fn(&str) -> Res<'_, (MentionKind, String)>;

/// Every structured value in `text`, sorted, never overlapping.
pub(crate) fn scan(text: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut prev: Option<char> = None;
    let mut skip_to = 0usize;
    for (pos, c) in text.char_indices() {
        let p = prev;
        prev = Some(c);
        if pos < skip_to || c.is_whitespace() {
            continue;
        }
        if p.is_some_and(|p| p.is_alphanumeric() || p == '_' || p == '@') {
            continue;
        }
        if !(c.is_alphanumeric() || "$€£¥₹+(\"'“‘«".contains(c)) {
            continue;
        }
        let Some(rest) = text.get(pos..) else {
            continue;
        };
        if let Some((len, kind, v)) = best(rest) {
            out.push(Value {
                start: pos,
                end: pos + len,
                kind,
                value: v,
            });
            skip_to = pos + len;
        }
    }
    out
}

/// The longest value parse at the start of `s` that ends on a word boundary.
fn best(s: &str) -> Option<(usize, MentionKind, String)> {
    let parsers: [ValueParser; 11] = [
        flight_number,
        money,
        time,
        date,
        duration,
        quantity,
        currency,
        email,
        url,
        phone,
        quoted,
    ];
    let mut best: Option<(usize, MentionKind, String)> = None;
    for p in parsers {
        if let Ok((rest, (kind, v))) = p(s) {
            let len = s.len() - rest.len();
            if len == 0 || rest.chars().next().is_some_and(char::is_alphanumeric) {
                continue;
            }
            if best.as_ref().is_none_or(|b| len > b.0) {
                best = Some((len, kind, v));
            }
        }
    }
    best
}

// ---- helpers -------------------------------------------------------------

/// Succeeds (consuming nothing) when no alphanumeric follows.
fn end_word(i: &str) -> Res<'_, ()> {
    not(satisfy(char::is_alphanumeric)).parse(i)
}

fn kw<'a>(
    word: &'static str,
) -> impl Parser<&'a str, Output = &'a str, Error = nom::error::Error<&'a str>> {
    terminated(tag_no_case(word), end_word)
}

fn no_match(i: &str) -> nom::Err<nom::error::Error<&str>> {
    nom::Err::Error(nom::error::Error::new(i, nom::error::ErrorKind::Tag))
}

/// The first word of `words` that `i` starts with, as a whole word (tables
/// list longer phrases before their prefixes: "swiss francs" before "francs").
fn any_word<'a>(i: &'a str, words: &[&'static str]) -> Res<'a, &'a str> {
    for w in words {
        if let Ok(r) = kw(w).parse(i) {
            return Ok(r);
        }
    }
    Err(no_match(i))
}

/// [`any_word`] over a table of `(word, value)`: the value of the first match.
fn lookup<'a, T: Copy>(i: &'a str, table: &[(&'static str, T)]) -> Res<'a, T> {
    for (w, v) in table {
        if let Ok((rest, _)) = kw(w).parse(i) {
            return Ok((rest, *v));
        }
    }
    Err(no_match(i))
}

fn digits_n(min: usize, max: usize) -> impl Fn(&str) -> Res<'_, &str> {
    move |i| take_while_m_n(min, max, |c: char| c.is_ascii_digit()).parse(i)
}

/// `1,200.50` -> `1200.50`.
fn number(i: &str) -> Res<'_, String> {
    map(
        recognize((
            digit1,
            many0((char(','), digits_n(3, 3))),
            opt((char('.'), digit1)),
        )),
        |s: &str| s.replace(',', ""),
    )
    .parse(i)
}

const NUMBER_WORDS: &[(&str, u32)] = &[
    ("one", 1),
    ("two", 2),
    ("three", 3),
    ("four", 4),
    ("five", 5),
    ("six", 6),
    ("seven", 7),
    ("eight", 8),
    ("nine", 9),
    ("ten", 10),
    ("eleven", 11),
    ("twelve", 12),
    ("thirteen", 13),
    ("fourteen", 14),
    ("fifteen", 15),
    ("sixteen", 16),
    ("seventeen", 17),
    ("eighteen", 18),
    ("nineteen", 19),
    ("twenty", 20),
    ("thirty", 30),
    ("forty", 40),
    ("fifty", 50),
];

fn number_word(i: &str) -> Res<'_, u32> {
    lookup(i, NUMBER_WORDS)
}

/// A small count: 1-3 digits or a number word.
fn count(i: &str) -> Res<'_, u32> {
    alt((
        map(
            terminated(digits_n(1, 3), not(satisfy(|c: char| c.is_ascii_digit()))),
            |s: &str| s.parse::<u32>().unwrap_or(0),
        ),
        number_word,
    ))
    .parse(i)
}

// ---- flight numbers --------------------------------------------------------

const AIRLINE_CODES: &[&str] = &[
    "AA", "UA", "DL", "WN", "B6", "AS", "NK", "F9", "HA", "G4", "SY", "AC", "WS", "BA", "LH", "AF",
    "KL", "EK", "QR", "SQ", "CX", "NH", "JL", "QF", "VS", "IB", "AZ", "LX", "OS", "SK", "AY", "TK",
    "EY", "KE", "OZ", "CA", "MU", "CZ", "AI", "6E", "FR", "U2", "W6", "VY", "TP", "EI", "LA", "AM",
    "AV", "CM", "ET", "SA", "MS", "SV", "NZ", "VA", "JQ", "TG", "MH", "GA", "PR", "VN", "BR", "CI",
];

fn airline_code(i: &str) -> Res<'_, &str> {
    verify(
        take_while_m_n(2, 2, |c: char| c.is_ascii_uppercase() || c.is_ascii_digit()),
        |s: &str| AIRLINE_CODES.contains(&s),
    )
    .parse(i)
}

fn flight_number(i: &str) -> Res<'_, (MentionKind, String)> {
    let coded = |i| {
        map(
            (airline_code, space0, digits_n(1, 4), end_word),
            |(c, _, d, _): (&str, &str, &str, ())| format!("{c} {d}"),
        )
        .parse(i)
    };
    let worded = map(
        (
            tag_no_case("flight"),
            alt((
                preceded(
                    (
                        space0,
                        alt((tag("#"), tag_no_case("no."), tag_no_case("number"))),
                    ),
                    space0,
                ),
                space1,
            )),
            alt((
                coded,
                map(terminated(digits_n(1, 4), end_word), str::to_string),
            )),
        ),
        |(_, _, v)| v,
    );
    map(alt((worded, coded)), |v| (MentionKind::FlightNumber, v)).parse(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(s: &str) -> (MentionKind, String, &str) {
        let v = scan(s);
        assert_eq!(v.len(), 1, "{s}: {v:?}");
        let v = &v[0];
        (v.kind, v.value.clone(), &s[v.start..v.end])
    }

    #[test]
    fn values() {
        use MentionKind::*;
        let cases: &[(&str, MentionKind, &str, &str)] = &[
            ("on flight 175 please", FlightNumber, "175", "flight 175"),
            ("UA 921", FlightNumber, "UA 921", "UA 921"),
            ("take WN175", FlightNumber, "WN 175", "WN175"),
            ("at 8pm", Time, "20:00", "8pm"),
            ("at 8:30 pm", Time, "20:30", "8:30 pm"),
            ("20:30", Time, "20:30", "20:30"),
            ("noon", Time, "12:00", "noon"),
            ("12am", Time, "00:00", "12am"),
            ("tomorrow", Date, "tomorrow", "tomorrow"),
            ("on Friday", Date, "friday", "Friday"),
            ("next  Monday", Date, "next monday", "next  Monday"),
            ("2026-12-01", Date, "2026-12-01", "2026-12-01"),
            ("Dec 1", Date, "--12-01", "Dec 1"),
            ("1 December", Date, "--12-01", "1 December"),
            (
                "December 1st, 2026",
                Date,
                "2026-12-01",
                "December 1st, 2026",
            ),
            ("12/01/2026", Date, "2026-12-01", "12/01/2026"),
            ("3 hours", Duration, "3 hour", "3 hours"),
            ("2 nights", Duration, "2 night", "2 nights"),
            ("45 min", Duration, "45 minute", "45 min"),
            ("two weeks", Duration, "2 week", "two weeks"),
            ("under $300", Money, "USD 300", "$300"),
            ("20 EUR", Money, "EUR 20", "20 EUR"),
            ("€20", Money, "EUR 20", "€20"),
            ("20 euros", Money, "EUR 20", "20 euros"),
            ("£5.50", Money, "GBP 5.50", "£5.50"),
            ("$1,200.50.", Money, "USD 1200.50", "$1,200.50"),
            ("in yen", Currency, "JPY", "yen"),
            ("table for two", Quantity, "2", "for two"),
            ("for 2", Quantity, "2", "for 2"),
            ("3 people", Quantity, "3", "3 people"),
            ("a party of four", Quantity, "4", "party of four"),
            (
                "mail bob.smith@example.com.",
                Email,
                "bob.smith@example.com",
                "bob.smith@example.com",
            ),
            (
                "see https://x.io/a?b=1).",
                Url,
                "https://x.io/a?b=1",
                "https://x.io/a?b=1",
            ),
            (
                "call +1 415 555 0100",
                Phone,
                "+14155550100",
                "+1 415 555 0100",
            ),
            ("(415) 555-0100", Phone, "4155550100", "(415) 555-0100"),
            ("find 'Star Wars' now", Quoted, "Star Wars", "'Star Wars'"),
            ("title \"Dune\"", Quoted, "Dune", "\"Dune\""),
        ];
        for (text, kind, value, surface) in cases {
            let (k, v, s) = one(text);
            assert_eq!((k, v.as_str(), s), (*kind, *value, *surface), "{text}");
        }
    }

    #[test]
    fn two_currencies() {
        let v = scan("convert USD to EUR");
        let vals: Vec<_> = v.iter().map(|v| (v.kind, v.value.as_str())).collect();
        assert_eq!(
            vals,
            [
                (MentionKind::Currency, "USD"),
                (MentionKind::Currency, "EUR")
            ]
        );
    }

    #[test]
    fn not_values() {
        for s in [
            "don't stop",
            "for 3 hours",
            "I'm here",
            "version 2",
            "the year",
            "MAKE_RESERVATION",
            "convertCurrency",
            "at 25pm",
            "13:75",
        ] {
            let v = scan(s);
            assert!(
                v.iter().all(|v| v.kind != MentionKind::Quantity
                    && v.kind != MentionKind::Time
                    && v.kind != MentionKind::Quoted),
                "{s}: {v:?}"
            );
        }
        assert_eq!(scan("for 3 hours")[0].kind, MentionKind::Duration);
    }
}
