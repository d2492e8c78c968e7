//! Money amounts and currencies (`$1,200`, `300 euros`, `USD`).

use super::*;

// ---- money and currency -----------------------------------------------------

const ISO_CODES: &[&str] = &[
    "USD", "EUR", "GBP", "JPY", "CNY", "CAD", "AUD", "CHF", "INR", "MXN", "BRL", "KRW", "SEK",
    "NOK", "DKK", "NZD", "SGD", "HKD", "ZAR", "RUB", "PLN", "THB", "IDR", "HUF", "CZK", "ILS",
    "PHP", "MYR", "AED", "SAR", "TWD", "ARS", "CLP", "COP", "EGP", "NGN", "VND", "BTC", "ETH",
];

pub(super) fn iso_code(i: &str) -> Res<'_, String> {
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

pub(super) fn currency_word(i: &str) -> Res<'_, String> {
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

pub(super) fn money(i: &str) -> Res<'_, (MentionKind, String)> {
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

pub(super) fn currency(i: &str) -> Res<'_, (MentionKind, String)> {
    map(alt((iso_code, currency_word)), |c| {
        (MentionKind::Currency, c)
    })
    .parse(i)
}
