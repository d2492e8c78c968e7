//! The constellation builder on descriptors and the bundled ontology.

use super::*;
use crate::extract::tests::fixture;
use crate::model::Param;
use crate::vocab::{ENT, TERM, VERB, slug};

fn desc(name: &str, description: &str) -> ToolDescriptor {
    ToolDescriptor {
        id: name.into(),
        name: name.into(),
        description: description.into(),
        ..Default::default()
    }
}

fn iris(l: &[Link]) -> Vec<&str> {
    l.iter().map(|l| &*l.iri).collect()
}

#[test]
fn iri_encoding() {
    assert_eq!(tool_iri("get_user"), format!("{}get_user", vocab::TOOL));
    assert_eq!(
        tool_iri("name#ab12cd34"),
        format!("{}name%23ab12cd34", vocab::TOOL)
    );
    assert_eq!(tool_iri("a b/é"), format!("{}a%20b%2F%C3%A9", vocab::TOOL));
    assert_eq!(slug("Chemical Engineering"), "chemical_engineering");
    assert_eq!(slug("  Café!! "), "caf%C3%A9");
}

#[test]
fn name_verb_and_entities() {
    let x = fixture();
    let c = build(
        &desc("MAKE_RESERVATION", "Reserve a table at a restaurant."),
        &x,
    );
    assert_eq!(iris(&c.verbs), [format!("{VERB}reserve")]);
    assert_eq!(*c.entities[0].iri, format!("{ENT}Reservation"));
    assert!((c.entities[0].weight - 1.0).abs() < 1e-6);
    assert!(iris(&c.entities).contains(&format!("{ENT}Restaurant").as_str()));
    assert!(
        c.entities
            .iter()
            .all(|l| l.provenance == Provenance::Extracted)
    );
    assert!(!c.read_only);
    assert!(c.new_terms.is_empty());

    let c = build(&desc("getWeather", "Get the weather for a location"), &x);
    assert!(c.read_only);
    assert_eq!(*c.entities[0].iri, format!("{ENT}Weather"));
}

#[test]
fn open_vocabulary_terms_are_shared() {
    let x = fixture();
    let a = build(&desc("create_invoice", "Create an invoice"), &x);
    let b = build(&desc("sendInvoiceReminder", "Send a reminder"), &x);
    let inv = format!("{TERM}invoice");
    assert!(
        iris(&a.entities).contains(&inv.as_str()),
        "{:?}",
        a.entities
    );
    assert!(
        iris(&b.entities).contains(&inv.as_str()),
        "{:?}",
        b.entities
    );
    assert_eq!(a.new_terms[0].label, "invoice");
    // `send` is not in the fixture ontology: minted from the common verb list
    assert_eq!(iris(&b.verbs), [format!("{VERB}send")]);
    assert_eq!(b.new_verbs[0].label, "send");
    assert!(!b.read_only);
}

#[test]
fn compound_terms_get_broader() {
    let x = fixture();
    let c = build(&desc("get_loyalty_profile", ""), &x);
    let t = c
        .new_terms
        .iter()
        .find(|t| t.label == "loyalty profile")
        .expect("compound");
    assert_eq!(t.broader, [format!("{ENT}Profile")]);
    assert!(c.new_terms.iter().any(|t| t.label == "loyalty"));
}

#[test]
fn domains_and_params() {
    let x = fixture();
    let mut d = desc("Movies_1_FindMovies", "Search for movies by genre");
    d.tags = vec!["Entertainment/Film".into()];
    d.params = vec![Param {
        name: "location".into(),
        description: "The city or area".into(),
        ..Default::default()
    }];
    d.depends_on = vec![crate::model::Dependency::on("x")];
    let c = build(&d, &x);
    assert_eq!(
        iris(&c.domains),
        [
            format!("{}entertainment", vocab::DOMAIN),
            format!("{}movies", vocab::DOMAIN),
            format!("{}film", vocab::DOMAIN),
        ]
    );
    assert_eq!(iris(&c.verbs), [format!("{VERB}search")]);
    assert_eq!(*c.entities[0].iri, format!("{ENT}Movie"));
    let place = c
        .entities
        .iter()
        .find(|l| *l.iri == format!("{ENT}Place"))
        .expect("param");
    assert!((place.weight - 0.4).abs() < 1e-6);
    assert!(c.read_only);
    assert_eq!(c.depends_on, [crate::model::Dependency::on("x")]);
    assert_eq!(c.iri, tool_iri("Movies_1_FindMovies"));

    let c = build(&desc("math.triangle_area_heron", "Compute the area"), &x);
    assert_eq!(iris(&c.domains), [format!("{}math", vocab::DOMAIN)]);
    assert!(c.entities.iter().any(|l| *l.iri == format!("{ENT}Area")));
}

#[test]
fn brands_link_their_class_and_domain() {
    let x = fixture();
    let c = build(
        &desc("southwest_book_flight", "Book a Southwest flight"),
        &x,
    );
    assert!(iris(&c.entities).contains(&format!("{ENT}Airline").as_str()));
    assert!(iris(&c.entities).contains(&format!("{ENT}Flight").as_str()));
    // the brand itself, below its class (a request naming Southwest prefers
    // this tool to another airline's twin; Airline stays what it acts on)
    let brand = format!("{}southwest", vocab::BRAND);
    let link = c
        .entities
        .iter()
        .find(|l| *l.iri == brand)
        .expect("brand link");
    assert!(link.weight <= 0.85 && link.weight >= 0.5, "{link:?}");
    assert!(iris(&c.domains).contains(&format!("{}southwest", vocab::DOMAIN).as_str()));
    assert_eq!(iris(&c.verbs), [format!("{VERB}book")]);
}

#[test]
fn a_tool_without_a_known_verb_gets_one_minted_and_a_warning() {
    let x = fixture();
    let c = build(
        &desc("TimePort", "Teleports you to a moment in history"),
        &x,
    );
    assert_eq!(iris(&c.verbs), [format!("{VERB}teleport")]);
    assert!(
        c.warnings[0].contains("verb:teleport from its description"),
        "{:?}",
        c.warnings
    );
    let c = build(&desc("ad4mat", "API to monetize outgoing traffic"), &x);
    assert_eq!(iris(&c.verbs), [format!("{VERB}monetize")]);
    let c = build(
        &desc(
            "CarYardBard",
            "AI-Powered Car Sales Ad Generator for Dealers",
        ),
        &x,
    );
    assert_eq!(iris(&c.verbs), [format!("{VERB}generate")]);
    let c = build(&desc("AppyPieAIAppBuilder", ""), &x);
    assert_eq!(iris(&c.verbs), [format!("{VERB}build")]);
    let c = build(&desc("grabObject", ""), &x);
    assert_eq!(iris(&c.verbs), [format!("{VERB}grab")]);
    assert!(c.warnings[0].contains("from its name"), "{:?}", c.warnings);
    let c = build(&desc("convertCurrency", "Convert money"), &x);
    assert!(c.warnings.is_empty());
    // a function word never becomes a verb
    let c = build(
        &desc(
            "word_sneak",
            "The AI has to sneak 3 secret words into your conversation.",
        ),
        &x,
    );
    assert_eq!(iris(&c.verbs), [format!("{VERB}sneak")]);
    let c = build(&desc("RoboAd", "Your AI powered Ad Assistant!"), &x);
    assert_eq!(iris(&c.verbs), [format!("{VERB}assist")]);
}

#[test]
fn description_fallbacks() {
    let x = fixture();
    let c = build(
        &desc("f", "Analyze the chemical evidence collected from a scene"),
        &x,
    );
    assert_eq!(iris(&c.verbs), [format!("{VERB}analyze")]);
    assert_eq!(iris(&c.entities), [format!("{TERM}evidence")]);
    let c = build(&desc("", ""), &x);
    assert!(c.verbs.is_empty() && c.entities.is_empty());
    let again = build(&desc("analyzeEvidence", "Analyze evidence"), &x);
    assert_eq!(
        again,
        build(&desc("analyzeEvidence", "Analyze evidence"), &x)
    );
}
