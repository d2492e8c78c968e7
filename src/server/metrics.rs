//! Prometheus metrics: requests and latency by route and status, the
//! catalog's size, embeddings computed, and per-stage timings. Stages come
//! from the core's `tracing` spans named `stage` (scope, extract, graph,
//! embed, dense, lexical, fuse, fuse_all, disambiguate): [`stage_timings`] is a tracing layer
//! that times them, so the sync core knows nothing of metrics.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Mutex, OnceLock, PoisonError};

/// Upper bounds of the latency buckets, in seconds.
const BUCKETS: [f64; 15] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

#[derive(Debug, Clone, Default)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    sum: f64,
    count: u64,
}

impl Histogram {
    fn observe(&mut self, seconds: f64) {
        for (i, le) in BUCKETS.iter().enumerate() {
            if seconds <= *le {
                self.counts[i] += 1;
            }
        }
        self.sum += seconds;
        self.count += 1;
    }

    fn render(&self, out: &mut String, name: &str, labels: &str) {
        for (i, le) in BUCKETS.iter().enumerate() {
            let _ = writeln!(
                out,
                "{name}_bucket{{{labels}le=\"{le}\"}} {}",
                self.counts[i]
            );
        }
        let _ = writeln!(out, "{name}_bucket{{{labels}le=\"+Inf\"}} {}", self.count);
        let trimmed = labels.trim_end_matches(',');
        let braces = if trimmed.is_empty() {
            String::new()
        } else {
            format!("{{{trimmed}}}")
        };
        let _ = writeln!(out, "{name}_sum{braces} {}", self.sum);
        let _ = writeln!(out, "{name}_count{braces} {}", self.count);
    }
}

#[derive(Debug, Default)]
struct Inner {
    requests: BTreeMap<(String, String, u16), u64>,
    latency: BTreeMap<String, Histogram>,
    stages: BTreeMap<String, Histogram>,
}

/// The process's metrics.
#[derive(Debug, Default)]
pub(crate) struct Metrics {
    inner: Mutex<Inner>,
}

/// The one registry of this process.
pub(crate) fn global() -> &'static Metrics {
    static M: OnceLock<Metrics> = OnceLock::new();
    M.get_or_init(Metrics::default)
}

/// Label values are escaped as Prometheus requires.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

impl Metrics {
    pub fn request(&self, method: &str, route: &str, status: u16, seconds: f64) {
        let mut m = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        *m.requests
            .entry((method.to_string(), route.to_string(), status))
            .or_default() += 1;
        m.latency
            .entry(route.to_string())
            .or_default()
            .observe(seconds);
    }

    pub fn stage(&self, stage: &str, seconds: f64) {
        let mut m = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        m.stages
            .entry(stage.to_string())
            .or_default()
            .observe(seconds);
    }

    /// The text exposition, with the gauges the caller reads at scrape time.
    pub fn render(&self, gauges: &[(&str, &str, f64)]) -> String {
        let m = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let mut out = String::new();
        out.push_str(
            "# HELP toolgraph_requests_total HTTP requests by method, route and status.\n",
        );
        out.push_str("# TYPE toolgraph_requests_total counter\n");
        for ((method, route, status), n) in &m.requests {
            let _ = writeln!(
                out,
                "toolgraph_requests_total{{method=\"{}\",route=\"{}\",status=\"{status}\"}} {n}",
                escape(method),
                escape(route)
            );
        }
        out.push_str("# HELP toolgraph_request_duration_seconds HTTP request latency by route.\n");
        out.push_str("# TYPE toolgraph_request_duration_seconds histogram\n");
        for (route, h) in &m.latency {
            h.render(
                &mut out,
                "toolgraph_request_duration_seconds",
                &format!("route=\"{}\",", escape(route)),
            );
        }
        out.push_str("# HELP toolgraph_stage_duration_seconds Time per ranking stage.\n");
        out.push_str("# TYPE toolgraph_stage_duration_seconds histogram\n");
        for (stage, h) in &m.stages {
            h.render(
                &mut out,
                "toolgraph_stage_duration_seconds",
                &format!("stage=\"{}\",", escape(stage)),
            );
        }
        for (name, help, value) in gauges {
            let kind = if name.ends_with("_total") {
                "counter"
            } else {
                "gauge"
            };
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}"
            );
        }
        out
    }
}

/// The tracing layer that times the core's `stage` spans into [`global`].
pub(crate) fn stage_timings() -> crate::engine::StageSpans<impl Fn(&str, f64) + Send + Sync> {
    crate::engine::StageSpans::new(|stage: &str, seconds: f64| global().stage(stage, seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_histograms_and_gauges() {
        let m = Metrics::default();
        m.request("POST", "/v1/search", 200, 0.004);
        m.request("POST", "/v1/search", 400, 0.0001);
        m.stage("graph", 0.002);
        let text = m.render(&[("toolgraph_catalog_tools", "Tools in the catalog.", 180.0)]);
        assert!(text.contains(
            "toolgraph_requests_total{method=\"POST\",route=\"/v1/search\",status=\"200\"} 1"
        ));
        assert!(text.contains("toolgraph_request_duration_seconds_count{route=\"/v1/search\"} 2"));
        assert!(
            text.contains(
                "toolgraph_stage_duration_seconds_bucket{stage=\"graph\",le=\"0.0025\"} 1"
            )
        );
        assert!(text.contains("# TYPE toolgraph_catalog_tools gauge\ntoolgraph_catalog_tools 180"));
    }
}
