//! Prometheus metrics (prometheus-client, OpenMetrics text): requests and
//! latency by route and status, the catalog's size, embeddings computed,
//! sessions, and per-stage timings. Stages come from the core's `tracing`
//! spans named `stage` (scope, extract, graph, embed, dense, lexical, fuse,
//! fuse_all, disambiguate): [`stage_timings`] is a tracing layer that times
//! them, so the sync core knows nothing of metrics.
//!
//! Every label is bounded: a method outside the standard few counts as
//! `OTHER`, a route is the router's matched path (or `unmatched`), a status
//! is one of HTTP's, a stage one the core names. No request can add a
//! series of its own.

use crate::engine::Engine;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{
    DescriptorEncoder, EncodeLabelSet, EncodeLabelValue, EncodeMetric, LabelValueEncoder,
};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use std::sync::{Arc, OnceLock};

/// Upper bounds of the latency buckets, in seconds.
const BUCKETS: [f64; 15] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

fn histogram() -> Histogram {
    Histogram::new(BUCKETS)
}

/// Histograms by label set, each with [`BUCKETS`].
type Histograms<L> = Family<L, Histogram, fn() -> Histogram>;

/// An HTTP method, the standard ones by name and every other as `OTHER`.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub(crate) enum Method {
    Get,
    Post,
    Put,
    Delete,
    Patch,
    Head,
    Options,
    Other,
}

impl Method {
    pub fn of(m: &axum::http::Method) -> Self {
        use axum::http::Method as M;
        match *m {
            M::GET => Method::Get,
            M::POST => Method::Post,
            M::PUT => Method::Put,
            M::DELETE => Method::Delete,
            M::PATCH => Method::Patch,
            M::HEAD => Method::Head,
            M::OPTIONS => Method::Options,
            _ => Method::Other,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
            Method::Patch => "PATCH",
            Method::Head => "HEAD",
            Method::Options => "OPTIONS",
            Method::Other => "OTHER",
        }
    }
}

impl EncodeLabelValue for Method {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> Result<(), std::fmt::Error> {
        std::fmt::Write::write_str(encoder, self.as_str())
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: Method,
    route: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    route: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StageLabels {
    stage: String,
}

/// The stage timings of this process: the tracing layer records into them
/// whichever server (or none) is running.
fn stages() -> &'static Histograms<StageLabels> {
    static STAGES: OnceLock<Histograms<StageLabels>> = OnceLock::new();
    STAGES.get_or_init(|| Family::new_with_constructor(histogram))
}

/// Connections this process holds open (every server in it).
pub(crate) fn connections() -> &'static Gauge {
    static OPEN: OnceLock<Gauge> = OnceLock::new();
    OPEN.get_or_init(Gauge::default)
}

/// One server's metrics.
#[derive(Debug)]
pub(crate) struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: Histograms<RouteLabels>,
    /// MCP sessions the server keeps.
    pub mcp_sessions: Gauge,
}

impl Metrics {
    /// The metrics of a server over `engine`.
    pub fn new(engine: Arc<Engine>) -> Self {
        let mut registry = Registry::default();
        let requests = Family::<RequestLabels, Counter>::default();
        let latency: Histograms<RouteLabels> = Family::new_with_constructor(histogram);
        registry.register(
            "toolgraph_requests",
            "HTTP requests by method, route and status",
            requests.clone(),
        );
        registry.register(
            "toolgraph_request_duration_seconds",
            "HTTP request latency by route",
            latency.clone(),
        );
        registry.register(
            "toolgraph_stage_duration_seconds",
            "Time per ranking stage",
            stages().clone(),
        );
        registry.register(
            "toolgraph_http_connections",
            "Client connections open (the accept loop caps them)",
            connections().clone(),
        );
        let mcp_sessions = Gauge::default();
        registry.register(
            "toolgraph_mcp_sessions",
            "MCP sessions kept (bounded per key and in all)",
            mcp_sessions.clone(),
        );
        registry.register_collector(Box::new(EngineGauges(engine)));
        Self {
            registry,
            requests,
            latency,
            mcp_sessions,
        }
    }

    /// Counts one answered request.
    pub fn request(&self, method: Method, route: &str, status: u16, seconds: f64) {
        self.requests
            .get_or_create(&RequestLabels {
                method,
                route: route.to_string(),
                status,
            })
            .inc();
        self.latency
            .get_or_create(&RouteLabels {
                route: route.to_string(),
            })
            .observe(seconds);
    }

    /// The text exposition.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if let Err(e) = prometheus_client::encoding::text::encode(&mut out, &self.registry) {
            tracing::error!(error = %e, "cannot encode the metrics");
        }
        out
    }
}

/// The engine's figures, read at scrape time.
#[derive(Debug)]
struct EngineGauges(Arc<Engine>);

impl Collector for EngineGauges {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let e = &self.0;
        let gauge = |encoder: &mut DescriptorEncoder, name, help, v: usize| {
            let g = ConstGauge::new(i64::try_from(v).unwrap_or(i64::MAX));
            g.encode(encoder.encode_descriptor(name, help, None, g.metric_type())?)
        };
        gauge(
            &mut encoder,
            "toolgraph_catalog_tools",
            "Tools in the catalog",
            e.catalog_size(),
        )?;
        gauge(
            &mut encoder,
            "toolgraph_sessions",
            "Conversations remembered (in memory)",
            e.session_count(),
        )?;
        let computed = ConstCounter::new(e.embeddings_computed());
        computed.encode(encoder.encode_descriptor(
            "toolgraph_embeddings_computed",
            "Tool embeddings computed since the start (not reused)",
            None,
            computed.metric_type(),
        )?)
    }
}

/// The tracing layer that times the core's `stage` spans.
pub(crate) fn stage_timings() -> crate::engine::StageSpans<impl Fn(&str, f64) + Send + Sync> {
    crate::engine::StageSpans::new(|stage: &str, seconds: f64| {
        stages()
            .get_or_create(&StageLabels {
                stage: stage.to_string(),
            })
            .observe(seconds)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_histograms_and_gauges_with_bounded_labels() {
        let engine = Arc::new(
            Engine::open(crate::engine::EngineOptions::memory(
                crate::engine::Embeddings::Off,
            ))
            .unwrap(),
        );
        let m = Metrics::new(engine);
        m.request(Method::Post, "/v1/search", 200, 0.004);
        m.request(Method::Post, "/v1/search", 400, 0.0001);
        for i in 0..100 {
            let odd = axum::http::Method::from_bytes(format!("X{i}").as_bytes()).unwrap();
            m.request(Method::of(&odd), "unmatched", 404, 0.001);
        }
        stages()
            .get_or_create(&StageLabels {
                stage: "graph".into(),
            })
            .observe(0.002);
        let text = m.render();
        assert!(
            text.contains(
                "toolgraph_requests_total{method=\"POST\",route=\"/v1/search\",status=\"200\"} 1"
            ),
            "{text}"
        );
        assert!(
            text.contains("toolgraph_request_duration_seconds_count{route=\"/v1/search\"} 2"),
            "{text}"
        );
        assert!(
            text.contains("toolgraph_stage_duration_seconds_bucket{le=\"0.0025\",stage=\"graph\"}")
                || text.contains(
                    "toolgraph_stage_duration_seconds_bucket{stage=\"graph\",le=\"0.0025\"}"
                ),
            "{text}"
        );
        assert!(text.contains("toolgraph_catalog_tools 0"), "{text}");
        assert!(
            text.contains(
                "toolgraph_requests_total{method=\"OTHER\",route=\"unmatched\",status=\"404\"} 100"
            ),
            "a hundred odd methods are one series: {text}"
        );
    }
}
