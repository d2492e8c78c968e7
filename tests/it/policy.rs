//! Caller scope on the bundled seeds with the real model: the layered policy
//! by every route, goal boundaries, domain selection turn by turn, the intent
//! broker, and a property test of the policy against an independent oracle.

use crate::common::root;
use crate::rank::real;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use toolgraph::engine::Layer;
use toolgraph::graph::{Source, SourceData};
use toolgraph::{Caller, Engine, Error, ListRequest, ResolveRequest, SearchRequest, SelectRequest};

fn caller(org: Option<&str>, agent: Option<&str>) -> Caller {
    Caller {
        org: org.map(str::to_string),
        agent: agent.map(str::to_string),
        ..Caller::default()
    }
}

fn listed(engine: &Engine, caller: &Caller) -> BTreeSet<String> {
    engine
        .list(&ListRequest {
            caller: caller.clone(),
            ..ListRequest::default()
        })
        .unwrap()
        .tools
        .into_iter()
        .map(|t| t.tool.name)
        .collect()
}

fn select(
    engine: &Engine,
    session: &str,
    agent: Option<&str>,
    message: &str,
) -> toolgraph::engine::Selection {
    engine
        .select(&SelectRequest {
            session: session.into(),
            message: message.into(),
            caller: caller(None, agent),
            ..SelectRequest::default()
        })
        .unwrap()
}

/// Every tool of `domain` the caller may see is in the selection.
fn complete(engine: &Engine, agent: Option<&str>, domain: &str, tools: &[String]) {
    let page = engine
        .list(&ListRequest {
            caller: caller(None, agent),
            filter: toolgraph::ToolFilter {
                domain: Some(domain.into()),
                source: None,
            },
            ..ListRequest::default()
        })
        .unwrap();
    assert!(page.total > 0, "{domain}");
    for t in &page.tools {
        assert!(
            tools.contains(&t.tool.name),
            "{domain} is not complete: {} missing from {tools:?}",
            t.tool.name
        );
    }
}

/// Sub-domains by domain, from the graph (`skos:broader` between domains).
fn sub_domains(engine: &Engine) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let sparql = engine.store().sparql().unwrap();
    if let toolgraph::graph::SparqlOutput::Solutions { rows, .. } = sparql
        .query(
            "PREFIX tg: <https://toolgraph.dev/ns#> PREFIX skos: <http://www.w3.org/2004/02/skos/core#> \
             SELECT ?c ?p WHERE { ?c a tg:Domain ; skos:broader ?p . ?p a tg:Domain }",
        )
        .unwrap()
    {
        for row in rows {
            let cell = |i: usize| {
                let v = row[i].clone().unwrap_or_default();
                toolgraph::vocab::local_name(v.trim_matches(['<', '>'])).to_string()
            };
            out.entry(cell(1)).or_default().push(cell(0));
        }
    }
    out
}

fn domain_members(engine: &Engine, domain: &str) -> BTreeSet<String> {
    let page = engine
        .list(&ListRequest {
            limit: 500,
            filter: toolgraph::ToolFilter {
                domain: Some(domain.into()),
                source: None,
            },
            ..ListRequest::default()
        })
        .unwrap();
    page.tools.into_iter().map(|t| t.tool.name).collect()
}

/// Design 002: domain selection takes complete domains of at most
/// `max_tools`. Every seed domain fits, or is split into sub-domains that
/// each fit and together hold exactly its tools (each tool in one).
#[test]
fn every_seed_domain_or_sub_domain_fits_max_tools() {
    let e = real();
    let subs = sub_domains(e);
    assert!(subs.len() >= 8, "{subs:?}");
    let mut leaves = 0;
    for d in e.domains(&Caller::default()).unwrap() {
        let members = domain_members(e, &d.domain);
        match subs.get(&d.domain) {
            Some(children) => {
                let mut union = BTreeSet::new();
                for c in children {
                    let m = domain_members(e, c);
                    assert!(m.is_subset(&members), "{c} outside {}", d.domain);
                    for t in &m {
                        assert!(
                            union.insert(t.clone()),
                            "{t} in two sub-domains of {}",
                            d.domain
                        );
                    }
                }
                assert_eq!(union, members, "{} is not split completely", d.domain);
            }
            None => {
                assert!(
                    members.len() <= toolgraph::engine::MAX_TOOLS,
                    "{} has {} tools",
                    d.domain,
                    members.len()
                );
                leaves += 1;
            }
        }
    }
    assert!(leaves >= 20, "{leaves}");
}

/// The issue's example: a flight request selects the flights sub-domain
/// (travel's 22 tools do not fit), and says so.
#[test]
fn a_flight_request_selects_the_flights_sub_domain() {
    let e = real();
    let s = e
        .select(&SelectRequest {
            session: "flights-denver".into(),
            message: "book me a flight to Denver tomorrow".into(),
            caller: caller(Some("acme"), None),
            ..SelectRequest::default()
        })
        .unwrap();
    assert_eq!(s.domains, ["flights"], "{s:#?}");
    let flights = domain_members(e, "flights");
    for t in &flights {
        assert!(s.tool_names.contains(t), "{t} missing: {s:#?}");
    }
    assert!(s.tool_names.contains(&"airline_seat_reserve".to_string()));
    assert!(
        s.reasoning
            .iter()
            .any(|r| r.contains("sub-domain of travel")),
        "{s:#?}"
    );
}

/// Design 002, scenarios 1 to 4, and the `max_domains` limit.
#[test]
fn the_design_scenarios_of_domain_selection() {
    let e = real();
    // The design's world is a personal assistant's (tasks are to-dos): the
    // seed agent for it (work orders, task_*, are not its business).
    let pa = Some("acme_assistant");
    // Scenario 1: single domain conversation.
    let s = select(e, "scenario-1", pa, "Create a task called buy groceries");
    assert_eq!(s.domains, ["tasks"], "{s:#?}");
    complete(e, pa, "tasks", &s.tool_names);
    let s = select(e, "scenario-1", pa, "Mark it as done");
    assert!(s.domains.contains(&"tasks".to_string()), "{s:#?}");
    assert!(s.tool_names.contains(&"todo_update".to_string()), "{s:#?}");
    // Scenario 4: domain dropped, then re-added.
    let s = select(e, "scenario-4", pa, "Create a task");
    assert_eq!(s.domains, ["tasks"], "{s:#?}");
    let s = select(e, "scenario-4", pa, "What are my goals and reminders?");
    let mut got = s.domains.clone();
    got.sort();
    assert_eq!(got, ["goals", "reminders"], "{s:#?}");
    assert!(s.dropped.iter().any(|d| d.domain == "tasks"), "{s:#?}");
    let s = select(
        e,
        "scenario-4",
        pa,
        "Actually, update that task from earlier",
    );
    assert_eq!(s.domains[0], "tasks", "{s:#?}");
    assert_eq!(s.domains.len(), 2, "{s:#?}");
    // Scenario 2: multi-domain conversation.
    let s = select(e, "scenario-2", pa, "Create a task for my fitness goal");
    let mut got = s.domains.clone();
    got.sort();
    assert_eq!(got, ["goals", "tasks"], "{s:#?}");
    let s = select(e, "scenario-2", pa, "Add a reminder for tomorrow");
    assert_eq!(s.domains, ["reminders", "goals"], "{s:#?}");
    assert!(s.dropped.iter().any(|d| d.domain == "tasks"), "{s:#?}");
    // Scenario 3: domain switch with recency.
    let session = "scenario-3";
    let s = select(e, session, pa, "What are my reading list items?");
    assert_eq!(s.domains, ["reading"], "{s:#?}");
    let s = select(e, session, pa, "Now show me my tasks");
    assert_eq!(s.domains, ["tasks", "reading"], "{s:#?}");
    let s = select(e, session, pa, "Create a reminder and add a new idea");
    let mut got = s.domains.clone();
    got.sort();
    assert_eq!(got, ["ideas", "reminders"], "{s:#?}");
    for gone in ["reading", "tasks"] {
        assert!(s.dropped.iter().any(|d| d.domain == gone), "{gone}: {s:#?}");
    }
    // max_domains: with room for 20 tools, at most 3 domains stay.
    let session = "max-domains";
    for m in [
        "Create a task",
        "Add a reminder for tomorrow",
        "Set a goal to run a marathon",
        "Save an idea for a podcast",
    ] {
        e.select(&SelectRequest {
            session: session.into(),
            message: m.into(),
            max_tools: Some(20),
            caller: caller(None, pa),
            ..SelectRequest::default()
        })
        .unwrap();
    }
    let s = e
        .select(&SelectRequest {
            session: session.into(),
            message: "Add a book to my reading list".into(),
            max_tools: Some(20),
            caller: caller(None, pa),
            ..SelectRequest::default()
        })
        .unwrap();
    assert_eq!(s.domains.len(), 3, "{s:#?}");
    assert_eq!(s.domains[0], "reading", "{s:#?}");
    assert!(
        s.dropped.iter().any(|d| d.reason.contains("max_domains")),
        "{s:#?}"
    );
}

#[test]
fn domain_selection_keeps_whole_domains_in_recency_order() {
    let e = real();
    // Anonymous, "a task" is a to-do or a work order: the ranking decides
    // which, and selection keeps it.
    let s = select(
        e,
        "recency-anon",
        None,
        "Create a task called buy groceries",
    );
    assert!(
        s.domains.iter().any(|d| d == "work_orders" || d == "tasks"),
        "{s:#?}"
    );
    {
        let agent = Some("acme_assistant");
        let session = format!("recency-{agent:?}");
        let s = select(e, &session, agent, "Create a task called buy groceries");
        assert_eq!(s.domains, ["tasks"], "{s:#?}");
        complete(e, agent, "tasks", &s.tool_names);

        let s = select(e, &session, agent, "Add a reminder for tomorrow");
        assert_eq!(s.domains, ["reminders", "tasks"], "{s:#?}");
        complete(e, agent, "tasks", &s.tool_names);
        complete(e, agent, "reminders", &s.tool_names);

        // max_tools 10: the two most recent domains stay, the oldest goes whole.
        let s = select(e, &session, agent, "Set a goal to run a marathon");
        assert_eq!(s.domains, ["goals", "reminders"], "{s:#?}");
        assert!(s.dropped.iter().any(|d| d.domain == "tasks"), "{s:#?}");
        assert!(
            !s.tool_names.iter().any(|t| t.starts_with("todo_")),
            "{s:#?}"
        );

        // A dropped domain named again comes back.
        let s = select(e, &session, agent, "Show my tasks");
        assert_eq!(s.domains, ["tasks", "goals"], "{s:#?}");
        assert!(s.dropped.iter().any(|d| d.domain == "reminders"), "{s:#?}");
        complete(e, agent, "tasks", &s.tool_names);
        assert!(
            s.tool_names.len() <= 10 + 2,
            "10 + the two universal tools: {s:#?}"
        );
        assert!(s.reasoning.iter().any(|r| r.contains("dropped reminders")));
    }
    let s = select(e, "delete-task", Some("acme_assistant"), "create a task");
    assert!(s.tool_names.contains(&"todo_delete".to_string()), "{s:#?}");
    let s = select(e, "delete-task", Some("acme_assistant"), "delete that task");
    assert!(s.tool_names.contains(&"todo_delete".to_string()), "{s:#?}");
    assert_eq!(s.domains[0], "tasks");
}

/// Design 001's broker: its keyword families, a cap of 15, the universal
/// tools (query_org_data, request_feature) always in, "recent" = tools the
/// session used, and the strategy chosen per organization.
#[test]
fn the_broker_caps_its_set_knows_the_design_keywords_and_keeps_used_tools() {
    let e = crate::rank::engine_with(toolgraph::Embeddings::Off);
    let intents = |session: &str, message: &str, c: Caller| {
        e.select(&SelectRequest {
            session: session.into(),
            message: message.into(),
            caller: c,
            strategy: Some(toolgraph::engine::Strategy::Intents),
            ..SelectRequest::default()
        })
        .unwrap()
    };
    let s = intents("refund", "I need a refund", Caller::default());
    assert!(
        s.tool_names.len() <= 15,
        "{} tools: {s:#?}",
        s.tool_names.len()
    );
    assert!(s.tool_names.len() >= 5, "{s:#?}");
    for u in ["query_org_data", "request_feature"] {
        assert!(s.tool_names.contains(&u.to_string()), "{u}: {s:#?}");
    }
    assert!(s.reasoning.iter().any(|r| r.contains("cap 15")), "{s:#?}");
    for (message, intent) in [
        ("what does it cost", "billing"),
        ("is this item in the inventory", "products"),
        ("add the event to the calendar", "scheduling"),
        ("our client is a new lead", "contact"),
        ("send the newsletter campaign", "email"),
    ] {
        let s = intents("families", message, Caller::default());
        assert!(
            s.reasoning
                .iter()
                .any(|r| r.contains(&format!("intent {intent}"))),
            "{message}: {s:#?}"
        );
    }
    // A tool the session used stays in its selections.
    let c = Caller {
        org: Some("acme".into()),
        session: Some("used-1".into()),
        ..Caller::default()
    };
    e.record_usage(
        &Caller::default(),
        &toolgraph::engine::UsageEvent {
            tool: "recipe_search".into(),
            org: Some("acme".into()),
            session: Some("used-1".into()),
            ..Default::default()
        },
    )
    .unwrap();
    let s = intents("used-1", "I need a refund", c);
    assert!(
        s.tool_names.contains(&"recipe_search".to_string()),
        "{s:#?}"
    );
    assert!(
        s.reasoning
            .iter()
            .any(|r| r.contains("recipe_search (recent)"))
    );
    // The strategy per organization.
    e.load(&[Source {
        name: "test/strategy.ttl".into(),
        data: SourceData::Turtle(
            "@prefix tg: <https://toolgraph.dev/ns#> .\n\
             <https://toolgraph.dev/org/corner_cafe> tg:selectionStrategy \"intents\" ."
                .into(),
        ),
    }])
    .unwrap();
    let by_org = |org: &str| {
        e.select(&SelectRequest {
            session: format!("strategy-{org}"),
            message: "I need a refund".into(),
            caller: caller(Some(org), None),
            ..SelectRequest::default()
        })
        .unwrap()
        .strategy
    };
    assert_eq!(by_org("corner_cafe"), toolgraph::engine::Strategy::Intents);
    assert_eq!(by_org("acme"), toolgraph::engine::Strategy::Domains);
}

/// A selection under a goal says where the flow goes next (design 000's
/// goal order), with the goal's agents; `goals` lists them in order.
#[test]
fn goals_are_listed_in_flow_order_and_selections_hint_the_next_goal() {
    let e = real();
    let goals = e.goals(&Caller::default()).unwrap();
    let names: Vec<&str> = goals.iter().map(|g| g.goal.as_str()).collect();
    for g in [
        "UNDERSTAND_REQUEST",
        "GATHER_REQUIREMENTS",
        "DESIGN_SOLUTION",
        "EXECUTE_SOLUTION",
        "CONFIRM_RESOLUTION",
    ] {
        assert!(names.contains(&g), "{g}: {names:?}");
    }
    assert_eq!(names[0], "UNDERSTAND_REQUEST");
    for g in &goals {
        // Every listed tool is within its goal's boundary for an anonymous
        // caller: nothing to warn about.
        assert!(g.warnings.is_empty(), "{}: {:?}", g.goal, g.warnings);
        assert!(g.tools > 0, "{}", g.goal);
        assert!(g.primary_agent.is_some(), "{}", g.goal);
    }
    let design = goals.iter().find(|g| g.goal == "DESIGN_SOLUTION").unwrap();
    assert_eq!(design.primary_agent.as_deref(), Some("planner_agent"));
    assert_eq!(design.fallback_agent.as_deref(), Some("mcp_agent"));
    assert_eq!(design.next, ["EXECUTE_SOLUTION"]);
    let s = e
        .select(&SelectRequest {
            session: "goal-hint".into(),
            message: "book the technician for Tuesday morning".into(),
            caller: Caller {
                goal: Some("BOOK_APPOINTMENT".into()),
                ..Caller::default()
            },
            ..SelectRequest::default()
        })
        .unwrap();
    let hint = s.goal.unwrap();
    assert_eq!(hint.next, ["CREATE_WORK_ORDER"]);
    assert!(
        hint.hint.contains("continue with CREATE_WORK_ORDER"),
        "{hint:?}"
    );
}

/// Design 000: a tool must fit the goal's operations AND entities AND
/// categories; its tool list is a check list, not a widening.
#[test]
fn a_goal_boundary_is_operation_and_entity_and_category() {
    let e = real();
    let booking = Caller {
        goal: Some("BOOK_APPOINTMENT".into()),
        ..Caller::default()
    };
    let seen = listed(e, &booking);
    for t in e.tools() {
        let food_crm_or_medical = t.domains.iter().any(|d| {
            ["dining", "crm", "health", "food_orders", "leads_and_deals"]
                .iter()
                .any(|x| d.iri.ends_with(&format!("/{x}")))
        });
        if food_crm_or_medical && !t.universal {
            assert!(!seen.contains(&t.name), "{} under BOOK_APPOINTMENT", t.name);
        }
    }
    assert!(seen.contains("person_calendar_book"), "{seen:?}");
    let x = e
        .explain_policy(&booking, "doctor_appointment_book")
        .unwrap();
    assert!(!x.allowed && x.deciding == Layer::Goal, "{x:?}");
    assert!(x.layers[4].reason.contains("category"), "{x:?}");
}

/// Design 000's context boosts: under EXECUTE_SOLUTION (which favours
/// `create`), creating tools score ×1.5, said in their details; without
/// the goal nothing is boosted.
#[test]
fn a_goal_boosts_the_operations_it_favours_and_says_so() {
    let e = real();
    let text = "the water heater job for Mrs Smith: record it and put it on the calendar";
    let under = e
        .search(&SearchRequest {
            text: text.into(),
            limit: 10,
            caller: Caller {
                goal: Some("EXECUTE_SOLUTION".into()),
                ..Caller::default()
            },
            ..SearchRequest::default()
        })
        .unwrap();
    let boosted: Vec<_> = under
        .matches
        .iter()
        .filter(|m| m.details.goal_boost.is_some())
        .collect();
    assert!(!boosted.is_empty(), "{:#?}", under.matches);
    for m in &boosted {
        let b = m.details.goal_boost.as_ref().unwrap();
        assert_eq!(b.factor, 1.5, "{m:?}");
        assert!(
            b.reason.contains("goal EXECUTE_SOLUTION favours create"),
            "{b:?}"
        );
    }
    assert!(under.matches.iter().any(|m| m.tool == "task_create"));
    let scores: Vec<f32> = under.matches.iter().map(|m| m.score).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    let plain = e
        .search(&SearchRequest {
            text: text.into(),
            limit: 10,
            ..SearchRequest::default()
        })
        .unwrap();
    assert!(plain.matches.iter().all(|m| m.details.goal_boost.is_none()));
}

#[test]
fn the_intent_broker_narrows_within_the_policy_and_falls_back_when_general() {
    let e = real();
    let acme = caller(Some("acme"), None);
    let allowed = listed(e, &acme);
    let s = e
        .select(&SelectRequest {
            session: "broker".into(),
            message: "I was charged twice, I need a refund".into(),
            caller: acme.clone(),
            strategy: Some(toolgraph::engine::Strategy::Intents),
            ..SelectRequest::default()
        })
        .unwrap();
    assert!(
        s.tool_names.contains(&"refund_payment".to_string()),
        "{s:#?}"
    );
    assert!(
        s.tool_names.contains(&"query_org_data".to_string()),
        "universal"
    );
    assert!(s.tool_names.len() < allowed.len(), "{s:#?}");
    assert!(
        s.tool_names.iter().all(|t| allowed.contains(t)),
        "never widens"
    );
    assert!(s.reasoning.iter().any(|r| r.contains("billing")), "{s:#?}");
    // The planner called refund_payment in this conversation: the next
    // turn keeps it as a recent tool (what was used, not what was offered).
    e.called(
        &toolgraph::Caller {
            session: Some("broker".into()),
            ..acme.clone()
        },
        "refund_payment",
    );
    let next = e
        .select(&SelectRequest {
            session: "broker".into(),
            message: "and open a ticket about it".into(),
            caller: acme.clone(),
            strategy: Some(toolgraph::engine::Strategy::Intents),
            ..SelectRequest::default()
        })
        .unwrap();
    assert!(
        next.tool_names.contains(&"refund_payment".to_string()),
        "{next:#?}"
    );
    assert!(
        next.tool_names
            .iter()
            .any(|t| t.starts_with("support_ticket")),
        "{next:#?}"
    );
    // No intent: everything the caller may use.
    let general = e
        .select(&SelectRequest {
            session: "broker-2".into(),
            message: "hello there".into(),
            caller: acme,
            strategy: Some(toolgraph::engine::Strategy::Intents),
            ..SelectRequest::default()
        })
        .unwrap();
    assert_eq!(
        general.tool_names.iter().cloned().collect::<BTreeSet<_>>(),
        allowed
    );
    // Fewer than five tools left for the intent: everything the caller may use.
    let support = caller(None, Some("acme_support"));
    let few = e
        .select(&SelectRequest {
            session: "broker-3".into(),
            message: "I need a refund".into(),
            caller: support.clone(),
            strategy: Some(toolgraph::engine::Strategy::Intents),
            ..SelectRequest::default()
        })
        .unwrap();
    assert_eq!(
        few.tool_names.iter().cloned().collect::<BTreeSet<_>>(),
        listed(e, &support),
        "{few:#?}"
    );
    assert!(few.reasoning.iter().any(|r| r.contains("only")), "{few:#?}");
}

const STRIPE_TOOLS: [&str; 13] = [
    "create_payment_link",
    "charge_card",
    "refund_payment",
    "create_invoice_stripe",
    "payment_link_status_get",
    "invoice_create",
    "invoice_send",
    "invoice_get",
    "invoice_list",
    "invoice_void",
    "payment_create",
    "payment_refund",
    "payment_status_get",
];

#[test]
fn an_org_without_stripe_never_sees_invoice_or_payment_tools_by_any_route() {
    let e = real();
    let cafe = caller(Some("corner_cafe"), None);
    let acme = caller(Some("acme"), None);
    let cafe_tools = listed(e, &cafe);
    let acme_tools = listed(e, &acme);
    for t in STRIPE_TOOLS {
        assert!(!cafe_tools.contains(t), "{t} listed for corner_cafe");
        assert!(
            acme_tools.contains(t),
            "{t} missing for acme (stripe connected)"
        );
        assert!(matches!(e.tool_for(&cafe, t), Err(Error::NotFound { .. })));
    }
    stripe_tools_stay_out_of_search(e, &cafe, &acme);
    let r = e
        .resolve(&ResolveRequest {
            verb: "CREATE_INVOICE".into(),
            context: Some("for the plumbing job, $250".into()),
            caller: cafe.clone(),
            ..ResolveRequest::default()
        })
        .unwrap();
    assert!(r.tool.is_none_or(|t| !STRIPE_TOOLS.contains(&t.as_str())));
    assert!(hidden(&mut r.nearest.iter().map(|m| m.tool.clone())));
    let s = e
        .select(&SelectRequest {
            session: "cafe".into(),
            message: "send the customer an invoice and a payment link".into(),
            caller: cafe.clone(),
            strategy: Some(toolgraph::engine::Strategy::Intents),
            ..SelectRequest::default()
        })
        .unwrap();
    assert!(hidden(&mut s.tool_names.into_iter()));
    let domains = e.domains(&cafe).unwrap();
    assert!(
        !domains.iter().any(|d| d.domain == "payments"),
        "{domains:?}"
    );
    let prompt = e
        .prompt(&toolgraph::PromptRequest {
            tools: Some(STRIPE_TOOLS.map(String::from).to_vec()),
            budget_tokens: 4000,
            caller: cafe.clone(),
            ..Default::default()
        })
        .unwrap();
    assert!(
        prompt.prompt.is_empty() && prompt.tools.is_empty(),
        "{prompt:?}"
    );
    assert_eq!(e.visible(&cafe).unwrap(), cafe_tools.len());
}

/// None of the Stripe tools, by name.
fn hidden(names: &mut dyn Iterator<Item = String>) -> bool {
    for n in names {
        if STRIPE_TOOLS.contains(&n.as_str()) {
            return false;
        }
    }
    true
}

/// Searches of every kind for corner_cafe name no Stripe tool (matches,
/// prerequisites, contenders, anywhere in the JSON); the same for acme
/// find them.
fn stripe_tools_stay_out_of_search(e: &Engine, cafe: &Caller, acme: &Caller) {
    for text in [
        "create an invoice for the customer for $120",
        "charge the card on file and send a payment link",
        "refund the last payment",
        "create_invoice_stripe",
    ] {
        let r = e
            .search(&SearchRequest {
                text: text.into(),
                limit: 20,
                dependencies: true,
                caller: cafe.clone(),
                ..SearchRequest::default()
            })
            .unwrap();
        assert!(
            hidden(&mut r.matches.iter().map(|m| m.tool.clone())),
            "{text}"
        );
        assert!(hidden(
            &mut r.matches.iter().flat_map(|m| m.prerequisites.clone())
        ));
        assert!(hidden(
            &mut r
                .clarify
                .iter()
                .flat_map(|c| c.contenders.iter().map(|x| x.tool.clone()))
        ));
        let json = serde_json::to_string(&r).unwrap();
        for t in STRIPE_TOOLS {
            assert!(!json.contains(&format!("\"{t}\"")), "{t} in {text}: {json}");
        }
        // The same request for acme finds them.
        let r = e
            .search(&SearchRequest {
                text: text.into(),
                limit: 20,
                caller: acme.clone(),
                ..SearchRequest::default()
            })
            .unwrap();
        assert!(
            r.matches
                .iter()
                .any(|m| STRIPE_TOOLS.contains(&m.tool.as_str())),
            "{text}"
        );
    }
}

#[test]
fn a_goal_narrows_to_its_boundary_and_warns_about_its_own_tools_a_layer_removes() {
    let e = real();
    // Under BOOK_APPOINTMENT every match is inside the goal's boundary.
    let booking = Caller {
        goal: Some("BOOK_APPOINTMENT".into()),
        ..Caller::default()
    };
    let r = e
        .search(&SearchRequest {
            text: "book the technician for Tuesday morning".into(),
            limit: 50,
            caller: booking.clone(),
            ..SearchRequest::default()
        })
        .unwrap();
    assert!(!r.matches.is_empty());
    assert!(r.matches.len() <= 20, "results under a goal are capped");
    for m in &r.matches {
        let x = e.explain_policy(&booking, &m.tool).unwrap();
        let goal = x.layers.iter().find(|l| l.layer == Layer::Goal).unwrap();
        assert!(goal.applies && goal.allowed, "{}: {goal:?}", m.tool);
    }
    assert!(r.matches.iter().all(|m| m.tool != "todo_delete"));
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    // A draft-only agent cannot book: the goal's own booking tool is removed,
    // and the response says that a goal tool is unavailable without naming
    // it, its layer or why (finding L2: the drafter learned the hidden tool's
    // name and the agent layer's reason).
    let drafter = Caller {
        agent: Some("acme_drafter".into()),
        goal: Some("BOOK_APPOINTMENT".into()),
        ..Caller::default()
    };
    let r = e
        .search(&SearchRequest {
            text: "book the technician for Tuesday morning".into(),
            caller: drafter.clone(),
            ..SearchRequest::default()
        })
        .unwrap();
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    let w = &r.warnings[0];
    assert_eq!((w.tool.as_deref(), w.layer), (None, None), "{w:?}");
    assert!(
        w.reason
            .contains("goal BOOK_APPOINTMENT names one or more tools"),
        "{w:?}"
    );
    let said = serde_json::to_string(&r).unwrap();
    assert!(!said.contains("person_calendar_book"), "{said}");
    assert!(!said.contains("draft_only"), "{said}");
    assert!(r.matches.iter().all(|m| m.tool != "person_calendar_book"));
    // A tool the caller may see but its session removed is named, with why.
    e.session_failed(
        &Caller {
            session: Some("s-goal".into()),
            ..booking.clone()
        },
        "person_calendar_book",
        "timed out",
    )
    .unwrap();
    let r = e
        .search(&SearchRequest {
            text: "book the technician for Tuesday morning".into(),
            caller: Caller {
                session: Some("s-goal".into()),
                ..booking
            },
            ..SearchRequest::default()
        })
        .unwrap();
    let w = r
        .warnings
        .iter()
        .find(|w| w.tool.as_deref() == Some("person_calendar_book"))
        .unwrap_or_else(|| panic!("{:?}", r.warnings));
    assert_eq!(w.layer, Some(Layer::Session));
    assert!(w.reason.contains("timed out"), "{w:?}");
}

#[test]
fn a_goal_that_lists_a_tool_it_excludes_warns_instead_of_dropping_it() {
    let engine = crate::rank::engine_with(toolgraph::Embeddings::Off);
    let goal = r#"
        @prefix tg: <https://toolgraph.dev/ns#> .
        @prefix skos: <http://www.w3.org/2004/02/skos/core#> .
        @prefix verb: <https://toolgraph.dev/verb/> .
        @prefix ent: <https://toolgraph.dev/entity/> .
        @prefix tool: <https://toolgraph.dev/tool/> .
        <https://toolgraph.dev/goal/REVIEW_BOOKINGS> a tg:Goal ;
            skos:prefLabel "review bookings" ;
            tg:allowsOperation verb:get , verb:search , verb:list ;
            tg:excludesOperation verb:cancel ;
            tg:allowsEntity ent:Appointment , ent:CalendarSlot ;
            tg:availableTool tool:person_calendar_search , tool:person_calendar_cancel .
    "#;
    engine
        .load(&[Source {
            name: "test/goal.ttl".into(),
            data: SourceData::Turtle(goal.into()),
        }])
        .unwrap();
    let c = Caller {
        goal: Some("review_bookings".into()),
        ..Caller::default()
    };
    let page = engine
        .list(&ListRequest {
            caller: c.clone(),
            ..ListRequest::default()
        })
        .unwrap();
    let names: Vec<&str> = page.tools.iter().map(|t| t.tool.name.as_str()).collect();
    assert!(names.contains(&"person_calendar_search"), "{names:?}");
    assert!(!names.contains(&"person_calendar_cancel"), "{names:?}");
    let w = &page.warnings;
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].tool.as_deref(), Some("person_calendar_cancel"));
    assert_eq!(w[0].layer, Some(Layer::Goal));
    assert!(w[0].reason.contains("excluded"), "{w:?}");
    let x = engine.explain_policy(&c, "person_calendar_cancel").unwrap();
    assert!(!x.allowed && x.deciding == Layer::Goal, "{x:?}");
}

#[test]
fn explain_names_the_deciding_layer_for_allowed_and_removed_tools() {
    let e = real();
    let support = caller(None, Some("acme_support"));
    let x = e.explain_policy(&support, "refund_payment").unwrap();
    assert!(x.allowed && x.requires_approval, "{x:?}");
    assert_eq!(x.deciding, Layer::Agent);
    let hit = e
        .search(&SearchRequest {
            text: "refund the customer's payment".into(),
            caller: support.clone(),
            ..SearchRequest::default()
        })
        .unwrap();
    let m = hit
        .matches
        .iter()
        .find(|m| m.tool == "refund_payment")
        .unwrap();
    assert!(m.requires_approval, "flagged in every result");
    let x = e.explain_policy(&support, "note_create").unwrap();
    assert!(!x.allowed);
    assert_eq!(x.deciding, Layer::Agent, "{x:?}");
    let x = e
        .explain_policy(&caller(Some("corner_cafe"), None), "send_email")
        .unwrap();
    assert!(!x.allowed && x.deciding == Layer::Organization, "{x:?}");
    assert!(x.layers[1].reason.contains("Resend"), "{x:?}");
    let voice = Caller {
        channel: Some("voice".into()),
        session: Some("call-1".into()),
        ..Caller::default()
    };
    let x = e.explain_policy(&voice, "send_sms").unwrap();
    assert!(!x.allowed && x.deciding == Layer::Session, "{x:?}");
    e.session_failed(&voice, "transfer_call", "the PBX timed out")
        .unwrap();
    let x = e.explain_policy(&voice, "transfer_call").unwrap();
    assert!(!x.allowed && x.layers[3].reason.contains("PBX"), "{x:?}");
    assert!(!listed(e, &voice).contains("transfer_call"));
    // Bad callers are errors naming the field.
    for (c, field) in [
        (caller(Some("nope"), None), "caller.org"),
        (caller(None, Some("nope")), "caller.agent"),
        (
            caller(Some("corner_cafe"), Some("acme_support")),
            "caller.agent",
        ),
    ] {
        match e.visible(&c) {
            Err(Error::Invalid { field: Some(f), .. }) => assert_eq!(f.path(), field),
            other => panic!("{c:?}: {other:?}"),
        }
    }
}

/// The design's channel restrictions (001): SMS cannot carry rich content,
/// so the session layer removes the stock-image search there, with the
/// design's reason; telegram and web chat block nothing.
#[test]
fn a_channel_blocks_what_it_cannot_carry() {
    let e = real();
    let on = |ch: &str| Caller {
        org: Some("acme".into()),
        channel: Some(ch.into()),
        session: Some(format!("chan-{ch}")),
        ..Caller::default()
    };
    let x = e.explain_policy(&on("sms"), "search_stock_images").unwrap();
    assert!(!x.allowed && x.deciding == Layer::Session, "{x:?}");
    assert!(x.layers[3].reason.contains("rich content"), "{x:?}");
    assert!(!listed(e, &on("sms")).contains("search_stock_images"));
    for ch in ["telegram", "web"] {
        assert!(listed(e, &on(ch)).contains("search_stock_images"), "{ch}");
    }
    let hit = e
        .search(&SearchRequest {
            text: "find a stock photo of a plumber".into(),
            caller: on("sms"),
            ..SearchRequest::default()
        })
        .unwrap();
    assert!(hit.matches.iter().all(|m| m.tool != "search_stock_images"));
    // A tool may still restrict itself to its own channels.
    let x = e.explain_policy(&on("telegram"), "reply_email").unwrap();
    assert!(
        !x.allowed && x.layers[3].reason.contains("only available on"),
        "{x:?}"
    );
}

/// The design's migration default (001): an agent with neither a profile
/// nor a subtype gets `general`, said in `policy explain`; `admin` is
/// every tool.
#[test]
fn an_agent_without_a_profile_gets_general_and_admin_gets_everything() {
    let e = real();
    let helper = caller(None, Some("acme_helper"));
    let seen = listed(e, &helper);
    let acme = listed(e, &caller(Some("acme"), None));
    assert!(seen.len() < acme.len(), "{} of {}", seen.len(), acme.len());
    let general = [
        "cat:knowledge",
        "cat:information",
        "cat:discovery",
        "cat:email",
    ];
    for t in e.tools() {
        let in_general = t.categories.iter().any(|c| {
            general
                .iter()
                .any(|g| c.iri.ends_with(&format!("/{}", &g[4..])))
        });
        if in_general && acme.contains(&t.name) && !t.read_only {
            // Categories the general profile names are kept.
            assert!(seen.contains(&t.name), "{}", t.name);
        }
    }
    let x = e.explain_policy(&helper, "charge_card").unwrap();
    assert!(!x.allowed && x.deciding == Layer::Agent, "{x:?}");
    assert!(
        x.layers[2]
            .reason
            .contains("general (the platform's default profile)"),
        "{x:?}"
    );
    let x = e.explain_policy(&helper, "knowledge_base_search").unwrap();
    assert!(x.allowed, "{x:?}");
    // admin = `*`: every tool the organization allows, tools admitted
    // later included.
    let operator = caller(None, Some("acme_operator"));
    assert_eq!(listed(e, &operator), acme);
    let x = e.explain_policy(&operator, "charge_card").unwrap();
    assert!(x.allowed && x.layers[2].reason.contains("admin"), "{x:?}");
}

// ---------------------------------------------------------------- property

/// A tiny deterministic PRNG (splitmix64) so the cases are reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn some<'a, T>(&mut self, items: &'a [T], percent: u64) -> Vec<&'a T> {
        items.iter().filter(|_| self.chance(percent)).collect()
    }
}

/// What the test knows about each tool (from the unrestricted catalog).
#[derive(Clone)]
struct Facts {
    name: String,
    read_only: bool,
    universal: bool,
    integrations: Vec<String>,
    channels: Vec<String>,
    categories: Vec<String>,
}

#[derive(Default, Clone)]
struct OrgCfg {
    enabled: Vec<String>,
    disabled: Vec<String>,
    integrations: Vec<String>,
}

#[derive(Default, Clone)]
struct AgentCfg {
    org: usize,
    profile: Option<String>,
    enabled: Vec<String>,
    disabled: Vec<String>,
    deny: Vec<String>,
    draft_only: bool,
    approval: Vec<String>,
}

struct Config {
    allowed: Vec<String>,
    blocked: Vec<String>,
    /// The platform's default profile (`tg:defaultProfile`).
    default_profile: Option<String>,
    /// (channel, tool) pairs a channel blocks.
    channel_blocks: Vec<(String, String)>,
    orgs: Vec<OrgCfg>,
    agents: Vec<AgentCfg>,
}

/// A seed profile as the oracle reads it.
#[derive(Default, Clone)]
struct ProfileCfg {
    categories: Vec<String>,
    tools: Vec<String>,
    read_only: bool,
    all: bool,
}

const INTEGRATIONS: [&str; 4] = ["stripe", "resend", "unsplash", "slack"];
const CHANNELS: [&str; 5] = ["sms", "email", "whatsapp", "voice", "web"];
const DENY: [&str; 6] = [
    "*_delete",
    "send_*",
    "*payment*",
    "todo_*",
    "*_get",
    "?eal_*",
];

fn random_config(rng: &mut Rng, tools: &[Facts], profiles: &[String]) -> Config {
    let names: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
    let pick = |rng: &mut Rng, p: u64| -> Vec<String> {
        if rng.chance(60) {
            Vec::new()
        } else {
            rng.some(&names, p).into_iter().cloned().collect()
        }
    };
    let allowed = if rng.chance(80) {
        Vec::new()
    } else {
        rng.some(&names, 85).into_iter().cloned().collect()
    };
    let blocked = rng.some(&names, 3).into_iter().cloned().collect();
    let default_profile = if rng.chance(50) {
        None
    } else {
        Some(profiles[rng.below(profiles.len())].clone())
    };
    let mut channel_blocks = Vec::new();
    for ch in CHANNELS {
        for t in rng.some(&names, 4) {
            channel_blocks.push((ch.to_string(), t.clone()));
        }
    }
    let orgs = (0..3)
        .map(|_| OrgCfg {
            enabled: if rng.chance(75) {
                Vec::new()
            } else {
                rng.some(&names, 70).into_iter().cloned().collect()
            },
            disabled: pick(rng, 8),
            integrations: rng
                .some(&INTEGRATIONS, 50)
                .into_iter()
                .map(|s| s.to_string())
                .collect(),
        })
        .collect();
    let agents = (0..6)
        .map(|_| AgentCfg {
            org: rng.below(3),
            profile: if rng.chance(50) {
                None
            } else {
                Some(profiles[rng.below(profiles.len())].clone())
            },
            enabled: if rng.chance(80) {
                Vec::new()
            } else {
                rng.some(&names, 60).into_iter().cloned().collect()
            },
            disabled: pick(rng, 8),
            deny: rng
                .some(&DENY, 20)
                .into_iter()
                .map(|s| s.to_string())
                .collect(),
            draft_only: rng.chance(25),
            approval: rng.some(&names, 5).into_iter().cloned().collect(),
        })
        .collect();
    Config {
        allowed,
        blocked,
        default_profile,
        channel_blocks,
        orgs,
        agents,
    }
}

fn turtle(c: &Config) -> String {
    let tools = |l: &[String]| {
        l.iter()
            .map(|t| format!("tool:{t}"))
            .collect::<Vec<_>>()
            .join(" , ")
    };
    let mut out = String::from(
        "@prefix tg: <https://toolgraph.dev/ns#> .\n@prefix skos: <http://www.w3.org/2004/02/skos/core#> .\n\
         @prefix tool: <https://toolgraph.dev/tool/> .\n@prefix integ: <https://toolgraph.dev/integration/> .\n\
         @prefix profile: <https://toolgraph.dev/profile/> .\n@prefix org: <https://toolgraph.dev/org/> .\n\
         @prefix agent: <https://toolgraph.dev/agent/> .\n@prefix chan: <https://toolgraph.dev/channel/> .\n",
    );
    out.push_str("tg:platform a tg:Platform ; skos:prefLabel \"platform\"");
    if !c.allowed.is_empty() {
        out.push_str(&format!(" ; tg:allowsTool {}", tools(&c.allowed)));
    }
    for b in &c.blocked {
        out.push_str(&format!(
            " ; tg:blocks [ tg:tool tool:{b} ; tg:reason \"random maintenance\" ]"
        ));
    }
    if let Some(p) = &c.default_profile {
        out.push_str(&format!(" ; tg:defaultProfile profile:{p}"));
    }
    out.push_str(" .\n");
    for (ch, t) in &c.channel_blocks {
        out.push_str(&format!(
            "chan:{ch} tg:blocks [ tg:tool tool:{t} ; tg:reason \"random channel block\" ] .\n"
        ));
    }
    for (i, o) in c.orgs.iter().enumerate() {
        out.push_str(&format!(
            "org:o{i} a tg:Organization ; skos:prefLabel \"org {i}\""
        ));
        if !o.enabled.is_empty() {
            out.push_str(&format!(" ; tg:enablesTool {}", tools(&o.enabled)));
        }
        if !o.disabled.is_empty() {
            out.push_str(&format!(" ; tg:disablesTool {}", tools(&o.disabled)));
        }
        for g in &o.integrations {
            out.push_str(&format!(" ; tg:connectedIntegration integ:{g}"));
        }
        out.push_str(" .\n");
    }
    for (i, a) in c.agents.iter().enumerate() {
        out.push_str(&format!(
            "agent:a{i} a tg:Agent ; skos:prefLabel \"agent {i}\" ; tg:memberOf org:o{}",
            a.org
        ));
        if let Some(p) = &a.profile {
            out.push_str(&format!(" ; tg:profile profile:{p}"));
        }
        if !a.enabled.is_empty() {
            out.push_str(&format!(" ; tg:enablesTool {}", tools(&a.enabled)));
        }
        for d in &a.disabled {
            out.push_str(&format!(
                " ; tg:disables [ tg:tool tool:{d} ; tg:reason \"random\" ]"
            ));
        }
        for d in &a.deny {
            out.push_str(&format!(" ; tg:denyPattern \"{d}\""));
        }
        if a.draft_only {
            out.push_str(" ; tg:autonomy \"draft_only\"");
        }
        if !a.approval.is_empty() {
            out.push_str(&format!(" ; tg:requiresApprovalFor {}", tools(&a.approval)));
        }
        out.push_str(" .\n");
    }
    out
}

fn glob(p: &str, n: &str) -> bool {
    // An independent glob: regex-free backtracking over chars.
    fn go(p: &[char], n: &[char]) -> bool {
        match (p.first(), n.first()) {
            (None, None) => true,
            (Some('*'), _) => go(&p[1..], n) || (!n.is_empty() && go(p, &n[1..])),
            (Some('?'), Some(_)) => go(&p[1..], &n[1..]),
            (Some(a), Some(b)) if a.eq_ignore_ascii_case(b) => go(&p[1..], &n[1..]),
            _ => false,
        }
    }
    go(
        &p.chars().collect::<Vec<_>>(),
        &n.chars().collect::<Vec<_>>(),
    )
}

/// The oracle: which tools this caller may see, from the configuration,
/// and for each tool it may not, the first layer that removes it.
fn expected(
    c: &Config,
    tools: &[Facts],
    profiles: &HashMap<String, ProfileCfg>,
    org: Option<usize>,
    agent: Option<usize>,
    channel: Option<&str>,
    failed: &[String],
) -> BTreeMap<String, Option<Layer>> {
    let mut out = BTreeMap::new();
    for t in tools {
        let n = &t.name;
        let platform = (c.allowed.is_empty() || c.allowed.contains(n)) && !c.blocked.contains(n);
        let org_ok = org.is_none_or(|o| {
            let o = &c.orgs[o];
            (o.enabled.is_empty() || o.enabled.contains(n))
                && !o.disabled.contains(n)
                && t.integrations.iter().all(|i| o.integrations.contains(i))
        });
        let agent_ok = agent.is_none_or(|a| {
            let a = &c.agents[a];
            let profile = a.profile.as_ref().or(c.default_profile.as_ref());
            let profile_ok = profile.is_none_or(|p| {
                let pr = &profiles[p];
                (pr.all
                    || pr.tools.contains(n)
                    || t.categories.iter().any(|x| pr.categories.contains(x)))
                    && (!pr.read_only || t.read_only)
            });
            profile_ok
                && (a.enabled.is_empty() || a.enabled.contains(n))
                && !a.disabled.contains(n)
                && !a.deny.iter().any(|d| glob(d, n))
                && (!a.draft_only || t.read_only)
        });
        let session_ok = channel.is_none_or(|ch| {
            !c.channel_blocks.iter().any(|(bc, bt)| bc == ch && bt == n)
                && (t.channels.is_empty() || t.channels.iter().any(|x| x == ch))
        }) && !failed.contains(n);
        let layer = if !platform {
            Some(Layer::Platform)
        } else if !org_ok {
            Some(Layer::Organization)
        } else if t.universal {
            None
        } else if !agent_ok {
            Some(Layer::Agent)
        } else if !session_ok {
            Some(Layer::Session)
        } else {
            None
        };
        out.insert(n.clone(), layer);
    }
    out
}

/// The property test's world: the catalog's tools as the oracle sees them,
/// the seed profiles, the texts and goals callers draw from.
struct World<'e> {
    engine: &'e Engine,
    tools: Vec<Facts>,
    profiles: HashMap<String, ProfileCfg>,
}

/// One random caller of one configuration.
struct Case<'c> {
    config: &'c Config,
    c: Caller,
    org: Option<usize>,
    agent: Option<usize>,
    goal: Option<&'static str>,
    session: String,
    ctx: String,
}

const TEXTS: [&str; 8] = [
    "create an invoice for the customer",
    "send the customer a text message that the technician is on the way",
    "delete the reminder about the dentist",
    "what are your opening hours",
    "reserve a seat on Southwest flight 175 tomorrow",
    "refund the last payment and open a support ticket",
    "find open technician slots next Tuesday",
    "add milk to my to-do list",
];
const GOALS: [&str; 3] = [
    "UNDERSTAND_REQUEST",
    "BOOK_APPOINTMENT",
    "CONFIRM_RESOLUTION",
];

#[test]
fn no_denied_tool_appears_by_any_route_over_10000_random_configurations() {
    let engine = &crate::rank::engine_with(toolgraph::Embeddings::Model(
        toolgraph::embed::default_model_dir(),
    ));
    let world = World {
        engine,
        tools: oracle_tools(engine),
        profiles: seed_profiles(engine),
    };
    let profile_names: Vec<String> = world.profiles.keys().cloned().collect();
    assert!(profile_names.len() >= 6);
    let policy_source = root().join("seeds/policy.ttl").display().to_string();
    let mut rng = Rng(0x7007_6a2a);
    let mut cases = 0usize;
    let (configs, per_config) = (10, 1000);
    for round in 0..configs {
        let config = random_config(&mut rng, &world.tools, &profile_names);
        engine
            .load(&[Source {
                name: policy_source.clone(),
                data: SourceData::Turtle(turtle(&config)),
            }])
            .unwrap_or_else(|e| panic!("round {round}: {e}"));
        for case in 0..per_config {
            world.check(&mut rng, &config, round, case);
            cases += 1;
        }
    }
    eprintln!("policy property: {cases} random configurations x requests checked");
    assert_eq!(cases, 10_000);
}

/// The catalog's tools as the oracle sees them.
fn oracle_tools(engine: &Engine) -> Vec<Facts> {
    let all = engine.tools();
    assert_eq!(all.len(), 181);
    all.iter()
        .map(|t| Facts {
            name: t.name.clone(),
            read_only: t.read_only,
            universal: t.universal,
            integrations: t
                .integrations
                .iter()
                .map(|l| toolgraph::vocab::local_name(&l.iri).to_string())
                .collect(),
            channels: t
                .channels
                .iter()
                .map(|l| toolgraph::vocab::local_name(&l.iri).to_string())
                .collect(),
            categories: t.categories.iter().map(|l| l.iri.to_string()).collect(),
        })
        .collect()
}

/// Profiles as the seeds define them (categories, tools, read-only-only,
/// every tool).
fn seed_profiles(engine: &Engine) -> HashMap<String, ProfileCfg> {
    let mut profiles: HashMap<String, ProfileCfg> = HashMap::new();
    let sparql = engine.store().sparql().unwrap();
    if let toolgraph::graph::SparqlOutput::Solutions { rows, .. } = sparql
        .query(
            "PREFIX tg: <https://toolgraph.dev/ns#> SELECT ?p ?k ?v WHERE { ?p a tg:Profile . \
             { ?p tg:includesCategory ?v BIND(\"c\" AS ?k) } UNION { ?p tg:includesTool ?v BIND(\"t\" AS ?k) } \
             UNION { ?p tg:readOnlyOnly ?v BIND(\"r\" AS ?k) } \
             UNION { ?p tg:includesAllTools ?v BIND(\"a\" AS ?k) } }",
        )
        .unwrap()
    {
        for row in rows {
            let cell = |i: usize| row[i].clone().unwrap_or_default().trim_matches(['<', '>']).to_string();
            let p = toolgraph::vocab::local_name(&cell(0)).to_string();
            let e = profiles.entry(p).or_default();
            match cell(1).trim_matches('"') {
                "c" => e.categories.push(cell(2)),
                "t" => e.tools.push(toolgraph::vocab::local_name(&cell(2)).to_string()),
                "a" => e.all = cell(2).starts_with("\"true"),
                _ => e.read_only = cell(2).starts_with("\"true"),
            }
        }
    }
    profiles
}

impl World<'_> {
    /// One random caller of `config`: its listing, counts, search,
    /// resolve and select see exactly what the oracle says.
    fn check(&self, rng: &mut Rng, config: &Config, round: usize, case: usize) {
        let tools = &self.tools;
        let org = rng.chance(80).then(|| rng.below(3));
        let agent = if rng.chance(70) {
            let a = rng.below(6);
            (org.is_none() || config.agents[a].org == org.unwrap_or(0)).then_some(a)
        } else {
            None
        };
        let org = org.or(agent.map(|a| config.agents[a].org));
        let channel = rng.chance(40).then(|| CHANNELS[rng.below(CHANNELS.len())]);
        let session = format!("s{round}-{case}");
        let failed: Vec<String> = rng
            .some(tools, 2)
            .into_iter()
            .map(|t| t.name.clone())
            .collect();
        let goal = rng.chance(15).then(|| GOALS[rng.below(GOALS.len())]);
        let c = Caller {
            org: org.map(|o| format!("o{o}")),
            agent: agent.map(|a| format!("a{a}")),
            session: Some(session.clone()),
            channel: channel.map(str::to_string),
            goal: goal.map(str::to_string),
            key: None,
        };
        // A tool the caller cannot see is not found (nothing to hide), and
        // its failure is not recorded.
        let failed: Vec<String> = failed
            .into_iter()
            .filter(|f| self.engine.session_failed(&c, f, "random failure").is_ok())
            .collect();
        let verdicts = expected(config, tools, &self.profiles, org, agent, channel, &failed);
        let want: BTreeSet<String> = verdicts
            .iter()
            .filter(|(_, l)| l.is_none())
            .map(|(n, _)| n.clone())
            .collect();
        let ctx = format!("round {round} case {case}: {c:?}");
        let k = Case {
            config,
            c,
            org,
            agent,
            goal,
            session,
            ctx,
        };
        let got = self.check_listing(&k, &want);
        self.check_explain(rng, &k, &got, &verdicts, case);
        let text = TEXTS[rng.below(TEXTS.len())];
        self.check_search(&k, &got, text, case);
    }

    /// `policy explain` agrees with what the routes do: a tool is allowed
    /// exactly when it is in the caller's scope, and the deciding layer of
    /// a removed tool is the one the oracle names (the goal when only the
    /// goal removed it). Every tool every 50th case, 12 random ones
    /// otherwise.
    fn check_explain(
        &self,
        rng: &mut Rng,
        k: &Case<'_>,
        got: &BTreeSet<String>,
        verdicts: &BTreeMap<String, Option<Layer>>,
        case: usize,
    ) {
        let picked: Vec<&Facts> = if case.is_multiple_of(50) {
            self.tools.iter().collect()
        } else {
            (0..12)
                .map(|_| &self.tools[rng.below(self.tools.len())])
                .collect()
        };
        for t in picked {
            let x = self.engine.explain_policy(&k.c, &t.name).unwrap();
            assert_eq!(
                x.allowed,
                got.contains(&t.name),
                "{} {x:?} {}",
                t.name,
                k.ctx
            );
            if !x.allowed {
                let layer = verdicts[&t.name].unwrap_or(Layer::Goal);
                assert_eq!(x.deciding, layer, "{} {x:?} {}", t.name, k.ctx);
                let v = x.layers.iter().find(|v| v.layer == layer).unwrap();
                assert!(!v.allowed && !v.reason.is_empty(), "{x:?}");
            }
        }
    }

    /// Listing and counts.
    fn check_listing(&self, k: &Case<'_>, want: &BTreeSet<String>) -> BTreeSet<String> {
        let (engine, config, c, org, agent, goal) =
            (self.engine, k.config, &k.c, k.org, k.agent, k.goal);
        let ctx = || k.ctx.clone();
        // Listing and counts.
        let page = engine
            .list(&ListRequest {
                caller: c.clone(),
                ..ListRequest::default()
            })
            .unwrap();
        let got: BTreeSet<String> = page.tools.iter().map(|t| t.tool.name.clone()).collect();
        if goal.is_none() {
            assert_eq!(&got, want, "{}", ctx());
        } else {
            assert!(got.is_subset(want), "{}", ctx());
        }
        assert_eq!(page.total, got.len(), "{}", ctx());
        assert_eq!(engine.visible(c).unwrap(), got.len(), "{}", ctx());
        let counted: usize = engine.domains(c).unwrap().iter().map(|d| d.tools).sum();
        let in_domains: usize = page.tools.iter().map(|t| t.tool.domains.len()).sum();
        assert_eq!(counted, in_domains, "{}", ctx());
        if let Some(a) = agent
            && config.agents[a].draft_only
        {
            // Universal tools come back after the agent layer (design 001:
            // always available); request_feature only logs a request.
            for t in &page.tools {
                assert!(
                    t.tool.read_only || t.tool.universal,
                    "draft_only got {}: {}",
                    t.tool.name,
                    ctx()
                );
            }
        }
        let universal_ok = (config.allowed.is_empty()
            || config.allowed.contains(&"query_org_data".to_string()))
            && !config.blocked.contains(&"query_org_data".to_string())
            && org.is_none_or(|o| {
                let o = &config.orgs[o];
                (o.enabled.is_empty() || o.enabled.iter().any(|t| t == "query_org_data"))
                    && !o.disabled.iter().any(|t| t == "query_org_data")
            });
        assert_eq!(
            got.contains("query_org_data"),
            universal_ok,
            "universal: {}",
            ctx()
        );
        for t in &page.tools {
            let needs = agent.is_some_and(|a| config.agents[a].approval.contains(&t.tool.name));
            assert_eq!(t.requires_approval, needs, "{} {}", t.tool.name, ctx());
        }

        got
    }

    /// Search: matches, explanations, clarify contenders, prerequisites;
    /// a hidden tool looks like a missing one; resolve and select.
    fn check_search(&self, k: &Case<'_>, got: &BTreeSet<String>, text: &str, case: usize) {
        let (engine, tools, c, session) = (self.engine, &self.tools, &k.c, &k.session);
        let ctx = || k.ctx.clone();
        let r = engine
            .search(&SearchRequest {
                text: text.into(),
                limit: 10,
                dependencies: true,
                caller: c.clone(),
                ..SearchRequest::default()
            })
            .unwrap();
        for m in &r.matches {
            assert!(got.contains(&m.tool), "match {} {}", m.tool, ctx());
            for p in &m.prerequisites {
                assert!(got.contains(p), "prerequisite {p} {}", ctx());
            }
            for p in &m.details.paths {
                assert!(p.explain.ends_with(&m.tool), "{} {}", p.explain, ctx());
            }
        }
        for ct in r.clarify.iter().flat_map(|c| &c.contenders) {
            assert!(got.contains(&ct.tool), "contender {} {}", ct.tool, ctx());
        }
        // A hidden tool looks like a missing one.
        if let Some(hidden) = tools.iter().find(|t| !got.contains(&t.name)) {
            assert!(matches!(
                engine.tool_for(c, &hidden.name),
                Err(Error::NotFound { .. })
            ));
            let err = engine
                .search(&SearchRequest {
                    text: text.into(),
                    candidates: Some(vec![hidden.name.clone()]),
                    caller: c.clone(),
                    ..SearchRequest::default()
                })
                .unwrap_err()
                .to_string();
            assert!(err.contains("unknown candidate"), "{err}");
        }
        if case.is_multiple_of(10) {
            let res = engine
                .resolve(&ResolveRequest {
                    verb: "SEND_MESSAGE".into(),
                    context: Some(text.into()),
                    caller: c.clone(),
                    ..ResolveRequest::default()
                })
                .unwrap();
            for m in &res.nearest {
                assert!(got.contains(&m.tool), "resolve {} {}", m.tool, ctx());
            }
            let s = engine
                .select(&SelectRequest {
                    session: session.clone(),
                    message: text.into(),
                    caller: c.clone(),
                    ..SelectRequest::default()
                })
                .unwrap();
            for t in &s.tool_names {
                assert!(got.contains(t), "select {t} {}", ctx());
            }
        }
    }
}

/// Finding L4: inside an organization, another tenant's agent and an agent
/// that does not exist get the same answer (no tenant enumeration).
#[test]
fn a_foreign_agent_is_answered_like_a_missing_one() {
    let e = real();
    let said = |agent: &str| {
        let err = e
            .visible(&caller(Some("corner_cafe"), Some(agent)))
            .unwrap_err()
            .to_string();
        err.replace(agent, "<agent>")
    };
    let foreign = said("acme_support");
    assert_eq!(foreign, said("nobody_at_all"));
    assert!(
        foreign.contains("no agent named `<agent>` in organization `corner_cafe`"),
        "{foreign}"
    );
    // Outside any organization an agent still finds its own.
    assert!(e.visible(&caller(None, Some("acme_support"))).is_ok());
    assert!(
        e.visible(&caller(Some("acme"), Some("acme_support")))
            .is_ok()
    );
}

/// Finding L3: the extractor revealed a hidden tool's vocabulary (a mention
/// for "glorbix", a term minted from the hidden tool's name, none for an
/// unknown word). A caller who may see no tool a minted term
/// leads to reads the request as if the lexicon lacked it.
#[test]
fn a_hidden_tools_minted_vocabulary_reads_like_unknown_words() {
    let engine =
        Engine::open(toolgraph::EngineOptions::memory(toolgraph::Embeddings::Off)).unwrap();
    engine
        .load_paths(
            &[root().join("ontology")],
            Some(toolgraph::import::Format::Turtle),
        )
        .unwrap();
    let policy = r#"
        @prefix tg: <https://toolgraph.dev/ns#> .
        @prefix skos: <http://www.w3.org/2004/02/skos/core#> .
        @prefix org: <https://toolgraph.dev/org/> .
        @prefix agent: <https://toolgraph.dev/agent/> .
        org:lab a tg:Organization ; skos:prefLabel "lab" .
        agent:outsider a tg:Agent ; skos:prefLabel "outsider" ;
            tg:memberOf org:lab ; tg:denyPattern "*glorbix*" .
        agent:insider a tg:Agent ; skos:prefLabel "insider" ; tg:memberOf org:lab .
    "#;
    engine
        .load(&[Source {
            name: "test/lab.ttl".into(),
            data: SourceData::Turtle(policy.into()),
        }])
        .unwrap();
    let manifest = r#"{"tools": [
      {"name": "polish_glorbix", "description": "Polishes the glorbix until it shines."},
      {"name": "weather_now", "description": "Gets the current weather for a city."}
    ]}"#;
    engine
        .register_text(
            Some("test/lab.json"),
            manifest,
            Some(toolgraph::import::Format::Mcp),
        )
        .unwrap();
    let mentions = |agent: &str, text: &str| {
        let r = engine
            .search(&SearchRequest {
                text: text.into(),
                caller: caller(Some("lab"), Some(agent)),
                ..SearchRequest::default()
            })
            .unwrap();
        serde_json::to_string(&r.mentions).unwrap()
    };
    let t = engine.tool("polish_glorbix").unwrap();
    assert!(
        t.entities.iter().any(|e| e.iri.ends_with("term/glorbix")),
        "{t:?}"
    );
    // The insider sees the tool: the minted term is a mention for it.
    let inside = mentions("insider", "polish the glorbix");
    assert!(inside.contains("glorbix"), "{inside}");
    for text in ["polish the glorbix", "Polish my Glorbix please", "glorbix"] {
        let hidden = mentions("outsider", text);
        let unknown =
            mentions("outsider", &text.replace("lorbix", "lorbax")).replace("lorbax", "lorbix");
        assert_eq!(hidden, unknown, "{text}");
    }
}

/// Finding L1: a tool's `depends_on` named tools the caller may not see
/// (the drafter saw `boarding_pass_get -> flight_checkin` while
/// `flight_checkin` answered 404). Every dependency a caller is shown is a
/// tool it can open.
#[test]
fn dependency_lists_name_only_tools_the_caller_may_open() {
    let e = real();
    let anyone = e.tool_for(&Caller::default(), "boarding_pass_get").unwrap();
    assert!(
        anyone
            .tool
            .depends_on
            .iter()
            .any(|d| d.on == "flight_checkin"),
        "{:?}",
        anyone.tool.depends_on
    );
    let mut checked = 0;
    for (org, agent) in [
        (None, Some("acme_drafter")),
        (None, Some("acme_support")),
        (Some("corner_cafe"), None),
        (Some("acme"), None),
    ] {
        let c = caller(org, agent);
        let page = e
            .list(&ListRequest {
                caller: c.clone(),
                ..ListRequest::default()
            })
            .unwrap();
        for t in &page.tools {
            for d in &t.tool.depends_on {
                assert!(
                    e.tool_for(&c, &d.on).is_ok(),
                    "{c:?}: {} -> {}",
                    t.tool.name,
                    d.on
                );
                checked += 1;
            }
            let one = e.tool_for(&c, &t.tool.name).unwrap();
            assert_eq!(one.tool.depends_on, t.tool.depends_on);
        }
    }
    assert!(checked > 0);
    let drafter = caller(None, Some("acme_drafter"));
    assert!(e.tool_for(&drafter, "flight_checkin").is_err());
    let seen = e.tool_for(&drafter, "boarding_pass_get").unwrap();
    assert!(
        seen.tool
            .depends_on
            .iter()
            .all(|d| d.on != "flight_checkin")
    );
}
