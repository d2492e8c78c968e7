//! Unit tests of the extractor over a hand-made fixture lexicon.

use super::*;
use crate::vocab::{BRAND, ENT, VERB};

fn e(label: &str, iri: String, kind: TermKind) -> LexEntry {
    LexEntry {
        label: label.into(),
        iri,
        kind,
        minted: false,
    }
}

/// A small lexicon shaped like the real ontology's.
pub(crate) fn fixture() -> Extractor {
    let v = |l: &str| format!("{VERB}{l}");
    let n = |l: &str| format!("{ENT}{l}");
    let mut es = vec![
        e("book", v("book"), TermKind::Verb),
        e("reserve", v("reserve"), TermKind::Verb),
        e("make a reservation", v("reserve"), TermKind::Verb),
        e("make", v("create"), TermKind::Verb),
        e("create", v("create"), TermKind::Verb),
        e("convert", v("convert"), TermKind::Verb),
        e("get", v("get"), TermKind::Verb),
        e("find", v("search"), TermKind::Verb),
        e("search", v("search"), TermKind::Verb),
        e("cancel", v("cancel"), TermKind::Verb),
        e("order", v("order"), TermKind::Verb),
        e("order", n("Order"), TermKind::Entity),
        e("flight", n("Flight"), TermKind::Entity),
        e("reservation", n("Reservation"), TermKind::Entity),
        e("booking", n("Reservation"), TermKind::Entity),
        e("seat", n("Seat"), TermKind::Entity),
        e("airline seat", n("AirlineSeat"), TermKind::Entity),
        e("currency", n("Currency"), TermKind::Entity),
        e("airline", n("Airline"), TermKind::Entity),
        e("table", n("Table"), TermKind::Entity),
        e("restaurant", n("Restaurant"), TermKind::Entity),
        e("movie", n("Movie"), TermKind::Entity),
        e("task", n("Task"), TermKind::Entity),
        e("user", n("User"), TermKind::Entity),
        e("profile", n("Profile"), TermKind::Entity),
        e("weather", n("Weather"), TermKind::Entity),
        e("area", n("Area"), TermKind::Entity),
        e("place", n("Place"), TermKind::Entity),
        e("location", n("Place"), TermKind::Entity),
        e(
            "Southwest",
            format!("{BRAND}southwest"),
            TermKind::Instance {
                class: n("Airline"),
            },
        ),
        e(
            "Southwest Airlines",
            format!("{BRAND}southwest"),
            TermKind::Instance {
                class: n("Airline"),
            },
        ),
        e(
            "Delta",
            format!("{BRAND}delta"),
            TermKind::Instance {
                class: n("Airline"),
            },
        ),
        e(
            "PayPal",
            format!("{BRAND}paypal"),
            TermKind::Instance {
                class: n("PaymentProvider"),
            },
        ),
    ];
    es.push(e("book", v("book"), TermKind::Verb)); // duplicate, dropped
    Extractor::new(Lexicon::new(es))
}

fn kinds(ms: &[Mention]) -> Vec<(MentionKind, &str, &str)> {
    ms.iter()
        .map(|m| (m.kind, m.surface.as_str(), m.value.as_str()))
        .collect()
}

fn check_spans(text: &str, ms: &[Mention]) {
    for m in ms {
        assert_eq!(&text[m.start..m.end], m.surface, "{m:?}");
    }
    assert!(ms.windows(2).all(|w| w[0].start <= w[1].start));
}

fn has_iri(m: &Mention, iri: &str) -> bool {
    m.iris.iter().any(|r| r.iri == iri)
}

#[test]
fn acceptance_request() {
    let x = fixture();
    let text = "Book me on Southwest flight 175 to Denver tomorrow at 8pm, under $300";
    let ms = x.extract(text);
    check_spans(text, &ms);
    let k = kinds(&ms);
    assert_eq!(
        k,
        [
            (MentionKind::Verb, "Book", "book"),
            (MentionKind::Brand, "Southwest", "southwest"),
            (MentionKind::FlightNumber, "flight 175", "175"),
            (MentionKind::ProperNoun, "Denver", "Denver"),
            (MentionKind::Date, "tomorrow", "tomorrow"),
            (MentionKind::Time, "8pm", "20:00"),
            (MentionKind::Money, "$300", "USD 300"),
        ]
    );
    assert!(has_iri(&ms[0], &format!("{VERB}book")));
    assert_eq!(ms[1].iris[0].iri, format!("{BRAND}southwest"));
    assert_eq!(ms[1].iris[1].iri, ent::FLIGHT.replace("Flight", "Airline"));
    assert!((ms[1].iris[1].weight - 0.9).abs() < 1e-6);
    assert!(has_iri(&ms[2], ent::FLIGHT));
    assert_eq!(ms[3].iris.len(), 1);
    assert!(has_iri(&ms[3], ent::PLACE));
}

#[test]
fn identifiers() {
    let x = fixture();
    let ms = x.extract("MAKE_RESERVATION");
    check_spans("MAKE_RESERVATION", &ms);
    assert_eq!(
        kinds(&ms),
        [
            (MentionKind::Verb, "MAKE_RESERVATION", "make reservation"),
            (MentionKind::Entity, "RESERVATION", "reservation"),
        ]
    );
    assert!(has_iri(&ms[0], &format!("{VERB}reserve")));
    assert!(has_iri(&ms[1], &format!("{ENT}Reservation")));

    let ms = x.extract("convertCurrency");
    assert_eq!(
        kinds(&ms),
        [
            (MentionKind::Verb, "convert", "convert"),
            (MentionKind::Entity, "Currency", "currency"),
        ]
    );
    for (id, verb, entity) in [
        ("task_create", "create", "Task"),
        ("get-user-profile", "get", "Profile"),
        ("Movies_1_FindMovies", "search", "Movie"),
    ] {
        let ms = x.extract(id);
        check_spans(id, &ms);
        assert!(
            ms.iter()
                .any(|m| m.kind == MentionKind::Verb && has_iri(m, &format!("{VERB}{verb}"))),
            "{id}: {ms:?}"
        );
        assert!(
            ms.iter()
                .any(|m| m.kind == MentionKind::Entity && has_iri(m, &format!("{ENT}{entity}"))),
            "{id}: {ms:?}"
        );
        assert!(
            ms.iter().all(|m| m.kind != MentionKind::ProperNoun),
            "{id}: {ms:?}"
        );
    }
}

#[test]
fn longest_match_and_plurals() {
    let x = fixture();
    let ms = x.extract("show airline seats and seats");
    assert_eq!(
        kinds(&ms),
        [
            (MentionKind::Entity, "airline seats", "airline seat"),
            (MentionKind::Entity, "seats", "seat"),
        ]
    );
    assert!((ms[0].iris[0].weight - 0.9).abs() < 1e-6, "inflected match");
    let ms = x.extract("I want to make a reservation for two");
    assert_eq!(ms[0].kind, MentionKind::Verb);
    assert_eq!(ms[0].surface, "make a reservation");
    assert_eq!(ms[1].kind, MentionKind::Entity);
    assert_eq!(ms[2].kind, MentionKind::Quantity);
    assert_eq!(ms[2].value, "2");
}

#[test]
fn verb_entity_ambiguity() {
    let x = fixture();
    let ms = x.extract("Order a pizza");
    assert_eq!(ms[0].kind, MentionKind::Verb);
    let ms = x.extract("cancel my order");
    assert_eq!(kinds(&ms)[1], (MentionKind::Entity, "order", "order"));
    assert!(has_iri(&ms[1], &format!("{ENT}Order")));
    // exact word form beats the lemma: "booking" is the entity label
    let ms = x.extract("cancel the booking");
    assert_eq!(ms[1].kind, MentionKind::Entity);
    assert!(has_iri(&ms[1], &format!("{ENT}Reservation")));
}

#[test]
fn brands_need_capitals_in_text() {
    let x = fixture();
    let ms = x.extract("fly Delta to Paris");
    assert_eq!(ms[0].kind, MentionKind::Brand);
    assert_eq!(ms[1].kind, MentionKind::ProperNoun);
    assert_eq!(ms[1].iris.len(), 1);
    let ms = x.extract("the delta of two values");
    assert!(ms.iter().all(|m| m.kind != MentionKind::Brand), "{ms:?}");
    let ms = x.extract("pay with PayPal or Southwest Airlines");
    let b: Vec<_> = ms
        .iter()
        .filter(|m| m.kind == MentionKind::Brand)
        .map(|m| m.surface.as_str())
        .collect();
    assert_eq!(b, ["PayPal", "Southwest Airlines"]);
}

#[test]
fn proper_nouns() {
    let x = fixture();
    let ms = x.extract("Flights from New York to San Francisco with Alice. Denver is nice");
    let p: Vec<_> = ms
        .iter()
        .filter(|m| m.kind == MentionKind::ProperNoun)
        .map(|m| (m.surface.as_str(), m.iris.len(), m.iris[0].iri.as_str()))
        .collect();
    assert_eq!(
        p,
        [
            ("New York", 1, ent::PLACE),
            ("San Francisco", 1, ent::PLACE),
            ("Alice", 1, ent::PERSON),
            ("Denver", 2, ent::PLACE),
        ]
    );
    // sentence-initial common words are not names
    let ms = x.extract("Please find. Could you? Where");
    assert!(
        ms.iter().all(|m| m.kind != MentionKind::ProperNoun),
        "{ms:?}"
    );
}

#[test]
fn truncation_and_edge_cases() {
    let x = fixture().with_max_len(5);
    let ms = x.extract("flighté flight");
    assert!(ms.iter().all(|m| m.end <= 5));
    let x = fixture();
    assert!(x.extract("").is_empty());
    assert!(x.extract("   ,,, ...").is_empty());
    let text = "é€$ 'x' «y» \"\" '' __a__ a.b.c 1,2,3 ::: +1 (";
    check_spans(text, &x.extract(text));
    assert_eq!(x.lexicon().len(), 33);
    assert!(!x.lexicon().is_empty());
    assert_eq!(
        x.lexicon().labels(&format!("{VERB}reserve")),
        ["reserve", "make a reservation"]
    );
    assert!(x.lexicon().labels("nope").is_empty());
}

#[test]
fn values_mask_terms() {
    let x = fixture();
    let text = "email bob@flight.com about flight 12";
    let ms = x.extract(text);
    check_spans(text, &ms);
    assert_eq!(
        ms.iter().map(|m| m.kind).collect::<Vec<_>>(),
        [MentionKind::Email, MentionKind::FlightNumber]
    );
}

mod props {
    use super::*;
    use proptest::prelude::*;
    use std::sync::OnceLock;

    fn x() -> &'static Extractor {
        static X: OnceLock<Extractor> = OnceLock::new();
        X.get_or_init(fixture)
    }

    fn invariants(text: &str) {
        let ms = x().extract(text);
        for m in &ms {
            assert!(text.is_char_boundary(m.start) && text.is_char_boundary(m.end));
            assert!(m.start < m.end, "{m:?}");
            assert_eq!(text.get(m.start..m.end), Some(m.surface.as_str()));
            assert!(m.iris.iter().all(|r| r.weight > 0.0 && r.weight <= 1.0));
        }
        assert!(ms.windows(2).all(|w| w[0].start <= w[1].start));
        assert_eq!(ms, x().extract(text), "idempotent");
    }

    /// Words and symbols that exercise every grammar branch.
    fn piece() -> impl Strategy<Value = String> {
        prop_oneof![
            prop::sample::select(vec![
                "Book",
                "flight",
                "175",
                "$",
                "300",
                "8pm",
                "8:30",
                "pm",
                "tomorrow",
                "next",
                "Monday",
                "Southwest",
                "Airlines",
                "'",
                "\"",
                "“",
                "”",
                "_",
                "-",
                ".",
                ",",
                "é",
                "€",
                "£5.50",
                "for",
                "two",
                "party",
                "of",
                "UA",
                "WN175",
                "@",
                "x.com",
                "https://",
                "www.",
                "+1",
                "(415)",
                "555-0100",
                "MAKE_RESERVATION",
                "convertCurrency",
                "Dec",
                "1st",
                "2026-12-01",
                "USD",
                "to",
                "EUR",
                "hours",
                "New",
                "York",
                "a",
                "the",
                "make",
                "reservation",
                "PayPal",
                "\n",
                "İ",
                "ß",
            ])
            .prop_map(str::to_string),
            "\\PC{0,6}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn arbitrary_unicode_never_panics(s in "\\PC{0,200}") {
            invariants(&s);
        }

        #[test]
        fn grammar_soup(parts in prop::collection::vec((piece(), prop::sample::select(vec!["", " ", "  ", ", "])), 0..30)) {
            let s: String = parts.into_iter().map(|(p, sep)| format!("{p}{sep}")).collect();
            invariants(&s);
        }

        #[test]
        fn truncation_respects_boundaries(s in "\\PC{0,50}", n in 0usize..60) {
            let x = fixture().with_max_len(n);
            for m in x.extract(&s) {
                prop_assert!(m.end <= n);
                prop_assert_eq!(s.get(m.start..m.end), Some(m.surface.as_str()));
            }
        }

        #[test]
        fn money_round_trips(n in 0u32..1_000_000, cents in prop::option::of(0u32..100), sym in 0usize..4) {
            let amount = match cents { Some(c) => format!("{n}.{c:02}"), None => n.to_string() };
            let (text, code) = match sym {
                0 => (format!("under ${amount} please"), "USD"),
                1 => (format!("pay €{amount}"), "EUR"),
                2 => (format!("{amount} GBP max"), "GBP"),
                _ => (format!("about {amount} euros"), "EUR"),
            };
            let ms = x().extract(&text);
            let money: Vec<_> = ms.iter().filter(|m| m.kind == MentionKind::Money).collect();
            prop_assert_eq!(money.len(), 1, "{}", text);
            prop_assert_eq!(&money[0].value, &format!("{code} {amount}"));
        }

        #[test]
        fn time_round_trips(h in 0u32..24, m in 0u32..60, style in 0usize..3) {
            let (text, want) = match style {
                0 => (format!("at {h}:{m:02}"), format!("{h:02}:{m:02}")),
                1 => {
                    let (h12, ap) = match h { 0 => (12, "am"), 1..=11 => (h, "am"), 12 => (12, "pm"), _ => (h - 12, "pm") };
                    (format!("at {h12}:{m:02} {ap}"), format!("{h:02}:{m:02}"))
                }
                _ => {
                    let (h12, ap) = match h { 0 => (12, "AM"), 1..=11 => (h, "AM"), 12 => (12, "PM"), _ => (h - 12, "PM") };
                    (format!("at {h12}{ap}!"), format!("{h:02}:00"))
                }
            };
            let ms = x().extract(&text);
            prop_assert_eq!(ms.len(), 1, "{}", text);
            prop_assert_eq!(ms[0].kind, MentionKind::Time);
            prop_assert_eq!(&ms[0].value, &want);
        }

        #[test]
        fn iso_dates_round_trip(y in 1900u32..2100, m in 1u32..13, d in 1u32..29) {
            let iso = format!("{y}-{m:02}-{d:02}");
            let ms = x().extract(&format!("on {iso}."));
            prop_assert_eq!(ms.len(), 1);
            prop_assert_eq!(ms[0].kind, MentionKind::Date);
            prop_assert_eq!(&ms[0].value, &iso);
        }
    }
}
