//! Unit tests of the calendar: DST boundaries, cron bounds against full enumeration.

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
        let e =
            Calendar::build(&schedule(PeriodRule::Cron("0 0 * * *".into()), start)).unwrap_err();
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
