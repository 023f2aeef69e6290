//! `/v1/players/{player}/ban`, `…/unban` and `/v1/bans`: the operator's bans, for
//! admin tokens only (others get 403 `forbidden`). Each action is audited under the
//! token's name.
//!
//! Owns: the ban handlers and their JSON shapes.
//! Must not: apply league rules itself.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::operator::Ban;
use crate::server::App;
use crate::server::auth::Admin;
use crate::server::error::{ApiError, ErrorBody};
use crate::server::model::{Body, P, Required, parse_time, rfc3339};
use crate::store::Store;

/// Body of a ban.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct BanIn {
    /// Why (recorded in the audit log): 1-500 characters, not only spaces, no control
    /// characters.
    #[schema(schema_with = crate::server::model::reason)]
    pub(crate) reason: String,
    /// When the ban ends, RFC 3339 by the league clock (default: when lifted).
    #[schema(format = DateTime)]
    pub(crate) until: Option<String>,
}

/// Body of an unban (optional).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UnbanIn {
    /// Why (recorded in the audit log): 1-500 characters, not only spaces, no control
    /// characters.
    #[schema(schema_with = crate::server::model::optional_reason)]
    pub(crate) reason: Option<String>,
}

/// A player's ban.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct BanOut {
    /// The banned player.
    pub(crate) player: String,
    /// Why.
    pub(crate) reason: String,
    /// Who banned them (an admin token's name, or `cli:<user>`).
    pub(crate) actor: String,
    /// When, by the league clock.
    #[schema(format = DateTime)]
    pub(crate) since: String,
    /// When it ends; `null`: when lifted.
    #[schema(format = DateTime)]
    pub(crate) until: Option<String>,
}

impl From<Ban> for BanOut {
    fn from(b: Ban) -> Self {
        BanOut {
            player: b.player,
            reason: b.reason,
            actor: b.actor,
            since: rfc3339(b.since),
            until: b.until.map(rfc3339),
        }
    }
}

/// The answer of an unban.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct UnbanOut {
    /// The player.
    pub(crate) player: String,
    /// The ban lifted; `null` if there was none.
    pub(crate) lifted: Option<BanOut>,
}

/// The bans that hold now.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct BansOut {
    /// By player.
    pub(crate) bans: Vec<BanOut>,
}

/// Bans the player (admin): their joins and score updates are refused with 403
/// `banned`, and they leave their running bracket's board at once (the others' ranks
/// close up); they take no outcome or reward at its close. Banning again replaces
/// the ban.
#[utoipa::path(
    post,
    path = "/v1/players/{player}/ban",
    tag = "operators",
    params(("player" = String, Path, min_length = 1, max_length = 64, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$", description = "Player id: 1-64 bytes of UTF-8 without control characters")),
    request_body = BanIn,
    responses(
        (status = 200, body = BanOut),
        (status = 400, description = "bad_request (empty or bad reason, no body), ban_in_past, invalid_time, invalid_player, invalid_json", body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, description = "forbidden: not an admin token", body = ErrorBody),
        (status = 404, description = "unknown_player: the league has no record of the player", body = ErrorBody),
        (status = 408, description = "body_timeout", body = ErrorBody),
        (status = 503, description = "store_unreachable, store_unavailable, or unknown (send the ban again: it is idempotent)", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn ban<S: Store>(
    State(app): State<Arc<App<S>>>,
    Admin(actor): Admin,
    P(player): P<String>,
    Required(body): Required<BanIn>,
) -> Result<Json<BanOut>, ApiError> {
    let until = body.until.as_deref().map(parse_time).transpose()?;
    let ban = app
        .league
        .operator()
        .ban(&actor, &player, &body.reason, until)
        .await?;
    // The banned player's live streams end now, not at the next check.
    app.hub.bans_changed();
    Ok(Json(ban.into()))
}

/// Lifts the player's ban (admin): they may join again. In a period they were placed
/// in, joining again puts them back on the same board with no score.
#[utoipa::path(
    post,
    path = "/v1/players/{player}/unban",
    tag = "operators",
    params(("player" = String, Path, min_length = 1, max_length = 64, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$", description = "Player id: 1-64 bytes of UTF-8 without control characters")),
    request_body(content = Option<UnbanIn>, description = "Optional: an empty body is `{}`"),
    responses(
        (status = 200, body = UnbanOut),
        (status = 400, description = "bad_request (bad reason), invalid_player, invalid_json", body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, description = "forbidden: not an admin token", body = ErrorBody),
        (status = 404, description = "unknown_player", body = ErrorBody),
        (status = 408, description = "body_timeout", body = ErrorBody),
        (status = 503, description = "store_unreachable, store_unavailable, or unknown (send it again: it is idempotent)", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn unban<S: Store>(
    State(app): State<Arc<App<S>>>,
    Admin(actor): Admin,
    P(player): P<String>,
    Body(body): Body<UnbanIn>,
) -> Result<Json<UnbanOut>, ApiError> {
    let lifted = app
        .league
        .operator()
        .unban(&actor, &player, body.reason.as_deref())
        .await?;
    Ok(Json(UnbanOut {
        player,
        lifted: lifted.map(BanOut::from),
    }))
}

/// The bans that hold now, by player (admin).
#[utoipa::path(
    get,
    path = "/v1/bans",
    tag = "operators",
    responses(
        (status = 200, body = BansOut),
        (status = 401, body = ErrorBody),
        (status = 403, description = "forbidden: not an admin token", body = ErrorBody),
        (status = 503, body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn bans<S: Store>(
    State(app): State<Arc<App<S>>>,
    Admin(_): Admin,
) -> Result<Json<BansOut>, ApiError> {
    let bans = app.league.operator().bans().await?;
    Ok(Json(BansOut {
        bans: bans.into_iter().map(BanOut::from).collect(),
    }))
}
