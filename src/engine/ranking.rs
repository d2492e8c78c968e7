//! One request through the ranking pipeline: the embedding on this thread,
//! the request parsed and its graph and lexical channels worked out on the
//! other core meanwhile (in a very large catalog: while the dense pass
//! runs), then fusion.

use super::{Engine, SearchRequest};
use crate::catalog::Catalog;
use crate::embed::Embedder;
use crate::error::{Error, Field, Result};
use crate::rank::Mode;
use crate::rank::pipeline::{self, Ranked};
use crate::rank::query::{Query, embedding_texts};
use crate::scope::Scope;
use std::sync::{Arc, OnceLock};

/// A request's embedding and its steps' (`None`: no dense channel).
type Embedded = (Option<Vec<f32>>, Vec<Vec<f32>>);

/// From this many tools on, the request is embedded first, alone, on ONNX
/// Runtime's spinning pool (both cores: the 1k floor), and parsed beside
/// the dense pass, whose sign pass hands its chunks to whichever thread is
/// free. Below, the request is parsed beside the embedding: there the
/// parse and the channels are most of a search's other work. At a million
/// tools the embedding beside the parse had to run on threads that never
/// spin (spinning ones took the parse's core) and took 5.0-5.4 ms against
/// 3.5-3.8 alone; the sign pass with the parse beside it takes 3.3-3.6
/// instead of 2.8-3.1. Perf bench quick runs, one host, cold 1M p50 over
/// 1k p50: 9.57 / 3.61 ms embedded first against 11.16 / 3.57 beside.
const EMBED_FIRST_FROM: usize = 500_000;

/// The dense channels of a request's vectors.
fn dense_channels<'a>(
    catalog: &'a Catalog,
    (whole, steps): &'a Embedded,
    scope: &Scope,
    cfg: &crate::rank::RankConfig,
) -> pipeline::DenseChannels<'a> {
    pipeline::dense(catalog, whole.as_deref(), steps, scope, cfg)
}

/// The request's vector with the conversation's weighing `weight`:
/// `(1 - weight) * request + weight * conversation`.
fn mixed((own, steps): Embedded, context: Option<Vec<f32>>, weight: f32) -> Embedded {
    let whole = match (own, context) {
        (Some(v), Some(c)) if c.len() == v.len() && weight > 0.0 => Some(
            v.iter()
                .zip(&c)
                .map(|(q, c)| (1.0 - weight) * q + weight * c)
                .collect(),
        ),
        (own, _) => own,
    };
    (whole, steps)
}

impl Engine {
    /// Parses the request, gathers the pipeline's inputs (graph hits in
    /// scope, query vectors) and runs it. Graph paths are written out only
    /// when the request asks for explanations.
    pub(super) fn rank(
        &self,
        catalog: &Catalog,
        scope: &Scope,
        req: &SearchRequest,
        vector: Option<Vec<f32>>,
        limit: usize,
    ) -> Result<(Query, Ranked)> {
        let embedder = self.dense_embedder(catalog, req.mode)?;
        // What gets embedded is known before the request is parsed (in a
        // conversation, after: see `Query::conversation_texts`).
        let (text, step_texts) = embedding_texts(&req.text, req.verb.as_deref(), self.rank.steps);
        let in_conversation = req.context.as_deref().is_some_and(|c| !c.trim().is_empty());
        // Embedding the request is the one real cost: the request is parsed
        // and its graph and lexical channels worked out on the other core
        // meanwhile (unless the query cache answers). The embedding stays on
        // this long-lived thread, whose allocator heap is warm.
        let embeds = embedder.is_some()
            && vector.is_none()
            && !in_conversation
            && !self.queries.contains(std::slice::from_ref(&text));
        let first = catalog.tools().len() >= EMBED_FIRST_FROM;
        let embed = |text: &String, vector: Option<Vec<f32>>| {
            let text = std::slice::from_ref(text);
            self.embed_request(embedder, text, &step_texts, vector)
        };
        // The parsed request outlives the thread that parses it: the
        // channels worked out there borrow it.
        let parsed: OnceLock<Query> = OnceLock::new();
        let understand = || {
            let query = parsed.get_or_init(|| self.parse(catalog, scope, req));
            (query, pipeline::prepare(catalog, query, scope, &self.rank))
        };
        crate::deadline::check()?;
        // The query's vectors, kept past the branch that embeds them: the
        // dense channel borrows them.
        let vectors: OnceLock<Embedded> = OnceLock::new();
        let dense_of = |embedded| dense_channels(catalog, embedded, scope, &self.rank);
        // The request embedded, kept, and the time limit checked.
        let embedded_now = || {
            let embedded = embed(&text, None)?;
            let embedded = vectors.get_or_init(|| embedded);
            crate::deadline::check()?;
            Ok::<_, Error>(embedded)
        };
        let ranked = {
            let (query, prepared): (&Query, _);
            let dense = if embeds && first {
                // Embedded alone, then parsed beside the dense pass.
                let embedded = embedded_now()?;
                let (understood, dense) = crate::par::join(understand, || dense_of(embedded));
                (query, prepared) = understood;
                dense
            } else if embeds {
                // The dense channel needs only the embedding: it is worked
                // out while a helper thread may still be walking the graph.
                let (understood, dense) =
                    crate::par::join(understand, || embedded_now().map(dense_of));
                (query, prepared) = understood;
                dense?
            } else {
                (query, prepared) = understand();
                crate::deadline::check()?;
                let embedded = if in_conversation && embedder.is_some() {
                    let context = req.context.as_deref();
                    let own = (text.as_str(), step_texts.as_slice());
                    self.embed_in_conversation(embedder, query, context, own, vector)?
                } else {
                    embed(&text, vector)?
                };
                dense_of(vectors.get_or_init(|| embedded))
            };
            crate::deadline::check()?;
            let settings = pipeline::Settings {
                cfg: &self.rank,
                calibration: &self.calibration,
                limit,
                explain: req.explain,
            };
            pipeline::run(catalog, query, scope, prepared, dense, settings)
        };
        // Every branch above that gets here has parsed the request.
        let query = parsed.into_inner().expect("the request is parsed");
        Ok((query, ranked))
    }

    /// The request parsed against the snapshot, as the caller sees it,
    /// with its conversation.
    fn parse(&self, catalog: &Catalog, scope: &Scope, req: &SearchRequest) -> Query {
        let _stage = tracing::info_span!("stage", stage = "extract").entered();
        let query = Query::parse(
            catalog,
            scope,
            &req.text,
            req.verb.as_deref(),
            req.mode,
            self.rank.steps,
        );
        Query {
            dependencies: req.dependencies,
            ..match &req.context {
                Some(c) => query.with_context(catalog, scope, c),
                None => query,
            }
        }
    }

    /// The embedder when the dense channel ranks in `mode` (an error when
    /// dense mode is asked of an engine without one).
    fn dense_embedder(&self, catalog: &Catalog, mode: Mode) -> Result<Option<&Arc<dyn Embedder>>> {
        match &self.embedder {
            Some(embedder) if mode.uses_dense() && catalog.has_vectors() => Ok(Some(embedder)),
            None if mode == Mode::Dense => Err(Error::invalid_field(
                Field::SearchMode,
                "dense mode needs embeddings (run without --no-embed)",
            )),
            _ => Ok(None),
        }
    }

    /// In a conversation: what the parsed request says to embed (see
    /// `Query::conversation_texts`; `vector` is the request text's, if it
    /// is still what is embedded), mixed by the conversation's weight.
    fn embed_in_conversation(
        &self,
        embedder: Option<&Arc<dyn Embedder>>,
        query: &Query,
        context: Option<&str>,
        (text, step_texts): (&str, &[String]),
        vector: Option<Vec<f32>>,
    ) -> Result<Embedded> {
        let (own, context) = query.conversation_texts(context);
        let vector = vector.filter(|_| own == text);
        let own = std::slice::from_ref(&own);
        let embedded = self.embed_request(embedder, own, step_texts, vector)?;
        Ok(match context {
            Some((c, weight)) => mixed(embedded, self.embed_one(embedder, c)?, weight),
            None => embedded,
        })
    }

    /// One text's embedding, through the query cache (`None` without an
    /// embedder).
    fn embed_one(
        &self,
        embedder: Option<&Arc<dyn Embedder>>,
        text: String,
    ) -> Result<Option<Vec<f32>>> {
        let Some(embedder) = embedder else {
            return Ok(None);
        };
        let batch = self.queries.get_or_embed(std::slice::from_ref(&text), || {
            embedder.embed_query(&text).map(|v| vec![v])
        })?;
        Ok(batch.first().cloned())
    }

    /// The request's embedding (`text`: its one text) and its steps'
    /// (`vector`: computed already), through the query cache.
    fn embed_request(
        &self,
        embedder: Option<&Arc<dyn Embedder>>,
        text: &[String],
        step_texts: &[String],
        vector: Option<Vec<f32>>,
    ) -> Result<Embedded> {
        let Some(embedder) = embedder else {
            return Ok((None, Vec::new()));
        };
        let _stage = tracing::info_span!("stage", stage = "embed").entered();
        let whole = match vector {
            Some(v) => v,
            None => {
                let batch = self.queries.get_or_embed(text, || {
                    let one = text.first().map_or("", String::as_str);
                    embedder.embed_query(one).map(|v| vec![v])
                })?;
                batch.first().cloned().unwrap_or_default()
            }
        };
        let steps = if step_texts.is_empty() {
            Vec::new()
        } else {
            let batch = self
                .queries
                .get_or_embed(step_texts, || embedder.embed_documents(step_texts))?;
            batch.to_vec()
        };
        Ok((Some(whole), steps))
    }
}
