//! What the embedded store keeps, and for how long, in the terms the fast path needs:
//! when a player's records expire (and they come back as a new player), and until when
//! a closed bracket's outcomes can still give a returning player their next tier.
//!
//! Every figure mirrors the engine on a [`crate::MemoryStore`] whose clock is the
//! league clock, as the full engine path runs it: the period's events at its last
//! millisecond, its close at `end + max_skew`. The functions mirrored are named at each
//! field; `tests/cli/sim.rs` holds the two paths to the same report, retention included.
//!
//! Owns: those times. Must not: decide a tier (the fast path does, with
//! [`crate::rollover::outcome::after_skipped`]).

use chrono::{Duration, TimeDelta};

use crate::error::{Error, InputError};
use crate::season::Season;
use crate::season::calendar::PeriodId;

/// Times of each period of a run, in unix seconds (the embedded store's expiry unit).
pub(crate) struct Timing {
    /// The store's clock while the period's events are applied (`end - 1 ms`).
    pub(crate) join_now: Vec<i64>,
    /// When the records of a player placed in the period expire
    /// (`League::player_ttl_secs`, set by `record_state`).
    pub(crate) placement_expire: Vec<i64>,
    /// The store's clock at the period's close.
    pub(crate) closes: Vec<i64>,
    /// When the period's closed brackets expire (`League::ttl_secs`, set by
    /// `record_outcomes`); a close after that (`finish_period`) drops them.
    pub(crate) bracket_expire: Vec<i64>,
    /// The period's length in milliseconds.
    pub(crate) length_ms: Vec<i64>,
    /// With reserved late seats: the period's late point (ms after its start), and
    /// `join_now` and `placement_expire` for the joins before it, which the engine
    /// path applies at the league clock's `late point - 1 ms`, so that the store
    /// judges them early, as it would have at their own time.
    pub(crate) late: Vec<Option<EarlyJoins>>,
}

/// The store's clock for the joins before a period's late point, and what it gives.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EarlyJoins {
    /// The late point, in ms after the period's start.
    pub(crate) from_ms: i64,
    /// As [`Timing::join_now`], for a join before the late point.
    pub(crate) join_now: i64,
    /// As [`Timing::placement_expire`], for a join before the late point.
    pub(crate) placement_expire: i64,
}

/// The league clock of the engine path while it applies a period's events before
/// the late point `late_from_ms` (unix ms): its last millisecond before it.
pub(crate) fn early_clock(late_from_ms: i64) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::from_timestamp_millis(late_from_ms - 1).unwrap_or_default()
}

fn secs(d: TimeDelta) -> u64 {
    u64::try_from(d.num_seconds()).unwrap_or(0)
}

fn plus(at: i64, ttl: u64) -> i64 {
    at.saturating_add(i64::try_from(ttl).unwrap_or(i64::MAX))
}

impl Timing {
    /// The times of `periods` periods from `first`.
    pub(crate) fn new(season: &Season, first: PeriodId, periods: u64) -> Result<Timing, Error> {
        let skew = TimeDelta::from_std(season.clock.max_skew).unwrap_or_default();
        let player_ttl = season.retention.player_ttl.as_secs();
        let keep = u64::from(season.retention.periods);
        let mut t = Timing {
            join_now: Vec::new(),
            placement_expire: Vec::new(),
            closes: Vec::new(),
            bracket_expire: Vec::new(),
            length_ms: Vec::new(),
            late: Vec::new(),
        };
        // `League::player_ttl_secs` at `now`, from `now`.
        let expire = |now: chrono::DateTime<chrono::Utc>, end: chrono::DateTime<chrono::Utc>| {
            plus(
                now.timestamp(),
                player_ttl.saturating_add(secs(end - now)).max(1),
            )
        };
        for id in first..first + periods {
            let p = season
                .calendar
                .period(id)
                .ok_or(InputError::UnknownPeriod { period: id })?;
            let now = p.end - Duration::milliseconds(1);
            let closes = p.end + skew;
            t.join_now.push(now.timestamp());
            t.placement_expire.push(expire(now, p.end));
            t.late.push(season.brackets.late.map(|l| {
                let from = l.late_from(p.start.timestamp_millis(), p.end.timestamp_millis());
                let early = early_clock(from);
                EarlyJoins {
                    from_ms: from - p.start.timestamp_millis(),
                    join_now: early.timestamp(),
                    placement_expire: expire(early, p.end),
                }
            }));
            t.closes.push(closes.timestamp());
            let ttl = match season.calendar.period(id + keep) {
                Some(later) => secs((later.end - p.end).max(later.end - closes)).max(1),
                None => 10 * 366 * 24 * 3600,
            };
            t.bracket_expire.push(plus(closes.timestamp(), ttl));
            t.length_ms
                .push((p.end - p.start).num_milliseconds().max(1));
        }
        Ok(t)
    }
}
