//! The storage abstraction: the atomic operations the engine needs, one trait per
//! concern of the design.
//!
//! - [`LeagueStore`]: placements: the period's bracket counters (HINCRBY, bracket =
//!   ceil(n / size), or the late-seat rule of [`crate::season::seats`]), a player's board entry, their league state, the store's clock;
//! - [`RankingStore`]: score updates with their idempotency records, standings and
//!   around-me reads, cached profiles;
//! - [`RolloverStore`]: closing brackets and periods, outcomes, rewards and claims;
//! - [`AuditStore`]: the audit log of operator actions;
//! - [`ClockStore`]: the staging clock's offset (`[clock] travel = true`);
//! - [`BanStore`]: bans' records and markers;
//! - [`CorrectionStore`]: re-settlements of closed brackets;
//! - [`AdjustStore`]: operators' exact changes of a score;
//! - [`EventStore`]: reading the event logs that the writes above append to;
//! - [`DeliveryStore`]: webhook delivery's leases, cursors and dead letters.
//!
//! [`Store`] is their sum, which [`crate::League`] runs on. Each method is one atomic
//! step on one hash slot (see [`keys`]), so the Redis implementation ([`redis`]) is one
//! Lua script or command per method and the in-memory one ([`memory`]) one critical
//! section. Both must behave identically; the shared conformance suite in
//! `tests/store/conformance.rs` holds them to it.
//!
//! This module owns the storage contract and the key layout; it knows nothing of the
//! season's rules beyond the numbers an operation carries (packing, time limits), and
//! never decides anything the engine should.

mod adjust;
mod audit;
mod bans;
mod blocked;
mod clock;
mod correction;
mod delivery;
mod events;
pub mod keys;
pub mod memory;
mod profile;
#[cfg(feature = "redis")]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
pub mod redis;
mod time;
mod types;

use std::future::Future;

use crate::error::StoreError;
use crate::store::keys::{BracketKeys, PeriodKeys, PlayerKeys, SeasonKeys};
pub use adjust::{Adjust, AdjustStore, Adjusted, adjusted_body};
pub use audit::AuditStore;
pub use bans::{BanStore, BracketBan, PeriodBan, ban_field};
pub use blocked::*;
pub use clock::ClockStore;
pub use correction::*;
pub use delivery::{DeadBounds, DeadLetter, DeliveryStore, LogHead, url_tag};
pub use events::{Appends, EventStore, LogEntry, LogRead, LogSpec, Overtakes, Pos};
pub use profile::ProfileChange;
pub use time::*;
pub use types::*;

/// Placements: the bracket counters, board entries and players' league state.
pub trait LeagueStore: Send + Sync + 'static {
    /// The store's clock (Redis `TIME`; the embedded store's clock), unix milliseconds.
    fn now(&self) -> impl Future<Output = Result<i64, StoreError>> + Send;

    /// Whether [`LeagueStore::now`] is free (no I/O): then the engine asks it every time
    /// instead of estimating the offset between its own clock and the store's.
    fn now_is_free(&self) -> bool {
        false
    }

    /// Whether the store refuses writes now, and why (`Some(reason)`): on Redis, while
    /// its used memory is above `maxmemory` under `maxmemory-policy noeviction` (or it
    /// is a read-only replica). Reads keep working meanwhile; `/healthz` and the
    /// `leaguekit_store_refuses_writes` gauge report it. `None` while writes are
    /// taken; the embedded store never refuses them.
    fn write_refusal(&self) -> impl Future<Output = Result<Option<String>, StoreError>> + Send {
        std::future::ready(Ok(None))
    }

    /// Whether the engine should gather concurrent single joins into batches of the
    /// bulk path ([`LeagueStore::join_many`] and the other `_many` calls): right for a
    /// store whose calls are round trips with a fixed cost each, as Redis's are.
    fn gathers_joins(&self) -> bool {
        false
    }

    /// Whether the engine should gather concurrent single score updates into batches
    /// of [`RankingStore::update_many`]: right for a store whose calls have a fixed
    /// cost each, as Redis's scripts do.
    fn gathers_submits(&self) -> bool {
        false
    }

    /// Places the player in a bracket of `tier` for the period, unless already placed:
    /// bracket = ceil(n / size) where n is the tier's join counter after increment, or
    /// with `request.late` the late-seat rule ([`crate::season::seats::TierJoins`]).
    /// Atomic per period: concurrent joins of one player get one bracket. Refused with
    /// [`StoreError::PeriodClosed`] once the period is closing or no longer accepts
    /// events by the store's clock, and with [`StoreError::Time`] before it starts.
    fn join(
        &self,
        period: &PeriodKeys,
        request: &JoinRequest<'_>,
    ) -> impl Future<Output = Result<Joined, StoreError>> + Send;

    /// The player's placement in the period, if any: `(tier, bracket)`.
    fn placement(
        &self,
        period: &PeriodKeys,
        player: &str,
    ) -> impl Future<Output = Result<Option<(String, u32)>, StoreError>> + Send;

    /// Puts a joined player on the bracket's board (as never-scored) unless already
    /// there, and caches their profile (`version`, JSON) beside it. Idempotent. A board
    /// that already holds `size` other players is not changed ([`Entered::Full`]); the
    /// board's keys live at least `ttl_secs`.
    fn enter(
        &self,
        bracket: &BracketKeys,
        player: &str,
        size: u32,
        profile: Option<(u64, &str)>,
        ttl_secs: u64,
    ) -> impl Future<Output = Result<Entered, StoreError>> + Send {
        async move {
            let entry = BoardEntry::new(bracket, player, size, ttl_secs).profile(profile);
            self.enter_entry(&entry).await
        }
    }

    /// [`LeagueStore::enter`] of one [`BoardEntry`]: with its `placed` event, appended
    /// to the bracket's log in the same step only if the player is put on the board
    /// now.
    fn enter_entry(
        &self,
        entry: &BoardEntry<'_>,
    ) -> impl Future<Output = Result<Entered, StoreError>> + Send;

    /// The player's state, profile and pending rewards (what a placement needs), in
    /// one round trip: the three are keys of the player's slot.
    fn player_snapshot(
        &self,
        player_keys: &PlayerKeys,
    ) -> impl Future<Output = Result<PlayerSnapshot, StoreError>> + Send;

    /// The join counters of each tier (or cohort) of the period, by name (tiers with
    /// nobody are absent).
    fn joined(
        &self,
        period: &PeriodKeys,
    ) -> impl Future<Output = Result<Vec<(String, TierJoins)>, StoreError>> + Send;

    /// [`LeagueStore::joined`] of many periods, in order, in as few round trips as the store
    /// allows.
    fn joined_many(
        &self,
        periods: &[PeriodKeys],
    ) -> impl Future<Output = Result<Vec<Vec<(String, TierJoins)>>, StoreError>> + Send;

    /// The player's league state, if they ever joined.
    fn player_state(
        &self,
        player_keys: &PlayerKeys,
    ) -> impl Future<Output = Result<Option<PlayerState>, StoreError>> + Send;

    /// Records the player's latest placement. A state for an earlier period than the
    /// stored one is ignored; one for a later period moves the stored placement to
    /// `previous`; one for the same period replaces the stored tier and bracket and
    /// keeps `previous` (a join whose bracket was found full corrects the state). The
    /// `previous` field of the argument is ignored. So concurrent or repeated writes
    /// converge. Every record of the player then expires in `ttl_secs`.
    ///
    /// In the same step, trims what can no longer matter: claimed rewards earned
    /// before period `trim_before` (the rollover never grants them again) and claim
    /// answers given before it. Every placement trims, so a player who keeps playing
    /// keeps small records, and one who stops has them expire.
    fn record_state(
        &self,
        player_keys: &PlayerKeys,
        state: &PlayerState,
        ttl_secs: u64,
        trim_before: u64,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    // The bulk path: each of these is its single counterpart applied to many items,
    // answered one result per item, in order. A store batches them in as few round
    // trips as it can (Redis: one pipeline per hash slot group, the groups in
    // parallel); the defaults run the items one by one, which is what an in-process
    // store wants anyway.

    /// [`LeagueStore::join`] of many players of one period.
    fn join_many(
        &self,
        period: &PeriodKeys,
        requests: &[JoinRequest<'_>],
    ) -> impl Future<Output = Vec<Result<Joined, StoreError>>> + Send {
        async move {
            let mut out = Vec::with_capacity(requests.len());
            for request in requests {
                out.push(self.join(period, request).await);
            }
            out
        }
    }

    /// [`LeagueStore::placement`] of many players of one period.
    fn placements(
        &self,
        period: &PeriodKeys,
        players: &[&str],
    ) -> impl Future<Output = Vec<Result<Option<(String, u32)>, StoreError>>> + Send {
        async move {
            let mut out = Vec::with_capacity(players.len());
            for player in players {
                out.push(self.placement(period, player).await);
            }
            out
        }
    }

    /// [`LeagueStore::enter`] of many players, on any brackets.
    fn enter_many(
        &self,
        entries: &[BoardEntry<'_>],
    ) -> impl Future<Output = Vec<Result<Entered, StoreError>>> + Send {
        async move {
            let mut out = Vec::with_capacity(entries.len());
            for e in entries {
                out.push(self.enter_entry(e).await);
            }
            out
        }
    }

    /// [`LeagueStore::player_snapshot`] of many players.
    fn player_snapshots(
        &self,
        players: &[&PlayerKeys],
    ) -> impl Future<Output = Vec<Result<PlayerSnapshot, StoreError>>> + Send {
        async move {
            let mut out = Vec::with_capacity(players.len());
            for keys in players {
                out.push(self.player_snapshot(keys).await);
            }
            out
        }
    }

    /// [`LeagueStore::record_state`] of many players.
    fn record_states(
        &self,
        writes: &[StateWrite<'_>],
    ) -> impl Future<Output = Vec<Result<(), StoreError>>> + Send {
        async move {
            let mut out = Vec::with_capacity(writes.len());
            for w in writes {
                out.push(
                    self.record_state(w.player_keys, w.state, w.ttl_secs, w.trim_before)
                        .await,
                );
            }
            out
        }
    }
}

/// Score updates, standings and cached profiles.
pub trait RankingStore: Send + Sync + 'static {
    /// Applies one update atomically: the idempotency record is consulted first (a
    /// repeated request is answered as the first time, even after the period closed),
    /// then the time rules, the closed marker and the player's board entry.
    fn update(
        &self,
        bracket: &BracketKeys,
        update: &Update<'_>,
    ) -> impl Future<Output = Result<UpdateReply, StoreError>> + Send;

    /// Applies many updates pipelined (one round trip on one server; on a cluster one
    /// per hash slot, concurrently) and answers one result per update, in order: a
    /// failure affects only the updates it could have touched.
    fn update_many(
        &self,
        updates: &[(&BracketKeys, Update<'_>)],
    ) -> impl Future<Output = Vec<Result<UpdateReply, StoreError>>> + Send;

    /// Entries `offset..offset+limit` (0-based ranks) with cached profiles.
    fn standings(
        &self,
        bracket: &BracketKeys,
        offset: u64,
        limit: u64,
    ) -> impl Future<Output = Result<Page, StoreError>> + Send;

    /// [`RankingStore::standings`] of many brackets at once, each `(bracket, offset,
    /// limit)`: pipelined (on a cluster one pipeline per slot, concurrently), one
    /// result per read, in order.
    fn standings_many(
        &self,
        reads: &[(&BracketKeys, u64, u64)],
    ) -> impl Future<Output = Vec<Result<Page, StoreError>>> + Send;

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

    /// Applies `change` to the player's profile (fields set and removed in order, on
    /// the stored profile or, with `replace`, on an empty one), atomically with the
    /// size check: the new profile, encoded as JSON with its fields in `order` (the
    /// season's fields, sorted), must fit in `max_bytes`, or nothing is written.
    /// Returns the new version and JSON, or [`ProfileWrite::TooLarge`]. The keys live
    /// at least `ttl_secs`.
    fn set_profile(
        &self,
        player_keys: &PlayerKeys,
        change: &ProfileChange,
        order: &[String],
        max_bytes: usize,
        ttl_secs: u64,
    ) -> impl Future<Output = Result<ProfileWrite, StoreError>> + Send;

    /// Caches a profile copy in `bracket` for `player` if they are on its board and the
    /// cached copy is older than `version` (so concurrent edits settle on the newest).
    fn cache_profile(
        &self,
        bracket: &BracketKeys,
        player: &str,
        version: u64,
        json: &str,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// The player's profile fields, and its version (0 if never set).
    fn profile(
        &self,
        player_keys: &PlayerKeys,
    ) -> impl Future<Output = Result<(Vec<(String, String)>, u64), StoreError>> + Send;
}

/// Closing brackets and periods; outcomes, rewards and claims.
pub trait RolloverStore: Send + Sync + 'static {
    /// The last period the season has closed (0 if none).
    fn closed_through(
        &self,
        season: &SeasonKeys,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// Raises the season's closed-through mark to `period` (never lowers it), and
    /// records the key layout ([`keys::LAYOUT`]) with it unless one is recorded: a
    /// meta written again after the store lost its data says which layout it is in.
    fn set_closed_through(
        &self,
        season: &SeasonKeys,
        period: u64,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// A field of the season's own record (`shape`, `ladder`: what the league last ran
    /// with), if set.
    fn season_field(
        &self,
        season: &SeasonKeys,
        field: &str,
    ) -> impl Future<Output = Result<Option<String>, StoreError>> + Send;

    /// Sets a field of the season's record; with `keep`, only if it is not set yet.
    /// Records the key layout with it, as [`RolloverStore::set_closed_through`] does.
    fn set_season_field(
        &self,
        season: &SeasonKeys,
        field: &str,
        value: &str,
        keep: bool,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Whether any of `keys` exists: keys that only an older key layout wrote (see
    /// [`keys::LAYOUT`]), so a league can refuse data it cannot read. The default, for a
    /// store that never had another layout (the embedded one), is `false`.
    fn any_exists(&self, keys: &[String]) -> impl Future<Output = Result<bool, StoreError>> + Send {
        let _ = keys;
        async { Ok(false) }
    }

    /// Starts closing a period: marks it `closing` (joins are refused from now on) and
    /// returns its summary if it is already closed, and its join counters. Refused with
    /// [`StoreError::Time`] before `check` allows the close; nothing is written then.
    fn begin_close(
        &self,
        period: &PeriodKeys,
        check: CloseCheck,
    ) -> impl Future<Output = Result<ClosingPeriod, StoreError>> + Send;

    /// The period's summary if it is closed.
    fn period_summary(
        &self,
        period: &PeriodKeys,
    ) -> impl Future<Output = Result<Option<String>, StoreError>> + Send;

    /// Keeps the frozen tier-wide lists of a closing period (`(tier, JSON)`) with the
    /// period's keys; call before [`RolloverStore::finish_period`], which sets their
    /// expiry. Idempotent (a repeat writes the same lists).
    fn save_tops(
        &self,
        period: &PeriodKeys,
        tops: &[(String, String)],
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// The frozen tier-wide list saved for `tier`, if any.
    fn saved_top(
        &self,
        period: &PeriodKeys,
        tier: &str,
    ) -> impl Future<Output = Result<Option<String>, StoreError>> + Send;

    /// Marks the period closed with its summary and sets every period key to expire in
    /// `ttl_secs` seconds. Idempotent.
    fn finish_period(
        &self,
        period: &PeriodKeys,
        summary: &str,
        ttl_secs: u64,
    ) -> impl Future<Output = Result<(), StoreError>> + Send {
        self.finish_period_logged(period, summary, ttl_secs, None)
    }

    /// [`RolloverStore::finish_period`], appending `events` to the period's log in the
    /// same step if (and only if) it marks the period closed now.
    fn finish_period_logged(
        &self,
        period: &PeriodKeys,
        summary: &str,
        ttl_secs: u64,
        events: Option<Appends<'_>>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// `Done` if the bracket is finished; else takes the lease for `owner` for
    /// `lease_ms` if it is free (or already `owner`'s) and answers `Mine`; else `Busy`.
    /// Refused with [`StoreError::Time`] (nothing written) before `check` allows it.
    fn claim_bracket(
        &self,
        bracket: &BracketKeys,
        owner: &str,
        lease_ms: u64,
        check: CloseCheck,
    ) -> impl Future<Output = Result<BracketClaim, StoreError>> + Send;

    /// Marks the bracket closed (updates are refused from now on) and returns its whole
    /// board as `(player, packed)`, in one atomic step. Idempotent. Refused with
    /// [`StoreError::Time`] (nothing written) before `check` allows it.
    fn freeze(
        &self,
        bracket: &BracketKeys,
        check: CloseCheck,
    ) -> impl Future<Output = Result<Vec<(String, u64)>, StoreError>> + Send;

    /// [`RolloverStore::claim_bracket`] and, when the claim is `owner`'s,
    /// [`RolloverStore::freeze`]: the first step of closing a bracket. The default runs
    /// the two in turn; a store may do both in one step (Redis: one script, one round
    /// trip instead of two).
    fn claim_and_freeze(
        &self,
        bracket: &BracketKeys,
        owner: &str,
        lease_ms: u64,
        check: CloseCheck,
    ) -> impl Future<Output = Result<FrozenClaim, StoreError>> + Send {
        async move {
            Ok(
                match self.claim_bracket(bracket, owner, lease_ms, check).await? {
                    BracketClaim::Done(tally) => FrozenClaim::Done(tally),
                    BracketClaim::Busy => FrozenClaim::Busy,
                    BracketClaim::Mine => FrozenClaim::Mine(self.freeze(bracket, check).await?),
                },
            )
        }
    }

    /// Records the bracket's outcomes (`player → encoded outcome`) unless already
    /// recorded, and sets every bracket key to expire in `ttl_secs` seconds.
    fn record_outcomes(
        &self,
        bracket: &BracketKeys,
        outcomes: &[(&str, &str)],
        ttl_secs: u64,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Grants rewards: for each `(player, source, grant)`, sets the player's reward
    /// `source` to pending `grant` unless the player already has that source (pending
    /// or claimed), and keeps the rewards at least `ttl_secs`. Pipelined; idempotent.
    /// One result per grant, in order: a grant that fails (the player's data is not
    /// what leaguekit wrote) does not stop the others. The outer error means the whole
    /// call failed and may be retried.
    fn grant(
        &self,
        grants: &[Grant],
        ttl_secs: u64,
    ) -> impl Future<Output = Result<Vec<Result<(), StoreError>>, StoreError>> + Send {
        self.grant_logged(grants, ttl_secs, None)
    }

    /// [`RolloverStore::grant`], appending with each grant made now its event
    /// (`events.bodies[i]` for grant `i`, one body per grant) to the player bucket's
    /// log, in the same step: a grant already made appends nothing.
    fn grant_logged(
        &self,
        grants: &[Grant],
        ttl_secs: u64,
        events: Option<Appends<'_>>,
    ) -> impl Future<Output = Result<Vec<Result<(), StoreError>>, StoreError>> + Send;

    /// Records grants that failed, to be retried by every later rollover.
    fn block_grants(
        &self,
        season: &SeasonKeys,
        blocked: &[BlockedGrant],
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// The grants recorded by [`RolloverStore::block_grants`] and not yet unblocked.
    fn blocked_grants(
        &self,
        season: &SeasonKeys,
    ) -> impl Future<Output = Result<Vec<BlockedGrant>, StoreError>> + Send;

    /// Records a bracket the rollover cannot close, to be retried by every later
    /// rollover (replacing an earlier record of it).
    fn block_bracket(
        &self,
        season: &SeasonKeys,
        blocked: &BlockedBracket,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// The brackets recorded by [`RolloverStore::block_bracket`] and not yet
    /// unblocked, by source.
    fn blocked_brackets(
        &self,
        season: &SeasonKeys,
    ) -> impl Future<Output = Result<Vec<BlockedBracket>, StoreError>> + Send;

    /// Forgets a blocked bracket (after it closed).
    fn unblock_bracket(
        &self,
        season: &SeasonKeys,
        source: &str,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Forgets a blocked grant (after it was granted).
    fn unblock_grant(
        &self,
        season: &SeasonKeys,
        source: &str,
        player: &str,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Marks the bracket finished with its tally and releases the lease. Idempotent.
    fn finish_bracket(
        &self,
        bracket: &BracketKeys,
        tally: &str,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// [`RolloverStore::record_outcomes`] and then [`RolloverStore::finish_bracket`] in
    /// one step: the last step of closing a bracket, after its grants. With `events`
    /// (a season's `[events]`), the close's events are appended to the bracket's log
    /// in the same step, only if the outcomes are recorded now (a re-run appends
    /// nothing). Idempotent.
    fn finish_with_outcomes(
        &self,
        bracket: &BracketKeys,
        outcomes: &[(&str, &str)],
        ttl_secs: u64,
        tally: &str,
        events: Option<Appends<'_>>,
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
    /// source, atomically. With a claim id, the answer is remembered (with the period
    /// it was given in): a repeated claim with the same id returns the same grants and
    /// claims nothing new. The keys live at least `ttl_secs`.
    fn claim_rewards(
        &self,
        player_keys: &PlayerKeys,
        claim: &Claim<'_>,
    ) -> impl Future<Output = Result<Vec<(String, String)>, StoreError>> + Send;
}

/// Everything a [`crate::League`] needs: the concerns together. Implemented for every
/// type that implements them.
pub trait Store:
    LeagueStore
    + RankingStore
    + RolloverStore
    + AuditStore
    + ClockStore
    + BanStore
    + CorrectionStore
    + AdjustStore
    + EventStore
    + DeliveryStore
{
}

impl<T> Store for T where
    T: LeagueStore
        + RankingStore
        + RolloverStore
        + AuditStore
        + ClockStore
        + BanStore
        + CorrectionStore
        + AdjustStore
        + EventStore
        + DeliveryStore
{
}
