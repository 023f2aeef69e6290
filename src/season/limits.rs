//! The `[limits]` section of the season file: plausibility limits on score updates,
//! and the pure rules that both stores apply inside an update (Redis in
//! `store/redis/lua/update.lua`; the two must stay equal).
//!
//! Every key is optional; a season without the section has no limits and its updates
//! pay nothing for them:
//!
//! - `max_value`: the largest |value| one update may carry;
//! - `rate = "N/DURATION"`: the most updates a player may send in a window, as a
//!   GCRA (a leaky bucket: a burst of `N` at once, then one every `DURATION / N`).
//!   The state lives with the player's bracket, and a player has one bracket per
//!   period, so the window starts afresh with each period;
//! - `max_period_score`: the largest score a player may reach in one period (at most
//!   `scoring.max_score`).
//!
//! Owns: the section's shape, its checks and the limit rules. Must not: touch a store.

use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

pub use crate::error::Limit;
use crate::error::{ConfigError, InputError};
use crate::season::packing::EXACT_LIMIT;

use super::parse::{Src, fmt_duration, parse_duration};

/// `[limits]`: what one player's updates may do. `Limits::default()` limits nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct Limits {
    /// The largest |value| one update may carry.
    pub max_value: Option<u64>,
    /// The most updates a player may send in a window.
    pub rate: Option<Rate>,
    /// The largest score a player may reach in one period.
    pub max_period_score: Option<u64>,
}

/// `limits.rate`: at most `count` updates in any `window`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Rate {
    /// Updates allowed in a window (1 or more).
    pub count: u64,
    /// The window.
    pub window: Duration,
}

/// Bounds of the rate's window.
const MIN_WINDOW: Duration = Duration::from_millis(1);
const MAX_WINDOW: Duration = Duration::from_secs(86_400);
/// Longest allowed skew (see `clock.max_skew`): an update may arrive that long after
/// its period's end.
const SKEW_ROOM_MS: u64 = 600_000;

impl Limits {
    /// True when no limit is set: updates skip every limit check.
    pub fn is_empty(&self) -> bool {
        self.max_value.is_none() && self.rate.is_none() && self.max_period_score.is_none()
    }

    /// Whether one update may carry `value`.
    pub fn value_allowed(&self, value: i64) -> bool {
        self.max_value.is_none_or(|m| value.unsigned_abs() <= m)
    }

    /// Whether a player may reach `score` in one period.
    pub fn score_allowed(&self, score: u64) -> bool {
        self.max_period_score.is_none_or(|m| score <= m)
    }

    /// The error of an update refused by `limit`: `got` is the |value| or the score
    /// it would have given, `retry_after_ms` the rate's wait.
    pub fn exceeded(&self, limit: Limit, got: i128, retry_after_ms: u64) -> InputError {
        InputError::LimitExceeded {
            limit,
            rule: self.rule(limit),
            got: if limit == Limit::Rate { 0 } else { got },
            retry_after_ms: (limit == Limit::Rate).then_some(retry_after_ms),
        }
    }

    /// The setting that names `limit`, as written in the season file.
    pub fn rule(&self, limit: Limit) -> String {
        match limit {
            Limit::MaxValue => format!("limits.max_value = {}", self.max_value.unwrap_or(0)),
            Limit::MaxPeriodScore => format!(
                "limits.max_period_score = {}",
                self.max_period_score.unwrap_or(0)
            ),
            Limit::Rate => match self.rate {
                Some(r) => format!("limits.rate = \"{}/{}\"", r.count, fmt_duration(r.window)),
                None => "limits.rate".to_owned(),
            },
        }
    }
}

impl Rate {
    /// The window in milliseconds.
    pub fn window_ms(&self) -> u64 {
        self.window.as_millis() as u64
    }

    /// The rate rule (GCRA) for an update `elapsed_ms` after its period's start, given
    /// the player's stored "theoretical arrival time" (`tat`, none before the first
    /// update of the period). Times are kept in units of 1/`count` ms from the
    /// period's start, so every number is an exact integer: an update costs `window`
    /// units, and is allowed while the new arrival time stays within `window × count`
    /// units of now. `Ok(new tat)`, or `Err(milliseconds until it would be allowed)`.
    pub fn admit(&self, tat: Option<u64>, elapsed_ms: u64) -> Result<u64, u64> {
        let w = self.window_ms();
        let now = elapsed_ms * self.count;
        let next = tat.unwrap_or(0).max(now) + w;
        let burst = w * self.count;
        if next - now <= burst {
            Ok(next)
        } else {
            Err((next - now - burst).div_ceil(self.count))
        }
    }
}

/// `[limits]` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLimits {
    max_value: Option<Spanned<i64>>,
    rate: Option<Spanned<String>>,
    max_period_score: Option<Spanned<i64>>,
}

/// `[limits]`, or no limits when the section is absent. `max_score` is the season's
/// (a period score cannot exceed it), `period_ms` the calendar's longest period.
pub(super) fn parse(
    src: &Src<'_>,
    raw: Option<&RawLimits>,
    max_score: u64,
    period_ms: u64,
) -> Result<Limits, ConfigError> {
    let Some(raw) = raw else {
        return Ok(Limits::default());
    };
    let mut limits = Limits::default();
    if let Some(v) = &raw.max_value {
        limits.max_value = Some(src.int_in(v, "limits.max_value", 1, i64::MAX)? as u64);
    }
    if let Some(v) = &raw.max_period_score {
        let n = *v.get_ref();
        if n > max_score as i64 {
            return Err(src.at(
                v.span(),
                format!(
                    "limits.max_period_score = {n} is above scoring.max_score = {max_score}, \
                     which no score can pass; lower it to at most {max_score}, or remove it"
                ),
            ));
        }
        limits.max_period_score =
            Some(src.int_in(v, "limits.max_period_score", 0, i64::MAX)? as u64);
    }
    if let Some(v) = &raw.rate {
        let rate = parse_rate(v.get_ref(), period_ms)
            .map_err(|m| src.at(v.span(), format!("limits.rate: {m}")))?;
        limits.rate = Some(rate);
    }
    Ok(limits)
}

/// `"N/DURATION"`, such as `"30/1m"`, whose arithmetic stays exact over a period of
/// `period_ms`.
fn parse_rate(text: &str, period_ms: u64) -> Result<Rate, String> {
    let how = "write the most updates a player may send, '/', and a window of 1ms to 1d \
               (e.g. \"30/1m\": 30 updates a minute)";
    let Some((n, window)) = text.split_once('/') else {
        return Err(format!("{text:?} is not a rate; {how}"));
    };
    let count: u64 = n
        .trim()
        .parse()
        .ok()
        .filter(|n| *n >= 1)
        .ok_or_else(|| format!("{text:?}: {n:?} is not a count of 1 or more; {how}"))?;
    let window = parse_duration(window, MIN_WINDOW, MAX_WINDOW).map_err(|m| {
        format!("{text:?}: the window {m}; a rate is N/DURATION, such as \"30/1m\"")
    })?;
    let w = window.as_millis() as u64;
    // The largest arrival time the rule computes, in 1/count ms.
    let top = (period_ms + SKEW_ROOM_MS + 2 * w)
        .checked_mul(count)
        .filter(|t| *t <= EXACT_LIMIT);
    if top.is_none() {
        return Err(format!(
            "{text:?} allows too many updates to count exactly over a period; \
             use a smaller count per window (such as a shorter window)"
        ));
    }
    Ok(Rate { count, window })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_allows_a_burst_then_one_per_interval() {
        let r = parse_rate("3/3s", 86_400_000).unwrap();
        let mut tat = None;
        for _ in 0..3 {
            tat = Some(r.admit(tat, 1000).unwrap());
        }
        assert_eq!(r.admit(tat, 1000), Err(1000));
        assert_eq!(r.admit(tat, 1999), Err(1));
        let t = r.admit(tat, 2000).unwrap();
        assert_eq!(r.admit(Some(t), 2000), Err(1000));
        // Long after, a full burst again.
        assert!(r.admit(Some(t), 60_000).is_ok());
    }

    #[test]
    fn bad_rates_say_how_to_write_one() {
        for bad in ["30", "0/1m", "x/1m", "30/1y", "30/0s", "30/2d"] {
            let m = parse_rate(bad, 86_400_000).unwrap_err();
            assert!(m.contains("30/1m") || m.contains("from 1ms"), "{bad}: {m}");
        }
        assert!(parse_rate("1000000000/1d", 604_800_000).is_err());
    }
}
