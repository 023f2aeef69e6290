//! The storage abstraction: the atomic operations the engine needs.
//!
//! Each method is one atomic step on one hash slot (see [`crate::keys`]), so the
//! Redis implementation is one Lua script or command per method and the in-memory
//! implementation is one critical section. Both must behave identically; the shared
//! conformance suite in `tests/conformance.rs` holds them to it.

use std::future::Future;

use crate::error::StoreError;
use crate::keys::{BracketKeys, PeriodKeys, PlayerKeys, SeasonKeys};
use crate::score::ScoreMode;

/// Where a join put a player.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Joined {
    /// The tier name the player is placed in for this period.
    pub tier: String,
    /// The bracket number, from 1.
    pub bracket: u32,
    /// True if this call placed the player; false if they were already placed.
    pub new: bool,
}

/// One score update, as the store sees it (already validated by the engine).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Update<'a> {
    /// The player.
    pub player: &'a str,
    /// How the value changes the score.
    pub mode: ScoreMode,
    /// The submitted value.
    pub value: i64,
    /// The event's tick within its period.
    pub tick: u64,
    /// The season's maximum score.
    pub max_score: u64,
    /// The packing multiplier `T` (see [`crate::score`]).
    pub span: u64,
    /// The idempotency key and how long it lives, if the update carries a request id.
    pub request: Option<(String, u64)>,
}

/// What the store did with an update.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UpdateStatus {
    /// The update was applied.
    Applied,
    /// The request id was seen before; the reply is the first one's, nothing changed.
    Duplicate,
    /// The score would leave `0..=max_score`; nothing changed.
    OutOfRange {
        /// The packed value before the update (0 if not on the board).
        current: u64,
    },
    /// The bracket is closed; nothing changed.
    Closed,
}

/// The store's reply to an update.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UpdateReply {
    /// What happened.
    pub status: UpdateStatus,
    /// The packed value after the update (the first answer's, for a duplicate).
    pub packed: u64,
    /// 0-based rank after the update (the first answer's, for a duplicate).
    pub rank: u64,
}

/// A bracket entry as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RawEntry {
    /// The player id.
    pub player: String,
    /// The packed score.
    pub packed: u64,
    /// The cached profile (a JSON object), if any.
    pub profile: Option<String>,
}

/// A slice of a bracket's standings.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Page {
    /// Players on the board.
    pub total: u64,
    /// 0-based rank of the first entry.
    pub offset: u64,
    /// The entries, best first.
    pub entries: Vec<RawEntry>,
}

/// A player's league state: where they were last placed, and the placement before.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PlayerState {
    /// The last period the player joined.
    pub period: u64,
    /// Their tier in that period.
    pub tier: String,
    /// Their bracket in that period.
    pub bracket: u32,
    /// The placement before that one: `(period, tier, bracket)`. Kept so a player who
    /// has joined the current period can still be shown their last closed period.
    pub previous: Option<(u64, String, u32)>,
}

impl PlayerState {
    /// A state with no previous placement.
    pub fn new(period: u64, tier: impl Into<String>, bracket: u32) -> Self {
        Self {
            period,
            tier: tier.into(),
            bracket,
            previous: None,
        }
    }
}

/// What [`Store::begin_close`] finds: the period's summary if it is already closed,
/// and its join counters `(tier, players joined)`.
pub type ClosingPeriod = (Option<String>, Vec<(String, u64)>);

/// Whether a bracket still needs closing, as seen by one rollover process.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BracketClaim {
    /// The bracket is closed and its rewards granted; its tally is attached.
    Done(String),
    /// This process holds the lease and should close it.
    Mine,
    /// Another process holds the lease; come back later.
    Busy,
}

/// The atomic operations behind a [`crate::League`].
pub trait Store: Send + Sync + 'static {
    /// Places `player` in a bracket of `tier` for the period, unless already placed:
    /// bracket = ceil(n / size) where n is the tier's join counter after increment.
    /// Atomic per period: concurrent joins of one player get one bracket.
    fn join(
        &self,
        period: &PeriodKeys,
        player: &str,
        tier: &str,
        size: u32,
    ) -> impl Future<Output = Result<Joined, StoreError>> + Send;

    /// The player's placement in the period, if any: `(tier, bracket)`.
    fn placement(
        &self,
        period: &PeriodKeys,
        player: &str,
    ) -> impl Future<Output = Result<Option<(String, u32)>, StoreError>> + Send;

    /// Puts a joined player on the bracket's board (as never-scored) unless already
    /// there, and caches their profile JSON beside it. Idempotent.
    fn enter(
        &self,
        bracket: &BracketKeys,
        player: &str,
        profile: Option<&str>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Applies one update atomically, with the idempotency check in the same step.
    fn update(
        &self,
        bracket: &BracketKeys,
        update: &Update<'_>,
    ) -> impl Future<Output = Result<UpdateReply, StoreError>> + Send;

    /// Applies many updates in one round trip (pipelined); replies in order.
    fn update_many(
        &self,
        updates: &[(&BracketKeys, Update<'_>)],
    ) -> impl Future<Output = Result<Vec<UpdateReply>, StoreError>> + Send;

    /// Entries `offset..offset+limit` (0-based ranks) with cached profiles.
    fn standings(
        &self,
        bracket: &BracketKeys,
        offset: u64,
        limit: u64,
    ) -> impl Future<Output = Result<Page, StoreError>> + Send;

    /// The window of `before` entries above and `after` below the player, with the
    /// player; `None` if the player is not on the board.
    fn around(
        &self,
        bracket: &BracketKeys,
        player: &str,
        before: u64,
        after: u64,
    ) -> impl Future<Output = Result<Option<Page>, StoreError>> + Send;

    /// The player's 0-based rank and packed score, if on the board.
    fn entry(
        &self,
        bracket: &BracketKeys,
        player: &str,
    ) -> impl Future<Output = Result<Option<(u64, u64)>, StoreError>> + Send;

    /// Players joined per tier in the period (tiers with nobody are absent).
    fn joined(
        &self,
        period: &PeriodKeys,
    ) -> impl Future<Output = Result<Vec<(String, u64)>, StoreError>> + Send;

    /// Replaces the given profile fields of a player, and refreshes the cached copy
    /// (`json`, the whole profile) in `bracket` if the player is placed there.
    fn set_profile(
        &self,
        player_keys: &PlayerKeys,
        fields: &[(String, String)],
        cache: Option<(&BracketKeys, &str, &str)>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// The player's profile fields.
    fn profile(
        &self,
        player_keys: &PlayerKeys,
    ) -> impl Future<Output = Result<Vec<(String, String)>, StoreError>> + Send;

    /// The player's league state, if they ever joined.
    fn player_state(
        &self,
        player_keys: &PlayerKeys,
    ) -> impl Future<Output = Result<Option<PlayerState>, StoreError>> + Send;

    /// Records the player's latest placement. A state for an earlier period than the
    /// stored one is ignored; one for a later period moves the stored placement to
    /// `previous` (the `previous` field of the argument is ignored). So concurrent or
    /// repeated writes converge.
    fn record_state(
        &self,
        player_keys: &PlayerKeys,
        state: &PlayerState,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    // ---- rollover (see crate::rollover) ----

    /// The last period the season has closed (0 if none).
    fn closed_through(
        &self,
        season: &SeasonKeys,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// Raises the season's closed-through mark to `period` (never lowers it).
    fn set_closed_through(
        &self,
        season: &SeasonKeys,
        period: u64,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Starts closing a period: marks it `closing` (joins are refused from now on) and
    /// returns its summary if it is already closed, and its join counters.
    fn begin_close(
        &self,
        period: &PeriodKeys,
    ) -> impl Future<Output = Result<ClosingPeriod, StoreError>> + Send;

    /// The period's summary if it is closed.
    fn period_summary(
        &self,
        period: &PeriodKeys,
    ) -> impl Future<Output = Result<Option<String>, StoreError>> + Send;

    /// Marks the period closed with its summary and sets every period key to expire in
    /// `ttl_secs` seconds. Idempotent.
    fn finish_period(
        &self,
        period: &PeriodKeys,
        summary: &str,
        ttl_secs: u64,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// `Done` if the bracket is finished; else takes the lease for `owner` for
    /// `lease_ms` if it is free (or already `owner`'s) and answers `Mine`; else `Busy`.
    fn claim_bracket(
        &self,
        bracket: &BracketKeys,
        owner: &str,
        lease_ms: u64,
    ) -> impl Future<Output = Result<BracketClaim, StoreError>> + Send;

    /// Marks the bracket closed (updates are refused from now on) and returns its whole
    /// board as `(player, packed)`, in one atomic step. Idempotent.
    fn freeze(
        &self,
        bracket: &BracketKeys,
    ) -> impl Future<Output = Result<Vec<(String, u64)>, StoreError>> + Send;

    /// Records the bracket's outcomes (`player → encoded outcome`) unless already
    /// recorded, and sets every bracket key to expire in `ttl_secs` seconds.
    fn record_outcomes(
        &self,
        bracket: &BracketKeys,
        outcomes: &[(String, String)],
        ttl_secs: u64,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Grants rewards: for each `(player, source, grant)`, sets the player's reward
    /// `source` to pending `grant` unless the player already has that source (pending
    /// or claimed). Pipelined; idempotent.
    fn grant(
        &self,
        grants: &[(PlayerKeys, String, String)],
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Marks the bracket finished with its tally and releases the lease. Idempotent.
    fn finish_bracket(
        &self,
        bracket: &BracketKeys,
        tally: &str,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// One player's encoded outcome in a closed bracket.
    fn outcome(
        &self,
        bracket: &BracketKeys,
        player: &str,
    ) -> impl Future<Output = Result<Option<String>, StoreError>> + Send;

    /// Every encoded outcome of a closed bracket, `(player, outcome)`, in any order.
    fn outcomes(
        &self,
        bracket: &BracketKeys,
    ) -> impl Future<Output = Result<Vec<(String, String)>, StoreError>> + Send;

    /// The player's pending rewards `(source, grant)`, sorted by source.
    fn rewards(
        &self,
        player_keys: &PlayerKeys,
    ) -> impl Future<Output = Result<Vec<(String, String)>, StoreError>> + Send;

    /// Marks every pending reward claimed and returns them `(source, grant)` sorted by
    /// source, atomically. With a claim id, the answer is remembered: a repeated claim
    /// with the same id returns the same grants and claims nothing new.
    fn claim_rewards(
        &self,
        player_keys: &PlayerKeys,
        claim_id: Option<&str>,
    ) -> impl Future<Output = Result<Vec<(String, String)>, StoreError>> + Send;
}
