//! The learned screen: a logistic regression over a tool text's MiniLM
//! embedding and the rule findings, beside the rules. Rules catch the
//! shapes someone wrote down; the classifier catches text that reads like
//! an instruction to the model in words no rule lists.
//!
//! Weights: `weights.json` beside this file, fitted by
//! `scripts/screening/train.sh` (`examples/train_screen.rs`) on the train
//! split of `tests/fixtures/screening/dataset.jsonl`, thresholds picked on
//! its val split (provenance and licenses: that folder's README.txt).

use super::{Reason, Severity};
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// The fitted model as `weights.json` holds it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Classifier {
    /// The embedder the weights were fitted on (`all-MiniLM-L6-v2-int8@…`):
    /// another model's vectors are not scored.
    pub model_id: String,
    /// The rule codes whose presence is a feature, in weight order.
    pub features: Vec<String>,
    pub embedding_weights: Vec<f32>,
    pub rule_weights: Vec<f32>,
    pub bias: f32,
    /// Scores from here raise a `warn` reason (picked on the val split: at
    /// most 1 % of clean tools flagged there).
    pub warn_at: f32,
    /// Scores from here raise a `block` reason (at most 0.2 % there).
    pub block_at: f32,
    /// What it was fitted on, for the record.
    #[serde(default)]
    pub trained: serde_json::Value,
}

/// The text the classifier reads: the text the ranker embeds for the tool
/// (name, description, model guidance, parameters), so a registration
/// embeds each tool once for both.
pub fn text_of_descriptor(d: &crate::model::ToolDescriptor) -> String {
    crate::embed::descriptor_text(d)
}

/// The text the classifier reads for a manifest entry as JSON (`name`,
/// `description`, `parameters` as a JSON schema), read the way the JSONL
/// importer reads it (name and description alone when it does not parse).
pub fn text_of_entry(entry: &serde_json::Value) -> String {
    use crate::import::{Format, Input, parse_input};
    let line = serde_json::json!({
        "name": entry["name"],
        "description": entry["description"],
        "parameters": entry["parameters"],
    });
    let descriptor = match parse_input("entry.jsonl", &line.to_string(), Some(Format::Jsonl)) {
        Ok(Input::Manifest { mut tools, .. }) if tools.len() == 1 => tools.remove(0),
        _ => crate::model::ToolDescriptor {
            name: entry["name"].as_str().unwrap_or("").into(),
            description: entry["description"].as_str().unwrap_or("").into(),
            ..Default::default()
        },
    };
    text_of_descriptor(&descriptor)
}

impl Classifier {
    /// The bundled weights, or `None` while none are fitted.
    pub fn bundled() -> Option<&'static Classifier> {
        static MODEL: OnceLock<Option<Classifier>> = OnceLock::new();
        MODEL
            .get_or_init(|| {
                serde_json::from_str::<Classifier>(include_str!("weights.json"))
                    .ok()
                    .filter(|c| !c.embedding_weights.is_empty())
            })
            .as_ref()
    }

    /// The rule features of `reasons`: 1 for each feature code found.
    pub fn rule_features(&self, reasons: &[Reason]) -> Vec<f32> {
        self.features
            .iter()
            .map(|f| f32::from(u8::from(reasons.iter().any(|r| &r.code == f))))
            .collect()
    }

    /// The probability that a tool is poisoned, from its text's vector and
    /// its rule findings; `None` for a vector of another length.
    pub fn score(&self, vector: &[f32], reasons: &[Reason]) -> Option<f32> {
        if vector.len() != self.embedding_weights.len() {
            return None;
        }
        let dense: f32 = vector
            .iter()
            .zip(&self.embedding_weights)
            .map(|(x, w)| x * w)
            .sum();
        let rules: f32 = self
            .rule_features(reasons)
            .iter()
            .zip(&self.rule_weights)
            .map(|(x, w)| x * w)
            .sum();
        let z = dense + rules + self.bias;
        Some(1.0 / (1.0 + (-z).exp()))
    }

    /// The reason a score raises, if it reaches a threshold.
    pub fn reason(&self, score: f32) -> Option<Reason> {
        let severity = if score >= self.block_at {
            Severity::Block
        } else if score >= self.warn_at {
            Severity::Warn
        } else {
            return None;
        };
        Some(Reason {
            code: "learned".into(),
            message: format!(
                "reads like poisoned tool text to the learned screen (score {score:.2}; warn from {:.2}, block from {:.2})",
                self.warn_at, self.block_at
            ),
            field: Some("description".into()),
            evidence: None,
            severity,
        })
    }
}
