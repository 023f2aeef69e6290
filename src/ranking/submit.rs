//! Score updates on the boards: the checks before anything is written, the store's
//! atomic update with its idempotency record, and the answer. Where the player is
//! (and placing them on a first score) is the league's ([`crate::league`] runs a
//! submit: the placement from [`crate::league::Placements`], then the steps here).

use chrono::{DateTime, Utc};

use crate::context::{Placed, normalize_time, validate_player, validate_request_id};
use crate::error::{Error, InputError, StoreError};
use crate::events::{Event, Kind};
use crate::rollover::outcome::{LastOutcome, RewardGrant};
use crate::season::calendar::Period;
use crate::season::limits::Limit;
use crate::season::packing::ScoreMode;
use crate::store::keys::BracketKeys;
use crate::store::{Overtakes, Store, Update, UpdateReply, UpdateStatus};

use super::{Boards, Submission, SubmitOptions};

impl<S: Store> Boards<S> {
    /// The store's update of `player` by `value` on the board of `placed`.
    fn update<'a>(
        &self,
        player: &'a str,
        value: i64,
        item: &Prepared,
        options: &SubmitOptions,
        placed: &Placed,
    ) -> Update<'a> {
        let bkeys = placed.keys();
        let window = self
            .ctx
            .season()
            .scoring
            .idempotency_window
            .as_secs()
            .max(1);
        Update {
            player,
            mode: self.ctx.season().scoring.mode,
            value,
            tick: item.tick,
            max_score: self.ctx.season().packing.max_score(),
            span: self.ctx.season().packing.span(),
            request: options
                .request_id
                .as_deref()
                .map(|id| (bkeys.request(player, id), window)),
            time: self.ctx.time_check(&item.period, item.at),
            rank: !options.without_rank,
            limits: self.ctx.season().limits,
            overtakes: self.overtakes(player, item, placed),
        }
    }

    /// The `player.overtaken` events of an update of `player` on the board of
    /// `placed`, when the season logs them (`[events] overtaken = true`).
    fn overtakes(&self, player: &str, item: &Prepared, placed: &Placed) -> Option<Overtakes> {
        let season = self.ctx.season();
        if !season.events.is_some_and(|e| e.overtaken) {
            return None;
        }
        let spec = self.ctx.log_spec()?;
        let (head, after) = Event::new(
            Kind::Overtaken,
            &season.name,
            item.period.id,
            item.at.timestamp_millis(),
        )
        .bracket(placed.tier(), placed.bracket())
        .around_player();
        let by = serde_json::Value::String(player.to_owned());
        Some(Overtakes {
            spec,
            head,
            tail: format!("{after}{{\"by\":{by},\"rank\":"),
        })
    }

    /// The error of an update refused by `limit` (counted in the metrics).
    fn limit_error(&self, limit: Limit, got: i128, retry_after_ms: u64) -> Error {
        crate::metrics::limited(limit.as_str());
        let limits = &self.ctx.season().limits;
        limits.exceeded(limit, got, retry_after_ms).into()
    }

    /// The answer to an update of `player` on the board of `placed`: the store's
    /// reply read, and `welcome` (the last outcome and pending rewards, when this
    /// update placed the player).
    pub(crate) fn answer(
        &self,
        player: &str,
        item: &Prepared,
        placed: &Placed,
        reply: UpdateReply,
        value: i64,
        welcome: (Option<LastOutcome>, Option<Vec<RewardGrant>>),
    ) -> Result<Submission, Error> {
        let period = item.period.id;
        let applied = match reply.status {
            UpdateStatus::Applied => true,
            UpdateStatus::Duplicate => false,
            UpdateStatus::Closed => return Err(InputError::PeriodClosed { period }.into()),
            UpdateStatus::Refused(why) => {
                return Err(self.ctx.time_error(why, &item.period, item.at));
            }
            UpdateStatus::Limited {
                limit,
                retry_after_ms,
            } => {
                let got = match limit {
                    Limit::MaxPeriodScore => {
                        // The reply carries the score before the update.
                        let (cur, _) = self.ctx.season().packing.unpack(reply.packed);
                        match self.ctx.season().scoring.mode {
                            ScoreMode::Increment => cur as i128 + value as i128,
                            ScoreMode::Best => (cur as i128).max(value as i128),
                            _ => value as i128,
                        }
                    }
                    _ => i128::from(value).abs(),
                };
                return Err(self.limit_error(limit, got, retry_after_ms));
            }
            UpdateStatus::NotPlaced => {
                return Err(StoreError::Protocol(format!(
                    "{player:?} is still not on the board of {} after being placed again",
                    placed.keys().base
                ))
                .into());
            }
            UpdateStatus::OutOfRange { current } => {
                let (cur, _) = self.ctx.season().packing.unpack(current);
                let result = match self.ctx.season().scoring.mode {
                    crate::season::packing::ScoreMode::Increment => cur as i128 + value as i128,
                    _ => value as i128,
                };
                return Err(InputError::Score(
                    crate::season::packing::ScoreRangeError::OutOfRange {
                        current: cur,
                        value,
                        result,
                        max: self.ctx.season().packing.max_score(),
                    },
                )
                .into());
            }
        };
        let (score, _) = self.ctx.season().packing.unpack(reply.packed);
        let (last, pending_rewards) = welcome;
        let (tier, cohort) = crate::season::split_group(placed.tier());
        Ok(Submission {
            player: player.to_owned(),
            period,
            tier: tier.to_owned(),
            cohort: cohort.map(str::to_owned),
            bracket: placed.bracket(),
            score,
            rank: reply.rank.map(|r| r + 1),
            applied,
            last,
            pending_rewards,
        })
    }

    /// The error of an update that a board without the player refuses (a negative
    /// delta: the score would start below 0), so that a player who is not placed yet
    /// is refused before the placement, which would otherwise be written for nothing.
    pub(crate) fn refused_on_empty_board(&self, value: i64) -> Option<Error> {
        self.ctx
            .season()
            .scoring
            .mode
            .refuses_first(value)
            .then(|| {
                InputError::Score(crate::season::packing::ScoreRangeError::OutOfRange {
                    current: 0,
                    value,
                    result: i128::from(value),
                    max: self.ctx.season().packing.max_score(),
                })
                .into()
            })
    }

    /// Checks what can be checked before any write: ids, value range, time.
    pub(crate) fn prepare(
        &self,
        player: &str,
        value: i64,
        options: &SubmitOptions,
        now: DateTime<Utc>,
    ) -> Result<Prepared, Error> {
        validate_player(player)?;
        if let Some(id) = &options.request_id {
            validate_request_id(id)?;
        }
        self.ctx.validate_cohort(options.cohort.as_deref())?;
        let max = self.ctx.season().packing.max_score();
        let mode = self.ctx.season().scoring.mode;
        // Values that can never be valid are refused before the player is placed, so
        // such an update does not even create a placement.
        let hopeless = match mode {
            crate::season::packing::ScoreMode::Increment => value.unsigned_abs() > max,
            _ => value < 0 || value as u64 > max,
        };
        if hopeless {
            return Err(
                InputError::Score(crate::season::packing::ScoreRangeError::OutOfRange {
                    current: 0,
                    value,
                    result: value as i128,
                    max,
                })
                .into(),
            );
        }
        // Limits that refuse this value whatever the score, before the player is placed
        // (a first update would otherwise write a placement for nothing).
        let limits = &self.ctx.season().limits;
        if !limits.value_allowed(value) {
            return Err(self.limit_error(Limit::MaxValue, i128::from(value).abs(), 0));
        }
        if value > 0 && !limits.score_allowed(value as u64) {
            return Err(self.limit_error(Limit::MaxPeriodScore, i128::from(value), 0));
        }
        let at = normalize_time(options.at.unwrap_or(now));
        let period = self.ctx.period_at(Some(at))?;
        // An update with a request id may be the retry of one that was applied: the
        // store answers it from its idempotency record even once the period closed.
        self.ctx
            .check_time(&period, at, now, options.request_id.is_some())?;
        let tick = self.ctx.tick(&period, at)?;
        Ok(Prepared { period, tick, at })
    }

    /// Sends one update to the board of `placed`. An unknown outcome says which `at`
    /// the update carried: a resend must repeat it, and the caller may not know it
    /// (the league clock's, when it gave none).
    pub(crate) async fn apply(
        &self,
        player: &str,
        value: i64,
        item: &Prepared,
        options: &SubmitOptions,
        placed: &Placed,
    ) -> Result<UpdateReply, Error> {
        self.ctx
            .store()
            .update(
                placed.keys(),
                &self.update(player, value, item, options, placed),
            )
            .await
            .map_err(|e| e.stamped(item.at).into())
    }

    /// Sends many updates, each to the board of its placement, in the store's
    /// pipelined calls: one reply per update, in order.
    pub(crate) async fn apply_many(
        &self,
        updates: &[(&str, i64, &Prepared, &SubmitOptions, &Placed)],
    ) -> Vec<Result<UpdateReply, Error>> {
        let batch: Vec<(&BracketKeys, Update<'_>)> = updates
            .iter()
            .map(|&(player, value, item, options, placed)| {
                let update = self.update(player, value, item, options, placed);
                (placed.keys(), update)
            })
            .collect();
        let replies = self.ctx.store().update_many(&batch).await;
        drop(batch);
        // A store owes one reply per update; anything else is a broken store, and the
        // updates may or may not have been applied.
        if replies.len() != updates.len() {
            let e = StoreError::Protocol(format!(
                "{} replies to {} updates",
                replies.len(),
                updates.len()
            ));
            return updates
                .iter()
                .map(|(_, _, item, _, _)| Err(e.clone().stamped(item.at).into()))
                .collect();
        }
        replies
            .into_iter()
            .zip(updates)
            .map(|(reply, (_, _, item, _, _))| reply.map_err(|e| e.stamped(item.at).into()))
            .collect()
    }
}

/// An update that passed the checks: its period, tick and (normalized) time.
#[derive(Debug, Clone)]
pub(crate) struct Prepared {
    period: Period,
    tick: u64,
    at: DateTime<Utc>,
}

impl Prepared {
    /// The period the update's time falls in.
    pub(crate) fn period(&self) -> &Period {
        &self.period
    }

    /// The update's time (normalized).
    pub(crate) fn at(&self) -> DateTime<Utc> {
        self.at
    }
}
