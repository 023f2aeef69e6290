//! The JSON of periods: the league's periods with their rollover reports, brackets a
//! rollover could not close, and the lines of a closed period's export.
//!
//! Owns: the JSON shapes of periods, reports and exports.
//! Must not: talk to the league or the store.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use super::rfc3339;
use crate::rollover::outcome::Tally;
use crate::rollover::{OutcomeRecord, PeriodReport};
use crate::season::calendar::Period;

/// What a rollover did to some players.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
pub(crate) struct TallyOut {
    players: u64,
    promoted: u64,
    demoted: u64,
    stayed: u64,
    rewards: u64,
    idle: u64,
}

impl From<Tally> for TallyOut {
    fn from(t: Tally) -> Self {
        Self {
            players: t.players,
            promoted: t.promoted,
            demoted: t.demoted,
            stayed: t.stayed,
            rewards: t.rewards,
            idle: t.idle,
        }
    }
}

/// The report of a closed period: totals, and the same figures per tier.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct PeriodReportOut {
    period: u64,
    brackets: u64,
    #[serde(flatten)]
    totals: TallyOut,
    tiers: BTreeMap<String, TallyOut>,
}

impl From<PeriodReport> for PeriodReportOut {
    fn from(r: PeriodReport) -> Self {
        Self {
            period: r.period,
            brackets: r.brackets,
            totals: r.totals.into(),
            tiers: r.tiers.into_iter().map(|(k, t)| (k, t.into())).collect(),
        }
    }
}

/// A period of the calendar.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct PeriodOut {
    id: u64,
    #[schema(format = DateTime)]
    start: String,
    #[schema(format = DateTime)]
    end: String,
    /// When it stops accepting events and may be closed: its end plus `max_skew`.
    #[schema(format = DateTime)]
    closes_at: String,
}

impl PeriodOut {
    pub(crate) fn new(p: &Period, closes_at: DateTime<Utc>) -> Self {
        Self {
            id: p.id,
            start: rfc3339(p.start),
            end: rfc3339(p.end),
            closes_at: rfc3339(closes_at),
        }
    }
}

/// The league's time: the current period, the next boundary, and the rollover.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct PeriodsOut {
    pub(crate) season: String,
    /// The league clock (Redis's), when this answer was made.
    #[schema(format = DateTime)]
    pub(crate) now: String,
    /// The period the league clock is in (`null` before the season starts).
    pub(crate) current: Option<PeriodOut>,
    /// The next period boundary: the current period's end (or the season's start).
    #[schema(format = DateTime)]
    pub(crate) next_boundary: Option<String>,
    /// Every period up to this one is closed (0: none yet).
    pub(crate) closed_through: u64,
    /// Periods that have ended but are not closed yet: the rollover's backlog.
    pub(crate) pending: Vec<u64>,
    /// The latest closed periods with their reports, newest first.
    pub(crate) closed: Vec<PeriodReportOut>,
    /// Rewards whose grant keeps failing (see `leaguekit rollover`).
    pub(crate) blocked_rewards: u64,
    /// Brackets the rollover cannot close: a key of the wrong type in them (repair
    /// or delete it; every rollover retries them).
    pub(crate) blocked_brackets: Vec<BlockedBracketOut>,
}

/// A bracket the rollover cannot close.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct BlockedBracketOut {
    /// `period/tier/bracket`.
    pub(crate) bracket: String,
    /// The key in the way.
    pub(crate) key: String,
    /// Why, and what to do.
    pub(crate) error: String,
}

/// One line of a period's export (JSON lines).
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ExportLine {
    period: u64,
    tier: String,
    /// The cohort played in (absent without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    cohort: Option<String>,
    bracket: u32,
    rank: u64,
    player: String,
    score: u64,
    /// `promoted`, `stayed` or `demoted`.
    #[schema(value_type = crate::server::openapi::Outcome)]
    outcome: &'static str,
    next_tier: String,
    reward: Option<String>,
    /// Present (`true`) when a re-settlement corrected this outcome after the close.
    #[serde(skip_serializing_if = "Option::is_none")]
    corrected: Option<bool>,
    /// Why: the reason of the re-settlement that last changed it (with `corrected`).
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

impl From<OutcomeRecord> for ExportLine {
    fn from(r: OutcomeRecord) -> Self {
        Self {
            period: r.period,
            tier: r.tier,
            cohort: r.cohort,
            bracket: r.bracket,
            rank: r.rank,
            player: r.player,
            score: r.score,
            outcome: r.outcome.as_str(),
            next_tier: r.next_tier,
            reward: r.reward,
            corrected: r.corrected.then_some(true),
            reason: r.reason,
        }
    }
}
