//! Cron calendars: occurrences of the season's cron expression, computed on demand
//! and remembered, and the checks that tie croner's answers to the model of
//! `cron_model.rs`.

use std::fmt;
use std::sync::{PoisonError, RwLock};

use chrono::{DateTime, Offset, TimeDelta, Utc};
use chrono_tz::Tz;
use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};

use super::*;

/// Parses a cron expression the way seasons accept it: 5 fields (minute first) or 6
/// (seconds first), or a nickname such as `@daily`.
pub(crate) fn parse_cron(expr: &str) -> Result<Cron, String> {
    let expr = expr.trim();
    let fields = expr.split_whitespace().count();
    if !(expr.starts_with('@') || fields == 5 || fields == 6) {
        return Err(format!(
            "a cron expression has 5 fields (minute hour day-of-month month day-of-week) \
             or 6 (with seconds first); {expr:?} has {fields}"
        ));
    }
    CronParser::builder()
        .seconds(Seconds::Optional)
        .year(Year::Disallowed)
        .build()
        .parse(expr)
        .map_err(|e| format!("invalid cron expression {expr:?}: {e}"))
}

/// The boundaries of a cron calendar, computed on demand and remembered.
pub(super) struct CronIndex {
    pub(super) cron: Cron,
    pub(super) tz: Tz,
    pub(super) horizon: DateTime<Utc>,
    pub(super) known: RwLock<Known>,
}

/// The boundaries computed so far: `at[k]` is the start of period `k + 1`.
pub(super) struct Known {
    pub(super) at: Vec<DateTime<Utc>>,
    /// No boundary after the last one will ever be added (pattern exhausted, horizon or
    /// [`MAX_CRON_PERIODS`] reached).
    pub(super) complete: bool,
}

impl CronIndex {
    pub(super) fn new(
        expr: &str,
        tz: Tz,
        start: DateTime<Utc>,
        horizon: DateTime<Utc>,
    ) -> Result<CronIndex, CalendarError> {
        let cron = parse_cron(expr).map_err(CalendarError::Period)?;
        let index = CronIndex {
            cron,
            tz,
            horizon,
            known: RwLock::new(Known {
                at: vec![start],
                complete: false,
            }),
        };
        if start.timestamp_subsec_nanos() != 0 {
            return Err(CalendarError::Start(format!(
                "{} has a fraction of a second, but cron occurrences fall on whole seconds; \
                 drop the fraction",
                start.to_rfc3339()
            )));
        }
        let never = || {
            CalendarError::Period(format!(
                "the cron expression {expr:?} has no occurrence after the start ({}); \
                 use a pattern that matches real dates",
                start.to_rfc3339()
            ))
        };
        let first = index
            .next_after(
                start
                    .checked_sub_signed(TimeDelta::seconds(1))
                    .unwrap_or(start),
            )
            .ok_or_else(never)?;
        if first != start {
            let next = index.next_after(start).ok_or_else(never)?;
            let local = next.with_timezone(&tz);
            let in_utc = if local.offset().fix().local_minus_utc() == 0 {
                String::new()
            } else {
                format!(" ({})", next.to_rfc3339())
            };
            return Err(CalendarError::Start(format!(
                "{} is not an occurrence of the cron expression {expr:?} in {}; \
                 the next occurrence after it is {}{in_utc}: set start to an occurrence",
                start.with_timezone(&tz).to_rfc3339(),
                tz.name(),
                local.to_rfc3339(),
            )));
        }
        Ok(index)
    }

    /// The next occurrence strictly after `t` (in UTC), if there is one.
    pub(super) fn next_after(&self, t: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let mut from = t;
        // croner searches forward in wall-clock time. From the later of two equal
        // wall-clock times (a start given in an autumn fold) its next occurrence can be
        // an earlier instant, so keep searching from there; each search advances the
        // wall clock, and a fold lasts at most a few hours of seconds.
        for _ in 0..20_000 {
            let next = self
                .cron
                .find_next_occurrence(&from.with_timezone(&self.tz), false)
                .ok()?
                .with_timezone(&Utc);
            if next > t {
                return Some(next);
            }
            from = next;
        }
        None
    }

    /// Proves the longest period over the whole calendar and finds where it ends: from
    /// the model of the pattern when croner agrees with it, else by enumerating every
    /// occurrence.
    pub(super) fn analyse(
        &self,
        start: DateTime<Utc>,
        horizon: DateTime<Utc>,
        limit: DateTime<Utc>,
    ) -> Result<CronReach, CalendarError> {
        if let Some(model) = CronModel::new(self, start, horizon, limit)?
            && let Some(reach) = model.reach(self, start, horizon)
        {
            return Ok(reach);
        }
        self.scan_exact(start, horizon)
    }

    /// The fallback of [`CronIndex::analyse`]: enumerates the calendar's occurrences
    /// (remembering them for later lookups) and measures every period.
    pub(super) fn scan_exact(
        &self,
        start: DateTime<Utc>,
        horizon: DateTime<Utc>,
    ) -> Result<CronReach, CalendarError> {
        self.extend_until(|_| false);
        let known = self.known.read().unwrap_or_else(PoisonError::into_inner);
        let at = &known.at;
        let len = at.len() as u64;
        let before_horizon = at.partition_point(|b| *b < horizon) as u64;
        let capped = before_horizon > MAX_CRON_PERIODS;
        let periods = before_horizon
            .min(MAX_CRON_PERIODS)
            .min(len.saturating_sub(1));
        let ended = !capped && before_horizon >= len;
        let (Some(last_start), Some(last_end)) = (
            periods.checked_sub(1).and_then(|k| at.get(k as usize)),
            at.get(periods as usize),
        ) else {
            return Err(CalendarError::Period(format!(
                "the cron expression {:?} has no occurrence after the start ({}); \
                 use a pattern that matches real dates",
                self.cron.as_str(),
                start.to_rfc3339()
            )));
        };
        if ended {
            // croner gave up: it does not cross a DST gap of more than two hours (such as
            // the day Samoa skipped) with a fixed-time pattern, nor the year 5000.
            return Err(CalendarError::Period(format!(
                "the cron expression {:?} has no occurrence after {} in {} (the cron library \
                 gives up at a DST gap of more than two hours, such as a skipped day), so the \
                 calendar would end long before 100 years; use a start after that date or \
                 another pattern",
                self.cron.as_str(),
                last_end.to_rfc3339(),
                self.tz.name()
            )));
        }
        let max = at[..=periods as usize]
            .windows(2)
            .map(|w| (w[1] - w[0]).num_milliseconds().unsigned_abs())
            .max()
            .unwrap_or(0);
        Ok(CronReach {
            max_period_millis: max,
            last: Period {
                id: periods,
                start: *last_start,
                end: *last_end,
            },
            capped,
        })
    }

    /// Whether boundaries `k` and `k + 1` of `model` are consecutive occurrences for
    /// croner too.
    pub(super) fn confirms(&self, model: &CronModel, k: u64) -> bool {
        let (Some(first), Some(second)) = (model.boundary(k), model.boundary(k + 1)) else {
            return false;
        };
        let Some(just_before) = first.checked_sub_signed(TimeDelta::seconds(1)) else {
            return false;
        };
        self.next_after(just_before) == Some(first) && self.next_after(first) == Some(second)
    }

    /// Computes boundaries until `done` says enough or nothing more can be added.
    pub(super) fn extend_until(&self, done: impl Fn(&Known) -> bool) {
        {
            let known = self.known.read().unwrap_or_else(PoisonError::into_inner);
            if known.complete || done(&known) {
                return;
            }
        }
        let mut known = self.known.write().unwrap_or_else(PoisonError::into_inner);
        while !known.complete && !done(&known) {
            let Some(&last) = known.at.last() else {
                known.complete = true;
                break;
            };
            // The last boundary we keep is the end of the last period that starts
            // before the horizon, and the end of period MAX_CRON_PERIODS.
            if last >= self.horizon || known.at.len() as u64 > MAX_CRON_PERIODS {
                known.complete = true;
                break;
            }
            match self.next_after(last) {
                Some(next) => known.at.push(next),
                None => known.complete = true,
            }
        }
    }

    /// `(start, end)` of period `k + 1`, if it exists.
    pub(super) fn period(&self, k: u64) -> Option<(DateTime<Utc>, DateTime<Utc>)> {
        if k >= MAX_CRON_PERIODS {
            return None;
        }
        let k = usize::try_from(k).ok()?;
        self.extend_until(|known| known.at.len() > k + 1);
        let known = self.known.read().unwrap_or_else(PoisonError::into_inner);
        let start = *known.at.get(k)?;
        let end = *known.at.get(k + 1)?;
        (start < self.horizon).then_some((start, end))
    }

    /// `(k, start, end)` of the period containing `at` (period id `k + 1`).
    pub(super) fn locate(&self, at: DateTime<Utc>) -> Option<(u64, DateTime<Utc>, DateTime<Utc>)> {
        self.extend_until(|known| known.at.last().is_some_and(|last| *last > at));
        let known = self.known.read().unwrap_or_else(PoisonError::into_inner);
        // The number of boundaries at or before `at`; `at` is at or after the start.
        let after = known.at.partition_point(|b| *b <= at);
        let k = after.checked_sub(1)?;
        let start = *known.at.get(k)?;
        let end = *known.at.get(k + 1)?;
        if start >= self.horizon || k as u64 >= MAX_CRON_PERIODS {
            return None;
        }
        Some((k as u64, start, end))
    }
}

impl fmt::Debug for CronIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CronIndex")
            .field("cron", &self.cron.as_str())
            .field("tz", &self.tz)
            .finish_non_exhaustive()
    }
}
