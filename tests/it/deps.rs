//! Dependencies: typed edges from manifests (kind, parameter, reason) kept
//! through the store; dependency-aware ranking (`dependencies: true`) that
//! lists each match's prerequisites right after it, explained, cycle-safe and
//! policy-filtered; and the inference of undeclared edges, measured against
//! labelled dependencies (ToolLinkOS' declared edges, Seal-Tools' nested
//! calls, the seeds' curated edges).

use crate::common::root;
use std::collections::{BTreeSet, HashSet};
use toolgraph::engine::DependencyEdge;
use toolgraph::graph::{Source, SourceData};
use toolgraph::import::Format;
use toolgraph::model::Provenance;
use toolgraph::rank::Mode;
use toolgraph::{Caller, Embeddings, Engine, EngineOptions, Error, SearchRequest, SearchResponse};

/// An MCP `tools/list` whose dependencies are typed objects (two levels:
/// share -> current location -> location service status), a plain one and
/// an unrelated tool. (The store refuses declared cycles; traversal is
/// cycle-safe for inferred ones, see catalog/deps.rs.)
const MANIFEST: &str = r#"{"tools": [
  {"name": "share_location_via_email",
   "description": "Sends a geographical location to a given email address.",
   "inputSchema": {"type": "object", "properties": {
       "email_address": {"type": "string", "description": "The validated email address."},
       "location": {"type": "string", "description": "Coordinates or an address."}},
     "required": ["email_address", "location"]},
   "_meta": {"x-toolgraph": {"dependsOn": [
       {"name": "validate_email", "dependence_type": "PARAMETER_DIRECTLY_DEPENDS_ON",
        "parameter_name": "email_address", "reason": "The address must be valid before sending."},
       {"name": "get_current_location", "dependence_type": "PARAMETER_INDIRECTLY_DEPENDS_ON",
        "parameter_name": "location", "reason": "A relative location needs the device's position."}]}}},
  {"name": "validate_email",
   "description": "Checks that an email address is well formed and deliverable.",
   "inputSchema": {"type": "object", "properties": {"email": {"type": "string"}}, "required": ["email"]}},
  {"name": "get_current_location",
   "description": "Returns the device's current geographical position.",
   "_meta": {"x-toolgraph": {"dependsOn": [
       {"name": "get_location_service_status", "dependence_type": "TOOL_DIRECTLY_DEPENDS_ON"}]}}},
  {"name": "get_location_service_status",
   "description": "Tells whether location services are switched on.",
   "_meta": {"x-toolgraph": {"dependsOn": []}}},
  {"name": "convert_currency",
   "description": "Converts an amount of money between two currencies.",
   "inputSchema": {"type": "object", "properties": {"amount": {"type": "number"}}, "required": ["amount"]},
   "_meta": {"x-toolgraph": {"dependsOn": ["get_location_service_status"]}}}
]}"#;

/// Agents that may not see one tool each.
const POLICY: &str = r#"
    @prefix tg: <https://toolgraph.dev/ns#> .
    @prefix skos: <http://www.w3.org/2004/02/skos/core#> .
    @prefix org: <https://toolgraph.dev/org/> .
    @prefix agent: <https://toolgraph.dev/agent/> .
    org:deps_org a tg:Organization ; skos:prefLabel "deps org" .
    agent:no_validate a tg:Agent ; skos:prefLabel "no validate" ;
        tg:memberOf org:deps_org ; tg:denyPattern "validate_*" .
    agent:no_location a tg:Agent ; skos:prefLabel "no location" ;
        tg:memberOf org:deps_org ; tg:denyPattern "get_current_location" .
"#;

fn engine() -> Engine {
    let engine = Engine::open(EngineOptions::memory(Embeddings::Off)).unwrap();
    engine
        .load_paths(&[root().join("ontology")], Some(Format::Turtle))
        .unwrap();
    engine
        .register_text(Some("test/deps.json"), MANIFEST, Some(Format::Mcp))
        .unwrap();
    engine
        .load(&[Source {
            name: "test/deps-policy.ttl".into(),
            data: SourceData::Turtle(POLICY.into()),
        }])
        .unwrap();
    engine
}

fn agent(name: &str) -> Caller {
    Caller {
        org: Some("deps_org".into()),
        agent: Some(name.into()),
        ..Caller::default()
    }
}

fn search(engine: &Engine, caller: &Caller, dependencies: bool) -> SearchResponse {
    engine
        .search(&SearchRequest {
            text: "share my location via email with john@example.com".into(),
            mode: Mode::Lexical,
            limit: 10,
            dependencies,
            caller: caller.clone(),
            ..SearchRequest::default()
        })
        .unwrap()
}

fn names(r: &SearchResponse) -> Vec<&str> {
    r.matches.iter().map(|m| m.tool.as_str()).collect()
}

#[test]
fn typed_dependencies_are_imported_stored_and_read_back() {
    let engine = engine();
    let tool = engine.tool("share_location_via_email").unwrap();
    let email = tool
        .depends_on
        .iter()
        .find(|d| d.on == "validate_email")
        .expect("typed dependency kept");
    assert_eq!(
        email.facts.kind.as_deref(),
        Some("PARAMETER_DIRECTLY_DEPENDS_ON")
    );
    assert_eq!(email.facts.parameter.as_deref(), Some("email_address"));
    assert_eq!(
        email.facts.reason.as_deref(),
        Some("The address must be valid before sending.")
    );
    let plain = engine.tool("convert_currency").unwrap();
    assert_eq!(plain.depends_on.len(), 1);
    assert_eq!(plain.depends_on[0].on, "get_location_service_status");
    assert!(
        !plain.depends_on[0].is_qualified(),
        "a plain name stays plain"
    );

    let edges = engine
        .dependencies(&Caller::default(), Some("share_location_via_email"))
        .unwrap();
    let declared: Vec<&DependencyEdge> = edges
        .iter()
        .filter(|e| e.provenance == Provenance::Curated)
        .collect();
    assert_eq!(declared.len(), 2, "{edges:?}");
    assert!(declared.iter().all(|e| e.followed && e.confidence == 1.0));
    assert!(declared.iter().any(
        |e| e.on == "get_current_location" && e.facts.parameter.as_deref() == Some("location")
    ));
}

#[test]
fn a_malformed_dependency_names_its_place_and_loads_nothing() {
    let engine = engine();
    let before = engine.tools().len();
    let bad = r#"{"tools": [{"name": "a", "description": "A.",
        "_meta": {"x-toolgraph": {"dependsOn": [{"name": "b", "parameter_name": 7}]}}}]}"#;
    let err = engine
        .register_text(Some("test/bad-deps.json"), bad, Some(Format::Mcp))
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("parameter_name"), "{text}");
    assert!(text.contains("dependsOn[0]"), "{text}");
    match &err {
        Error::InvalidTool { location, tool, .. } => {
            assert_eq!(tool, "a");
            assert_eq!(location.pointer.as_deref(), Some("/tools/0"));
        }
        other => panic!("{other:?}"),
    }
    let unknown = r#"{"tools": [{"name": "a", "description": "A.",
        "_meta": {"x-toolgraph": {"dependsOn": [{"name": "b", "weight": 1}]}}}]}"#;
    let text = engine
        .register_text(Some("test/bad-deps.json"), unknown, Some(Format::Mcp))
        .unwrap_err()
        .to_string();
    assert!(text.contains("unknown field `weight`"), "{text}");
    assert_eq!(engine.tools().len(), before, "nothing loaded");
}

#[test]
fn dependency_aware_search_lists_prerequisites_right_after_their_tool() {
    let engine = engine();
    let anyone = Caller::default();
    let plain = search(&engine, &anyone, false);
    let with = search(&engine, &anyone, true);
    assert_eq!(plain.matches[0].tool, "share_location_via_email");
    assert_eq!(
        with.matches[0].tool, plain.matches[0].tool,
        "top match unchanged"
    );
    assert!(
        plain
            .matches
            .iter()
            .all(|m| m.details.prerequisite_of.is_none())
    );

    // direct prerequisites (declared order: nearest first), then theirs
    let order = names(&with);
    assert_eq!(
        &order[..4],
        [
            "share_location_via_email",
            "get_current_location",
            "validate_email",
            "get_location_service_status"
        ],
        "{order:?}"
    );
    let unique: HashSet<&str> = order.iter().copied().collect();
    assert_eq!(unique.len(), order.len(), "each tool once: {order:?}");

    let top = &with.matches[0];
    let email = &with.matches[2];
    let why = email.details.prerequisite_of.as_ref().unwrap();
    assert_eq!(why.tool, "share_location_via_email");
    assert_eq!(why.provenance, Provenance::Curated);
    assert_eq!(why.facts.parameter.as_deref(), Some("email_address"));
    assert_eq!(
        why.facts.kind.as_deref(),
        Some("PARAMETER_DIRECTLY_DEPENDS_ON")
    );
    assert_eq!(why.depth, 1);
    assert!(
        why.explain
            .starts_with("runs before `share_location_via_email` (declared")
            && why.explain.contains("parameter `email_address`")
            && why.explain.contains("must be valid"),
        "{}",
        why.explain
    );
    // The edge's confidence (1) times how much the request supports it:
    // between half and all of the match's.
    assert!(
        email.confidence <= top.confidence + 1e-6 && email.confidence >= top.confidence * 0.5,
        "{} vs {}",
        email.confidence,
        top.confidence
    );
    let status = &with.matches[3];
    let why = status.details.prerequisite_of.as_ref().unwrap();
    assert_eq!(
        why.tool, "get_current_location",
        "needed by the nearer tool"
    );
    assert_eq!(why.depth, 2);

    // the match's own list is in running order: each after what it needs
    let running = &top.prerequisites;
    let pos = |n: &str| running.iter().position(|p| p == n).unwrap();
    assert!(pos("get_location_service_status") < pos("get_current_location"));
    assert!(running.contains(&"validate_email".to_string()));
    assert!(!running.contains(&"share_location_via_email".to_string()));
}

#[test]
fn a_denied_prerequisite_never_leaks_nor_is_walked_through() {
    let engine = engine();
    let r = search(&engine, &agent("no_validate"), true);
    let json = serde_json::to_string(&r).unwrap();
    assert!(!json.contains("validate_email"), "{json}");
    assert_eq!(r.matches[0].tool, "share_location_via_email");
    let edges = engine.dependencies(&agent("no_validate"), None).unwrap();
    assert!(
        edges
            .iter()
            .all(|e| e.on != "validate_email" && e.tool != "validate_email")
    );
    assert!(matches!(
        engine.dependencies(&agent("no_validate"), Some("validate_email")),
        Err(Error::NotFound { .. })
    ));

    // the status tool is reached only through the denied location tool
    let r = search(&engine, &agent("no_location"), true);
    let json = serde_json::to_string(&r).unwrap();
    assert!(!json.contains("get_current_location"), "{json}");
    let top = &r.matches[0];
    assert!(
        !top.prerequisites
            .contains(&"get_location_service_status".to_string()),
        "{:?}",
        top.prerequisites
    );
    assert!(r.matches.iter().all(|m| {
        m.details
            .prerequisite_of
            .as_ref()
            .is_none_or(|p| p.tool != "get_current_location")
    }));
}

// ---- inference, measured -------------------------------------------------

/// Precision and recall of inferred edges against labelled ones.
#[derive(Debug, Default, Clone, Copy)]
struct Score {
    inferred: usize,
    correct: usize,
    labelled: usize,
    found: usize,
}

impl Score {
    fn precision(&self) -> f64 {
        self.correct as f64 / self.inferred.max(1) as f64
    }
    fn recall(&self) -> f64 {
        self.found as f64 / self.labelled.max(1) as f64
    }
}

/// Inferred edges of a catalog loaded without its declared ones.
fn inferred(engine: &Engine) -> Vec<DependencyEdge> {
    engine
        .dependencies(&Caller::default(), None)
        .unwrap()
        .into_iter()
        .filter(|e| e.provenance == Provenance::Extracted)
        .collect()
}

/// Scores the edges at or above each threshold; `judged` limits precision
/// to the (tool, parameter) pairs the labels speak about (`None`: all).
fn score(
    edges: &[DependencyEdge],
    labels: &HashSet<(String, String)>,
    judged: Option<&HashSet<(String, String)>>,
    threshold: f32,
) -> Score {
    let kept: Vec<&DependencyEdge> = edges.iter().filter(|e| e.confidence >= threshold).collect();
    let pairs: HashSet<(String, String)> = kept
        .iter()
        .map(|e| (e.tool.clone(), e.on.clone()))
        .collect();
    let judged_edges: Vec<&DependencyEdge> = kept
        .iter()
        .copied()
        .filter(|e| {
            judged.is_none_or(|j| {
                j.contains(&(
                    e.tool.clone(),
                    e.facts.parameter.clone().unwrap_or_default(),
                ))
            })
        })
        .collect();
    Score {
        inferred: judged_edges.len(),
        correct: judged_edges
            .iter()
            .filter(|e| labels.contains(&(e.tool.clone(), e.on.clone())))
            .count(),
        labelled: labels.len(),
        found: labels.iter().filter(|l| pairs.contains(*l)).count(),
    }
}

const THRESHOLDS: [f32; 6] = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8];

fn report(name: &str, edges: &[DependencyEdge], s: &dyn Fn(f32) -> Score) -> Score {
    println!("{name}: {} inferred edges (any confidence)", edges.len());
    println!("  threshold  inferred  precision  recall");
    for t in THRESHOLDS {
        let x = s(t);
        println!(
            "  {t:>9.2}  {:>8}  {:>9.3}  {:>6.3}   ({} of {} labelled found)",
            x.inferred,
            x.precision(),
            x.recall(),
            x.found,
            x.labelled
        );
    }
    let chosen = s(toolgraph::rank::RankConfig::default().infer_threshold);
    println!(
        "  chosen threshold {:.2}: precision {:.3}, recall {:.3}",
        toolgraph::rank::RankConfig::default().infer_threshold,
        chosen.precision(),
        chosen.recall()
    );
    chosen
}

/// ToolLinkOS' parameter dependencies (`PARAMETER_*`, the edges a
/// parameter's entity can reveal), inferred from the catalog with every
/// declared edge removed.
#[test]
fn inference_on_toollinkos_parameter_dependencies() {
    let dir = root().join("benches/datasets/toollinkos");
    let text = std::fs::read_to_string(dir.join("tools.jsonl")).unwrap();
    let mut labels = HashSet::new();
    let mut stripped = String::new();
    for line in text.lines() {
        let mut v: serde_json::Value = serde_json::from_str(line).unwrap();
        let name = v["name"].as_str().unwrap().to_string();
        for d in v["meta"]["depends_on"].as_array().unwrap() {
            if d["dependence_type"]
                .as_str()
                .is_some_and(|k| k.starts_with("PARAMETER"))
            {
                labels.insert((name.clone(), d["name"].as_str().unwrap().to_string()));
            }
        }
        v["meta"]["depends_on"] = serde_json::json!([]);
        stripped.push_str(&v.to_string());
        stripped.push('\n');
    }
    let engine = Engine::open(EngineOptions::memory(Embeddings::Off)).unwrap();
    engine
        .load_paths(&[root().join("ontology")], Some(Format::Turtle))
        .unwrap();
    engine
        .register_text(Some("toollinkos.jsonl"), &stripped, Some(Format::Jsonl))
        .unwrap();
    let edges = inferred(&engine);
    let chosen = report("toollinkos", &edges, &|t| score(&edges, &labels, None, t));
    assert!(chosen.inferred > 0, "the inference finds edges");
    // measured 0.819 precision, 0.641 recall at 0.7 (README, "Dependencies");
    // issue 41's bar: precision 0.80 at recall 0.40
    assert!(
        chosen.precision() >= 0.8,
        "followed inferred edges must be mostly right: {chosen:?}"
    );
    assert!(chosen.recall() >= 0.4, "{chosen:?}");
}

/// Seal-Tools' nested calls (an argument that is an earlier call's output),
/// from the original repository's dev and test files; precision is judged
/// on the (tool, parameter) pairs the labels cover.
#[test]
fn inference_on_sealtools_nested_calls() {
    let dir = root().join("benches/datasets/sealtools");
    let mut labels = HashSet::new();
    let mut judged = HashSet::new();
    for line in std::fs::read_to_string(dir.join("dependencies.jsonl"))
        .unwrap()
        .lines()
    {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        for e in v["edges"].as_array().unwrap() {
            let tool = e["tool"].as_str().unwrap().to_string();
            labels.insert((tool.clone(), e["depends_on"].as_str().unwrap().to_string()));
            judged.insert((tool, e["parameter"].as_str().unwrap().to_string()));
        }
    }
    let engine = Engine::open(EngineOptions::memory(Embeddings::Off)).unwrap();
    engine
        .load_paths(&[root().join("ontology")], Some(Format::Turtle))
        .unwrap();
    engine
        .load_paths(&[dir.join("tools.jsonl")], Some(Format::Jsonl))
        .unwrap();
    let edges = inferred(&engine);
    let chosen = report("sealtools", &edges, &|t| {
        score(&edges, &labels, Some(&judged), t)
    });
    assert!(chosen.labelled >= 80, "{chosen:?}");
    assert!(
        edges
            .iter()
            .all(|e| e.confidence > 0.0 && e.confidence <= 1.0)
    );
}

/// The seeds' curated edges, inferred with the `dependsOn` lines removed.
#[test]
fn inference_on_the_seeds_curated_edges() {
    let mut labels = HashSet::new();
    let declared = crate::rank::graph_only();
    for e in declared.dependencies(&Caller::default(), None).unwrap() {
        if e.provenance == Provenance::Curated {
            labels.insert((e.tool, e.on));
        }
    }
    let engine = Engine::open(EngineOptions::memory(Embeddings::Off)).unwrap();
    engine
        .load_paths(&[root().join("ontology")], Some(Format::Turtle))
        .unwrap();
    let mut sources = Vec::new();
    for f in toolgraph::import::collect_files(&[root().join("seeds")]).unwrap() {
        let text = std::fs::read_to_string(&f).unwrap();
        let kept: Vec<&str> = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("tg:dependsOn"))
            .collect();
        sources.push(Source {
            name: f.display().to_string(),
            data: SourceData::Turtle(kept.join("\n")),
        });
    }
    engine.load(&sources).unwrap();
    let edges = inferred(&engine);
    let chosen = report("seeds", &edges, &|t| score(&edges, &labels, None, t));
    assert!(chosen.labelled >= 15, "{chosen:?}");
    // measured 0.686 of the declared edges recovered at 0.7
    assert!(chosen.recall() >= 0.5, "{chosen:?}");
    let found: BTreeSet<String> = edges
        .iter()
        .filter(|e| labels.contains(&(e.tool.clone(), e.on.clone())))
        .map(|e| format!("{} -> {}", e.tool, e.on))
        .collect();
    println!("  seeds edges recovered: {found:?}");
    let t = toolgraph::rank::RankConfig::default().infer_threshold;
    let extra: BTreeSet<String> = edges
        .iter()
        .filter(|e| e.confidence >= t && !labels.contains(&(e.tool.clone(), e.on.clone())))
        .map(|e| {
            format!(
                "{} -({})-> {} {:.2}",
                e.tool,
                e.facts.parameter.clone().unwrap_or_default(),
                e.on,
                e.confidence
            )
        })
        .collect();
    println!("  followed but not declared: {extra:#?}");
}

// ---- the harness -----------------------------------------------------------

/// `eval --dependencies` on ToolLinkOS (lexical channel, no model needed;
/// the accuracy gate runs joint with the real model): nDCG@10 over all gold
/// rises by at least 0.15, the primary tool's Top-1 does not move.
#[test]
fn dependency_aware_ranking_lifts_ndcg_and_keeps_the_primary() {
    use toolgraph::eval::{self, EvalOptions, RunSpec, Setting};
    let dir = root().join("benches/datasets/toollinkos");
    let tools = dir.join("tools.jsonl");
    let queries = eval::sample(
        &eval::load_queries(&dir.join("queries.jsonl")).unwrap(),
        300,
        7,
    );
    let engine = eval::engine_for(&tools, Embeddings::Off, false, None).unwrap();
    let spec = RunSpec {
        dataset: "toollinkos".into(),
        tools,
        queries,
        modes: vec![Mode::Lexical],
        setting: Setting::Global,
        options: EvalOptions {
            match_by_name: false,
            k_max: 10,
        },
        embeddings: Embeddings::Off,
        progress: false,
        rank: None,
        dependencies: true,
        context: true,
        compare_context: false,
    };
    let reports = eval::run_on(&engine, &spec).unwrap();
    let [plain, deps] = &reports[..] else {
        panic!("two reports: {reports:?}")
    };
    assert_eq!(
        (plain.mode.as_str(), deps.mode.as_str()),
        ("lexical", "lexical+deps")
    );
    let (p, d) = (&plain.overall, &deps.overall);
    println!(
        "toollinkos lexical: nDCG@10 {:.3} -> {:.3}, R@10 {:.3} -> {:.3}, primary Top-1 {:?} -> {:?}",
        p.ndcg10, d.ndcg10, p.r10, d.r10, p.primary_top1, d.primary_top1
    );
    assert!(d.ndcg10 >= p.ndcg10 + 0.15, "{p:?}\n{d:?}");
    assert!(d.r10 > p.r10);
    let (pp, dp) = (p.primary_top1.unwrap(), d.primary_top1.unwrap());
    assert!((pp - dp).abs() <= 0.005, "primary Top-1 {pp} -> {dp}");
}

/// The alternative-producers stress catalog (ToolLinkOS with every
/// producer of a parameter declared as an alternative), graph and lexical.
fn alternatives_engine() -> &'static Engine {
    static E: std::sync::OnceLock<Engine> = std::sync::OnceLock::new();
    E.get_or_init(|| {
        let tools = root().join("benches/datasets/toollinkos_alternatives/tools.jsonl");
        toolgraph::eval::engine_for(&tools, Embeddings::Off, false, None).unwrap()
    })
}

fn with_prerequisites(text: &str) -> SearchResponse {
    among(text, None)
}

/// A dependency-aware search, among `candidates` when given.
fn among(text: &str, candidates: Option<&[&str]>) -> SearchResponse {
    alternatives_engine()
        .search(&SearchRequest {
            text: text.into(),
            dependencies: true,
            limit: 10,
            candidates: candidates.map(|c| c.iter().map(|n| n.to_string()).collect()),
            ..SearchRequest::default()
        })
        .unwrap()
}

#[test]
fn a_prerequisite_is_placed_only_when_the_request_does_not_give_its_value() {
    let given = with_prerequisites(
        "I need to share the address of our meeting spot, 123 Main St, with my colleague. \
         Can you email it to jane.smith@example.com?",
    );
    let m = &given.matches[0];
    assert_eq!(m.tool, "share_location_via_email", "{:?}", names(&given));
    let plan = m.plan.as_ref().expect("a plan");
    // The place is given: nothing finds the current location ...
    let skipped = plan
        .supplied
        .iter()
        .find(|s| s.tool == "get_current_location")
        .unwrap_or_else(|| panic!("{plan:#?}"));
    assert_eq!(
        (skipped.parameter.as_str(), skipped.value.as_str()),
        ("location", "Main St")
    );
    assert!(!m.prerequisites.iter().any(|p| p == "get_current_location"));
    assert!(!names(&given).contains(&"get_current_location"));
    // ... but the given address is still checked, and the plan says for what.
    let check = plan
        .steps
        .iter()
        .find(|s| s.tool == "validate_email")
        .unwrap_or_else(|| panic!("{plan:#?}"));
    assert_eq!(check.feeds, "share_location_via_email");
    assert_eq!(check.parameter.as_deref(), Some("email_address"));
    // Asked for "my current location", the request gives no place.
    // (Among the tools involved: without the model, graph and BM25 put
    // the location tools first.)
    let needed = among(
        "Can you send my current location to my friend at john.doe@example.com?",
        Some(&[
            "share_location_via_email",
            "send_reminder_email",
            "get_current_location",
            "get_location_service_status",
            "set_location_service_status",
            "validate_email",
        ]),
    );
    let m = needed
        .matches
        .iter()
        .find(|m| m.tool == "share_location_via_email")
        .unwrap_or_else(|| panic!("{:?}", names(&needed)));
    assert!(
        m.prerequisites.iter().any(|p| p == "get_current_location"),
        "{:?}",
        m.plan
    );
    // Steps run in order: each after what it needs.
    let steps: Vec<&str> = m
        .plan
        .as_ref()
        .unwrap()
        .steps
        .iter()
        .map(|s| s.tool.as_str())
        .collect();
    assert_eq!(steps, m.prerequisites, "the plan is the running order");
}

#[test]
fn among_alternative_producers_the_request_picks_one() {
    let r = with_prerequisites(
        "I just finished a book and want to dive into 'The Great Gatsby.' Can you download it \
         for me from Audible?",
    );
    let m = &r.matches[0];
    assert_eq!(m.tool, "download_audible_book", "{:?}", names(&r));
    let plan = m.plan.as_ref().expect("a plan");
    let login = plan
        .steps
        .iter()
        .find(|s| s.parameter.as_deref() == Some("session_id"))
        .unwrap_or_else(|| panic!("{plan:#?}"));
    assert_eq!(login.tool, "audible_account_login");
    // The other 28 producers of a session are named, not listed.
    assert!(login.alternatives.len() >= 20, "{login:?}");
    assert!(
        login
            .alternatives
            .iter()
            .any(|a| a == "libby_account_login")
    );
    // Only the chosen one is listed for it (other logins may follow as
    // other matches' prerequisites).
    let for_it: Vec<&str> = r
        .matches
        .iter()
        .filter(|x| x.tool.ends_with("_login"))
        .filter(|x| {
            x.details
                .prerequisite_of
                .as_ref()
                .is_some_and(|p| p.tool == "download_audible_book")
        })
        .map(|x| x.tool.as_str())
        .collect();
    assert_eq!(for_it, ["audible_account_login"], "{:?}", names(&r));
    let steps = &m.plan.as_ref().unwrap().steps;
    let session_logins: Vec<&str> = steps
        .iter()
        .filter(|s| s.parameter.as_deref() == Some("session_id"))
        .map(|s| s.tool.as_str())
        .collect();
    assert_eq!(session_logins, ["audible_account_login"], "{steps:#?}");
}

/// Inference on real OpenAPI specs (benches/datasets/rest: four public
/// specs, 38 labelled edges), each spec in its own catalog, no edge
/// declared: precision on the labelled (tool, parameter) pairs, recall
/// over the labels, at the threshold ranking follows.
#[test]
fn inference_on_rest_specs() {
    let dir = root().join("benches/datasets/rest");
    let labels: Vec<serde_json::Value> = std::fs::read_to_string(dir.join("labels.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let field = |v: &serde_json::Value, k: &str| v[k].as_str().unwrap().to_string();
    let specs: BTreeSet<String> = labels.iter().map(|l| field(l, "spec")).collect();
    let threshold = toolgraph::rank::RankConfig::default().infer_threshold;
    let mut total = Score {
        inferred: 0,
        correct: 0,
        labelled: 0,
        found: 0,
    };
    for spec in &specs {
        let mine = labels.iter().filter(|l| field(l, "spec") == *spec);
        let pairs: HashSet<(String, String)> = mine
            .clone()
            .map(|l| (field(l, "tool"), field(l, "producer")))
            .collect();
        let judged: HashSet<(String, String)> = mine
            .map(|l| (field(l, "tool"), field(l, "parameter")))
            .collect();
        // (link-example's operations have no description: not strict)
        let mut opts = EngineOptions::memory(Embeddings::Off);
        opts.strict = false;
        let engine = Engine::open(opts).unwrap();
        engine
            .load_paths(&[root().join("ontology")], Some(Format::Turtle))
            .unwrap();
        engine.load_paths(&[dir.join(spec)], None).unwrap();
        let edges = inferred(&engine);
        let s = score(&edges, &pairs, Some(&judged), threshold);
        println!("{spec}: {s:?}");
        total.inferred += s.inferred;
        total.correct += s.correct;
        total.labelled += s.labelled;
        total.found += s.found;
    }
    println!(
        "rest: precision {:.3}, recall {:.3} ({total:?})",
        total.precision(),
        total.recall()
    );
    // measured precision 1.000, recall 0.906 (29 of 32 labelled pairs;
    // README, "Dependencies"); issue 41's bar
    assert!(total.precision() >= 0.8, "{total:?}");
    assert!(total.recall() >= 0.4, "{total:?}");
}
