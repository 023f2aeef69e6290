//! Closing an HTTP/1 connection after an answer sent before its request's body was
//! read.
//!
//! Many answers come before the body is read: 401 and 403 from the token check, 404
//! and 405 from the router, 413 from the body limit (on `Content-Length` alone, or
//! part-way through a body sent without one). hyper then cannot find where the next
//! request starts, so it drops the connection after the answer, but nothing told the
//! client, which keeps it in its pool: its next request on it fails half-sent
//! (`BrokenPipe`, or an incomplete message). With a body of a few hundred KiB that was
//! about one request in four after a 401 or a 404, and a few in a hundred after a 413
//! (`tests/http/http.rs`, `a_refused_body_does_not_break_the_next_request`). A write that
//! fails half-sent is one whose outcome a client cannot know, so this matters more
//! than the cost of a new connection.
//!
//! So the request's body is watched, and an answer sent before the body's end says
//! `Connection: close`: the client opens a new connection for its next request.
//! Requests without a body, and answers after the whole body was read (a 400 for a
//! bad field, a batch with too many items), keep their connection. HTTP/2 has no such
//! header and needs none: an unread stream does not end the connection.
//!
//! The same watch tells `error.rs` whether a request that timed out had its whole
//! body ([`BodyEnded`], a request extension): a write whose body never finished
//! arriving never ran, and is answered so (408 `body_timeout`), not `unknown`.
//!
//! Owns: the watched body and the header. Must not: change any answer otherwise.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::Request;
use axum::http::{HeaderValue, Version, header};
use axum::middleware::Next;
use axum::response::Response;
use http_body::{Frame, SizeHint};

/// Middleware: `Connection: close` on an HTTP/1 answer sent before the request's body
/// was read to its end.
pub(super) async fn close_if_body_unread(request: Request, next: Next) -> Response {
    if request.version() > Version::HTTP_11 || request.body().is_end_stream() {
        return next.run(request).await;
    }
    let ended = Arc::new(AtomicBool::new(false));
    let (mut parts, body) = request.into_parts();
    parts.extensions.insert(BodyEnded(ended.clone()));
    let watched = Watched {
        inner: body,
        ended: ended.clone(),
    };
    let mut response = next
        .run(Request::from_parts(parts, Body::new(watched)))
        .await;
    if !ended.load(Ordering::Acquire) {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// Whether a request's body has been read to its end: in the extensions of every
/// HTTP/1 request that has a body (one without has nothing left to read).
#[derive(Debug, Clone)]
pub(super) struct BodyEnded(Arc<AtomicBool>);

impl BodyEnded {
    /// True once the whole body has been read.
    pub(super) fn get(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

/// A request body that marks `ended` once it has been read to its end.
struct Watched {
    inner: Body,
    ended: Arc<AtomicBool>,
}

impl HttpBody for Watched {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        // The end: no more frames, or the last one read (a body of known length is
        // at its end as soon as its last byte has come, before `None` is asked for).
        if matches!(polled, Poll::Ready(None)) || self.inner.is_end_stream() {
            self.ended.store(true, Ordering::Release);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
