//! The staging clock: moving the league clock of every process at once, for a season
//! that declares `[clock] travel = true` (see [`crate::context::clock`]).

use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use serde::{Deserialize, Serialize};

use super::Operator;
use super::audit::{Actor, check_text};
use crate::context::{from_millis, millis};
use crate::error::{Error, InputError, StoreError};
use crate::store::Store;

/// Attempts at a move when other moves keep coming first.
const MOVE_ATTEMPTS: usize = 8;
/// How far ahead of the store's clock a move may take the league clock, in days.
pub(crate) const MAX_AHEAD_DAYS: u64 = 400;

/// The league clock as the staging tools see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ClockView {
    /// The league clock now (with the staging offset).
    pub now: DateTime<Utc>,
    /// The staging offset added to the store's clock, milliseconds (0 without travel).
    pub offset_ms: i64,
    /// Whether the season has a staging clock (`[clock] travel = true`).
    pub travel: bool,
}

/// How to move the staging clock.
#[derive(Debug, Clone, Copy)]
enum Move {
    By(TimeDelta),
    To(DateTime<Utc>),
}

impl<S: Store> Operator<S> {
    /// The league clock, its staging offset (read from the store now) and whether the
    /// season travels. Without travel no offset is read.
    pub async fn clock(&self) -> Result<ClockView, Error> {
        let lc = self.ctx.league_clock();
        if !lc.travels() {
            return Ok(ClockView {
                now: self.ctx.now().await?,
                offset_ms: 0,
                travel: false,
            });
        }
        let offset_ms = self
            .ctx
            .store()
            .clock_offset(&self.ctx.keys().season())
            .await?;
        lc.staged_moved(offset_ms);
        let base = lc.base_now(self.ctx.store()).await?;
        Ok(ClockView {
            now: base + TimeDelta::milliseconds(offset_ms),
            offset_ms,
            travel: true,
        })
    }

    /// Moves the league clock forward by `by` for every process of the league (each
    /// sees it within about a second), and records the move in the audit log. Refused
    /// with [`InputError::NoStagingClock`] without `[clock] travel = true`, and with
    /// [`InputError::ClockNotForward`] for a zero duration; nothing is written then.
    pub async fn advance_clock(
        &self,
        actor: &Actor,
        by: Duration,
        reason: Option<&str>,
    ) -> Result<ClockView, Error> {
        let by = TimeDelta::from_std(by)
            .map_err(|_| InputError::Other(format!("cannot advance the clock by {by:?}")))?;
        self.move_clock(actor, Move::By(by), reason).await
    }

    /// Sets the league clock to `to` for every process of the league, and records the
    /// move. Refused as [`Operator::advance_clock`] is, and with
    /// [`InputError::ClockNotForward`] when `to` is not after the league clock's now.
    pub async fn set_clock(
        &self,
        actor: &Actor,
        to: DateTime<Utc>,
        reason: Option<&str>,
    ) -> Result<ClockView, Error> {
        self.move_clock(actor, Move::To(to), reason).await
    }

    /// A move may take the league clock at most [`MAX_AHEAD_DAYS`] ahead of the
    /// store's clock `base`, and not past the end of the calendar's last period: past
    /// that, a catch-up would close a season's worth of periods that no move can bring
    /// back.
    fn check_bound(&self, base: DateTime<Utc>, to: DateTime<Utc>) -> Result<(), InputError> {
        let last_end = Some(self.ctx.season().calendar.last_period().end);
        let too_far = to > base + TimeDelta::days(MAX_AHEAD_DAYS as i64)
            || last_end.is_some_and(|end| to > end);
        if !too_far {
            return Ok(());
        }
        Err(InputError::ClockTooFar {
            to,
            max_days: MAX_AHEAD_DAYS,
            end: last_end.map_or_else(String::new, |e| {
                format!(", and not past the season's last period (ending {e})")
            }),
        })
    }

    async fn move_clock(
        &self,
        actor: &Actor,
        how: Move,
        reason: Option<&str>,
    ) -> Result<ClockView, Error> {
        if let Some(r) = reason {
            check_text("reason", r)?;
        }
        let lc = self.ctx.league_clock();
        if !lc.travels() {
            return Err(InputError::NoStagingClock {
                season: self.ctx.season().name.clone(),
            }
            .into());
        }
        // A staging file against a production league's data is refused here.
        self.ctx.check_layout().await?;
        let keys = self.ctx.keys().season();
        let store = self.ctx.store();
        for _ in 0..MOVE_ATTEMPTS {
            let from_offset = store.clock_offset(&keys).await?;
            let base = lc.base_now(store).await?;
            let now = base + TimeDelta::milliseconds(from_offset);
            let to = match how {
                Move::By(by) => now.checked_add_signed(by),
                Move::To(at) => Some(at),
            }
            .ok_or_else(|| InputError::Other("the clock cannot be moved that far".into()))?;
            if to <= now {
                return Err(InputError::ClockNotForward { now, to }.into());
            }
            self.check_bound(base, to)?;
            let to_offset = match how {
                Move::By(by) => from_offset.checked_add(by.num_milliseconds()),
                // Rounded up, so the league clock reads `at` or later at once.
                Move::To(at) => {
                    let d = at - base;
                    let ms = d.num_milliseconds();
                    Some(ms + i64::from(d > TimeDelta::milliseconds(ms)))
                }
            }
            .filter(|o| *o > from_offset)
            .ok_or(InputError::ClockNotForward { now, to })?;
            let after = store.move_clock(&keys, from_offset, to_offset).await?;
            if after != to_offset {
                // Another move came first: read the clock again and decide anew.
                continue;
            }
            lc.staged_moved(to_offset);
            tracing::warn!(
                actor = actor.name(),
                from = %now,
                to = %to,
                offset_ms = to_offset,
                "the staging clock was moved"
            );
            self.record(
                actor,
                "clock",
                None,
                reason,
                serde_json::json!({
                    "from": from_millis(millis(now)),
                    "to": from_millis(millis(to)),
                    "offset_ms": to_offset,
                }),
            )
            .await?;
            return Ok(ClockView {
                now: to,
                offset_ms: to_offset,
                travel: true,
            });
        }
        Err(StoreError::Protocol(
            "the staging clock kept moving under this move (other operators moving it); \
             try again"
                .into(),
        )
        .into())
    }
}
