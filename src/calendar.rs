//! The period calendar: pure, DST-correct period boundaries from the season's schedule.
//!
//! Periods are numbered from 1; period 1 starts at `schedule.start`, and every period
//! ends exactly where the next one starts, so periods tile time without gaps or overlaps.
//!
//! # Daily and weekly periods
//!
//! Boundary `k` (the start of period `k + 1`) is the start's *local* wall-clock time,
//! `k` days (or weeks) after the start's local date, in the season's zone. Wall-clock
//! times that do not exist or exist twice are resolved the way a person reading a clock
//! would expect:
//!
//! - in a spring-forward gap (e.g. 02:30 on the night clocks jump from 02:00 to 03:00)
//!   the boundary is the first instant after the gap (03:00 new time);
//! - in an autumn fold (a wall-clock time that happens twice) it is the earlier instant.
//!
//! So a weekly period in a zone with DST lasts 167 h, 168 h or 169 h. Both lookups are
//! O(1): [`Calendar::period_at`] estimates the index from the elapsed time and corrects it
//! by a step or two (the estimate is off by at most the zone's offset changes), and
//! [`Calendar::period`] computes the two boundaries directly.
//!
//! # Cron periods
//!
//! Boundaries are the occurrences of the cron expression in the season's zone, evaluated
//! by `croner` (which also snaps an occurrence inside a DST gap to the end of the gap and
//! runs a fixed-time occurrence in a fold once, at the earlier instant). Occurrences
//! cannot be counted without enumerating them, so the calendar remembers every boundary
//! it has computed (a sorted list shared by all clones of the calendar) and answers
//! lookups by binary search; the list only grows, on demand, as far as lookups reach
//! (the first lookup a year ahead of an hourly pattern steps through ~8 760 occurrences,
//! a few milliseconds; later ones are a binary search).
//!
//! The expression has 5 fields (minute first) or 6 (seconds first), or is a nickname such
//! as `@daily`; `start` must itself be an occurrence (which also makes it a whole second).
//!
//! # Odd zones
//!
//! When a zone skips a whole day (Samoa skipped 2011-12-30), that day's daily boundary
//! coincides with the next one and its period is empty (`start == end`): it still has an
//! id, so ids stay dense, but [`Calendar::period_at`] never returns it.
//!
//! # Horizon
//!
//! A calendar covers the periods that start less than 100 years (36 525 days) after the
//! season's start, and for cron schedules at most [`MAX_CRON_PERIODS`] periods. Outside
//! that range the lookups return `None`, which keeps every lookup bounded in time.

use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, PoisonError, RwLock};

use chrono::{
    DateTime, Datelike, Days, LocalResult, NaiveDateTime, Offset, TimeDelta, TimeZone, Utc,
};
use chrono_tz::{GapInfo, Tz};
use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};

use crate::config::{PeriodRule, Schedule};

/// A period's id: 1 for the period that begins at the season's start, then 2, 3, ...
pub type PeriodId = u64;

/// How far past the start the calendar reaches: 100 years of days.
const HORIZON_DAYS: u64 = 36_525;

/// The most periods a cron calendar has. Each one costs a few bytes once looked up, so
/// this bounds memory (about 12 MB) and the one-off cost of a lookup far in the future.
pub const MAX_CRON_PERIODS: u64 = 1_000_000;

/// How many cron occurrences [`Calendar::max_period_millis`] inspects at most.
const CRON_SCAN_OCCURRENCES: usize = 1_000;

/// How far (in days) the cron scan looks at most: 28 years is the cycle after which
/// dates fall on the same weekdays again (between 1901 and 2099), so patterns that mix
/// days of the month and of the week show their longest gap within it.
const CRON_SCAN_DAYS: u64 = 28 * 366;

/// How often the zone's UTC offset is sampled to find its range. Every tz database zone
/// keeps an offset for weeks at least, so a weekly sample sees every offset in use.
const OFFSET_SAMPLE_DAYS: u64 = 7;

const MILLIS_PER_DAY: u64 = 86_400_000;

/// One period: `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Period {
    /// The id.
    pub id: PeriodId,
    /// First instant in the period.
    pub start: DateTime<Utc>,
    /// First instant after the period.
    pub end: DateTime<Utc>,
}

/// Computes period boundaries. Pure: no I/O, no clock.
///
/// Cloning is cheap; clones of a cron calendar share the boundaries already computed.
#[derive(Clone)]
pub struct Calendar {
    schedule: Schedule,
    rule: Rule,
    /// Periods start strictly before this instant.
    horizon: DateTime<Utc>,
    max_period_millis: u64,
}

#[derive(Clone)]
enum Rule {
    /// Daily (`step_days == 1`) or weekly (`step_days == 7`).
    Fixed {
        step_days: u64,
        /// The start in the zone's wall-clock time: every boundary has its time of day.
        first_local: NaiveDateTime,
    },
    Cron(Arc<CronIndex>),
}

/// Why a schedule cannot make a calendar, split by the setting that is at fault so the
/// season loader can point at the right line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CalendarError {
    /// `schedule.period` is wrong (an invalid or never-matching cron expression).
    Period(String),
    /// `schedule.start` is wrong (not an occurrence of the cron expression, out of range).
    Start(String),
}

impl fmt::Display for CalendarError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CalendarError::Period(m) => write!(f, "schedule.period: {m}"),
            CalendarError::Start(m) => write!(f, "schedule.start {m}"),
        }
    }
}

impl Calendar {
    /// A calendar for `schedule`; errors say what is wrong with it.
    pub fn new(schedule: &Schedule) -> Result<Calendar, String> {
        Calendar::build(schedule).map_err(|e| e.to_string())
    }

    /// Like [`Calendar::new`], but says which setting is at fault.
    pub(crate) fn build(schedule: &Schedule) -> Result<Calendar, CalendarError> {
        let tz = schedule.timezone;
        let start = schedule.start;
        // RFC 3339 has four-digit years; keeping to them also keeps every local time the
        // calendar computes (up to 100 years on) well inside chrono's range.
        if !(1..=9999).contains(&start.year()) {
            return Err(CalendarError::Start(format!(
                "{} is outside the years 1 to 9999; use a start within them",
                start.to_rfc3339()
            )));
        }
        let horizon = start
            .checked_add_days(Days::new(HORIZON_DAYS))
            .ok_or_else(|| {
                CalendarError::Start(format!(
                    "{} is too far in the future for a 100-year calendar; use a start before the year 9000",
                    start.to_rfc3339()
                ))
            })?;
        let (rule, max_period_millis) = match &schedule.period {
            PeriodRule::Daily | PeriodRule::Weekly => {
                let step_days = if schedule.period == PeriodRule::Daily {
                    1
                } else {
                    7
                };
                let spread = offset_spread_millis(
                    &tz,
                    shift(start, -2),
                    shift(horizon, step_days as i64 + 2),
                );
                // Boundary k lies between `local_k - max_offset` and `local_k - min_offset`,
                // so a period is at most one step plus the spread of offsets in use.
                let max = step_days * MILLIS_PER_DAY + spread;
                let first_local = start.with_timezone(&tz).naive_local();
                (
                    Rule::Fixed {
                        step_days,
                        first_local,
                    },
                    max,
                )
            }
            PeriodRule::Cron(expr) => {
                let index = CronIndex::new(expr, tz, start, horizon)?;
                let max = index.scan_max_local_gap(horizon)?;
                let spread = offset_spread_millis(&tz, shift(start, -2), shift(horizon, 400));
                // Gaps are scanned in wall-clock time; between two instants the UTC gap is
                // the wall-clock gap plus at most the spread of the zone's offsets.
                (Rule::Cron(Arc::new(index)), max.saturating_add(spread))
            }
        };
        Ok(Calendar {
            schedule: schedule.clone(),
            rule,
            horizon,
            max_period_millis,
        })
    }

    /// The schedule this calendar was built from.
    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    /// The period containing `at`, or `None` before the start (or beyond the calendar).
    pub fn period_at(&self, at: DateTime<Utc>) -> Option<Period> {
        let start = self.schedule.start;
        if at < start {
            return None;
        }
        match &self.rule {
            Rule::Fixed { step_days, .. } => {
                // Far past the horizon: no need to compute anything.
                if at >= shift(self.horizon, *step_days as i64 + 2) {
                    return None;
                }
                let elapsed = u64::try_from((at - start).num_milliseconds()).ok()?;
                let mut k = elapsed / (step_days * MILLIS_PER_DAY);
                // The estimate is off by the zone's offset changes since the start (a
                // few hours, at most a day or so in zones that skipped a date), and
                // empty periods (a whole day skipped) are stepped over; a handful of
                // steps always suffices, the bound only guards the loop.
                for _ in 0..64 {
                    let begin = self.fixed_boundary(k)?;
                    if begin > at {
                        k = k.checked_sub(1)?;
                        continue;
                    }
                    let end = self.fixed_boundary(k + 1)?;
                    if end <= at {
                        k += 1;
                        continue;
                    }
                    if begin >= self.horizon {
                        return None;
                    }
                    return Some(Period {
                        id: k + 1,
                        start: begin,
                        end,
                    });
                }
                None
            }
            Rule::Cron(index) => {
                let (k, begin, end) = index.locate(at)?;
                Some(Period {
                    id: k + 1,
                    start: begin,
                    end,
                })
            }
        }
    }

    /// The period with this id, if it exists.
    pub fn period(&self, id: PeriodId) -> Option<Period> {
        let k = id.checked_sub(1)?;
        let (start, end) = match &self.rule {
            Rule::Fixed { .. } => {
                let start = self.fixed_boundary(k)?;
                if start >= self.horizon {
                    return None;
                }
                (start, self.fixed_boundary(k + 1)?)
            }
            Rule::Cron(index) => index.period(k)?,
        };
        Some(Period { id, start, end })
    }

    /// The period containing `at` (or the first period, if `at` is before the start) and
    /// the `n - 1` periods after it; fewer if the calendar ends first.
    pub fn periods_from(&self, at: DateTime<Utc>, n: usize) -> Vec<Period> {
        let first = if at < self.schedule.start {
            self.period(1)
        } else {
            self.period_at(at)
        };
        let mut out = Vec::with_capacity(n.min(1024));
        let mut next = first;
        while let Some(p) = next {
            if out.len() >= n {
                break;
            }
            out.push(p);
            next = p.id.checked_add(1).and_then(|id| self.period(id));
        }
        out
    }

    /// An upper bound on the length of any period, in milliseconds.
    ///
    /// - daily / weekly: 24 h / 168 h plus the spread of the UTC offsets the zone uses
    ///   over the calendar's 100 years (sampled weekly). That is exactly 24 h / 168 h in
    ///   UTC and fixed-offset zones, 25 h / 169 h in zones with a one-hour DST (the
    ///   longest day or week contains the autumn change), 24.5 h for a half-hour DST
    ///   (Lord Howe), 26 h for a two-hour one (Antarctica/Troll).
    /// - cron: the longest wall-clock gap between consecutive occurrences in the first
    ///   1000 occurrences or 28 years (whichever comes first), plus the same offset
    ///   spread as a DST margin (one hour in most DST zones, nothing in UTC).
    pub fn max_period_millis(&self) -> u64 {
        self.max_period_millis
    }

    /// The start of period `k + 1` for daily and weekly schedules.
    fn fixed_boundary(&self, k: u64) -> Option<DateTime<Utc>> {
        let Rule::Fixed {
            step_days,
            first_local,
        } = &self.rule
        else {
            return None;
        };
        let start = self.schedule.start;
        if k == 0 {
            // The start may be the later of two equal wall-clock times; it is the
            // boundary as given, not the wall-clock time re-resolved.
            return Some(start);
        }
        let local = first_local.checked_add_days(Days::new(k.checked_mul(*step_days)?))?;
        // `max` keeps boundaries monotonic even in the (theoretical) case of a fold of
        // more than a day right after the start.
        Some(resolve_local(&self.schedule.timezone, local)?.max(start))
    }
}

impl fmt::Debug for Calendar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Calendar")
            .field("schedule", &self.schedule)
            .field("max_period_millis", &self.max_period_millis)
            .finish_non_exhaustive()
    }
}

/// Two calendars are equal when their schedules are: everything else derives from it.
impl PartialEq for Calendar {
    fn eq(&self, other: &Self) -> bool {
        self.schedule == other.schedule
    }
}

/// `t` moved by `days`, saturating at the ends of chrono's range.
fn shift(t: DateTime<Utc>, days: i64) -> DateTime<Utc> {
    t.checked_add_signed(TimeDelta::days(days))
        .unwrap_or(if days < 0 {
            DateTime::<Utc>::MIN_UTC
        } else {
            DateTime::<Utc>::MAX_UTC
        })
}

/// The instant of a wall-clock time: the first instant after a gap for a time that does
/// not exist, the earlier instant for a time that exists twice. Equivalently, the first
/// instant whose wall-clock time is at or after `local`.
fn resolve_local(tz: &Tz, local: NaiveDateTime) -> Option<DateTime<Utc>> {
    match tz.from_local_datetime(&local) {
        LocalResult::Single(t) => Some(t.with_timezone(&Utc)),
        LocalResult::Ambiguous(earlier, _) => Some(earlier.with_timezone(&Utc)),
        LocalResult::None => GapInfo::new(&local, tz)?.end.map(|t| t.with_timezone(&Utc)),
    }
}

/// The difference between the largest and the smallest UTC offset `tz` uses between
/// `from` and `to`, in milliseconds, found by sampling the offset weekly.
fn offset_spread_millis(tz: &Tz, from: DateTime<Utc>, to: DateTime<Utc>) -> u64 {
    let offset = |t: DateTime<Utc>| i64::from(t.with_timezone(tz).offset().fix().local_minus_utc());
    let (mut lo, mut hi) = (offset(from), offset(from));
    let mut t = from;
    while t < to {
        let o = offset(t);
        lo = lo.min(o);
        hi = hi.max(o);
        match t.checked_add_days(Days::new(OFFSET_SAMPLE_DAYS)) {
            Some(next) => t = next,
            None => break,
        }
    }
    let o = offset(to);
    lo = lo.min(o);
    hi = hi.max(o);
    u64::try_from(hi - lo).unwrap_or(0) * 1000
}

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
struct CronIndex {
    cron: Cron,
    tz: Tz,
    horizon: DateTime<Utc>,
    known: RwLock<Known>,
}

/// The boundaries computed so far: `at[k]` is the start of period `k + 1`.
struct Known {
    at: Vec<DateTime<Utc>>,
    /// No boundary after the last one will ever be added (pattern exhausted, horizon or
    /// [`MAX_CRON_PERIODS`] reached).
    complete: bool,
}

impl CronIndex {
    fn new(
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
    fn next_after(&self, t: DateTime<Utc>) -> Option<DateTime<Utc>> {
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

    /// Fills in the first occurrences and returns the longest wall-clock gap between
    /// two consecutive ones, in milliseconds.
    fn scan_max_local_gap(&self, horizon: DateTime<Utc>) -> Result<u64, CalendarError> {
        let mut known = self.known.write().unwrap_or_else(PoisonError::into_inner);
        let start = known.at[0];
        let scan_end = start
            .checked_add_days(Days::new(CRON_SCAN_DAYS))
            .unwrap_or(horizon)
            .min(horizon);
        let mut max = 0u64;
        let mut prev = start;
        while known.at.len() <= CRON_SCAN_OCCURRENCES {
            let Some(next) = self.next_after(prev) else {
                known.complete = true;
                break;
            };
            let gap = next.with_timezone(&self.tz).naive_local()
                - prev.with_timezone(&self.tz).naive_local();
            max = max.max(u64::try_from(gap.num_milliseconds()).unwrap_or(0));
            known.at.push(next);
            prev = next;
            if next >= scan_end {
                break;
            }
        }
        if known.at.len() < 2 {
            return Err(CalendarError::Period(format!(
                "the cron expression {:?} has no occurrence after the start; \
                 use a pattern that matches real dates",
                self.cron.as_str()
            )));
        }
        if max == 0 {
            // Only possible if every gap was crossed backwards in wall-clock time (an
            // autumn fold); fall back to the UTC gap so the bound is never zero.
            max = (known.at[1] - known.at[0])
                .num_milliseconds()
                .unsigned_abs();
        }
        Ok(max)
    }

    /// Computes boundaries until `done` says enough or nothing more can be added.
    fn extend_until(&self, done: impl Fn(&Known) -> bool) {
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
    fn period(&self, k: u64) -> Option<(DateTime<Utc>, DateTime<Utc>)> {
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
    fn locate(&self, at: DateTime<Utc>) -> Option<(u64, DateTime<Utc>, DateTime<Utc>)> {
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

/// Checks that `name` is an IANA zone, with a suggestion when only the case is wrong.
pub(crate) fn parse_zone(name: &str) -> Result<Tz, String> {
    Tz::from_str(name).map_err(|_| {
        let hint = chrono_tz::TZ_VARIANTS
            .iter()
            .find(|tz| tz.name().eq_ignore_ascii_case(name))
            .map(|tz| format!("did you mean {:?}? ", tz.name()))
            .unwrap_or_default();
        format!(
            "unknown time zone {name:?}; {hint}use an IANA zone name such as \"UTC\", \
             \"Europe/Berlin\" or \"America/New_York\""
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{Timelike, Weekday};

    fn cal(zone: &str, period: PeriodRule, start: &str) -> Calendar {
        let schedule = Schedule {
            timezone: zone.parse().unwrap(),
            period,
            start: DateTime::parse_from_rfc3339(start).unwrap().to_utc(),
        };
        Calendar::new(&schedule).unwrap()
    }

    fn utc(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().to_utc()
    }

    fn hours(p: &Period) -> f64 {
        (p.end - p.start).num_seconds() as f64 / 3600.0
    }

    #[test]
    fn gap_uses_first_instant_after_the_gap() {
        // Berlin springs forward on 2026-03-29 from 02:00 CET to 03:00 CEST: 02:30 does
        // not exist that day, so the boundary is 03:00 CEST (01:00 UTC).
        let c = cal(
            "Europe/Berlin",
            PeriodRule::Daily,
            "2026-03-27T02:30:00+01:00",
        );
        let p = c.period(3).unwrap();
        assert_eq!(p.start, utc("2026-03-29T01:00:00Z"));
        assert_eq!(p.end, utc("2026-03-30T00:30:00Z")); // 02:30 CEST the next day
        assert_eq!(c.period(2).unwrap().end, p.start);
        assert_eq!(hours(&c.period(2).unwrap()), 23.5);
        assert_eq!(hours(&p), 23.5);
        assert_eq!(c.period_at(utc("2026-03-29T00:59:59Z")).unwrap().id, 2);
        assert_eq!(c.period_at(utc("2026-03-29T01:00:00Z")).unwrap().id, 3);
    }

    #[test]
    fn ambiguous_time_uses_the_earlier_instant() {
        // Berlin falls back on 2026-10-25 from 03:00 CEST to 02:00 CET: 02:30 happens
        // twice; the boundary is the first, 02:30 CEST (00:30 UTC).
        let c = cal(
            "Europe/Berlin",
            PeriodRule::Daily,
            "2026-10-24T02:30:00+02:00",
        );
        let p = c.period(2).unwrap();
        assert_eq!(p.start, utc("2026-10-25T00:30:00Z"));
        assert_eq!(p.end, utc("2026-10-26T01:30:00Z"));
        assert_eq!(hours(&p), 25.0);
        // The second 02:30 (CET) is inside period 2, not a boundary.
        assert_eq!(c.period_at(utc("2026-10-25T01:30:00Z")).unwrap().id, 2);
    }

    #[test]
    fn start_at_the_later_of_two_equal_times_is_kept() {
        let c = cal(
            "Europe/Berlin",
            PeriodRule::Daily,
            "2026-10-25T02:30:00+01:00",
        );
        let p = c.period(1).unwrap();
        assert_eq!(p.start, utc("2026-10-25T01:30:00Z"));
        assert_eq!(p.end, utc("2026-10-26T01:30:00Z"));
        assert_eq!(c.period_at(utc("2026-10-25T00:45:00Z")), None); // before the start
    }

    #[test]
    fn a_skipped_day_gives_an_empty_period_that_lookups_step_over() {
        // Samoa skipped 2011-12-30 entirely (UTC-10 to UTC+14 at midnight).
        let c = cal(
            "Pacific/Apia",
            PeriodRule::Daily,
            "2011-12-28T00:00:00-10:00",
        );
        let p2 = c.period(2).unwrap();
        let p3 = c.period(3).unwrap();
        assert_eq!(p2.end, p3.start);
        assert_eq!(p3.start, p3.end, "the missing day is an empty period");
        let at = p3.start;
        assert_eq!(c.period_at(at).unwrap().id, 4);
        assert_eq!(c.period_at(at - TimeDelta::seconds(1)).unwrap().id, 2);
        // Samoa's offsets around then span -11 h to +14 h, so the bound is generous.
        assert!(c.max_period_millis() >= 24 * 3_600_000);
    }

    #[test]
    fn max_period_follows_the_zones_offsets() {
        let h = 3_600_000;
        let start = "2026-01-05T00:00:00Z";
        assert_eq!(
            cal("UTC", PeriodRule::Daily, start).max_period_millis(),
            24 * h
        );
        assert_eq!(
            cal("UTC", PeriodRule::Weekly, start).max_period_millis(),
            168 * h
        );
        assert_eq!(
            cal("Etc/GMT-5", PeriodRule::Weekly, start).max_period_millis(),
            168 * h
        );
        assert_eq!(
            cal("Europe/Berlin", PeriodRule::Daily, start).max_period_millis(),
            25 * h
        );
        assert_eq!(
            cal("Europe/Berlin", PeriodRule::Weekly, start).max_period_millis(),
            169 * h
        );
        assert_eq!(
            cal("Australia/Lord_Howe", PeriodRule::Daily, start).max_period_millis(),
            24 * h + h / 2
        );
        // Troll switches between UTC+0 and UTC+2.
        assert_eq!(
            cal("Antarctica/Troll", PeriodRule::Daily, start).max_period_millis(),
            26 * h
        );
    }

    #[test]
    fn troll_week_is_170_hours() {
        let c = cal(
            "Antarctica/Troll",
            PeriodRule::Weekly,
            "2026-03-23T00:00:00+00:00",
        );
        let p = c.period(1).unwrap();
        assert_eq!(hours(&p), 166.0);
        let autumn = c.period_at(utc("2026-10-22T00:00:00Z")).unwrap();
        assert_eq!(hours(&autumn), 170.0);
        assert!((autumn.end - autumn.start).num_milliseconds() as u64 <= c.max_period_millis());
    }

    #[test]
    fn weekly_boundaries_stay_on_local_monday_midnight() {
        let c = cal(
            "America/New_York",
            PeriodRule::Weekly,
            "2026-01-05T00:00:00-05:00",
        );
        let tz: Tz = "America/New_York".parse().unwrap();
        for id in 1..600 {
            let p = c.period(id).unwrap();
            let local = p.start.with_timezone(&tz);
            assert_eq!(
                (local.weekday(), local.hour(), local.minute()),
                (Weekday::Mon, 0, 0)
            );
            assert_eq!(c.period_at(p.start), Some(p));
            assert_eq!(c.period_at(p.end - TimeDelta::milliseconds(1)), Some(p));
        }
    }

    #[test]
    fn horizon_and_ids() {
        let c = cal("UTC", PeriodRule::Daily, "2026-01-01T00:00:00Z");
        assert_eq!(c.period(0), None);
        assert_eq!(c.period(HORIZON_DAYS).map(|p| p.id), Some(HORIZON_DAYS));
        assert_eq!(c.period(HORIZON_DAYS + 1), None);
        assert_eq!(c.period(u64::MAX), None);
        assert_eq!(c.period_at(utc("2126-06-01T00:00:00Z")), None);
        assert_eq!(c.period_at(DateTime::<Utc>::MAX_UTC), None);
        assert_eq!(c.period_at(utc("2025-12-31T23:59:59Z")), None);
        let last = c.period(HORIZON_DAYS).unwrap();
        assert_eq!(c.period_at(last.start), Some(last));
    }

    #[test]
    fn cron_in_an_autumn_fold() {
        // croner runs "*/30 * * * *" once per wall-clock time in a fold, at the earlier
        // instant: 02:30 CEST is an occurrence, the second 02:30 (CET) is not, and the
        // period from 02:30 CEST runs to 03:00 CET (an hour and a half).
        let c = cal(
            "Europe/Berlin",
            PeriodRule::Cron("*/30 * * * *".into()),
            "2026-10-25T02:30:00+02:00",
        );
        let p = c.period(1).unwrap();
        assert_eq!(p.end, utc("2026-10-25T02:00:00Z"));
        assert_eq!(c.max_period_millis(), 30 * 60_000 + 3_600_000);
        for id in 1..100 {
            let p = c.period(id).unwrap();
            assert!(p.end > p.start);
            assert_eq!(c.period(id + 1).unwrap().start, p.end);
        }
        let schedule = Schedule {
            timezone: "Europe/Berlin".parse().unwrap(),
            period: PeriodRule::Cron("*/30 * * * *".into()),
            start: utc("2026-10-25T01:30:00Z"), // 02:30 CET, the second one
        };
        let e = Calendar::build(&schedule).unwrap_err();
        assert!(
            matches!(&e, CalendarError::Start(m) if m.contains("2026-10-25T03:00:00+01:00")),
            "{e:?}"
        );
    }

    #[test]
    fn cron_gap_snaps_to_the_end_of_the_gap() {
        // "30 2 * * *" on the spring-forward night runs at 03:00 CEST.
        let c = cal(
            "Europe/Berlin",
            PeriodRule::Cron("30 2 * * *".into()),
            "2026-03-28T02:30:00+01:00",
        );
        let p = c.period(1).unwrap();
        assert_eq!(p.end, utc("2026-03-29T01:00:00Z"));
        assert_eq!(c.period(2).unwrap().end, utc("2026-03-30T00:30:00Z"));
    }

    #[test]
    fn cron_rejects_bad_patterns_and_starts() {
        let schedule = |period: &str, start: &str| Schedule {
            timezone: Tz::UTC,
            period: PeriodRule::Cron(period.into()),
            start: utc(start),
        };
        let e = Calendar::build(&schedule("0 0 * *", "2026-01-05T00:00:00Z")).unwrap_err();
        assert!(matches!(e, CalendarError::Period(m) if m.contains("has 4")));
        let e = Calendar::build(&schedule("0 0 30 2 *", "2026-01-05T00:00:00Z")).unwrap_err();
        assert!(matches!(e, CalendarError::Period(m) if m.contains("no occurrence")),);
        let e = Calendar::build(&schedule("0 0 * * MON", "2026-01-06T00:00:00Z")).unwrap_err();
        assert!(
            matches!(&e, CalendarError::Start(m) if m.contains("2026-01-12T00:00:00+00:00")),
            "{e:?}"
        );
        let e = Calendar::build(&schedule("0 0 * * MON", "2026-01-05T00:00:00.5Z")).unwrap_err();
        assert!(matches!(e, CalendarError::Start(m) if m.contains("fraction")));
    }

    #[test]
    fn parse_cron_accepts_five_or_six_fields() {
        assert!(parse_cron("0 0 * * MON").is_ok());
        assert!(parse_cron("0 0 0 * * MON").is_ok());
        assert!(parse_cron("@daily").is_ok());
        assert!(parse_cron("0 0 0 1 1 * 2030").is_err());
        assert!(parse_cron("61 * * * *").is_err());
        assert!(parse_cron("").is_err());
        for junk in [
            "* * * * L#",
            "*/0 * * * *",
            "1-0 * * * *",
            "# # # # #",
            "W W W W W",
        ] {
            let _ = parse_cron(junk); // must not panic
        }
    }

    #[test]
    fn extreme_starts_do_not_panic() {
        for zone in ["UTC", "America/New_York", "Asia/Tokyo"] {
            for start in [
                DateTime::<Utc>::MIN_UTC,
                DateTime::<Utc>::MAX_UTC,
                utc("0000-01-01T00:00:00Z"),
                utc("0001-01-01T00:00:00Z"),
                utc("9999-12-31T23:59:59Z"),
            ] {
                for period in [
                    PeriodRule::Daily,
                    PeriodRule::Weekly,
                    PeriodRule::Cron("0 0 * * *".into()),
                ] {
                    let schedule = Schedule {
                        timezone: zone.parse().unwrap(),
                        period,
                        start,
                    };
                    if let Ok(c) = Calendar::new(&schedule) {
                        let _ = c.period(1);
                        let _ = c.period(u64::MAX);
                        let _ = c.period_at(start);
                        let _ = c.period_at(DateTime::<Utc>::MAX_UTC);
                        let _ = c.periods_from(DateTime::<Utc>::MIN_UTC, 3);
                    }
                }
            }
        }
    }

    #[test]
    fn zone_suggestion() {
        assert!(parse_zone("Europe/Berlin").is_ok());
        let m = parse_zone("europe/berlin").unwrap_err();
        assert!(m.contains("did you mean \"Europe/Berlin\""), "{m}");
        assert!(parse_zone("Mars/Olympus").unwrap_err().contains("IANA"));
    }
}
