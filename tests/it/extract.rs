//! Extractor and constellation builder over the real ontology (`ontology/*.ttl`)
//! and the Seal-Tools catalog.

use std::path::{Path, PathBuf};

use oxigraph::io::RdfFormat;
use oxigraph::model::Term;
use oxigraph::sparql::{QueryResults, SparqlEvaluator};
use oxigraph::store::Store;
use toolgraph::{
    Extractor, LexEntry, Lexicon, MentionKind, Param, TermKind, ToolDescriptor,
    build_constellation as build, iri,
};

const LEXICON_RQ: &str = include_str!("../../queries/lexicon.rq");

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `ontology/*.ttl` in an in-memory store.
fn ontology_store() -> Store {
    let store = Store::new().unwrap();
    let mut files: Vec<_> = std::fs::read_dir(root().join("ontology"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ttl"))
        .collect();
    files.sort();
    for f in files {
        let file = std::fs::File::open(&f).unwrap();
        store
            .load_from_reader(RdfFormat::Turtle, file)
            .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
    }
    store
}

fn text(t: Option<&Term>) -> Option<String> {
    match t? {
        Term::NamedNode(n) => Some(n.as_str().to_string()),
        Term::Literal(l) => Some(l.value().to_string()),
        _ => None,
    }
}

/// `queries/lexicon.rq` over the union graph (same as the crate's loader).
fn lexicon_entries(store: &Store) -> Vec<LexEntry> {
    let mut q = SparqlEvaluator::new().parse_query(LEXICON_RQ).unwrap();
    q.dataset_mut().set_default_graph_as_union();
    let QueryResults::Solutions(rows) = q.on_store(store).execute().unwrap() else {
        panic!("not a SELECT");
    };
    rows.filter_map(|r| {
        let r = r.unwrap();
        let kind = match text(r.get("kind"))?.as_str() {
            "verb" => TermKind::Verb,
            "entity" => TermKind::Entity,
            _ => TermKind::Instance {
                class: text(r.get("class"))?,
            },
        };
        Some(LexEntry {
            iri: text(r.get("node"))?,
            label: text(r.get("label"))?,
            kind,
        })
    })
    .collect()
}

fn extractor() -> Extractor {
    Extractor::new(Lexicon::new(lexicon_entries(&ontology_store())))
}

#[test]
fn acceptance_request_with_the_ontology() {
    let x = extractor();
    if x.lexicon().len() < 50 {
        eprintln!(
            "ontology/ has no vocabulary yet ({} labels): acceptance checked by unit tests only",
            x.lexicon().len()
        );
        assert!(x.lexicon().labels(iri::ent::FLIGHT).is_empty());
        return;
    }
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
    if x.lexicon().len() < 50 {
        eprintln!("ontology/ has no vocabulary yet: skipping the coverage of vocab::ent");
        assert!(x.lexicon().labels(iri::ent::FLIGHT).is_empty());
        return;
    }
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
                            description: s(&v["description"]),
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
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/datasets/sealtools/tools.jsonl");
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
            .any(|l| c.new_verbs.iter().all(|t| t.iri != l.iri))
        {
            ontology_verb += 1;
        }
        if c.entities.iter().any(|l| !l.iri.starts_with(iri::TERM)) {
            ontology_entity += 1;
        }
        assert_eq!(c.iri, toolgraph::tool_iri(&d.id));
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
