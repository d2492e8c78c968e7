//! Paced traffic: the same catalog's searches with a pause before each (a
//! planner's turns are spaced; 5 ms here) against back to back, in
//! alternating blocks of ten so that both see the same machine. Fresh
//! request texts (the synth's requests past those the cold pass used), so
//! every search embeds its request. The key is the ratio of the medians.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolgraph::synth::SynthOptions;
use toolgraph::{Engine, SearchRequest};

use super::common::root;
use super::{read_queries, round3, summary};

/// The pause before each paced search.
pub const PAUSE: Duration = Duration::from_millis(5);
/// Searches per block (back to back and paced blocks alternate).
const BLOCK: usize = 10;

/// `n`: the catalog's size (its synth, seed 7); `used`: the texts the
/// cold pass embedded already; `wanted`: searches in all.
pub fn measure(
    engine: &Engine,
    dir: &Path,
    n: usize,
    used: &HashSet<String>,
    wanted: usize,
) -> Value {
    let texts = fresh(dir, n, used, wanted);
    let (mut back_to_back, mut paced) = (Vec::new(), Vec::new());
    for (i, text) in texts.iter().enumerate() {
        let pause = (i / BLOCK) % 2 == 1;
        if pause {
            std::thread::sleep(PAUSE);
        }
        let req = SearchRequest {
            text: text.clone(),
            limit: 10,
            ..SearchRequest::default()
        };
        let t = Instant::now();
        std::hint::black_box(engine.search(&req).unwrap_or_else(|e| panic!("{e}")));
        let ms = t.elapsed().as_secs_f64() * 1e3;
        if pause { &mut paced } else { &mut back_to_back }.push(ms);
    }
    let (b, p) = (
        summary(&back_to_back, BTreeMap::new()),
        summary(&paced, BTreeMap::new()),
    );
    let ratio = match (p["p50_ms"].as_f64(), b["p50_ms"].as_f64()) {
        (Some(p), Some(b)) if b > 0.0 => json!(round3(p / b)),
        _ => Value::Null,
    };
    json!({
        "tools": n,
        "pause_ms": PAUSE.as_millis() as u64,
        "back_to_back": b,
        "paced": p,
        "paced_p50_over_back_to_back_p50": ratio,
    })
}

/// Request texts of the synth of `n` tools (seed 7: the same tools) that
/// the cold pass did not use.
fn fresh(dir: &Path, n: usize, used: &HashSet<String>, wanted: usize) -> Vec<String> {
    let at = dir.join(format!("synth-{n}-7-paced"));
    let queries = at.join("queries.jsonl");
    if !queries.exists() {
        toolgraph::synth::write(
            &root().join("ontology"),
            &SynthOptions {
                tools: n,
                queries: used.len() + wanted * 2,
                seed: 7,
            },
            &at,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
    read_queries(&queries)
        .into_iter()
        .map(|(q, _)| q)
        .filter(|q| !used.contains(q))
        .take(wanted)
        .collect()
}
