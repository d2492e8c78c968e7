//! Screening through the engine: the rules of `screen/` on each tool's
//! texts, and the learned screen on the vector of the text the ranker
//! embeds, when the engine has the model the classifier was fitted on.
//! One path for the airlock's scans, `load`/`import` and `POST /v1/tools`;
//! a registration hands the vectors on to the write, so screening costs no
//! embedding of its own there.

use super::Engine;
use crate::embed::Ahead;
use crate::error::{Error, Field, Result};
use crate::graph::{Source, SourceData};
use crate::model::ToolDescriptor;
use crate::screen::{self, Reason, Screening, Severity, learned::Classifier};

/// One tool to screen: its name, its texts (fields and strings) and the
/// text the learned screen reads.
#[derive(Debug, Clone)]
pub struct ToScreen {
    pub name: String,
    pub texts: Vec<(String, String)>,
    pub text: String,
}

impl ToScreen {
    pub fn of_descriptor(d: &ToolDescriptor) -> Self {
        Self {
            name: d.name.clone(),
            texts: screen::texts_of_descriptor(d),
            text: screen::learned::text_of_descriptor(d),
        }
    }

    /// A tool with its raw manifest entry: every string of it is read.
    pub fn of_raw(d: &ToolDescriptor, raw: &serde_json::Value) -> Self {
        Self {
            texts: screen::texts_of_json(raw),
            ..Self::of_descriptor(d)
        }
    }
}

/// Screening of tools about to be registered, and the vectors it computed
/// (for the write to take instead of embedding again).
pub(super) struct Screened {
    pub report: Vec<Screening>,
    pub ahead: Option<Ahead>,
}

impl Engine {
    /// Screens tools that arrive together (one file, one source): rules,
    /// names against the registered tools of other sources, the learned
    /// screen. `source` is the store source they will be registered as
    /// (or the prefix of theirs: `airlock/<source>` for an airlock source's
    /// `airlock/<source>/<tool>`).
    pub fn screen_tools(&self, source: &str, tools: &[ToScreen]) -> Vec<Screening> {
        let mut out = Self::rules(&self.registered_names(), source, tools);
        self.learned(tools, &mut out);
        out
    }

    /// The rule findings of `tools` from `source`: names against the
    /// `registered` names of other sources, the tools of `source` as
    /// siblings.
    fn rules(registered: &[(String, String)], source: &str, tools: &[ToScreen]) -> Vec<Screening> {
        let siblings: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        let prefix = format!("{source}/");
        let others = screen::Registered::new(
            registered
                .iter()
                .filter(|(_, s)| s != source && !s.starts_with(&prefix))
                .map(|(n, _)| n.as_str()),
        );
        tools
            .iter()
            .map(|t| {
                let reasons = screen::screen_tool_in(&t.name, &t.texts, &others, &siblings);
                Screening {
                    tool: t.name.clone(),
                    severity: screen::severity_of(&reasons),
                    score: None,
                    reasons,
                }
            })
            .collect()
    }

    /// The learned screen over `tools` (one batch of embeddings), its score
    /// and reason added to `out`; the vectors, when it ran.
    fn learned(&self, tools: &[ToScreen], out: &mut [Screening]) -> Option<Vec<Vec<f32>>> {
        let texts: Vec<String> = tools.iter().map(|t| t.text.clone()).collect();
        let reasons: Vec<&[Reason]> = out.iter().map(|s| s.reasons.as_slice()).collect();
        let (scores, vectors) = self.learned_screen(&texts, &reasons)?;
        for (s, (score, reason)) in out.iter_mut().zip(scores) {
            s.score = score;
            if let Some(r) = reason {
                s.reasons.push(r);
                crate::screen::worst_first(&mut s.reasons);
                s.severity = screen::severity_of(&s.reasons);
            }
        }
        Some(vectors)
    }

    /// The learned screen's score and reason for each text (the text the
    /// classifier reads, see [`ToScreen`]) whose rule findings are
    /// `reasons`, with the vectors: one batch of embeddings. `None` without
    /// fitted weights or without the embedder they were fitted on.
    #[allow(clippy::type_complexity)]
    pub fn learned_screen(
        &self,
        texts: &[String],
        reasons: &[&[Reason]],
    ) -> Option<(Vec<(Option<f32>, Option<Reason>)>, Vec<Vec<f32>>)> {
        let model = Classifier::bundled()?;
        let embedder = self.embedder.as_deref()?;
        if embedder.model_id() != model.model_id || texts.is_empty() {
            return None;
        }
        let vectors = self.vectors_of(embedder, texts)?;
        let scored = vectors
            .iter()
            .zip(reasons)
            .map(|(v, r)| {
                let score = model.score(v, r);
                (score, score.and_then(|s| model.reason(s)))
            })
            .collect();
        Some((scored, vectors))
    }

    /// The vectors of `texts`: those the catalog holds already (a source
    /// registered again unchanged) taken from it, the rest embedded in one
    /// batch.
    fn vectors_of(
        &self,
        embedder: &dyn crate::embed::Embedder,
        texts: &[String],
    ) -> Option<Vec<Vec<f32>>> {
        let snapshot = self.snapshot();
        let held = snapshot
            .catalog
            .vectors()
            .filter(|v| v.model_id == embedder.model_id());
        let rows: std::collections::HashMap<&str, usize> = held
            .map(|v| v.hashes.iter().enumerate().map(|(i, h)| (h, i)).collect())
            .unwrap_or_default();
        let known: Vec<Option<Vec<f32>>> = texts
            .iter()
            .map(|t| {
                let row = *rows.get(crate::embed::content_hash(t).as_str())?;
                held.and_then(|v| v.index.row(row))
            })
            .collect();
        let missing: Vec<String> = texts
            .iter()
            .zip(&known)
            .filter(|(_, k)| k.is_none())
            .map(|(t, _)| t.clone())
            .collect();
        let mut fresh = if missing.is_empty() {
            Vec::new()
        } else {
            embedder.embed_documents(&missing).ok()?
        }
        .into_iter();
        known
            .into_iter()
            .map(|k| k.or_else(|| fresh.next()))
            .collect()
    }

    /// Screens the manifests among `sources` (Turtle is curated, not
    /// screened); with `refuse_blocked`, a `block` finding is an error and
    /// nothing is written. Only tools with findings are reported.
    pub(super) fn screen_sources(
        &self,
        sources: &[Source],
        refuse_blocked: bool,
    ) -> Result<Screened> {
        // The registered names read once, the learned screen one batch
        // over every source's tools.
        let registered = self.registered_names();
        let (mut screened, mut tools) = (Vec::new(), Vec::new());
        for s in sources {
            let SourceData::Constellations(items) = &s.data else {
                continue;
            };
            let these: Vec<ToScreen> = items
                .iter()
                .map(|c| ToScreen::of_descriptor(&c.descriptor))
                .collect();
            screened.extend(Self::rules(&registered, &s.name, &these));
            tools.extend(these);
        }
        let vectors = self.learned(&tools, &mut screened);
        let report: Vec<Screening> = screened
            .into_iter()
            .filter(|x| !x.reasons.is_empty())
            .collect();
        if refuse_blocked
            && let Some(blocked) = report.iter().find(|x| x.severity == Severity::Block)
        {
            let worst = &blocked.reasons[0];
            return Err(Error::invalid_field(
                Field::Screening,
                format!(
                    "tool `{}` is blocked by screening: {} ({}{}); review it through the airlock or register without strict screening",
                    blocked.tool,
                    worst.message,
                    worst.field.as_deref().unwrap_or("text"),
                    worst
                        .evidence
                        .as_deref()
                        .map(|e| format!(": {e}"))
                        .unwrap_or_default()
                ),
            ));
        }
        let ahead = vectors.map(|v| {
            let texts: Vec<String> = tools.into_iter().map(|t| t.text).collect();
            Ahead::from_vectors(&texts, v)
        });
        Ok(Screened { report, ahead })
    }
}
