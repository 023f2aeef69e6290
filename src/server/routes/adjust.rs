//! `POST /v1/players/{player}/adjust`: an operator's exact, audited change of a
//! player's score in the running period (admin tokens only).
//!
//! Owns: the adjust handler and its JSON.
//! Must not: change a score any other way than through the operator's tools.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::error::InputError;
use crate::operator::{AdjustOutcome, Adjustment};
use crate::season::board_group;
use crate::server::App;
use crate::server::auth::Admin;
use crate::server::error::{ApiError, ErrorBody};
use crate::server::model::{Body, P};
use crate::store::Store;

/// Body of an adjustment: exactly one of `by` and `set`, and the reason.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AdjustIn {
    /// Add this (may be negative) to the score.
    #[schema(minimum = -9_007_199_254_740_991_i64, maximum = 9_007_199_254_740_991_i64)]
    by: Option<i64>,
    /// Set the score to this.
    #[schema(minimum = -9_007_199_254_740_991_i64, maximum = 9_007_199_254_740_991_i64)]
    set: Option<i64>,
    /// Why, for the audit log: 1-500 characters, not only spaces, no control
    /// characters.
    #[schema(schema_with = crate::server::model::reason)]
    reason: String,
}

/// An adjustment made: the player's bracket in the running period, and the score
/// before and after.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct AdjustOut {
    player: String,
    period: u64,
    tier: String,
    /// In a season with cohorts.
    #[serde(skip_serializing_if = "Option::is_none")]
    cohort: Option<String>,
    bracket: u32,
    before: u64,
    after: u64,
}

impl From<AdjustOutcome> for AdjustOut {
    fn from(a: AdjustOutcome) -> Self {
        AdjustOut {
            player: a.player,
            period: a.period,
            tier: a.tier,
            cohort: a.cohort,
            bracket: a.bracket,
            before: a.before,
            after: a.after,
        }
    }
}

/// Changes a player's score in the running period by (`by`) or to (`set`) a number,
/// exactly, and appends it to the audit log (an admin token's name is the actor). The
/// adjusted score keeps the time its current score was reached; the season's limits do
/// not apply. Nothing is written when it is refused.
#[utoipa::path(
    post,
    path = "/v1/players/{player}/adjust",
    tag = "operators",
    params(("player" = String, Path, min_length = 1, max_length = 64, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$", description = "Player id: 1-64 bytes of UTF-8 without control characters")),
    request_body = AdjustIn,
    responses(
        (status = 200, body = AdjustOut),
        (status = 400, description = "invalid_player, score_out_of_range, bad_request (not exactly one of by and set, or an empty reason), invalid_json", body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, description = "forbidden: not an admin token", body = ErrorBody),
        (status = 404, description = "not_placed: the player is not placed in the running period", body = ErrorBody),
        (status = 409, description = "period_closed; not_started with Retry-After", body = ErrorBody),
        (status = 503, description = "store_unreachable (nothing was written; Retry-After), unknown (send it again: an adjustment is answered once), or store_unavailable", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn adjust<S: Store>(
    State(app): State<Arc<App<S>>>,
    Admin(actor): Admin,
    P(player): P<String>,
    Body(body): Body<AdjustIn>,
) -> Result<Json<AdjustOut>, ApiError> {
    let change = match (body.by, body.set) {
        (Some(n), None) => Adjustment::By(n),
        (None, Some(n)) => Adjustment::Set(n),
        _ => {
            return Err(ApiError::from(crate::Error::from(InputError::Other(
                "give exactly one of \"by\" (add to the score) and \"set\" (the new score)"
                    .to_owned(),
            ))));
        }
    };
    let done = app
        .league
        .operator()
        .adjust(&actor, &player, change, &body.reason)
        .await?;
    app.hub.nudge(
        &board_group(&done.tier, done.cohort.as_deref()),
        done.bracket,
    );
    Ok(Json(done.into()))
}
