//! Extraction throughput on ~1 KB of realistic request text, over the real
//! ontology's labels plus synthetic ones (about 5k labels in all).

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use toolgraph::extract::{Extractor, Lexicon};
use toolgraph::graph::{GraphStore, OxigraphStore, Source, SourceData};
use toolgraph::import::collect_files;
use toolgraph::model::{LexEntry, TermKind};
use toolgraph::vocab as iri;

const REQUEST: &str = "Book me on Southwest flight 175 to Denver tomorrow at 8pm, under $300. \
Then make a reservation at an Italian restaurant near Union Square for two at 7:30 pm on Friday, \
and email the confirmation to alice@example.com or text +1 415 555 0100. \
I also need a hotel room in New York for 2 nights from Dec 1 to Dec 3, 2026, budget 150 EUR per night; \
convert USD to EUR and show the total. Cancel my old booking UA 921 if it is still active, \
check the weather in San Francisco next Monday, and find movies playing near me tonight. \
Please order a pizza for 3 people, pay with PayPal, and remind me 45 min before pickup. \
Search 'cheap flights to Paris' on https://example.com/search?q=paris and list the airline seats \
available; get_user_profile then MAKE_RESERVATION using convertCurrency. Schedule a meeting with Bob \
at noon for 1 hour, and send the invoice to billing@acme.io before 2026-12-15.";

/// The labels of every `ontology/*.ttl`, as the engine's store reads them
/// (empty when the ontology does not load: the synthetic labels still run).
fn ontology_entries() -> Vec<LexEntry> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("ontology");
    let (Ok(store), Ok(files)) = (OxigraphStore::memory(), collect_files(&[dir])) else {
        return Vec::new();
    };
    let sources: Vec<Source> = files
        .into_iter()
        .filter_map(|p| {
            let turtle = std::fs::read_to_string(&p).ok()?;
            Some(Source {
                name: p.display().to_string(),
                data: SourceData::Turtle(turtle),
            })
        })
        .collect();
    match store.load(&sources) {
        Ok(_) => store.lexicon().unwrap_or_default(),
        Err(_) => Vec::new(),
    }
}

fn lexicon() -> Lexicon {
    let mut es = ontology_entries();
    let words = [
        "account",
        "order",
        "flight",
        "hotel",
        "room",
        "seat",
        "ticket",
        "invoice",
        "payment",
        "customer",
        "restaurant",
        "table",
        "movie",
        "weather",
        "meeting",
        "email",
        "message",
    ];
    let mods = ["", "new ", "premium ", "airline ", "group ", "business "];
    let verbs = [
        "book",
        "make a reservation",
        "cancel",
        "find",
        "search",
        "order",
        "check",
        "send",
    ];
    for v in verbs {
        es.push(LexEntry {
            label: v.into(),
            iri: format!("{}{}", iri::VERB, v.replace(' ', "-")),
            kind: TermKind::Verb,
            minted: false,
        });
    }
    for i in 0..5000usize {
        let w = words[i % words.len()];
        let m = mods[(i / words.len()) % mods.len()];
        es.push(LexEntry {
            label: format!("{m}{w} x{i}"),
            iri: format!("{}Synthetic{i}", iri::ENT),
            kind: TermKind::Entity,
            minted: false,
        });
    }
    for w in words {
        es.push(LexEntry {
            label: w.into(),
            iri: format!("{}{w}", iri::ENT),
            kind: TermKind::Entity,
            minted: false,
        });
    }
    es.push(LexEntry {
        label: "Southwest".into(),
        iri: format!("{}southwest", iri::BRAND),
        kind: TermKind::Instance {
            class: format!("{}Airline", iri::ENT),
        },
        minted: false,
    });
    Lexicon::new(es)
}

fn bench(c: &mut Criterion) {
    let x = Extractor::new(lexicon());
    let n = x.extract(REQUEST).len() as u64;
    eprintln!(
        "{} labels; {} bytes of request text -> {n} mentions",
        x.lexicon().len(),
        REQUEST.len()
    );
    let mut g = c.benchmark_group("extract");
    g.throughput(Throughput::Elements(n));
    g.bench_function("mentions_1kb", |b| b.iter(|| x.extract(black_box(REQUEST))));
    g.throughput(Throughput::Bytes(REQUEST.len() as u64));
    g.bench_function("bytes_1kb", |b| b.iter(|| x.extract(black_box(REQUEST))));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
