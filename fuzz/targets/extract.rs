//! Arbitrary bytes (lossy UTF-8) through the extractor, also as a reader
//! who sees only some entries, and through the constellation builder: never
//! a panic; spans sorted, on char boundaries and equal to their surface; a
//! hidden entry never resolves.

use std::sync::OnceLock;
use toolgraph::constellation::build;
use toolgraph::extract::{Extractor, Lexicon};
use toolgraph::model::{LexEntry, TermKind, ToolDescriptor};
use toolgraph::vocab as iri;

fn extractor() -> &'static Extractor {
    static X: OnceLock<Extractor> = OnceLock::new();
    X.get_or_init(|| {
        let e = |label: &str, iri: String, kind: TermKind, minted: bool| LexEntry {
            label: label.into(),
            iri,
            kind,
            minted,
        };
        let v = |l: &str| format!("{}{l}", iri::VERB);
        let n = |l: &str| format!("{}{l}", iri::ENT);
        let t = |l: &str| format!("{}{l}", iri::TERM);
        Extractor::new(Lexicon::new([
            e("book", v("book"), TermKind::Verb, false),
            e("make a reservation", v("reserve"), TermKind::Verb, false),
            e("order", v("order"), TermKind::Verb, false),
            e("order", n("Order"), TermKind::Entity, false),
            e("flight", n("Flight"), TermKind::Entity, false),
            e("airline seat", n("AirlineSeat"), TermKind::Entity, false),
            e("seat", n("Seat"), TermKind::Entity, false),
            e("reservation", n("Reservation"), TermKind::Entity, false),
            e("currency", n("Currency"), TermKind::Entity, false),
            e("glorbix", t("glorbix"), TermKind::Entity, true),
            e("glorbix seat", t("glorbix_seat"), TermKind::Entity, true),
            e("polish", v("polish"), TermKind::Verb, true),
            e(
                "Southwest",
                format!("{}southwest", iri::BRAND),
                TermKind::Instance {
                    class: n("Airline"),
                },
                false,
            ),
            e(
                "PayPal",
                format!("{}paypal", iri::BRAND),
                TermKind::Instance {
                    class: n("PaymentProvider"),
                },
                false,
            ),
        ]))
        .with_max_len(4096)
    })
}

pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let x = extractor();
    let check = |ms: &[toolgraph::model::Mention]| {
        let mut last = 0;
        for m in ms {
            assert!(m.start >= last, "sorted");
            last = m.start;
            assert_eq!(text.get(m.start..m.end), Some(m.surface.as_str()));
        }
    };
    check(&x.extract(&text));
    let curated = |e: &LexEntry| !e.minted;
    let seen = x.extract_seeing(&text, &curated);
    check(&seen);
    for m in &seen {
        for r in &m.iris {
            assert!(
                !r.iri.starts_with(iri::TERM),
                "a hidden entry resolved: {m:?}"
            );
            assert_ne!(
                r.iri,
                format!("{}polish", iri::VERB),
                "a hidden verb resolved"
            );
        }
    }
    let name: String = text.chars().take(64).collect();
    let c = build(
        &ToolDescriptor {
            id: name.clone(),
            name,
            description: text.chars().take(512).collect(),
            ..Default::default()
        },
        x,
    );
    assert!(c.iri.is_ascii());
}
