//! Period rollover: [`Rollover`], closing brackets and periods, exactly once, from
//! any number of processes, resumable after a crash at any point. The pure outcome
//! rule ([`outcome`]), closing brackets and periods (`close.rs`), season edits
//! between periods (`edits.rs`), rewards and claims (`rewards.rs`), the outcome log
//! (`log.rs`), period records (`reports.rs`), the pure rule of re-settling a closed
//! bracket and the tier credits it gives ([`resettle`]) and the [`scheduler`] that
//! wakes at boundaries.
//!
//! Owns: when and in which order brackets close, and what is recorded for them. Must
//! not: place players or change scores (the league's [`crate::league::Placements`] and
//! [`crate::ranking::Boards`] do; a period's tier-wide lists are merged by the
//! boards), or build key strings itself.
//!
//! Closing one bracket is a sequence of idempotent steps, each atomic on the
//! bracket's slot (three calls to the store; see `close.rs`):
//!
//! 1. claim a short lease (so concurrent processes share brackets instead of all
//!    doing every one; a dead holder's lease simply expires) and, in the same step,
//!    freeze: mark the bracket closed (updates are refused from here on) and read the
//!    final board;
//! 2. compute the outcomes ([`crate::rollover::outcome::bracket_outcomes`], a pure
//!    function of the frozen board) and grant rewards: one `HSETNX` per player and
//!    period, so a grant repeated after a crash, or by a second process, is a no-op,
//!    and a claimed reward is never re-added;
//! 3. record the outcomes (unless already recorded) and mark the bracket done with
//!    its tally.
//!
//! A crash between any two steps leaves a state the next run finishes: steps 1-2 give
//! the same result when repeated, and step 3 is what makes later runs skip the
//! bracket. A period is closed when all its brackets are, and its tier-wide lists are
//! kept (merged from the boards this run froze, see `ranking/top_pool.rs`); joins into
//! it are refused from the start of its close. The season remembers the last period
//! it closed, so a rollover after downtime closes every period missed since, in
//! order.

mod close;
mod edits;
mod events;
mod log;
pub mod outcome;
mod reports;
pub mod resettle;
mod rewards;
pub mod scheduler;

pub(crate) use close::owner_id;
pub use edits::SeasonEdits;
pub use log::OutcomeRecord;
pub use outcome::{LastOutcome, RewardGrant};
pub use reports::PeriodRecord;

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::Serialize;
use tracing::{info, instrument};

use crate::context::{Context, normalize_time};
use crate::error::{Error, InputError, StoreError};
use crate::ranking::Boards;
use crate::season::calendar::{Period, PeriodId};
use crate::store::{Appends, BlockedBracket, BlockedGrant, ClosingPeriod, Store, TierJoins};
use outcome::Tally;

/// What closing one period did (or, in a dry run, would do).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PeriodReport {
    /// The period.
    pub period: PeriodId,
    /// Brackets in the period.
    pub brackets: u64,
    /// Players, promotions, demotions, stays, rewards and idle players in all.
    #[serde(flatten)]
    pub totals: Tally,
    /// Per tier: the same figures.
    pub tiers: BTreeMap<String, Tally>,
}

/// What a rollover did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct RolloverReport {
    /// Periods closed, oldest first.
    pub closed: Vec<PeriodReport>,
    /// Rewards whose grant failed and is still failing (the player's data is not what
    /// leaguekit wrote: repair or delete it). Their periods are closed all the same;
    /// every rollover retries them.
    pub blocked: Vec<BlockedGrant>,
    /// Rewards granted by this run after earlier runs had failed to.
    pub unblocked: u64,
    /// Brackets that cannot close (a key of the wrong type in them: repair or delete
    /// it). Their periods are closed all the same, without them; every rollover
    /// retries them.
    pub blocked_brackets: Vec<BlockedBracket>,
    /// Brackets closed by this run after earlier runs had found them blocked.
    pub unblocked_brackets: u64,
    /// Periods closed by this run in which nobody was placed (not listed in `closed`).
    pub empty: u64,
    /// The last period the season has closed, after this run.
    pub closed_through: PeriodId,
}

/// Options of [`crate::League::rollover`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RolloverOptions {
    /// Compute and report without writing anything.
    pub dry_run: bool,
}

impl RolloverOptions {
    /// Sets dry-run.
    pub fn dry_run(mut self, yes: bool) -> Self {
        self.dry_run = yes;
        self
    }
}

pub(crate) fn tally_to_string(t: &Tally) -> String {
    format!(
        "{} {} {} {} {} {}",
        t.players, t.promoted, t.demoted, t.stayed, t.rewards, t.idle
    )
}

pub(crate) fn tally_from_string(s: &str) -> Result<Tally, StoreError> {
    let n: Vec<u64> = s
        .split(' ')
        .map(str::parse)
        .collect::<Result<_, _>>()
        .map_err(|_| StoreError::Protocol(format!("bad tally {s:?}")))?;
    match n.as_slice() {
        [players, promoted, demoted, stayed, rewards, idle] => Ok(Tally {
            players: *players,
            promoted: *promoted,
            demoted: *demoted,
            stayed: *stayed,
            rewards: *rewards,
            idle: *idle,
        }),
        _ => Err(StoreError::Protocol(format!("bad tally {s:?}"))),
    }
}

/// A league's rollover: closing periods and brackets, the outcome log, rewards and
/// claims, and the season's record of what the league last ran with.
#[derive(Debug)]
pub struct Rollover<S: Store> {
    ctx: Arc<Context<S>>,
    /// Merges a closed period's tier-wide lists.
    boards: Arc<Boards<S>>,
}

impl<S: Store> Rollover<S> {
    /// The rollover of the league of `ctx`, whose tier-wide lists `boards` merges.
    pub(crate) fn new(ctx: Arc<Context<S>>, boards: Arc<Boards<S>>) -> Self {
        Rollover { ctx, boards }
    }

    /// Brackets of a period, from the join counters: `(tier index, tier, bracket)`.
    pub(crate) fn brackets_of(&self, joins: &[(String, TierJoins)]) -> Vec<(usize, String, u32)> {
        let caps = self.ctx.season().caps();
        // By the tier's place in the ladder; a renamed tier's running brackets keep
        // the name they were opened under (see `edits.rs`).
        let mut groups: Vec<(usize, &str, u64)> = joins
            .iter()
            .filter_map(|(t, n)| {
                self.ctx
                    .season()
                    .tier_by_any_name(t)
                    .map(|(i, _)| (i, t.as_str(), n.brackets(caps)))
            })
            .collect();
        groups.sort_unstable();
        let mut out = Vec::new();
        for (i, tier, n) in groups {
            for b in 1..=n {
                out.push((i, tier.to_owned(), u32::try_from(b).unwrap_or(u32::MAX)));
            }
        }
        out
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
    #[instrument(skip(self, options), fields(dry_run = options.dry_run), err(level = "debug"))]
    pub async fn rollover(
        &self,
        at: Option<DateTime<Utc>>,
        options: RolloverOptions,
    ) -> Result<RolloverReport, Error> {
        let _timer = crate::metrics::RolloverTimer::start();
        let now = self.ctx.now().await?;
        let at = normalize_time(at.unwrap_or(now));
        if at > now + self.ctx.skew() && !options.dry_run {
            return Err(InputError::FutureTime {
                at,
                now,
                ahead_ms: u64::try_from((at - now).num_milliseconds()).unwrap_or(0),
                max_skew_ms: self.ctx.season().clock.max_skew.as_millis() as u64,
            }
            .into());
        }
        // Periods close by the league clock: never later than now, however far `at` is.
        let limit = if options.dry_run { at } else { at.min(now) };
        let season_keys = self.ctx.keys().season();
        let mut report = RolloverReport {
            closed: Vec::new(),
            blocked: Vec::new(),
            unblocked: 0,
            blocked_brackets: Vec::new(),
            unblocked_brackets: 0,
            empty: 0,
            closed_through: 0,
        };
        // Data of another key layout, or a file whose shape differs from the one the
        // league runs with, is refused before anything is written (see `edits.rs`);
        // the first run records them.
        if !options.dry_run {
            self.ctx.check_layout().await?;
        }
        self.check_shape(!options.dry_run).await?;
        if !options.dry_run {
            report.unblocked = self.retry_blocked().await?;
            report.unblocked_brackets = self.retry_blocked_brackets().await?;
        }
        let done = self.ctx.store().closed_through(&season_keys).await?;
        report.closed_through = done;
        let owner = owner_id();
        // The periods that may close by this process's reading of the league clock,
        // oldest first. That reading may be off (a clock stepped since the offset was
        // measured), so it only proposes: each period is closed, or found empty, by
        // begin_close, which decides by the league clock where it writes (inside the
        // store) and marks the period closing, so no join lands in it afterwards.
        // After a long downtime (or on a fresh store for a season that started long
        // ago) most periods have nobody in them: they are asked in batches, and an
        // empty one is closed by that marker alone and by moving the season's mark
        // past it.
        let mut due = Vec::new();
        let mut id = done + 1;
        while let Some(period) = self.ctx.season().calendar.period(id) {
            if self.ctx.closes_at(&period) > limit {
                break;
            }
            due.push(period);
            id += 1;
        }
        'periods: for batch in due.chunks(256) {
            let found = self.closing_states(batch, options.dry_run).await?;
            // Each period with players is closed below, logging its events: webhook
            // delivery must look at it however far back it is (a catch-up, a staging
            // jump), so it is marked first.
            if !options.dry_run {
                let busy: Vec<PeriodId> = batch
                    .iter()
                    .zip(&found)
                    .filter(|(_, c)| c.as_ref().is_some_and(|c| !c.1.is_empty()))
                    .map(|(p, _)| p.id)
                    .collect();
                self.ctx.mark_for_delivery(&busy).await?;
            }
            for (period, closing) in batch.iter().zip(found) {
                // Not closable yet by the league clock: neither is any later period.
                let Some(closing) = closing else {
                    break 'periods;
                };
                let joins = &closing.1;
                if joins.is_empty() {
                    report.empty += 1;
                    if !options.dry_run {
                        report.closed_through = period.id;
                        crate::metrics::period_closed(false);
                    }
                    continue;
                }
                self.check_live_tiers(period.id, joins)?;
                let closed = if options.dry_run {
                    self.preview_period(period).await?
                } else {
                    match self.close_period(period, closing, &owner).await {
                        Ok(r) => r,
                        Err(Error::Store(StoreError::Time(_))) => break 'periods,
                        Err(e) => return Err(e),
                    }
                };
                if !options.dry_run {
                    self.ctx
                        .store()
                        .set_closed_through(&season_keys, period.id)
                        .await?;
                    report.closed_through = period.id;
                }
                info!(
                    period = period.id,
                    players = closed.totals.players,
                    brackets = closed.brackets,
                    "period closed"
                );
                report.closed.push(closed);
                crate::metrics::period_closed(options.dry_run);
            }
        }
        if !options.dry_run && report.closed_through > done {
            self.ctx
                .store()
                .set_closed_through(&season_keys, report.closed_through)
                .await?;
        }
        if !options.dry_run && !report.closed.is_empty() {
            self.record_ladder().await?;
        }
        report.blocked = self.ctx.store().blocked_grants(&season_keys).await?;
        report.blocked_brackets = self.ctx.store().blocked_brackets(&season_keys).await?;
        for b in &report.blocked_brackets {
            tracing::error!(
                bracket = %b.source,
                key = %b.key,
                error = %b.error,
                "a bracket cannot close; repair or delete the key (every rollover retries it)"
            );
        }
        for b in &report.blocked {
            tracing::error!(
                player = %b.player,
                source = %b.source,
                grant = %b.grant,
                error = %b.error,
                "a reward cannot be granted; repair the player's rewards key (every rollover retries it)"
            );
        }
        Ok(report)
    }

    /// What begin_close finds of `periods` (their summaries and join counters), each
    /// `None` from the first one the league clock does not let close yet. A dry run
    /// only reads the counters; otherwise each period is marked closing first
    /// (begin_close, concurrently: each period is a slot of its own), so a counter read
    /// empty stays empty.
    async fn closing_states(
        &self,
        periods: &[Period],
        dry_run: bool,
    ) -> Result<Vec<Option<ClosingPeriod>>, Error> {
        if dry_run {
            let keys: Vec<_> = periods
                .iter()
                .map(|p| self.ctx.keys().period(p.id))
                .collect();
            let joins = self.ctx.store().joined_many(&keys).await?;
            return Ok(joins.into_iter().map(|j| Some((None, j))).collect());
        }
        let closes = periods.iter().map(|p| async move {
            let check = self.close_check(p.id)?;
            match self
                .ctx
                .store()
                .begin_close(&self.ctx.keys().period(p.id), check)
                .await
            {
                Ok(closing) => Ok(Some(closing)),
                Err(StoreError::Time(_)) => Ok(None),
                Err(e) => Err(Error::from(e)),
            }
        });
        let mut found = futures::future::try_join_all(closes).await?;
        if let Some(first) = found.iter().position(Option::is_none) {
            for later in &mut found[first..] {
                *later = None;
            }
        }
        Ok(found)
    }

    /// Tiers `player` gains at their placement in `period` when their latest
    /// placement was in `last`: the tier credits of re-settlements ([`resettle`]).
    pub(crate) async fn tier_credit(
        &self,
        player: &str,
        last: PeriodId,
        period: PeriodId,
    ) -> Result<u64, Error> {
        let credits = self
            .ctx
            .store()
            .credits(&self.ctx.keys().player(player))
            .await?;
        Ok(resettle::credited(&credits, last, period))
    }

    /// Grants again what earlier runs could not; returns how many went through.
    pub(crate) async fn retry_blocked(&self) -> Result<u64, Error> {
        let season_keys = self.ctx.keys().season();
        let blocked = self.ctx.store().blocked_grants(&season_keys).await?;
        if blocked.is_empty() {
            return Ok(0);
        }
        let grants: Vec<_> = blocked
            .iter()
            .map(|b| {
                (
                    self.ctx.keys().player(&b.player),
                    b.source.clone(),
                    b.grant.clone(),
                )
            })
            .collect();
        let ttl = self.ctx.season().retention.player_ttl.as_secs().max(1);
        // Each retried grant's event, as the close would have appended it.
        let season = self.ctx.season().name.as_str();
        let bodies: Vec<String> = match self.ctx.log_spec() {
            Some(_) => blocked
                .iter()
                .map(|b| {
                    let period = b
                        .source
                        .split('/')
                        .next()
                        .and_then(|p| p.parse().ok())
                        .and_then(|p| self.ctx.period(p).ok());
                    match period {
                        Some(period) => {
                            events::granted(season, &period, &b.player, &b.source, &b.grant)
                        }
                        None => String::new(),
                    }
                })
                .collect(),
            None => Vec::new(),
        };
        let logged = self.ctx.log_spec().map(|spec| Appends {
            spec,
            bodies: &bodies,
        });
        let results = self.ctx.store().grant_logged(&grants, ttl, logged).await?;
        let mut granted = 0;
        for (b, r) in blocked.iter().zip(results) {
            if r.is_ok() {
                self.ctx
                    .store()
                    .unblock_grant(&season_keys, &b.source, &b.player)
                    .await?;
                granted += 1;
                info!(player = %b.player, source = %b.source, "blocked reward granted");
            }
        }
        Ok(granted)
    }

    pub(crate) async fn preview_period(&self, period: &Period) -> Result<PeriodReport, Error> {
        let pkeys = self.ctx.keys().period(period.id);
        if let Some(summary) = self.ctx.store().period_summary(&pkeys).await? {
            return self.report_from_summary(period.id, &summary);
        }
        let joins = self.ctx.store().joined(&pkeys).await?;
        let mut report = PeriodReport::empty(period.id);
        for (i, tier, b) in self.brackets_of(&joins) {
            let bk = self.ctx.keys().bracket(period.id, &tier, b);
            let board = self.full_board(&bk).await?;
            let mut tally = Tally::default();
            for o in outcome::bracket_outcomes(self.ctx.season(), i, &board) {
                tally.add(&o);
            }
            report.add(&tier, &tally);
        }
        Ok(report)
    }

    pub(crate) fn report_from_summary(
        &self,
        period: PeriodId,
        summary: &str,
    ) -> Result<PeriodReport, Error> {
        serde_json::from_str::<StoredSummary>(summary)
            .map(|s| s.into_report(period))
            .map_err(|e| StoreError::Protocol(format!("bad period summary: {e}")).into())
    }
}

impl PeriodReport {
    fn empty(period: PeriodId) -> Self {
        Self {
            period,
            brackets: 0,
            totals: Tally::default(),
            tiers: BTreeMap::new(),
        }
    }

    fn add(&mut self, tier: &str, t: &Tally) {
        self.brackets += 1;
        self.totals.merge(t);
        self.tiers.entry(tier.to_owned()).or_default().merge(t);
    }
}

/// The period summary as stored in the period's meta hash.
#[derive(serde::Serialize, serde::Deserialize)]
struct StoredSummary {
    brackets: u64,
    tiers: BTreeMap<String, [u64; 6]>,
}

impl StoredSummary {
    fn from_report(r: &PeriodReport) -> Self {
        Self {
            brackets: r.brackets,
            tiers: r
                .tiers
                .iter()
                .map(|(k, t)| {
                    (
                        k.clone(),
                        [
                            t.players, t.promoted, t.demoted, t.stayed, t.rewards, t.idle,
                        ],
                    )
                })
                .collect(),
        }
    }

    fn into_report(self, period: PeriodId) -> PeriodReport {
        let mut r = PeriodReport::empty(period);
        for (tier, [players, promoted, demoted, stayed, rewards, idle]) in self.tiers {
            let t = Tally {
                players,
                promoted,
                demoted,
                stayed,
                rewards,
                idle,
            };
            r.add(&tier, &t);
            r.brackets -= 1;
        }
        r.brackets = self.brackets;
        r
    }
}
