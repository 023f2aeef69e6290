//! The model that proves a cron calendar's longest period over the whole calendar:
//! matching days times the times of day, in wall-clock time, plus every period that
//! contains a change of the zone's UTC offset, measured exactly.

use std::collections::BTreeMap;

use chrono::{DateTime, Datelike, Days, NaiveDate, NaiveTime, Offset, TimeDelta, Timelike, Utc};
use chrono_tz::Tz;
use croner::{Cron, JobType};

use super::*;

/// What the season loader learns about a cron calendar.
pub(super) struct CronReach {
    pub(super) max_period_millis: u64,
    pub(super) last: Period,
    pub(super) capped: bool,
}

/// A change of the zone's UTC offset.
#[derive(Debug, Clone, Copy)]
pub(super) struct Transition {
    /// The first instant with the new offset.
    pub(super) at: DateTime<Utc>,
    /// The offsets before and after, in seconds east of UTC.
    pub(super) before: i32,
    pub(super) after: i32,
}

/// A model of a cron calendar that needs no enumeration (see the module docs): the
/// occurrences are the pattern's times of day on each matching day, in wall-clock time,
/// less those a DST gap swallows, each at the first instant its wall-clock time is
/// reached (the earlier one in a fold, the end of the gap for a fixed-time job).
pub(super) struct CronModel {
    pub(super) tz: Tz,
    /// Seconds after midnight at which the pattern fires on a matching day, ascending.
    pub(super) times: Vec<u32>,
    /// The matching days, from the start's local date to the first day whose occurrences
    /// all fall after the horizon.
    pub(super) days: Vec<NaiveDate>,
    /// The start's index in `times` (on `days[0]`).
    pub(super) first: usize,
    /// Ranges of indices in `times` that a DST gap swallows, by index in `days`
    /// (ascending and disjoint); only interval jobs lose occurrences to a gap.
    pub(super) skips: BTreeMap<usize, Vec<(usize, usize)>>,
    /// `prefix[j]`: how many boundaries fall on `days[..j]`.
    pub(super) prefix: Vec<u64>,
    /// The zone's offset changes from shortly before the start to after the last day.
    pub(super) transitions: Vec<Transition>,
    /// The spread of the zone's offsets over the same range, in milliseconds.
    pub(super) spread: u64,
}

impl CronModel {
    /// The model of `index`'s calendar; `Ok(None)` if the model does not apply (a DST
    /// gap that crosses midnight) and the calendar must be enumerated instead.
    pub(super) fn new(
        index: &CronIndex,
        start: DateTime<Utc>,
        horizon: DateTime<Utc>,
        limit: DateTime<Utc>,
    ) -> Result<Option<CronModel>, CalendarError> {
        let tz = index.tz;
        let times = times_of_day(&index.cron);
        let day0 = start.with_timezone(&tz).date_naive();
        // A day two days after the horizon's UTC date has all its wall-clock times more
        // than a day after the horizon, and no zone is a day away from UTC: all of its
        // occurrences come after the horizon, so the calendar's last period ends by then.
        let Some(beyond) = horizon.date_naive().checked_add_days(Days::new(2)) else {
            return Ok(None);
        };
        let mut days = Vec::with_capacity(HORIZON_DAYS as usize + 3);
        let mut day = day0;
        loop {
            if date_matches(&index.cron, day) {
                days.push(day);
                if day >= beyond {
                    break;
                }
            }
            if day > beyond && day.year() >= 5000 {
                // croner finds nothing in the year 5000: the last period would never end.
                let last = days
                    .last()
                    .map_or(limit, |d| d.and_time(NaiveTime::MIN).and_utc().min(limit));
                let latest = shift(last, -(HORIZON_DAYS as i64) - 3);
                return Err(too_late(start, None, limit, latest, true));
            }
            match day.succ_opt() {
                Some(next) => day = next,
                None => return Ok(None),
            }
        }
        if times.is_empty() || days.first() != Some(&day0) {
            return Ok(None);
        }
        let Some(last_day) = days.last() else {
            return Ok(None);
        };
        let to = shift(last_day.and_time(NaiveTime::MIN).and_utc(), 2);
        let (transitions, spread) = offset_changes(&tz, shift(start, -2), to);

        let fixed_time = index.cron.determine_job_type() == JobType::FixedTime;
        let mut skips: BTreeMap<usize, Vec<(usize, usize)>> = BTreeMap::new();
        for t in transitions.iter().filter(|t| t.after > t.before) {
            // The wall clock jumps from `from` to `to`: the times in between do not exist.
            let utc = t.at.naive_utc();
            let from = utc + TimeDelta::seconds(i64::from(t.before));
            let to = utc + TimeDelta::seconds(i64::from(t.after));
            let last_missing = to - TimeDelta::seconds(1);
            // Only a gap on a day the pattern fires on changes anything.
            let touched = days.partition_point(|d| *d < from.date())
                ..days.partition_point(|d| *d <= last_missing.date());
            if touched.is_empty() {
                continue;
            }
            if fixed_time {
                // croner moves a fixed-time occurrence in the gap to its end and keeps it
                // if that date matches too; the model needs it to be the same date.
                if from.date() != to.date() {
                    return Ok(None);
                }
                continue;
            }
            // croner skips an interval job's occurrences in the gap; the model needs the
            // gap within one day (Samoa's skipped day is; Toronto's 23:30 to 00:30 in
            // 1919 is not).
            if from.date() != last_missing.date() {
                return Ok(None);
            }
            let j = touched.start;
            let to_secs = if to.date() == from.date() {
                to.num_seconds_from_midnight()
            } else {
                86_400
            };
            let lo = times.partition_point(|s| *s < from.num_seconds_from_midnight());
            let hi = times.partition_point(|s| *s < to_secs);
            if lo < hi {
                skips.entry(j).or_default().push((lo, hi));
            }
        }
        for ranges in skips.values_mut() {
            ranges.sort_unstable();
            // Two gaps on one day (none known) would overlap only if the model were
            // wrong; merging keeps the ranges disjoint either way.
            let mut merged: Vec<(usize, usize)> = Vec::with_capacity(ranges.len());
            for &(lo, hi) in ranges.iter() {
                match merged.last_mut() {
                    Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
                    _ => merged.push((lo, hi)),
                }
            }
            *ranges = merged;
        }

        let mut model = CronModel {
            tz,
            times,
            days,
            first: 0,
            skips,
            prefix: Vec::new(),
            transitions,
            spread,
        };
        // The start is the first occurrence on its day that is not before it.
        let mut first = model
            .times
            .partition_point(|s| model.instant(0, *s).is_some_and(|t| t < start));
        if let Some(ranges) = model.skips.get(&0) {
            for &(lo, hi) in ranges {
                if (lo..hi).contains(&first) {
                    first = hi;
                }
            }
        }
        let start_time = model.times.get(first).copied();
        if start_time.and_then(|s| model.instant(0, s)) != Some(start) {
            return Ok(None);
        }
        model.first = first;
        let mut prefix = Vec::with_capacity(model.days.len() + 1);
        let mut total = 0u64;
        prefix.push(total);
        for j in 0..model.days.len() {
            total += model.count_on_day(j);
            prefix.push(total);
        }
        model.prefix = prefix;
        Ok(Some(model))
    }

    /// The instant of the wall-clock time `secs` after midnight on `days[j]`.
    pub(super) fn instant(&self, j: usize, secs: u32) -> Option<DateTime<Utc>> {
        let time = NaiveTime::from_num_seconds_from_midnight_opt(secs, 0)?;
        resolve_local(&self.tz, self.days.get(j)?.and_time(time))
    }

    /// The first index in `times` that can hold a boundary on `days[j]`.
    pub(super) fn first_on_day(&self, j: usize) -> usize {
        if j == 0 { self.first } else { 0 }
    }

    /// How many boundaries fall on `days[j]`.
    pub(super) fn count_on_day(&self, j: usize) -> u64 {
        let lo = self.first_on_day(j);
        let mut n = self.times.len().saturating_sub(lo);
        for &(a, b) in self.skips.get(&j).map_or(&[][..], |r| r.as_slice()) {
            n = n.saturating_sub(b.max(lo).saturating_sub(a.max(lo)));
        }
        n as u64
    }

    /// The index in `times` of the `r`-th boundary (from 0) on `days[j]`.
    pub(super) fn nth_on_day(&self, j: usize, r: u64) -> Option<usize> {
        let lo = self.first_on_day(j);
        let mut i = lo.checked_add(usize::try_from(r).ok()?)?;
        for &(a, b) in self.skips.get(&j).map_or(&[][..], |r| r.as_slice()) {
            let (a, b) = (a.max(lo), b.max(lo));
            if i >= a {
                i += b - a;
            } else {
                break;
            }
        }
        (i < self.times.len()).then_some(i)
    }

    /// Boundary `n` (the start of period `n + 1`), if the model reaches it.
    pub(super) fn boundary(&self, n: u64) -> Option<DateTime<Utc>> {
        if n >= *self.prefix.last()? {
            return None;
        }
        let j = self.prefix.partition_point(|p| *p <= n).checked_sub(1)?;
        let i = self.nth_on_day(j, n - self.prefix.get(j)?)?;
        self.instant(j, *self.times.get(i)?)
    }

    /// How many boundaries are before `t` (boundaries only increase).
    pub(super) fn count_before(&self, t: DateTime<Utc>) -> Option<u64> {
        let (mut lo, mut hi) = (0, *self.prefix.last()?);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.boundary(mid)? < t {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Some(lo)
    }

    /// The calendar's longest period and last period, if croner agrees with the model
    /// wherever it is checked; `None` sends the caller to the exact enumeration.
    pub(super) fn reach(
        &self,
        index: &CronIndex,
        start: DateTime<Utc>,
        horizon: DateTime<Utc>,
    ) -> Option<CronReach> {
        let total = *self.prefix.last()?;
        let before_horizon = self.count_before(horizon)?;
        // The model reaches past the horizon by construction; anything else is a bug in
        // it, and the enumeration will do.
        if before_horizon == 0 || before_horizon >= total {
            return None;
        }
        let capped = before_horizon > MAX_CRON_PERIODS;
        let periods = before_horizon.min(MAX_CRON_PERIODS);
        let last = Period {
            id: periods,
            start: self.boundary(periods - 1)?,
            end: self.boundary(periods)?,
        };

        // croner must agree on the first occurrences and on the last period.
        if self.boundary(0)? != start {
            return None;
        }
        for k in 0..CRON_CHECK_FIRST.min(total - 1) {
            if index.next_after(self.boundary(k)?) != self.boundary(k + 1) {
                return None;
            }
        }
        if !index.confirms(self, periods - 1) {
            return None;
        }

        // Periods without an offset change: as long in UTC as in wall-clock time, and
        // consecutive in the pattern (a gap that swallows occurrences is an offset
        // change), so at most the longest wall-clock gap of the pattern.
        let first_time = i64::from(*self.times.first()?);
        let last_time = i64::from(*self.times.last()?);
        let mut wall_secs: i64 = self
            .times
            .windows(2)
            .map(|w| i64::from(w[1] - w[0]))
            .max()
            .unwrap_or(0);
        for j in 0..self.days.len().saturating_sub(1) {
            // The pair (last time on day j, first time on day j + 1) is a period only if
            // the first of them starts before the horizon.
            if *self.prefix.get(j + 1)? > before_horizon {
                break;
            }
            let days = (*self.days.get(j + 1)? - *self.days.get(j)?).num_days();
            wall_secs = wall_secs.max(days * 86_400 + first_time - last_time);
        }
        // The DST margin of earlier versions: redundant with the exact periods below,
        // kept as insurance.
        let mut max = u64::try_from(wall_secs)
            .ok()?
            .checked_mul(1000)?
            .checked_add(self.spread)?;

        // Periods that contain an offset change: measured exactly, and checked.
        let end = self.boundary(before_horizon)?;
        let mut measured = None;
        for t in &self.transitions {
            if t.at <= start || t.at > end {
                continue;
            }
            let k = self.count_before(t.at)?.checked_sub(1)?;
            // A long period may contain many changes (a leap-day pattern, all those of
            // eight years): measure it once.
            if measured == Some(k) {
                continue;
            }
            measured = Some(k);
            if !index.confirms(self, k) {
                return None;
            }
            let length = self.boundary(k + 1)? - self.boundary(k)?;
            max = max.max(u64::try_from(length.num_milliseconds()).ok()?);
        }
        Some(CronReach {
            max_period_millis: max,
            last,
            capped,
        })
    }
}

/// The seconds after midnight at which `cron` fires on a day whose date matches,
/// ascending. croner matches the second, minute and hour each on its own, and
/// independently of the date.
pub(super) fn times_of_day(cron: &Cron) -> Vec<u32> {
    let p = &cron.pattern;
    let hours: Vec<u32> = (0..24)
        .filter(|h| p.hour_match(*h).unwrap_or(false))
        .collect();
    let minutes: Vec<u32> = (0..60)
        .filter(|m| p.minute_match(*m).unwrap_or(false))
        .collect();
    let seconds: Vec<u32> = (0..60)
        .filter(|s| p.second_match(*s).unwrap_or(false))
        .collect();
    let mut out = Vec::with_capacity(hours.len() * minutes.len() * seconds.len());
    for h in &hours {
        for m in &minutes {
            for s in &seconds {
                out.push(h * 3600 + m * 60 + s);
            }
        }
    }
    out
}

/// Whether `cron` fires on `day` (at its times of day): croner's own date test.
pub(super) fn date_matches(cron: &Cron, day: NaiveDate) -> bool {
    let p = &cron.pattern;
    p.month_match(day.month()).unwrap_or(false)
        && p.year_match(day.year()).unwrap_or(false)
        && p.day_match(day.year(), day.month(), day.day())
            .unwrap_or(false)
}

/// The changes of `tz`'s UTC offset between `from` and `to`, and the spread of the
/// offsets in use (milliseconds). The offset is sampled daily and each change located to
/// the second by bisection (the tz database changes offsets on whole seconds).
pub(super) fn offset_changes(
    tz: &Tz,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> (Vec<Transition>, u64) {
    // Out of chrono's range only for instants the calendar refuses before this.
    let at = |secs: i64| DateTime::from_timestamp(secs, 0).unwrap_or(from);
    let offset = |secs: i64| at(secs).with_timezone(tz).offset().fix().local_minus_utc();
    let end = to.timestamp();
    let mut t = from.timestamp();
    let mut current = offset(t);
    let (mut lo, mut hi) = (current, current);
    let mut changes = Vec::new();
    while t < end {
        let next = t.saturating_add(TRANSITION_SAMPLE_SECS).min(end);
        if offset(next) == current {
            t = next;
            continue;
        }
        // offset(a) == current != offset(b)
        let (mut a, mut b) = (t, next);
        while b - a > 1 {
            let mid = a + (b - a) / 2;
            if offset(mid) == current {
                a = mid;
            } else {
                b = mid;
            }
        }
        let after = offset(b);
        changes.push(Transition {
            at: at(b),
            before: current,
            after,
        });
        lo = lo.min(after);
        hi = hi.max(after);
        current = after;
        t = b;
    }
    let spread = u64::try_from(i64::from(hi) - i64::from(lo)).unwrap_or(0) * 1000;
    (changes, spread)
}
