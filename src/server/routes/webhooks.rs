//! Webhook dead letters over HTTP (admin tokens only): `GET /v1/webhooks/dead` lists
//! them, `POST /v1/webhooks/dead:replay` marks some or all for replay (audited).
//!
//! Owns: the dead letters' handlers and their JSON.
//! Must not: deliver anything (the deliverer of `server::webhooks` does).

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::error::{Error, InputError};
use crate::operator::audit::check_text;
use crate::server::App;
use crate::server::auth::Admin;
use crate::server::error::{ApiError, ErrorBody};
use crate::server::model::{Body, Q, rfc3339};
use crate::server::webhooks::{self, DeadCursor, Replay};
use crate::store::{DeadLetter, Store};

/// An event that could not be delivered to one URL.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct DeadLetterOut {
    /// The event's id (`Leaguekit-Event-Id`).
    id: String,
    /// The URL it failed at.
    url: String,
    /// The event JSON, as sent (a string).
    event: String,
    /// Attempts made, replays included.
    attempts: u32,
    /// The last attempt's failure (`HTTP 500`, `no answer in 10000 ms`, ...).
    error: String,
    /// When it was given up, or its last replay failed (RFC 3339).
    #[schema(format = DateTime)]
    at: String,
    /// Marked for replay and not yet delivered.
    replay: bool,
}

impl From<DeadLetter> for DeadLetterOut {
    fn from(l: DeadLetter) -> Self {
        DeadLetterOut {
            id: l.id,
            url: l.url,
            event: l.event,
            attempts: l.attempts,
            error: l.error,
            at: rfc3339(chrono::DateTime::from_timestamp_millis(l.at_ms).unwrap_or_default()),
            replay: l.replay,
        }
    }
}

/// `?after=&limit=` of the dead letters.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct DeadQueryIn {
    /// The `next` of the page before: list the letters recorded after it.
    #[param(min_length = 1, max_length = 300)]
    after: Option<String>,
    /// At most this many letters, 1-1000 (default 100).
    #[param(minimum = 1, maximum = 1000)]
    limit: Option<u64>,
}

/// A page of dead letters.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct DeadLettersOut {
    /// In the order they were recorded, oldest first.
    dead: Vec<DeadLetterOut>,
    /// Give it as `after` for the next page; null on the last page.
    #[schema(required = true)]
    next: Option<String>,
}

/// Body of a replay: `ids` or `all`, and why.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReplayIn {
    /// The event ids to replay (each listed by `GET /v1/webhooks/dead`).
    #[serde(default)]
    ids: Option<Vec<String>>,
    /// Replay every dead letter.
    #[serde(default)]
    all: Option<bool>,
    /// Why (recorded in the audit log).
    #[serde(default)]
    #[schema(schema_with = crate::server::model::reason)]
    reason: String,
}

/// The letters marked for replay.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ReplayOut {
    /// How many letters were marked: each is sent again within about 5 s and removed
    /// once delivered; one that fails again stays, unmarked, with its new error.
    marked: u64,
    /// The letters marked (the first 1000).
    dead: Vec<DeadLetterOut>,
}

/// The webhook dead letters: events given up after every attempt, per URL, in the
/// order they were recorded, a page at a time. Admin tokens only.
#[utoipa::path(
    get,
    path = "/v1/webhooks/dead",
    tag = "operators",
    params(DeadQueryIn),
    responses(
        (status = 200, body = DeadLettersOut),
        (status = 400, description = "bad_request: an `after` that is no page cursor, or a `limit` outside 1-1000", body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, description = "forbidden: not an admin token", body = ErrorBody),
        (status = 503, body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn dead<S: Store>(
    State(app): State<Arc<App<S>>>,
    _admin: Admin,
    Q(q): Q<DeadQueryIn>,
) -> Result<Json<DeadLettersOut>, ApiError> {
    let after = match q.after.as_deref() {
        None => None,
        Some(text) => Some(DeadCursor::parse(text).ok_or_else(|| {
            ApiError::bad_request(
                "bad_request",
                format!(
                    "after {text:?} is not a page cursor: give the `next` of the page before, \
                     or leave it out for the first page"
                ),
            )
        })?),
    };
    let limit = usize::try_from(q.limit.unwrap_or(100)).unwrap_or(usize::MAX);
    if !(1..=webhooks::MAX_LISTED).contains(&limit) {
        return Err(ApiError::bad_request(
            "bad_request",
            format!("limit {limit} is not from 1 to 1000"),
        ));
    }
    let (letters, next) = webhooks::dead_letters(&app.league, after.as_ref(), limit).await?;
    Ok(Json(DeadLettersOut {
        dead: letters.into_iter().map(Into::into).collect(),
        next: next.map(|c| c.text()),
    }))
}

/// Marks webhook dead letters for replay (an admin token only): `{"ids": [...]}` or
/// `{"all": true}`, with a reason. The deliverers send each marked letter again
/// within about 5 s and remove it once delivered. Audited.
#[utoipa::path(
    post,
    path = "/v1/webhooks/dead:replay",
    tag = "operators",
    request_body(content = ReplayIn),
    responses(
        (status = 200, body = ReplayOut),
        (status = 400, description = "bad_request: neither or both of ids and all, an id with no dead letter, or a bad reason", body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, description = "forbidden: not an admin token", body = ErrorBody),
        (status = 503, body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn replay<S: Store>(
    State(app): State<Arc<App<S>>>,
    Admin(actor): Admin,
    Body(body): Body<ReplayIn>,
) -> Result<Json<ReplayOut>, ApiError> {
    check_text("reason", &body.reason).map_err(Error::from)?;
    let which = match (body.ids, body.all) {
        (Some(ids), None | Some(false)) if !ids.is_empty() => Replay::Ids(ids),
        (None, Some(true)) => Replay::All,
        _ => {
            return Err(Error::from(InputError::Other(
                "say which dead letters to replay: {\"ids\": [event ids]} or {\"all\": true}"
                    .into(),
            ))
            .into());
        }
    };
    let (count, marked) = webhooks::mark_replay(&app.league, &which).await?;
    let ids: Vec<&str> = marked.iter().map(|l| l.id.as_str()).collect();
    app.league
        .operator()
        .record(
            &actor,
            "webhooks.replay",
            None,
            Some(&body.reason),
            serde_json::json!({"ids": ids, "all": which == Replay::All}),
        )
        .await?;
    Ok(Json(ReplayOut {
        marked: count,
        dead: marked.into_iter().map(Into::into).collect(),
    }))
}
