//! `/v1/players/{player}/...`: joins, a player's view, profile and rewards.
//!
//! Owns: the player handlers: join, view, around, profile, rewards, claim.
//! Must not: apply league rules itself.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Json;
use axum::extract::State;

use crate::league::JoinOptions;
use crate::server::App;
use crate::server::error::{ApiError, ErrorBody};
use crate::server::model::{
    AroundQuery, Body, ClaimIn, ClaimOut, JoinIn, P, PeriodQuery, PlacementOut, PlayerOut,
    ProfileOut, Q, Required, RewardsOut, StandingsOut, parse_time,
};
use crate::store::{ProfileChange, Store};

/// Places the player in a bracket of their tier (and `cohort`) for the period of `at`
/// (default now). Joining again returns the same bracket. The answer that placed the
/// player carries their last result (`last`) and their unclaimed rewards
/// (`pending_rewards`); later answers for the period carry `null` in both.
#[utoipa::path(
    post,
    path = "/v1/players/{player}/join",
    tag = "players",
    params(("player" = String, Path, min_length = 1, max_length = 64, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$", description = "Player id: 1-64 bytes of UTF-8 without control characters (percent-encode it)")),
    request_body(content = Option<JoinIn>, description = "Optional: an empty body is `{}`"),
    responses(
        (status = 200, body = PlacementOut),
        (status = 400, description = "Bad id, time or cohort (invalid_player, invalid_time, before_season, outside_calendar, future_time, unknown_cohort, invalid_json)", body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, description = "forbidden (a viewer token), or banned: the player is banned (the message says until when)", body = ErrorBody),
        (status = 409, description = "period_closed, not_started, still_closing (with Retry-After)", body = ErrorBody),
        (status = 408, description = "body_timeout: the body did not finish arriving within the request timeout; nothing was written", body = ErrorBody),
        (status = 503, description = "store_unreachable (nothing was written; Retry-After), store_unavailable, or unknown (send the join again)", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn join<S: Store>(
    State(app): State<Arc<App<S>>>,
    P(player): P<String>,
    Body(body): Body<JoinIn>,
) -> Result<Json<PlacementOut>, ApiError> {
    let mut options = JoinOptions::default();
    if let Some(at) = body.at.as_deref() {
        options = options.at(parse_time(at)?);
    }
    if let Some(cohort) = body.cohort {
        options = options.cohort(cohort);
    }
    let placement = app.league.join_with(&player, options).await?;
    app.hub.logs.nudge_player(&player);
    Ok(Json(placement.into()))
}

/// The player's tier, bracket, rank and score in a period, and their last closed
/// period (`last`).
#[utoipa::path(
    get,
    path = "/v1/players/{player}",
    tag = "players",
    params(("player" = String, Path, min_length = 1, max_length = 64, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$", description = "Player id: 1-64 bytes of UTF-8 without control characters"), PeriodQuery),
    responses(
        (status = 200, body = PlayerOut),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, description = "unknown_period", body = ErrorBody),
        (status = 503, body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn player<S: Store>(
    State(app): State<Arc<App<S>>>,
    P(player): P<String>,
    Q(q): Q<PeriodQuery>,
) -> Result<Json<PlayerOut>, ApiError> {
    let view = app.league.player(&player, q.period).await?;
    let last = app.league.last_outcome(&player).await?;
    Ok(Json(PlayerOut::new(view, last)))
}

/// The entries around the player in their bracket: up to `radius` above and below.
#[utoipa::path(
    get,
    path = "/v1/players/{player}/around",
    tag = "players",
    params(("player" = String, Path, min_length = 1, max_length = 64, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$", description = "Player id: 1-64 bytes of UTF-8 without control characters"), AroundQuery),
    responses(
        (status = 200, body = StandingsOut),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, description = "not_placed: the player has no bracket in the period", body = ErrorBody),
        (status = 503, body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn around<S: Store>(
    State(app): State<Arc<App<S>>>,
    P(player): P<String>,
    Q(q): Q<AroundQuery>,
) -> Result<Json<StandingsOut>, ApiError> {
    let radius = q.radius.unwrap_or(5);
    match app.league.around(&player, radius, q.period).await? {
        Some(page) => Ok(Json(page.into())),
        None => Err(ApiError::not_found(
            "not_placed",
            format!(
                "player {:?} has no bracket in this period; they get one with a join or a \
                 first score",
                player.chars().take(64).collect::<String>()
            ),
        )),
    }
}

/// Replaces the profile: it becomes exactly the body's fields (only the season's
/// `profiles.fields`, within `max_bytes`), a JSON object of strings; fields left out
/// are removed (`{}` clears the profile). One atomic step: a refused body changes
/// nothing. Answers the whole profile. To change some fields only, use `PATCH`.
#[utoipa::path(
    put,
    path = "/v1/players/{player}/profile",
    tag = "players",
    params(("player" = String, Path, min_length = 1, max_length = 64, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$", description = "Player id: 1-64 bytes of UTF-8 without control characters")),
    request_body(content = std::collections::BTreeMap<String, String>, description = "The whole profile, e.g. {\"name\": \"Ana\"}", content_type = "application/json"),
    responses(
        (status = 200, body = ProfileOut),
        (status = 400, description = "bad_request (no body), unknown_profile_field, profile_too_large, invalid_json, invalid_player", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 408, description = "body_timeout: the body did not finish arriving within the request timeout; nothing was written", body = ErrorBody),
        (status = 503, body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn set_profile<S: Store>(
    State(app): State<Arc<App<S>>>,
    P(player): P<String>,
    Required(fields): Required<BTreeMap<String, String>>,
) -> Result<Json<ProfileOut>, ApiError> {
    let pairs: Vec<(String, String)> = fields.into_iter().collect();
    let profile = app
        .league
        .change_profile(&player, &ProfileChange::replace(&pairs))
        .await?;
    Ok(Json(ProfileOut { player, profile }))
}

/// Changes some profile fields (a JSON merge patch of strings): a field with a string
/// sets it, a field with `null` removes it, fields left out are kept. Only the
/// season's `profiles.fields`, within `max_bytes`. One atomic step: a refused body
/// changes nothing. Answers the whole profile.
#[utoipa::path(
    patch,
    path = "/v1/players/{player}/profile",
    tag = "players",
    params(("player" = String, Path, min_length = 1, max_length = 64, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$", description = "Player id: 1-64 bytes of UTF-8 without control characters")),
    request_body(content = BTreeMap<String, Option<String>>, description = "Fields to set, or to remove with null, e.g. {\"name\": \"Ana\", \"avatar\": null}", content_type = "application/json"),
    responses(
        (status = 200, body = ProfileOut),
        (status = 400, description = "bad_request (no body), unknown_profile_field, profile_too_large, invalid_json, invalid_player", body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 408, description = "body_timeout: the body did not finish arriving within the request timeout; nothing was written", body = ErrorBody),
        (status = 503, body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn patch_profile<S: Store>(
    State(app): State<Arc<App<S>>>,
    P(player): P<String>,
    Required(fields): Required<BTreeMap<String, Option<String>>>,
) -> Result<Json<ProfileOut>, ApiError> {
    let change = fields
        .into_iter()
        .fold(ProfileChange::default(), |c, (k, v)| match v {
            Some(v) => c.set(k, v),
            None => c.remove(k),
        });
    let profile = app.league.change_profile(&player, &change).await?;
    Ok(Json(ProfileOut { player, profile }))
}

/// The player's profile fields.
#[utoipa::path(
    get,
    path = "/v1/players/{player}/profile",
    tag = "players",
    params(("player" = String, Path, min_length = 1, max_length = 64, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$", description = "Player id: 1-64 bytes of UTF-8 without control characters")),
    responses(
        (status = 200, body = ProfileOut),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 503, body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn profile<S: Store>(
    State(app): State<Arc<App<S>>>,
    P(player): P<String>,
) -> Result<Json<ProfileOut>, ApiError> {
    let profile = app.league.profile(&player).await?;
    Ok(Json(ProfileOut { player, profile }))
}

/// The player's rewards not yet claimed.
#[utoipa::path(
    get,
    path = "/v1/players/{player}/rewards",
    tag = "players",
    params(("player" = String, Path, min_length = 1, max_length = 64, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$", description = "Player id: 1-64 bytes of UTF-8 without control characters")),
    responses(
        (status = 200, body = RewardsOut),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 503, body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn rewards<S: Store>(
    State(app): State<Arc<App<S>>>,
    P(player): P<String>,
) -> Result<Json<RewardsOut>, ApiError> {
    let rewards = app.league.rewards(&player).await?;
    Ok(Json(RewardsOut {
        player,
        rewards: rewards.into_iter().map(Into::into).collect(),
    }))
}

/// Claims every pending reward. With a `request_id`, a repeated claim returns the same
/// grants and grants nothing new.
#[utoipa::path(
    post,
    path = "/v1/players/{player}/rewards:claim",
    tag = "players",
    params(("player" = String, Path, min_length = 1, max_length = 64, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$", description = "Player id: 1-64 bytes of UTF-8 without control characters")),
    request_body(content = Option<ClaimIn>, description = "Optional: an empty body is `{}`"),
    responses(
        (status = 200, body = ClaimOut),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 408, description = "body_timeout: the body did not finish arriving within the request timeout; nothing was written", body = ErrorBody),
        (status = 503, description = "store_unreachable (nothing was written; Retry-After), store_unavailable, or unknown: resend only with the same request_id", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn claim<S: Store>(
    State(app): State<Arc<App<S>>>,
    P(player): P<String>,
    Body(body): Body<ClaimIn>,
) -> Result<Json<ClaimOut>, ApiError> {
    let granted = app
        .league
        .claim(&player, body.request_id.as_deref())
        .await?;
    app.hub.logs.nudge_player(&player);
    Ok(Json(ClaimOut {
        player,
        granted: granted.into_iter().map(Into::into).collect(),
    }))
}
