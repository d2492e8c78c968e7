//! Extractor and constellation builder over the real ontology (`ontology/*.ttl`)
//! and the Seal-Tools catalog.

use std::path::Path;

use toolgraph::constellation::build;
use toolgraph::extract::{Extractor, Lexicon};
use toolgraph::graph::{GraphStore, OxigraphStore};
use toolgraph::model::{LexEntry, MentionKind, Param, ToolDescriptor};
use toolgraph::vocab as iri;

use crate::common::{root, turtle_sources};

/// The lexicon of every `ontology/*.ttl`, read by the store's own
/// `queries/lexicon.rq` (the same entries the engine's extractor gets).
fn ontology_lexicon() -> Vec<LexEntry> {
    let store = OxigraphStore::memory().unwrap();
    let sources = turtle_sources(&["ontology"]);
    assert!(!sources.is_empty(), "no ontology files");
    store.load(&sources).unwrap();
    store.lexicon().unwrap()
}

fn extractor() -> Extractor {
    Extractor::new(Lexicon::new(ontology_lexicon()))
}

#[test]
fn acceptance_request_with_the_ontology() {
    let x = extractor();
    assert!(
        x.lexicon().len() >= 50,
        "the ontology lost its vocabulary: {} labels",
        x.lexicon().len()
    );
    let text = "Book me on Southwest flight 175 to Denver tomorrow at 8pm, under $300";
    let ms = x.extract(text);
    for m in &ms {
        assert_eq!(&text[m.start..m.end], m.surface);
    }
    let find = |k: MentionKind| {
        ms.iter()
            .find(|m| m.kind == k)
            .unwrap_or_else(|| panic!("no {k:?} in {ms:#?}"))
    };
    let verb = find(MentionKind::Verb);
    assert_eq!(verb.surface, "Book");
    assert!(verb.iris.iter().all(|r| r.iri.starts_with(iri::VERB)));
    let brand = find(MentionKind::Brand);
    assert_eq!(brand.surface, "Southwest");
    assert!(
        brand
            .iris
            .iter()
            .any(|r| r.iri == format!("{}Airline", iri::ENT)),
        "{brand:?}"
    );
    let f = find(MentionKind::FlightNumber);
    assert_eq!(
        (f.value.as_str(), f.iris[0].iri.as_str()),
        ("175", iri::ent::FLIGHT)
    );
    // Denver: a proper noun (Place), or a named instance when the ontology lists it.
    let denver = ms.iter().find(|m| m.surface == "Denver").expect("Denver");
    match denver.kind {
        MentionKind::ProperNoun => assert_eq!(denver.iris[0].iri, iri::ent::PLACE),
        MentionKind::Brand => assert!(denver.iris.len() >= 2, "{denver:?}"),
        k => panic!("Denver as {k:?}"),
    }
    assert_eq!(find(MentionKind::Date).value, "tomorrow");
    assert_eq!(find(MentionKind::Time).value, "20:00");
    assert_eq!(find(MentionKind::Money).value, "USD 300");

    let ms = x.extract("MAKE_RESERVATION");
    assert!(ms.iter().any(|m| m.kind == MentionKind::Verb), "{ms:?}");
    assert!(ms.iter().any(|m| m.kind == MentionKind::Entity), "{ms:?}");
    let ms = x.extract("convertCurrency");
    assert_eq!(
        ms.iter().map(|m| m.kind).collect::<Vec<_>>(),
        [MentionKind::Verb, MentionKind::Entity],
        "{ms:?}"
    );
}

#[test]
fn value_entities_are_in_the_ontology() {
    let x = extractor();
    for e in iri::ent::ALL {
        assert!(!x.lexicon().labels(e).is_empty(), "{e} has no label");
    }
}

/// A minimal reader of the Seal-Tools JSONL (`id`, `name`, `description`,
/// `parameters.properties`); the real importer lives elsewhere.
fn sealtools(path: &Path) -> Vec<ToolDescriptor> {
    let data = std::fs::read_to_string(path).unwrap();
    data.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let j: serde_json::Value = serde_json::from_str(l).unwrap();
            let s = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
            let params = j["parameters"]["properties"]
                .as_object()
                .map(|p| {
                    p.iter()
                        .map(|(k, v)| Param {
                            name: k.clone(),
                            description: s(&v["description"]).into(),
                            ..Default::default()
                        })
                        .collect()
                })
                .unwrap_or_default();
            ToolDescriptor {
                id: s(&j["id"]),
                name: s(&j["name"]),
                description: s(&j["description"]),
                params,
                ..Default::default()
            }
        })
        .collect()
}

#[test]
fn sealtools_tools_get_a_verb_and_an_entity() {
    let path = root().join("benches/datasets/sealtools/tools.jsonl");
    let x = extractor();
    let tools = sealtools(&path);
    assert!(tools.len() > 1000);
    let (mut both, mut ontology_verb, mut ontology_entity) = (0usize, 0usize, 0usize);
    for d in &tools {
        let c = build(d, &x);
        if !c.verbs.is_empty() && !c.entities.is_empty() {
            both += 1;
        }
        if c.verbs
            .iter()
            .any(|l| c.new_verbs.iter().all(|t| *t.iri != *l.iri))
        {
            ontology_verb += 1;
        }
        if c.entities.iter().any(|l| !l.iri.starts_with(iri::TERM)) {
            ontology_entity += 1;
        }
        assert_eq!(c.iri, toolgraph::vocab::tool_iri(&d.id));
    }
    let pct = |n: usize| 100.0 * n as f64 / tools.len() as f64;
    println!(
        "Seal-Tools: {} tools ({} ontology labels); verb + entity {:.1}%; ontology verb {:.1}%; ontology entity {:.1}%",
        tools.len(),
        x.lexicon().len(),
        pct(both),
        pct(ontology_verb),
        pct(ontology_entity),
    );
    assert!(
        pct(both) >= 95.0,
        "only {:.1}% have a verb and an entity",
        pct(both)
    );
}
