//! The league clock and the time rules: the store's clock (or an injected one), the
//! allowed skew, when a period starts, stops accepting events and may close, and an
//! event's tick within its period.

use std::time::Instant;

use futures::future::BoxFuture;

use chrono::{DateTime, Utc};

use crate::error::{Error, InputError, TimeRefusal};
use crate::season::calendar::Period;
use crate::store::{Now, Store, TimeCheck};

use super::*;

impl<S: Store> League<S> {
    /// The league clock's current time (see the type's docs): the injected clock, or
    /// the store's clock (asked directly when that is free, otherwise this process's
    /// clock corrected by an offset to the store's measured every 30 s).
    pub async fn now(&self) -> Result<DateTime<Utc>, Error> {
        if self.injected {
            return Ok(self.clock.now());
        }
        if self.store.now_is_free() {
            return Ok(from_millis(self.store.now().await?));
        }
        {
            let o = self.offset.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(at) = o.1
                && at.elapsed() < OFFSET_REFRESH
            {
                return Ok(self.clock.now() + chrono::TimeDelta::milliseconds(o.0));
            }
        }
        let sent = Instant::now();
        let local = self.clock.now();
        let remote = self.store.now().await?;
        // The store read its clock about half a round trip after we read ours.
        let half = chrono::TimeDelta::from_std(sent.elapsed() / 2).unwrap_or_default();
        let offset = remote - millis(local + half);
        *self.offset.lock().unwrap_or_else(|e| e.into_inner()) = (offset, Some(Instant::now()));
        Ok(self.clock.now() + chrono::TimeDelta::milliseconds(offset))
    }

    /// Whether `e` refused, on the grounds of the league clock, a write whose time
    /// this process stamped (the caller sent none): then the store's clock and this
    /// process's estimate of it disagree (a clock stepped since the offset was
    /// measured), which is no fault of the caller. If so, the estimate is dropped, so
    /// the next reading measures the offset anew, and the caller stamps the write
    /// again and sends it once more. Such a refusal wrote nothing.
    pub(crate) fn clock_contradicted(&self, stamped: bool, e: &Error) -> bool {
        let contradicted = self.contradicts(stamped, e);
        if contradicted {
            self.forget_offset(e);
        }
        contradicted
    }

    /// [`League::clock_contradicted`] without dropping the estimate.
    fn contradicts(&self, stamped: bool, e: &Error) -> bool {
        stamped
            && !self.injected
            && matches!(
                e,
                Error::Input(
                    InputError::FutureTime { .. }
                        | InputError::NotStarted { .. }
                        | InputError::PeriodClosed { .. }
                ) | Error::Store(crate::error::StoreError::Time(_))
            )
    }

    /// Drops the estimate of the league clock after `e` contradicted it.
    fn forget_offset(&self, e: &Error) {
        tracing::warn!(
            error = %e,
            "the league clock contradicts this process's estimate of it (a clock \
             stepped?): measuring the offset again"
        );
        self.offset.lock().unwrap_or_else(|e| e.into_inner()).1 = None;
    }

    /// Runs the batch `run` over `items`, then once more over the items this process
    /// stamped (`stamped`) whose refusal contradicted its estimate of the league clock
    /// (see [`League::clock_contradicted`]), with the offset measured anew. One result
    /// an item, in order.
    pub(crate) async fn restamping<I: Clone, T>(
        &self,
        items: &[I],
        stamped: impl Fn(&I) -> bool,
        run: impl for<'a> Fn(&'a Self, &'a [I]) -> BoxFuture<'a, Vec<Result<T, Error>>>,
    ) -> Vec<Result<T, Error>> {
        let mut results = run(self, items).await;
        let again: Vec<usize> = (0..items.len())
            .filter(|&i| {
                results[i]
                    .as_ref()
                    .is_err_and(|e| self.contradicts(stamped(&items[i]), e))
            })
            .collect();
        let Some(&first) = again.first() else {
            return results;
        };
        if let Err(e) = &results[first] {
            self.forget_offset(e);
        }
        let retry: Vec<I> = again.iter().map(|&i| items[i].clone()).collect();
        for (i, r) in again.into_iter().zip(run(self, &retry).await) {
            results[i] = r;
        }
        results
    }

    /// The clock argument of store operations.
    pub(crate) fn now_arg(&self) -> Now {
        if self.injected {
            Now::At(millis(self.clock.now()))
        } else {
            Now::Store
        }
    }

    /// The allowed skew.
    pub(crate) fn skew(&self) -> chrono::TimeDelta {
        chrono::TimeDelta::from_std(self.season.clock.max_skew).unwrap_or_default()
    }

    /// When a period stops accepting events and may be closed: its end plus the skew.
    pub fn closes_at(&self, period: &Period) -> DateTime<Utc> {
        period.end + self.skew()
    }

    pub(crate) fn time_check(&self, period: &Period, at: DateTime<Utc>) -> TimeCheck {
        TimeCheck {
            now: self.now_arg(),
            at_ms: millis(at),
            start_ms: millis(period.start),
            closes_ms: millis(self.closes_at(period)),
            skew_ms: self.season.clock.max_skew.as_millis() as i64,
        }
    }

    /// The error for a store's time refusal of an event at `at` in `period`.
    pub(crate) fn time_error(&self, why: TimeRefusal, period: &Period, at: DateTime<Utc>) -> Error {
        match why {
            TimeRefusal::Future { ahead_ms, now_ms } => InputError::FutureTime {
                at,
                now: from_millis(now_ms),
                ahead_ms,
                max_skew_ms: self.season.clock.max_skew.as_millis() as u64,
            }
            .into(),
            TimeRefusal::NotYet { wait_ms } => InputError::NotStarted {
                period: period.id,
                starts: period.start,
                retry_after_ms: wait_ms.max(1),
            }
            .into(),
        }
    }

    /// Checks an event's time against the league clock before anything is written:
    /// not in the future beyond the skew, in a period that has started, and (unless it
    /// may be a retry, which the store answers from its idempotency record) in a period
    /// that still accepts events.
    pub(crate) fn check_time(
        &self,
        period: &Period,
        at: DateTime<Utc>,
        now: DateTime<Utc>,
        maybe_retry: bool,
    ) -> Result<(), Error> {
        if at > now + self.skew() {
            return Err(InputError::FutureTime {
                at,
                now,
                ahead_ms: duration_ms(at - now),
                max_skew_ms: self.season.clock.max_skew.as_millis() as u64,
            }
            .into());
        }
        if now < period.start {
            return Err(InputError::NotStarted {
                period: period.id,
                starts: period.start,
                retry_after_ms: duration_ms(period.start - now).max(1),
            }
            .into());
        }
        if now >= self.closes_at(period) && !maybe_retry {
            return Err(InputError::PeriodClosed { period: period.id }.into());
        }
        Ok(())
    }

    /// Seconds a player's records live after a placement in `period`: until
    /// `retention.player_ttl` after the period's end.
    pub(crate) fn player_ttl_secs(&self, period: &Period, now: DateTime<Utc>) -> u64 {
        let until_end = u64::try_from((period.end - now).num_seconds()).unwrap_or(0);
        self.season
            .retention
            .player_ttl
            .as_secs()
            .saturating_add(until_end)
            .max(1)
    }

    pub(crate) fn tick(&self, period: &Period, at: DateTime<Utc>) -> Result<u64, InputError> {
        let millis = (at - period.start).num_milliseconds();
        let tick =
            u64::try_from(millis).unwrap_or(0) / self.season.scoring.time_resolution.millis();
        if tick >= self.season.packing.ticks() {
            return Err(InputError::Other(format!(
                "period {} is longer than the season's validated longest period; \
                 report this with the season file",
                period.id
            )));
        }
        Ok(tick)
    }
}
