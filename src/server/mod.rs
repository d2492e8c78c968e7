//! The service: axum around the sync engine. One module per resource under
//! `v1/`, the MCP endpoint beside them (`mcp.rs`), the error table
//! (`error.rs`), keys (`auth.rs`), metrics (`metrics.rs`), the OpenAPI
//! document generated from the handlers (`openapi.rs`) and the operator
//! console at `/` (`console.rs`, its page under `console/`).
//!
//! Every request gets an id (the `x-request-id` header, every log line),
//! goes through the key check (401/403), the concurrency limit (queued, or
//! 429 past the queue), the time limit (504) and the body limit (413); engine
//! calls run on the blocking pool. Shutdown on SIGTERM or Ctrl-C lets
//! requests in flight finish.

mod auth;
mod console;
mod edge;
mod error;
mod health;
mod listen;
mod mcp;
pub(crate) mod metrics;
mod openapi;
mod v1;

pub use auth::{KeyEntry, Keys, Principal, Role};
pub use error::{ApiError, Code, ErrorBody, ErrorDetail, ErrorType};

use crate::airlock::{Airlock, AirlockOptions};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::gateway::{Gateway, GatewayOptions};
use axum::Router;
use axum::extract::{MatchedPath, Request, State};
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// How much one server takes on.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Largest request body (bytes); registration uploads take `upload_bytes`.
    pub body_bytes: usize,
    pub upload_bytes: usize,
    /// A request that takes longer is answered 504 (its blocking work is
    /// not interrupted).
    pub request_timeout: Duration,
    /// Requests served at once; more wait in a queue.
    pub max_in_flight: usize,
    /// Requests that may wait; past this a request is answered 429.
    pub max_queue: usize,
    /// A read-only SPARQL query is cancelled after this.
    pub sparql_timeout: Duration,
    /// Connections open at once; past this new ones wait to be accepted.
    pub max_connections: usize,
    /// A connection must send a request's headers within this, and an idle
    /// kept-alive one is closed after it.
    pub header_read_timeout: Duration,
    /// Longest request target (path and query), in bytes (414 past it).
    pub uri_bytes: usize,
    /// Most headers, and their bytes, a request may have (431 past them).
    pub max_headers: usize,
    pub header_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            body_bytes: 1 << 20,
            upload_bytes: 64 << 20,
            request_timeout: Duration::from_secs(30),
            max_in_flight: 32,
            max_queue: 256,
            sparql_timeout: Duration::from_secs(10),
            max_connections: 1024,
            header_read_timeout: Duration::from_secs(10),
            uri_bytes: 8 * 1024,
            max_headers: 100,
            header_bytes: 32 * 1024,
        }
    }
}

/// How to serve.
#[derive(Debug, Clone, Default)]
pub struct ServeOptions {
    pub keys: Keys,
    pub limits: Limits,
    /// What `POST /v1/reload` reloads (the ontology and seeds directories).
    pub reload: Vec<PathBuf>,
    /// Scan, probe and discovery limits and switches.
    pub airlock: AirlockOptions,
    /// Run the airlock's schedules (scheduled scans, health probes, gap
    /// discovery) every this often; `None`: only when asked over HTTP.
    pub schedule_tick: Option<Duration>,
    /// Ask the store every this often whether another replica changed the
    /// catalog (a shared graph server) and swap the snapshot when it did;
    /// `None`: never (a store only this process writes).
    pub graph_poll: Option<Duration>,
    /// Host names an open server (no keys) answers besides this machine's
    /// own (`localhost`, `127.0.0.1`, `[::1]`).
    pub allowed_hosts: Vec<String>,
    /// How calls through toolgraph go (its reach is the airlock's).
    pub gateway: GatewayOptions,
}

/// What every handler shares.
#[derive(Debug)]
pub(crate) struct AppState {
    pub engine: Arc<Engine>,
    pub airlock: Arc<Airlock>,
    pub gateway: Arc<Gateway>,
    pub metrics: metrics::Metrics,
    pub keys: Keys,
    pub limits: Limits,
    pub reload: Vec<PathBuf>,
    pub allowed_hosts: Vec<String>,
    permits: Semaphore,
    waiting: AtomicUsize,
}

pub(crate) type Shared = Arc<AppState>;

/// Runs sync engine work on the blocking pool, under the request's time
/// limit (the engine stops at it: see `deadline`).
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T> + Send + 'static,
) -> std::result::Result<T, ApiError> {
    let until = DEADLINE.try_with(|d| *d).ok();
    blocking_until(until, f).await
}

/// [`blocking`] with an explicit limit (MCP tool calls run on rmcp's
/// session tasks, outside the request's).
pub(crate) async fn blocking_until<T: Send + 'static>(
    until: Option<Instant>,
    f: impl FnOnce() -> Result<T> + Send + 'static,
) -> std::result::Result<T, ApiError> {
    match tokio::task::spawn_blocking(move || crate::deadline::within(until, f)).await {
        Ok(r) => r.map_err(ApiError::from),
        Err(e) => Err(ApiError::from(Error::unavailable("the worker failed", e))),
    }
}

tokio::task_local! {
    /// The id of the request being served (error bodies carry it).
    pub(crate) static REQUEST_ID: String;
    /// When the request being served runs out of time.
    static DEADLINE: Instant;
}

/// Request ids: a client's own (`x-request-id`, up to 64 letters, digits,
/// `.`, `_`, `-`) is kept, anything else is replaced by one of ours.
#[derive(Debug, Clone, Copy, Default)]
struct RequestIds;

impl tower_http::request_id::MakeRequestId for RequestIds {
    fn make_request_id<B>(
        &mut self,
        _: &axum::http::Request<B>,
    ) -> Option<tower_http::request_id::RequestId> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        static START: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
        let seed = *START.get_or_init(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64)
        });
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let id = format!(
            "{:016x}",
            seed.rotate_left(17) ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        );
        HeaderValue::from_str(&id)
            .ok()
            .map(tower_http::request_id::RequestId::new)
    }
}

/// Drops a client's request id that is not a plain token (so that it
/// cannot fill the log): ours is made instead.
async fn plain_request_id(mut req: Request, next: Next) -> Response {
    let plain = req
        .headers()
        .get(REQUEST_ID_HEADER)
        .and_then(|v| v.to_str().ok())
        .is_none_or(|v| {
            !v.is_empty()
                && v.len() <= 64
                && v.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        });
    if !plain {
        req.headers_mut().remove(REQUEST_ID_HEADER);
    }
    next.run(req).await
}

const REQUEST_ID_HEADER: &str = "x-request-id";

/// Span, metrics, and the request id in error bodies.
async fn observe(State(state): State<Shared>, req: Request, next: Next) -> Response {
    let id = req
        .extensions()
        .get::<tower_http::request_id::RequestId>()
        .and_then(|r| r.header_value().to_str().ok())
        .unwrap_or("-")
        .to_string();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_string(), |p| p.as_str().to_string());
    let method = metrics::Method::of(req.method());
    let span = tracing::info_span!("request", id = %id, method = %req.method(), route = %route);
    let started = Instant::now();
    let resp = {
        use tracing::Instrument;
        REQUEST_ID
            .scope(
                id,
                async move { one_error_shape(next.run(req).await).await },
            )
            .instrument(span.clone())
            .await
    };
    let status = resp.status().as_u16();
    let seconds = started.elapsed().as_secs_f64();
    state.metrics.request(method, &route, status, seconds);
    span.in_scope(|| {
        if status >= 500 {
            tracing::error!(status, ms = seconds * 1000.0, "answered");
        } else {
            tracing::debug!(status, ms = seconds * 1000.0, "answered");
        }
    });
    resp
}

/// Answers that left axum or a layer as plain text (405, a rejected path,
/// the MCP transport's 4xx) get the one JSON error shape too.
async fn one_error_shape(resp: Response) -> Response {
    let status = resp.status();
    let json = resp
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("json"));
    if !(status.is_client_error() || status.is_server_error()) || json {
        return resp;
    }
    let (parts, body) = resp.into_parts();
    let text = axum::body::to_bytes(body, 4096)
        .await
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
        .unwrap_or_default();
    let code = error::Code::of_status(status);
    let message = if text.is_empty() || status.is_server_error() {
        status
            .canonical_reason()
            .unwrap_or("request failed")
            .to_string()
    } else {
        text
    };
    let mut out = ApiError::new(code, message).into_response();
    *out.status_mut() = status;
    for (k, v) in &parts.headers {
        if k != axum::http::header::CONTENT_TYPE && k != axum::http::header::CONTENT_LENGTH {
            out.headers_mut().insert(k.clone(), v.clone());
        }
    }
    out
}

/// The key check: the principal goes into the request's extensions.
async fn authenticate(State(state): State<Shared>, mut req: Request, next: Next) -> Response {
    match state.keys.check(&req) {
        Ok(p) => {
            req.extensions_mut().insert(p);
            next.run(req).await
        }
        Err(e) => e.into_response(),
    }
}

/// The concurrency limit (queue, then 429) and the time limit (504).
async fn limit(State(state): State<Shared>, req: Request, next: Next) -> Response {
    let waiting = state.waiting.fetch_add(1, Ordering::SeqCst);
    if waiting >= state.limits.max_queue + state.limits.max_in_flight {
        state.waiting.fetch_sub(1, Ordering::SeqCst);
        let mut e = ApiError::new(
            error::Code::TooManyRequests,
            "the server is at its concurrency limit and its queue is full; retry shortly",
        );
        e.retry_after = Some(1);
        return e.into_response();
    }
    let timeout = state.limits.request_timeout;
    let until = Instant::now() + timeout;
    let answer = tokio::time::timeout(
        timeout,
        DEADLINE.scope(until, async {
            let _permit = state.permits.acquire().await;
            next.run(req).await
        }),
    )
    .await;
    state.waiting.fetch_sub(1, Ordering::SeqCst);
    match answer {
        Ok(resp) => resp,
        Err(_) => ApiError::new(
            error::Code::Timeout,
            format!("the request took longer than {} s", timeout.as_secs_f32()),
        )
        .into_response(),
    }
}

/// The whole API: `/v1`, `/mcp`, health, metrics, the OpenAPI document.
/// Reads the airlock's state from the store; with `schedule_tick`, starts
/// its schedules on the current tokio runtime.
pub fn router(engine: Arc<Engine>, options: ServeOptions) -> Result<Router> {
    let airlock = Arc::new(Airlock::open(engine.clone(), options.airlock.clone())?);
    let gateway = Arc::new(
        Gateway::open(
            engine.clone(),
            GatewayOptions {
                reach: options.airlock.reach.clone(),
                fail_after: options.airlock.fail_after,
                recover_after: options.airlock.recover_after,
                ..options.gateway.clone()
            },
        )?
        .with_airlock(airlock.clone()),
    );
    if let Some(tick) = options.schedule_tick {
        let handle = tokio::runtime::Handle::try_current()
            .map_err(|_| Error::unavailable_msg("the airlock's schedules need a tokio runtime"))?;
        handle.spawn(schedules(airlock.clone(), tick));
        handle.spawn(recoveries(gateway.clone(), tick));
    }
    if let Some(every) = options.graph_poll {
        let handle = tokio::runtime::Handle::try_current().map_err(|_| {
            Error::unavailable_msg("polling the graph server needs a tokio runtime")
        })?;
        handle.spawn(poll_store(airlock.clone(), every));
    }
    let state: Shared = Arc::new(AppState {
        metrics: metrics::Metrics::new(engine.clone()),
        engine,
        airlock,
        gateway,
        keys: options.keys,
        permits: Semaphore::new(options.limits.max_in_flight.max(1)),
        limits: options.limits,
        reload: options.reload,
        allowed_hosts: options.allowed_hosts,
        waiting: AtomicUsize::new(0),
    });
    let api = v1::routes(state.clone())
        .merge(mcp::routes(state.clone()))
        .layer(axum::middleware::from_fn_with_state(state.clone(), limit))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            authenticate,
        ));
    Ok(Router::new()
        .merge(api)
        .merge(health::routes(state.clone()))
        .merge(openapi::routes())
        .merge(console::routes())
        .fallback(|| async {
            ApiError::new(
                error::Code::RouteNotFound,
                "no such route (see /openapi.json)",
            )
        })
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            edge::guard,
        ))
        .layer(axum::middleware::from_fn_with_state(state, observe))
        .layer(tower_http::request_id::PropagateRequestIdLayer::x_request_id())
        .layer(tower_http::request_id::SetRequestIdLayer::x_request_id(
            RequestIds,
        ))
        .layer(axum::middleware::from_fn(plain_request_id)))
}

/// Probes the upstreams of tools failed calls switched off, every `tick`.
async fn recoveries(gateway: Arc<Gateway>, tick: Duration) {
    let mut interval = tokio::time::interval(tick);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        interval.tick().await;
        let g = gateway.clone();
        match tokio::task::spawn_blocking(move || g.recover()).await {
            Ok(Ok(back)) if !back.is_empty() => {
                tracing::info!(?back, "switched back on after probes")
            }
            Ok(Err(e)) => tracing::warn!(error = %e, "probing switched-off upstreams"),
            _ => {}
        }
    }
}

/// Catches up with the writes of other replicas: when the shared store
/// moved, the engine swaps its snapshot and the airlock re-reads its state.
async fn poll_store(airlock: Arc<Airlock>, every: Duration) {
    let mut interval = tokio::time::interval(every);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        interval.tick().await;
        let a = airlock.clone();
        let work = tokio::task::spawn_blocking(move || {
            let synced = a.engine().sync()?;
            if synced.records {
                a.reread()?;
            }
            Ok::<_, Error>(synced)
        });
        match work.await {
            Ok(Ok(synced)) if synced.catalog => tracing::info!(
                tools = airlock.engine().catalog_size(),
                "the shared catalog changed; snapshot swapped"
            ),
            Ok(Ok(_)) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "cannot catch up with the graph server"),
            Err(e) => tracing::warn!(error = %e, "the catch-up task failed"),
        }
    }
}

/// The airlock's schedules: due scans every tick, health probes and gap
/// discovery at their intervals. Failures are logged and recorded on the
/// source; they never stop the service.
async fn schedules(airlock: Arc<Airlock>, tick: Duration) {
    let mut last_probe: Option<Instant> = None;
    let mut last_discovery: Option<Instant> = None;
    let mut interval = tokio::time::interval(tick);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        interval.tick().await;
        let a = airlock.clone();
        let probe_due = a
            .options()
            .health_every
            .is_some_and(|every| last_probe.is_none_or(|l| l.elapsed() >= every));
        let discovery_due = a.options().discovery
            && last_discovery.is_none_or(|l| l.elapsed() >= a.options().discover_every);
        if probe_due {
            last_probe = Some(Instant::now());
        }
        if discovery_due {
            last_discovery = Some(Instant::now());
        }
        let work = tokio::task::spawn_blocking(move || {
            for id in a.due_now() {
                match a.scan(&id) {
                    Ok(r) => {
                        tracing::info!(source = %id, new = r.new.len(), changed = r.changed.len(), missing = r.missing.len(), "scheduled scan")
                    }
                    Err(e) => tracing::warn!(source = %id, error = %e, "scheduled scan failed"),
                }
            }
            if probe_due {
                match a.probe() {
                    Ok(r) => {
                        for p in r.iter().filter(|p| p.switched.is_some()) {
                            tracing::warn!(tool = %p.tool, what = ?p.switched, "health");
                        }
                    }
                    Err(e) => tracing::warn!(error = %e, "health probes failed"),
                }
            }
            if discovery_due && let Err(e) = a.discover_gaps() {
                tracing::warn!(error = %e, "gap discovery failed");
            }
        });
        if let Err(e) = work.await {
            tracing::error!(error = %e, "airlock schedule panicked");
        }
    }
}

/// Waits for SIGTERM or Ctrl-C.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
    tracing::info!("shutting down: finishing the requests in flight");
}

/// Serves the API on `addr` until SIGTERM or Ctrl-C. Without keys the
/// server is open, so it only binds to loopback.
pub fn serve(engine: Engine, addr: &str, options: ServeOptions) -> Result<()> {
    let socket: SocketAddr = addr.parse().map_err(|e| {
        Error::invalid_field(
            crate::error::Field::Addr,
            format!("`{addr}` is not HOST:PORT: {e}"),
        )
    })?;
    if options.keys.is_open() && !socket.ip().is_loopback() {
        return Err(Error::Forbidden(format!(
            "refusing to serve on {addr} without keys: set TOOLGRAPH_ADMIN_KEY or --keys FILE, or bind to 127.0.0.1"
        )));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::unavailable("cannot start the runtime", e))?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(socket)
            .await
            .map_err(|e| Error::unavailable(format!("cannot listen on {addr}"), e))?;
        if options.keys.is_open() {
            tracing::warn!(
                "no key configured: the API is OPEN to anyone who can reach {addr} (loopback only); set TOOLGRAPH_ADMIN_KEY or --keys FILE"
            );
        }
        tracing::info!("toolgraph serving on http://{addr} (API under /v1, MCP at /mcp, docs at /openapi.json)");
        serve_on(listener, Arc::new(engine), options, shutdown_signal()).await
    })
}

/// Serves the API on a bound listener until `shutdown` completes, through
/// the accept loop's connection cap and timeouts (what `serve` runs; tests
/// and embedders bring their own listener and runtime).
pub async fn serve_on(
    listener: tokio::net::TcpListener,
    engine: Arc<Engine>,
    options: ServeOptions,
    shutdown: impl Future<Output = ()>,
) -> Result<()> {
    let limits = options.limits.clone();
    let app = router(engine, options)?;
    serve_app(listener, app, &limits, shutdown).await;
    Ok(())
}

/// Serves an app from [`router`] on a bound listener with `limits`' accept
/// loop (connection cap, header-read and idle timeout).
pub async fn serve_app(
    listener: tokio::net::TcpListener,
    app: Router,
    limits: &Limits,
    shutdown: impl Future<Output = ()>,
) {
    listen::serve(listener, app, limits, shutdown).await;
}

/// Installs logging (`RUST_LOG`, default `info`) and the stage timings.
pub fn init_tracing() {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
                .with_filter(filter),
        )
        .with(metrics::stage_timings())
        .try_init();
}
