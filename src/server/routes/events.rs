//! A player's live events, as server-sent events.
//!
//! Owns: the player stream's handler.
//! Must not: read the logs itself (`live.rs` does).

use std::sync::Arc;

use axum::extract::{Extension, State};
use axum::http::HeaderMap;
use axum::response::IntoResponse;

use crate::server::App;
use crate::server::auth::Caller;
use crate::server::error::{ApiError, ErrorBody};
use crate::server::live;
use crate::server::model::{P, PlayerEventsQuery, Q};
use crate::server::sse;
use crate::store::Store;

/// The player's events as server-sent events, following them across periods: their
/// placements, outcomes, overtakes and corrections (their brackets' logs), the closes
/// of their brackets and periods, and their rewards granted and claimed. Each is
/// `event: <type>`, `id: <cursor>`, `data: <Event>`, oldest first; lines starting
/// with `:` are keep-alives. To resume, send the last id back as `Last-Event-ID` (or
/// `?last_event_id=`): nothing after it is missed, nothing is sent twice. Without an
/// id the stream starts from the oldest event kept (`[events] keep`). An `event:
/// error` (no id) says the store failed a read; the stream goes on. A player token
/// reads its own player's stream only; a browser's `EventSource` may send its token as
/// `?access_token=`. A stream opened with a player token ends when that token expires
/// or its player is banned: an `event: end` (no id, `data`: a `StreamEnd`,
/// `{"reason": "token_expired" | "banned", "message"}`), then the body ends. Each
/// client holds a bounded number of streams (429 `too_many_streams` over it), and so
/// does the server (503 `too_many_streams`). Needs `[events]` in the season (else 404
/// `events_disabled`).
#[utoipa::path(
    get,
    path = "/v1/players/{player}/events",
    tag = "players",
    params(
        ("player" = String, Path, description = "Player id (1-64 bytes of UTF-8)"),
        ("Last-Event-ID" = Option<String>, Header, description = "Resume after this id (one this stream sent)"),
        PlayerEventsQuery,
    ),
    responses(
        (status = 200, description = "Server-sent events: the player's log events (`event: <type>`, `id`, `data`: an Event), `event: error` (no id, `data`: an ErrorBody) while the store fails, and on a stream opened with a player token a last `event: end` (no id, `data`: a StreamEnd, reason `token_expired` or `banned`) before the body ends", content_type = "text/event-stream", body = crate::server::model::PlayerStreamEvent),
        (status = 400, description = "invalid_player; invalid_event_id: a Last-Event-ID (or last_event_id) this stream did not send: send back an id it sent, or none", body = ErrorBody),
        (status = 401, description = "unauthorized: no token, or one the server does not know; token_expired: a player token past its exp", body = ErrorBody),
        (status = 403, description = "forbidden: a player token of another player; banned: a player token of a banned player (while the ban holds)", body = ErrorBody),
        (status = 404, description = "events_disabled: the season has no [events] section", body = ErrorBody),
        (status = 429, description = "too_many_streams: this client (a player, whatever their tokens; or this token) already holds as many live streams as it may (LEAGUEKIT_STREAMS_PER_TOKEN): close one, or wait Retry-After", body = ErrorBody),
        (status = 503, description = "too_many_streams: the server holds as many live streams as it may (LEAGUEKIT_STREAMS_MAX): try again after Retry-After, or another server; store_unavailable, timeout: the store failed or was too slow", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn player_events<S: Store>(
    State(app): State<Arc<App<S>>>,
    P(player): P<String>,
    Q(q): Q<PlayerEventsQuery>,
    headers: HeaderMap,
    caller: Option<Extension<Caller>>,
) -> Result<impl IntoResponse, ApiError> {
    crate::context::validate_player(&player).map_err(|e| ApiError::from(crate::Error::from(e)))?;
    if !app.hub.logs.enabled() {
        return Err(live::events_disabled());
    }
    let last = live::resume_from(&headers, q.last_event_id.as_deref())?;
    let follower = live::Follower::player(&app.league, player, last.as_deref()).await?;
    let caller = caller.map(|Extension(c)| c);
    let grant = sse::admit(&app, caller.as_ref(), &headers, q.access_token.as_deref()).await?;
    Ok(sse::answer(app.hub.logs.follow(follower), grant))
}
