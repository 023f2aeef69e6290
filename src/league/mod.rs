//! The league: [`League`], the facade a game server embeds. It is made of parts, each
//! a type that owns its state and methods, and delegates each of its methods to one
//! of them:
//!
//! - [`Context`] (`crate::context`): the season, the store, the key builder and the
//!   [`LeagueClock`](crate::context::LeagueClock), shared by every part;
//! - [`Placements`] (`league/placements/`): joins, single and in bulk, the tier a
//!   player joins next, players' views, and the placement caches;
//! - [`Boards`] (`crate::ranking`): score updates, standings, around-me reads,
//!   profiles and tier-wide lists;
//! - [`Rollover`] (`crate::rollover`): closing periods and brackets, outcomes,
//!   rewards, season edits and period records.
//!
//! A score update needs two parts (the player's placement, then the board): its route
//! is `league/submit.rs`, whose functions take both as parameters.
//!
//! # The route of a submit
//!
//! From the command line or HTTP to Redis, read in this order:
//!
//! 1. `src/bin/leaguekit/play.rs` (the CLI's `submit`) or `src/server/routes/scores.rs`
//!    (`POST /v1/scores`): parse the request, call [`League::submit`].
//! 2. `src/league/mod.rs` (this file): [`League::submit`] hands the placements and the
//!    boards to the route, through the batching layer when the store gathers submits.
//! 3. `src/league/batching.rs`: concurrent single submits (and joins) gathered into
//!    one batch, run as [`League::submit_many`].
//! 4. `src/league/submit.rs`: the checks, the placement, the update, the answer; a
//!    batch takes the same steps in stages.
//! 5. `src/ranking/submit.rs`: [`Boards`] checks the value and the time (the clock
//!    rules of `src/context/clock.rs`), builds the store's `Update` and reads its reply.
//! 6. `src/league/placements/mod.rs` and `join.rs`: where the player is (the cache, the
//!    store's record), or their join on a first score.
//! 7. `src/store/redis/ranking.rs` and `src/store/redis/updates.rs`: the Redis store's
//!    `update` and `update_many`, built into `update.lua` calls.
//! 8. `src/store/redis/lua/update.lua`: the atomic update on Redis: the idempotency
//!    record, the time rules, the board.
//!
//! Every operation runs in a `tracing` span, and nothing is written before its input
//! is validated, so bad input writes nothing.
//!
//! Owns: assembling the parts, routing each call to its part, and the queue of
//! gathered single submits (`batching.rs`). Must not: keep other state, build a key
//! string (keys come from [`crate::store::keys`]), talk to
//! Redis (only through the [`Store`] traits), or compute outcomes (that is
//! [`crate::rollover::outcome`]'s pure rule).

mod batching;
mod placements;
mod submit;

use crate::events::EventLog;
use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use futures::future::BoxFuture;

use crate::clock::{Clock, SystemClock};
use crate::context::Context;
use crate::error::{Error, InputError};
use crate::operator::Operator;
use crate::ranking::{BatchItem, Boards, Standings, Submission, SubmitOptions, TierTop};
use crate::rollover::scheduler::Scheduled;
use crate::rollover::{
    LastOutcome, OutcomeRecord, PeriodRecord, RewardGrant, Rollover, RolloverOptions,
    RolloverReport, SeasonEdits,
};
use crate::season::Season;
use crate::season::calendar::{Period, PeriodId};
use crate::store::Store;
use crate::store::keys::Keys;
use batching::SubmitQueue;

pub use crate::context::validate_player;
pub use placements::{
    CohortCount, JoinItem, JoinOptions, Placement, Placements, PlayerView, TierCount,
};

/// A league: one season on one store.
///
/// # The league clock
///
/// Whether a period has started, has ended or may be closed is decided by one clock
/// that every process shares: the store's ([`LeagueStore::now`](crate::store::LeagueStore::now): Redis's `TIME`, read inside
/// the script that decides; the embedded store's clock). A league built with
/// [`League::new`] uses it, and stamps events that carry no time with its own clock
/// corrected by the measured offset to the store's. A league built with
/// [`League::with_clock`] uses the given clock instead, on either store: for tests,
/// simulations and replays in which every process uses that same clock. See the
/// `[clock]` section of the season ([`crate::season::ClockRules`]) for the rules.
#[derive(Debug)]
pub struct League<S: Store> {
    ctx: Arc<Context<S>>,
    placements: Arc<Placements<S>>,
    boards: Arc<Boards<S>>,
    rollover: Arc<Rollover<S>>,
    operator: Operator<S>,
    events: EventLog<S>,
    /// Concurrent single score updates waiting to be sent as one batch.
    submits: SubmitQueue,
}

impl<S: Store> League<S> {
    /// A league for `season` on `store`, deciding time by the store's clock.
    pub fn new(season: Season, store: S) -> Self {
        Self::build(season, store, Arc::new(SystemClock), false)
    }

    /// A league whose league clock is `clock`, on either store, instead of the store's
    /// own: every time-dependent decision (period started, ended, closable; event too
    /// far ahead) uses it. Only for tests, simulations and replays in which every
    /// process of the league uses this same clock: two processes with different
    /// injected clocks would disagree about the league.
    pub fn with_clock(season: Season, store: S, clock: Arc<dyn Clock>) -> Self {
        Self::build(season, store, clock, true)
    }

    fn build(season: Season, store: S, clock: Arc<dyn Clock>, injected: bool) -> Self {
        let ctx = Arc::new(Context::new(season, store, clock, injected));
        let boards = Arc::new(Boards::new(ctx.clone()));
        let rollover = Arc::new(Rollover::new(ctx.clone(), boards.clone()));
        let placements = Arc::new(Placements::new(ctx.clone(), rollover.clone()));
        let operator = Operator::new(ctx.clone());
        League {
            operator,
            events: EventLog::new(ctx.clone()),
            ctx,
            placements,
            boards,
            rollover,
            submits: SubmitQueue::default(),
        }
    }

    /// The league's event logs (`[events]`): a bracket's events, a player's, every
    /// log of a period.
    pub fn events(&self) -> &EventLog<S> {
        &self.events
    }

    /// What the league's parts share: the season, the store, the keys and the league
    /// clock.
    pub fn context(&self) -> &Context<S> {
        &self.ctx
    }

    /// The operator's tools: bans, score adjustments, re-settlements, the staging
    /// clock and the audit log.
    pub fn operator(&self) -> &Operator<S> {
        &self.operator
    }

    /// The season.
    pub fn season(&self) -> &Season {
        self.ctx.season()
    }

    /// The store.
    pub fn store(&self) -> &S {
        self.ctx.store()
    }

    /// This process's clock: the league clock when built with [`League::with_clock`];
    /// otherwise the local clock, which [`League::now`] corrects to the store's.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        self.ctx.clock()
    }

    /// Whether the league clock is a clock given to [`League::with_clock`].
    pub fn has_injected_clock(&self) -> bool {
        self.ctx.league_clock().is_injected()
    }

    /// The key builder.
    pub fn keys(&self) -> &Keys {
        self.ctx.keys()
    }

    /// The period containing `at` (default: this process's clock; see
    /// [`League::now`] for the league clock).
    pub fn period_at(&self, at: Option<DateTime<Utc>>) -> Result<Period, InputError> {
        self.ctx.period_at(at)
    }

    /// The period with id `id`.
    pub fn period(&self, id: PeriodId) -> Result<Period, InputError> {
        self.ctx.period(id)
    }

    /// The league clock's current time (see the type's docs): the injected clock, or
    /// the store's clock (asked directly when that is free, otherwise this process's
    /// clock corrected by an offset to the store's measured every 30 s).
    pub async fn now(&self) -> Result<DateTime<Utc>, Error> {
        self.ctx.now().await
    }

    /// When a period stops accepting events and may be closed: its end plus the skew.
    pub fn closes_at(&self, period: &Period) -> DateTime<Utc> {
        self.ctx.closes_at(period)
    }

    /// Places `player` in a bracket of their tier for the period of `at` (default now).
    /// Joining again returns the same bracket.
    pub async fn join(&self, player: &str, at: Option<DateTime<Utc>>) -> Result<Placement, Error> {
        self.placements.join(player, at).await
    }

    /// [`League::join`] with options: the time and the cohort.
    pub async fn join_with(&self, player: &str, options: JoinOptions) -> Result<Placement, Error> {
        self.placements.join_with(player, options).await
    }

    /// Places many players, as [`League::join_with`] places one, in a few pipelined
    /// stages for the whole batch: on Redis about four round trips for a batch of any
    /// size on one server (per slot group, concurrently, on a cluster) instead of a
    /// few per player. One result per item, in order; a refused item (bad input, a
    /// closed period) does not stop the others. A player listed twice gets the same
    /// placement twice (the first reply carries the welcome: `last`, `pending_rewards`).
    ///
    /// ```
    /// # use leaguekit::{League, MemoryStore, Season, JoinItem};
    /// # async fn demo(league: League<MemoryStore>) -> Result<(), leaguekit::Error> {
    /// let items: Vec<JoinItem> = (0..1000).map(|i| JoinItem::new(format!("p{i}"))).collect();
    /// for placement in league.join_many(&items).await {
    ///     let placement = placement?;
    ///     println!("{} is in {} bracket {}", placement.player, placement.tier, placement.bracket);
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn join_many(&self, items: &[JoinItem]) -> Vec<Result<Placement, Error>> {
        self.placements.join_many(items).await
    }

    /// The player's tier, bracket, rank and score in a period (default: current).
    pub async fn player(
        &self,
        player: &str,
        period: Option<PeriodId>,
    ) -> Result<PlayerView, Error> {
        self.placements.player(player, period).await
    }

    /// Players and brackets per tier in a period (default: current), every tier listed,
    /// with a breakdown per cohort in a season with cohorts.
    pub async fn counts(&self, period: Option<PeriodId>) -> Result<Vec<TierCount>, Error> {
        self.placements.counts(period).await
    }

    /// Sets profile fields of a player (only the season's fields, within max_bytes),
    /// and refreshes the copy cached in their current bracket.
    ///
    /// The merge, the size check and the write are one atomic step on the player's
    /// records, so concurrent edits cannot together exceed `max_bytes`; the cached copy
    /// carries the profile's version, so concurrent edits settle on the newest.
    pub async fn set_profile(
        &self,
        player: &str,
        fields: &[(String, String)],
    ) -> Result<BTreeMap<String, String>, Error> {
        self.boards.set_profile(player, fields).await
    }

    /// Changes a player's profile: sets and removes fields, merged into the stored
    /// profile or, with [`ProfileChange::replace`](crate::store::ProfileChange::replace),
    /// replacing it whole; answers the whole new profile. One atomic step with the
    /// size check, as [`League::set_profile`]; a field removed that is not set is no
    /// error.
    pub async fn change_profile(
        &self,
        player: &str,
        change: &crate::store::ProfileChange,
    ) -> Result<BTreeMap<String, String>, Error> {
        self.boards.change_profile(player, change).await
    }

    /// The player's profile fields.
    pub async fn profile(&self, player: &str) -> Result<BTreeMap<String, String>, Error> {
        self.boards.profile(player).await
    }

    /// A page of a bracket's standings (best first) with cached profiles.
    /// `period` defaults to the current one.
    ///
    /// On Redis a page read recently and not changed since is one round trip (a
    /// kept page); another is built from one atomic read and then kept, two or
    /// three round trips (see `RedisOptions::page_cache`).
    pub async fn standings(
        &self,
        tier: &str,
        bracket: u32,
        period: Option<PeriodId>,
        offset: u64,
        limit: u64,
    ) -> Result<Standings, Error> {
        self.boards
            .standings(tier, bracket, period, offset, limit)
            .await
    }

    /// The entries around `player` in their bracket: up to `radius` above and below.
    /// `None` if the player is not placed in the period.
    pub async fn around(
        &self,
        player: &str,
        radius: u64,
        period: Option<PeriodId>,
    ) -> Result<Option<Standings>, Error> {
        self.boards.around(player, radius, period).await
    }

    /// Submits a score value for `player` (a delta, a best or a new value by the
    /// season's mode). Refused updates write nothing.
    ///
    /// When the store fails after the update may have been applied, the error is
    /// [`StoreError::Unknown`](crate::StoreError::Unknown), with the update's `at`: resend only an update that
    /// carries a request id, with the same id and that `at`. When the request never
    /// reached the store, it is [`StoreError::Unreachable`](crate::StoreError::Unreachable): nothing was written.
    pub async fn submit(
        &self,
        player: &str,
        value: i64,
        options: SubmitOptions,
    ) -> Result<Submission, Error> {
        if self.ctx.store().gathers_submits() {
            return self
                .submits
                .submit(&self.placements, &self.boards, player, value, options)
                .await;
        }
        submit::submit(&self.placements, &self.boards, player, value, options).await
    }

    /// Submits many updates; the updates themselves go to the store in one pipelined
    /// round trip (placements of players not seen before cost their own round trips).
    ///
    /// Every item gets exactly one result, in order: applied (or a duplicate),
    /// refused with the reason, or [`StoreError::Unknown`](crate::StoreError::Unknown) when the store failed after
    /// the item may have been applied. Resend only unknown items with a request id.
    pub async fn submit_many(&self, items: &[BatchItem]) -> Vec<Result<Submission, Error>> {
        submit::submit_many(&self.placements, &self.boards, items).await
    }

    /// The best `limit` players (at most [`MAX_TOP`](crate::ranking::MAX_TOP)) of `tier` in `period` (default:
    /// the current one), across its brackets, each with their bracket and profile.
    /// `tier` may name one cohort's boards as `tier@cohort`
    /// ([`crate::season::board_group`]); a tier alone ranks all its cohorts together.
    /// Ties order as inside a bracket: score, then the time it was reached, then
    /// player id. A closed period's list is the one frozen at its rollover; the
    /// running period's is at most [`TOP_CACHE`](crate::ranking::TOP_CACHE) old.
    pub async fn top(
        &self,
        tier: &str,
        period: Option<PeriodId>,
        limit: u64,
    ) -> Result<TierTop, Error> {
        self.boards.top(tier, period, limit).await
    }

    /// What deploying this season file would change in the live league: refused
    /// shape changes, tiers with players that the file lost, renamed and new tiers,
    /// and ladder edits with the period they take effect from. Writes nothing.
    pub async fn compare_with_live(&self) -> Result<SeasonEdits, Error> {
        self.rollover.compare_with_live().await
    }

    /// The player's most recent closed period, if any.
    pub async fn last_outcome(&self, player: &str) -> Result<Option<LastOutcome>, Error> {
        self.rollover.last_outcome(player).await
    }

    /// A closed period's outcomes in a fixed order (tier from lowest, bracket, rank),
    /// from `cursor` (exclusive; `None` for the start), at most `limit`. A consumer that
    /// stores the cursor of the last record it handled resumes without loss or repeat.
    pub async fn outcomes(
        &self,
        period: PeriodId,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<Vec<OutcomeRecord>, Error> {
        self.rollover.outcomes(period, cursor, limit).await
    }

    /// Closes every period that may be closed by `at` (default: the league clock's now)
    /// and is not closed yet, oldest first. A period may be closed once `[clock]
    /// max_skew` has passed since its end by the league clock; a time further ahead of
    /// the league clock than that is refused (a dry run may look ahead). Safe to run
    /// from many processes at once and to re-run after a crash.
    ///
    /// Each run first retries the rewards earlier runs could not grant.
    ///
    /// A rollover closes many brackets at once inside the calling task. On a
    /// multi-threaded runtime, call it from `main` or from a thread of its own (as
    /// [`crate::Scheduler`] does: `spawn_blocking` and `Handle::block_on`) rather than
    /// from a task spawned on the workers, where it competes with the Redis
    /// connection's own tasks: at 1,000,000 players on 2 cores a spawned task took
    /// 1.5 to 2 times as long (`cargo bench --bench bench_rollover -- --spawned`;
    /// docs/embedding.md, "Turning periods over").
    pub async fn rollover(
        &self,
        at: Option<DateTime<Utc>>,
        options: RolloverOptions,
    ) -> Result<RolloverReport, Error> {
        self.rollover.rollover(at, options).await
    }

    /// What the store knows of `period`'s close: [`PeriodRecord::Open`],
    /// [`PeriodRecord::Closed`] with its report, or [`PeriodRecord::Expired`]. Two
    /// store reads at most; nothing is written.
    pub async fn period_record(&self, period: PeriodId) -> Result<PeriodRecord, Error> {
        self.rollover.period_record(period).await
    }

    /// The last period the season has closed (0 if none): every period up to it is
    /// closed. One store read.
    pub async fn closed_through(&self) -> Result<PeriodId, Error> {
        self.rollover.closed_through().await
    }

    /// The player's rewards not yet claimed.
    pub async fn rewards(&self, player: &str) -> Result<Vec<RewardGrant>, Error> {
        self.rollover.rewards(player).await
    }

    /// Claims every pending reward of the player. With a `request_id`, a repeated
    /// claim returns the same grants and grants nothing new; without one, a repeated
    /// claim returns only what became pending since.
    pub async fn claim(
        &self,
        player: &str,
        request_id: Option<&str>,
    ) -> Result<Vec<RewardGrant>, Error> {
        self.rollover.claim(player, request_id).await
    }

    /// Sets `leaguekit_players{tier}` from the current period's join counters (one
    /// store read). The scheduler calls it after every run and `leaguekit serve` at
    /// every scrape; a game server that embeds the library without either may call it
    /// on its own timer. A store failure leaves the gauges as they were and is returned.
    pub async fn refresh_players_gauge(&self) -> Result<(), Error> {
        for t in self.counts(None).await? {
            crate::metrics::set_players(&t.tier, t.players);
        }
        Ok(())
    }

    /// Asks the store whether it refuses writes now (one store call, see
    /// [`crate::store::LeagueStore::write_refusal`]), sets
    /// `leaguekit_store_refuses_writes` to 1 or 0, and returns why it refuses them, if
    /// it does. `/healthz` and every scrape of `leaguekit serve` call it; a game server
    /// that embeds the library may call it on its own timer. A store failure leaves
    /// the gauge as it was and is returned.
    pub async fn refresh_write_state(&self) -> Result<Option<String>, Error> {
        let refusal = self.store().write_refusal().await?;
        crate::metrics::set_store_refuses_writes(refusal.is_some());
        Ok(refusal)
    }
}

impl<S: Store> Scheduled for League<S> {
    fn roll_over(&self) -> BoxFuture<'_, Result<RolloverReport, Error>> {
        Box::pin(self.rollover(None, RolloverOptions::default()))
    }

    fn league_now(&self) -> BoxFuture<'_, Result<DateTime<Utc>, Error>> {
        Box::pin(self.now())
    }

    fn next_close(&self, now: DateTime<Utc>) -> DateTime<Utc> {
        // The next period to become closable is the one that contained `now - skew`:
        // it closes max_skew after its end, which is after now.
        let skew = self.ctx.skew();
        match self.season().calendar.period_at(now - skew) {
            Some(p) => self.closes_at(&p),
            None => self.season().schedule.start + skew,
        }
    }

    fn after_rollover(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            // The players-per-tier gauge of the `metrics` facade (a no-op without a
            // recorder).
            let _ = self.refresh_players_gauge().await;
        })
    }

    fn travels(&self) -> bool {
        self.ctx.league_clock().travels()
    }
}
