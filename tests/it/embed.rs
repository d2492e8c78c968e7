//! Embeddings with the real model (installed by `scripts/setup.sh`; a
//! missing model fails these tests with that instruction), the vector index
//! and its incremental persistence.

use std::sync::OnceLock;

use toolgraph::Error;
use toolgraph::embed::{
    Embedder, FastEmbedder, HashEmbedder, VectorIndex, default_model_dir, index_health, sync_index,
};
use toolgraph::model::{Param, Tool};

/// The real model, loaded once for the whole test binary.
fn model() -> &'static FastEmbedder {
    static MODEL: OnceLock<FastEmbedder> = OnceLock::new();
    MODEL.get_or_init(|| match FastEmbedder::load(&default_model_dir()) {
        Ok(m) => m,
        Err(e) => panic!("{e}"),
    })
}

fn cos(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn real_model_ranks_paraphrases_above_unrelated_text() {
    let m = model();
    assert_eq!(m.dim(), 384);
    assert!(
        m.model_id().starts_with("all-MiniLM-L6-v2-int8@8199be6f"),
        "{}",
        m.model_id()
    );
    let q = m.embed_query("book a flight to Paris").unwrap();
    let docs = m
        .embed_documents(&[
            "reserve an airline seat".to_string(),
            "reserve a table at a restaurant".to_string(),
            "sha256 checksum".to_string(),
        ])
        .unwrap();
    for v in docs.iter().chain([&q]) {
        let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "unit length, got {norm}");
    }
    let (airline, restaurant, checksum) = (cos(&q, &docs[0]), cos(&q, &docs[1]), cos(&q, &docs[2]));
    println!("cos airline={airline:.4} restaurant={restaurant:.4} checksum={checksum:.4}");
    assert!(airline > restaurant, "{airline} > {restaurant}");
    assert!(restaurant > checksum, "{restaurant} > {checksum}");
    // A query embeds the same alone as inside a batch.
    let alone = m.embed_query("reserve an airline seat").unwrap();
    assert!(cos(&alone, &docs[0]) > 0.999);
}

#[test]
fn real_model_handles_empty_and_long_texts() {
    let m = model();
    let long = "flight ".repeat(2000);
    let v = m.embed_documents(&[String::new(), long]).unwrap();
    assert_eq!(v.len(), 2);
    assert!(v.iter().all(|x| x.len() == 384));
    assert!(m.embed_documents(&[]).unwrap().is_empty());
}

fn catalog() -> Vec<Tool> {
    let specs = [
        ("flight_book", "Book a flight between two airports"),
        ("flight_search", "Search flights by date and destination"),
        ("hotel_reserve", "Reserve a hotel room for some nights"),
        ("restaurant_book", "Book a table at a restaurant"),
        ("weather_forecast", "Get the weather forecast for a city"),
        ("currency_convert", "Convert an amount between currencies"),
        ("email_send", "Send an email to a recipient"),
        ("calendar_event_create", "Create a calendar event"),
        ("file_checksum", "Compute the sha256 checksum of a file"),
        ("music_play", "Play a song or playlist"),
        ("movie_tickets_buy", "Buy tickets for a movie showing"),
        ("taxi_order", "Order a taxi to an address"),
        ("stock_quote_get", "Get the latest stock quote"),
        ("translate_text", "Translate text to another language"),
        ("reminder_set", "Set a reminder at a time"),
        ("pdf_merge", "Merge several PDF files"),
        ("car_rental_book", "Rent a car at an airport"),
        ("bank_balance_get", "Get the balance of a bank account"),
        ("news_headlines", "Fetch today's news headlines"),
        ("image_resize", "Resize an image to given dimensions"),
    ];
    specs
        .iter()
        .map(|(name, desc)| Tool {
            iri: format!("urn:tool:{name}"),
            id: (*name).to_string(),
            name: (*name).to_string(),
            description: (*desc).to_string(),
            params: vec![Param {
                name: "query".into(),
                description: "What to act on".into(),
                ..Default::default()
            }],
            ..Default::default()
        })
        .collect()
}

#[test]
fn incremental_sync_with_the_real_model() {
    let m = model();
    let tmp = tempfile::tempdir().unwrap();
    let mut tools = catalog();

    let (idx, r) = sync_index(Some(tmp.path()), &tools, m, false).unwrap();
    assert_eq!(
        (r.embedded, r.reused, r.dropped, r.total, r.full_reindex),
        (20, 0, 0, 20, true)
    );
    assert_eq!(r.model_id, m.model_id());
    assert!(tmp.path().join("vectors.bin").is_file());
    assert!(tmp.path().join("vectors.json").is_file());

    // Dense retrieval works on the built index.
    let q = m.embed_query("I need to fly to Denver").unwrap();
    let top = idx.top_k(&q, 3, None);
    assert!(top.iter().any(|(id, _)| id == "flight_book"), "{top:?}");

    // A fresh call (as a new process would) reuses everything.
    let (idx2, r) = sync_index(Some(tmp.path()), &tools, m, false).unwrap();
    assert_eq!(
        (r.embedded, r.reused, r.dropped, r.full_reindex),
        (0, 20, 0, false)
    );
    assert_eq!(idx.get("pdf_merge"), idx2.get("pdf_merge"));

    // One edited description: exactly one embedding.
    tools[4].description = "Hourly rain and temperature forecast".into();
    let h = index_health(tmp.path(), &tools, m.model_id()).unwrap();
    assert_eq!((h.count, h.dim, h.stale), (20, 384, 1));
    let (_, r) = sync_index(Some(tmp.path()), &tools, m, false).unwrap();
    assert_eq!((r.embedded, r.reused, r.dropped, r.total), (1, 19, 0, 20));

    // One removed tool: one dropped vector.
    tools.remove(7);
    let (idx3, r) = sync_index(Some(tmp.path()), &tools, m, false).unwrap();
    assert_eq!((r.embedded, r.reused, r.dropped, r.total), (0, 19, 1, 19));
    assert!(idx3.get("calendar_event_create").is_none());

    // Another model id: everything is re-embedded.
    let double = HashEmbedder::new();
    let (_, r) = sync_index(Some(tmp.path()), &tools, &double, false).unwrap();
    assert_eq!((r.embedded, r.reused, r.full_reindex), (19, 0, true));
    assert_eq!(r.model_id, double.model_id());
    let h = index_health(tmp.path(), &tools, m.model_id()).unwrap();
    assert_eq!(h.stale, 19, "index now belongs to the double");
}

#[test]
fn corrupt_vectors_file_is_rebuilt() {
    let e = HashEmbedder::new();
    let tmp = tempfile::tempdir().unwrap();
    let tools = catalog();
    sync_index(Some(tmp.path()), &tools, &e, false).unwrap();
    let bin = tmp.path().join("vectors.bin");
    let len = std::fs::metadata(&bin).unwrap().len();
    std::fs::write(&bin, vec![0u8; (len / 2) as usize]).unwrap();
    let (idx, r) = sync_index(Some(tmp.path()), &tools, &e, false).unwrap();
    assert_eq!((r.embedded, r.full_reindex, idx.len()), (20, true, 20));
    let (_, r) = sync_index(Some(tmp.path()), &tools, &e, false).unwrap();
    assert_eq!(r.reused, 20);
}

#[test]
fn index_top_k_filter_and_ties() {
    let e = HashEmbedder::new();
    let (idx, _): (VectorIndex, _) = sync_index(None, &catalog(), &e, false).unwrap();
    let q = e.embed_query("book a flight").unwrap();
    let all = idx.top_k(&q, 100, None);
    assert_eq!(all.len(), 20);
    let scores = idx.scores(&q);
    let mut naive: Vec<(String, f32)> = idx.ids().iter().map(str::to_string).zip(scores).collect();
    naive.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    assert_eq!(all, naive);
    let no_flights = |id: &str| !id.starts_with("flight");
    let filtered = idx.top_k(&q, 5, Some(&no_flights));
    assert_eq!(filtered.len(), 5);
    assert!(filtered.iter().all(|(id, _)| !id.starts_with("flight")));
    assert_eq!(
        filtered,
        naive
            .into_iter()
            .filter(|(id, _)| no_flights(id))
            .take(5)
            .collect::<Vec<_>>()
    );
}

#[test]
fn missing_model_dir_is_a_clear_model_error() {
    let tmp = tempfile::tempdir().unwrap();
    match FastEmbedder::load(&tmp.path().join("absent")) {
        Err(Error::Model { message: msg, .. }) => {
            assert!(msg.contains("scripts/setup.sh"), "{msg}")
        }
        other => panic!("expected Error::Model, got {other:?}"),
    }
}

/// Copies the real model directory into `dst`, replacing `file` by `content`
/// (or leaving it out when `None`).
fn model_copy(dst: &std::path::Path, file: &str, content: Option<&[u8]>) {
    let src = default_model_dir();
    for name in [
        "libonnxruntime.so",
        "model.onnx",
        "tokenizer.json",
        "config.json",
        "special_tokens_map.json",
        "tokenizer_config.json",
    ] {
        if name == file {
            if let Some(c) = content {
                std::fs::write(dst.join(name), c).unwrap();
            }
        } else {
            std::fs::copy(src.join(name), dst.join(name)).unwrap_or_else(|e| {
                panic!("{}: {e}; run `scripts/setup.sh`", src.join(name).display())
            });
        }
    }
}

#[test]
fn broken_model_files_are_errors_not_panics() {
    model(); // the real model must be installed for the copies below
    let cases: [(&str, Option<&[u8]>, &str); 4] = [
        (
            "model.onnx",
            Some(b"this is not an onnx graph"),
            "model.onnx",
        ),
        ("libonnxruntime.so", None, "missing libonnxruntime.so"),
        ("tokenizer.json", Some(b"{ not json"), "tokenizer"),
        ("config.json", Some(b""), "missing config.json"),
    ];
    for (file, content, expect) in cases {
        let tmp = tempfile::tempdir().unwrap();
        model_copy(tmp.path(), file, content);
        match FastEmbedder::load(tmp.path()) {
            Err(Error::Model { message: msg, .. }) => {
                assert!(msg.contains("scripts/setup.sh"), "{file}: {msg}");
                assert!(msg.contains(expect), "{file}: {msg}");
            }
            other => panic!("{file}: expected Error::Model, got {other:?}"),
        }
    }
}

#[test]
fn an_in_memory_engine_reuses_the_last_snapshots_vectors() {
    use std::sync::Arc;
    use toolgraph::{Embeddings, Engine, EngineOptions};
    let root = crate::common::root();
    let engine = Engine::open(EngineOptions::memory(Embeddings::Custom(Arc::new(
        HashEmbedder::new(),
    ))))
    .unwrap();
    let first = engine
        .load_paths(&[root.join("ontology"), root.join("seeds")], None)
        .unwrap();
    let seeds = first.embeddings.unwrap();
    assert!(seeds.embedded >= 150, "{seeds:?}");
    let tmp = tempfile::tempdir().unwrap();
    let one = tmp.path().join("one.jsonl");
    std::fs::write(
        &one,
        r#"{"id": "ferry_ticket_book", "name": "ferry_ticket_book", "description": "Book a ferry ticket"}"#,
    )
    .unwrap();
    let next = engine.load_paths(&[one], None).unwrap().embeddings.unwrap();
    assert_eq!(next.embedded, 1, "{next:?}");
    assert_eq!(next.reused, seeds.total);
    assert!(!next.full_reindex);
}

/// Re-registering an unchanged catalog — in the same process or after a
/// restart — passes the seed constraints (its minted verbs and terms are
/// declared again), keeps the store as it was and re-embeds nothing.
#[test]
fn re_registering_an_unchanged_catalog_re_embeds_nothing() {
    use std::sync::Arc;
    use toolgraph::synth::SynthOptions;
    use toolgraph::{Embeddings, Engine, EngineOptions};
    let root = crate::common::root();
    let tmp = tempfile::tempdir().unwrap();
    let open = || {
        let mut opts = EngineOptions::memory(Embeddings::Custom(Arc::new(HashEmbedder::new())));
        opts.data_dir = Some(tmp.path().join("store"));
        Engine::open(opts).unwrap()
    };
    let engine = open();
    engine.load_paths(&[root.join("ontology")], None).unwrap();
    let synthetic = toolgraph::synth::from_ontology(
        &root.join("ontology"),
        &SynthOptions {
            tools: 300,
            queries: 0,
            seed: 3,
        },
    )
    .unwrap();
    let file = tmp.path().join("tools.jsonl");
    std::fs::write(&file, synthetic.tools_jsonl()).unwrap();
    let first = engine
        .load_paths(std::slice::from_ref(&file), None)
        .unwrap();
    assert_eq!(first.embeddings.as_ref().unwrap().embedded, 300);
    let quads = first.store.quads_after;
    let again = engine
        .load_paths(std::slice::from_ref(&file), None)
        .unwrap();
    let sync = again.embeddings.unwrap();
    assert_eq!(sync.embedded, 0, "{sync:?}");
    assert_eq!(sync.reused, sync.total, "{sync:?}");
    assert_eq!(again.store.quads_after, quads, "the store is as it was");
    drop(engine);
    let reopened = open();
    let after_restart = reopened.load_paths(&[file], None).unwrap();
    assert_eq!(after_restart.embeddings.unwrap().embedded, 0);
    assert_eq!(after_restart.store.quads_after, quads);
    assert_eq!(reopened.catalog_size(), 300);
}

/// The one-core session a registration embeds with beside the store write
/// gives the very vectors the shared session gives (a tool's vector must
/// not depend on which of the two embedded it).
#[test]
fn embedding_beside_other_work_gives_the_same_vectors() {
    let m = model();
    let texts: Vec<String> = [
        "reserve an airline seat",
        "book a table for two at an Italian restaurant tonight",
        "",
        "sha256 checksum of a file",
        "Parameters: flight number: the carrier code and number; date: departure day",
    ]
    .iter()
    .map(|t| t.to_string())
    .collect();
    let shared = m.embed_documents(&texts).unwrap();
    let beside = m
        .embed_documents_beside(&texts)
        .expect("the real model has a one-core mode")
        .unwrap();
    assert_eq!(beside.len(), texts.len());
    for (i, (a, b)) in shared.iter().zip(&beside).enumerate() {
        assert_eq!(a, b, "text {i}: {:?}", texts[i]);
    }
}

/// An embedder without the one-core mode: registrations embed everything
/// in the sync, nothing ahead.
#[derive(Debug)]
struct NoBeside(HashEmbedder);

impl Embedder for NoBeside {
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn model_id(&self) -> &str {
        self.0.model_id()
    }
    fn embed_query(&self, text: &str) -> toolgraph::Result<Vec<f32>> {
        self.0.embed_query(text)
    }
    fn embed_documents(&self, texts: &[String]) -> toolgraph::Result<Vec<Vec<f32>>> {
        self.0.embed_documents(texts)
    }
}

/// Registering with vectors embedded ahead (beside the store write) ends
/// in the same catalog as embedding everything after it: the same tools
/// embedded, the same ranking and scores. A tool two sources describe reads
/// back with merged texts; its vector is the merged text's.
#[test]
fn embedding_ahead_changes_no_vector_and_no_ranking() {
    use std::sync::Arc;
    use toolgraph::synth::SynthOptions;
    use toolgraph::{Embeddings, Engine, EngineOptions, SearchRequest};
    let root = crate::common::root();
    let tmp = tempfile::tempdir().unwrap();
    let synthetic = toolgraph::synth::from_ontology(
        &root.join("ontology"),
        &SynthOptions {
            tools: 400,
            queries: 40,
            seed: 11,
        },
    )
    .unwrap();
    let file = tmp.path().join("tools.jsonl");
    std::fs::write(&file, synthetic.tools_jsonl()).unwrap();
    // The first tool again, from a second source, with a longer description.
    let first: serde_json::Value =
        serde_json::from_str(synthetic.tools_jsonl().lines().next().unwrap()).unwrap();
    let mut again = first.clone();
    again["description"] = serde_json::Value::String(format!(
        "{} It also says more than the first source did.",
        first["description"].as_str().unwrap_or_default()
    ));
    let other = tmp.path().join("other.jsonl");
    std::fs::write(&other, again.to_string()).unwrap();

    let engines: Vec<(Engine, u64)> = [
        Arc::new(HashEmbedder::new()) as Arc<dyn Embedder>,
        Arc::new(NoBeside(HashEmbedder::new())),
    ]
    .into_iter()
    .map(|embedder| {
        let engine = Engine::open(EngineOptions::memory(Embeddings::Custom(embedder))).unwrap();
        engine.load_paths(&[root.join("ontology")], None).unwrap();
        let loaded = engine
            .load_paths(&[file.clone(), other.clone()], None)
            .unwrap();
        let sync = loaded.embeddings.unwrap();
        assert_eq!(sync.embedded, 400, "{sync:?}");
        (engine, sync.ahead as u64)
    })
    .collect();
    assert_eq!(engines[1].1, 0, "no one-core mode, nothing ahead");
    // The double embeds in microseconds and the store write takes far
    // longer, so with a second core the sync finds the vectors ahead.
    if std::thread::available_parallelism().map_or(1, usize::from) >= 2 {
        assert!(engines[0].1 > 0, "embedded ahead: {}", engines[0].1);
    }
    assert!(engines[0].1 <= 400);
    for q in &synthetic.queries {
        let text = q["query"].as_str().unwrap();
        let answers: Vec<Vec<(String, String, String)>> = engines
            .iter()
            .map(|(engine, _)| {
                let request = SearchRequest {
                    text: text.into(),
                    limit: 10,
                    explain: true,
                    ..SearchRequest::default()
                };
                engine
                    .search(&request)
                    .unwrap()
                    .matches
                    .iter()
                    .map(|m| {
                        let dense = format!("{:?}", m.details);
                        (m.id.clone(), format!("{:.6}", m.score), dense)
                    })
                    .collect()
            })
            .collect();
        assert!(!answers[0].is_empty(), "{text}");
        assert_eq!(answers[0], answers[1], "{text}");
    }
}
