//! The time rules of store operations: which clock decides ([`Now`]), an event's
//! rules ([`TimeCheck`]) and a close's ([`CloseCheck`]). Plain data, no I/O.

use crate::error::TimeRefusal;

/// Which clock a store operation decides by.
///
/// Time-dependent decisions (has this period started, may it be closed, is this event
/// in the future) are made inside the store's atomic step, by one clock that every
/// process shares, so that game servers whose clocks disagree cannot disagree about
/// the league.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Now {
    /// The store's own clock: Redis's `TIME`, read inside the script that decides; the
    /// embedded store's clock.
    Store,
    /// A fixed instant (unix milliseconds) from a clock the league was built with; for
    /// tests, simulations and replays in which every process uses that same clock.
    At(i64),
    /// The store's own clock plus this offset in milliseconds (at least 0): the staging
    /// clock of a season with `[clock] travel = true` (see [`crate::store::ClockStore`]).
    /// Redis reads `TIME` inside the script that decides and adds the offset.
    Travel(i64),
}

impl Now {
    /// The time this clock tells when the store's own clock reads `store_ms`.
    pub fn at(self, store_ms: i64) -> i64 {
        match self {
            Now::At(ms) => ms,
            Now::Travel(offset) => store_ms.saturating_add(offset.max(0)),
            Now::Store => store_ms,
        }
    }
}

/// The time rules of one event (an update or a join), checked in the store's step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct TimeCheck {
    /// The clock to decide by.
    pub now: Now,
    /// The event's time, unix milliseconds.
    pub at_ms: i64,
    /// The start of the event's period, unix milliseconds.
    pub start_ms: i64,
    /// When the period stops accepting events: its end plus the allowed skew.
    pub closes_ms: i64,
    /// The allowed skew, milliseconds: an event may be at most this far ahead.
    pub skew_ms: i64,
}

impl TimeCheck {
    /// The rules of an event at `at_ms` in a period starting at `start_ms` that stops
    /// accepting events at `closes_ms`, with `skew_ms` allowed, decided by `now`.
    pub fn new(now: Now, at_ms: i64, start_ms: i64, closes_ms: i64, skew_ms: i64) -> Self {
        TimeCheck {
            now,
            at_ms,
            start_ms,
            closes_ms,
            skew_ms,
        }
    }

    /// Rules that refuse nothing: an event at the epoch in a period that never closes.
    /// For store-level tests and tools that work below the engine's time rules.
    pub fn unbounded() -> Self {
        TimeCheck::new(Now::At(0), 0, 0, i64::MAX, 0)
    }

    /// Applies the rules at `now_ms`: `Err` says why the event is refused.
    pub fn judge(&self, now_ms: i64) -> Result<(), Judgement> {
        if self.at_ms > now_ms.saturating_add(self.skew_ms) {
            return Err(Judgement::Refused(TimeRefusal::Future {
                ahead_ms: u64::try_from(self.at_ms - now_ms).unwrap_or(0),
                now_ms,
            }));
        }
        if now_ms < self.start_ms {
            return Err(Judgement::Refused(TimeRefusal::NotYet {
                wait_ms: u64::try_from(self.start_ms - now_ms).unwrap_or(0),
            }));
        }
        if now_ms >= self.closes_ms {
            return Err(Judgement::Closed);
        }
        Ok(())
    }
}

/// Why [`TimeCheck::judge`] refused an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Judgement {
    /// Too early or in the future.
    Refused(TimeRefusal),
    /// The period no longer accepts events.
    Closed,
}

/// The time rule of a close: nothing is closed before `closes_ms` by the clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct CloseCheck {
    /// The clock to decide by.
    pub now: Now,
    /// The earliest instant the period may be closed (its end plus the allowed skew),
    /// unix milliseconds.
    pub closes_ms: i64,
    /// Seconds the period's closing marker lives at least when the period has no
    /// expiry yet (a period nobody joined gets its marker from the close itself);
    /// 0 leaves the marker without one.
    pub keep_secs: u64,
}

impl CloseCheck {
    /// Closing is allowed from `closes_ms` by `now`.
    pub fn new(now: Now, closes_ms: i64) -> Self {
        CloseCheck {
            now,
            closes_ms,
            keep_secs: 0,
        }
    }

    /// Gives a closing marker that has no expiry yet `secs` seconds to live.
    pub fn keep(mut self, secs: u64) -> Self {
        self.keep_secs = secs;
        self
    }

    /// A rule that allows closing at any time: for store-level tests and tools.
    pub fn unbounded() -> Self {
        CloseCheck::new(Now::At(0), i64::MIN)
    }

    /// `Err` with the wait when `now_ms` is before the period may be closed.
    pub fn judge(&self, now_ms: i64) -> Result<(), TimeRefusal> {
        if now_ms < self.closes_ms {
            return Err(TimeRefusal::NotYet {
                wait_ms: u64::try_from(self.closes_ms - now_ms).unwrap_or(0),
            });
        }
        Ok(())
    }
}
