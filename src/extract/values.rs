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

use crate::MentionKind;
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

// ---- money and currency -----------------------------------------------------

const ISO_CODES: &[&str] = &[
    "USD", "EUR", "GBP", "JPY", "CNY", "CAD", "AUD", "CHF", "INR", "MXN", "BRL", "KRW", "SEK",
    "NOK", "DKK", "NZD", "SGD", "HKD", "ZAR", "RUB", "PLN", "THB", "IDR", "HUF", "CZK", "ILS",
    "PHP", "MYR", "AED", "SAR", "TWD", "ARS", "CLP", "COP", "EGP", "NGN", "VND", "BTC", "ETH",
];

fn iso_code(i: &str) -> Res<'_, String> {
    map(
        verify(
            terminated(
                take_while_m_n(3, 3, |c: char| c.is_ascii_uppercase()),
                not(satisfy(char::is_alphabetic)),
            ),
            |s: &str| ISO_CODES.contains(&s),
        ),
        str::to_string,
    )
    .parse(i)
}

const CURRENCY_WORDS: &[(&str, &str)] = &[
    ("us dollars", "USD"),
    ("us dollar", "USD"),
    ("dollars", "USD"),
    ("dollar", "USD"),
    ("bucks", "USD"),
    ("euros", "EUR"),
    ("euro", "EUR"),
    ("pounds sterling", "GBP"),
    ("pound sterling", "GBP"),
    ("british pounds", "GBP"),
    ("yen", "JPY"),
    ("yuan", "CNY"),
    ("renminbi", "CNY"),
    ("rupees", "INR"),
    ("rupee", "INR"),
    ("pesos", "MXN"),
    ("swiss francs", "CHF"),
    ("francs", "CHF"),
    ("bitcoin", "BTC"),
];

fn currency_word(i: &str) -> Res<'_, String> {
    map(|i| lookup(i, CURRENCY_WORDS), str::to_string).parse(i)
}

fn currency_symbol(i: &str) -> Res<'_, &'static str> {
    alt((
        value("USD", tag("US$")),
        value("USD", tag("$")),
        value("EUR", tag("€")),
        value("GBP", tag("£")),
        value("JPY", tag("¥")),
        value("INR", tag("₹")),
    ))
    .parse(i)
}

fn money(i: &str) -> Res<'_, (MentionKind, String)> {
    let lower_code = |i| {
        map(
            verify(
                terminated(
                    take_while_m_n(3, 3, |c: char| c.is_ascii_alphabetic()),
                    end_word,
                ),
                |s: &str| ISO_CODES.contains(&s.to_ascii_uppercase().as_str()),
            ),
            |s: &str| s.to_ascii_uppercase(),
        )
        .parse(i)
    };
    map(
        alt((
            map((currency_symbol, space0, number), |(c, _, n)| {
                format!("{c} {n}")
            }),
            map((iso_code, space0, number), |(c, _, n)| format!("{c} {n}")),
            map(
                (number, space0, alt((currency_word, lower_code))),
                |(n, _, c)| format!("{c} {n}"),
            ),
        )),
        |v| (MentionKind::Money, v),
    )
    .parse(i)
}

fn currency(i: &str) -> Res<'_, (MentionKind, String)> {
    map(alt((iso_code, currency_word)), |c| {
        (MentionKind::Currency, c)
    })
    .parse(i)
}

// ---- time -------------------------------------------------------------------

fn ampm(i: &str) -> Res<'_, bool> {
    alt((
        value(false, alt((tag_no_case("a.m."), kw("am")))),
        value(true, alt((tag_no_case("p.m."), kw("pm")))),
    ))
    .parse(i)
}

fn to24(h: u32, pm: Option<bool>) -> Option<u32> {
    match pm {
        None => (h < 24).then_some(h),
        Some(pm) if (1..=12).contains(&h) => Some(match (h, pm) {
            (12, false) => 0,
            (12, true) => 12,
            (h, true) => h + 12,
            (h, false) => h,
        }),
        Some(_) => None,
    }
}

fn time(i: &str) -> Res<'_, (MentionKind, String)> {
    let num = |s: &str| s.parse::<u32>().unwrap_or(99);
    let clock = map(
        verify(
            (
                digits_n(1, 2),
                char(':'),
                digits_n(2, 2),
                opt(preceded(space0, ampm)),
            ),
            |(h, _, m, pm): &(&str, char, &str, Option<bool>)| {
                num(m) < 60 && to24(num(h), *pm).is_some()
            },
        ),
        |(h, _, m, pm)| format!("{:02}:{:02}", to24(num(h), pm).unwrap_or(0), num(m)),
    );
    let hour = map(
        verify(
            (digits_n(1, 2), space0, ampm),
            |(h, _, pm): &(&str, &str, bool)| to24(num(h), Some(*pm)).is_some(),
        ),
        |(h, _, pm)| format!("{:02}:00", to24(num(h), Some(pm)).unwrap_or(0)),
    );
    map(
        alt((
            clock,
            hour,
            value("12:00".to_string(), alt((kw("noon"), kw("midday")))),
            value("00:00".to_string(), kw("midnight")),
        )),
        |v| (MentionKind::Time, v),
    )
    .parse(i)
}

// ---- date -------------------------------------------------------------------

const MONTHS: &[(&str, u32)] = &[
    ("january", 1),
    ("february", 2),
    ("march", 3),
    ("april", 4),
    ("may", 5),
    ("june", 6),
    ("july", 7),
    ("august", 8),
    ("september", 9),
    ("october", 10),
    ("november", 11),
    ("december", 12),
    ("sept", 9),
    ("jan", 1),
    ("feb", 2),
    ("mar", 3),
    ("apr", 4),
    ("jun", 6),
    ("jul", 7),
    ("aug", 8),
    ("sep", 9),
    ("oct", 10),
    ("nov", 11),
    ("dec", 12),
];

/// A month name or abbreviation; the abbreviation's dot is consumed.
fn month(i: &str) -> Res<'_, u32> {
    let (rest, n) = lookup(i, MONTHS)?;
    Ok((rest.strip_prefix('.').unwrap_or(rest), n))
}

fn day(i: &str) -> Res<'_, u32> {
    map(
        verify(
            terminated(
                digits_n(1, 2),
                opt(alt((
                    tag_no_case("st"),
                    tag_no_case("nd"),
                    tag_no_case("rd"),
                    tag_no_case("th"),
                ))),
            ),
            |d: &str| (1..=31).contains(&d.parse::<u32>().unwrap_or(0)),
        ),
        |d: &str| d.parse::<u32>().unwrap_or(1),
    )
    .parse(i)
}

fn year(i: &str) -> Res<'_, u32> {
    map(terminated(digits_n(4, 4), end_word), |y: &str| {
        y.parse::<u32>().unwrap_or(0)
    })
    .parse(i)
}

fn ymd(y: Option<u32>, m: u32, d: u32) -> String {
    match y {
        Some(y) => format!("{y:04}-{m:02}-{d:02}"),
        None => format!("--{m:02}-{d:02}"),
    }
}

const WEEKDAYS: &[&str] = &[
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

fn weekday(i: &str) -> Res<'_, &str> {
    any_word(i, WEEKDAYS)
}

fn relative_date(i: &str) -> Res<'_, String> {
    let modifier = alt((
        tag_no_case("next"),
        tag_no_case("this"),
        tag_no_case("last"),
        tag_no_case("coming"),
    ));
    let period = alt((weekday, kw("weekend"), kw("week"), kw("month"), kw("year")));
    let norm = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    alt((
        map(recognize((modifier, space1, period)), norm),
        map(
            alt((
                kw("today"),
                kw("tomorrow"),
                kw("tonight"),
                kw("yesterday"),
                weekday,
            )),
            norm,
        ),
    ))
    .parse(i)
}

fn date(i: &str) -> Res<'_, (MentionKind, String)> {
    let iso = map(
        verify(
            (
                digits_n(4, 4),
                char('-'),
                digits_n(1, 2),
                char('-'),
                digits_n(1, 2),
            ),
            |(_, _, m, _, d): &(&str, char, &str, char, &str)| {
                (1..=12).contains(&m.parse::<u32>().unwrap_or(0))
                    && (1..=31).contains(&d.parse::<u32>().unwrap_or(0))
            },
        ),
        |(y, _, m, _, d)| {
            ymd(
                y.parse().ok(),
                m.parse().unwrap_or(1),
                d.parse().unwrap_or(1),
            )
        },
    );
    let us = map(
        verify(
            (digits_n(1, 2), char('/'), digits_n(1, 2), char('/'), year),
            |(m, _, d, _, _): &(&str, char, &str, char, u32)| {
                (1..=12).contains(&m.parse::<u32>().unwrap_or(0))
                    && (1..=31).contains(&d.parse::<u32>().unwrap_or(0))
            },
        ),
        |(m, _, d, _, y)| ymd(Some(y), m.parse().unwrap_or(1), d.parse().unwrap_or(1)),
    );
    let year_tail = |i| opt(preceded((opt(char(',')), space1), year)).parse(i);
    let month_day = map(
        (month, space0, day, end_word, year_tail),
        |(m, _, d, _, y)| ymd(y, m, d),
    );
    let day_month = map(
        (
            day,
            space1,
            opt(terminated(tag_no_case("of"), space1)),
            month,
            year_tail,
        ),
        |(d, _, _, m, y)| ymd(y, m, d),
    );
    let lone_month = map(
        verify(
            recognize(terminated(
                alt((
                    tag("January"),
                    tag("February"),
                    tag("March"),
                    tag("April"),
                    tag("June"),
                    tag("July"),
                    tag("August"),
                    tag("September"),
                    tag("October"),
                    tag("November"),
                    tag("December"),
                )),
                end_word,
            )),
            |_: &str| true,
        ),
        str::to_lowercase,
    );
    map(
        alt((iso, us, month_day, day_month, relative_date, lone_month)),
        |v| (MentionKind::Date, v),
    )
    .parse(i)
}

// ---- duration and quantity ------------------------------------------------------

const UNITS: &[(&str, &str)] = &[
    ("hours", "hour"),
    ("hour", "hour"),
    ("hrs", "hour"),
    ("hr", "hour"),
    ("h", "hour"),
    ("minutes", "minute"),
    ("minute", "minute"),
    ("mins", "minute"),
    ("min", "minute"),
    ("seconds", "second"),
    ("second", "second"),
    ("secs", "second"),
    ("sec", "second"),
    ("days", "day"),
    ("day", "day"),
    ("nights", "night"),
    ("night", "night"),
    ("weeks", "week"),
    ("week", "week"),
    ("months", "month"),
    ("month", "month"),
    ("years", "year"),
    ("year", "year"),
];

fn unit(i: &str) -> Res<'_, &'static str> {
    lookup(i, UNITS)
}

fn duration(i: &str) -> Res<'_, (MentionKind, String)> {
    let amount = alt((
        terminated(number, not(satisfy(|c: char| c == ':'))),
        map(number_word, |n| n.to_string()),
        map(tag_no_case("an"), |_| "1".to_string()),
    ));
    map(
        (amount, alt((space1, tag("-"), space0)), unit),
        |(n, _, u)| (MentionKind::Duration, format!("{n} {u}")),
    )
    .parse(i)
}

const PARTY_NOUNS: &[&str] = &[
    "people",
    "persons",
    "person",
    "guests",
    "guest",
    "adults",
    "adult",
    "pax",
    "travelers",
    "traveler",
    "travellers",
    "traveller",
    "passengers",
    "passenger",
    "diners",
];

fn party_noun(i: &str) -> Res<'_, &str> {
    any_word(i, PARTY_NOUNS)
}

/// After `for N`: not a time, a duration, money, a date or a decimal.
fn not_measure(i: &str) -> Res<'_, ()> {
    not(alt((
        map(preceded(space0, unit), |_| ()),
        map(preceded(space0, ampm), |_| ()),
        map(preceded(space0, currency_word), |_| ()),
        map(preceded(space0, iso_code), |_| ()),
        map(preceded(space0, month), |_| ()),
        map(
            (
                alt((char(':'), char('.'), char('/'), char('-'), char(','))),
                satisfy(|c: char| c.is_ascii_digit()),
            ),
            |_| (),
        ),
        map(preceded(space0, char('%')), |_| ()),
        map(preceded(space0, kw("percent")), |_| ()),
    )))
    .parse(i)
}

fn quantity(i: &str) -> Res<'_, (MentionKind, String)> {
    let for_n = map(
        (
            tag_no_case("for"),
            space1,
            count,
            end_word,
            peek(not_measure),
            opt(preceded(space1, party_noun)),
        ),
        |(_, _, n, _, _, _)| n,
    );
    let party_of = map(
        (
            tag_no_case("party"),
            space1,
            tag_no_case("of"),
            space1,
            count,
            end_word,
        ),
        |(_, _, _, _, n, _)| n,
    );
    let n_people = map((count, space1, party_noun), |(n, _, _)| n);
    map(
        verify(alt((party_of, for_n, n_people)), |n: &u32| *n > 0),
        |n| (MentionKind::Quantity, n.to_string()),
    )
    .parse(i)
}

// ---- email, url, phone, quoted -------------------------------------------------

fn email(i: &str) -> Res<'_, (MentionKind, String)> {
    let local_len = i
        .char_indices()
        .take_while(|(_, c)| c.is_ascii_alphanumeric() || "._%+-".contains(*c))
        .count();
    let fail = || nom::Err::Error(nom::error::Error::new(i, nom::error::ErrorKind::Verify));
    if local_len == 0 || i.as_bytes().get(local_len) != Some(&b'@') {
        return Err(fail());
    }
    let dom_start = local_len + 1;
    let dom = i.get(dom_start..).unwrap_or("");
    let mut dom_len = dom
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '.')
        .count();
    while dom_len > 0
        && dom
            .as_bytes()
            .get(dom_len - 1)
            .is_some_and(|b| *b == b'.' || *b == b'-')
    {
        dom_len -= 1;
    }
    let d = dom.get(..dom_len).unwrap_or("");
    let tld_ok = d
        .rsplit('.')
        .next()
        .is_some_and(|t| t.len() >= 2 && t.chars().all(|c| c.is_ascii_alphabetic()));
    if !d.contains('.') || !tld_ok || d.starts_with('.') || d.contains("..") {
        return Err(fail());
    }
    let end = dom_start + dom_len;
    let s = i.get(..end).unwrap_or("");
    Ok((
        i.get(end..).unwrap_or(""),
        (MentionKind::Email, s.to_lowercase()),
    ))
}

fn url(i: &str) -> Res<'_, (MentionKind, String)> {
    let (after, _) = alt((
        tag_no_case("https://"),
        tag_no_case("http://"),
        tag_no_case("www."),
    ))
    .parse(i)?;
    let body_len: usize = after
        .chars()
        .take_while(|c| !c.is_whitespace() && !"<>\"'`".contains(*c))
        .map(char::len_utf8)
        .sum();
    let mut end = i.len() - after.len() + body_len;
    while let Some(c) = i.get(..end).and_then(|s| s.chars().last()) {
        if ".,;:!?)]}".contains(c) {
            end -= c.len_utf8();
        } else {
            break;
        }
    }
    if end <= i.len() - after.len() {
        return Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::Verify,
        )));
    }
    let s = i.get(..end).unwrap_or("");
    Ok((
        i.get(end..).unwrap_or(""),
        (MentionKind::Url, s.to_string()),
    ))
}

fn phone(i: &str) -> Res<'_, (MentionKind, String)> {
    let sep = |i| alt((tag(" "), tag("-"), tag("."))).parse(i);
    let intl = recognize((
        char('+'),
        digits_n(1, 3),
        many0(preceded(
            opt(alt((sep, tag(" ("), tag("(")))),
            terminated(digits_n(1, 5), opt(char(')'))),
        )),
    ));
    let paren = recognize((
        char('('),
        digits_n(3, 3),
        char(')'),
        space0,
        digits_n(3, 3),
        sep,
        digits_n(4, 4),
    ));
    let plain = recognize((digits_n(3, 3), sep, digits_n(3, 3), sep, digits_n(4, 4)));
    let (rest, s) = verify(alt((intl, paren, plain)), |s: &str| {
        let n = s.chars().filter(char::is_ascii_digit).count();
        (7..=15).contains(&n)
    })
    .parse(i)?;
    let digits: String = s.chars().filter(char::is_ascii_digit).collect();
    let v = if s.starts_with('+') {
        format!("+{digits}")
    } else {
        digits
    };
    Ok((rest, (MentionKind::Phone, v)))
}

fn quoted(i: &str) -> Res<'_, (MentionKind, String)> {
    let fail = || nom::Err::Error(nom::error::Error::new(i, nom::error::ErrorKind::Verify));
    let mut cs = i.chars();
    let open = cs.next().ok_or_else(fail)?;
    let close: &[char] = match open {
        '"' => &['"'],
        '\'' => &['\''],
        '“' => &['”', '"'],
        '‘' => &['’', '\''],
        '«' => &['»'],
        _ => return Err(fail()),
    };
    let body = i.get(open.len_utf8()..).ok_or_else(fail)?;
    for (k, c) in body.char_indices() {
        if k > 300 || c == '\n' {
            break;
        }
        if close.contains(&c) {
            let after = body.get(k + c.len_utf8()..).unwrap_or("");
            if after.chars().next().is_some_and(char::is_alphanumeric) {
                continue;
            }
            let inner = body.get(..k).unwrap_or("");
            let trimmed = inner.trim();
            if trimmed.is_empty() || trimmed.len() != inner.len() {
                return Err(fail());
            }
            return Ok((after, (MentionKind::Quoted, inner.to_string())));
        }
    }
    Err(fail())
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
