//! Serving HTTP/1 connections: the accept loop, the idle timeout and graceful
//! shutdown, on hyper's own connection builder.
//!
//! Why not `axum::serve`: it gives hyper no timer, so hyper's header read timeout is
//! off, and a connection waits for a request's head forever. Measured before this
//! module (`tests/http/http.rs`, `slow_or_idle_connections_are_closed`): a client that
//! sent half a request head, and a keep-alive connection left idle after one answer,
//! were both still open after 70 s. Every such connection holds a socket and a
//! task, so a few thousand of them (a buggy client, or a slowloris attack) exhaust
//! the process's file descriptors. With hyper's timer set, a connection must send a
//! whole request head within [`ServerOptions::idle_timeout`] of being accepted or of
//! its last answer, or it is closed. A request's body and a live stream's answer
//! are not under it: `request_timeout` and the stream's own end govern those.
//!
//! Owns: accepting, one task per connection, the header timer, and the shutdown:
//! stop accepting, let each connection finish the request it is in (idle ones close
//! at once), wait at most the grace. Must not: look at requests: the router does.
//!
//! [`ServerOptions::idle_timeout`]: super::ServerOptions::idle_timeout

use std::io;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// Serves `router` on `listener` until `shutdown` is cancelled, then stops accepting,
/// lets connections finish their requests in flight (live streams end on the same
/// token), and returns when all are done or after `grace`.
pub(super) async fn serve(
    listener: TcpListener,
    router: Router,
    shutdown: CancellationToken,
    grace: Duration,
    idle_timeout: Duration,
) -> io::Result<()> {
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(idle_timeout)
        .keep_alive(true);
    let graceful = GracefulShutdown::new();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = shutdown.cancelled() => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                accept_failed(e).await;
                continue;
            }
        };
        let service = TowerToHyperService::new(router.clone());
        let conn = graceful.watch(builder.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                // A client that went away, or the idle timeout: routine.
                tracing::trace!(error = %e, "connection ended with an error");
            }
        });
    }
    drop(listener);
    match tokio::time::timeout(grace, graceful.shutdown()).await {
        Ok(()) => Ok(()),
        Err(_) => {
            tracing::warn!(
                grace_secs = grace.as_secs(),
                "requests still in flight after the shutdown grace; stopping anyway"
            );
            Ok(())
        }
    }
}

/// What to do when `accept` fails. A connection that failed before it was accepted
/// is the client's business; anything else (out of file descriptors, most often) is
/// logged and waited out for a second, so the loop does not spin on it.
async fn accept_failed(e: io::Error) {
    if matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    ) {
        return;
    }
    tracing::error!(error = %e, "accepting a connection failed; retrying in 1 s");
    tokio::time::sleep(Duration::from_secs(1)).await;
}
