//! The oxigraph store: loading, transactions, validation, every query.

use crate::common::{root, seeded_store, source, turtle_sources};
use toolgraph::Error;
use toolgraph::graph::{
    GraphStore, OxigraphStore, Relation, Source, SourceData, Sparql, SparqlOutput,
};

// Loading the bundled ontology and seeds, validating clean, full
// constellations, the lexicon and the ontology facts: contract cases in `bolt.rs`
// (`loads_the_seeds_and_reads_back_full_constellations`,
// `lexicon_and_ontology_facts`) run on this store and the Bolt store.

#[test]
fn candidates_query_binds_values_and_finds_paths_with_negative_evidence() {
    let store = seeded_store();
    let southwest = format!("{}Southwest", toolgraph::vocab::BRAND);
    let restaurant = format!("{}Restaurant", toolgraph::vocab::ENT);
    let reserve = format!("{}reserve", toolgraph::vocab::VERB);
    let hits = store
        .candidates(&[southwest.clone(), restaurant.clone(), reserve.clone()])
        .unwrap();
    let airline_tool = format!("{}airline_seat_reserve", toolgraph::vocab::TOOL);
    let table_tool = format!("{}restaurant_table_reserve", toolgraph::vocab::TOOL);
    // brand -> instanceOf Airline <- actsOn
    assert!(hits.iter().any(|h| h.tool == airline_tool
        && h.node == southwest
        && h.relation == Relation::ActsOnBroader
        && h.via.ends_with("/entity/Airline")));
    // verb
    assert!(
        hits.iter()
            .any(|h| h.tool == table_tool && h.node == reserve && h.relation == Relation::Verb)
    );
    // Restaurant requested: the airline tool acts on a sibling (Airline) -> negative evidence
    assert!(hits.iter().any(|h| h.tool == airline_tool
        && h.node == restaurant
        && h.relation == Relation::Sibling));
    assert!(
        !hits.iter().any(|h| h.tool == table_tool
            && h.node == restaurant
            && h.relation == Relation::Sibling)
    );
    // nothing bound, nothing found
    assert!(store.candidates(&[]).unwrap().is_empty());
    // a value that is not an IRI is an error, not a query injection
    assert!(store.candidates(&["> } DROP ALL #".to_string()]).is_err());
}

// A tool's constellation as statements: the contract case
// `constellation_is_the_tools_statements` in `bolt.rs`.

#[test]
fn every_validation_rule_fires_on_its_fixture() {
    let store = OxigraphStore::memory().unwrap();
    store
        .load_unchecked(&[source(&root().join("tests/fixtures/violations.ttl"))])
        .unwrap();
    let violations = store.validate().unwrap();
    let expect = [
        ("tool_without_verb", "/tool/no_verb"),
        ("tool_without_name", "/tool/no_name"),
        ("tool_without_description", "/tool/no_description"),
        ("undefined_verb", "/tool/bad_verb"),
        ("undefined_entity", "/tool/bad_entity"),
        ("undefined_dependency", "/tool/bad_dependency"),
        ("dependency_cycle", "/tool/cycle_a"),
        ("duplicate_tool_name", "/tool/dup_one"),
        ("label_missing", "/entity/NoLabel"),
        ("broader_cycle", "/entity/LoopA"),
        ("instance_without_class", "/brand/Orphan"),
        ("undefined_profile_tool", "/profile/fixture"),
        ("undefined_policy_tool", "/org/fixture_org"),
        ("undefined_policy_reference", "/org/fixture_org"),
        ("agent_policy", "/agent/no_org"),
    ];
    for (rule, subject) in expect {
        assert!(
            violations
                .iter()
                .any(|v| v.rule == rule && v.subject.ends_with(subject) && !v.message.is_empty()),
            "rule {rule} did not report {subject}: {violations:#?}"
        );
    }
    // and no rule fires on something that is fine
    assert!(
        !violations
            .iter()
            .any(|v| v.subject.ends_with("/tool/bad_entity") && v.rule == "tool_without_verb")
    );
    // a brand: acted on, fine; a primary entity, not; a parameter's
    // undefined entity is reported on the tool, naming the parameter
    let entity = |subject: &str| -> Vec<&str> {
        violations
            .iter()
            .filter(|v| v.rule == "undefined_entity" && v.subject.ends_with(subject))
            .map(|v| v.message.as_str())
            .collect()
    };
    assert!(entity("/tool/brand_acts").is_empty(), "{violations:#?}");
    assert!(
        entity("/tool/brand_primary")
            .iter()
            .any(|m| m.contains("tg:primaryEntity") && m.contains("/brand/Orphan")),
        "{violations:#?}"
    );
    assert!(
        entity("/tool/bad_param")
            .iter()
            .any(|m| m.contains("(parameter beast)") && m.contains("tg:paramEntity")),
        "{violations:#?}"
    );
    assert!(
        !violations
            .iter()
            .any(|v| v.rule == "duplicate_tool_name" && v.message.contains("\"brand_acts\"")),
        "{violations:#?}"
    );
    let agent: Vec<&str> = violations
        .iter()
        .filter(|v| v.rule == "agent_policy")
        .map(|v| v.message.as_str())
        .collect();
    assert!(
        agent.iter().any(|m| m.contains("no tg:memberOf")),
        "{agent:?}"
    );
    assert!(agent.iter().any(|m| m.contains("reckless")), "{agent:?}");
}

fn answers(store: &OxigraphStore) -> Vec<String> {
    let reserve = format!("{}reserve", toolgraph::vocab::VERB);
    let mut tools: Vec<String> = store
        .candidates(&[reserve])
        .unwrap()
        .into_iter()
        .map(|h| h.tool)
        .collect();
    tools.sort();
    tools.dedup();
    tools
}

#[test]
fn a_turtle_syntax_error_names_file_line_col_and_changes_nothing() {
    let store = seeded_store();
    let before = (store.len().unwrap(), answers(&store));
    let broken = Source {
        name: "seeds/broken.ttl".into(),
        data: SourceData::Turtle("@prefix tg: <https://toolgraph.dev/ns#> .\n\n<urn:x> tg:name \"ok\" .\n<urn:y> tg:name \"unterminated .\n".into()),
    };
    let mut sources = turtle_sources(&["seeds"]);
    sources.push(broken);
    let err = store.load(&sources).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, Error::Parse { .. }), "{msg}");
    assert!(msg.starts_with("seeds/broken.ttl:4:"), "{msg}");
    assert_eq!((store.len().unwrap(), answers(&store)), before);
}

// A tool without a verb refused, and reloading a source replacing it: the
// contract suite in `bolt.rs` runs those on this store and on the Bolt store.

#[test]
fn sparql_is_read_only_and_reports_errors() {
    let store = seeded_store();
    let err = store.query("DELETE WHERE { ?s ?p ?o }").unwrap_err();
    assert!(err.to_string().contains("refused"), "{err}");
    let err = store
        .query("INSERT DATA { <urn:a> <urn:b> <urn:c> }")
        .unwrap_err();
    assert!(err.to_string().contains("refused"), "{err}");
    assert!(store.query("SELECT * WHERE {").is_err());
    match store
        .query("SELECT (COUNT(?t) AS ?n) WHERE { ?t a <https://toolgraph.dev/ns#Tool> }")
        .unwrap()
    {
        SparqlOutput::Solutions { vars, rows } => {
            assert_eq!(vars, vec!["n".to_string()]);
            assert_eq!(rows.len(), 1);
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        store.query("ASK { ?s ?p ?o }").unwrap(),
        SparqlOutput::Boolean(true)
    ));
}

#[test]
fn data_persists_on_disk_across_store_instances() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = OxigraphStore::open(dir.path()).unwrap();
        store.load(&turtle_sources(&["ontology", "seeds"])).unwrap();
    }
    let reopened = OxigraphStore::open(dir.path()).unwrap();
    assert!(reopened.tools().unwrap().len() >= 150);
}
