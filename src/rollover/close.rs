//! Closing brackets and periods: a lease and the frozen board in one step, grants (a
//! failed one blocked, not the bracket), then the outcomes recorded once with the
//! bracket's done mark; and the on-the-spot close of one bracket when a returning
//! player needs it.

use std::time::Duration;

use chrono::{DateTime, Utc};
use tracing::{info, instrument};

use super::outcome::{Outcome, Tally};
use super::{PeriodReport, Rollover, StoredSummary, tally_from_string, tally_to_string};
use super::{events, outcome};
use crate::error::{Error, InputError, StoreError, TimeRefusal};
use crate::ranking::{MAX_TOP, TopPool};
use crate::season::calendar::{Period, PeriodId};
use crate::store::keys::BracketKeys;
use crate::store::{
    Appends, BlockedBracket, BlockedGrant, CloseCheck, ClosingPeriod, FrozenClaim, Store,
};

/// A frozen board: `(player, packed)`, best first.
type Board = Vec<(String, u64)>;

/// Brackets one process closes concurrently.
const CLOSING_AT_ONCE: usize = 32;

/// How long a bracket lease lasts; closing a bracket takes milliseconds, so a holder
/// that keeps it this long has died or stalled and another process takes over.
const LEASE: Duration = Duration::from_secs(15);

pub(crate) fn owner_id() -> String {
    let nanos = Utc::now().timestamp_nanos_opt().unwrap_or_default();
    format!("{}-{}", std::process::id(), nanos)
}

impl<S: Store> Rollover<S> {
    /// The time rule of closing `period`.
    pub(crate) fn close_check(&self, period: PeriodId) -> Result<CloseCheck, Error> {
        let closes = self.ctx.closes_at(&self.ctx.period(period)?);
        Ok(
            CloseCheck::new(self.ctx.now_arg(), closes.timestamp_millis())
                .keep(self.ctx.ttl_secs(period)),
        )
    }

    /// Closes one period (all its brackets), from what its begin_close found.
    /// Idempotent.
    #[instrument(skip(self, closing, owner), fields(period = period.id), err(level = "debug"))]
    pub(crate) async fn close_period(
        &self,
        period: &Period,
        closing: ClosingPeriod,
        owner: &str,
    ) -> Result<PeriodReport, Error> {
        let pkeys = self.ctx.keys().period(period.id);
        let (summary, joins) = closing;
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
        // Each cohort's list and each tier's list across its cohorts. The closes keep
        // the best entries of every board they freeze, so the lists need read only
        // the brackets closed elsewhere and their winners' profiles.
        let mut lists: Vec<String> = Vec::new();
        for (group, _) in joins.iter().filter(|(_, n)| n.counted() > 0) {
            let (tier, cohort) = crate::season::split_group(group);
            lists.push(tier.to_owned());
            if cohort.is_some() {
                lists.push(group.clone());
            }
        }
        lists.sort();
        lists.dedup();
        let mut pool = TopPool::new(lists.iter().map(String::as_str));
        let mut report = PeriodReport::empty(period.id);
        let mut busy = self
            .close_brackets(period.id, brackets, owner, &mut report, &mut pool)
            .await?;
        // Brackets another process is closing: wait for them (or for their lease to
        // lapse, when this process takes over).
        let mut delay = Duration::from_millis(20);
        while !busy.is_empty() {
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(Duration::from_millis(500));
            busy = self
                .close_brackets(period.id, busy, owner, &mut report, &mut pool)
                .await?;
        }
        // Every board is frozen now: the tier-wide lists are final. They are kept
        // with the period before it is marked closed, so a closed period has them.
        let mut tops = Vec::new();
        for tier in &lists {
            let mut top = self
                .boards
                .merge_top(period.id, tier, MAX_TOP, pool.finish(tier))
                .await?;
            top.frozen = true;
            let json = serde_json::to_string(&top)
                .map_err(|e| StoreError::Protocol(format!("cannot encode a tier's list: {e}")))?;
            tops.push((tier.clone(), json));
        }
        self.ctx.store().save_tops(&pkeys, &tops).await?;
        let summary = serde_json::to_string(&StoredSummary::from_report(&report))
            .map_err(|e| StoreError::Protocol(format!("cannot encode summary: {e}")))?;
        let closed = match self.ctx.log_spec() {
            Some(_) => vec![events::period_closed(
                &self.ctx.season().name,
                period,
                report.brackets,
                report.totals.players,
            )],
            None => Vec::new(),
        };
        self.ctx
            .store()
            .finish_period_logged(
                &pkeys,
                &summary,
                self.ctx.ttl_secs(period.id),
                self.ctx.log_spec().map(|spec| Appends {
                    spec,
                    bodies: &closed,
                }),
            )
            .await?;
        Ok(report)
    }

    /// Closes `brackets` ([`CLOSING_AT_ONCE`] at a time: each close is a few round
    /// trips, so one at a time would leave the store idle), adding each closed one
    /// to `report` and each board it froze to `pool`; returns those another process
    /// holds.
    async fn close_brackets(
        &self,
        period: PeriodId,
        brackets: Vec<(usize, String, u32)>,
        owner: &str,
        report: &mut PeriodReport,
        pool: &mut TopPool,
    ) -> Result<Vec<(usize, String, u32)>, Error> {
        use futures::StreamExt;
        let mut runs = futures::stream::iter(brackets.into_iter().map(|(i, tier, b)| async move {
            let closed = self.close_bracket(period, i, &tier, b, owner).await;
            (i, tier, b, closed)
        }))
        .buffer_unordered(CLOSING_AT_ONCE);
        let mut busy = Vec::new();
        while let Some((i, tier, b, closed)) = runs.next().await {
            let closed = match closed {
                // A key of the wrong type in the bracket (planted by something else):
                // the bracket is blocked, the rest of the period closes, and every
                // rollover retries it.
                // Its board is left out of the tier's lists (offered empty, so they
                // do not read it either).
                Err(Error::Store(e @ StoreError::WrongType { .. })) => {
                    self.block_bracket(&format!("{period}/{tier}/{b}"), &e)
                        .await?;
                    pool.offer(self.ctx.season(), &tier, b, &[]);
                    continue;
                }
                other => other?,
            };
            match closed {
                Some((t, board)) => {
                    report.add(&tier, &t);
                    if let Some(board) = board {
                        pool.offer(self.ctx.season(), &tier, b, &board);
                    }
                }
                None => busy.push((i, tier, b)),
            }
        }
        Ok(busy)
    }

    /// Records a bracket that cannot close (see [`BlockedBracket`]) and says so.
    async fn block_bracket(&self, source: &str, e: &StoreError) -> Result<(), Error> {
        let StoreError::WrongType { key, .. } = e else {
            return Ok(());
        };
        tracing::error!(
            bracket = source,
            key = %key,
            error = %e,
            "a bracket cannot close; the rest of its period closes, and every rollover retries it"
        );
        let blocked = BlockedBracket::new(source, key.clone(), e.to_string());
        self.ctx
            .store()
            .block_bracket(&self.ctx.keys().season(), &blocked)
            .await?;
        Ok(())
    }

    /// Closes again the brackets earlier runs could not (repaired since, or not);
    /// returns how many closed now.
    pub(crate) async fn retry_blocked_brackets(&self) -> Result<u64, Error> {
        let season = self.ctx.keys().season();
        let mut closed = 0;
        for blocked in self.ctx.store().blocked_brackets(&season).await? {
            let parsed = blocked.source.split_once('/').and_then(|(p, rest)| {
                let (tier, b) = rest.rsplit_once('/')?;
                Some((p.parse::<PeriodId>().ok()?, tier, b.parse::<u32>().ok()?))
            });
            let Some((period, tier, bracket)) = parsed else {
                return Err(StoreError::Protocol(format!(
                    "blocked bracket {:?} is not period/tier/bracket",
                    blocked.source
                ))
                .into());
            };
            let Some((tier_index, _)) = self.ctx.season().tier_by_any_name(tier) else {
                continue;
            };
            // The close logs into a period that may be long past: webhook delivery must
            // look at it again.
            self.ctx.mark_for_delivery(&[period]).await?;
            match self
                .close_bracket(period, tier_index, tier, bracket, &owner_id())
                .await
            {
                Ok(Some(_)) => {
                    self.ctx
                        .store()
                        .unblock_bracket(&season, &blocked.source)
                        .await?;
                    info!(bracket = %blocked.source, "blocked bracket closed");
                    closed += 1;
                }
                // Another process is closing it now; it stays listed until one does.
                Ok(None) => {}
                Err(Error::Store(e @ StoreError::WrongType { .. })) => {
                    self.block_bracket(&blocked.source, &e).await?;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(closed)
    }

    /// Closes one bracket unless another process holds it (`None`). Idempotent.
    /// Answers its tally, and the frozen board when this call froze it (not when an
    /// earlier run or another process had finished it).
    pub(crate) async fn close_bracket(
        &self,
        period: PeriodId,
        tier_index: usize,
        tier: &str,
        bracket: u32,
        owner: &str,
    ) -> Result<Option<(Tally, Option<Board>)>, Error> {
        let bk = self.ctx.keys().bracket(period, tier, bracket);
        let lease = u64::try_from(LEASE.as_millis()).unwrap_or(u64::MAX);
        let check = self.close_check(period)?;
        // The lease and the frozen board in one step; the outcomes are recorded with
        // the done mark, after the grants: a process killed in between leaves the
        // bracket unfinished, and the next run freezes the same board, finds the same
        // outcomes and grants nothing twice.
        let board = match self
            .ctx
            .store()
            .claim_and_freeze(&bk, owner, lease, check)
            .await?
        {
            FrozenClaim::Done(summary) => return Ok(Some((tally_from_string(&summary)?, None))),
            FrozenClaim::Busy => return Ok(None),
            FrozenClaim::Mine(board) => board,
        };
        let outcomes = outcome::bracket_outcomes(self.ctx.season(), tier_index, &board);
        let source = format!("{period}/{tier}/{bracket}");
        let grants: Vec<_> = outcomes
            .iter()
            .filter_map(|o| {
                o.reward
                    .as_ref()
                    .map(|g| (self.ctx.keys().player(&o.player), source.clone(), g.clone()))
            })
            .collect();
        let ttl = self.ctx.season().retention.player_ttl.as_secs().max(1);
        let spec = self.ctx.log_spec();
        let season = self.ctx.season().name.as_str();
        let span = self.ctx.period(period)?;
        let grant_events: Vec<String> = match spec {
            Some(_) => grants
                .iter()
                .map(|(keys, source, grant)| {
                    events::granted(season, &span, &keys.player, source, grant)
                })
                .collect(),
            None => Vec::new(),
        };
        let logged = spec.map(|spec| Appends {
            spec,
            bodies: &grant_events,
        });
        let results = self.ctx.store().grant_logged(&grants, ttl, logged).await?;
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
            self.ctx
                .store()
                .block_grants(&self.ctx.keys().season(), &blocked)
                .await?;
        }
        let mut tally = Tally::default();
        for o in &outcomes {
            tally.add(o);
        }
        // Every outcome encoded into one buffer, then borrowed: three allocations a
        // bracket where a string and a copy of the id cost two a player.
        let mut text = String::new();
        let mut spans = Vec::with_capacity(outcomes.len());
        for o in &outcomes {
            let start = text.len();
            outcome::encode_into(&mut text, o);
            spans.push(start..text.len());
        }
        let encoded: Vec<(&str, &str)> = outcomes
            .iter()
            .zip(spans)
            .map(|(o, span)| (o.player.as_str(), &text[span]))
            .collect();
        let close_events = match spec {
            Some(_) => events::bracket_closed(season, &span, tier, bracket, &outcomes),
            None => Vec::new(),
        };
        self.ctx
            .store()
            .finish_with_outcomes(
                &bk,
                &encoded,
                self.ctx.ttl_secs(period),
                &tally_to_string(&tally),
                spec.map(|spec| Appends {
                    spec,
                    bodies: &close_events,
                }),
            )
            .await?;
        crate::metrics::bracket_closed(tier);
        Ok(Some((tally, Some(board))))
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
        let keys = self.ctx.keys().bracket(period, tier, bracket);
        let bk = &keys;
        if let Some(s) = self.ctx.store().outcome(bk, player).await? {
            return Ok(outcome::decode(player, &s));
        }
        let Some((tier_index, _)) = self.ctx.season().tier_by_any_name(tier) else {
            return Ok(None);
        };
        // A period the season has closed but with no outcome for this player: its
        // records have expired (retention) or the player never reached the board.
        // Closing it again would only recreate expired keys.
        if self
            .ctx
            .store()
            .closed_through(&self.ctx.keys().season())
            .await?
            >= period
        {
            return Ok(None);
        }
        // Nothing closes before its time by the league clock: until then the player
        // cannot be placed in a later period (their tier depends on this outcome).
        let old = self.ctx.period(period)?;
        let closes = self.ctx.closes_at(&old);
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
        self.ctx
            .store()
            .begin_close(&self.ctx.keys().period(period), check)
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
            .ctx
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
        let bk = self.ctx.keys().bracket(period, tier, bracket);
        if let Some(s) = self.ctx.store().outcome(&bk, player).await? {
            return Ok(outcome::decode(player, &s));
        }
        let board = self.full_board(&bk).await?;
        Ok(
            outcome::bracket_outcomes(self.ctx.season(), tier_index, &board)
                .into_iter()
                .find(|o| o.player == player),
        )
    }

    pub(crate) async fn full_board(&self, bk: &BracketKeys) -> Result<Vec<(String, u64)>, Error> {
        let mut board = Vec::new();
        let mut offset = 0;
        loop {
            let page = self.ctx.store().standings(bk, offset, 1000).await?;
            let n = page.entries.len() as u64;
            board.extend(page.entries.into_iter().map(|e| (e.player, e.packed)));
            offset += n;
            if n == 0 || offset >= page.total {
                return Ok(board);
            }
        }
    }
}
