//! The OpenAPI document, generated from the handlers' annotations and the answer
//! types (utoipa), served at `GET /openapi.json`.
//!
//! It is OpenAPI 3.1 (utoipa 5 emits nothing else). A few things the annotations
//! cannot say are added here, the same for every operation: `security: []` on
//! `/healthz`, the answers every operation can give (401 and 503 for any token-guarded
//! path; 400 wherever there is a parameter or a body; 403, 408 and 413 for writes),
//! and the `Retry-After` header on every 409 and 503. The schemas that exist only to
//! describe a shape precisely (the enums of `status`, `outcome`, `mode`, `join` and
//! the error `code`, and a batch item as one shape per status) are here too.
//!
//! Owns: the OpenAPI document's list of paths and schemas.
//! Must not: describe anything by hand that the handlers' annotations can say.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::{Operation, PathItem};
use utoipa::openapi::schema::{Schema, SchemaType, Type};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{Ref, RefOr, ResponseBuilder};
use utoipa::{Modify, OpenApi, ToSchema};

use super::App;
use super::error::{ErrorBody, ErrorDetail};
use super::model::{
    BatchItemIn, BlockedBracketOut, ClaimIn, ClaimOut, CohortCountOut, CountsOut, ExportLine,
    HealthOut, JoinIn, LastOut, PeriodOut, PeriodReportOut, PeriodsOut, PlacementOut, PlayerOut,
    ProfileOut, RewardOut, RewardRuleOut, RewardsOut, SeasonOut, StandingOut, StandingsOut,
    SubmissionOut, SubmitIn, TallyOut, TierCountOut, TierOut, TopOut,
};
use super::model::{
    BracketStreamEvent, EndEvent, EndEventName, ErrorEvent, ErrorEventName, Event, EventType,
    LogEvent, PlayerStreamEvent, StreamEnd, StreamEndReason,
};
use super::player_tokens::MAX_TTL_SECS;
use super::routes::bans::{BanIn, BanOut, BansOut, UnbanIn, UnbanOut};
use super::routes::clock::{ClockIn, ClockOut};
use super::routes::resettle::{
    OutcomeSummaryOut, PlayerCorrectionOut, ResettleIn, ResettleOut, TierCreditOut,
};
use super::routes::tokens::{TokenIn, TokenOut};
use super::routes::{
    adjust, audit, bans, boards, clock, events, periods, players, resettle, scores, system, tokens,
    webhooks,
};
use crate::store::Store;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "leaguekit",
        description = "Tiered, bracketed leagues over HTTP/JSON. Every answer but /healthz \
                       needs `Authorization: Bearer TOKEN`: a server token reads and writes, a \
                       viewer token only reads, a player token (security scheme `player`, a short-lived JWT \
                       from `POST /v1/players/{player}/token`) reads only its own player and bracket \
                       on the operations that list it. Errors are `{\"error\": {\"code\", \"message\"}}` \
                       (`ErrorCode` lists every code).\n\n\
                       This is an OpenAPI 3.1 document. Generators that read 3.1 (openapi-typescript, \
                       openapi-python-client, openapi-generator 7) use it as it is. Generators that \
                       only read 3.0 (NSwag, oapi-codegen) refuse it: its 3.1 forms are \
                       `\"type\": [\"T\", \"null\"]` for values that may be null (3.0's \
                       `nullable: true`), `oneOf` with `{\"type\": \"null\"}` for the two objects \
                       that may be null (`PeriodsOut.current`, `PlayerOut.last`; 3.0's `allOf` of \
                       the reference with `nullable: true`), `contentMediaType` and the `openapi` \
                       version. `@apiture/openapi-down-convert` converts all but the `oneOf`s, which \
                       must then be edited by hand.\n\n\
                       Two answers are streams: `GET /v1/periods/{period}/export` is JSON lines \
                       (`application/x-ndjson`, one `ExportLine` per line: read the body line by \
                       line and parse each), and `GET /v1/tiers/{tier}/brackets/{bracket}/events` \
                       is server-sent events (`text/event-stream`: `standings` events whose data is \
                       a `StandingsOut`, `error` events whose data is an `ErrorBody`, and with \
                       `[events]` the bracket's log events; read it with an SSE client that sends \
                       the bearer token), as is `GET /v1/players/{player}/events` (the player's \
                       log events). A log event is `event: <type>`, `id: <cursor>` and `data: \
                       <Event JSON>`; send the last id back as `Last-Event-ID` (or \
                       `?last_event_id=`) to resume without missing or repeating an event. A \
                       stream opened with a player token ends when that token expires or its \
                       player is banned: its last event is `event: end` (no id; data a \
                       `StreamEnd`, `{\"reason\": \"token_expired\" or \"banned\", \
                       \"message\"}`), then the body ends; do not reconnect with the same \
                       token. Opening a stream is refused with 429 `too_many_streams` when the \
                       client holds as many as it may, 503 `too_many_streams` when the server \
                       does (both with `Retry-After`). A browser's EventSource, which cannot \
                       send headers, may send the token as `?access_token=` on these two \
                       streams only. Clients must accept event types, end reasons and fields \
                       they do not know."
    ),
    servers((url = "/", description = "The server that serves this document")),
    paths(
        players::join,
        scores::submit,
        scores::batch,
        players::player,
        players::around,
        players::set_profile,
        players::patch_profile,
        players::profile,
        players::rewards,
        players::claim,
        events::player_events,
        tokens::mint,
        boards::standings,
        boards::events,
        boards::counts,
        boards::top,
        boards::season,
        periods::periods,
        periods::export,
        audit::audit,
        clock::clock,
        clock::move_clock,
        bans::ban,
        bans::unban,
        bans::bans,
        resettle::resettle,
        super::prometheus::render,
        system::healthz,
        adjust::adjust,
        webhooks::dead,
        webhooks::replay,
    ),
    components(schemas(
        ErrorBody, ErrorDetail, ErrorCode, JoinIn, SubmitIn, BatchItemIn, ClaimIn, PlacementOut,
        SubmissionOut, BatchItem, BatchItemDone, BatchItemFailed, StandingOut, StandingsOut,
        LastOut, PlayerOut, ProfileOut, RewardOut, RewardsOut, ClaimOut, TierCountOut, CountsOut,
        TallyOut, PeriodReportOut, PeriodOut, PeriodsOut, BlockedBracketOut, ExportLine,
        RewardRuleOut, TierOut, SeasonOut, HealthOut, Outcome, ScoringMode, JoinPolicy, Zones,
        HealthStatus, StandingsEvent, StandingsEventName, CohortCountOut, TopOut,
        audit::AuditOut, audit::AuditEntryOut, ClockIn, ClockOut, BanIn, UnbanIn, BanOut,
        UnbanOut, BansOut, ResettleIn, ResettleOut, PlayerCorrectionOut, OutcomeSummaryOut,
        TierCreditOut, adjust::AdjustIn, adjust::AdjustOut, TokenIn, TokenOut, Event, EventType,
        LogEvent, ErrorEvent, ErrorEventName, EndEvent, EndEventName, StreamEnd, StreamEndReason,
        PlayerStreamEvent, BracketStreamEvent, webhooks::DeadLetterOut, webhooks::DeadLettersOut,
        webhooks::ReplayIn, webhooks::ReplayOut
    )),
    modifiers(&Bearer, &Answers, &ContentSchemas),
    tags(
        (name = "players", description = "Joins, a player's view, profile and rewards"),
        (name = "scores", description = "Score updates"),
        (name = "standings", description = "Brackets, tiers and the season"),
        (name = "periods", description = "The league's time, rollover reports and exports"),
        (name = "system", description = "Health and metrics"),
        (name = "operators", description = "The operator's tools (admin tokens only): bans, \
                                             adjustments, re-settlements, the staging clock, \
                                             webhook dead letters and the audit log"),
    )
)]
struct ApiDoc;

// ---------------------------------------------------------------------------------
// Shapes that exist for the document: the answers hold these values as strings.
// ---------------------------------------------------------------------------------

/// A player's move when a period closed.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[allow(dead_code)]
pub(super) enum Outcome {
    Promoted,
    Stayed,
    Demoted,
}

/// The season's `scoring.mode`: how a value changes a score.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[allow(dead_code)]
pub(super) enum ScoringMode {
    Increment,
    Best,
    Set,
}

/// The season's `brackets.join`: what places a player in a bracket.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[allow(dead_code)]
pub(super) enum JoinPolicy {
    OnFirstScore,
    Explicit,
}

/// A tier's `zones`: of what its percentage quotas are taken.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[allow(dead_code)]
pub(super) enum Zones {
    Players,
    Size,
}

/// `ok`, or `degraded` while the store refuses writes.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[allow(dead_code)]
pub(super) enum HealthStatus {
    Ok,
    Degraded,
}

/// Every error code the service answers (docs/http.md says when each is given). A
/// client should treat a code it does not know by its HTTP status.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[allow(dead_code)]
pub(super) enum ErrorCode {
    InvalidJson,
    InvalidPlayer,
    InvalidRequestId,
    ScoreOutOfRange,
    InvalidTime,
    BeforeSeason,
    OutsideCalendar,
    FutureTime,
    UnknownProfileField,
    ProfileTooLarge,
    BadBracket,
    BadLimit,
    BanInPast,
    BadRequest,
    Unauthorized,
    Forbidden,
    Banned,
    NotFound,
    UnknownTier,
    UnknownPeriod,
    UnknownPlayer,
    NotPlaced,
    Expired,
    MethodNotAllowed,
    BodyTimeout,
    PeriodClosed,
    PeriodOpen,
    NotJoined,
    PlacedLater,
    NotStarted,
    StillClosing,
    PayloadTooLarge,
    TooManyItems,
    Internal,
    StoreUnreachable,
    Unknown,
    StoreUnavailable,
    Timeout,
    StoreFull,
    TooManyStreams,
    ShuttingDown,
    UnknownCohort,
    ClockNotForward,
    ClockTooFar,
    NoStagingClock,
    StagingMismatch,
    UnknownBracket,
    BracketNotClosed,
    NoExclusions,
    NotInBracket,
    ExcludesEveryone,
    LimitExceeded,
    RateLimited,
    TokenExpired,
    PlayerTokensDisabled,
    TtlOutOfRange,
    InvalidEventId,
    EventsDisabled,
}

/// `applied` (the update changed the score) or `duplicate` (its request id had been
/// seen: nothing changed, the answer is the first one's).
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[allow(dead_code)]
pub(super) enum DoneStatus {
    Applied,
    Duplicate,
}

/// `refused` (nothing was written) or `unknown` (the store failed after the update may
/// have been applied: resend it only with its request id and `at`).
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[allow(dead_code)]
pub(super) enum FailedStatus {
    Refused,
    Unknown,
}

/// A batch item that was applied, or was a duplicate: the submission's fields.
#[derive(ToSchema)]
#[allow(dead_code)]
pub(super) struct BatchItemDone {
    status: DoneStatus,
    #[schema(inline)]
    #[serde(flatten)]
    submission: SubmissionOut,
}

/// A batch item that was refused, or whose outcome is unknown.
#[derive(ToSchema)]
#[allow(dead_code)]
pub(super) struct BatchItemFailed {
    status: FailedStatus,
    error: ErrorDetail,
}

/// One result of a batch, in the position of its item, by `status`.
#[derive(ToSchema)]
#[serde(untagged)]
#[schema(
    as = BatchItemOut,
    discriminator(property_name = "status", mapping(
        ("applied" = "#/components/schemas/BatchItemDone"),
        ("duplicate" = "#/components/schemas/BatchItemDone"),
        ("refused" = "#/components/schemas/BatchItemFailed"),
        ("unknown" = "#/components/schemas/BatchItemFailed"),
    ))
)]
#[allow(dead_code)]
pub(super) enum BatchItem {
    Done(BatchItemDone),
    Failed(BatchItemFailed),
}

/// The name of a live standings event.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[allow(dead_code)]
pub(super) enum StandingsEventName {
    Standings,
    Error,
}

/// One server-sent event of the live standings (as OpenAPI 3.2 reads a
/// `text/event-stream` schema: one object per event, with its fields). `event:
/// standings` carries a `StandingsOut`, `event: error` an `ErrorBody`, as JSON in
/// `data`.
#[derive(ToSchema)]
#[allow(dead_code)]
pub(super) struct StandingsEvent {
    event: StandingsEventName,
    /// JSON: a `StandingsOut`, or an `ErrorBody` for `error`.
    #[schema(content_media_type = "application/json")]
    data: String,
}

// ---------------------------------------------------------------------------------
// What every operation shares.
// ---------------------------------------------------------------------------------

/// The `contentSchema` of the streams' event data, which the annotations cannot say.
struct ContentSchemas;

impl Modify for ContentSchemas {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        super::model::content_schemas(openapi);
    }
}

/// Declares the bearer scheme the paths refer to, the `player` scheme of the reads a
/// player token may call (with their 403 for another player or bracket), and that
/// `/healthz` needs none.
struct Bearer;

impl Modify for Bearer {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
        components.add_security_scheme(
            "player",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("JWT")
                    .description(Some(
                        "A player token (HS256 JWT: `sub` the player, `exp`, `iat`, `aud` \
                         `leaguekit:<season name>`), as `Authorization: Bearer`; only on the \
                         operations that list this scheme, for its own player and bracket \
                         (on the two event streams also as `?access_token=`, for a browser's \
                         EventSource). 401 `token_expired` once past its `exp`.",
                    ))
                    .build(),
            ),
        );
        for path in super::auth::PLAYER_ROUTES {
            let Some(op) = openapi
                .paths
                .paths
                .get_mut(path)
                .and_then(|item| item.get.as_mut())
            else {
                continue;
            };
            op.security
                .get_or_insert_with(Vec::new)
                .push(SecurityRequirement::new("player", Vec::<String>::new()));
            op.responses
                .responses
                .entry("403".to_owned())
                .or_insert_with(|| {
                    error_answer(
                        "forbidden: a player token for another player, or another bracket or \
                         period than its own",
                    )
                });
        }
        if let Some(op) = openapi
            .paths
            .paths
            .get_mut("/healthz")
            .and_then(|item| item.get.as_mut())
        {
            op.security = Some(Vec::new());
        }
    }
}

/// The answers any operation can give, whatever its handler: the token check (401,
/// and 403 for a viewer's write), a parameter or body that cannot be read (400), a
/// body over the limit or too slow (413, 408), the store failing or the request timing
/// out (503); and `Retry-After` on every 409 and 503.
struct Answers;

impl Modify for Answers {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        for (path, item) in openapi.paths.paths.iter_mut() {
            for (write, op) in operations(item) {
                let guarded = op.security.as_ref().is_none_or(|s| !s.is_empty());
                let has_input = write || op.parameters.as_ref().is_some_and(|p| !p.is_empty());
                let mut add = Vec::new();
                if has_input {
                    add.push(("400", "The request cannot be read, or a value is out of range; nothing was written"));
                }
                if guarded {
                    add.push((
                        "401",
                        "unauthorized: no token, or one the server does not know; \
                         token_expired: a player token past its exp",
                    ));
                }
                if write {
                    add.push(("403", "forbidden: a viewer token on a write"));
                    add.push(("408", "body_timeout: the body did not finish arriving within the request timeout; nothing was written"));
                    add.push(("413", "payload_too_large: the body is over the limit"));
                }
                if path != "/healthz" {
                    add.push((
                        "503",
                        "The store failed or was too slow (timeout; for a write, unknown)",
                    ));
                }
                if let Some(body) = op.request_body.as_mut() {
                    optional_body(body);
                }
                for (status, description) in add {
                    op.responses
                        .responses
                        .entry(status.to_owned())
                        .or_insert_with(|| error_answer(description));
                }
                for (status, answer) in op.responses.responses.iter_mut() {
                    if !["409", "429", "503"].contains(&status.as_str()) {
                        continue;
                    }
                    if let RefOr::T(answer) = answer {
                        answer
                            .headers
                            .entry("Retry-After".to_owned())
                            .or_insert_with(|| {
                                HeaderBuilder::new()
                                    .schema(
                                        utoipa::openapi::ObjectBuilder::new()
                                            .schema_type(Type::Integer)
                                            .minimum(Some(1)),
                                    )
                                    .description(Some(
                                        "With not_started, still_closing, rate_limited, store_unreachable and \
                                     too_many_streams: whole seconds to wait before sending \
                                     the same request again (also `retry_after_ms` in the \
                                     body)",
                                    ))
                                    .build()
                            });
                    }
                }
            }
        }
    }
}

/// An optional body (`content = Option<T>`) is the schema of `T`, not required: a
/// client may leave it out (the server reads an empty body as `{}`), but `null` is not
/// a body.
fn optional_body(body: &mut utoipa::openapi::request_body::RequestBody) {
    if matches!(body.required, Some(utoipa::openapi::Required::True)) {
        return;
    }
    for content in body.content.values_mut() {
        let Some(RefOr::T(Schema::OneOf(one_of))) = &content.schema else {
            continue;
        };
        let mut items = one_of.items.iter().filter(|item| !is_null(item));
        if let (Some(only), None) = (items.next(), items.next()) {
            content.schema = Some(only.clone());
        }
    }
}

fn is_null(schema: &RefOr<Schema>) -> bool {
    matches!(schema, RefOr::T(Schema::Object(o))
        if o.schema_type == SchemaType::Type(Type::Null))
}

/// The operations of a path, each with whether it writes.
fn operations(item: &mut PathItem) -> impl Iterator<Item = (bool, &mut Operation)> {
    [
        (false, item.get.as_mut()),
        (true, item.post.as_mut()),
        (true, item.put.as_mut()),
        (true, item.patch.as_mut()),
        (true, item.delete.as_mut()),
    ]
    .into_iter()
    .filter_map(|(write, op)| op.map(|op| (write, op)))
}

/// An error answer with this description.
fn error_answer(description: &str) -> RefOr<utoipa::openapi::Response> {
    RefOr::T(
        ResponseBuilder::new()
            .description(description)
            .content(
                "application/json",
                utoipa::openapi::ContentBuilder::new()
                    .schema(Some(Ref::from_schema_name("ErrorBody")))
                    .build(),
            )
            .build(),
    )
}

/// The service's OpenAPI document.
pub fn openapi() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
}

/// `GET /openapi.json`: the document, with this server's longest player token
/// lifetime as the `maximum` of the mint route's `ttl`.
pub(super) async fn json<S: Store>(
    State(app): State<Arc<App<S>>>,
) -> Json<utoipa::openapi::OpenApi> {
    let mut doc = openapi();
    if let Some(keys) = app.players.as_ref() {
        max_ttl(&mut doc, keys.max_ttl());
    }
    Json(doc)
}

/// Sets the `maximum` of the mint route's `ttl` (its query parameter and its body's
/// field) to `secs`.
fn max_ttl(doc: &mut utoipa::openapi::OpenApi, secs: u64) {
    if secs == MAX_TTL_SECS {
        return;
    }
    let Ok(secs) = usize::try_from(secs) else {
        return;
    };
    let set = |schema: Option<&mut RefOr<Schema>>| {
        if let Some(RefOr::T(Schema::Object(o))) = schema {
            o.maximum = Some(utoipa::Number::UInt(secs));
        }
    };
    if let Some(RefOr::T(Schema::Object(body))) = doc
        .components
        .as_mut()
        .and_then(|c| c.schemas.get_mut("TokenIn"))
    {
        set(body.properties.get_mut("ttl"));
    }
    let query = doc
        .paths
        .paths
        .get_mut("/v1/players/{player}/token")
        .and_then(|item| item.post.as_mut())
        .and_then(|op| op.parameters.as_mut());
    for p in query.into_iter().flatten() {
        if p.name == "ttl" {
            set(p.schema.as_mut());
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    /// The codes of docs/http.md's error table (rows `| STATUS | `code` | ... |`).
    fn documented_codes() -> BTreeSet<String> {
        include_str!("../../docs/http.md")
            .lines()
            .filter_map(|line| {
                let mut cells = line.split('|').map(str::trim).skip(1);
                let status = cells.next()?;
                let code = cells.next()?;
                (status.len() == 3 && status.bytes().all(|b| b.is_ascii_digit()))
                    .then(|| code.trim_matches('`').to_owned())
            })
            .collect()
    }

    #[test]
    fn the_error_code_enum_is_the_documented_catalogue() {
        let doc = serde_json::to_value(super::openapi()).expect("document as JSON");
        let codes: BTreeSet<String> = doc["components"]["schemas"]["ErrorCode"]["enum"]
            .as_array()
            .expect("ErrorCode is an enum")
            .iter()
            .map(|c| c.as_str().expect("a code").to_owned())
            .collect();
        assert_eq!(codes, documented_codes());
    }

    #[test]
    fn the_event_streams_are_documented_with_their_events() {
        let doc = serde_json::to_value(super::openapi()).expect("document as JSON");
        let schemas = &doc["components"]["schemas"];
        assert_eq!(
            schemas["LogEvent"]["properties"]["data"]["contentSchema"]["$ref"],
            "#/components/schemas/Event"
        );
        let types = schemas["EventType"]["enum"].as_array().expect("an enum");
        assert_eq!(types.len(), crate::events::Kind::ALL.len());
        for k in crate::events::Kind::ALL {
            assert!(types.contains(&k.name().into()), "{}", k.name());
        }
        for path in [
            "/v1/players/{player}/events",
            "/v1/tiers/{tier}/brackets/{bracket}/events",
        ] {
            let get = &doc["paths"][path]["get"];
            assert!(
                get["responses"]["200"]["content"]["text/event-stream"].is_object(),
                "{path}"
            );
            let schemes: Vec<String> = get["security"]
                .as_array()
                .expect("security")
                .iter()
                .flat_map(|s| s.as_object().into_iter().flat_map(|o| o.keys().cloned()))
                .collect();
            assert!(
                schemes.contains(&"player".to_owned()),
                "{path}: {schemes:?}"
            );
            for status in ["400", "401", "403", "404", "429", "503"] {
                assert!(get["responses"][status].is_object(), "{path} {status}");
            }
            assert!(
                get["responses"]["429"]["headers"]["Retry-After"].is_object(),
                "{path}"
            );
        }
        // The `end` event: a member of both streams' events, its data a `StreamEnd`.
        for stream in ["PlayerStreamEvent", "BracketStreamEvent"] {
            assert!(
                schemas[stream]["oneOf"]
                    .as_array()
                    .expect("oneOf")
                    .contains(&serde_json::json!({"$ref": "#/components/schemas/EndEvent"})),
                "{stream}"
            );
        }
        assert_eq!(
            schemas["EndEvent"]["properties"]["data"]["contentSchema"]["$ref"],
            "#/components/schemas/StreamEnd"
        );
        assert_eq!(
            schemas["StreamEndReason"]["enum"],
            serde_json::json!(["token_expired", "banned"])
        );
    }

    #[test]
    fn the_mint_routes_ttl_goes_up_to_the_servers_maximum() {
        let ttl_maxima = |doc: utoipa::openapi::OpenApi| {
            let doc = serde_json::to_value(doc).expect("document as JSON");
            let body =
                doc["components"]["schemas"]["TokenIn"]["properties"]["ttl"]["maximum"].clone();
            let query = doc["paths"]["/v1/players/{player}/token"]["post"]["parameters"]
                .as_array()
                .expect("parameters")
                .iter()
                .find(|p| p["name"] == "ttl")
                .map(|p| p["schema"]["maximum"].clone());
            (body, query)
        };
        let default = serde_json::json!(86400);
        assert_eq!(
            ttl_maxima(super::openapi()),
            (default.clone(), Some(default))
        );
        let mut doc = super::openapi();
        super::max_ttl(&mut doc, 3600);
        let hour = serde_json::json!(3600);
        assert_eq!(ttl_maxima(doc), (hour.clone(), Some(hour)));
    }
}
