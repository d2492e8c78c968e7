//! Fits the learned screen (`src/screen/weights.json`): a logistic
//! regression over each tool text's MiniLM embedding and its rule findings,
//! on the train split of `tests/fixtures/screening/dataset.jsonl`; the warn
//! and block thresholds are picked on its val split (at most 1 % and 0.2 %
//! of clean val tools flagged). The test split and the external rows are
//! never read here. Run by `scripts/screening/train.sh`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use std::path::Path;
use toolgraph::embed::{Embedder, FastEmbedder, default_model_dir};
use toolgraph::screen::{self, SCREENING_CODES, learned::text_of_entry};

/// One labelled row: the text the classifier reads, rule findings' codes,
/// label and split.
struct Row {
    text: String,
    codes: Vec<String>,
    label: f32,
    split: String,
}

fn rows(path: &Path) -> Vec<Row> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let raw = json!({"description": v["description"], "inputSchema": v["input_schema"]});
            let texts = screen::texts_of_json(&raw);
            let name = v["name"].as_str().unwrap_or("");
            let codes = screen::screen_tool(name, &texts, [], &[])
                .into_iter()
                .map(|r| r.code)
                .collect();
            Row {
                text: text_of_entry(&json!({"name": v["name"], "description": v["description"], "parameters": v["input_schema"]})),
                codes,
                label: v["label"].as_f64().unwrap() as f32,
                split: v["split"].as_str().unwrap().to_string(),
            }
        })
        .collect()
}

/// Features of a row: its vector, then 1/0 per rule code.
fn features(vector: &[f32], codes: &[String], names: &[&str]) -> Vec<f32> {
    let mut x = vector.to_vec();
    x.extend(
        names
            .iter()
            .map(|n| f32::from(u8::from(codes.iter().any(|c| c == n)))),
    );
    x
}

fn sigmoid(z: f32) -> f32 {
    1.0 / (1.0 + (-z).exp())
}

/// Class-balanced logistic regression, L2, full-batch Adam.
fn fit(x: &[Vec<f32>], y: &[f32]) -> (Vec<f32>, f32) {
    let d = x[0].len();
    let pos = y.iter().filter(|&&v| v > 0.5).count() as f32;
    let neg = y.len() as f32 - pos;
    let weight = |label: f32| {
        if label > 0.5 {
            y.len() as f32 / (2.0 * pos)
        } else {
            y.len() as f32 / (2.0 * neg)
        }
    };
    let (mut w, mut b) = (vec![0f32; d], 0f32);
    let (mut m, mut v, mut mb, mut vb) = (vec![0f32; d], vec![0f32; d], 0f32, 0f32);
    let (lr, l2, b1, b2, eps) = (0.05f32, 1e-3f32, 0.9f32, 0.999f32, 1e-8f32);
    for epoch in 1..=400i32 {
        let mut g = vec![0f32; d];
        let mut gb = 0f32;
        for (xi, &yi) in x.iter().zip(y) {
            let z: f32 = xi.iter().zip(&w).map(|(a, b)| a * b).sum::<f32>() + b;
            let err = (sigmoid(z) - yi) * weight(yi);
            for (gj, xj) in g.iter_mut().zip(xi) {
                *gj += err * xj;
            }
            gb += err;
        }
        let n = x.len() as f32;
        let t: i32 = epoch;
        for j in 0..d {
            let gj = g[j] / n + l2 * w[j];
            m[j] = b1 * m[j] + (1.0 - b1) * gj;
            v[j] = b2 * v[j] + (1.0 - b2) * gj * gj;
            w[j] -= lr * (m[j] / (1.0 - b1.powi(t))) / ((v[j] / (1.0 - b2.powi(t))).sqrt() + eps);
        }
        let gb = gb / n;
        mb = b1 * mb + (1.0 - b1) * gb;
        vb = b2 * vb + (1.0 - b2) * gb * gb;
        b -= lr * (mb / (1.0 - b1.powi(t))) / ((vb / (1.0 - b2.powi(t))).sqrt() + eps);
    }
    (w, b)
}

/// The smallest score that flags at most `share` of `clean` scores.
fn threshold(clean: &mut [f32], share: f32) -> f32 {
    clean.sort_by(|a, b| b.total_cmp(a));
    let allowed = (clean.len() as f32 * share).floor() as usize;
    clean.get(allowed).map_or(0.5, |s| s + 1e-4)
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let data = root.join("tests/fixtures/screening/dataset.jsonl");
    let rows: Vec<Row> = rows(&data)
        .into_iter()
        .filter(|r| r.split == "train" || r.split == "val")
        .collect();
    let model =
        FastEmbedder::load(&default_model_dir()).expect("the MiniLM model (scripts/setup.sh)");
    let texts: Vec<String> = rows.iter().map(|r| r.text.clone()).collect();
    eprintln!("embedding {} texts", texts.len());
    let vectors = model.embed_documents(&texts).unwrap();
    let names: Vec<&str> = SCREENING_CODES
        .iter()
        .copied()
        .filter(|c| *c != "learned")
        .collect();
    let xs: Vec<Vec<f32>> = rows
        .iter()
        .zip(&vectors)
        .map(|(r, v)| features(v, &r.codes, &names))
        .collect();
    let train: Vec<usize> = (0..rows.len())
        .filter(|&i| rows[i].split == "train")
        .collect();
    let x: Vec<Vec<f32>> = train.iter().map(|&i| xs[i].clone()).collect();
    let y: Vec<f32> = train.iter().map(|&i| rows[i].label).collect();
    eprintln!(
        "fitting on {} rows ({} poisoned)",
        x.len(),
        y.iter().filter(|&&v| v > 0.5).count()
    );
    let (w, b) = fit(&x, &y);
    let score = |i: usize| sigmoid(xs[i].iter().zip(&w).map(|(a, b)| a * b).sum::<f32>() + b);
    let val: Vec<usize> = (0..rows.len())
        .filter(|&i| rows[i].split == "val")
        .collect();
    let mut clean: Vec<f32> = val
        .iter()
        .filter(|&&i| rows[i].label < 0.5)
        .map(|&i| score(i))
        .collect();
    // A learned finding alone warns from 0.5 at least; it blocks only when
    // the model is sure (0.9 at least): a block costs an override.
    let warn_at = threshold(&mut clean.clone(), 0.01).max(0.5);
    let block_at = threshold(&mut clean, 0.002).max(warn_at).max(0.9);
    let poisoned: Vec<f32> = val
        .iter()
        .filter(|&&i| rows[i].label > 0.5)
        .map(|&i| score(i))
        .collect();
    let caught = poisoned.iter().filter(|&&s| s >= warn_at).count();
    eprintln!(
        "val: learned alone flags {caught}/{} poisoned at warn {warn_at:.3}, block {block_at:.3}",
        poisoned.len()
    );
    let dim = model.dim();
    let out = json!({
        "model_id": model.model_id(),
        "features": names,
        "embedding_weights": w[..dim],
        "rule_weights": w[dim..],
        "bias": b,
        "warn_at": warn_at,
        "block_at": block_at,
        "trained": {
            "data": "tests/fixtures/screening/dataset.jsonl (split train; thresholds on split val)",
            "rows": x.len(),
            "poisoned": y.iter().filter(|&&v| v > 0.5).count(),
            "val_poisoned_flagged_by_learned_alone": format!("{caught}/{}", poisoned.len()),
            "method": "logistic regression, class-balanced, L2 1e-3, 400 epochs of full-batch Adam (lr 0.05)",
        }
    });
    let path = root.join("src/screen/weights.json");
    std::fs::write(&path, serde_json::to_string(&out).unwrap() + "\n").unwrap();
    eprintln!("wrote {}", path.display());
}
