//! Errors as HTTP responses: `{"error": {"code", "message"}}` with the right status.
//!
//! | status | codes | when |
//! |---|---|---|
//! | 400 | `invalid_json`, `invalid_player`, `invalid_request_id`, `score_out_of_range`, `invalid_time`, `before_season`, `outside_calendar`, `future_time`, `unknown_cohort`, `unknown_profile_field`, `profile_too_large`, `bad_bracket`, `bad_limit`, `clock_not_forward`, `clock_too_far`, `ban_in_past`, `no_exclusions`, `not_in_bracket`, `excludes_everyone`, `invalid_event_id`, `bad_request` | bad input; nothing was written |
//! | 401 | `unauthorized` | no token, a token the server does not know, or a player token that is garbled, forged, not yet valid or for another league |
//! | 401 | `token_expired` | a player token past its `exp` |
//! | 403 | `forbidden` | a `viewer` token on a write; a server or viewer token on an operator's route; a player token outside its own player and bracket |
//! | 403 | `banned` | a join or score of a banned player; a player token minted for one, or a live stream opened with one's token |
//! | 404 | `not_found`, `unknown_tier`, `unknown_period`, `unknown_player`, `unknown_bracket`, `not_placed`, `expired` | nothing there |
//! | 404 | `player_tokens_disabled` | player tokens are off (no `LEAGUEKIT_PLAYER_TOKEN_SECRET`) |
//! | 404 | `events_disabled` | a player's event stream in a season without `[events]` |
//! | 405 | `method_not_allowed` | a known path with another method |
//! | 408 | `body_timeout` | a write's body did not finish arriving within the request timeout; nothing was written |
//! | 409 | `period_closed`, `period_open`, `not_joined`, `placed_later`, `bracket_not_closed`, `no_staging_clock`, `staging_mismatch` | the league's state refuses it; nothing was written |
//! | 409 | `not_started`, `still_closing` | the same, but only for a moment: with `Retry-After` (seconds) and `retry_after_ms` |
//! | 413 | `payload_too_large`, `too_many_items` | the body is over the limit |
//! | 422 | `ttl_out_of_range` | a player token's `ttl` outside 60 seconds to the server's maximum (`LEAGUEKIT_PLAYER_TOKEN_MAX_TTL`, default 86400) |
//! | 422 | `limit_exceeded` | beyond a limit of the season's `[limits]` (`max_value`, `max_period_score`); nothing was written |
//! | 429 | `rate_limited` | the player sent more updates than `limits.rate` allows; nothing was written: with `Retry-After` (seconds) and `retry_after_ms` |
//! | 429 | `too_many_streams` | the client (a player, whatever their tokens; a server, viewer or admin token) holds as many live streams as it may (`LEAGUEKIT_STREAMS_PER_TOKEN`): with `Retry-After` and `retry_after_ms` |
//! | 500 | `internal` | a bug: please report it |
//! | 503 | `store_unreachable` | the request never reached the store (Redis refused the connection, or did a moment ago); nothing was written: send it again after `Retry-After` (seconds; also `retry_after_ms`) |
//! | 503 | `unknown` | the store failed after a write may have happened: a score update may be resent only with the same `request_id` and the same `at` (the answer's `at`), a reward claim with the same `request_id`; a join may simply be sent again |
//! | 503 | `store_unavailable`, `timeout` | the store failed or was too slow (for a write: see `unknown`) |
//! | 503 | `store_full` | Redis's memory is full (`maxmemory` under `noeviction`): it refused the write, nothing was written; reads keep working |
//! | 503 | `too_many_streams` | the server holds as many live streams as it may, all clients together (`LEAGUEKIT_STREAMS_MAX`): with `Retry-After` and `retry_after_ms` |
//! | 503 | `shutting_down` | `/healthz` while the server stops |
//!
//! docs/http.md has the catalogue of every code with its meaning.
//!
//! `not_started` and `still_closing` are 409, not 503: they are the league's state at a
//! period boundary (a returning player in the first `max_skew` of a period), not a
//! sick service, and they must not trip alerts on 5xx. A client waits `Retry-After`
//! and sends the same request again.
//!
//! Owns: mapping every error to its status and code, and the JSON error shape.
//! Must not: decide what is an error: the library does; this only translates.

use std::time::Duration;

use axum::Json;
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;

use super::keep_alive::BodyEnded;
use crate::error::{BackendFailure, Error, InputError, StoreError};

/// An error answer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// A stable, machine-readable code (see the module docs).
    pub code: &'static str,
    /// What was wrong and what to do, for people.
    pub message: String,
    /// When the same request may succeed after a wait.
    pub retry_after: Option<Duration>,
    /// For `unknown` on a score update: the event time it carried, which a resend
    /// must repeat.
    pub at: Option<DateTime<Utc>>,
}

/// The JSON body of an error.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[non_exhaustive]
pub struct ErrorBody {
    /// The error.
    pub error: ErrorDetail,
}

/// The `error` object.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[non_exhaustive]
pub struct ErrorDetail {
    /// A stable, machine-readable code, such as `period_closed` or `unknown`.
    #[schema(value_type = super::openapi::ErrorCode)]
    pub code: String,
    /// What was wrong and what to do.
    pub message: String,
    /// For `not_started`, `still_closing`, `rate_limited`, `store_unreachable` and
    /// `too_many_streams`: how long to wait, in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    /// For `unknown` on a score update: the event time (RFC 3339) the update carried
    /// (the one sent, or the server's clock when none was): resend it with the same
    /// `request_id` and this `at`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(format = DateTime)]
    pub at: Option<String>,
}

impl ApiError {
    /// An error with this status, code and message.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            retry_after: None,
            at: None,
        }
    }

    /// 400 with `code`.
    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }

    /// 401.
    pub fn unauthorized(had_token: bool) -> Self {
        let message = if had_token {
            "the bearer token is not valid for this server; check LEAGUEKIT_SERVER_TOKENS / \
             LEAGUEKIT_VIEWER_TOKENS on the server and the token you send"
        } else {
            "a token is required: send \"Authorization: Bearer TOKEN\" with a server or viewer \
             token (only /healthz answers without one)"
        };
        Self::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
    }

    /// 403.
    pub fn forbidden() -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            "this token has the viewer role, which only reads; writes need a server token \
             (LEAGUEKIT_SERVER_TOKENS)",
        )
    }

    /// 403 on an operator's route for a token that is not an admin's.
    pub fn admin_only() -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            "this route is the operator's: it needs an admin token \
             (LEAGUEKIT_ADMIN_TOKENS); server and viewer tokens may not call it",
        )
    }

    /// 403 for a player token outside what it may read.
    pub fn player_forbidden() -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            "a player token reads only its own player (view, around, rewards), the season, \
             and its own bracket's standings and live standings in the running period",
        )
    }

    /// 401 for a player token past its `exp`.
    pub fn token_expired() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "token_expired",
            "the player token has expired; ask the game server for a new one",
        )
    }

    /// 404 on the player token route of a server without a player token secret.
    pub fn player_tokens_disabled() -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "player_tokens_disabled",
            "player tokens are off on this server: set LEAGUEKIT_PLAYER_TOKEN_SECRET (at \
             least 32 bytes, e.g. `openssl rand -hex 32`) and restart it",
        )
    }

    /// 404.
    pub fn not_found(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, code, message)
    }

    /// 409.
    pub fn conflict(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, code, message)
    }

    /// The detail object (for batch items).
    pub fn detail(&self) -> ErrorDetail {
        ErrorDetail {
            code: self.code.to_owned(),
            message: self.message.clone(),
            retry_after_ms: self
                .retry_after
                .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            at: self
                .at
                .map(|at| at.to_rfc3339_opts(SecondsFormat::Millis, true)),
        }
    }
}

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        let message = e.to_string();
        let retry_after = e.retry_after();
        let at = match &e {
            Error::Store(StoreError::Unknown { at, .. }) => *at,
            _ => None,
        };
        let (status, code) = match &e {
            Error::Input(i) => input_status(i),
            Error::Store(StoreError::Unknown { .. }) => {
                (StatusCode::SERVICE_UNAVAILABLE, "unknown")
            }
            Error::Store(StoreError::Unreachable { .. }) => {
                (StatusCode::SERVICE_UNAVAILABLE, "store_unreachable")
            }
            Error::Store(StoreError::PeriodClosed) => (StatusCode::CONFLICT, "period_closed"),
            Error::Store(StoreError::Time(_)) => (StatusCode::CONFLICT, "not_started"),
            // Redis's memory is full under noeviction: it refuses writes, reads work.
            Error::Store(StoreError::Backend {
                kind: BackendFailure::Full,
                ..
            }) => (StatusCode::SERVICE_UNAVAILABLE, "store_full"),
            Error::Store(_) => (StatusCode::SERVICE_UNAVAILABLE, "store_unavailable"),
            Error::Config(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        };
        if status.is_server_error() && code != "unknown" {
            tracing::warn!(code, error = %message, "request failed");
        }
        Self {
            status,
            code,
            message,
            retry_after,
            at,
        }
    }
}

fn input_status(e: &InputError) -> (StatusCode, &'static str) {
    use InputError as I;
    let bad = StatusCode::BAD_REQUEST;
    match e {
        I::PlayerId { .. } => (bad, "invalid_player"),
        I::RequestId { .. } => (bad, "invalid_request_id"),
        I::Score(_) => (bad, "score_out_of_range"),
        I::BeforeSeason { .. } => (bad, "before_season"),
        I::OutsideCalendar { .. } => (bad, "outside_calendar"),
        I::FutureTime { .. } => (bad, "future_time"),
        I::UnknownProfileField { .. } => (bad, "unknown_profile_field"),
        I::ProfileTooLarge { .. } => (bad, "profile_too_large"),
        I::BadBracket { .. } => (bad, "bad_bracket"),
        I::BadLimit { .. } => (bad, "bad_limit"),
        I::UnknownCohort { .. } => (bad, "unknown_cohort"),
        I::UnknownTier { .. } => (StatusCode::NOT_FOUND, "unknown_tier"),
        I::UnknownPeriod { .. } => (StatusCode::NOT_FOUND, "unknown_period"),
        I::PeriodClosed { .. } => (StatusCode::CONFLICT, "period_closed"),
        I::NotJoined { .. } => (StatusCode::CONFLICT, "not_joined"),
        I::NotStarted { .. } => (StatusCode::CONFLICT, "not_started"),
        I::StillClosing { .. } => (StatusCode::CONFLICT, "still_closing"),
        I::PlacedLater { .. } => (StatusCode::CONFLICT, "placed_later"),
        I::NoStagingClock { .. } => (StatusCode::CONFLICT, "no_staging_clock"),
        I::StagingMismatch { .. } => (StatusCode::CONFLICT, "staging_mismatch"),
        I::ClockTooFar { .. } => (bad, "clock_too_far"),
        I::ClockNotForward { .. } => (bad, "clock_not_forward"),
        I::Banned { .. } => (StatusCode::FORBIDDEN, "banned"),
        I::UnknownPlayer { .. } => (StatusCode::NOT_FOUND, "unknown_player"),
        I::BanInPast { .. } => (bad, "ban_in_past"),
        I::UnknownBracket { .. } => (StatusCode::NOT_FOUND, "unknown_bracket"),
        I::BracketNotClosed { .. } => (StatusCode::CONFLICT, "bracket_not_closed"),
        I::NoExclusions => (bad, "no_exclusions"),
        I::NotInBracket { .. } => (bad, "not_in_bracket"),
        I::ExcludesEveryone { .. } => (bad, "excludes_everyone"),
        I::LimitExceeded {
            limit: crate::error::Limit::Rate,
            ..
        } => (StatusCode::TOO_MANY_REQUESTS, "rate_limited"),
        I::LimitExceeded { .. } => (StatusCode::UNPROCESSABLE_ENTITY, "limit_exceeded"),
        I::NotPlaced { .. } => (StatusCode::NOT_FOUND, "not_placed"),
        _ => (bad, "bad_request"),
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            error: self.detail(),
        };
        let mut response = (self.status, Json(body)).into_response();
        if let Some(wait) = self.retry_after {
            // Whole seconds, rounded up: a client that waits this long may retry.
            let secs = wait.as_millis().div_ceil(1000).max(1);
            if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
                response.headers_mut().insert(header::RETRY_AFTER, v);
            }
        }
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"leaguekit\""),
            );
        }
        response
    }
}

/// Turns every error answer that is not JSON yet (a 404 or 405 from the router, a
/// 413 from the body limit, a timeout, a panic) into the JSON error shape.
pub(super) async fn json_errors(request: Request, next: Next) -> Response {
    let method = request.method().clone();
    let resend = resend_advice(request.uri().path());
    let body = request.extensions().get::<BodyEnded>().cloned();
    let response = next.run(request).await;
    // Read after the answer: whether the body had ended by then.
    let body_unread = body.is_some_and(|b| !b.get());
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json") || v.starts_with("text/html"));
    if is_json {
        return response;
    }
    let write = !matches!(method, Method::GET | Method::HEAD | Method::OPTIONS);
    let error = match status {
        StatusCode::NOT_FOUND => ApiError::not_found(
            "not_found",
            "no such endpoint; see /openapi.json for the API",
        ),
        StatusCode::METHOD_NOT_ALLOWED => ApiError::new(
            status,
            "method_not_allowed",
            format!("{method} is not allowed here; see /openapi.json for the API"),
        ),
        StatusCode::PAYLOAD_TOO_LARGE => too_large(),
        // A write that timed out with its body still arriving never reached the league
        // (every handler reads the whole body before it calls it): nothing was written.
        StatusCode::SERVICE_UNAVAILABLE | StatusCode::REQUEST_TIMEOUT if write && body_unread => {
            ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                "body_timeout",
                "the request body did not finish arriving within the request timeout \
                 ([server] request_timeout), so nothing was written; send it again",
            )
        }
        StatusCode::SERVICE_UNAVAILABLE | StatusCode::REQUEST_TIMEOUT if write => ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "unknown",
            format!(
                "the request timed out and its outcome is unknown: it may or may not have \
                 been applied; {resend}"
            ),
        ),
        StatusCode::SERVICE_UNAVAILABLE | StatusCode::REQUEST_TIMEOUT => ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "timeout",
            "the request timed out (the store is slow or unreachable); try again",
        ),
        s if s.is_server_error() => ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "internal error; the server logged it (please report it)",
        ),
        s => ApiError::new(
            s,
            "bad_request",
            s.canonical_reason().unwrap_or("bad request"),
        ),
    };
    let mut fixed = error.into_response();
    for (name, value) in response.headers() {
        if name == header::ALLOW || name == header::RETRY_AFTER {
            fixed.headers_mut().insert(name.clone(), value.clone());
        }
    }
    fixed
}

/// What a client may do after a write to `path` timed out with an unknown outcome:
/// only score updates and reward claims have request ids; every other write is
/// idempotent.
fn resend_advice(path: &str) -> &'static str {
    if path.ends_with("/scores") || path.ends_with("/scores:batch") {
        "resend it only with the same request_id and the same at, which makes a resend safe"
    } else if path.ends_with("/rewards:claim") {
        "resend it only with the same request_id, which makes a resend safe"
    } else if path.ends_with("/join") {
        "a join is idempotent: send it again (a player joins a period once)"
    } else {
        "this write is idempotent: send it again"
    }
}

/// 413 for a body over the limit.
pub(super) fn too_large() -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "payload_too_large",
        "the request body is larger than this server accepts ([server] body_limit); send \
         less, or split a batch",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// "Not sent" is its own 503 with `Retry-After`; an unknown update names its `at`.
    #[test]
    fn store_outcomes_have_their_own_answers() {
        let e = ApiError::from(Error::from(StoreError::Unreachable {
            reason: "connection refused".to_owned(),
            retry_after: Duration::from_millis(1200),
        }));
        assert_eq!(
            (e.status, e.code),
            (StatusCode::SERVICE_UNAVAILABLE, "store_unreachable")
        );
        assert_eq!(e.detail().retry_after_ms, Some(1200));
        let response = e.into_response();
        assert_eq!(
            response.headers().get(header::RETRY_AFTER),
            Some(&HeaderValue::from_static("2"))
        );
        let at = DateTime::parse_from_rfc3339("2026-01-05T10:00:00Z")
            .expect("time")
            .with_timezone(&Utc);
        let timeout =
            crate::error::ErrorSource::new(std::io::Error::from(std::io::ErrorKind::TimedOut));
        let e = ApiError::from(Error::from(
            StoreError::Unknown {
                op: "update",
                source: timeout,
                at: None,
            }
            .stamped(at),
        ));
        assert_eq!(e.code, "unknown");
        assert_eq!(e.detail().at.as_deref(), Some("2026-01-05T10:00:00.000Z"));
        assert!(
            e.message.contains("2026-01-05T10:00:00.000Z"),
            "{}",
            e.message
        );
        assert_eq!(e.retry_after, None);
    }
}
