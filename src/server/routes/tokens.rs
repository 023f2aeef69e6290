//! `POST /v1/players/{player}/token`: a player token for a game client.
//!
//! A banned player is minted no token (403 `banned`): the ban is read (one store read,
//! by the league clock) before the token is signed. A `ttl` runs from 60 seconds to
//! the server's maximum (`LEAGUEKIT_PLAYER_TOKEN_MAX_TTL`, default 86400): the
//! annotations below say the default maximum, and the document a server serves says
//! its own (`openapi::json`).
//!
//! Owns: the mint handler, its input and answer.
//! Must not: sign or check tokens itself (`player_tokens.rs` does).

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::server::App;
use crate::server::error::{ApiError, ErrorBody};
use crate::server::extract::{Body, P, Q, rfc3339};
use crate::server::player_tokens::{
    DEFAULT_TTL_SECS, MAX_TTL_SECS, MIN_TTL_SECS, PLAYER_TOKEN_MAX_TTL_ENV, unix_now,
};
use crate::store::Store;

/// The body of a token request (optional: `{}` or none).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TokenIn {
    /// How long the token lasts, in seconds: from 60 to the server's maximum
    /// (`LEAGUEKIT_PLAYER_TOKEN_MAX_TTL`, default 86400; this document's `maximum`);
    /// default 900, or the maximum if lower. Wins over the query's `ttl`.
    #[schema(minimum = 60, maximum = 86400)]
    #[serde(default)]
    ttl: Option<u64>,
}

/// `?ttl=`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct TtlQuery {
    /// How long the token lasts, in seconds: from 60 to the server's maximum
    /// (`LEAGUEKIT_PLAYER_TOKEN_MAX_TTL`, default 86400; this document's `maximum`);
    /// default 900, or the maximum if lower.
    #[param(minimum = 60, maximum = 86400)]
    ttl: Option<u64>,
}

/// A player token.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct TokenOut {
    /// The token: send it as `Authorization: Bearer TOKEN`.
    token: String,
    /// The player it is for (its `sub`).
    player: String,
    /// When it expires (RFC 3339; its `exp`).
    #[schema(format = DateTime)]
    expires_at: String,
}

/// A short-lived token for one player's game client (a JWT, HS256): with it the
/// client reads only its own player (view, around, rewards), the season, and its own
/// bracket's standings and live standings in the running period. Needs a server or
/// admin token, and `LEAGUEKIT_PLAYER_TOKEN_SECRET` on the server (else 404
/// `player_tokens_disabled`). A banned player gets no token while the ban holds (403
/// `banned`). docs/http.md, "Player tokens", has the claims, to mint tokens in the
/// game server's own code instead.
#[utoipa::path(
    post,
    path = "/v1/players/{player}/token",
    tag = "players",
    params(("player" = String, Path, min_length = 1, max_length = 64, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$", description = "Player id: 1-64 bytes of UTF-8 without control characters (percent-encode it)"), TtlQuery),
    request_body(content = Option<TokenIn>, description = "Optional: an empty body is `{}`"),
    responses(
        (status = 200, body = TokenOut),
        (status = 400, description = "invalid_player, invalid_json, bad_request", body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, description = "forbidden: a viewer or player token; banned: the player is banned (no token while the ban holds)", body = ErrorBody),
        (status = 404, description = "player_tokens_disabled: the server has no LEAGUEKIT_PLAYER_TOKEN_SECRET", body = ErrorBody),
        (status = 422, description = "ttl_out_of_range: ttl is not from 60 seconds to the server's maximum (LEAGUEKIT_PLAYER_TOKEN_MAX_TTL, default 86400)", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn mint<S: Store>(
    State(app): State<Arc<App<S>>>,
    P(player): P<String>,
    Q(q): Q<TtlQuery>,
    Body(body): Body<TokenIn>,
) -> Result<Json<TokenOut>, ApiError> {
    let keys = app
        .players
        .as_ref()
        .ok_or_else(ApiError::player_tokens_disabled)?;
    crate::context::validate_player(&player).map_err(|e| ApiError::from(crate::Error::from(e)))?;
    // Each ttl given is checked, even the query's when the body's wins.
    let max = keys.max_ttl();
    let default = DEFAULT_TTL_SECS.min(max);
    if let Some(ttl) = [body.ttl, q.ttl]
        .into_iter()
        .flatten()
        .find(|t| !(MIN_TTL_SECS..=max).contains(t))
    {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "ttl_out_of_range",
            format!(
                "ttl {ttl} is out of range: a player token lasts {MIN_TTL_SECS} to {max} \
                 seconds on this server (default {default}; the maximum is \
                 {PLAYER_TOKEN_MAX_TTL_ENV}, {MAX_TTL_SECS} unless set)"
            ),
        ));
    }
    // A banned player gets no token: it would let their client read on while the
    // ban holds.
    if let Some(ban) = app.league.operator().ban_of(&player).await? {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "banned",
            format!(
                "{}; no player token is minted while the ban holds",
                ban.refusal()
            ),
        ));
    }
    let ttl = body.ttl.or(q.ttl).unwrap_or(default);
    let minted = keys.mint(&player, ttl, unix_now());
    let expires_at = i64::try_from(minted.expires_at)
        .ok()
        .and_then(|s| chrono::DateTime::from_timestamp(s, 0))
        .map(rfc3339)
        .unwrap_or_default();
    Ok(Json(TokenOut {
        token: minted.token,
        player,
        expires_at,
    }))
}
