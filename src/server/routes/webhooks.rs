//! Webhook dead letters over HTTP (admin tokens only): `GET /v1/webhooks/dead` lists
//! them, `POST /v1/webhooks/dead:replay` marks some or all for replay (audited).
//!
//! Owns: the dead letters' handlers and their JSON.
//! Must not: deliver anything (the deliverer of `server::webhooks` does).

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::error::{Error, InputError};
use crate::operator::audit::check_text;
use crate::server::App;
use crate::server::auth::Admin;
use crate::server::error::{ApiError, ErrorBody};
use crate::server::model::{Body, rfc3339};
use crate::server::webhooks::{self, Replay};
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

/// The dead letters.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct DeadLettersOut {
    /// By event id, then URL (at most 1000).
    dead: Vec<DeadLetterOut>,
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
    /// The letters marked.
    dead: Vec<DeadLetterOut>,
}

/// The webhook dead letters: events given up after every attempt, per URL. Admin
/// tokens only.
#[utoipa::path(
    get,
    path = "/v1/webhooks/dead",
    tag = "operators",
    responses(
        (status = 200, body = DeadLettersOut),
        (status = 401, body = ErrorBody),
        (status = 403, description = "forbidden: not an admin token", body = ErrorBody),
        (status = 503, body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn dead<S: Store>(
    State(app): State<Arc<App<S>>>,
    _admin: Admin,
) -> Result<Json<DeadLettersOut>, ApiError> {
    let letters = webhooks::dead_letters(&app.league).await?;
    Ok(Json(DeadLettersOut {
        dead: letters.into_iter().map(Into::into).collect(),
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
    let marked = webhooks::mark_replay(&app.league, &which).await?;
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
        marked: marked.len() as u64,
        dead: marked.into_iter().map(Into::into).collect(),
    }))
}
