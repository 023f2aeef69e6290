//! Score updates: one, or a batch.
//!
//! Owns: the score handlers, one and batch.
//! Must not: retry a write: a 503 `unknown` is the client's to resend with its request
//! id.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;

use crate::ranking::{BatchItem, SubmitOptions};
use crate::season::board_group;
use crate::server::App;
use crate::server::error::{ApiError, ErrorBody};
use crate::server::model::{
    BatchItemIn, BatchItemOut, Body, Items, P, SubmissionOut, SubmitIn, parse_time,
};
use crate::store::Store;

fn options(
    request_id: Option<String>,
    at: Option<&str>,
    rank: bool,
    cohort: Option<String>,
) -> Result<SubmitOptions, ApiError> {
    let mut o = SubmitOptions::default();
    if let Some(c) = cohort {
        o = o.cohort(c);
    }
    if !rank {
        o = o.without_rank();
    }
    if let Some(id) = request_id {
        o = o.request_id(id);
    }
    if let Some(at) = at {
        o = o.at(parse_time(at)?);
    }
    Ok(o)
}

/// Submits a score value (a delta, a best or a new score, by the season's mode). A
/// `request_id` makes it idempotent: a resend with the same id and `at` answers like
/// the first time with `applied: false`. On 503 `unknown` the update may or may not
/// have been applied: resend it only with its request id.
#[utoipa::path(
    post,
    path = "/v1/players/{player}/scores",
    tag = "scores",
    params(("player" = String, Path, min_length = 1, max_length = 64, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$", description = "Player id: 1-64 bytes of UTF-8 without control characters")),
    request_body = SubmitIn,
    responses(
        (status = 200, body = SubmissionOut),
        (status = 400, description = "invalid_player, invalid_request_id, score_out_of_range, invalid_time, future_time, before_season, outside_calendar, unknown_cohort, invalid_json", body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, description = "forbidden (a viewer token), or banned: the player is banned (the message says until when)", body = ErrorBody),
        (status = 409, description = "period_closed, not_joined; not_started and still_closing with Retry-After", body = ErrorBody),
        (status = 422, description = "limit_exceeded: beyond the season's limits.max_value or limits.max_period_score; nothing was written", body = ErrorBody),
        (status = 429, description = "rate_limited: more updates than the season's limits.rate allows; nothing was written; Retry-After", body = ErrorBody),
        (status = 413, body = ErrorBody),
        (status = 408, description = "body_timeout: the body did not finish arriving within the request timeout; nothing was written", body = ErrorBody),
        (status = 503, description = "store_unreachable (nothing was written; Retry-After), unknown (resend only with the same request_id and the error's at), or store_unavailable", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn submit<S: Store>(
    State(app): State<Arc<App<S>>>,
    P(player): P<String>,
    Body(body): Body<SubmitIn>,
) -> Result<Json<SubmissionOut>, ApiError> {
    let o = options(body.request_id, body.at.as_deref(), body.rank, body.cohort)?;
    let s = app.league.submit(&player, body.value, o).await?;
    if s.applied {
        app.hub
            .nudge(&board_group(&s.tier, s.cohort.as_deref()), s.bracket);
        app.hub.logs.nudge_player(&player);
    }
    Ok(Json(s.into()))
}

/// Submits many updates (a JSON array of
/// `{"player","value","request_id"?,"at"?,"rank"?,"cohort"?}`) in
/// one pipelined round trip to the store. The answer has exactly one result per item,
/// in order: `applied`/`duplicate` with the submission, `refused` (nothing written) or
/// `unknown` (resend only with its request id) with `error`. The status is 200
/// whenever the body was a JSON array within the limits, whatever the items' results.
#[utoipa::path(
    post,
    path = "/v1/scores:batch",
    tag = "scores",
    request_body = Vec<BatchItemIn>,
    responses(
        (status = 200, body = Vec<crate::server::openapi::BatchItem>),
        (status = 400, description = "The body is not a JSON array", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 408, description = "body_timeout: the body did not finish arriving within the request timeout; nothing was written", body = ErrorBody),
        (status = 413, description = "payload_too_large, too_many_items", body = ErrorBody),
        (status = 503, description = "unknown: the request timed out after its body came; resend only with the same request_ids", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn batch<S: Store>(
    State(app): State<Arc<App<S>>>,
    Items(items): Items<serde_json::Value>,
) -> Result<Json<Vec<BatchItemOut>>, ApiError> {
    if items.len() > app.max_batch {
        return Err(ApiError::new(
            axum::http::StatusCode::PAYLOAD_TOO_LARGE,
            "too_many_items",
            format!(
                "a batch of {} items is more than the {} allowed; split it",
                items.len(),
                app.max_batch
            ),
        ));
    }
    // Items that cannot be read are refused in place; the rest go in one call.
    let parsed: Vec<Result<BatchItem, ApiError>> = items
        .into_iter()
        .map(|v| {
            let item: BatchItemIn = serde_json::from_value(v).map_err(|e| {
                ApiError::bad_request(
                    "invalid_json",
                    format!(
                        "invalid item: {e}; expected {{\"player\",\"value\",\"request_id\"?,\"at\"?,\"rank\"?,\"cohort\"?}}"
                    ),
                )
            })?;
            let o = options(item.request_id, item.at.as_deref(), item.rank, item.cohort)?;
            Ok(BatchItem::new(item.player, item.value).with_options(o))
        })
        .collect();
    let valid: Vec<BatchItem> = parsed
        .iter()
        .filter_map(|r| r.as_ref().ok().cloned())
        .collect();
    let mut results = app.league.submit_many(&valid).await.into_iter();
    let mut out = Vec::with_capacity(parsed.len());
    for p in parsed {
        let item = match p {
            Err(e) => BatchItemOut::failed(&e),
            Ok(_) => match results.next() {
                Some(Ok(s)) => {
                    if s.applied {
                        app.hub
                            .nudge(&board_group(&s.tier, s.cohort.as_deref()), s.bracket);
                    }
                    BatchItemOut::done(s)
                }
                Some(Err(e)) => BatchItemOut::failed(&ApiError::from(e)),
                None => BatchItemOut::failed(&ApiError::new(
                    axum::http::StatusCode::SERVICE_UNAVAILABLE,
                    "unknown",
                    "internal: no result for this item; its outcome is unknown, resend it \
                     only with its request id",
                )),
            },
        };
        out.push(item);
    }
    Ok(Json(out))
}
