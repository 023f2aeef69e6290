//! Score packing: one exact integer that orders by score, then by who got there first.
//!
//! Redis sorts a board by a double. Doubles hold every integer up to 2^53 exactly and
//! no further, so the packed value must stay at or below that bound. We pack
//!
//! ```text
//! packed = score * T + rev        where rev = T - 1 - tick
//! ```
//!
//! `tick` is the event's offset from the start of its period in units of the season's
//! time resolution, and `T` is one more than the number of ticks in the longest period
//! the season can have. Earlier ticks give a larger `rev`, so at equal score the player
//! who reached it first sorts higher. `tick = T - 1` (so `rev = 0`) is reserved for a
//! player who joined but never scored: they sort after everyone with the same score.
//!
//! Unlike the bit shifts of the usual recipe, the multiplier is the exact period
//! length, not the next power of two, so no range is wasted; and [`Packing::new`]
//! refuses any season whose `(max_score + 1) * T` exceeds 2^53 instead of rounding.
//! The property tests in `tests/store/score_props.rs` check the round trip and the order.

use serde::{Deserialize, Serialize};

/// 2^53: every integer in `0..=EXACT_LIMIT` is exactly representable as an f64.
pub const EXACT_LIMIT: u64 = 1 << 53;

/// How a submitted value changes a player's score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ScoreMode {
    /// The value is a delta (may be negative) added to the score.
    Increment,
    /// The score becomes the maximum of the score and the value.
    Best,
    /// The score becomes the value.
    Set,
}

impl ScoreMode {
    /// The name used in the season file and in Lua.
    pub fn as_str(self) -> &'static str {
        match self {
            ScoreMode::Increment => "increment",
            ScoreMode::Best => "best",
            ScoreMode::Set => "set",
        }
    }

    /// Whether a board without the player refuses `value` as their first update (a
    /// negative delta would start the score below 0; the other modes refuse a
    /// negative value whatever the score). Such an update must not place the player.
    pub fn refuses_first(self, value: i64) -> bool {
        value < 0
    }
}

/// An operator's exact change of a score (see [`Packing::adjust`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Adjustment {
    /// Adds this (may be negative) to the score.
    By(i64),
    /// Sets the score to this.
    Set(i64),
}

/// Why an update was refused by the score rules (defined in `crate::error`, with the
/// other errors, so that `error` imports nothing of the crate).
pub use crate::error::ScoreRangeError;

/// The packing parameters of one season: validated once, then used for every update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packing {
    max_score: u64,
    /// `T`: ticks in the longest period plus the reserved "never scored" tick.
    span: u64,
}

/// A season whose scores cannot be packed exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "max_score {max_score} cannot be packed exactly with a period of {ticks} ticks: \
     the largest max_score this schedule and time_resolution allow is {largest}"
)]
pub struct PackingError {
    /// The requested maximum score.
    pub max_score: u64,
    /// Ticks in the longest period.
    pub ticks: u64,
    /// The largest `max_score` that would fit (0 if none would).
    pub largest: u64,
}

impl Packing {
    /// Parameters for scores in `0..=max_score` and periods of at most `ticks` ticks.
    pub fn new(max_score: u64, ticks: u64) -> Result<Self, PackingError> {
        let largest = Self::largest_max_score(ticks);
        let span = ticks.checked_add(1);
        match (span, largest) {
            (Some(span), Some(largest)) if max_score <= largest => Ok(Self { max_score, span }),
            _ => Err(PackingError {
                max_score,
                ticks,
                largest: largest.unwrap_or(0),
            }),
        }
    }

    /// The largest `max_score` that packs exactly with periods of `ticks` ticks, if any.
    pub fn largest_max_score(ticks: u64) -> Option<u64> {
        let span = ticks.checked_add(1)?;
        // (max + 1) * span <= 2^53  <=>  max <= floor(2^53 / span) - 1
        (EXACT_LIMIT / span).checked_sub(1)
    }

    /// The highest score allowed.
    pub fn max_score(&self) -> u64 {
        self.max_score
    }

    /// `T`, the multiplier of the score in the packed value.
    pub fn span(&self) -> u64 {
        self.span
    }

    /// Ticks a period may have; tick values are `0..ticks()`.
    pub fn ticks(&self) -> u64 {
        self.span - 1
    }

    /// Packs a score reached at `tick`. `None` if either is out of range.
    pub fn pack(&self, score: u64, tick: u64) -> Option<u64> {
        if score > self.max_score || tick >= self.ticks() {
            return None;
        }
        Some(score * self.span + (self.span - 1 - tick))
    }

    /// The packed value of a player who joined but has not scored.
    pub fn idle(&self) -> u64 {
        0
    }

    /// Splits a packed value into `(score, tick)`; `tick == None` means never scored.
    pub fn unpack(&self, packed: u64) -> (u64, Option<u64>) {
        let score = packed / self.span;
        let rev = packed % self.span;
        if rev == 0 {
            (score, None)
        } else {
            (score, Some(self.span - 1 - rev))
        }
    }

    /// The pure update rule that both stores implement (Redis in `lua/update.lua`).
    ///
    /// `current` is the player's packed value, if they are on the board. Returns the
    /// new packed value; an update that leaves the score unchanged keeps the old time,
    /// except that a first update of a never-scored entry records its time.
    pub fn apply(
        &self,
        mode: ScoreMode,
        current: Option<u64>,
        value: i64,
        tick: u64,
    ) -> Result<u64, ScoreRangeError> {
        let (cur_score, cur_tick) = match current {
            Some(p) => self.unpack(p),
            None => (0, None),
        };
        let result: i128 = match mode {
            ScoreMode::Increment => cur_score as i128 + value as i128,
            ScoreMode::Best => {
                if value < 0 || value as u64 > self.max_score {
                    value as i128
                } else {
                    (cur_score as i128).max(value as i128)
                }
            }
            ScoreMode::Set => value as i128,
        };
        if result < 0 || result > self.max_score as i128 {
            return Err(ScoreRangeError::OutOfRange {
                current: cur_score,
                value,
                result,
                max: self.max_score,
            });
        }
        let new_score = result as u64;
        // The engine refuses events outside the period before they get here; the clamp
        // only keeps a packed value well-formed if a caller skipped that check.
        let tick = tick.min(self.ticks() - 1);
        let keep_time = current.is_some() && new_score == cur_score && cur_tick.is_some();
        let new_tick = match (keep_time, cur_tick) {
            (true, Some(t)) => t,
            _ => tick,
        };
        Ok(new_score * self.span + (self.span - 1 - new_tick))
    }
}

impl Packing {
    /// The pure rule of an operator's adjustment, which both stores implement (Redis in
    /// `lua/adjust.lua`): the score changes exactly, and keeps the time the current
    /// score was reached (an adjustment is not a play), except a never-scored entry,
    /// which takes `tick`, the adjustment's time.
    pub fn adjust(
        &self,
        current: u64,
        change: Adjustment,
        tick: u64,
    ) -> Result<u64, ScoreRangeError> {
        let (score, at) = self.unpack(current);
        let (value, result) = match change {
            Adjustment::By(n) => (n, score as i128 + n as i128),
            Adjustment::Set(n) => (n, n as i128),
        };
        if result < 0 || result > self.max_score as i128 {
            return Err(ScoreRangeError::OutOfRange {
                current: score,
                value,
                result,
                max: self.max_score,
            });
        }
        let tick = at.unwrap_or(tick.min(self.ticks() - 1));
        Ok(result as u64 * self.span + (self.span - 1 - tick))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weekly_millisecond_limit_is_exact() {
        // A week that contains a DST change has 169 hours.
        let ticks = 169 * 3600 * 1000;
        let largest = Packing::largest_max_score(ticks).unwrap();
        assert_eq!(largest, 14_804_731);
        assert!(Packing::new(largest, ticks).is_ok());
        let err = Packing::new(1_000_000_000, ticks).unwrap_err();
        assert_eq!(err.largest, largest);
        let p = Packing::new(largest, ticks).unwrap();
        let top = p.pack(largest, 0).unwrap();
        assert!(top <= EXACT_LIMIT);
        assert_eq!(top as f64 as u64, top);
    }

    #[test]
    fn unchanged_score_keeps_time() {
        let p = Packing::new(1000, 100).unwrap();
        let first = p.apply(ScoreMode::Best, None, 10, 5).unwrap();
        let again = p.apply(ScoreMode::Best, Some(first), 7, 50).unwrap();
        assert_eq!(first, again);
        let inc0 = p.apply(ScoreMode::Increment, Some(first), 0, 60).unwrap();
        assert_eq!(first, inc0);
        // A never-scored entry takes the time of its first update even at score 0.
        let idle = p.idle();
        let woke = p.apply(ScoreMode::Increment, Some(idle), 0, 9).unwrap();
        assert_eq!(p.unpack(woke), (0, Some(9)));
    }

    #[test]
    fn an_adjustment_keeps_the_time_of_the_score() {
        let p = Packing::new(1000, 100).unwrap();
        let at5 = p.pack(10, 5).unwrap();
        assert_eq!(
            p.adjust(at5, Adjustment::By(-3), 50),
            Ok(p.pack(7, 5).unwrap())
        );
        assert_eq!(
            p.adjust(at5, Adjustment::Set(900), 50),
            Ok(p.pack(900, 5).unwrap())
        );
        assert_eq!(
            p.adjust(p.idle(), Adjustment::By(4), 50),
            Ok(p.pack(4, 50).unwrap())
        );
        assert!(p.adjust(at5, Adjustment::By(-11), 50).is_err());
        assert!(p.adjust(at5, Adjustment::Set(1001), 50).is_err());
    }
}
