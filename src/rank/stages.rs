//! The ranking stages as timings: the core opens a `tracing` span named
//! `stage` (scope, extract, graph, embed, dense, lexical, fuse, fuse_all,
//! disambiguate, prerequisites)
//! around each; [`StageSpans`] is a tracing layer that hands each one's
//! duration to a sink (the server's metrics, the perf bench's samples).

use std::time::Instant;
use tracing::span::{Attributes, Id};
use tracing::{Subscriber, field::Field};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

/// Calls `sink(stage, seconds)` when a `stage` span closes.
pub struct StageSpans<F> {
    sink: F,
}

impl<F: Fn(&str, f64) + Send + Sync + 'static> StageSpans<F> {
    pub fn new(sink: F) -> Self {
        Self { sink }
    }
}

impl<F> std::fmt::Debug for StageSpans<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StageSpans")
    }
}

struct Started {
    stage: String,
    at: Instant,
}

struct StageName(Option<String>);

impl tracing::field::Visit for StageName {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "stage" {
            self.0 = Some(value.to_string());
        }
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "stage" {
            self.0 = Some(format!("{value:?}").trim_matches('"').to_string());
        }
    }
}

impl<S, F> tracing_subscriber::Layer<S> for StageSpans<F>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    F: Fn(&str, f64) + Send + Sync + 'static,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if attrs.metadata().name() != "stage" {
            return;
        }
        let mut name = StageName(None);
        attrs.record(&mut name);
        if let (Some(stage), Some(span)) = (name.0, ctx.span(id)) {
            span.extensions_mut().insert(Started {
                stage,
                at: Instant::now(),
            });
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(&id)
            && let Some(s) = span.extensions().get::<Started>()
        {
            (self.sink)(&s.stage, s.at.elapsed().as_secs_f64());
        }
    }
}
