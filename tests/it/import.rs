//! Importers: fixtures, the benchmark datasets, error locations, no panics.

use proptest::prelude::*;
use std::path::Path;
use toolgraph::Error;
use toolgraph::import::{Format, detect_format, parse_manifest};
use toolgraph::model::ToolDescriptor;

fn fixture(rel: &str) -> (String, String) {
    let path = format!("{}/tests/fixtures/{rel}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    (rel.to_string(), text)
}

fn load(rel: &str) -> Vec<ToolDescriptor> {
    let (name, text) = fixture(rel);
    let format = detect_format(Path::new(&name), &text).unwrap();
    parse_manifest(&name, &text, format).unwrap()
}

fn load_err(rel: &str) -> Error {
    let (name, text) = fixture(rel);
    let format = detect_format(Path::new(&name), &text).unwrap();
    parse_manifest(&name, &text, format).unwrap_err()
}

fn tool<'a>(tools: &'a [ToolDescriptor], id: &str) -> &'a ToolDescriptor {
    tools.iter().find(|t| t.id == id).unwrap()
}

#[test]
fn travel_openapi_yaml() {
    let (name, text) = fixture("openapi/travel.yaml");
    assert_eq!(
        detect_format(Path::new(&name), &text),
        Some(Format::OpenApi)
    );
    let tools = load("openapi/travel.yaml");
    assert_eq!(tools.len(), 28);

    let search = tool(&tools, "searchFlights");
    assert_eq!(search.read_only, Some(true));
    assert_eq!(search.tags, ["flights", "Voyager Travel API"]);
    assert_eq!(
        search.description,
        "Search flights. Find scheduled flights between two airports on a given date."
    );
    let origin = search.params.iter().find(|p| p.name == "origin").unwrap();
    assert!(origin.required);
    // `schema: {$ref: AirportCode}` resolved to its type.
    assert_eq!(origin.ty.as_deref(), Some("string"));
    // `$ref: '#/components/parameters/Passengers'`.
    let pax = search
        .params
        .iter()
        .find(|p| p.name == "passengers")
        .unwrap();
    assert_eq!(pax.ty.as_deref(), Some("integer"));
    assert_eq!(&*pax.description, "Number of travelers.");
    assert!(!pax.required);

    // Path-level parameter ref + requestBody ref to a schema.
    let seat = tool(&tools, "reserveSeat");
    let names: Vec<&str> = seat.params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        ["flightId", "seatNumber", "bookingId", "passengerIndex"]
    );
    assert!(seat.params.iter().all(|p| p.required));
    assert_eq!(seat.read_only, Some(false));
    assert_eq!(
        seat.source,
        "openapi/travel.yaml#/paths/~1flights~1{flightId}~1seats~1{seatNumber}~1reservation/post"
    );

    // requestBody $ref -> components/requestBodies -> components/schemas.
    let book = tool(&tools, "bookFlight");
    let passengers = book.params.iter().find(|p| p.name == "passengers").unwrap();
    assert_eq!(passengers.ty.as_deref(), Some("array"));
    assert!(passengers.required);

    // allOf with a $ref member.
    let rent = tool(&tools, "rentCar");
    for p in ["carId", "driver", "extras", "pickupAt", "dropoffAt"] {
        assert!(rent.params.iter().any(|q| q.name == p), "rentCar lacks {p}");
    }

    let cancel = tool(&tools, "cancelFlightBooking");
    assert_eq!(cancel.destructive, Some(true));
    assert_eq!(cancel.read_only, Some(false));

    // No operationId: slug of method + path. Cookie parameters dropped.
    let pdf = tool(&tools, "get_invoices_invoiceId_pdf");
    assert_eq!(pdf.name, "get_invoices_invoiceId_pdf");
    let invoices = tool(&tools, "listInvoices");
    assert!(invoices.params.iter().all(|p| p.name != "session"));

    // Header parameter from a shared component.
    let pay = tool(&tools, "createPayment");
    assert!(pay.params.iter().any(|p| p.name == "Idempotency-Key"));
    let money = pay.params.iter().find(|p| p.name == "amount").unwrap();
    assert_eq!(money.ty.as_deref(), Some("object"));
}

#[test]
fn crm_openapi_31_json() {
    let tools = load("openapi/crm.json");
    assert_eq!(tools.len(), 10);
    let update = tool(&tools, "updateContact");
    // application/merge-patch+json is taken as JSON; path-level param kept.
    let names: Vec<&str> = update.params.iter().map(|p| p.name.as_str()).collect();
    assert!(
        names.contains(&"contactId") && names.contains(&"email"),
        "{names:?}"
    );
    let email = tool(&tools, "sendEmail");
    let body = email.params.iter().find(|p| p.name == "body").unwrap();
    assert_eq!(body.ty.as_deref(), Some("string"));
    assert_eq!(email.integrations, ["resend"]);
    assert_eq!(
        email.depends_on,
        [toolgraph::model::Dependency::on("getContact")]
    );
    let stage = tool(&tools, "listDeals");
    let p = stage.params.iter().find(|p| p.name == "stage").unwrap();
    assert_eq!(p.ty.as_deref(), Some("string"));
    assert_eq!(tool(&tools, "deleteContact").destructive, Some(true));
    assert!(
        tools
            .iter()
            .all(|t| t.tags.contains(&"Acme CRM".to_string()))
    );
}

#[test]
fn mcp_tools_list() {
    let tools = load("mcp/tools_list.json");
    assert_eq!(tools.len(), 12);
    let search = tool(&tools, "search_flights");
    assert_eq!(search.read_only, Some(true));
    assert_eq!(search.params.len(), 4);
    assert_eq!(search.source, "mcp/tools_list.json#/result/tools/0");
    let cancel = tool(&tools, "cancel_booking");
    assert_eq!(cancel.destructive, Some(true));
    assert_eq!(cancel.read_only, Some(false));
    let status = tool(&tools, "flight_status");
    assert_eq!(status.title.as_deref(), Some("Flight status"));
    let refund = tool(&tools, "refund_payment");
    assert_eq!(refund.integrations, ["stripe"]);
    assert_eq!(
        refund.depends_on,
        [toolgraph::model::Dependency::on("charge_card")]
    );
    assert_eq!(refund.tags, ["payments"]);
    assert_eq!(
        tools.iter().filter(|t| t.read_only == Some(true)).count(),
        5
    );
}

fn dataset(name: &str) -> Vec<ToolDescriptor> {
    let path = format!(
        "{}/benches/datasets/{name}/tools.jsonl",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(detect_format(Path::new(&path), &text), Some(Format::Jsonl));
    parse_manifest(&path, &text, Format::Jsonl).unwrap()
}

#[test]
fn datasets_parse_fully() {
    let meta = dataset("metatool");
    assert_eq!(meta.len(), 199);
    assert!(
        meta.iter()
            .all(|t| t.params.is_empty() && !t.description.is_empty())
    );
    let timeport = tool(&meta, "timeport");
    assert_eq!(timeport.title.as_deref(), Some("Timeport"));
    assert!(
        timeport
            .model_description
            .starts_with("An entertaining and educational time-travel game"),
        "{}",
        timeport.model_description
    );

    let seal = dataset("sealtools");
    assert_eq!(seal.len(), 4076);
    let ev = tool(&seal, "analyzeEvidence");
    assert_eq!(ev.tags, ["Chemical Engineering", "Forensic engineering"]);
    assert_eq!(ev.params.len(), 3);
    assert!(
        ev.params
            .iter()
            .all(|p| p.required && p.ty.as_deref() == Some("str"))
    );

    let bfcl = dataset("bfcl_multiple");
    assert_eq!(bfcl.len(), 1870);
    let tri = tool(&bfcl, "triangle_properties.get#f13488e4");
    assert_eq!(tri.name, "triangle_properties.get");
    assert_eq!(tri.params.len(), 6);
    let required: Vec<&str> = tri
        .params
        .iter()
        .filter(|p| p.required)
        .map(|p| p.name.as_str())
        .collect();
    assert_eq!(required, ["side1", "side2", "side3"]);
}

fn location(err: &Error) -> &toolgraph::error::Location {
    match err {
        Error::Parse { location, .. } | Error::InvalidTool { location, .. } => location,
        other => panic!("unexpected error {other:?}"),
    }
}

#[test]
fn syntax_errors_point_at_line_and_column() {
    let err = load_err("broken/syntax.json");
    let loc = location(&err);
    assert!(matches!(err, Error::Parse { .. }));
    assert_eq!((loc.line, loc.column), (Some(10), Some(7)));
    let msg = err.to_string();
    assert!(msg.starts_with("broken/syntax.json:10:7"), "{msg}");
    assert!(msg.contains("/tools/1"), "{msg}");

    let err = load_err("broken/syntax.jsonl");
    let loc = location(&err);
    assert_eq!(loc.file, "broken/syntax.jsonl");
    assert_eq!(loc.line, Some(3));
    assert!(loc.column.is_some());
    assert!(err.to_string().contains("/parameters"), "{err}");

    let err = load_err("broken/syntax.yaml");
    let loc = location(&err);
    assert!(matches!(err, Error::Parse { .. }));
    assert_eq!(loc.file, "broken/syntax.yaml");
    assert!(matches!(loc.line, Some(9..=11)), "{err}");
    assert!(loc.column.is_some());
}

#[test]
fn semantic_errors_name_the_tool_and_place() {
    let err = load_err("broken/no_name.json");
    assert!(matches!(err, Error::InvalidTool { .. }));
    assert_eq!(location(&err).pointer.as_deref(), Some("/tools/2"));
    assert!(err.to_string().contains("no `name`"), "{err}");

    let err = load_err("broken/duplicate.jsonl");
    let msg = err.to_string();
    assert_eq!(location(&err).line, Some(3));
    assert!(
        msg.contains("`book_hotel`") && msg.contains("duplicate"),
        "{msg}"
    );

    let err = load_err("broken/duplicate.yaml");
    let msg = err.to_string();
    assert!(
        msg.contains("/paths/~1b/get") && msg.contains("`fetch`"),
        "{msg}"
    );

    let err = load_err("broken/bad_schema.json");
    let msg = err.to_string();
    assert!(
        msg.contains("/tools/1/inputSchema") && msg.contains("`weird`"),
        "{msg}"
    );
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    for format in [Format::Mcp, Format::OpenApi, Format::Jsonl] {
        assert!(parse_manifest("deep.json", &deep, format).is_err());
    }
    let yaml = format!(
        "openapi: 3.0.0\npaths: {}{}\n",
        "[".repeat(50_000),
        "]".repeat(50_000)
    );
    assert!(parse_manifest("deep.yaml", &yaml, Format::OpenApi).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn parsers_never_panic(s in ".{0,400}") {
        for format in [Format::Mcp, Format::OpenApi, Format::Jsonl, Format::Turtle] {
            if let Ok(tools) = parse_manifest("p.json", &s, format) {
                prop_assert!(tools.iter().all(|t| !t.id.is_empty() && !t.name.is_empty()));
            }
        }
        let _ = detect_format(Path::new("p.json"), &s);
    }

    #[test]
    fn json_shaped_inputs_never_panic(s in r#"[\[\]{}:,"a-z0-9 \n$#/~.-]{0,300}"#) {
        for format in [Format::Mcp, Format::OpenApi, Format::Jsonl] {
            if let Ok(tools) = parse_manifest("p.json", &s, format) {
                prop_assert!(tools.iter().all(|t| !t.id.is_empty() && !t.name.is_empty()));
            }
        }
        let wrapped = format!(r#"{{"openapi":"3.0.0","paths":{s}}}"#);
        let _ = parse_manifest("p.json", &wrapped, Format::OpenApi);
        let tools = format!(r#"{{"tools":[{s}]}}"#);
        let _ = parse_manifest("p.json", &tools, Format::Mcp);
    }
}

#[test]
fn a_model_description_survives_the_store_and_reaches_the_embedded_text() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plugins.jsonl");
    std::fs::write(
        &file,
        concat!(
            r#"{"name":"timeport","description":"Play a time-travel game.","#,
            r#""meta":{"description_for_model":"Start the game in a moment in history."}}"#,
            "\n",
            r#"{"name":"plain","description":"Search the web."}"#,
            "\n"
        ),
    )
    .unwrap();
    let engine =
        toolgraph::Engine::open(toolgraph::EngineOptions::memory(toolgraph::Embeddings::Off))
            .unwrap();
    let ontology = Path::new(env!("CARGO_MANIFEST_DIR")).join("ontology");
    engine.load_paths(&[ontology, file], None).unwrap();
    let tools = engine.store().tools().unwrap();
    let by_name = |n: &str| tools.iter().find(|t| t.name == n).unwrap();
    let timeport = by_name("timeport");
    assert_eq!(
        timeport.model_description,
        "Start the game in a moment in history."
    );
    assert!(by_name("plain").model_description.is_empty());
    let text = toolgraph::embed::embedding_text(timeport);
    assert!(
        text.starts_with(
            "timeport\nPlay a time-travel game.\nStart the game in a moment in history."
        ),
        "{text}"
    );
}
