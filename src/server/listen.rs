//! The accept loop: what a connection may hold before it is a request.
//!
//! `axum::serve` kept every connection as long as the client liked: 20,000
//! half-open connections used up the file descriptors and the server
//! stopped answering anyone. Here each connection takes a permit (at most
//! [`Limits::max_connections`] at once; past that the loop stops accepting
//! and new clients wait in the kernel's backlog until one closes), must
//! send its request headers within [`Limits::header_read_timeout`] (the
//! same clock runs while a kept-alive connection sits idle between
//! requests, so idle connections go too), and once its headers are in, the
//! request is under the time limit of the `limit` middleware. HTTP/1.1
//! only: every client of this API speaks it, and HTTP/2's idle streams
//! would need limits of their own.
//!
//! Shutdown: stop accepting, let the requests in flight finish (at most the
//! request time limit), then close what is left.

use super::Limits;
use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// File descriptors kept for everything else than client connections (the
/// store, the model, log files, outbound fetches).
const RESERVED_FDS: u64 = 256;

/// Raises the soft limit on open files to the hard one and says how many
/// connections fit under it (`wanted` at most).
pub(crate) fn connections_that_fit(wanted: usize) -> usize {
    let hard = rlimit::Resource::NOFILE
        .get()
        .map_or(1024, |(_, hard)| hard);
    let soft = rlimit::increase_nofile_limit(hard).unwrap_or(1024);
    let fit = usize::try_from(soft.saturating_sub(RESERVED_FDS)).unwrap_or(usize::MAX);
    wanted.clamp(1, fit.max(1))
}

/// Serves `app` on `listener` until `shutdown` completes.
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    limits: &Limits,
    shutdown: impl Future<Output = ()>,
) {
    let max = connections_that_fit(limits.max_connections);
    if max < limits.max_connections {
        tracing::warn!(
            wanted = limits.max_connections,
            max,
            "fewer connections fit under the open-file limit than configured"
        );
    }
    let permits = Arc::new(Semaphore::new(max));
    let graceful = GracefulShutdown::new();
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .max_buf_size(limits.header_bytes.max(8192) * 2)
        .max_headers(limits.max_headers * 2);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            p = permits.clone().acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break,
            },
            () = &mut shutdown => break,
        };
        let stream = tokio::select! {
            r = listener.accept() => match r {
                Ok((stream, _)) => stream,
                Err(e) => {
                    accept_failed(&e).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(app.clone());
        let conn = graceful.watch(builder.serve_connection(TokioIo::new(stream), service));
        let open = super::metrics::connections();
        open.inc();
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "connection closed with an error");
            }
            open.dec();
            drop(permit);
        });
    }
    drop(listener);
    let grace = limits.request_timeout + Duration::from_secs(1);
    tokio::select! {
        () = graceful.shutdown() => {},
        () = tokio::time::sleep(grace) => {
            tracing::warn!("requests still running after the grace period: closing them");
        }
    }
}

/// An accept that failed: a connection reset before it was accepted is
/// nothing; anything else (out of file descriptors) is logged and the loop
/// backs off briefly instead of spinning.
async fn accept_failed(e: &std::io::Error) {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(
        e.kind(),
        ConnectionAborted | ConnectionRefused | ConnectionReset
    ) {
        return;
    }
    tracing::warn!(error = %e, "cannot accept a connection; backing off");
    tokio::time::sleep(Duration::from_millis(100)).await;
}
