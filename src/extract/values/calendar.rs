//! Times, dates, durations and party sizes (`8pm`, `next monday`,
//! `2 nights`, `party of four`).

use super::*;

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

pub(super) fn time(i: &str) -> Res<'_, (MentionKind, String)> {
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

pub(super) fn date(i: &str) -> Res<'_, (MentionKind, String)> {
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

pub(super) fn duration(i: &str) -> Res<'_, (MentionKind, String)> {
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

pub(super) fn quantity(i: &str) -> Res<'_, (MentionKind, String)> {
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
