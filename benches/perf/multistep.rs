//! Multi-step requests at the floor: Seal-Tools' requests whose text splits
//! into two or more steps, searched end to end over the Seal-Tools catalog
//! (4,076 tools, real model), against the embedding of the same request's
//! texts (the whole request, then each step), taken right before or right
//! after its search (alternately) so that both see the same machine. The
//! floor of a request is the faster of two ways to embed its texts: one
//! at a time, or the whole alone and the steps in one batch (one padded
//! batch of all of them measured 1.8x slower: the whole pads every step;
//! `TOOLGRAPH_PERF_EMBED_STRATEGIES` measures it again). The keys are the
//! median and the 99th percentile of the per-request ratio
//! `search / floor of its texts`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};
use toolgraph::embed::{Embedder, FastEmbedder};
use toolgraph::import::Format;
use toolgraph::{Embeddings, Engine, EngineOptions, SearchRequest};

use super::common::root;
use super::{round3, summary};

/// Requests measured (the first of the dataset's multi-step requests).
const REQUESTS: usize = 400;
/// Searches run first, unmeasured (their texts are not measured again).
const WARM_UP: usize = 20;

pub fn measure(model: &Arc<FastEmbedder>, smoke: bool) -> Value {
    let mut opts = EngineOptions::memory(Embeddings::Custom(model.clone()));
    opts.strict = false;
    let engine = Engine::open(opts).unwrap_or_else(|e| panic!("{e}"));
    let data = root().join("benches/datasets/sealtools");
    engine
        .load_paths(&[root().join("ontology")], Some(Format::Turtle))
        .unwrap_or_else(|e| panic!("{e}"));
    engine
        .load_paths(&[data.join("tools.jsonl")], Some(Format::Jsonl))
        .unwrap_or_else(|e| panic!("{e}"));
    let wanted = if smoke { 30 } else { REQUESTS + WARM_UP };
    let requests = multi_step(&data.join("queries.jsonl"), wanted);
    let (warm_up, measured) = requests.split_at(WARM_UP.min(requests.len()));
    for (text, _) in warm_up {
        search(&engine, text);
    }
    let one_batch = std::env::var_os("TOOLGRAPH_PERF_EMBED_STRATEGIES").is_some();
    let mut ways: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    let mut embed_texts = |texts: &[String]| {
        let embed = |t: &[String]| {
            std::hint::black_box(model.embed_documents(t).unwrap_or_else(|e| panic!("{e}")));
        };
        let mut time = |name, f: &dyn Fn()| {
            let t = Instant::now();
            f();
            let ms = t.elapsed().as_secs_f64() * 1e3;
            ways.entry(name).or_default().push(ms);
            ms
        };
        let a = time("one_at_a_time", &|| {
            for t in texts {
                embed(std::slice::from_ref(t));
            }
        });
        let b = time("whole_then_steps_batch", &|| {
            embed(&texts[..1]);
            embed(&texts[1..]);
        });
        if one_batch {
            time("one_batch", &|| embed(texts));
        }
        a.min(b)
    };
    let (mut e2e, mut floor, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
    let mut steps = 0usize;
    for (i, (text, texts)) in measured.iter().enumerate() {
        let before = (i % 2 == 0).then(|| embed_texts(texts));
        let t = Instant::now();
        search(&engine, text);
        let ms = t.elapsed().as_secs_f64() * 1e3;
        let f = before.unwrap_or_else(|| embed_texts(texts));
        e2e.push(ms);
        floor.push(f);
        ratio.push(ms / f);
        steps += texts.len() - 1;
    }
    let s = |v: &[f64]| summary(v, BTreeMap::new());
    let ratios = s(&ratio);
    json!({
        "requests": measured.len(),
        "steps_mean": round3(steps as f64 / measured.len().max(1) as f64),
        "search": s(&e2e),
        "steps_embed": s(&floor),
        "steps_embed_ways": ways.iter().map(|(k, v)| (k.to_string(), s(v))).collect::<serde_json::Map<_, _>>(),
        "ratio": {"p50": ratios["p50_ms"], "p90": ratios["p90_ms"], "p99": ratios["p99_ms"]},
    })
}

fn search(engine: &Engine, text: &str) {
    let req = SearchRequest {
        text: text.to_string(),
        limit: 10,
        ..SearchRequest::default()
    };
    std::hint::black_box(engine.search(&req).unwrap_or_else(|e| panic!("{e}")));
}

/// The first `n` distinct requests that split into two or more steps, each
/// with the texts a search embeds for it (the whole, then the steps).
fn multi_step(path: &std::path::Path, n: usize) -> Vec<(String, Vec<String>)> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{e}"));
    let mut seen = std::collections::HashSet::new();
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| {
            let q = v["query"].as_str()?.to_string();
            let (whole, steps) = toolgraph::rank::texts_to_embed(&q, None);
            (steps.len() >= 2 && seen.insert(q.clone()))
                .then(|| (q, std::iter::once(whole).chain(steps).collect()))
        })
        .take(n)
        .collect()
}
