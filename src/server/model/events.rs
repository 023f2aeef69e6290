//! The shapes of the event streams: the event JSON, the server-sent events that carry
//! it, and the query of a player's stream. The streams send the log's own JSON; these
//! types describe it for the OpenAPI document.
//!
//! Owns: the OpenAPI shapes of league events and their streams.
//! Must not: talk to the league or the store.

use serde::Deserialize;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::Schema;
use utoipa::{IntoParams, ToSchema};

/// `?last_event_id=&access_token=` of a player's stream.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(in crate::server) struct PlayerEventsQuery {
    /// Resume after this event id (an `id:` this stream sent), for clients that cannot
    /// send the `Last-Event-ID` header; the header wins when both are sent.
    pub(in crate::server) last_event_id: Option<String>,
    /// The token, for clients that cannot send headers (a browser's `EventSource`);
    /// `Authorization: Bearer` is preferred: a URL may end up in proxies' logs.
    #[allow(dead_code)] // read by the token check (auth.rs), listed here for the document
    pub(in crate::server) access_token: Option<String>,
}

/// An event's type. Clients must accept types this list does not have yet (treat
/// them as a plain `Event`), and fields they do not know.
#[derive(ToSchema)]
#[allow(dead_code)]
pub(in crate::server) enum EventType {
    #[schema(rename = "player.placed")]
    PlayerPlaced,
    #[schema(rename = "player.overtaken")]
    PlayerOvertaken,
    #[schema(rename = "bracket.closed")]
    BracketClosed,
    #[schema(rename = "player.promoted")]
    PlayerPromoted,
    #[schema(rename = "player.demoted")]
    PlayerDemoted,
    #[schema(rename = "player.stayed")]
    PlayerStayed,
    #[schema(rename = "reward.granted")]
    RewardGranted,
    #[schema(rename = "reward.claimed")]
    RewardClaimed,
    #[schema(rename = "period.closed")]
    PeriodClosed,
    #[schema(rename = "score.adjusted")]
    ScoreAdjusted,
    #[schema(rename = "player.resettled")]
    PlayerResettled,
}

/// A league event: the same JSON in a webhook's body and a stream's `data:`. `data`
/// depends on `type` (docs/http.md, "Live events", lists each). Clients must accept
/// types and fields they do not know.
#[derive(ToSchema)]
#[allow(dead_code)]
pub(in crate::server) struct Event {
    /// Unique in the league: the key to deduplicate by.
    id: String,
    /// The event's type (see `EventType`; others may come).
    #[schema(value_type = EventType)]
    r#type: String,
    /// The season's name.
    season: String,
    /// The period it belongs to.
    period: u64,
    /// When, unix milliseconds by the league clock.
    at: i64,
    /// The player it is about, if one.
    player: Option<String>,
    /// The tier it is about, if one.
    tier: Option<String>,
    /// The bracket it is about, if one.
    #[schema(minimum = 1)]
    bracket: Option<u32>,
    /// The type's own fields.
    #[schema(value_type = Object)]
    data: serde_json::Value,
}

/// One server-sent event of the event log (as OpenAPI 3.2 reads a `text/event-stream`
/// schema: one object per event). `event` is the event's type, `id` the cursor to
/// resume after it (`Last-Event-ID`), `data` the `Event` as JSON.
#[derive(ToSchema)]
#[allow(dead_code)]
pub(in crate::server) struct LogEvent {
    #[schema(value_type = EventType)]
    event: String,
    /// Opaque: send it back as `Last-Event-ID` to resume after this event.
    id: String,
    /// JSON: an `Event`.
    #[schema(content_media_type = "application/json")]
    data: String,
}

/// The name of a stream's error event.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[allow(dead_code)]
pub(in crate::server) enum ErrorEventName {
    Error,
}

/// A stream's `event: error` (no `id`): the store failed to answer a read; the stream
/// goes on and reads again.
#[derive(ToSchema)]
#[allow(dead_code)]
pub(in crate::server) struct ErrorEvent {
    event: ErrorEventName,
    /// JSON: an `ErrorBody`.
    #[schema(content_media_type = "application/json")]
    data: String,
}

/// The name of a stream's end event.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[allow(dead_code)]
pub(in crate::server) enum EndEventName {
    End,
}

/// Why the server ended a stream: `token_expired` (the player token it was opened
/// with expired: mint a new one and open the stream again with the last id received)
/// or `banned` (the player was banned). Clients must accept reasons this list does not
/// have yet, and treat them as an end all the same.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[allow(dead_code)]
pub(in crate::server) enum StreamEndReason {
    TokenExpired,
    Banned,
}

/// The `data` of a stream's `event: end`.
#[derive(ToSchema)]
#[allow(dead_code)]
pub(in crate::server) struct StreamEnd {
    /// Why the stream ended.
    reason: StreamEndReason,
    /// What happened and what to do, for people.
    message: String,
}

/// A stream's `event: end` (no `id`), the last event of a stream opened with a player
/// token: the server ends the stream when that token expires or its player is banned,
/// and the body ends after it. Do not reconnect as after a drop: with the same token
/// the stream is refused (401 `token_expired`, 403 `banned`).
#[derive(ToSchema)]
#[allow(dead_code)]
pub(in crate::server) struct EndEvent {
    event: EndEventName,
    /// JSON: a `StreamEnd` (`{"reason", "message"}`).
    #[schema(content_media_type = "application/json")]
    data: String,
}

/// One server-sent event of a player's stream: a log event, an error, or the end.
#[derive(ToSchema)]
#[serde(untagged)]
#[allow(dead_code)]
pub(in crate::server) enum PlayerStreamEvent {
    Log(LogEvent),
    Error(ErrorEvent),
    End(EndEvent),
}

/// One server-sent event of a bracket's stream: a `standings` snapshot (no `id`), an
/// `error` (no `id`), with `[events]` a log event of the bracket (with its `id`), or,
/// on a stream opened with a player token, its `end` (no `id`).
#[derive(ToSchema)]
#[serde(untagged)]
#[allow(dead_code)]
pub(in crate::server) enum BracketStreamEvent {
    Standings(super::super::openapi::StandingsEvent),
    Log(LogEvent),
    End(EndEvent),
}

/// Adds `contentSchema` (which the annotations cannot say) to the `data` of the
/// stream's events: `LogEvent`'s is an `Event`, `EndEvent`'s a `StreamEnd`.
pub(in crate::server) fn content_schemas(openapi: &mut utoipa::openapi::OpenApi) {
    let Some(components) = openapi.components.as_mut() else {
        return;
    };
    for (event, content) in [("LogEvent", "Event"), ("EndEvent", "StreamEnd")] {
        let Some(RefOr::T(Schema::Object(schema))) = components.schemas.get_mut(event) else {
            continue;
        };
        if let Some(RefOr::T(Schema::Object(data))) = schema.properties.get_mut("data") {
            let mut extensions = data.extensions.take().unwrap_or_default();
            extensions.insert(
                "contentSchema".to_owned(),
                serde_json::json!({ "$ref": format!("#/components/schemas/{content}") }),
            );
            data.extensions = Some(extensions);
        }
    }
}
