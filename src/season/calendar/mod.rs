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
//! runs a fixed-time occurrence in a fold once, at the earlier instant). Lookups take
//! the occurrences from croner itself: the calendar remembers every boundary it has
//! computed (a sorted list shared by all clones of the calendar) and answers lookups by
//! binary search; the list only grows, on demand, as far as lookups reach (the first
//! lookup a year ahead of an hourly pattern steps through ~8 760 occurrences, a few
//! milliseconds; later ones are a binary search).
//!
//! The expression has 5 fields (minute first) or 6 (seconds first), or is a nickname such
//! as `@daily`; `start` must itself be an occurrence (which also makes it a whole second).
//!
//! # The longest period of a cron calendar
//!
//! Scores are packed with the longest period ([`Calendar::max_period_millis`]), so that
//! bound must hold for *every* period of the calendar, not only the first few: `"* * * 2
//! *"` has one-minute periods all February and then one of eleven months, and
//! `"0 0 29 2 *"` has an eight-year period around 2100. The bound is proven over the
//! whole calendar when the season loads, in a few milliseconds, from the shape of cron
//! patterns rather than by enumerating occurrences:
//!
//! - croner matches the time of day (second, minute, hour) and the date (day of month,
//!   month, day of week, with `L`, `W`, `#` and `?`; nicknames are patterns too)
//!   independently, so every matching day has the same times. In wall-clock time the
//!   occurrences are "matching days x times of day", and the longest gap between two
//!   consecutive ones is either the longest gap between two times of one day or, for
//!   two consecutive matching days, the days between them plus the first time minus the
//!   last. One pass over the ~36 525 days of the calendar finds it.
//! - croner searches in wall-clock time and puts each occurrence at the first instant
//!   its wall-clock time is reached: the earlier one in a fold, the end of the gap for a
//!   fixed-time pattern in a DST gap; an interval pattern (a second, minute or hour
//!   field that is not a single value) loses its occurrences in a gap. Between two consecutive occurrences with
//!   no change of UTC offset in between, the UTC gap is therefore the wall-clock gap.
//!   Every offset change (found by sampling the zone daily and bisecting to the second;
//!   two changes less than a day apart that cancel out would go unseen, and the tz
//!   database has none) falls inside exactly one period, and that period is measured
//!   exactly. This covers gaps that swallow occurrences: `"0 2,14 * * *"` in Berlin has a
//!   23-hour period on the spring-forward day, longer than 12 hours plus any margin.
//! - As before, the wall-clock bound also gets the spread of the zone's offsets as a DST
//!   margin (redundant with the exact periods, and kept as insurance).
//! - The same model counts the periods up to any day (matching days x times of day,
//!   less the occurrences gaps swallow), which gives the last period, and where
//!   [`MAX_CRON_PERIODS`] ends the calendar, without enumerating a million occurrences.
//! - croner has the last word: the model's first 32 occurrences, the period around every
//!   offset change and the last period are checked against it. If any disagree, or a
//!   DST gap the pattern meets crosses midnight (Toronto's 23:30 to 00:30 in 1919, or
//!   Samoa's skipped day for a fixed-time pattern), the calendar enumerates its
//!   occurrences instead and measures every period: exact, but up to half a second. (On
//!   Samoa's skipped day croner itself gives up on a fixed-time pattern, and such a
//!   calendar is refused rather than ended there.)
//!
//! # Odd zones
//!
//! When a zone skips a whole day (Samoa skipped 2011-12-30), that day's daily boundary
//! coincides with the next one and its period is empty (`start == end`): it still has an
//! id, so ids stay dense, but [`Calendar::period_at`] never returns it.
//!
//! # Horizon and early ends
//!
//! A calendar covers the periods that start less than 100 years (36 525 days) after the
//! season's start, and for cron schedules at most [`MAX_CRON_PERIODS`] periods. Outside
//! that range the lookups return `None`, which keeps every lookup bounded in time.
//! [`Calendar::last_period`] says where a calendar ends, and
//! [`Calendar::ends_at_period_cap`] whether the cap ended it before 100 years (a cron
//! schedule of more than ~27 periods a day: every minute ends after 694 days, every
//! second after 11.6), so that `leaguekit check` can say so. Such calendars are not
//! refused: periods of a few seconds are what real-time tests and demos of the scheduler
//! need, and an event after the end gets a typed "outside the calendar" error.
//!
//! Every instant a calendar produces can be written in RFC 3339 with a four-digit year
//! (up to 9999-12-31T23:59:59Z), so `--at` can name every boundary: a start whose last
//! period would end later is refused, naming the latest start allowed. croner computes
//! occurrences up to the year 4999 only, so cron calendars must end by 4999-12-31.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use chrono::{
    DateTime, Datelike, Days, LocalResult, NaiveDateTime, Offset, SecondsFormat, TimeDelta,
    TimeZone, Utc,
};
use chrono_tz::{GapInfo, Tz};

/// A period's id: 1 for the period that begins at the season's start, then 2, 3, ...
pub type PeriodId = u64;

mod cron;
mod cron_model;
#[cfg(test)]
mod tests;

pub(crate) use cron::parse_cron;
use cron::*;
use cron_model::*;

/// How far past the start the calendar reaches: 100 years of days.
const HORIZON_DAYS: u64 = 36_525;

/// The most periods a cron calendar has. Each one costs a few bytes once looked up, so
/// this bounds memory (about 12 MB) and the one-off cost of a lookup far in the future.
pub const MAX_CRON_PERIODS: u64 = 1_000_000;

/// 9999-12-31T23:59:59Z, the last instant an RFC 3339 time with a four-digit year can
/// name (in UTC): no boundary may be later, so `--at` can name every one.
const LAST_INSTANT_SECS: i64 = 253_402_300_799;

/// 4999-12-31T00:00:00Z, the last instant a cron calendar may reach. croner searches for
/// occurrences in the zone's wall-clock time up to the year 5000 (`YEAR_UPPER_LIMIT`) and
/// no further; a day's margin keeps every zone's wall clock inside the year 4999.
const CRON_LAST_INSTANT_SECS: i64 = 95_617_497_600;

/// How often the cron analysis samples the zone's UTC offset to find where it changes.
/// Each change is then located to the second by bisection; two changes less than a day
/// apart that cancel out would go unseen, and no tz database zone has any.
const TRANSITION_SAMPLE_SECS: i64 = 86_400;

/// How many of the first occurrences the cron analysis checks against croner.
const CRON_CHECK_FIRST: u64 = 32;

/// How often the zone's UTC offset is sampled to find its range. Every tz database zone
/// keeps an offset for weeks at least, so a weekly sample sees every offset in use.
const OFFSET_SAMPLE_DAYS: u64 = 7;

const MILLIS_PER_DAY: u64 = 86_400_000;

/// `[schedule]`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Schedule {
    /// IANA zone in which boundaries are computed.
    pub timezone: Tz,
    /// How periods repeat.
    pub period: PeriodRule,
    /// The first period starts here.
    pub start: DateTime<Utc>,
}

/// How periods repeat.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PeriodRule {
    /// Every day at the start's local time of day.
    Daily,
    /// Every week at the start's local weekday and time of day.
    Weekly,
    /// Boundaries at each occurrence of a cron expression (in the season's zone).
    Cron(String),
}

impl PeriodRule {
    /// How the rule is written in the season file: `daily`, `weekly` or the cron text.
    pub fn as_str(&self) -> &str {
        match self {
            PeriodRule::Daily => "daily",
            PeriodRule::Weekly => "weekly",
            PeriodRule::Cron(expr) => expr,
        }
    }
}

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
    /// The last period the calendar has.
    last: Period,
    /// Whether [`MAX_CRON_PERIODS`] ended the calendar before the horizon.
    capped: bool,
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
        let cron = matches!(schedule.period, PeriodRule::Cron(_));
        let limit = last_instant(cron);
        let horizon = start
            .checked_add_days(Days::new(HORIZON_DAYS))
            // A daily or weekly calendar is computed even past the limit (chrono reaches
            // far beyond), to name the exact latest start below; croner does not, so a
            // cron calendar whose horizon alone is past the limit is refused here.
            .filter(|h| !cron || *h < limit)
            .ok_or_else(|| {
                let latest = shift(limit, -(HORIZON_DAYS as i64) - 2);
                too_late(start, None, limit, latest, cron)
            })?;
        // Until the last period is known, lookups must not stop at it.
        let placeholder = Period {
            id: PeriodId::MAX,
            start,
            end: DateTime::<Utc>::MAX_UTC,
        };
        let calendar = match &schedule.period {
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
                let mut calendar = Calendar {
                    schedule: schedule.clone(),
                    rule: Rule::Fixed {
                        step_days,
                        first_local,
                    },
                    horizon,
                    max_period_millis: max,
                    last: placeholder,
                    capped: false,
                };
                // The last period is the one that contains the last instant before the
                // horizon (the next one starts at or after it).
                calendar.last = horizon
                    .checked_sub_signed(TimeDelta::milliseconds(1))
                    .and_then(|t| calendar.period_at(t))
                    .ok_or_else(|| {
                        CalendarError::Start(format!(
                            "{} gives a calendar whose last period could not be computed \
                             (please report this with the season file); a start a day \
                             earlier or later avoids it",
                            start.to_rfc3339()
                        ))
                    })?;
                calendar
            }
            PeriodRule::Cron(expr) => {
                let index = CronIndex::new(expr, tz, start, horizon)?;
                let reach = index.analyse(start, horizon, limit)?;
                Calendar {
                    schedule: schedule.clone(),
                    rule: Rule::Cron(Arc::new(index)),
                    horizon,
                    max_period_millis: reach.max_period_millis,
                    last: reach.last,
                    capped: reach.capped,
                }
            }
        };
        let last = calendar.last;
        if last.end > limit {
            // Moving the start earlier moves every boundary with it (far-future zones keep
            // one offset), so the overshoot is how much earlier the start must be.
            let latest = start - (last.end - limit);
            return Err(too_late(start, Some(last.end), limit, latest, cron));
        }
        Ok(calendar)
    }

    /// The schedule this calendar was built from.
    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    /// The period containing `at`, or `None` before the start (or beyond the calendar).
    pub fn period_at(&self, at: DateTime<Utc>) -> Option<Period> {
        let start = self.schedule.start;
        // Past the end, answer at once: a cron calendar would otherwise compute all its
        // boundaries (up to a million) to find out.
        if at < start || at >= self.last.end {
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
        if id > self.last.id {
            return None;
        }
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
    /// - cron: proven over the whole calendar (see the module docs): the longest
    ///   wall-clock gap between consecutive occurrences, plus the spread of the zone's
    ///   offsets as a DST margin (one hour in most DST zones, nothing in UTC), or, if
    ///   longer, the exact length of a period that contains a change of UTC offset.
    ///
    /// Every period [`Calendar::period`] and [`Calendar::period_at`] return is at most
    /// this long, so the packing built from it holds every event of the season.
    pub fn max_period_millis(&self) -> u64 {
        self.max_period_millis
    }

    /// The last period of the calendar: the one that contains the last instant before
    /// the 100-year horizon, or, when [`Calendar::ends_at_period_cap`], period
    /// [`MAX_CRON_PERIODS`]. Events at or after its end fall outside the calendar.
    pub fn last_period(&self) -> Period {
        self.last
    }

    /// Whether the calendar ends before its 100-year horizon because it reached
    /// [`MAX_CRON_PERIODS`] periods (a cron schedule of more than ~27 periods a day).
    pub fn ends_at_period_cap(&self) -> bool {
        self.capped
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
            .field("last", &self.last)
            .field("capped", &self.capped)
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

/// The last instant a calendar may reach: [`LAST_INSTANT_SECS`], or
/// [`CRON_LAST_INSTANT_SECS`] for a cron schedule.
fn last_instant(cron: bool) -> DateTime<Utc> {
    let secs = if cron {
        CRON_LAST_INSTANT_SECS
    } else {
        LAST_INSTANT_SECS
    };
    DateTime::from_timestamp(secs, 0).unwrap_or(DateTime::<Utc>::MAX_UTC)
}

/// The error for a start whose calendar would reach past `limit`; `end` is where the last
/// period would end, when it is known.
fn too_late(
    start: DateTime<Utc>,
    end: Option<DateTime<Utc>>,
    limit: DateTime<Utc>,
    latest: DateTime<Utc>,
    cron: bool,
) -> CalendarError {
    let why = if cron {
        "the cron library computes occurrences up to the year 4999 only, so a cron \
         calendar must end by"
    } else {
        "every boundary must be writable in RFC 3339 with a four-digit year (so that \
         `--at` can name it), which ends at"
    };
    let ends = match end {
        Some(end) => format!("its last period would end at {}", end.to_rfc3339()),
        None => "it would end more than 100 years after the start".to_owned(),
    };
    // Whole seconds, rounded down, so the suggestion is itself a valid start.
    let latest = DateTime::from_timestamp(latest.timestamp(), 0).unwrap_or(latest);
    CalendarError::Start(format!(
        "{} is too late: a calendar covers 100 years of periods and {ends}, but {why} \
         {limit}; use a start at or before {latest}{occurrence}",
        start.to_rfc3339(),
        limit = limit.to_rfc3339_opts(SecondsFormat::Secs, true),
        latest = latest.to_rfc3339_opts(SecondsFormat::Secs, true),
        occurrence = if cron {
            " that is an occurrence of the pattern"
        } else {
            ""
        },
    ))
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
