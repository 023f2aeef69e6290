//! The API's JSON: request bodies, query strings and answers, with their OpenAPI
//! schemas. Answers have the same shapes as the command line's output; each is built
//! from the library's own type, so the schema is what is served.
//!
//! Owns: the JSON shapes of requests and answers and their OpenAPI schemas.
//! Must not: talk to the league or the store.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::league::{Placement, PlayerView};
use crate::ranking::{Standing, Standings, Submission};
use crate::rollover::{LastOutcome, RewardGrant};

use super::error::{ApiError, ErrorDetail};
pub(super) use super::extract::{Body, Items, P, Q, Required, parse_time, rfc3339};
pub(super) use events::{
    BracketStreamEvent, EndEvent, EndEventName, ErrorEvent, ErrorEventName, Event, EventType,
    LogEvent, PlayerEventsQuery, PlayerStreamEvent, StreamEnd, StreamEndReason, content_schemas,
};
pub(super) use periods::{
    BlockedBracketOut, ExportLine, PeriodOut, PeriodReportOut, PeriodsOut, TallyOut,
};
pub(super) use tiers::{CohortCountOut, CountsOut, CountsQuery, TierCountOut, TopOut, TopQuery};

mod events;
mod periods;
mod tiers;

// ---------------------------------------------------------------------------------
// Requests.
// ---------------------------------------------------------------------------------

/// Body of a join (optional).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct JoinIn {
    /// Event time, RFC 3339 (default: now by the league clock).
    #[schema(format = DateTime)]
    pub(super) at: Option<String>,
    /// Cohort to be placed in (a label of the season's `[cohorts]`); defaults to the
    /// player's last cohort. Ignored once the player is placed in the period.
    pub(super) cohort: Option<String>,
}

/// Body of a score update.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct SubmitIn {
    /// A delta, a best or a new score, by the season's `scoring.mode`. No season allows
    /// more than 2^53 - 1; the season's own bound is `max_score` (`GET /v1/season`).
    #[schema(minimum = -9_007_199_254_740_991_i64, maximum = 9_007_199_254_740_991_i64)]
    pub(super) value: i64,
    /// Makes the update idempotent: a resend with the same id (and the same `at`)
    /// changes nothing and answers like the first. 1-128 bytes.
    #[schema(
        min_length = 1,
        max_length = 128,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$"
    )]
    pub(super) request_id: Option<String>,
    /// Event time, RFC 3339 (default: now by the league clock).
    #[schema(format = DateTime)]
    pub(super) at: Option<String>,
    /// `false` leaves `rank` out of the answer, which saves the store a scan of the
    /// bracket's board (a few per cent of an update's Redis time). Default `true`.
    #[serde(default = "yes")]
    pub(super) rank: bool,
    /// Cohort of the placement a first score makes (see the join's `cohort`).
    pub(super) cohort: Option<String>,
}

fn yes() -> bool {
    true
}

/// One item of a batch.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct BatchItemIn {
    /// The player: 1-64 bytes of UTF-8 without control characters.
    #[schema(
        min_length = 1,
        max_length = 64,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$"
    )]
    pub(super) player: String,
    /// The value (see the single update).
    #[schema(minimum = -9_007_199_254_740_991_i64, maximum = 9_007_199_254_740_991_i64)]
    pub(super) value: i64,
    /// Idempotency key (see the single update), 1-128 bytes.
    #[schema(
        min_length = 1,
        max_length = 128,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$"
    )]
    pub(super) request_id: Option<String>,
    /// Event time, RFC 3339.
    #[schema(format = DateTime)]
    pub(super) at: Option<String>,
    /// `false` leaves `rank` out of the item's answer (see the single update).
    #[serde(default = "yes")]
    pub(super) rank: bool,
    /// Cohort of the placement a first score makes (see the join's `cohort`).
    pub(super) cohort: Option<String>,
}

/// Body of a claim (optional).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ClaimIn {
    /// Makes the claim idempotent: a repeat returns the same grants. 1-128 bytes.
    #[schema(
        min_length = 1,
        max_length = 128,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$"
    )]
    pub(super) request_id: Option<String>,
}

/// `?period=`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(super) struct PeriodQuery {
    /// Period id (default: the current period by the league clock).
    #[param(minimum = 0)]
    pub(super) period: Option<u64>,
}

/// `?period=&offset=&limit=`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(super) struct PageQuery {
    /// Period id (default: current).
    #[param(minimum = 0)]
    pub(super) period: Option<u64>,
    /// First rank to show, 0-based (default 0).
    #[param(minimum = 0)]
    pub(super) offset: Option<u64>,
    /// Entries to show, 1-1000 (default 100).
    #[param(minimum = 1, maximum = 1000)]
    pub(super) limit: Option<u64>,
    /// The cohort whose brackets to read (a label of the season's `[cohorts]`); the
    /// bracket number counts within it. Default: the brackets of players without one.
    pub(super) cohort: Option<String>,
}

/// `?radius=&period=`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(super) struct AroundQuery {
    /// Entries above and below the player, 0-500 (default 5).
    #[param(minimum = 0, maximum = 500)]
    pub(super) radius: Option<u64>,
    /// Period id (default: current).
    #[param(minimum = 0)]
    pub(super) period: Option<u64>,
}

/// `?period=&limit=` of the live standings.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(super) struct LiveQuery {
    /// Period id (default: follow the current period, also across a boundary).
    #[param(minimum = 0)]
    pub(super) period: Option<u64>,
    /// Entries to send, 1-1000 (default 100).
    #[param(minimum = 1, maximum = 1000)]
    pub(super) limit: Option<u64>,
    /// The cohort whose brackets to follow (see the standings' `cohort`).
    pub(super) cohort: Option<String>,
    /// With `[events]`: resume the log events after this event id (an `id:` this
    /// stream sent), for clients that cannot send the `Last-Event-ID` header; the
    /// header wins when both are sent.
    pub(super) last_event_id: Option<String>,
    /// The token, for clients that cannot send headers (a browser's `EventSource`);
    /// `Authorization: Bearer` is preferred: a URL may end up in proxies' logs.
    #[allow(dead_code)] // read by the token check (auth.rs), listed here for the document
    pub(super) access_token: Option<String>,
}

/// `?limit=` of the periods list.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(super) struct PeriodsQuery {
    /// Closed periods to list, newest first, 0-100 (default: `retention.periods`).
    #[param(minimum = 0, maximum = 100)]
    pub(super) limit: Option<u64>,
}

// ---------------------------------------------------------------------------------
// Answers.
// ---------------------------------------------------------------------------------

/// Where a player is placed.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct PlacementOut {
    player: String,
    period: u64,
    tier: String,
    /// The cohort the player is placed in for the period (absent without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    cohort: Option<String>,
    bracket: u32,
    /// On the answer that placed the player in this period: their result in the last
    /// period they played (`null` for a new player, or if that result has expired).
    /// `null` on every later answer for the period.
    last: Option<LastOut>,
    /// On the answer that placed the player in this period: their rewards not yet
    /// claimed. `null` on every later answer.
    pending_rewards: Option<Vec<RewardOut>>,
}

impl From<Placement> for PlacementOut {
    fn from(p: Placement) -> Self {
        Self {
            player: p.player,
            period: p.period,
            tier: p.tier,
            cohort: p.cohort,
            bracket: p.bracket,
            last: p.last.map(Into::into),
            pending_rewards: p
                .pending_rewards
                .map(|r| r.into_iter().map(Into::into).collect()),
        }
    }
}

/// The answer to a score update.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct SubmissionOut {
    player: String,
    period: u64,
    tier: String,
    /// The player's cohort for the period (absent without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    cohort: Option<String>,
    bracket: u32,
    /// The score after the update (for a repeated request id: after the first one).
    score: u64,
    /// 1-based rank after the update; absent when the update was sent with
    /// `"rank": false` (for a repeated request id: when the first one was).
    #[serde(skip_serializing_if = "Option::is_none")]
    rank: Option<u64>,
    /// False when the request id had been seen: nothing changed.
    applied: bool,
    /// When this score placed the player in the period (`join = "on_first_score"`):
    /// their result in the last period they played, as the join's `last`; otherwise
    /// `null`.
    last: Option<LastOut>,
    /// When this score placed the player in the period: their rewards not yet
    /// claimed; otherwise `null`.
    pending_rewards: Option<Vec<RewardOut>>,
}

impl From<Submission> for SubmissionOut {
    fn from(s: Submission) -> Self {
        Self {
            player: s.player,
            period: s.period,
            tier: s.tier,
            cohort: s.cohort,
            bracket: s.bracket,
            score: s.score,
            rank: s.rank,
            applied: s.applied,
            last: s.last.map(Into::into),
            pending_rewards: s
                .pending_rewards
                .map(|r| r.into_iter().map(Into::into).collect()),
        }
    }
}

/// One result of a batch, in the position of its item: `applied` or `duplicate` with
/// the submission's fields, `refused` (nothing written) or `unknown` (the store failed
/// after the update may have been applied: resend it only with its request id) with
/// `error`.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct BatchItemOut {
    /// `applied`, `duplicate`, `refused` or `unknown`.
    pub(super) status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    player: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    period: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tier: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cohort: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bracket: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    score: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rank: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    applied: Option<bool>,
    /// As the single update's `last`: present when this score placed the player.
    #[serde(skip_serializing_if = "Option::is_none")]
    last: Option<LastOut>,
    /// As the single update's `pending_rewards`: present when this score placed the
    /// player.
    #[serde(skip_serializing_if = "Option::is_none")]
    pending_rewards: Option<Vec<RewardOut>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ErrorDetail>,
}

impl BatchItemOut {
    pub(super) fn done(s: Submission) -> Self {
        Self {
            status: if s.applied { "applied" } else { "duplicate" },
            player: Some(s.player),
            period: Some(s.period),
            tier: Some(s.tier),
            cohort: s.cohort,
            bracket: Some(s.bracket),
            score: Some(s.score),
            rank: s.rank,
            applied: Some(s.applied),
            last: s.last.map(Into::into),
            pending_rewards: s
                .pending_rewards
                .map(|r| r.into_iter().map(Into::into).collect()),
            error: None,
        }
    }

    pub(super) fn failed(e: &ApiError) -> Self {
        Self {
            status: if e.code == "unknown" {
                "unknown"
            } else {
                "refused"
            },
            player: None,
            period: None,
            tier: None,
            cohort: None,
            bracket: None,
            score: None,
            rank: None,
            applied: None,
            last: None,
            pending_rewards: None,
            error: Some(e.detail()),
        }
    }
}

/// One row of standings.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(super) struct StandingOut {
    rank: u64,
    player: String,
    score: u64,
    /// The cached profile fields (an empty object when none are set).
    #[schema(value_type = BTreeMap<String, String>)]
    profile: crate::ranking::Profile,
}

impl From<Standing> for StandingOut {
    fn from(s: Standing) -> Self {
        Self {
            rank: s.rank,
            player: s.player,
            score: s.score,
            profile: s.profile,
        }
    }
}

/// A page of a bracket's standings, best first.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(super) struct StandingsOut {
    pub(super) period: u64,
    pub(super) tier: String,
    /// The cohort whose brackets these are (absent without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) cohort: Option<String>,
    pub(super) bracket: u32,
    /// Players in the bracket.
    pub(super) players: u64,
    pub(super) entries: Vec<StandingOut>,
}

impl From<Standings> for StandingsOut {
    fn from(s: Standings) -> Self {
        Self {
            period: s.period,
            tier: s.tier,
            cohort: s.cohort,
            bracket: s.bracket,
            players: s.players,
            entries: s.entries.into_iter().map(Into::into).collect(),
        }
    }
}

/// A player's last closed period.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct LastOut {
    period: u64,
    tier: String,
    /// The cohort played in (absent without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    cohort: Option<String>,
    bracket: u32,
    rank: u64,
    score: u64,
    /// `promoted`, `stayed` or `demoted`.
    #[schema(value_type = super::openapi::Outcome)]
    outcome: &'static str,
    next_tier: String,
    reward: Option<String>,
}

impl From<LastOutcome> for LastOut {
    fn from(o: LastOutcome) -> Self {
        Self {
            period: o.period,
            tier: o.tier,
            cohort: o.cohort,
            bracket: o.bracket,
            rank: o.rank,
            score: o.score,
            outcome: o.outcome.as_str(),
            next_tier: o.next_tier,
            reward: o.reward,
        }
    }
}

/// A player's placement, rank and score in a period, and their last closed period.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct PlayerOut {
    player: String,
    period: u64,
    /// The tier they are placed in, or would join next.
    tier: String,
    /// Their cohort, if placed in one.
    #[serde(skip_serializing_if = "Option::is_none")]
    cohort: Option<String>,
    bracket: Option<u32>,
    rank: Option<u64>,
    score: Option<u64>,
    last: Option<LastOut>,
}

impl PlayerOut {
    pub(super) fn new(v: PlayerView, last: Option<LastOutcome>) -> Self {
        Self {
            player: v.player,
            period: v.period,
            tier: v.tier,
            cohort: v.cohort,
            bracket: v.bracket,
            rank: v.rank,
            score: v.score,
            last: last.map(Into::into),
        }
    }
}

/// A player's profile.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct ProfileOut {
    pub(super) player: String,
    pub(super) profile: BTreeMap<String, String>,
}

/// A reward.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct RewardOut {
    /// Where it was earned: `period/tier/bracket`.
    source: String,
    /// The grant string from the season.
    grant: String,
}

impl From<RewardGrant> for RewardOut {
    fn from(r: RewardGrant) -> Self {
        Self {
            source: r.source,
            grant: r.grant,
        }
    }
}

/// A player's pending rewards.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct RewardsOut {
    pub(super) player: String,
    pub(super) rewards: Vec<RewardOut>,
}

/// What a claim granted.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct ClaimOut {
    pub(super) player: String,
    pub(super) granted: Vec<RewardOut>,
}

/// A reward rule of a tier.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct RewardRuleOut {
    pub(super) first: u32,
    pub(super) last: u32,
    pub(super) grant: String,
}

/// A tier of the ladder.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct TierOut {
    pub(super) name: String,
    /// A count (`"20"`) or a percentage (`"10%"`).
    pub(super) promote: String,
    pub(super) demote: String,
    /// Of what the percentages are taken: `players` (the bracket's actual players) or
    /// `size` (the bracket size, however many joined).
    #[schema(value_type = super::openapi::Zones)]
    pub(super) zones: &'static str,
    /// A bracket that closes with fewer active players demotes nobody (0: no minimum).
    pub(super) min_players: u32,
    pub(super) rewards: Vec<RewardRuleOut>,
}

/// The season's rules, as the dashboard shows them.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct SeasonOut {
    pub(super) name: String,
    /// The ladder, lowest first.
    pub(super) tiers: Vec<TierOut>,
    pub(super) bracket_size: u32,
    /// With reserved late seats: players a bracket takes before the late point
    /// (absent without late seats).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) early_cap: Option<u32>,
    /// With reserved late seats: the late point, `60%` of the period or a time after
    /// its start such as `4d` (absent without late seats).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) late_after: Option<String>,
    /// `on_first_score` or `explicit`.
    #[schema(value_type = super::openapi::JoinPolicy)]
    pub(super) join: &'static str,
    /// `increment`, `best` or `set`.
    #[schema(value_type = super::openapi::ScoringMode)]
    pub(super) mode: &'static str,
    pub(super) max_score: u64,
    pub(super) profile_fields: Vec<String>,
    pub(super) max_skew_ms: u64,
    /// Whether the season has a staging clock (`[clock] travel = true`): operators move
    /// its league clock forward (`POST /v1/clock`). Never on a live league.
    pub(super) travel: bool,
    /// With `travel`: milliseconds the staging clock adds to the store's clock (absent
    /// without travel, or when the store could not be read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) clock_offset_ms: Option<i64>,
    /// `daily`, `weekly` or a cron expression.
    pub(super) period: String,
    pub(super) timezone: String,
}

/// `GET /healthz`.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct HealthOut {
    /// `ok`, or `degraded` while the store refuses writes (reads keep working).
    #[schema(value_type = super::openapi::HealthStatus)]
    pub(super) status: &'static str,
    /// With `degraded`: `store_refuses_writes`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) code: Option<&'static str>,
    /// With `degraded`: why the store refuses writes, and what to do.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) message: Option<String>,
}

/// A reason for the audit log as the OpenAPI document states it: 1-500 characters, not
/// only spaces, no control characters (the check itself is `operator::check_text`).
/// One schema for every operator route's `reason`, since utoipa takes a pattern only
/// as a literal.
pub(crate) fn reason() -> utoipa::openapi::Object {
    reason_of(utoipa::openapi::schema::Type::String.into())
}

/// [`reason`], optional: it may also be `null`.
pub(crate) fn optional_reason() -> utoipa::openapi::Object {
    use utoipa::openapi::schema::{SchemaType, Type};
    reason_of(SchemaType::from_iter([Type::String, Type::Null]))
}

fn reason_of(kind: utoipa::openapi::schema::SchemaType) -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(kind)
        .description(Some(
            "Why, kept in the audit log (and shown with corrected outcomes): 1-500 \
             characters, not only spaces, no control characters.",
        ))
        .min_length(Some(1))
        .max_length(Some(500))
        .pattern(Some(
            r"^[^\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F][^\u0000-\u001F\u007F-\u009F]*$",
        ))
        .build()
}
