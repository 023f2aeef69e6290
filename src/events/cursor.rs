//! Where a player's event stream is: a position in each log it reads.
//!
//! A player's events are in three kinds of log: their bracket's (placed, overtaken,
//! outcomes, corrections), their period's (`period.closed`) and their player bucket's
//! (rewards granted and claimed; the bucket's other players' events are skipped). A
//! stream follows the player's latest two periods (the one they play and the one whose
//! rollover may still be writing their outcome), so the cursor holds a position in
//! the bucket's log and, per period, in its bracket's and period's logs. It is the
//! `id` of each server-sent event: a client that reconnects with it as
//! `Last-Event-ID` misses nothing and gets nothing twice.
//!
//! Text form: `v1.<bucket>` then `.<period>.<bracket>.<period log>` per period, each
//! position `ms-seq` (`v1.0-0.45.1767225600000-0.0-0`).

use std::fmt;
use std::str::FromStr;

use crate::store::Pos;

/// Positions in one period's logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PeriodCursor {
    /// The period.
    pub period: u64,
    /// In the player's bracket's log of that period.
    pub bracket: Pos,
    /// In the period's log.
    pub period_log: Pos,
}

impl PeriodCursor {
    /// Before every event of `period`.
    pub fn start(period: u64) -> Self {
        PeriodCursor {
            period,
            bracket: Pos::START,
            period_log: Pos::START,
        }
    }
}

/// Where a player's stream is.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct PlayerCursor {
    /// In the player bucket's log.
    pub bucket: Pos,
    /// Per period followed, oldest first (at most [`PlayerCursor::PERIODS`]).
    pub periods: Vec<PeriodCursor>,
}

impl PlayerCursor {
    /// How many periods a stream follows at once.
    pub const PERIODS: usize = 2;

    /// The positions in `period`'s logs (the start if the cursor has none yet).
    pub fn period(&self, period: u64) -> PeriodCursor {
        self.periods
            .iter()
            .find(|p| p.period == period)
            .copied()
            .unwrap_or(PeriodCursor::start(period))
    }

    /// Follows exactly `periods` (the player's latest placements, any order): the
    /// positions of periods still followed are kept, new ones start at the start.
    pub fn follow(&mut self, periods: &[u64]) {
        let mut next: Vec<PeriodCursor> = periods.iter().map(|&p| self.period(p)).collect();
        next.sort_by_key(|p| p.period);
        next.dedup_by_key(|p| p.period);
        let skip = next.len().saturating_sub(Self::PERIODS);
        self.periods = next.split_off(skip);
    }

    /// Sets the positions of `period` (followed or not).
    pub fn set(&mut self, at: PeriodCursor) {
        match self.periods.iter_mut().find(|p| p.period == at.period) {
            Some(p) => *p = at,
            None => {
                let mut with: Vec<u64> = self.periods.iter().map(|p| p.period).collect();
                with.push(at.period);
                self.follow(&with);
                if let Some(p) = self.periods.iter_mut().find(|p| p.period == at.period) {
                    *p = at;
                }
            }
        }
    }
}

impl fmt::Display for PlayerCursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v1.{}", self.bucket)?;
        for p in &self.periods {
            write!(f, ".{}.{}.{}", p.period, p.bracket, p.period_log)?;
        }
        Ok(())
    }
}

impl FromStr for PlayerCursor {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = |why: &str| {
            format!(
                "{s:?} is not a player stream's event id ({why}): send back an id this \
                 stream sent, or none to start from the oldest event kept"
            )
        };
        let mut parts = s.split('.');
        if parts.next() != Some("v1") {
            return Err(bad("it does not start with v1"));
        }
        let pos = |t: Option<&str>| -> Result<Pos, String> {
            t.ok_or_else(|| bad("it is cut short"))?
                .parse()
                .map_err(|_| bad("a position is malformed"))
        };
        let bucket = pos(parts.next())?;
        let mut periods = Vec::new();
        while let Some(period) = parts.next() {
            if period.is_empty() || !period.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad("a period is not a number"));
            }
            let period = period.parse().map_err(|_| bad("a period is too large"))?;
            periods.push(PeriodCursor {
                period,
                bracket: pos(parts.next())?,
                period_log: pos(parts.next())?,
            });
        }
        if periods.len() > Self::PERIODS || periods.windows(2).any(|w| w[0].period >= w[1].period) {
            return Err(bad("its periods are not two or fewer, in order"));
        }
        Ok(PlayerCursor { bucket, periods })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(ms: u64, seq: u64) -> Pos {
        Pos { ms, seq }
    }

    #[test]
    fn cursors_print_and_parse_back() {
        let mut c = PlayerCursor::default();
        assert_eq!(c.to_string(), "v1.0-0");
        c.follow(&[45]);
        c.set(PeriodCursor {
            period: 45,
            bracket: p(17, 2),
            period_log: p(0, 0),
        });
        c.bucket = p(9, 0);
        let text = c.to_string();
        assert_eq!(text, "v1.9-0.45.17-2.0-0");
        assert_eq!(text.parse::<PlayerCursor>().unwrap(), c);
        for bad in [
            "",
            "v2.0-0",
            "v1",
            "v1.0-0.45",
            "v1.0-0.x.0-0.0-0",
            "v1.0-0.2.0-0.0-0.1.0-0.0-0",
        ] {
            assert!(bad.parse::<PlayerCursor>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn following_keeps_known_positions_and_the_latest_two_periods() {
        let mut c = PlayerCursor::default();
        c.set(PeriodCursor {
            period: 44,
            bracket: p(3, 0),
            period_log: p(4, 0),
        });
        c.follow(&[45, 44]);
        assert_eq!(c.period(44).bracket, p(3, 0));
        assert_eq!(c.period(45), PeriodCursor::start(45));
        c.follow(&[46, 45, 44]);
        assert_eq!(
            c.periods.iter().map(|p| p.period).collect::<Vec<_>>(),
            [45, 46]
        );
    }
}
