//! Period rollover: closing brackets and periods, exactly once, from any number of
//! processes, resumable after a crash at any point.
//!
//! Closing one bracket is a sequence of idempotent steps, each atomic on the
//! bracket's slot:
//!
//! 1. claim a short lease (so concurrent processes share brackets instead of all
//!    doing every one; a dead holder's lease simply expires);
//! 2. freeze: mark the bracket closed (updates are refused from here on) and read the
//!    final board in the same step;
//! 3. compute the outcomes ([`crate::rollover::outcome::bracket_outcomes`], a pure function of the
//!    frozen board) and record them unless already recorded;
//! 4. grant rewards: one `HSETNX` per player and period, so a grant repeated after a
//!    crash, or by a second process, is a no-op, and a claimed reward is never re-added;
//! 5. mark the bracket done with its tally.
//!
//! A crash between any two steps leaves a state the next run finishes: steps 2-4 give
//! the same result when repeated, and step 5 is what makes later runs skip the bracket.
//! A period is closed when all its brackets are; joins into it are refused from the
//! start of its close. The season remembers the last period it closed, so a rollover
//! after downtime closes every period missed since, in order.

pub mod outcome;
pub mod scheduler;

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::Serialize;
use tracing::{info, instrument};

use crate::error::{Error, InputError, StoreError, TimeRefusal};
use crate::league::League;
use crate::season::calendar::{Period, PeriodId};
use crate::store::keys::BracketKeys;
use crate::store::{BlockedGrant, BracketClaim, Claim, CloseCheck, Store};
use outcome::{Outcome, Tally};

/// How long a bracket lease lasts; closing a bracket takes milliseconds, so a holder
/// that keeps it this long has died or stalled and another process takes over.
const LEASE: Duration = Duration::from_secs(15);

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
    /// Periods closed by this run in which nobody was placed (not listed in `closed`).
    pub empty: u64,
    /// The last period the season has closed, after this run.
    pub closed_through: PeriodId,
}

/// Options of [`League::rollover`].
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

/// One player's last closed period, for [`League::last_outcome`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct LastOutcome {
    /// The period.
    pub period: PeriodId,
    /// The tier played.
    pub tier: String,
    /// The bracket played.
    pub bracket: u32,
    /// Final rank.
    pub rank: u64,
    /// Final score.
    pub score: u64,
    /// Promoted, stayed or demoted.
    pub outcome: outcome::Movement,
    /// The tier after the period.
    pub next_tier: String,
    /// The reward, if any.
    pub reward: Option<String>,
}

/// One line of a period's outcome log ([`League::outcomes`], `leaguekit export`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct OutcomeRecord {
    /// The period.
    pub period: PeriodId,
    /// The tier.
    pub tier: String,
    /// The bracket.
    pub bracket: u32,
    /// Final rank.
    pub rank: u64,
    /// The player.
    pub player: String,
    /// Final score.
    pub score: u64,
    /// Promoted, stayed or demoted.
    pub outcome: outcome::Movement,
    /// The tier after the period.
    pub next_tier: String,
    /// The reward, if any.
    pub reward: Option<String>,
    /// Where to resume reading after this record.
    pub cursor: String,
}

/// A reward of one player.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct RewardGrant {
    /// Where it was earned: `period/tier/bracket`.
    pub source: String,
    /// The grant string.
    pub grant: String,
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

fn owner_id() -> String {
    let nanos = Utc::now().timestamp_nanos_opt().unwrap_or_default();
    format!("{}-{}", std::process::id(), nanos)
}

impl<S: Store> League<S> {
    /// How long a closed period's keys live, in seconds: until `retention.periods`
    /// periods after it ends by the calendar, and at least that span from now. The
    /// "from now" part matters when old periods are closed late (catch-up after
    /// downtime, or a season replayed with past times): their data stays readable and
    /// their outcomes still give returning players their next tier. A relative TTL
    /// also keeps the engine's clock and the Redis server's clock out of each other's
    /// way.
    pub(crate) fn ttl_secs(&self, period: PeriodId) -> u64 {
        let keep = u64::from(self.season().retention.periods);
        let calendar = self.season().calendar.period(period + keep);
        let own_end = self.season().calendar.period(period).map(|p| p.end);
        match (calendar, own_end) {
            (Some(later), Some(end)) => {
                let span = later.end - end;
                let until = later.end - self.clock().now();
                u64::try_from(span.max(until).num_seconds())
                    .unwrap_or(0)
                    .max(1)
            }
            // Beyond the calendar's horizon: keep for ten years.
            _ => 10 * 366 * 24 * 3600,
        }
    }

    /// Brackets of a period, from the join counters: `(tier index, tier, bracket)`.
    fn brackets_of(&self, joins: &[(String, u64)]) -> Vec<(usize, String, u32)> {
        let size = u64::from(self.season().brackets.size);
        let mut out = Vec::new();
        for (i, tier) in self.season().tiers.iter().enumerate() {
            let n = joins
                .iter()
                .find(|(t, _)| *t == tier.name)
                .map(|(_, n)| *n)
                .unwrap_or(0);
            for b in 1..=n.div_ceil(size) {
                out.push((i, tier.name.clone(), u32::try_from(b).unwrap_or(u32::MAX)));
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
    #[instrument(skip(self, options), fields(dry_run = options.dry_run), err(level = "debug"))]
    pub async fn rollover(
        &self,
        at: Option<DateTime<Utc>>,
        options: RolloverOptions,
    ) -> Result<RolloverReport, Error> {
        let now = self.now().await?;
        let at = crate::league::normalize_time(at.unwrap_or(now));
        if at > now + self.skew() && !options.dry_run {
            return Err(InputError::FutureTime {
                at,
                now,
                ahead_ms: u64::try_from((at - now).num_milliseconds()).unwrap_or(0),
                max_skew_ms: self.season().clock.max_skew.as_millis() as u64,
            }
            .into());
        }
        // Periods close by the league clock: never later than now, however far `at` is.
        let limit = if options.dry_run { at } else { at.min(now) };
        let season_keys = self.keys().season();
        let mut report = RolloverReport {
            closed: Vec::new(),
            blocked: Vec::new(),
            unblocked: 0,
            empty: 0,
            closed_through: 0,
        };
        if !options.dry_run {
            report.unblocked = self.retry_blocked().await?;
        }
        let done = self.store().closed_through(&season_keys).await?;
        report.closed_through = done;
        let owner = owner_id();
        // The periods that may close, oldest first. After a long downtime (or on a
        // fresh store for a season that started long ago) most have nobody in them:
        // their join counters are read in batches, and an empty period (which can get
        // no joins now: it no longer accepts events) is closed by moving the mark past
        // it, without writing anything.
        let mut due = Vec::new();
        let mut id = done + 1;
        while let Some(period) = self.season().calendar.period(id) {
            if self.closes_at(&period) > limit {
                break;
            }
            due.push(period);
            id += 1;
        }
        'periods: for batch in due.chunks(256) {
            let keys: Vec<_> = batch.iter().map(|p| self.keys().period(p.id)).collect();
            let joins = self.store().joined_many(&keys).await?;
            for (period, joins) in batch.iter().zip(joins) {
                if joins.is_empty() {
                    report.empty += 1;
                    if !options.dry_run {
                        report.closed_through = period.id;
                    }
                    continue;
                }
                let closed = if options.dry_run {
                    self.preview_period(period).await?
                } else {
                    match self.close_period(period, &owner).await {
                        Ok(r) => r,
                        // The league clock disagrees with the estimate this process
                        // made of it by a few milliseconds: not closable yet.
                        Err(Error::Store(StoreError::Time(_))) => break 'periods,
                        Err(e) => return Err(e),
                    }
                };
                if !options.dry_run {
                    self.store()
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
            }
        }
        if !options.dry_run && report.closed_through > done {
            self.store()
                .set_closed_through(&season_keys, report.closed_through)
                .await?;
        }
        report.blocked = self.store().blocked_grants(&season_keys).await?;
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

    /// Grants again what earlier runs could not; returns how many went through.
    async fn retry_blocked(&self) -> Result<u64, Error> {
        let season_keys = self.keys().season();
        let blocked = self.store().blocked_grants(&season_keys).await?;
        if blocked.is_empty() {
            return Ok(0);
        }
        let grants: Vec<_> = blocked
            .iter()
            .map(|b| {
                (
                    self.keys().player(&b.player),
                    b.source.clone(),
                    b.grant.clone(),
                )
            })
            .collect();
        let ttl = self.season().retention.player_ttl.as_secs().max(1);
        let results = self.store().grant(&grants, ttl).await?;
        let mut granted = 0;
        for (b, r) in blocked.iter().zip(results) {
            if r.is_ok() {
                self.store()
                    .unblock_grant(&season_keys, &b.source, &b.player)
                    .await?;
                granted += 1;
                info!(player = %b.player, source = %b.source, "blocked reward granted");
            }
        }
        Ok(granted)
    }

    async fn preview_period(&self, period: &Period) -> Result<PeriodReport, Error> {
        let pkeys = self.keys().period(period.id);
        if let Some(summary) = self.store().period_summary(&pkeys).await? {
            return self.report_from_summary(period.id, &summary);
        }
        let joins = self.store().joined(&pkeys).await?;
        let mut report = PeriodReport::empty(period.id);
        for (i, tier, b) in self.brackets_of(&joins) {
            let bk = self.keys().bracket(period.id, &tier, b);
            let board = self.full_board(&bk).await?;
            let mut tally = Tally::default();
            for o in outcome::bracket_outcomes(self.season(), i, &board) {
                tally.add(&o);
            }
            report.add(&tier, &tally);
        }
        Ok(report)
    }

    async fn full_board(&self, bk: &BracketKeys) -> Result<Vec<(String, u64)>, Error> {
        let mut board = Vec::new();
        let mut offset = 0;
        loop {
            let page = self.store().standings(bk, offset, 1000).await?;
            let n = page.entries.len() as u64;
            board.extend(page.entries.into_iter().map(|e| (e.player, e.packed)));
            offset += n;
            if n == 0 || offset >= page.total {
                return Ok(board);
            }
        }
    }

    fn report_from_summary(&self, period: PeriodId, summary: &str) -> Result<PeriodReport, Error> {
        serde_json::from_str::<StoredSummary>(summary)
            .map(|s| s.into_report(period))
            .map_err(|e| StoreError::Protocol(format!("bad period summary: {e}")).into())
    }

    /// The time rule of closing `period`.
    fn close_check(&self, period: PeriodId) -> Result<CloseCheck, Error> {
        let period = self.period(period)?;
        Ok(CloseCheck {
            now: self.now_arg(),
            closes_ms: self.closes_at(&period).timestamp_millis(),
        })
    }

    /// Closes one period (all its brackets). Idempotent. Refused with
    /// [`StoreError::Time`] (nothing written) if the period may not close yet by the
    /// store's clock.
    #[instrument(skip(self, owner), fields(period = period.id), err(level = "debug"))]
    pub(crate) async fn close_period(
        &self,
        period: &Period,
        owner: &str,
    ) -> Result<PeriodReport, Error> {
        let pkeys = self.keys().period(period.id);
        let check = self.close_check(period.id)?;
        let (summary, joins) = self.store().begin_close(&pkeys, check).await?;
        if let Some(summary) = summary {
            return self.report_from_summary(period.id, &summary);
        }
        let mut brackets = self.brackets_of(&joins);
        // Start each process at a different bracket so concurrent runs spread out.
        if !brackets.is_empty() {
            let shift = owner
                .bytes()
                .fold(0usize, |h, b| h.wrapping_mul(31).wrapping_add(b as usize));
            let len = brackets.len();
            brackets.rotate_left(shift % len);
        }
        let mut report = PeriodReport::empty(period.id);
        let mut busy = Vec::new();
        for (i, tier, b) in brackets {
            match self.close_bracket(period.id, i, &tier, b, owner).await? {
                Some(t) => report.add(&tier, &t),
                None => busy.push((i, tier, b)),
            }
        }
        // Brackets another process is closing: wait for them (or for their lease to
        // lapse, when this process takes over).
        let mut delay = Duration::from_millis(20);
        while !busy.is_empty() {
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(Duration::from_millis(500));
            let mut still = Vec::new();
            for (i, tier, b) in busy {
                match self.close_bracket(period.id, i, &tier, b, owner).await? {
                    Some(t) => report.add(&tier, &t),
                    None => still.push((i, tier, b)),
                }
            }
            busy = still;
        }
        let summary = serde_json::to_string(&StoredSummary::from_report(&report))
            .map_err(|e| StoreError::Protocol(format!("cannot encode summary: {e}")))?;
        self.store()
            .finish_period(&pkeys, &summary, self.ttl_secs(period.id))
            .await?;
        Ok(report)
    }

    /// Closes one bracket unless another process holds it (`None`). Idempotent.
    async fn close_bracket(
        &self,
        period: PeriodId,
        tier_index: usize,
        tier: &str,
        bracket: u32,
        owner: &str,
    ) -> Result<Option<Tally>, Error> {
        let bk = self.keys().bracket(period, tier, bracket);
        let lease = u64::try_from(LEASE.as_millis()).unwrap_or(u64::MAX);
        let check = self.close_check(period)?;
        match self.store().claim_bracket(&bk, owner, lease, check).await? {
            BracketClaim::Done(summary) => return Ok(Some(tally_from_string(&summary)?)),
            BracketClaim::Busy => return Ok(None),
            BracketClaim::Mine => {}
        }
        let board = self.store().freeze(&bk, check).await?;
        let outcomes = outcome::bracket_outcomes(self.season(), tier_index, &board);
        let encoded: Vec<(String, String)> = outcomes
            .iter()
            .map(|o| (o.player.clone(), outcome::encode(o)))
            .collect();
        let ttl = self.ttl_secs(period);
        self.store().record_outcomes(&bk, &encoded, ttl).await?;
        let source = format!("{period}/{tier}/{bracket}");
        let grants: Vec<_> = outcomes
            .iter()
            .filter_map(|o| {
                o.reward
                    .as_ref()
                    .map(|g| (self.keys().player(&o.player), source.clone(), g.clone()))
            })
            .collect();
        let ttl = self.season().retention.player_ttl.as_secs().max(1);
        let results = self.store().grant(&grants, ttl).await?;
        // A grant that fails blocks only itself: it is recorded (before the bracket is
        // marked done, so a crash in between repeats it) and every rollover retries it.
        let blocked: Vec<BlockedGrant> = outcomes
            .iter()
            .filter(|o| o.reward.is_some())
            .zip(results)
            .filter_map(|(o, r)| {
                r.err().map(|e| BlockedGrant {
                    player: o.player.clone(),
                    source: source.clone(),
                    grant: o.reward.clone().unwrap_or_default(),
                    error: e.to_string(),
                })
            })
            .collect();
        if !blocked.is_empty() {
            for b in &blocked {
                tracing::error!(
                    player = %b.player,
                    source = %b.source,
                    error = %b.error,
                    "cannot grant a reward; the rest of the bracket closes, and every rollover retries it"
                );
            }
            self.store()
                .block_grants(&self.keys().season(), &blocked)
                .await?;
        }
        let mut tally = Tally::default();
        for o in &outcomes {
            tally.add(o);
        }
        self.store()
            .finish_bracket(&bk, &tally_to_string(&tally))
            .await?;
        Ok(Some(tally))
    }

    /// The player's outcome in a bracket, closing that bracket on the spot if its
    /// period has ended but the rollover has not reached it yet.
    pub(crate) async fn outcome_in(
        &self,
        period: PeriodId,
        tier: &str,
        bracket: u32,
        player: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<Outcome>, Error> {
        let placed = self.placed(period, tier, bracket);
        let bk = &placed.keys;
        if let Some(s) = self.store().outcome(bk, player).await? {
            return Ok(outcome::decode(player, &s));
        }
        let Some((tier_index, _)) = self.season().tier(tier) else {
            return Ok(None);
        };
        // A period the season has closed but with no outcome for this player: its
        // records have expired (retention) or the player never reached the board.
        // Closing it again would only recreate expired keys.
        if self.store().closed_through(&self.keys().season()).await? >= period {
            return Ok(None);
        }
        // Nothing closes before its time by the league clock: until then the player
        // cannot be placed in a later period (their tier depends on this outcome).
        let old = self.period(period)?;
        let closes = self.closes_at(&old);
        let still_closing = |wait_ms: u64| -> Error {
            InputError::StillClosing {
                player: player.to_owned(),
                period,
                closes,
                retry_after_ms: wait_ms.max(1),
            }
            .into()
        };
        if now < closes {
            return Err(still_closing(
                u64::try_from((closes - now).num_milliseconds()).unwrap_or(0),
            ));
        }
        let not_yet = |e: Error| match e {
            Error::Store(StoreError::Time(TimeRefusal::NotYet { wait_ms })) => {
                still_closing(wait_ms)
            }
            other => other,
        };
        // Stop new joins into the period first, so the bracket cannot grow after its
        // outcome is computed; then close it exactly as the rollover would.
        let check = self.close_check(period)?;
        self.store()
            .begin_close(&self.keys().period(period), check)
            .await
            .map_err(|e| not_yet(e.into()))?;
        let owner = owner_id();
        let mut delay = Duration::from_millis(10);
        while self
            .close_bracket(period, tier_index, tier, bracket, &owner)
            .await
            .map_err(not_yet)?
            .is_none()
        {
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(Duration::from_millis(500));
        }
        Ok(self
            .store()
            .outcome(bk, player)
            .await?
            .and_then(|s| outcome::decode(player, &s)))
    }

    /// The player's outcome in a bracket without writing anything: the recorded one,
    /// or the one the bracket's current board would give.
    pub(crate) async fn peek_outcome(
        &self,
        period: PeriodId,
        tier_index: usize,
        tier: &str,
        bracket: u32,
        player: &str,
    ) -> Result<Option<Outcome>, Error> {
        let bk = self.keys().bracket(period, tier, bracket);
        if let Some(s) = self.store().outcome(&bk, player).await? {
            return Ok(outcome::decode(player, &s));
        }
        let board = self.full_board(&bk).await?;
        Ok(outcome::bracket_outcomes(self.season(), tier_index, &board)
            .into_iter()
            .find(|o| o.player == player))
    }

    /// The player's most recent closed period, if any.
    #[instrument(skip(self), err(level = "debug"))]
    pub async fn last_outcome(&self, player: &str) -> Result<Option<LastOutcome>, Error> {
        crate::league::validate_player(player)?;
        let Some(state) = self
            .store()
            .player_state(&self.keys().player(player))
            .await?
        else {
            return Ok(None);
        };
        let now = self.now().await?;
        let current = self.period_at(Some(now)).map(|p| p.id).unwrap_or(0);
        let candidates = [
            Some((state.period, state.tier.clone(), state.bracket)),
            state.previous.clone(),
        ];
        for (period, tier, bracket) in candidates.into_iter().flatten() {
            if period >= current {
                continue;
            }
            let bk = self.keys().bracket(period, &tier, bracket);
            if let Some(o) = self
                .store()
                .outcome(&bk, player)
                .await?
                .and_then(|s| outcome::decode(player, &s))
            {
                return Ok(Some(LastOutcome {
                    period,
                    tier,
                    bracket,
                    rank: o.rank,
                    score: o.score,
                    outcome: o.outcome,
                    next_tier: o.next_tier,
                    reward: o.reward,
                }));
            }
        }
        Ok(None)
    }

    /// A closed period's outcomes in a fixed order (tier from lowest, bracket, rank),
    /// from `cursor` (exclusive; `None` for the start), at most `limit`. A consumer that
    /// stores the cursor of the last record it handled resumes without loss or repeat.
    #[instrument(skip(self), err(level = "debug"))]
    pub async fn outcomes(
        &self,
        period: PeriodId,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<Vec<OutcomeRecord>, Error> {
        self.period(period)?;
        let pkeys = self.keys().period(period);
        // A period is closed once the season's mark passed it (an empty period is
        // closed by the mark alone) or its summary is written.
        let through = self.store().closed_through(&self.keys().season()).await?;
        if through < period && self.store().period_summary(&pkeys).await?.is_none() {
            return Err(InputError::Other(format!(
                "period {period} is not closed yet; run `leaguekit rollover` or wait for the scheduler"
            ))
            .into());
        }
        let after = match cursor {
            Some(c) => Some(parse_cursor(c)?),
            None => None,
        };
        let joins = self.store().joined(&pkeys).await?;
        let mut out = Vec::new();
        for (i, tier, b) in self.brackets_of(&joins) {
            if let Some((ci, cb, _)) = after
                && (i, b) < (ci, cb)
            {
                continue;
            }
            let bk = self.keys().bracket(period, &tier, b);
            let mut rows: Vec<Outcome> = self
                .store()
                .outcomes(&bk)
                .await?
                .into_iter()
                .filter_map(|(p, s)| outcome::decode(&p, &s))
                .collect();
            rows.sort_by_key(|o| o.rank);
            for o in rows {
                if let Some((ci, cb, cr)) = after
                    && (i, b, o.rank) <= (ci, cb, cr)
                {
                    continue;
                }
                if out.len() >= limit {
                    return Ok(out);
                }
                out.push(OutcomeRecord {
                    period,
                    tier: tier.clone(),
                    bracket: b,
                    rank: o.rank,
                    cursor: format!("{i}.{b}.{}", o.rank),
                    player: o.player,
                    score: o.score,
                    outcome: o.outcome,
                    next_tier: o.next_tier,
                    reward: o.reward,
                });
            }
        }
        Ok(out)
    }

    /// The player's rewards not yet claimed.
    #[instrument(skip(self), err(level = "debug"))]
    pub async fn rewards(&self, player: &str) -> Result<Vec<RewardGrant>, Error> {
        crate::league::validate_player(player)?;
        Ok(self
            .store()
            .rewards(&self.keys().player(player))
            .await?
            .into_iter()
            .map(|(source, grant)| RewardGrant { source, grant })
            .collect())
    }

    /// Claims every pending reward of the player. With a `request_id`, a repeated
    /// claim returns the same grants and grants nothing new; without one, a repeated
    /// claim returns only what became pending since.
    #[instrument(skip(self), err(level = "debug"))]
    pub async fn claim(
        &self,
        player: &str,
        request_id: Option<&str>,
    ) -> Result<Vec<RewardGrant>, Error> {
        crate::league::validate_player(player)?;
        if let Some(id) = request_id {
            crate::league::validate_request_id(id)?;
        }
        let now = self.now().await?;
        let current = self.period_at(Some(now)).map(|p| p.id).unwrap_or(0);
        let claim = Claim::new(request_id)
            .in_period(current)
            .ttl_secs(self.season().retention.player_ttl.as_secs().max(1));
        Ok(self
            .store()
            .claim_rewards(&self.keys().player(player), &claim)
            .await?
            .into_iter()
            .map(|(source, grant)| RewardGrant { source, grant })
            .collect())
    }
}

fn parse_cursor(c: &str) -> Result<(usize, u32, u64), InputError> {
    let bad = || {
        InputError::Other(format!(
            "invalid cursor {c:?}; pass a cursor from a previous record"
        ))
    };
    let mut it = c.split('.');
    let i = it.next().and_then(|s| s.parse().ok()).ok_or_else(bad)?;
    let b = it.next().and_then(|s| s.parse().ok()).ok_or_else(bad)?;
    let r = it.next().and_then(|s| s.parse().ok()).ok_or_else(bad)?;
    if it.next().is_some() {
        return Err(bad());
    }
    Ok((i, b, r))
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
