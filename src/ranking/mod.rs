//! Ranking: [`Boards`], the time-tiebroken boards. Score updates with their
//! idempotency records (`submit.rs`), standings and around-me reads
//! (`standings.rs`), cached profiles (`profile.rs`, `cached_profile.rs`), and tier-wide
//! lists (`top.rs`, `top_pool.rs`).
//!
//! The board's order and exact scores come from [`crate::season::packing`]; this
//! module checks input and drives the [`crate::store::RankingStore`] operations.
//!
//! Owns: the running periods' cached tier-wide lists. Must not: place a player (a
//! submit's placement is [`crate::league::Placements`]'s, which the league asks first),
//! close anything, or build a key string itself (keys come from
//! [`crate::store::keys`]).

mod cached_profile;
mod profile;
mod standings;
mod submit;
mod top;
mod top_pool;

pub use cached_profile::Profile;
pub(crate) use submit::Prepared;
pub use top::{MAX_TOP, TOP_CACHE, TierTop, TopEntry};
pub(crate) use top_pool::TopPool;

use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::context::Context;
use crate::season::calendar::PeriodId;
use crate::store::Store;
use top::TopCache;

/// A league's boards: score updates, standings, profiles and tier-wide lists.
#[derive(Debug)]
pub struct Boards<S: Store> {
    ctx: Arc<Context<S>>,
    /// The running periods' tier-wide lists, each reused for [`TOP_CACHE`].
    tops: TopCache,
}

impl<S: Store> Boards<S> {
    /// The boards of the league of `ctx`.
    pub(crate) fn new(ctx: Arc<Context<S>>) -> Self {
        Boards {
            ctx,
            tops: TopCache::default(),
        }
    }

    /// The league's context.
    pub(crate) fn ctx(&self) -> &Context<S> {
        &self.ctx
    }
}

/// Largest page a standings read returns.
pub const MAX_PAGE: u64 = 1000;
/// The answer to a score update.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Submission {
    /// The player.
    pub player: String,
    /// The period the update's time fell in.
    pub period: PeriodId,
    /// The player's tier.
    pub tier: String,
    /// The player's cohort for the period (absent without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cohort: Option<String>,
    /// The player's bracket.
    pub bracket: u32,
    /// The score after the update (for a repeated request id: after the first one).
    pub score: u64,
    /// 1-based rank after the update (for a repeated request id: the first answer's).
    /// `None` when the update was submitted [`without_rank`](SubmitOptions::without_rank),
    /// or for a repeated request id whose first update was.
    pub rank: Option<u64>,
    /// False when the request id had been seen: nothing changed.
    pub applied: bool,
    /// When this score placed the player in the period (`join = "on_first_score"`):
    /// their result in the last period they played, as [`crate::Placement::last`];
    /// otherwise `null`.
    pub last: Option<crate::rollover::outcome::LastOutcome>,
    /// When this score placed the player in the period: their rewards not yet
    /// claimed; otherwise `null`.
    pub pending_rewards: Option<Vec<crate::rollover::outcome::RewardGrant>>,
}

/// One row of standings.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Standing {
    /// 1-based rank.
    pub rank: u64,
    /// The player.
    pub player: String,
    /// The exact score.
    pub score: u64,
    /// The cached profile fields (an empty object when none are set), as stored.
    pub profile: Profile,
}

/// A page of one bracket's standings.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Standings {
    /// The period.
    pub period: PeriodId,
    /// The tier.
    pub tier: String,
    /// The cohort whose brackets these are (absent without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cohort: Option<String>,
    /// The bracket (within the tier's cohort).
    pub bracket: u32,
    /// Players in the bracket.
    pub players: u64,
    /// The requested entries, best first.
    pub entries: Vec<Standing>,
}

/// Options of [`crate::League::submit`](crate::League::submit).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SubmitOptions {
    /// Makes the update idempotent within the season's window. Retries must send the
    /// same id *and* the same `at`: the id is remembered in the bracket of `at`'s period.
    pub request_id: Option<String>,
    /// The event's time; defaults to the clock's now.
    pub at: Option<DateTime<Utc>>,
    /// The cohort a first score places the player in (a label of the season's
    /// `[cohorts]`); ignored once the player is placed in the period.
    pub cohort: Option<String>,
    /// Leaves the rank out of the answer ([`Submission::rank`] is `None`). On Redis a
    /// rank is a scan of the bracket's board (ZRANK on its listpack): leaving it out
    /// saves Redis that command, about 12% of an update's instructions but only a few
    /// per cent of its time at a million players (the board is already in cache), for
    /// callers that show ranks from standings reads rather than from each submit.
    pub without_rank: bool,
}

impl SubmitOptions {
    /// Sets the cohort of the placement a first score makes.
    pub fn cohort(mut self, cohort: impl Into<String>) -> Self {
        self.cohort = Some(cohort.into());
        self
    }

    /// Sets the request id.
    pub fn request_id(mut self, id: impl Into<String>) -> Self {
        self.request_id = Some(id.into());
        self
    }

    /// Sets the event time.
    pub fn at(mut self, at: DateTime<Utc>) -> Self {
        self.at = Some(at);
        self
    }

    /// Leaves the rank out of the answer: see [`SubmitOptions::without_rank`](#structfield.without_rank).
    pub fn without_rank(mut self) -> Self {
        self.without_rank = true;
        self
    }
}

/// One entry of [`crate::League::submit_many`](crate::League::submit_many).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct BatchItem {
    /// The player.
    pub player: String,
    /// The value.
    pub value: i64,
    /// Options.
    pub options: SubmitOptions,
}

impl BatchItem {
    /// An item with default options.
    pub fn new(player: impl Into<String>, value: i64) -> Self {
        Self {
            player: player.into(),
            value,
            options: SubmitOptions::default(),
        }
    }

    /// With these options.
    pub fn with_options(mut self, options: SubmitOptions) -> Self {
        self.options = options;
        self
    }
}
