//! The Prometheus side of the metrics: the recorder, the request middleware and
//! `GET /metrics`. The metric names are in [`crate::metrics`].
//!
//! Owns: the Prometheus recorder, the per-request metrics and `GET /metrics`.
//! Must not: name library metrics (`crate::metrics` does) or block a scrape on a slow
//! store.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderValue, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

use crate::metrics::{HTTP_REQUESTS, HTTP_SECONDS, ROLLOVER_SECONDS};
use crate::store::Store;

use super::App;
use super::error::ApiError;

/// Buckets of the request latency histogram, in seconds.
const HTTP_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];
/// Buckets of the rollover duration histogram, in seconds.
const ROLLOVER_BUCKETS: &[f64] = &[0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0, 300.0];

/// How long a scrape waits for the store to refresh the players gauge.
const REFRESH: std::time::Duration = std::time::Duration::from_millis(500);

/// The recorder's handle, if this process's global recorder is ours.
static HANDLE: OnceLock<Option<PrometheusHandle>> = OnceLock::new();

/// Installs the Prometheus recorder as the global one, once per process.
pub(super) fn install() {
    HANDLE.get_or_init(|| {
        let builder = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Full(HTTP_SECONDS.into()), HTTP_BUCKETS)
            .and_then(|b| {
                b.set_buckets_for_metric(Matcher::Full(ROLLOVER_SECONDS.into()), ROLLOVER_BUCKETS)
            });
        let handle = builder.and_then(|b| b.install_recorder());
        match handle {
            Ok(h) => {
                crate::metrics::describe();
                Some(h)
            }
            Err(e) => {
                tracing::warn!(
                    error = %e,
                    "cannot install the Prometheus recorder (another metrics recorder is \
                     installed?); GET /metrics answers 404 and metrics go to that recorder"
                );
                None
            }
        }
    });
}

/// The `method` label: `GET`, `POST`, `PUT`, `PATCH`, `DELETE`, `HEAD` or `OPTIONS`,
/// else `other`. Never the request's own method: a made-up one (`X0001`) would make a new
/// series per request, before any token is checked.
fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}

/// The `route` label: the template of the route the path matched (one of the
/// router's own, such as `/v1/players/{player}`), else `unmatched`. Never the path.
fn route_label(request: &Request) -> String {
    request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |p| p.as_str().to_owned())
}

/// Counts every answer by method, route template and status, and times it. Every
/// label comes from a fixed set ([`method_label`], [`route_label`], and the status
/// codes the server answers with), so that no request, with or without a token, adds
/// a series.
pub(super) async fn track(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = method_label(request.method());
    let route = route_label(&request);
    let response = next.run(request).await;
    // The code the server answered with: the server chooses it, never the request.
    let status = response.status().as_str().to_owned();
    ::metrics::histogram!(HTTP_SECONDS, "method" => method, "route" => route.clone())
        .record(started.elapsed().as_secs_f64());
    ::metrics::counter!(HTTP_REQUESTS, "method" => method, "route" => route, "status" => status)
        .increment(1);
    response
}

/// `GET /metrics`.
#[utoipa::path(
    get,
    path = "/metrics",
    operation_id = "metrics",
    tag = "system",
    responses(
        (status = 200, description = "The Prometheus text format", content_type = "text/plain", body = String),
        (status = 401, body = super::ErrorBody),
        (status = 404, description = "Another metrics recorder is installed", body = super::ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(super) async fn render<S: Store>(State(app): State<Arc<App<S>>>) -> Response {
    let Some(Some(handle)) = HANDLE.get() else {
        return ApiError::not_found(
            "not_found",
            "this process exports its metrics through another recorder",
        )
        .into_response();
    };
    // A store that fails or is slow leaves the gauges as they were: a scrape during an
    // outage still answers, at once.
    let (players, writes) = tokio::join!(
        tokio::time::timeout(REFRESH, app.league.refresh_players_gauge()),
        tokio::time::timeout(REFRESH, app.league.refresh_write_state()),
    );
    match players {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::debug!(error = %e, "cannot refresh the players gauge"),
        Err(_) => tracing::debug!("the store is slow; the players gauge is not refreshed"),
    }
    match writes {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => tracing::debug!(error = %e, "cannot refresh the refused-writes gauge"),
        Err(_) => tracing::debug!("the store is slow; the refused-writes gauge is not refreshed"),
    }
    handle.run_upkeep();
    let mut r = handle.render().into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_come_from_a_fixed_set() {
        assert_eq!(method_label(&Method::GET), "GET");
        assert_eq!(method_label(&Method::OPTIONS), "OPTIONS");
        assert_eq!(method_label(&Method::TRACE), "other");
        let made_up = Method::from_bytes(b"X0001").expect("a method token");
        assert_eq!(method_label(&made_up), "other");
        let request = Request::builder()
            .uri("/no/such/path")
            .body(axum::body::Body::empty())
            .expect("a request");
        assert_eq!(route_label(&request), "unmatched");
    }
}
