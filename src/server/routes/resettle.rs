//! Re-settling a closed bracket over HTTP (admin tokens only): `POST
//! /v1/periods/{period}/tiers/{tier}/brackets/{bracket}/resettle`.
//!
//! Owns: the re-settlement's handler, its body and its answer's shape.
//! Must not: decide anything the operator's `resettle` decides.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::operator::resettle::{OutcomeSummary, PlayerCorrection, ResettleReport, TierCredit};
use crate::server::App;
use crate::server::auth::Admin;
use crate::server::error::{ApiError, ErrorBody};
use crate::server::model::{Body, P, RewardOut};
use crate::store::Store;

/// Body of a re-settlement.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ResettleIn {
    /// The players to exclude (at least one; earlier re-settlements' exclusions stay).
    #[serde(default)]
    #[schema(min_items = 1, inline)]
    exclude: Vec<String>,
    /// Why: kept in the audit log and shown with the corrected outcomes (1-500
    /// characters, not only spaces, no control characters).
    #[serde(default)]
    #[schema(schema_with = crate::server::model::reason)]
    reason: String,
}

/// A player's outcome in the bracket, before or after the re-settlement.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct OutcomeSummaryOut {
    rank: u64,
    /// `promoted`, `stayed` or `demoted`.
    #[schema(value_type = crate::server::openapi::Outcome)]
    outcome: &'static str,
    next_tier: String,
    reward: Option<String>,
}

impl From<OutcomeSummary> for OutcomeSummaryOut {
    fn from(o: OutcomeSummary) -> Self {
        Self {
            rank: o.rank,
            outcome: o.outcome.as_str(),
            next_tier: o.next_tier,
            reward: o.reward,
        }
    }
}

/// Tiers a player gains at their placement in or after `from_period`.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct TierCreditOut {
    from_period: u64,
    steps: u64,
}

impl From<TierCredit> for TierCreditOut {
    fn from(c: TierCredit) -> Self {
        Self {
            from_period: c.from_period,
            steps: c.steps,
        }
    }
}

/// What a re-settlement changed for one player.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct PlayerCorrectionOut {
    player: String,
    /// Whether the player is excluded.
    excluded: bool,
    /// Their outcome as the bracket closed.
    before: OutcomeSummaryOut,
    /// Their outcome now.
    after: OutcomeSummaryOut,
    /// Rewards the corrections grant them (each once).
    granted: Vec<RewardOut>,
    /// Rewards taken back (they were still pending).
    revoked: Vec<RewardOut>,
    /// What they were given and cannot be taken back.
    not_revocable: Vec<String>,
    /// Promotions that reach them from a later period (they were already placed in
    /// the next one).
    tier_credits: Vec<TierCreditOut>,
}

impl From<PlayerCorrection> for PlayerCorrectionOut {
    fn from(p: PlayerCorrection) -> Self {
        Self {
            player: p.player,
            excluded: p.excluded,
            before: p.before.into(),
            after: p.after.into(),
            granted: p.granted.into_iter().map(Into::into).collect(),
            revoked: p.revoked.into_iter().map(Into::into).collect(),
            not_revocable: p.not_revocable,
            tier_credits: p.tier_credits.into_iter().map(Into::into).collect(),
        }
    }
}

/// What a re-settlement did (the same as `leaguekit resettle` prints).
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ResettleOut {
    period: u64,
    tier: String,
    bracket: u32,
    /// The bracket's correction version (one more each time its exclusions grew).
    version: u64,
    /// Whether this request excluded a player not excluded before (`false`: nothing
    /// changed).
    changed: bool,
    /// Every player excluded so far, sorted.
    excluded: Vec<String>,
    /// Rewards this request granted (0 when they had been granted already).
    granted_now: u64,
    /// Every player whose outcome differs from the one the bracket closed with.
    players: Vec<PlayerCorrectionOut>,
}

impl From<ResettleReport> for ResettleOut {
    fn from(r: ResettleReport) -> Self {
        Self {
            period: r.period,
            tier: r.tier,
            bracket: r.bracket,
            version: r.version,
            changed: r.changed,
            excluded: r.excluded,
            granted_now: r.granted_now,
            players: r.players.into_iter().map(Into::into).collect(),
        }
    }
}

/// Settles a closed bracket again without the excluded players (an admin token
/// only): the players below take their places, promotions and rewards, each granted
/// once; what the excluded players were given is revoked where it can be. Sending it
/// again changes nothing; more exclusions add to the earlier ones. Audited.
#[utoipa::path(
    post,
    path = "/v1/periods/{period}/tiers/{tier}/brackets/{bracket}/resettle",
    tag = "operators",
    params(
        ("period" = u64, Path, minimum = 1, description = "A closed period"),
        ("tier" = String, Path, description = "The bracket's tier (a cohort's: `tier@cohort`)"),
        ("bracket" = u32, Path, minimum = 1, description = "Bracket number, from 1"),
    ),
    request_body(content = ResettleIn),
    responses(
        (status = 200, body = ResettleOut),
        (status = 400, description = "no_exclusions, not_in_bracket, excludes_everyone, invalid_player, bad_bracket, bad_request (the reason)", body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 403, description = "forbidden: not an admin token", body = ErrorBody),
        (status = 404, description = "unknown_period, unknown_tier, unknown_bracket", body = ErrorBody),
        (status = 409, description = "bracket_not_closed", body = ErrorBody),
        (status = 503, body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn resettle<S: Store>(
    State(app): State<Arc<App<S>>>,
    Admin(actor): Admin,
    P((period, tier, bracket)): P<(u64, String, u32)>,
    Body(body): Body<ResettleIn>,
) -> Result<Json<ResettleOut>, ApiError> {
    let report = app
        .league
        .operator()
        .resettle(&actor, period, &tier, bracket, &body.exclude, &body.reason)
        .await?;
    Ok(Json(report.into()))
}
