//! The league clock ([`LeagueClock`]) and the time rules: the store's clock (or an
//! injected one), the allowed skew, when a period starts, stops accepting events and
//! may close.
//!
//! Owns: this process's clock, whether it was injected, the measured offset to the
//! store's clock, and (with `[clock] travel = true`) the staging clock's offset as
//! last read. Must not: write anything, or read the store other than its clock and
//! the staging offset (the store is passed in to [`LeagueClock::now`], never kept).
//!
//! The staging clock: a season with `[clock] travel = true` keeps an offset in the
//! store (the season's slot) that operators move forward; the league clock is then
//! the store's clock (or the injected one) plus that offset. Scripts run on a
//! bracket's or period's slot and cannot read the season's on a cluster, so this
//! process reads the offset (at most every [`TRAVEL_REFRESH`], and at once after a
//! time contradiction) and sends it with each operation ([`Now::Travel`]): Redis
//! adds it to `TIME` inside the script that decides. A process that still holds the
//! previous offset tells an earlier time, as a slow clock within the skew does: the
//! offset only grows, a period's close is marked in the store (nothing reopens), and
//! a write the store refuses on time grounds is stamped again with the offset read
//! anew.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;

use chrono::{DateTime, Utc};

use super::{duration_ms, from_millis, millis};
use crate::clock::Clock;
use crate::error::{Error, InputError, TimeRefusal};
use crate::season::calendar::Period;
use crate::store::keys::SeasonKeys;
use crate::store::{Now, Store, TimeCheck};

/// How often the offset between this process's clock and the store's is measured
/// again. Clocks drift by well under a millisecond a minute.
const OFFSET_REFRESH: Duration = Duration::from_secs(30);

/// How often the staging clock's offset is read again (`[clock] travel = true`): a
/// move of the clock reaches every process within about this long.
pub const TRAVEL_REFRESH: Duration = Duration::from_secs(1);

/// The clock every process of a league shares: the store's (Redis's `TIME`, the
/// embedded store's clock), estimated here as this process's clock plus a measured
/// offset; or, in tests, simulations and replays, an injected clock that every
/// process uses. With the allowed skew (`[clock] max_skew`), it decides whether a
/// period has started, whether it still accepts events, and when it may close.
#[derive(Debug)]
pub struct LeagueClock {
    clock: Arc<dyn Clock>,
    /// True when `clock` is the league clock (built with `League::with_clock`).
    injected: bool,
    /// The store's clock minus this process's, in milliseconds, and when measured.
    offset: Mutex<(i64, Option<Instant>)>,
    /// `[clock] max_skew`.
    max_skew: Duration,
    /// With `[clock] travel = true`: the season's keys, where the staging offset is.
    travel: Option<SeasonKeys>,
    /// The staging offset in milliseconds as last read, and when (`None`: read it
    /// before the next decision).
    staged: Mutex<(i64, Option<Instant>)>,
}

impl LeagueClock {
    /// A league clock on `clock` (the league clock itself when `injected`, else this
    /// process's clock, corrected to the store's), allowing `max_skew`.
    /// With `travel` (the season's keys), the staging clock's offset is read from the
    /// store and added.
    pub(crate) fn new(
        clock: Arc<dyn Clock>,
        injected: bool,
        max_skew: Duration,
        travel: Option<SeasonKeys>,
    ) -> Self {
        LeagueClock {
            clock,
            injected,
            offset: Mutex::new((0, None)),
            max_skew,
            travel,
            staged: Mutex::new((0, None)),
        }
    }

    /// Whether the season has a staging clock (`[clock] travel = true`).
    pub fn travels(&self) -> bool {
        self.travel.is_some()
    }

    /// The staging clock's offset as last read (0 without travel).
    pub fn staged_offset(&self) -> chrono::TimeDelta {
        chrono::TimeDelta::milliseconds(self.staged_ms())
    }

    fn staged_ms(&self) -> i64 {
        if self.travel.is_none() {
            return 0;
        }
        self.staged.lock().unwrap_or_else(|e| e.into_inner()).0
    }

    /// Reads the staging offset again when it is older than [`TRAVEL_REFRESH`] (or was
    /// dropped); nothing without travel.
    async fn refresh_staged<S: Store>(&self, store: &S) -> Result<(), Error> {
        let Some(keys) = &self.travel else {
            return Ok(());
        };
        {
            let s = self.staged.lock().unwrap_or_else(|e| e.into_inner());
            if s.1.is_some_and(|at| at.elapsed() < TRAVEL_REFRESH) {
                return Ok(());
            }
        }
        let offset = store.clock_offset(keys).await?;
        let mut s = self.staged.lock().unwrap_or_else(|e| e.into_inner());
        // Never step back: a read that raced a newer one keeps the larger offset.
        s.0 = s.0.max(offset);
        s.1 = Some(Instant::now());
        Ok(())
    }

    /// Sets the staging offset this process uses to `offset` (after moving it), if
    /// larger.
    pub(crate) fn staged_moved(&self, offset: i64) {
        let mut s = self.staged.lock().unwrap_or_else(|e| e.into_inner());
        s.0 = s.0.max(offset);
        s.1 = Some(Instant::now());
    }

    /// The league clock without the staging offset (the store's clock, or the
    /// injected one).
    pub(crate) async fn base_now<S: Store>(&self, store: &S) -> Result<DateTime<Utc>, Error> {
        if self.injected {
            return Ok(self.clock.now());
        }
        if store.now_is_free() {
            return Ok(from_millis(store.now().await?));
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
        let remote = store.now().await?;
        // The store read its clock about half a round trip after we read ours.
        let half = chrono::TimeDelta::from_std(sent.elapsed() / 2).unwrap_or_default();
        let offset = remote - millis(local + half);
        *self.offset.lock().unwrap_or_else(|e| e.into_inner()) = (offset, Some(Instant::now()));
        Ok(self.clock.now() + chrono::TimeDelta::milliseconds(offset))
    }

    /// This process's best guess of the league clock without asking the store: its
    /// clock, plus the staging offset as last read (for defaults such as "the current
    /// period" where no decision is made).
    pub fn estimate(&self) -> DateTime<Utc> {
        self.clock.now() + self.staged_offset()
    }

    /// This process's clock: the league clock when injected; otherwise the local
    /// clock, which [`LeagueClock::now`] corrects to the store's.
    pub fn local(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// Whether the league clock is an injected clock.
    pub fn is_injected(&self) -> bool {
        self.injected
    }

    /// The league clock's current time: the injected clock, or `store`'s clock
    /// (asked directly when that is free, otherwise this process's clock corrected by
    /// an offset to the store's measured every 30 s); plus, with `[clock] travel =
    /// true`, the staging offset (read again every second).
    pub async fn now<S: Store>(&self, store: &S) -> Result<DateTime<Utc>, Error> {
        self.refresh_staged(store).await?;
        Ok(self.base_now(store).await? + self.staged_offset())
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

    /// [`LeagueClock::clock_contradicted`] without dropping the estimate.
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
        self.staged.lock().unwrap_or_else(|e| e.into_inner()).1 = None;
    }

    /// Runs the batch `run` over `items`, then once more over the items this process
    /// stamped (`stamped`) whose refusal contradicted its estimate of the league clock
    /// (see [`LeagueClock::clock_contradicted`]), with the offset measured anew. One result
    /// an item, in order.
    /// `part` is what `run` runs on (a part of the league, or a tuple of them).
    pub(crate) async fn restamping<P: ?Sized, I: Clone, T>(
        &self,
        part: &P,
        items: &[I],
        stamped: impl Fn(&I) -> bool,
        run: impl for<'a> Fn(&'a P, &'a [I]) -> BoxFuture<'a, Vec<Result<T, Error>>>,
    ) -> Vec<Result<T, Error>> {
        let mut results = run(part, items).await;
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
        for (i, r) in again.into_iter().zip(run(part, &retry).await) {
            results[i] = r;
        }
        results
    }

    /// The clock argument of store operations.
    /// With `[clock] travel = true` it carries the staging offset as last read (the
    /// callers read the league clock first, which reads the offset again when due).
    pub(crate) fn now_arg(&self) -> Now {
        if self.injected {
            Now::At(millis(self.clock.now()) + self.staged_ms())
        } else if self.travel.is_some() {
            Now::Travel(self.staged_ms())
        } else {
            Now::Store
        }
    }

    /// The allowed skew.
    pub fn skew(&self) -> chrono::TimeDelta {
        chrono::TimeDelta::from_std(self.max_skew).unwrap_or_default()
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
            skew_ms: self.max_skew.as_millis() as i64,
        }
    }

    /// The error for a store's time refusal of an event at `at` in `period`.
    pub(crate) fn time_error(&self, why: TimeRefusal, period: &Period, at: DateTime<Utc>) -> Error {
        match why {
            TimeRefusal::Future { ahead_ms, now_ms } => InputError::FutureTime {
                at,
                now: from_millis(now_ms),
                ahead_ms,
                max_skew_ms: self.max_skew.as_millis() as u64,
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
                max_skew_ms: self.max_skew.as_millis() as u64,
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
}
