//! Arbitrary bytes (lossy UTF-8) through the extractor and the constellation
//! builder: never panic, spans on char boundaries and equal to the surface.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use toolgraph::constellation::build;
use toolgraph::extract::{Extractor, Lexicon};
use toolgraph::model::{LexEntry, TermKind, ToolDescriptor};
use toolgraph::vocab as iri;

fn extractor() -> &'static Extractor {
    static X: OnceLock<Extractor> = OnceLock::new();
    X.get_or_init(|| {
        let e = |label: &str, iri: String, kind: TermKind| LexEntry {
            label: label.into(),
            iri,
            kind,
        };
        let v = |l: &str| format!("{}{l}", iri::VERB);
        let n = |l: &str| format!("{}{l}", iri::ENT);
        Extractor::new(Lexicon::new([
            e("book", v("book"), TermKind::Verb),
            e("make a reservation", v("reserve"), TermKind::Verb),
            e("order", v("order"), TermKind::Verb),
            e("order", n("Order"), TermKind::Entity),
            e("flight", n("Flight"), TermKind::Entity),
            e("airline seat", n("AirlineSeat"), TermKind::Entity),
            e("seat", n("Seat"), TermKind::Entity),
            e("reservation", n("Reservation"), TermKind::Entity),
            e("currency", n("Currency"), TermKind::Entity),
            e(
                "Southwest",
                format!("{}southwest", iri::BRAND),
                TermKind::Instance {
                    class: n("Airline"),
                },
            ),
            e(
                "PayPal",
                format!("{}paypal", iri::BRAND),
                TermKind::Instance {
                    class: n("PaymentProvider"),
                },
            ),
        ]))
        .with_max_len(4096)
    })
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let x = extractor();
    let ms = x.extract(&text);
    let mut last = 0;
    for m in &ms {
        assert!(m.start >= last, "sorted");
        last = m.start;
        assert_eq!(text.get(m.start..m.end), Some(m.surface.as_str()));
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
});
