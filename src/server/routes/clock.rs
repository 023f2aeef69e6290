//! The staging clock: `GET /v1/clock` and `POST /v1/clock` (admin tokens only), for a
//! season with `[clock] travel = true`.
//!
//! Owns: the clock handlers and their shapes.
//! Must not: move the clock itself (the operator does, and audits it).

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::operator::ClockView;
use crate::server::App;
use crate::server::auth::Admin;
use crate::server::error::{ApiError, ErrorBody};
use crate::server::model::{Body, parse_time, rfc3339};
use crate::store::Store;

/// The league clock: `GET /v1/clock`, and the answer of a move.
#[derive(Debug, Serialize, ToSchema)]
pub(in crate::server) struct ClockOut {
    /// The league clock now (RFC 3339), with the staging offset.
    now: String,
    /// Milliseconds the staging clock adds to the store's clock (0 without travel).
    offset_ms: i64,
    /// Whether the season has a staging clock (`[clock] travel = true`).
    travel: bool,
}

impl From<ClockView> for ClockOut {
    fn from(v: ClockView) -> Self {
        ClockOut {
            now: rfc3339(v.now),
            offset_ms: v.offset_ms,
            travel: v.travel,
        }
    }
}

/// A move of the staging clock: exactly one of `advance` and `set`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(in crate::server) struct ClockIn {
    /// Move the clock forward by this duration: a whole number followed by `ms`, `s`,
    /// `m`, `h` or `d` (`90s`, `15m`, `1h`, `3d`).
    #[serde(default)]
    #[schema(pattern = r"^[0-9]+(ms|s|m|h|d)$")]
    advance: Option<String>,
    /// Move the clock to this time (RFC 3339), after the league clock's now.
    #[serde(default)]
    #[schema(format = DateTime)]
    set: Option<String>,
    /// Why, for the audit log (1-500 characters, not only spaces, no control
    /// characters).
    #[serde(default)]
    #[schema(schema_with = crate::server::model::optional_reason)]
    reason: Option<String>,
}

/// The league clock, its staging offset and whether the season travels (admin tokens
/// only).
#[utoipa::path(
    get,
    path = "/v1/clock",
    tag = "operators",
    responses(
        (status = 200, body = ClockOut),
        (status = 401, body = ErrorBody),
        (status = 403, description = "forbidden: a server or viewer token (admin tokens only)", body = ErrorBody),
        (status = 503, body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn clock<S: Store>(
    State(app): State<Arc<App<S>>>,
    Admin(_actor): Admin,
) -> Result<Json<ClockOut>, ApiError> {
    Ok(Json(app.league.operator().clock().await?.into()))
}

/// Moves the staging clock of every process of the league forward, by a duration
/// (`{"advance": "1h"}`) or to a time (`{"set": "2026-06-01T00:00:00Z"}`), and records
/// the move in the audit log (admin tokens only). Refused, writing nothing, in a
/// season without `[clock] travel = true` (409 `no_staging_clock`) and for a move that
/// is not forward (400 `clock_not_forward`).
#[utoipa::path(
    post,
    path = "/v1/clock",
    tag = "operators",
    request_body = ClockIn,
    responses(
        (status = 200, body = ClockOut),
        (status = 400, description = "invalid_json, invalid_time, bad_request (not exactly one of advance and set, or a duration that cannot be read), clock_not_forward; nothing was written", body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, description = "forbidden: a server or viewer token (admin tokens only)", body = ErrorBody),
        (status = 409, description = "no_staging_clock: the season has no `[clock] travel = true`; nothing was written", body = ErrorBody),
        (status = 503, body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn move_clock<S: Store>(
    State(app): State<Arc<App<S>>>,
    Admin(actor): Admin,
    Body(body): Body<ClockIn>,
) -> Result<Json<ClockOut>, ApiError> {
    let operator = app.league.operator();
    let reason = body.reason.as_deref();
    let view = match (&body.advance, &body.set) {
        (Some(by), None) => {
            let by = crate::season::parse_duration(by).map_err(|m| {
                ApiError::bad_request("bad_request", format!("advance {by:?}: {m}"))
            })?;
            operator.advance_clock(&actor, by, reason).await?
        }
        (None, Some(to)) => operator.set_clock(&actor, parse_time(to)?, reason).await?,
        _ => {
            return Err(ApiError::bad_request(
                "bad_request",
                "give exactly one of \"advance\" (a duration such as \"1h\") and \"set\" \
                 (an RFC 3339 time)",
            ));
        }
    };
    Ok(Json(view.into()))
}
