//! Joint ranking on the bundled seeds with the real MiniLM model: look-alikes
//! decided by context, ambiguity with a clarify question, exact names,
//! dependencies, the novel-verb resolver, prompt output.

use crate::common::root;
use std::sync::OnceLock;
use toolgraph::rank::Mode;
use toolgraph::{
    Decision, Embeddings, Engine, EngineOptions, ResolveRequest, SearchRequest, SearchResponse,
};

pub fn engine_with(embeddings: Embeddings) -> Engine {
    let engine = Engine::open(EngineOptions::memory(embeddings)).unwrap();
    engine
        .load_paths(&[root().join("ontology"), root().join("seeds")], None)
        .unwrap();
    engine
}

/// The seeds with the real model (installed by scripts/setup.sh).
pub fn real() -> &'static Engine {
    static E: OnceLock<Engine> = OnceLock::new();
    E.get_or_init(|| engine_with(Embeddings::Model(toolgraph::embed::default_model_dir())))
}

pub fn graph_only() -> &'static Engine {
    static E: OnceLock<Engine> = OnceLock::new();
    E.get_or_init(|| engine_with(Embeddings::Off))
}

fn search(engine: &Engine, verb: Option<&str>, text: &str, mode: Mode) -> SearchResponse {
    engine
        .search(&SearchRequest {
            text: text.into(),
            verb: verb.map(str::to_string),
            mode,
            limit: 10,
            ..SearchRequest::default()
        })
        .unwrap()
}

fn position(r: &SearchResponse, tool: &str) -> usize {
    r.matches
        .iter()
        .position(|m| m.tool == tool)
        .unwrap_or(usize::MAX)
}

#[test]
fn graph_mode_orders_airline_seat_and_restaurant_table_by_context() {
    let e = graph_only();
    let r = search(e, None, "reserve a seat on a Southwest flight", Mode::Graph);
    assert!(
        position(&r, "airline_seat_reserve") < position(&r, "restaurant_table_reserve"),
        "{:#?}",
        r.matches
            .iter()
            .map(|m| (&m.tool, m.score))
            .collect::<Vec<_>>()
    );
    let r = search(
        e,
        None,
        "a table for two at an Italian restaurant tonight",
        Mode::Graph,
    );
    assert!(
        position(&r, "restaurant_table_reserve") < position(&r, "airline_seat_reserve"),
        "{:#?}",
        r.matches
            .iter()
            .map(|m| (&m.tool, m.score))
            .collect::<Vec<_>>()
    );
}

#[test]
fn make_reservation_look_alikes_resolve_from_context_and_explain_why() {
    let cases = [
        (
            "Southwest flight 175 to Denver tomorrow, window seat",
            "airline_seat_reserve",
            &["airline", "flight", "seat", "Southwest"][..],
        ),
        (
            "dinner for two at 8pm at an Italian restaurant",
            "restaurant_table_reserve",
            &["restaurant", "table"][..],
        ),
        (
            "a room at the Hilton in Paris for 2 nights",
            "hotel_room_reserve",
            &["hotel", "room", "Hilton"][..],
        ),
        (
            "an SUV from Hertz at the airport on Friday",
            "rental_car_reserve",
            &["car", "Hertz", "SUV", "rental"][..],
        ),
        (
            "a checkup with my doctor at the clinic next Tuesday",
            "doctor_appointment_book",
            &["doctor", "clinic", "appointment", "checkup"][..],
        ),
        (
            "two tickets for the concert at Madison Square Garden",
            "event_ticket_reserve",
            &["ticket", "concert", "event", "venue"][..],
        ),
    ];
    for (context, expected, deciding) in cases {
        let r = search(real(), Some("MAKE_RESERVATION"), context, Mode::Joint);
        let top = &r.matches[0];
        assert_eq!(
            top.tool,
            expected,
            "context {context:?}: {:#?}",
            r.matches
                .iter()
                .take(4)
                .map(|m| (&m.tool, m.score, &m.details.matched))
                .collect::<Vec<_>>()
        );
        let explanation = format!(
            "{} {} {}",
            top.details.matched.join(" "),
            top.details
                .paths
                .iter()
                .map(|p| p.explain.as_str())
                .collect::<Vec<_>>()
                .join(" "),
            top.details.decided_by.clone().unwrap_or_default()
        )
        .to_lowercase();
        assert!(
            deciding
                .iter()
                .any(|d| explanation.contains(&d.to_lowercase())),
            "{context:?}: explanation does not name a deciding entity: {explanation}"
        );
        assert!(
            top.details
                .paths
                .iter()
                .any(|p| p.relation == toolgraph::graph::Relation::Verb),
            "verb path missing for {context:?}"
        );
        assert!(
            !r.ambiguous,
            "{context:?} came back ambiguous: {:?}",
            r.clarify
        );
    }
}

#[test]
fn a_bare_verb_is_ambiguous_with_a_question_naming_the_sides() {
    let r = search(real(), Some("MAKE_RESERVATION"), "", Mode::Joint);
    assert!(
        r.ambiguous,
        "{:#?}",
        r.matches
            .iter()
            .take(5)
            .map(|m| (&m.tool, m.score))
            .collect::<Vec<_>>()
    );
    let clarify = r.clarify.expect("clarify");
    assert!(clarify.contenders.len() >= 2);
    assert!(clarify.question.ends_with('?'));
    for c in clarify.contenders.iter().take(2) {
        assert!(!c.facts.is_empty(), "{c:?}");
        assert!(
            clarify
                .question
                .to_lowercase()
                .contains(&c.facts[0].to_lowercase()),
            "question {:?} does not name {:?}",
            clarify.question,
            c.facts[0]
        );
    }
}

#[test]
fn an_exact_tool_name_ranks_first_in_any_casing() {
    for text in [
        "restaurant_table_reserve",
        "please run RestaurantTableReserve now",
        "restaurant-table-reserve",
    ] {
        let r = search(real(), None, text, Mode::Joint);
        assert_eq!(r.matches[0].tool, "restaurant_table_reserve", "{text}");
        assert!(r.matches[0].details.exact_name);
    }
}

#[test]
fn candidates_restrict_ranking_and_nothing_else_leaks() {
    let r = real()
        .search(&SearchRequest {
            text: "reserve a seat on a Southwest flight".into(),
            candidates: Some(vec![
                "restaurant_table_reserve".into(),
                "hotel_room_reserve".into(),
            ]),
            ..SearchRequest::default()
        })
        .unwrap();
    assert_eq!(r.matches.len(), 2);
    assert!(r.matches.iter().all(|m| m.tool != "airline_seat_reserve"));
    assert!(r.matches.iter().all(|m| {
        m.details
            .paths
            .iter()
            .all(|p| !p.explain.contains("airline_seat_reserve"))
    }));
    let err = real()
        .search(&SearchRequest {
            text: "x".into(),
            candidates: Some(vec!["no_such_tool".into()]),
            ..SearchRequest::default()
        })
        .unwrap_err();
    assert!(err.to_string().contains("no_such_tool"));
}

#[test]
fn dependencies_expand_in_order_without_looping() {
    let r = real()
        .search(&SearchRequest {
            text: "person_calendar_book".into(),
            dependencies: true,
            ..SearchRequest::default()
        })
        .unwrap();
    let top = &r.matches[0];
    assert_eq!(top.tool, "person_calendar_book");
    assert!(
        top.prerequisites
            .contains(&"person_calendar_search".to_string()),
        "{:?}",
        top.prerequisites
    );
    assert!(
        top.prerequisites.contains(&"customer_get".to_string()),
        "{:?}",
        top.prerequisites
    );
    assert!(
        !top.prerequisites
            .contains(&"person_calendar_book".to_string())
    );
}

#[test]
fn resolve_substitutes_a_paraphrased_verb_and_decomposes_an_unknown_one() {
    let r = real()
        .resolve(&ResolveRequest {
            verb: "CONVERT_CURRENCY".into(),
            description: None,
            context: Some("100 USD to EUR".into()),
            ..ResolveRequest::default()
        })
        .unwrap();
    assert_eq!(r.decision, Decision::Substitute, "{r:#?}");
    let tool = r.tool.clone().unwrap();
    assert!(
        tool.contains("currency") || tool.contains("exchange"),
        "{tool}"
    );
    let r = real()
        .resolve(&ResolveRequest {
            verb: "TELEPORT_ASTRONAUT".into(),
            description: Some("beam a crew member to orbit".into()),
            context: None,
            ..ResolveRequest::default()
        })
        .unwrap();
    assert_eq!(r.decision, Decision::Decompose, "{r:#?}");
    assert!(r.tool.is_none());
    assert!(!r.nearest.is_empty());
    assert!(!r.reason.is_empty());
}

#[test]
fn confidence_is_a_probability_and_orders_matches() {
    let r = search(
        real(),
        Some("CONVERT_CURRENCY"),
        "100 USD to EUR",
        Mode::Joint,
    );
    for m in &r.matches {
        assert!((0.0..=1.0).contains(&m.confidence));
    }
    assert!(r.matches[0].confidence > r.matches[1].confidence);
    assert!(!r.abstain);
}

#[test]
fn prompt_rendering_respects_the_token_budget() {
    let names: Vec<String> = real().tools().iter().map(|t| t.name.clone()).collect();
    let prompt = |budget_tokens| {
        real()
            .prompt(&toolgraph::PromptRequest {
                tools: Some(names.clone()),
                budget_tokens,
                ..Default::default()
            })
            .unwrap()
            .prompt
    };
    let (small, large) = (prompt(60), prompt(2000));
    assert!(small.len() <= 240, "{}", small.len());
    assert!(large.len() > small.len());
    assert!(large.contains("- airline_seat_reserve") || large.lines().count() > 10);
}

#[test]
fn each_step_of_a_multi_step_request_finds_its_own_tool_and_says_which_step() {
    let text = "Reserve a seat on Southwest flight 175 tomorrow. \
                Then book a table for two at 8pm at an Italian restaurant.";
    let r = search(real(), None, text, Mode::Joint);
    let top2: Vec<&str> = r.matches.iter().take(2).map(|m| m.tool.as_str()).collect();
    assert!(
        top2.contains(&"airline_seat_reserve") && top2.contains(&"restaurant_table_reserve"),
        "{:#?}",
        r.matches
            .iter()
            .take(4)
            .map(|m| (&m.tool, m.score, &m.details.step))
            .collect::<Vec<_>>()
    );
    // A tool whose best score came from a step names that step (a step
    // must beat the whole request by `step_discount` to count).
    let mut named = 0;
    for m in r.matches.iter().take(2) {
        let expected = if m.tool == "airline_seat_reserve" {
            "Reserve a seat on Southwest flight 175 tomorrow."
        } else {
            "book a table for two at 8pm at an Italian restaurant."
        };
        if let Some(step) = m.details.step.as_deref() {
            assert_eq!(step, expected, "{}", m.tool);
            named += 1;
        }
        assert!((0.0..=1.0).contains(&m.details.lexical_trust));
    }
    assert!(named >= 1, "no match names its step");
    // One step: no step is named.
    let single = search(
        real(),
        None,
        "Reserve a seat on Southwest flight 175",
        Mode::Joint,
    );
    assert!(single.matches.iter().all(|m| m.details.step.is_none()));
}

#[test]
fn a_multi_step_request_lists_every_steps_best_tool_before_any_runner_up() {
    let text = "Reserve a seat on Southwest flight 175 tomorrow. \
                Then reserve a rental car at the airport. \
                Finally send an email to my manager.";
    let r = search(real(), None, text, Mode::Joint);
    let shown = || {
        r.matches
            .iter()
            .take(6)
            .map(|m| (&m.tool, m.score, &m.details.best_for_step))
            .collect::<Vec<_>>()
    };
    let top3: Vec<&str> = r.matches.iter().take(3).map(|m| m.tool.as_str()).collect();
    for want in ["airline_seat_reserve", "rental_car_reserve", "send_email"] {
        assert!(
            top3.contains(&want),
            "{want} not in the top 3: {:#?}",
            shown()
        );
    }
    // The explanation names the step each promoted tool is best for.
    let car = r
        .matches
        .iter()
        .find(|m| m.tool == "rental_car_reserve")
        .and_then(|m| m.details.best_for_step.as_deref());
    assert_eq!(
        car,
        Some("reserve a rental car at the airport."),
        "{:#?}",
        shown()
    );
    // After the step winners, the order is by score again.
    let first_runner_up = r
        .matches
        .iter()
        .position(|m| m.details.best_for_step.is_none() && m.tool != r.matches[0].tool)
        .expect("runners-up");
    let rest: Vec<f32> = r.matches[first_runner_up..]
        .iter()
        .map(|m| m.score)
        .collect();
    assert!(rest.windows(2).all(|w| w[0] >= w[1]), "{:#?}", shown());
    assert!(
        r.matches[1..first_runner_up]
            .iter()
            .all(|m| m.details.best_for_step.is_some())
    );
}

fn with_context(text: &str, context: Option<&str>, session: Option<&str>) -> SearchResponse {
    real()
        .search(&SearchRequest {
            text: text.into(),
            context: context.map(str::to_string),
            caller: toolgraph::Caller {
                session: session.map(str::to_string),
                ..Default::default()
            },
            limit: 5,
            ..SearchRequest::default()
        })
        .unwrap()
}

#[test]
fn the_conversation_says_what_a_follow_up_is_about() {
    let turn = "Actually, cancel it.";
    let earlier = "Book a table for two at Nopa tonight at 8pm";
    let names = |r: &SearchResponse| r.matches.iter().map(|m| m.tool.clone()).collect::<Vec<_>>();
    // Alone, "cancel it" names no object: the restaurant is not first.
    let alone = with_context(turn, None, None);
    assert_ne!(
        alone.matches[0].tool,
        "restaurant_reservation_cancel",
        "{:?}",
        names(&alone)
    );
    // With the earlier turn as context, its table decides; the request's
    // own verb still rules (not the earlier turn's `book`).
    let r = with_context(turn, Some(earlier), None);
    assert_eq!(
        r.matches[0].tool,
        "restaurant_reservation_cancel",
        "{:?}",
        names(&r)
    );
    let paths = &r.matches[0].details.paths;
    let from_context: Vec<&str> = paths
        .iter()
        .filter(|p| p.from_context)
        .map(|p| p.explain.as_str())
        .collect();
    assert!(
        from_context
            .iter()
            .any(|e| e.starts_with("earlier turn: \"table\"")),
        "{paths:#?}"
    );
    assert!(
        paths
            .iter()
            .any(|p| !p.from_context && p.mention == "cancel")
    );
    // The response's mentions are the request's own, not the context's.
    assert!(
        r.mentions.iter().all(|m| m.end <= turn.len()),
        "{:?}",
        r.mentions
    );
    // A request that says everything itself keeps its own tool.
    let own = with_context(
        "Book a table for two at Nopa tonight at 8pm",
        Some("Cancel my Netflix subscription"),
        None,
    );
    assert_eq!(
        own.matches[0].tool,
        "restaurant_table_reserve",
        "{:?}",
        names(&own)
    );
}

#[test]
fn a_session_remembers_its_turns_for_the_next_search() {
    let first = with_context(
        "Book a table for two at Nopa tonight",
        None,
        Some("dinner-1"),
    );
    assert_eq!(first.matches[0].tool, "restaurant_table_reserve");
    let next = with_context("Actually, cancel it.", None, Some("dinner-1"));
    assert_eq!(next.matches[0].tool, "restaurant_reservation_cancel");
    assert!(next.matches[0].details.paths.iter().any(|p| p.from_context));
    // Another conversation has other turns.
    let other = with_context("Actually, cancel it.", None, Some("other-2"));
    assert!(
        other.matches[0]
            .details
            .paths
            .iter()
            .all(|p| !p.from_context)
    );
    // A context given explicitly replaces the session's turns.
    let given = with_context(
        "Actually, cancel it.",
        Some("Subscribe me to the premium streaming plan"),
        Some("dinner-1"),
    );
    assert_eq!(given.matches[0].tool, "subscription_cancel");
}

#[test]
fn an_oversized_context_is_refused_by_name() {
    let err = real()
        .search(&SearchRequest {
            text: "cancel it".into(),
            context: Some("x ".repeat(40_000)),
            ..SearchRequest::default()
        })
        .unwrap_err();
    let field = err.field().map(|(f, _)| f);
    assert_eq!(field, Some(toolgraph::error::Field::SearchContext), "{err}");
}

#[test]
fn a_bare_follow_up_lifts_the_tool_the_conversation_called() {
    let ask = |text: &str| with_context(text, None, Some("dinner-3"));
    let caller = toolgraph::Caller {
        session: Some("dinner-3".into()),
        ..Default::default()
    };
    let first = ask("Book a table for two at Nopa tonight");
    assert_eq!(first.matches[0].tool, "restaurant_table_reserve");
    // Before anything was called, nothing is lifted.
    let before = ask("And for tomorrow?");
    assert!(
        before
            .matches
            .iter()
            .all(|m| m.details.conversation_boost.is_none())
    );
    real().called(&caller, "restaurant_table_reserve");
    let after = ask("What about Friday at 7?");
    let top = &after.matches[0];
    assert_eq!(top.tool, "restaurant_table_reserve");
    let boost = top.details.conversation_boost.as_ref().expect("lifted");
    assert!(boost.reason.contains("last tool"), "{boost:?}");
    // A follow-up with its own verb asks for something else: no lift.
    let other = ask("Actually, cancel it.");
    assert!(
        other
            .matches
            .iter()
            .all(|m| m.details.conversation_boost.is_none())
    );
}

/// A request naming one brand prefers that brand's tool, then a tool for
/// any brand, and counts another brand's twin against itself: the twin's
/// explanation says why (imported tools link the brand their text names;
/// the store admits the link).
#[test]
fn another_brands_twin_is_evidence_against() {
    let engine = engine_with(Embeddings::Model(toolgraph::embed::default_model_dir()));
    let tool = |id: &str, description: &str| {
        serde_json::json!({
            "id": id, "name": id, "description": description,
            "parameters": {"type": "object", "properties": {
                "flight_number": {"type": "string", "description": "The flight number"}},
                "required": ["flight_number"]}
        })
        .to_string()
    };
    let jsonl = [
        tool(
            "lufthansa_view_flight_status",
            "Provides Lufthansa users real-time updates on the status of a flight.",
        ),
        tool(
            "delta_view_flight_status",
            "Provides Delta users real-time updates on the status of a flight.",
        ),
        tool(
            "view_flight_status",
            "Real-time updates on the status of any airline's flight.",
        ),
    ]
    .join("\n");
    engine
        .register_text(
            Some("airlines.jsonl"),
            &jsonl,
            Some(toolgraph::import::Format::Jsonl),
        )
        .unwrap();
    let r = engine
        .search(&SearchRequest {
            text: "Is my Lufthansa flight LH400 on time?".into(),
            explain: true,
            limit: 10,
            ..SearchRequest::default()
        })
        .unwrap();
    let rank = |id: &str| r.matches.iter().position(|m| m.tool == id);
    let names: Vec<&str> = r.matches.iter().map(|m| m.tool.as_str()).collect();
    assert_eq!(rank("lufthansa_view_flight_status"), Some(0), "{names:?}");
    let (any, twin) = (rank("view_flight_status"), rank("delta_view_flight_status"));
    assert!(any.is_some() && (twin.is_none() || any < twin), "{names:?}");
    let delta = r
        .matches
        .iter()
        .find(|m| m.tool == "delta_view_flight_status");
    if let Some(delta) = delta {
        let against: Vec<&toolgraph::rank::GraphPath> = delta
            .details
            .paths
            .iter()
            .filter(|p| p.relation == toolgraph::graph::Relation::Rival)
            .collect();
        assert!(
            against.iter().any(|p| p.weight < 0.0
                && p.mention == "Lufthansa"
                && p.explain.contains("actsOn another")),
            "{:#?}",
            delta.details.paths
        );
        // the shared class does not count for it from the same mention
        assert!(
            !delta
                .details
                .paths
                .iter()
                .any(|p| p.mention == "Lufthansa" && p.weight > 0.0),
            "{:#?}",
            delta.details.paths
        );
    }
}

/// What a message says is not what the tool acts on: the e-mail's subject
/// (a budget) does not pull the budget tools above the e-mail ones, and
/// the response still reports it among the request's mentions.
#[test]
fn a_messages_subject_does_not_pick_the_tool() {
    let r = search(
        real(),
        None,
        "Send an email to bob@example.com about the quarterly budget",
        Mode::Joint,
    );
    let names: Vec<&str> = r.matches.iter().map(|m| m.tool.as_str()).collect();
    assert!(
        ["send_email", "email_send"].contains(&names[0]),
        "{names:?}"
    );
    assert!(
        r.mentions.iter().any(|m| m.surface == "budget"),
        "{:?}",
        r.mentions
    );
    // the top match's evidence is the message, not its subject
    assert!(
        r.matches[0]
            .details
            .paths
            .iter()
            .all(|p| p.mention != "budget"),
        "{:#?}",
        r.matches[0].details.paths
    );
    // the same words outside a message keep their weight
    let r = search(real(), None, "Show me the quarterly budget", Mode::Joint);
    assert!(
        r.matches[0].tool.starts_with("budget_"),
        "{:?}",
        r.matches[0].tool
    );
}
