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

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, PoisonError, RwLock};

use chrono::{
    DateTime, Datelike, Days, LocalResult, NaiveDate, NaiveDateTime, NaiveTime, Offset,
    SecondsFormat, TimeDelta, TimeZone, Timelike, Utc,
};
use chrono_tz::{GapInfo, Tz};
use croner::parser::{CronParser, Seconds, Year};
use croner::{Cron, JobType};

use crate::season::{PeriodRule, Schedule};

/// A period's id: 1 for the period that begins at the season's start, then 2, 3, ...
pub type PeriodId = u64;

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

    /// Proves the longest period over the whole calendar and finds where it ends: from
    /// the model of the pattern when croner agrees with it, else by enumerating every
    /// occurrence.
    fn analyse(
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
    fn scan_exact(
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
    fn confirms(&self, model: &CronModel, k: u64) -> bool {
        let (Some(first), Some(second)) = (model.boundary(k), model.boundary(k + 1)) else {
            return false;
        };
        let Some(just_before) = first.checked_sub_signed(TimeDelta::seconds(1)) else {
            return false;
        };
        self.next_after(just_before) == Some(first) && self.next_after(first) == Some(second)
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

/// What the season loader learns about a cron calendar.
struct CronReach {
    max_period_millis: u64,
    last: Period,
    capped: bool,
}

/// A change of the zone's UTC offset.
#[derive(Debug, Clone, Copy)]
struct Transition {
    /// The first instant with the new offset.
    at: DateTime<Utc>,
    /// The offsets before and after, in seconds east of UTC.
    before: i32,
    after: i32,
}

/// A model of a cron calendar that needs no enumeration (see the module docs): the
/// occurrences are the pattern's times of day on each matching day, in wall-clock time,
/// less those a DST gap swallows, each at the first instant its wall-clock time is
/// reached (the earlier one in a fold, the end of the gap for a fixed-time job).
struct CronModel {
    tz: Tz,
    /// Seconds after midnight at which the pattern fires on a matching day, ascending.
    times: Vec<u32>,
    /// The matching days, from the start's local date to the first day whose occurrences
    /// all fall after the horizon.
    days: Vec<NaiveDate>,
    /// The start's index in `times` (on `days[0]`).
    first: usize,
    /// Ranges of indices in `times` that a DST gap swallows, by index in `days`
    /// (ascending and disjoint); only interval jobs lose occurrences to a gap.
    skips: BTreeMap<usize, Vec<(usize, usize)>>,
    /// `prefix[j]`: how many boundaries fall on `days[..j]`.
    prefix: Vec<u64>,
    /// The zone's offset changes from shortly before the start to after the last day.
    transitions: Vec<Transition>,
    /// The spread of the zone's offsets over the same range, in milliseconds.
    spread: u64,
}

impl CronModel {
    /// The model of `index`'s calendar; `Ok(None)` if the model does not apply (a DST
    /// gap that crosses midnight) and the calendar must be enumerated instead.
    fn new(
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
    fn instant(&self, j: usize, secs: u32) -> Option<DateTime<Utc>> {
        let time = NaiveTime::from_num_seconds_from_midnight_opt(secs, 0)?;
        resolve_local(&self.tz, self.days.get(j)?.and_time(time))
    }

    /// The first index in `times` that can hold a boundary on `days[j]`.
    fn first_on_day(&self, j: usize) -> usize {
        if j == 0 { self.first } else { 0 }
    }

    /// How many boundaries fall on `days[j]`.
    fn count_on_day(&self, j: usize) -> u64 {
        let lo = self.first_on_day(j);
        let mut n = self.times.len().saturating_sub(lo);
        for &(a, b) in self.skips.get(&j).map_or(&[][..], |r| r.as_slice()) {
            n = n.saturating_sub(b.max(lo).saturating_sub(a.max(lo)));
        }
        n as u64
    }

    /// The index in `times` of the `r`-th boundary (from 0) on `days[j]`.
    fn nth_on_day(&self, j: usize, r: u64) -> Option<usize> {
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
    fn boundary(&self, n: u64) -> Option<DateTime<Utc>> {
        if n >= *self.prefix.last()? {
            return None;
        }
        let j = self.prefix.partition_point(|p| *p <= n).checked_sub(1)?;
        let i = self.nth_on_day(j, n - self.prefix.get(j)?)?;
        self.instant(j, *self.times.get(i)?)
    }

    /// How many boundaries are before `t` (boundaries only increase).
    fn count_before(&self, t: DateTime<Utc>) -> Option<u64> {
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
    fn reach(
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
fn times_of_day(cron: &Cron) -> Vec<u32> {
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
fn date_matches(cron: &Cron, day: NaiveDate) -> bool {
    let p = &cron.pattern;
    p.month_match(day.month()).unwrap_or(false)
        && p.year_match(day.year()).unwrap_or(false)
        && p.day_match(day.year(), day.month(), day.day())
            .unwrap_or(false)
}

/// The changes of `tz`'s UTC offset between `from` and `to`, and the spread of the
/// offsets in use (milliseconds). The offset is sampled daily and each change located to
/// the second by bisection (the tz database changes offsets on whole seconds).
fn offset_changes(tz: &Tz, from: DateTime<Utc>, to: DateTime<Utc>) -> (Vec<Transition>, u64) {
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

    fn cron_schedule(zone: &str, pattern: &str, start: &str) -> Schedule {
        Schedule {
            timezone: zone.parse().unwrap(),
            period: PeriodRule::Cron(pattern.into()),
            start: utc(start),
        }
    }

    /// The model's answer for a cron schedule, which must not need the fallback.
    fn modelled(schedule: &Schedule) -> CronReach {
        let PeriodRule::Cron(expr) = &schedule.period else {
            panic!("not cron")
        };
        let start = schedule.start;
        let horizon = shift(start, HORIZON_DAYS as i64);
        let index = CronIndex::new(expr, schedule.timezone, start, horizon).unwrap();
        let model = CronModel::new(&index, start, horizon, last_instant(true))
            .unwrap()
            .expect("the model applies");
        model
            .reach(&index, start, horizon)
            .expect("croner agrees with the model")
    }

    /// The exact answer: every occurrence enumerated, every period measured.
    fn enumerated(schedule: &Schedule) -> CronReach {
        let PeriodRule::Cron(expr) = &schedule.period else {
            panic!("not cron")
        };
        let start = schedule.start;
        let horizon = shift(start, HORIZON_DAYS as i64);
        let index = CronIndex::new(expr, schedule.timezone, start, horizon).unwrap();
        index.scan_exact(start, horizon).unwrap()
    }

    #[test]
    fn cron_model_matches_the_enumeration() {
        // Fixed-time and interval jobs, DST gaps that swallow or move occurrences, folds,
        // `L`, `W`, `#`, `?`, leap days, both hemispheres; and one calendar that the
        // period cap ends (with DST gaps in between, so the count must subtract them).
        for (zone, pattern, start) in [
            ("UTC", "0 0 * * MON", "2026-01-05T00:00:00Z"),
            ("Europe/Berlin", "0 0 * * MON", "2026-01-05T00:00:00+01:00"),
            (
                "America/New_York",
                "30 2 * * *",
                "2026-01-01T02:30:00-05:00",
            ),
            ("Europe/Berlin", "0 2,14 * * *", "2026-01-01T02:00:00+01:00"),
            (
                "Europe/Berlin",
                "*/20 1-3 * * SUN",
                "2026-01-04T01:00:00+01:00",
            ),
            ("Europe/Berlin", "0 0 29 2 *", "2024-02-29T00:00:00+01:00"),
            ("UTC", "0 0 L * *", "2026-01-31T00:00:00Z"),
            (
                "America/Santiago",
                "0 0 * * 5L",
                "2026-01-30T00:00:00-03:00",
            ),
            ("Europe/Berlin", "0 12 ? * 1#2", "2026-01-12T12:00:00+01:00"),
            (
                "Australia/Lord_Howe",
                "0 0 15W * *",
                "2026-01-15T00:00:00+11:00",
            ),
            (
                "Pacific/Apia",
                "0 0,12 * * FRI",
                "2011-12-23T00:00:00-10:00",
            ),
            ("Europe/Berlin", "* * * 2 *", "2026-02-01T00:00:00+01:00"),
            ("Europe/Berlin", "* * * * *", "2026-01-01T00:00:00+01:00"),
        ] {
            let schedule = cron_schedule(zone, pattern, start);
            let model = modelled(&schedule);
            let exact = enumerated(&schedule);
            let what = format!("{pattern:?} in {zone}");
            assert_eq!(model.last, exact.last, "{what}");
            assert_eq!(model.capped, exact.capped, "{what}");
            assert!(
                model.max_period_millis >= exact.max_period_millis,
                "{what}: {} < {}",
                model.max_period_millis,
                exact.max_period_millis
            );
            // Tight: at most the DST margin above the longest period.
            let tz: Tz = zone.parse().unwrap();
            let margin = offset_spread_millis(&tz, shift(schedule.start, -2), model.last.end);
            assert!(
                model.max_period_millis <= exact.max_period_millis + margin,
                "{what}: {} vs {}",
                model.max_period_millis,
                exact.max_period_millis
            );
            let calendar = Calendar::build(&schedule).unwrap();
            assert_eq!(calendar.max_period_millis(), model.max_period_millis);
            assert_eq!(calendar.last_period(), model.last);
        }
    }

    #[test]
    fn a_dst_gap_can_swallow_an_occurrence() {
        // "0 2,14 * * *" is an interval job for croner (two hours), so on the night Berlin
        // springs forward 02:00 does not happen: 14:00 to 14:00 is a 23-hour period, much
        // longer than the 12 hours the pattern suggests even with a one-hour DST margin.
        let c = cal(
            "Europe/Berlin",
            PeriodRule::Cron("0 2,14 * * *".into()),
            "2026-03-28T14:00:00+01:00",
        );
        let p = c.period(1).unwrap();
        assert_eq!(p.end, utc("2026-03-29T12:00:00Z"));
        assert_eq!(hours(&p), 23.0);
        assert_eq!(c.max_period_millis(), 23 * 3_600_000);
    }

    #[test]
    fn leap_day_pattern_spans_2100() {
        let c = cal(
            "UTC",
            PeriodRule::Cron("0 0 29 2 *".into()),
            "2024-02-29T00:00:00Z",
        );
        let p = c.period_at(utc("2100-06-01T00:00:00Z")).unwrap();
        assert_eq!(
            (p.start, p.end),
            (utc("2096-02-29T00:00:00Z"), utc("2104-02-29T00:00:00Z"))
        );
        assert_eq!(c.max_period_millis(), 2921 * MILLIS_PER_DAY);
        assert_eq!(c.last_period().id, 25);
        assert!(!c.ends_at_period_cap());
    }

    #[test]
    fn a_gap_across_midnight_is_enumerated() {
        // Toronto sprang forward from 23:30 to 00:30 on 1919-03-30, so the interval job's
        // midnight of Monday 31 March never happened; the model does not cover a gap
        // across midnight, and the calendar enumerates and measures every period instead.
        let schedule = cron_schedule(
            "America/Toronto",
            "0 0,12 * * MON",
            "1919-03-24T00:00:00-05:00",
        );
        let start = schedule.start;
        let horizon = shift(start, HORIZON_DAYS as i64);
        let index = CronIndex::new("0 0,12 * * MON", schedule.timezone, start, horizon).unwrap();
        assert!(
            CronModel::new(&index, start, horizon, last_instant(true))
                .unwrap()
                .is_none()
        );
        let c = Calendar::build(&schedule).unwrap();
        let p = c.period(2).unwrap();
        assert_eq!(
            (p.start, p.end),
            (utc("1919-03-24T17:00:00Z"), utc("1919-03-31T16:00:00Z"))
        );
        assert!(c.max_period_millis() >= (p.end - p.start).num_milliseconds() as u64);
        assert_eq!(
            c.max_period_millis(),
            enumerated(&schedule).max_period_millis
        );
    }

    #[test]
    fn a_skipped_day_swallows_its_occurrences() {
        // Samoa skipped Friday 2011-12-30: the interval job's two occurrences that day
        // never happen (the model takes them out); croner gives up on a fixed-time job
        // that day, so such a calendar is refused rather than ended there.
        let c = cal(
            "Pacific/Apia",
            PeriodRule::Cron("0 0,12 * * FRI".into()),
            "2011-12-23T12:00:00-10:00",
        );
        let p = c.period(1).unwrap();
        assert_eq!(p.end, utc("2012-01-05T10:00:00Z")); // Friday 6 January, 00:00 +14
        assert!(c.max_period_millis() >= (p.end - p.start).num_milliseconds() as u64);
        let e = Calendar::build(&cron_schedule(
            "Pacific/Apia",
            "0 0 * * *",
            "2011-12-28T00:00:00-10:00",
        ))
        .unwrap_err();
        assert!(
            matches!(&e, CalendarError::Period(m) if m.contains("skipped day")),
            "{e:?}"
        );
    }

    #[test]
    fn late_starts_are_refused_with_the_latest_start_allowed() {
        let schedule = |period: PeriodRule, start: &str| Schedule {
            timezone: "Asia/Tokyo".parse().unwrap(),
            period,
            start: utc(start),
        };
        let e = Calendar::build(&schedule(PeriodRule::Daily, "9950-01-01T00:00:00Z")).unwrap_err();
        assert!(
            matches!(&e, CalendarError::Start(m) if m.contains("9899-12-30T23:59:59Z")),
            "{e:?}"
        );
        let c = Calendar::build(&schedule(PeriodRule::Daily, "9899-12-30T23:59:59Z")).unwrap();
        assert_eq!(c.last_period().end, utc("9999-12-31T23:59:59Z"));
        // Cron calendars end by 4999-12-31 (croner's limit).
        for start in ["4950-01-01T00:00:00Z", "9999-12-31T00:00:00Z"] {
            let e = Calendar::build(&schedule(PeriodRule::Cron("0 0 * * *".into()), start))
                .unwrap_err();
            assert!(
                matches!(&e, CalendarError::Start(m) if m.contains("4999")),
                "{e:?}"
            );
        }
        let c = Calendar::build(&schedule(
            PeriodRule::Cron("0 0 * * *".into()),
            "4899-01-01T15:00:00Z",
        ))
        .unwrap();
        assert!(c.last_period().end <= last_instant(true));
    }
}
