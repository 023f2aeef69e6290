//! The season file and the calendar, through the public API: the shipped example loads,
//! every kind of bad season is refused at the right line with a helpful message, and
//! period boundaries are DST-correct and tile time.

use std::str::FromStr as _;

use chrono::{DateTime, Datelike, TimeDelta, Timelike, Utc, Weekday};
use chrono_tz::Tz;
use leaguekit::season::packing::{Packing, ScoreMode};
use leaguekit::season::{
    IdlePolicy, JoinPolicy, PeriodRule, Quota, Resolution, Reward, Schedule, SimulationConfig,
};
use leaguekit::{Calendar, ConfigError, Period, Season};
use proptest::prelude::*;

/// A small valid season; tests change one thing at a time with [`edit`].
const BASE: &str = r#"name = "test-season"
key_prefix = "lk"

[schedule]
timezone = "UTC"
period = "weekly"
start = "2026-01-05T00:00:00Z"

[scoring]
max_score = 1000000

[[tiers]]
name = "bronze"
promote = 10
demote = 0
rewards = [{ ranks = "1", grant = "gems:100" }, { ranks = "2-10", grant = "gems:20" }]

[[tiers]]
name = "silver"
promote = 0
demote = 10
"#;

/// `text` with `from` (which must occur) replaced by `to`.
fn edit(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "test bug: {from:?} not in the text");
    text.replacen(from, to, 1)
}

/// The 1-based line of the first occurrence of `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    let at = text.find(needle).expect("needle in text");
    text[..at].matches('\n').count() + 1
}

fn load(text: &str) -> Season {
    match Season::from_toml(text, "season.toml") {
        Ok(s) => s,
        Err(e) => panic!("expected a valid season, got: {e}\n{text}"),
    }
}

/// The error for an invalid season: `(line, col, message)`.
fn invalid(text: &str) -> (usize, usize, String) {
    match Season::from_toml(text, "season.toml") {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(ConfigError::Invalid {
            file,
            line,
            col,
            message,
        }) => {
            assert_eq!(file, "season.toml");
            (line, col, message)
        }
        Err(other) => panic!("expected ConfigError::Invalid, got {other:?}"),
    }
}

/// Asserts that `text` is refused on the line of `at` with a message containing all of
/// `parts`.
fn refused(text: &str, at: &str, parts: &[&str]) {
    let (line, _, message) = invalid(text);
    assert_eq!(
        line,
        line_of(text, at),
        "wrong line for {at:?}; message: {message}"
    );
    for p in parts {
        assert!(
            message.contains(p),
            "message {message:?} should contain {p:?}"
        );
    }
}

fn utc(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().to_utc()
}

fn hours(p: &Period) -> i64 {
    (p.end - p.start).num_hours()
}

// ------------------------------------------------------------------ the example file

#[test]
fn the_example_season_loads() {
    let s = Season::load(concat!(env!("CARGO_MANIFEST_DIR"), "/config/season.toml")).unwrap();
    assert_eq!(s.name, "weekly-ladder");
    assert_eq!(s.key_prefix, "lk");
    assert_eq!(s.schedule.timezone, Tz::UTC);
    assert_eq!(s.schedule.period, PeriodRule::Weekly);
    assert_eq!(s.schedule.start, utc("2026-01-05T00:00:00Z"));
    assert_eq!(s.brackets.size, 100);
    assert_eq!(s.brackets.join, JoinPolicy::OnFirstScore);
    assert_eq!(s.scoring.mode, ScoreMode::Increment);
    assert_eq!(s.scoring.max_score, 1_000_000_000);
    assert_eq!(s.scoring.time_resolution, Resolution::Second);
    assert_eq!(s.scoring.idempotency_window.as_secs(), 24 * 3600);
    assert_eq!(s.profiles.fields, ["name", "avatar"]);
    assert_eq!(s.profiles.max_bytes, 512);
    let names: Vec<&str> = s.tiers.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["bronze", "silver", "gold", "platinum", "diamond"]);
    assert!(s.tiers[0].demote.is_zero());
    assert!(s.tiers[4].promote.is_zero());
    assert!(
        s.tiers
            .iter()
            .any(|t| matches!(t.promote, Quota::Percent(_)))
    );
    assert_eq!(s.tiers[0].rewards[1].first, 2);
    assert_eq!(s.tiers[0].rewards[1].last, 10);
    assert_eq!(s.idle.policy, IdlePolicy::Stay);
    assert_eq!(s.retention.periods, 4);
    assert_eq!(s.simulation.players, 1000);
    assert_eq!(s.simulation.seed, 42);
    assert_eq!(s.calendar.max_period_millis(), 168 * 3_600_000);
    assert_eq!(s.packing.max_score(), 1_000_000_000);
    assert_eq!(s.packing.ticks(), 168 * 3600);
    assert_eq!(s.tier("gold").map(|(i, _)| i), Some(2));
    let p1 = s.calendar.period(1).unwrap();
    assert_eq!((p1.start, hours(&p1)), (s.schedule.start, 168));
}

#[test]
fn defaults_for_optional_sections() {
    let s = load(BASE);
    assert_eq!(s.brackets.size, 100);
    assert_eq!(s.brackets.join, JoinPolicy::OnFirstScore);
    assert_eq!(s.scoring.mode, ScoreMode::Increment);
    assert_eq!(s.scoring.time_resolution, Resolution::Second);
    assert_eq!(s.scoring.idempotency_window.as_secs(), 86_400);
    assert!(s.profiles.fields.is_empty());
    assert_eq!(s.profiles.max_bytes, 512);
    assert_eq!(s.idle.policy, IdlePolicy::Stay);
    assert_eq!(s.retention.periods, 4);
    assert_eq!(s.simulation, SimulationConfig::default());
    let d = SimulationConfig::default();
    assert_eq!((d.players, d.periods, d.seed), (1000, 10, 42));
    assert_eq!(
        (d.skill_spread, d.active_share, d.quit_rate, d.return_rate),
        (1.0, 0.7, 0.05, 0.2)
    );
    assert_eq!(s.tiers[1].rewards, Vec::<Reward>::new());
}

#[test]
fn every_optional_key_is_read() {
    let text = format!(
        "{BASE}\n[brackets]\nsize = 50\njoin = \"explicit\"\n\
         [profiles]\nfields = [\"nick\"]\nmax_bytes = 100\n\
         [idle]\npolicy = \"drop_one_tier\"\n[retention]\nperiods = 520\n\
         [simulation]\nplayers = 5\nperiods = 3\nseed = 7\nskill_spread = 2\n\
         active_share = 1.0\nquit_rate = 0\nreturn_rate = 0.5\n"
    );
    let text = edit(
        &text,
        "max_score = 1000000",
        "mode = \"best\"\nmax_score = 1000000\ntime_resolution = \"1ms\"\nidempotency_window = \"15m\"",
    );
    let s = load(&text);
    assert_eq!(s.brackets.size, 50);
    assert_eq!(s.brackets.join, JoinPolicy::Explicit);
    assert_eq!(s.scoring.mode, ScoreMode::Best);
    assert_eq!(s.scoring.time_resolution, Resolution::Millisecond);
    assert_eq!(s.scoring.idempotency_window.as_secs(), 900);
    assert_eq!(s.profiles.fields, ["nick"]);
    assert_eq!(s.profiles.max_bytes, 100);
    assert_eq!(s.idle.policy, IdlePolicy::DropOneTier);
    assert_eq!(s.retention.periods, 520);
    let sim = &s.simulation;
    assert_eq!((sim.players, sim.periods, sim.seed), (5, 3, 7));
    assert_eq!(
        (
            sim.skill_spread,
            sim.active_share,
            sim.quit_rate,
            sim.return_rate
        ),
        (2.0, 1.0, 0.0, 0.5)
    );
    assert_eq!(s.packing.ticks(), 168 * 3_600_000);
}

#[test]
fn start_may_be_a_toml_datetime_or_a_string() {
    let s = load(&edit(
        BASE,
        "start = \"2026-01-05T00:00:00Z\"",
        "start = 2026-01-05T01:00:00+01:00",
    ));
    assert_eq!(s.schedule.start, utc("2026-01-05T00:00:00Z"));
}

#[test]
fn errors_print_file_line_col() {
    let text = edit(BASE, "max_score = 1000000", "max_score = 0");
    let err = Season::from_toml(&text, "my.toml").unwrap_err().to_string();
    let line = line_of(&text, "max_score = 0");
    assert!(
        err.starts_with(&format!("my.toml:{line}:13: scoring.max_score = 0")),
        "{err}"
    );
}

// ---------------------------------------------------------------- shape and keys

#[test]
fn unknown_keys_are_refused_everywhere() {
    let t = edit(
        BASE,
        "key_prefix = \"lk\"",
        "key_prefix = \"lk\"\ncolour = 1",
    );
    refused(&t, "colour", &["unknown key `colour`", "remove it"]);
    let t = edit(
        BASE,
        "max_score = 1000000",
        "max_score = 1000000\nmax_scor = 5",
    );
    refused(&t, "max_scor =", &["unknown key `max_scor`"]);
    let t = edit(BASE, "promote = 10", "promote = 10\npromotion = 3");
    refused(&t, "promotion", &["unknown key `promotion`"]);
    let t = edit(
        BASE,
        "grant = \"gems:100\" }",
        "grant = \"gems:100\", gift = 1 }",
    );
    let (line, col, m) = invalid(&t);
    assert_eq!(line, line_of(&t, "gift"));
    assert_eq!(
        col,
        t.lines().nth(line - 1).unwrap().find("gift").unwrap() + 1
    );
    assert!(m.contains("unknown key `gift`"), "{m}");
    let t = format!("{BASE}\n[brackets]\nsize = 10\nsplit = 2\n");
    refused(&t, "split", &["unknown key `split`"]);
    let t = format!("{BASE}\n[simulation]\nplayers = 10\nbots = 2\n");
    refused(&t, "bots", &["unknown key `bots`"]);
    let t = format!("{BASE}\n[leaderboard]\nx = 1\n");
    refused(&t, "[leaderboard]", &["unknown key `leaderboard`"]);
}

#[test]
fn missing_required_keys_are_refused() {
    let t = edit(BASE, "max_score = 1000000", "mode = \"set\"");
    refused(&t, "[scoring]", &["missing key `max_score`", "add it"]);
    let t = edit(BASE, "timezone = \"UTC\"\n", "");
    refused(&t, "[schedule]", &["missing key `timezone`"]);
    let t = edit(BASE, "promote = 10\n", "");
    refused(&t, "[[tiers]]", &["missing key `promote`"]);
    let t = edit(BASE, "name = \"test-season\"\n", "");
    let (line, _, m) = invalid(&t);
    assert_eq!(line, 1);
    assert!(m.contains("missing key `name`"), "{m}");
}

#[test]
fn wrong_types_are_refused() {
    let t = edit(BASE, "max_score = 1000000", "max_score = \"lots\"");
    refused(&t, "\"lots\"", &["expected an integer"]);
    let t = edit(
        BASE,
        "key_prefix = \"lk\"",
        "key_prefix = \"lk\"\nkey_prefix = \"x\"",
    );
    refused(&t, "key_prefix = \"x\"", &["duplicate key"]);
    let t = edit(BASE, "name = \"test-season\"", "name = \"test-season");
    let (line, _, _) = invalid(&t);
    assert_eq!(line, 1);
}

#[test]
fn tier_list_must_not_be_empty() {
    // `tiers = []` must come before the first table to be a top-level key.
    let top = BASE.split("\n[[tiers]]").next().unwrap();
    let t = edit(
        top,
        "key_prefix = \"lk\"\n",
        "key_prefix = \"lk\"\ntiers = []\n",
    );
    refused(&t, "tiers = []", &["no tiers", "[[tiers]]"]);
}

#[test]
fn names_are_checked() {
    let t = edit(BASE, "\"test-season\"", "\"test season\"");
    refused(&t, "name = \"test season\"", &["' '", "A-Z, a-z, 0-9"]);
    let long = "x".repeat(65);
    let t = edit(BASE, "\"test-season\"", &format!("\"{long}\""));
    refused(&t, "name =", &["65 characters", "1-64"]);
    let t = edit(BASE, "\"test-season\"", "\"\"");
    refused(&t, "name =", &["empty"]);
    let t = edit(BASE, "key_prefix = \"lk\"", "key_prefix = \"lk:{x}\"");
    refused(&t, "key_prefix", &["':'", "\".\""]);
    let s = load(&edit(
        BASE,
        "key_prefix = \"lk\"",
        "key_prefix = \"game.lk_1\"",
    ));
    assert_eq!(s.key_prefix, "game.lk_1");
    let t = edit(BASE, "name = \"silver\"", "name = \"sil.ver\"");
    refused(&t, "name = \"sil.ver\"", &["tier name", "'.'"]);
}

#[test]
fn duplicate_tier_names_are_refused() {
    let t = edit(BASE, "name = \"silver\"", "name = \"bronze\"");
    let first = line_of(&t, "name = \"bronze\"");
    let (line, _, m) = invalid(&t);
    let second = t.rfind("name = \"bronze\"").unwrap();
    assert_eq!(line, t[..second].matches('\n').count() + 1);
    assert!(m.contains("used twice"), "{m}");
    assert!(m.contains(&format!("line {first}")), "{m}");
}

// ------------------------------------------------------------------- promote/demote

#[test]
fn the_top_tier_cannot_promote_and_the_bottom_cannot_demote() {
    let t = edit(
        BASE,
        "promote = 0\ndemote = 10",
        "promote = \"5%\"\ndemote = 10",
    );
    refused(&t, "promote = \"5%\"", &["top tier", "promote = 0"]);
    let t = edit(BASE, "promote = 10\ndemote = 0", "promote = 10\ndemote = 3");
    refused(&t, "demote = 3", &["bottom tier", "demote = 0"]);
    // A single tier is both.
    let one = BASE.split("\n[[tiers]]\nname = \"silver\"").next().unwrap();
    refused(one, "promote = 10", &["top tier"]);
    let one = edit(one, "promote = 10", "promote = \"0%\"");
    assert_eq!(load(&one).tiers.len(), 1);
}

#[test]
fn quotas_are_counts_or_percentages() {
    let s = load(&edit(BASE, "promote = 10", "promote = \"20%\""));
    assert_eq!(s.tiers[0].promote, Quota::Percent(20));
    assert_eq!(s.tiers[0].promote.of(55), 11);
    let s = load(&edit(BASE, "promote = 10", "promote = \"100%\""));
    assert_eq!(s.tiers[0].promote, Quota::Percent(100));
    let s = load(&edit(BASE, "promote = 10", "promote = 0"));
    assert_eq!(s.tiers[0].promote, Quota::Count(0));
    for (bad, why) in [
        ("-3", "negative"),
        ("\"120%\"", "more than 100%"),
        ("\"20\"", "not a whole percentage"),
        ("\"20.5%\"", "not a whole percentage"),
        ("\"-5%\"", "not a whole percentage"),
        ("\"abc\"", "not a whole percentage"),
        ("0.2", "fraction"),
        ("true", "boolean"),
        ("101", "more than brackets.size (100)"),
    ] {
        let t = edit(BASE, "promote = 10", &format!("promote = {bad}"));
        refused(&t, &format!("promote = {bad}"), &[why, "\"20%\""]);
    }
}

#[test]
fn promote_and_demote_must_not_overlap() {
    let text = format!("{BASE}\n[brackets]\nsize = 10\n");
    let t = edit(
        &text,
        "demote = 10",
        "demote = 5\n\n[[tiers]]\nname = \"gold\"\npromote = 0\ndemote = 10",
    );
    let t = edit(
        &t,
        "name = \"silver\"\npromote = 0",
        "name = \"silver\"\npromote = \"60%\"",
    );
    // silver: 60% of 10 = 6 promoted and 5 demoted out of 10.
    refused(&t, "demote = 5", &["both promoted and demoted", "(10)"]);
    let ok = edit(&t, "demote = 5", "demote = 4");
    assert_eq!(load(&ok).tiers.len(), 3);
    let t = edit(&text, "promote = 10", "promote = 11");
    refused(&t, "promote = 11", &["more than brackets.size (10)"]);
}

// ------------------------------------------------------------------------- rewards

#[test]
fn reward_ranks_are_checked() {
    let t = edit(BASE, "ranks = \"2-10\"", "ranks = \"1-5\"");
    let (line, _, m) = invalid(&t);
    assert_eq!(line, line_of(&t, "ranks = \"1-5\""));
    assert!(m.contains("overlap ranks \"1\""), "{m}");
    let t = edit(
        BASE,
        "rewards = [{ ranks = \"1\", grant = \"gems:100\" }, { ranks = \"2-10\", grant = \"gems:20\" }]",
        "rewards = [\n  { ranks = \"3-8\", grant = \"a\" },\n  { ranks = \"9\", grant = \"b\" },\n  { ranks = \"1-3\", grant = \"c\" },\n]",
    );
    let (line, _, m) = invalid(&t);
    assert_eq!(line, line_of(&t, "\"1-3\""));
    assert!(
        m.contains(&format!("(line {})", line_of(&t, "\"3-8\""))),
        "{m}"
    );
    for bad in ["0", "5-2", "a", "1-", "-3", "1-2-3", "", " ", "+1", "2..4"] {
        let t = edit(BASE, "ranks = \"2-10\"", &format!("ranks = \"{bad}\""));
        refused(&t, &format!("ranks = \"{bad}\""), &["\"N-M\""]);
    }
    let t = edit(BASE, "ranks = \"2-10\"", "ranks = \"2-101\"");
    refused(&t, "\"2-101\"", &["bracket size (100)"]);
    let t = edit(BASE, "grant = \"gems:20\"", "grant = \"  \"");
    refused(&t, "grant = \"  \"", &["empty grant"]);
    let s = load(&edit(BASE, "ranks = \"2-10\"", "ranks = \" 2 - 10 \""));
    assert_eq!(
        (s.tiers[0].rewards[1].first, s.tiers[0].rewards[1].last),
        (2, 10)
    );
}

// ------------------------------------------------------------------------ scoring

#[test]
fn scoring_values_are_checked() {
    let t = edit(BASE, "max_score = 1000000", "max_score = 0");
    refused(&t, "max_score", &["out of range", "from 1"]);
    let t = edit(BASE, "max_score = 1000000", "max_score = -5");
    refused(&t, "max_score", &["out of range"]);
    let t = edit(
        BASE,
        "max_score = 1000000",
        "max_score = 10\nmode = \"sum\"",
    );
    refused(&t, "mode", &["\"increment\", \"best\" or \"set\""]);
    let t = edit(
        BASE,
        "max_score = 1000000",
        "max_score = 10\ntime_resolution = \"1m\"",
    );
    refused(&t, "time_resolution", &["\"1s\" or \"1ms\""]);
    for (bad, why) in [
        ("0s", "zero"),
        ("31d", "longer than 30 days"),
        ("10x", "not a duration"),
        ("1h30m", "not a duration"),
        ("h", "not a duration"),
        ("-1h", "not a duration"),
        ("99999999999999999999d", "not a duration"),
        ("9999999999999999d", "longer than 30 days"),
    ] {
        let t = edit(
            BASE,
            "max_score = 1000000",
            &format!("max_score = 10\nidempotency_window = \"{bad}\""),
        );
        refused(&t, "idempotency_window", &[why, "\"24h\""]);
    }
    for (ok, secs) in [
        ("30s", 30),
        ("15m", 900),
        ("24h", 86_400),
        ("30d", 2_592_000),
    ] {
        let t = edit(
            BASE,
            "max_score = 1000000",
            &format!("max_score = 10\nidempotency_window = \"{ok}\""),
        );
        assert_eq!(load(&t).scoring.idempotency_window.as_secs(), secs);
    }
}

fn berlin_weekly(max_score: u64, resolution: &str) -> String {
    let t = edit(BASE, "timezone = \"UTC\"", "timezone = \"Europe/Berlin\"");
    let t = edit(
        &t,
        "start = \"2026-01-05T00:00:00Z\"",
        "start = \"2026-01-05T00:00:00+01:00\"",
    );
    edit(
        &t,
        "max_score = 1000000",
        &format!("max_score = {max_score}\ntime_resolution = \"{resolution}\""),
    )
}

#[test]
fn weekly_millisecond_seasons_are_limited_to_14804731() {
    let t = berlin_weekly(1_000_000_000, "1ms");
    let (line, col, m) = invalid(&t);
    assert_eq!((line, col), (line_of(&t, "max_score"), 13));
    assert!(m.contains("14804731"), "{m}");
    assert!(m.contains("169 h"), "{m}");
    assert!(m.contains("time_resolution = \"1s\""), "{m}");
    assert!(m.contains("shorter period"), "{m}");
    let s = load(&berlin_weekly(14_804_731, "1ms"));
    assert_eq!(s.calendar.max_period_millis(), 169 * 3_600_000);
    assert_eq!(s.packing.max_score(), 14_804_731);
    assert!(Season::from_toml(&berlin_weekly(14_804_732, "1ms"), "x").is_err());
    // The same with seconds fits easily.
    assert!(Season::from_toml(&berlin_weekly(1_000_000_000, "1s"), "x").is_ok());
}

#[test]
fn utc_weeks_allow_a_little_more() {
    let largest = Packing::largest_max_score(168 * 3_600_000).unwrap();
    assert!(largest > 14_804_731);
    let t = edit(
        BASE,
        "max_score = 1000000",
        &format!("max_score = {largest}\ntime_resolution = \"1ms\""),
    );
    assert_eq!(load(&t).packing.max_score(), largest);
    let t = edit(
        BASE,
        "max_score = 1000000",
        &format!("max_score = {}\ntime_resolution = \"1ms\"", largest + 1),
    );
    refused(&t, "max_score", &[&largest.to_string(), "168 h"]);
}

#[test]
fn huge_scores_with_seconds_name_the_limit() {
    let t = edit(
        BASE,
        "max_score = 1000000",
        "max_score = 9223372036854775807",
    );
    let largest = Packing::largest_max_score(168 * 3600).unwrap();
    refused(&t, "max_score", &[&largest.to_string(), "2^53"]);
    let (_, _, m) = invalid(&t);
    assert!(!m.contains("use time_resolution"), "already at 1s: {m}");
}

// ------------------------------------------------------------------------ schedule

#[test]
fn zones_are_checked() {
    let t = edit(BASE, "timezone = \"UTC\"", "timezone = \"Europe/Berln\"");
    refused(
        &t,
        "timezone",
        &["unknown time zone \"Europe/Berln\"", "IANA"],
    );
    let t = edit(BASE, "timezone = \"UTC\"", "timezone = \"europe/berlin\"");
    refused(&t, "timezone", &["did you mean \"Europe/Berlin\""]);
}

#[test]
fn periods_are_checked() {
    for (bad, why) in [
        ("hourly", "has 1"),
        ("0 0 * *", "has 4"),
        ("61 * * * *", "invalid cron expression"),
        ("0 0 0 1 1 * 2030", "has 7"),
        ("", "has 0"),
    ] {
        let t = edit(BASE, "period = \"weekly\"", &format!("period = \"{bad}\""));
        refused(
            &t,
            "period =",
            &[why, "\"daily\", \"weekly\"", "\"0 0 * * MON\""],
        );
    }
    let t = edit(BASE, "period = \"weekly\"", "period = \"0 0 30 2 *\"");
    refused(&t, "period =", &["no occurrence"]);
}

#[test]
fn starts_are_checked() {
    for bad in [
        "start = 2026-01-05T00:00:00",
        "start = 2026-01-05",
        "start = \"2026-01-05 midnight\"",
        "start = \"2026-01-05T00:00:00\"",
        "start = 20260105",
    ] {
        let t = edit(BASE, "start = \"2026-01-05T00:00:00Z\"", bad);
        refused(&t, "start =", &["2026-01-05T00:00:00Z", "offset"]);
    }
}

#[test]
fn a_cron_start_must_be_an_occurrence() {
    let t = edit(BASE, "period = \"weekly\"", "period = \"0 0 * * MON\"");
    assert_eq!(load(&t).calendar.max_period_millis(), 168 * 3_600_000);
    let t = edit(&t, "2026-01-05T00:00:00Z", "2026-01-06T00:00:00Z");
    refused(
        &t,
        "start =",
        &[
            "not an occurrence",
            "2026-01-12T00:00:00+00:00",
            "set start",
        ],
    );
    let t = edit(BASE, "period = \"weekly\"", "period = \"0 0 * * MON\"");
    let t = edit(&t, "2026-01-05T00:00:00Z", "2026-01-05T00:00:00.250Z");
    refused(&t, "start =", &["fraction"]);
}

// ------------------------------------------------------------ brackets and others

#[test]
fn brackets_are_checked() {
    for bad in ["0", "10001", "-1"] {
        let t = format!("{BASE}\n[brackets]\nsize = {bad}\n");
        refused(&t, "size =", &["brackets.size", "1 to 10000"]);
    }
    let t = format!("{BASE}\n[brackets]\njoin = \"auto\"\n");
    refused(&t, "join =", &["\"on_first_score\" or \"explicit\""]);
    let t = format!("{BASE}\n[brackets]\nsize = 10000\n");
    assert_eq!(load(&t).brackets.size, 10_000);
}

#[test]
fn late_seats_are_checked() {
    use leaguekit::season::seats::{LatePoint, LateSeats};
    use std::time::Duration;
    let with = |keys: &str| format!("{BASE}\n[brackets]\nsize = 100\n{keys}\n");
    assert_eq!(load(&with("")).brackets.late, None);
    let s = load(&with("early_cap = 80\nlate_after = \"60%\""));
    let want = |after| Some(LateSeats::new(80, after));
    assert_eq!(s.brackets.late, want(LatePoint::Percent(60)));
    assert_eq!(s.caps().early_cap, 80);
    let s = load(&with("early_cap = 80\nlate_after = \"4d\""));
    assert_eq!(
        s.brackets.late,
        want(LatePoint::Elapsed(Duration::from_secs(4 * 86_400)))
    );
    // Both or neither, each saying what the other is.
    refused(
        &with("early_cap = 80"),
        "early_cap",
        &["late_after is missing", "60%"],
    );
    refused(
        &with("late_after = \"60%\""),
        "late_after",
        &["early_cap is missing"],
    );
    for bad in ["0", "100", "-5"] {
        refused(
            &with(&format!("early_cap = {bad}\nlate_after = \"60%\"")),
            "early_cap",
            &["brackets.early_cap", "1 to 99"],
        );
    }
    for bad in ["0%", "100%", "60.5%", "soon", "0s"] {
        refused(
            &with(&format!("early_cap = 80\nlate_after = \"{bad}\"")),
            "late_after",
            &["brackets.late_after", "\"60%\""],
        );
    }
    let t = format!("{BASE}\n[brackets]\nsize = 1\nearly_cap = 1\nlate_after = \"50%\"\n");
    refused(&t, "early_cap", &["size of at least 2"]);
}

#[test]
fn profiles_are_checked() {
    let t = format!("{BASE}\n[profiles]\nfields = [\"name\", \"avatar\", \"name\"]\n");
    let (line, col, m) = invalid(&t);
    assert_eq!(line, line_of(&t, "fields"));
    assert_eq!(
        col,
        t.lines().nth(line - 1).unwrap().rfind("\"name\"").unwrap() + 1
    );
    assert!(m.contains("listed twice"), "{m}");
    for bad in [
        "\"nick name\"",
        "\"\"",
        "\"a-b\"",
        &format!("\"{}\"", "f".repeat(33)),
    ] {
        let t = format!("{BASE}\n[profiles]\nfields = [{bad}]\n");
        refused(&t, "fields", &["1-32 characters"]);
    }
    let many: Vec<String> = (0..17).map(|i| format!("\"f{i}\"")).collect();
    let t = format!("{BASE}\n[profiles]\nfields = [{}]\n", many.join(", "));
    refused(&t, "fields", &["at most 16"]);
    let sixteen = many[..16].join(", ");
    let t = format!("{BASE}\n[profiles]\nfields = [{sixteen}]\n");
    assert_eq!(load(&t).profiles.fields.len(), 16);
    for bad in ["0", "65537"] {
        let t = format!("{BASE}\n[profiles]\nmax_bytes = {bad}\n");
        refused(&t, "max_bytes", &["1 to 65536"]);
    }
}

#[test]
fn idle_retention_and_simulation_are_checked() {
    let t = format!("{BASE}\n[idle]\npolicy = \"vanish\"\n");
    refused(&t, "policy", &["\"stay\" or \"drop_one_tier\""]);
    for bad in ["0", "521"] {
        let t = format!("{BASE}\n[retention]\nperiods = {bad}\n");
        refused(&t, "periods =", &["1 to 520"]);
    }
    for (key, bad, why) in [
        ("active_share", "1.5", "from 0 to 1"),
        ("quit_rate", "-0.1", "from 0 to 1"),
        ("return_rate", "nan", "from 0 to 1"),
        ("skill_spread", "-1.0", "at least 0"),
        ("skill_spread", "inf", "at least 0"),
        ("players", "0", "1 to 10000000"),
        ("periods", "0", "1 to 10000"),
        ("seed", "-1", "0 to"),
    ] {
        let t = format!("{BASE}\n[simulation]\n{key} = {bad}\n");
        refused(
            &t,
            &format!("{key} ="),
            &[&format!("simulation.{key}"), why],
        );
    }
}

#[test]
fn line_and_column_count_characters() {
    // A multi-byte character before the error must not shift the column.
    let t = edit(BASE, "name = \"silver\"", "name = \"silver\" # ünïcödé");
    let t = edit(&t, "demote = 10", "demote = \"x\"");
    let (line, col, _) = invalid(&t);
    assert_eq!((line, col), (line_of(&t, "demote = \"x\""), 10));
    let t = format!(
        "# ✓ ünïcödé\n{}",
        edit(BASE, "max_score = 1000000", "max_score = 0")
    );
    let (line, col, _) = invalid(&t);
    assert_eq!((line, col), (line_of(&t, "max_score"), 13));
}

#[test]
fn garbage_never_panics() {
    for text in [
        "",
        "\u{0}",
        "[[[",
        "name = \"x\"\n[schedule]\nstart = 1979-05-27T07:32:00Z\n",
        "tiers = 5",
        &BASE.replace('"', ""),
        &BASE[..BASE.len() / 2],
    ] {
        assert!(Season::from_toml(text, "g.toml").is_err());
    }
}

// ------------------------------------------------------------------------ calendar

fn calendar(zone: &str, period: &str, start: &str) -> Calendar {
    let text = edit(
        BASE,
        "timezone = \"UTC\"",
        &format!("timezone = \"{zone}\""),
    );
    let text = edit(
        &text,
        "period = \"weekly\"",
        &format!("period = \"{period}\""),
    );
    let text = edit(
        &text,
        "start = \"2026-01-05T00:00:00Z\"",
        &format!("start = \"{start}\""),
    );
    load(&text).calendar
}

#[test]
fn berlin_weeks_across_dst() {
    let berlin: Tz = "Europe/Berlin".parse().unwrap();
    let c = calendar("Europe/Berlin", "weekly", "2026-03-23T00:00:00+01:00");
    assert_eq!(c.max_period_millis(), 169 * 3_600_000);
    let p1 = c.period(1).unwrap();
    assert_eq!(p1.start, utc("2026-03-22T23:00:00Z"));
    assert_eq!(p1.end, utc("2026-03-29T22:00:00Z")); // Monday 00:00 CEST
    assert_eq!(hours(&p1), 167);
    // Autumn: 2026-10-25 falls back, the week of 19 October lasts 169 h.
    let autumn = c.period_at(utc("2026-10-21T12:00:00Z")).unwrap();
    assert_eq!(autumn.start, utc("2026-10-18T22:00:00Z"));
    assert_eq!(autumn.end, utc("2026-10-25T23:00:00Z"));
    assert_eq!(hours(&autumn), 169);
    assert_eq!(autumn.id, 1 + 30);
    for id in 1..200 {
        let p = c.period(id).unwrap();
        let local = p.start.with_timezone(&berlin);
        assert_eq!(
            (local.weekday(), local.hour(), local.minute()),
            (Weekday::Mon, 0, 0)
        );
        assert!([167, 168, 169].contains(&hours(&p)));
        assert_eq!(c.period(id + 1).unwrap().start, p.end);
    }
}

#[test]
fn new_york_days_across_dst() {
    let ny: Tz = "America/New_York".parse().unwrap();
    let c = calendar("America/New_York", "daily", "2026-03-01T00:00:00-05:00");
    assert_eq!(c.max_period_millis(), 25 * 3_600_000);
    let spring = c.period_at(utc("2026-03-08T12:00:00Z")).unwrap();
    assert_eq!(spring.id, 8);
    assert_eq!(hours(&spring), 23);
    let fall = c.period_at(utc("2026-11-01T12:00:00Z")).unwrap();
    assert_eq!(hours(&fall), 25);
    assert_eq!(fall.start, utc("2026-11-01T04:00:00Z"));
    assert_eq!(fall.end, utc("2026-11-02T05:00:00Z"));
    for id in 1..400 {
        let p = c.period(id).unwrap();
        let local = p.start.with_timezone(&ny);
        assert_eq!((local.hour(), local.minute()), (0, 0), "period {id}");
    }
    // A boundary at 02:30 does not exist on 8 March: it moves to 03:00 EDT.
    let c = calendar("America/New_York", "daily", "2026-03-01T02:30:00-05:00");
    let p = c.period_at(utc("2026-03-08T12:00:00Z")).unwrap();
    assert_eq!(p.start, utc("2026-03-08T07:00:00Z"));
    assert_eq!(p.start.with_timezone(&ny).hour(), 3);
    // 01:30 happens twice on 1 November: the boundary is the first (EDT).
    let c = calendar("America/New_York", "daily", "2026-10-01T01:30:00-04:00");
    let p = c.period_at(utc("2026-11-01T12:00:00Z")).unwrap();
    assert_eq!(p.start, utc("2026-11-01T05:30:00Z"));
}

#[test]
fn cron_periods() {
    let berlin: Tz = "Europe/Berlin".parse().unwrap();
    let c = calendar("Europe/Berlin", "0 0 * * MON", "2026-01-05T00:00:00+01:00");
    assert_eq!(c.max_period_millis(), 169 * 3_600_000);
    let weekly = calendar("Europe/Berlin", "weekly", "2026-01-05T00:00:00+01:00");
    for id in 1..150 {
        let p = c.period(id).unwrap();
        assert_eq!(Some(p), weekly.period(id));
        let local = p.start.with_timezone(&berlin);
        assert_eq!((local.weekday(), local.hour()), (Weekday::Mon, 0));
    }
    let six = calendar("UTC", "0 */6 * * *", "2026-01-01T00:00:00Z");
    assert_eq!(six.max_period_millis(), 6 * 3_600_000);
    let p = six.period_at(utc("2026-01-02T13:00:00Z")).unwrap();
    assert_eq!(p.id, 7);
    assert_eq!(p.start, utc("2026-01-02T12:00:00Z"));
    assert_eq!(hours(&p), 6);
    assert_eq!(six.period(7), Some(p));
    // Six fields: seconds first.
    let tens = calendar("UTC", "*/10 * * * * *", "2026-01-01T00:00:00Z");
    assert_eq!(tens.max_period_millis(), 10_000);
    assert_eq!(tens.period(7).unwrap().start, utc("2026-01-01T00:01:00Z"));
    // Monthly on the 1st: the longest gap is 31 days.
    let monthly = calendar("UTC", "0 0 1 * *", "2026-01-01T00:00:00Z");
    assert_eq!(monthly.max_period_millis(), 31 * 86_400_000);
    let p = monthly.period_at(utc("2026-02-14T00:00:00Z")).unwrap();
    assert_eq!((p.id, p.start), (2, utc("2026-02-01T00:00:00Z")));
}

#[test]
fn periods_from_lists_the_next_periods() {
    let c = calendar("UTC", "daily", "2026-01-01T00:00:00Z");
    let before = c.periods_from(utc("2020-01-01T00:00:00Z"), 3);
    assert_eq!(before.iter().map(|p| p.id).collect::<Vec<_>>(), [1, 2, 3]);
    let mid = c.periods_from(utc("2026-01-10T05:00:00Z"), 4);
    assert_eq!(
        mid.iter().map(|p| p.id).collect::<Vec<_>>(),
        [10, 11, 12, 13]
    );
    assert_eq!(mid[0].start, utc("2026-01-10T00:00:00Z"));
    assert!(mid.windows(2).all(|w| w[0].end == w[1].start));
    assert!(c.periods_from(utc("2026-01-10T05:00:00Z"), 0).is_empty());
    assert!(c.periods_from(utc("2200-01-01T00:00:00Z"), 3).is_empty());
    let cron = calendar("UTC", "0 */6 * * *", "2026-01-01T00:00:00Z");
    let ids: Vec<_> = cron
        .periods_from(utc("2026-01-01T07:00:00Z"), 3)
        .iter()
        .map(|p| p.id)
        .collect();
    assert_eq!(ids, [2, 3, 4]);
}

#[test]
fn out_of_range_lookups() {
    let c = calendar("Europe/Berlin", "weekly", "2026-01-05T00:00:00+01:00");
    assert_eq!(c.period(0), None);
    assert_eq!(c.period_at(utc("2026-01-04T22:59:59Z")), None);
    assert!(c.period_at(utc("2026-01-04T23:00:00Z")).is_some());
    assert_eq!(c.period_at(utc("2130-01-01T00:00:00Z")), None);
    assert_eq!(c.period(u64::MAX), None);
    assert_eq!(c.period(1_000_000), None);
    let s: &Schedule = c.schedule();
    assert_eq!(s.period, PeriodRule::Weekly);
    assert_eq!(Calendar::new(s).unwrap(), c);
}

/// Checks every calendar invariant around one instant.
fn check_instant(c: &Calendar, at: DateTime<Utc>) {
    let p = c.period_at(at).expect("a period within the horizon");
    assert!(p.start <= at && at < p.end, "{at} not in {p:?}");
    assert_eq!(c.period(p.id), Some(p));
    assert!((p.end - p.start).num_milliseconds() as u64 <= c.max_period_millis());
    let next = c.period(p.id + 1).expect("next period");
    assert_eq!(next.start, p.end, "periods tile");
    assert_eq!(c.period_at(p.end), Some(next));
    assert_eq!(c.period_at(p.end - TimeDelta::milliseconds(1)), Some(p));
    if p.id > 1 {
        let prev = c.period(p.id - 1).unwrap();
        assert_eq!(prev.end, p.start);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn fixed_calendars_round_trip_and_tile(
        zone in prop::sample::select(vec![
            "UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe",
            "Asia/Kolkata", "America/Santiago", "Pacific/Chatham",
        ]),
        weekly in any::<bool>(),
        start_secs in 0i64..(5 * 365 * 86_400),
        offsets in prop::collection::vec(0i64..(30 * 365 * 86_400_000), 1..40),
    ) {
        let tz: Tz = zone.parse().unwrap();
        let start = (utc("2020-01-01T00:00:00Z") + TimeDelta::seconds(start_secs))
            .with_timezone(&tz)
            .to_rfc3339();
        let c = calendar(zone, if weekly { "weekly" } else { "daily" }, &start);
        let start = c.schedule().start;
        check_instant(&c, start);
        for ms in offsets {
            check_instant(&c, start + TimeDelta::milliseconds(ms));
        }
    }

    #[test]
    fn cron_calendars_round_trip_and_tile(
        pattern in prop::sample::select(vec![
            "0 0 * * MON", "0 */6 * * *", "30 2 * * *", "0 0 1 * *", "15 3 * * 1-5",
        ]),
        zone in prop::sample::select(vec!["UTC", "Europe/Berlin", "America/New_York"]),
        offsets in prop::collection::vec(0i64..(3 * 365 * 86_400_000), 1..20),
    ) {
        let tz: Tz = zone.parse().unwrap();
        // Start at the first occurrence after 2026-01-01 (the calendar refuses others).
        let probe = utc("2026-01-01T00:00:00Z").with_timezone(&tz);
        let text_start = {
            let c = croner::Cron::from_str(pattern).unwrap();
            c.find_next_occurrence(&probe, true).unwrap().to_rfc3339()
        };
        let c = calendar(zone, pattern, &text_start);
        let start = c.schedule().start;
        check_instant(&c, start);
        for ms in offsets {
            check_instant(&c, start + TimeDelta::milliseconds(ms));
        }
    }
}

// ------------------------------------------------ long cron periods and calendar ends

/// A season of `BASE` with a cron `period` in `zone` from `start`.
fn cron_season(zone: &str, period: &str, start: &str) -> String {
    let text = edit(
        BASE,
        "timezone = \"UTC\"",
        &format!("timezone = \"{zone}\""),
    );
    let text = edit(
        &text,
        "period = \"weekly\"",
        &format!("period = \"{period}\""),
    );
    edit(
        &text,
        "start = \"2026-01-05T00:00:00Z\"",
        &format!("start = \"{start}\""),
    )
}

/// What the engine checks before it packs a score: every instant of `p` has a tick
/// below the packing's `ticks` (else it fails with "report this").
fn packs_every_instant(s: &Season, p: &Period) {
    let len = (p.end - p.start).num_milliseconds() as u64;
    assert!(
        len <= s.calendar.max_period_millis(),
        "period {} lasts {len} ms, more than the bound {}",
        p.id,
        s.calendar.max_period_millis()
    );
    let last_ms = len - 1;
    assert!(last_ms / s.scoring.time_resolution.millis() < s.packing.ticks());
}

#[test]
fn a_february_pattern_has_an_eleven_month_period() {
    // "* * * 2 *": every minute of February, then nothing until next February. Only the
    // first 1000 occurrences used to be checked, so the bound was one minute and every
    // update from March on failed.
    for (zone, start, eleven_months) in [
        (
            "UTC",
            "2026-02-01T00:00:00Z",
            ("2026-02-28T23:59:00Z", "2027-02-01T00:00:00Z"),
        ),
        (
            "Europe/Berlin",
            "2026-02-01T00:00:00+01:00",
            ("2026-02-28T22:59:00Z", "2027-01-31T23:00:00Z"),
        ),
    ] {
        let s = load(&cron_season(zone, "* * * 2 *", start));
        let p = s.calendar.period_at(utc("2026-07-01T00:00:00Z")).unwrap();
        assert_eq!(
            (p.start, p.end),
            (utc(eleven_months.0), utc(eleven_months.1))
        );
        packs_every_instant(&s, &p);
        // 337 days and a minute in wall-clock time, plus the DST margin in Berlin.
        let wall = (337 * 24 * 60 + 1) * 60_000;
        let margin = if zone == "UTC" { 0 } else { 3_600_000 };
        assert_eq!(s.calendar.max_period_millis(), wall + margin);
        // 40,320 minutes a year (41,760 in leap years): the million-period cap ends the
        // calendar in the 25th February.
        assert!(s.calendar.ends_at_period_cap());
        let last = s.calendar.last_period();
        assert_eq!(last.id, 1_000_000);
        assert_eq!(
            last.end.with_timezone(&s.schedule.timezone).to_rfc3339()[..16],
            *"2050-02-17T10:40"
        );
        assert_eq!(s.calendar.period_at(last.end), None);
        assert_eq!(s.calendar.period(last.id + 1), None);
    }
}

#[tokio::test]
async fn updates_in_a_long_cron_period_are_accepted() {
    use leaguekit::SubmitOptions;
    use leaguekit::{League, ManualClock, MemoryStore};
    use std::sync::Arc;
    for (zone, start) in [
        ("UTC", "2026-02-01T00:00:00Z"),
        ("Europe/Berlin", "2026-02-01T00:00:00+01:00"),
    ] {
        let s = load(&cron_season(zone, "* * * 2 *", start));
        // The last second of the eleven-month period.
        let at = utc("2027-01-31T22:59:59Z");
        let league = League::with_clock(s, MemoryStore::new(), Arc::new(ManualClock::new(at)));
        for when in [utc("2026-03-15T12:00:00Z"), at] {
            let done = league
                .submit("ana", 5, SubmitOptions::default().at(when))
                .await;
            assert!(done.is_ok(), "{zone} {when}: {done:?}");
        }
    }
}

#[test]
fn a_leap_day_pattern_is_packed_for_its_eight_year_period() {
    // 2096-02-29 to 2104-02-29: 2100 is not a leap year.
    let text = cron_season("UTC", "0 0 29 2 *", "2024-02-29T00:00:00Z");
    let s = load(&text);
    let p = s.calendar.period_at(utc("2100-03-01T00:00:00Z")).unwrap();
    assert_eq!(
        (p.start, p.end),
        (utc("2096-02-29T00:00:00Z"), utc("2104-02-29T00:00:00Z"))
    );
    assert_eq!(s.calendar.max_period_millis(), 2921 * 86_400_000);
    packs_every_instant(&s, &p);
    let largest = Packing::largest_max_score(2921 * 86_400).unwrap();
    assert_eq!(largest, 35_689_828);
    let t = edit(&text, "max_score = 1000000", "max_score = 35689829");
    refused(&t, "max_score", &["35689828"]);
    let t = edit(&text, "max_score = 1000000", "max_score = 35689828");
    assert_eq!(load(&t).packing.max_score(), largest);
    // Europe/Berlin adds its DST margin of an hour.
    let s = load(&cron_season(
        "Europe/Berlin",
        "0 0 29 2 *",
        "2024-02-29T00:00:00+01:00",
    ));
    assert_eq!(
        s.calendar.max_period_millis(),
        2921 * 86_400_000 + 3_600_000
    );
}

#[test]
fn an_every_second_calendar_states_its_early_end() {
    // A million one-second periods last 11.6 days. Such calendars are allowed (tests and
    // demos of the scheduler use periods of seconds); the calendar says where it ends.
    let s = load(&cron_season("UTC", "* * * * * *", "2026-01-01T00:00:00Z"));
    assert_eq!(s.calendar.max_period_millis(), 1000);
    assert!(s.calendar.ends_at_period_cap());
    let last = s.calendar.last_period();
    assert_eq!(last.id, 1_000_000);
    assert_eq!(last.end, utc("2026-01-12T13:46:40Z"));
    assert_eq!(s.calendar.period_at(last.end), None);
    assert!(
        s.calendar
            .periods_from(utc("2026-02-01T00:00:00Z"), 3)
            .is_empty()
    );
    // An ordinary calendar covers 100 years.
    let s = load(BASE);
    assert!(!s.calendar.ends_at_period_cap());
    let last = s.calendar.last_period();
    assert_eq!((last.id, last.end), (5218, utc("2126-01-07T00:00:00Z")));
}

#[test]
fn check_states_an_early_end() {
    use std::io::Write as _;
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(cron_season("UTC", "* * * * * *", "2026-01-01T00:00:00Z").as_bytes())
        .unwrap();
    let run = |json: bool| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_leaguekit"));
        cmd.arg("--config").arg(file.path()).arg("check");
        if json {
            cmd.arg("--json");
        }
        let out = cmd.env_remove("LEAGUEKIT_REDIS").output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let text = run(false);
    assert!(
        text.contains(
            "calendar: ENDS EARLY: 1,000,000 periods (the most a cron schedule has), the last \
             ends 2026-01-12T13:46:40+00:00"
        ),
        "{text}"
    );
    assert!(text.contains("events after that are refused"), "{text}");
    let json: serde_json::Value = serde_json::from_str(&run(true)).unwrap();
    let c = &json["calendar"];
    assert_eq!(c["periods"], 1_000_000);
    assert_eq!(c["last_end"], "2026-01-12T13:46:40+00:00");
    assert_eq!(c["ends_at_period_cap"], true);
    assert_eq!(c["longest_period_ms"], 1000);
}

#[test]
fn starts_too_late_for_four_digit_years_are_refused() {
    // A calendar covers 100 years; its boundaries must stay within 9999-12-31T23:59:59Z
    // so that `check` prints them in a form `--at` reads back.
    for (period, start, latest) in [
        ("weekly", "9999-12-31T00:00:00Z", "9899-12-29T23:59:59Z"),
        ("daily", "9950-06-01T00:00:00Z", "9899-12-30T23:59:59Z"),
    ] {
        let t = edit(
            BASE,
            "period = \"weekly\"",
            &format!("period = \"{period}\""),
        );
        let t = edit(&t, "2026-01-05T00:00:00Z", start);
        refused(
            &t,
            "start =",
            &["schedule.start", "too late", "9999-12-31T23:59:59Z", latest],
        );
        let err = Season::from_toml(&t, "season.toml")
            .unwrap_err()
            .to_string();
        let line = line_of(&t, "start =");
        assert!(err.starts_with(&format!("season.toml:{line}:9: ")), "{err}");
        // The latest start allowed loads, and its last boundary reads back.
        let s = load(&edit(&t, start, latest));
        let last = s.calendar.last_period();
        assert_eq!(last.end, utc("9999-12-31T23:59:59Z"));
        assert_eq!(utc(&last.end.to_rfc3339()), last.end);
    }
    // Cron calendars end by 4999 (the cron library's last year).
    let t = cron_season("UTC", "0 0 * * *", "9999-12-31T00:00:00Z");
    refused(&t, "start =", &["too late", "4999"]);
    let t = cron_season("UTC", "0 0 * * *", "4950-01-01T00:00:00Z");
    refused(&t, "start =", &["too late", "4999"]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Every period, anywhere in the calendar (near its start, around 2100 when the tz
    /// database stops changing offsets, just before its end), is within the bound the
    /// scores are packed with.
    #[test]
    fn cron_periods_never_exceed_the_bound(
        pattern in prop::sample::select(vec![
            "0 0 * * MON", "30 2 * * SUN", "0 1-3 * * SUN", "0 2,14 * * SAT,SUN",
            "0 0 29 2 *", "0 0 L * *", "0 12 * * 5L", "0 0 15W * *", "0 0 * 2 1#5",
            "0 0 1,15 * *", "@monthly",
        ]),
        zone in prop::sample::select(vec![
            "UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe",
            "America/Santiago", "Pacific/Chatham", "Antarctica/Troll", "Asia/Tehran",
        ]),
        from_days in 0u64..(80 * 365),
        samples in prop::collection::vec(0.0f64..1.0, 1..12),
    ) {
        let tz: Tz = zone.parse().unwrap();
        let probe = (utc("2020-01-01T00:00:00Z") + TimeDelta::days(from_days as i64))
            .with_timezone(&tz);
        let start = {
            let c = croner::Cron::from_str(pattern).unwrap();
            c.find_next_occurrence(&probe, true).unwrap().to_rfc3339()
        };
        let c = calendar(zone, pattern, &start);
        let start = c.schedule().start;
        let last = c.last_period();
        prop_assert!(!c.ends_at_period_cap());
        let span = (last.end - start).num_milliseconds() as f64;
        let mut instants: Vec<DateTime<Utc>> = samples
            .iter()
            .map(|f| start + TimeDelta::milliseconds((span * f) as i64))
            .collect();
        // And the very end, which makes the calendar compute every boundary.
        instants.push(last.end - TimeDelta::milliseconds(1));
        let max = c.max_period_millis();
        for at in instants {
            let p = c.period_at(at).expect("a period");
            prop_assert!(p.start <= at && at < p.end);
            let len = (p.end - p.start).num_milliseconds() as u64;
            prop_assert!(len <= max, "{pattern:?} in {zone}: period {} lasts {len} > {max}", p.id);
        }
        prop_assert_eq!(c.period(last.id), Some(last));
        prop_assert_eq!(c.period(last.id + 1), None);
    }
}

#[test]
fn renamed_from_names_a_tier_that_is_gone() {
    let t = edit(
        BASE,
        "name = \"silver\"",
        "name = \"argent\"\nrenamed_from = \"silver\"",
    );
    let s = load(&t);
    assert_eq!(s.tiers[1].renamed_from.as_deref(), Some("silver"));
    assert_eq!(s.tier_by_any_name("silver").map(|(i, _)| i), Some(1));
    assert_eq!(s.tier_by_any_name("argent").map(|(i, _)| i), Some(1));
    assert!(s.tier_by_any_name("gold").is_none());
    // The old name must be gone, and only one tier may take it.
    let t = edit(
        BASE,
        "name = \"silver\"",
        "name = \"silver\"\nrenamed_from = \"bronze\"",
    );
    let (line, _, m) = invalid(&t);
    assert_eq!(line, line_of(&t, "renamed_from"));
    assert!(m.contains("still called \"bronze\""), "{m}");
    let t = edit(
        BASE,
        "name = \"bronze\"",
        "name = \"copper\"\nrenamed_from = \"tin\"",
    );
    let t = edit(
        &t,
        "name = \"silver\"",
        "name = \"argent\"\nrenamed_from = \"tin\"",
    );
    let (_, _, m) = invalid(&t);
    assert!(m.contains("both renamed_from \"tin\""), "{m}");
    let t = edit(
        BASE,
        "name = \"silver\"",
        "name = \"argent\"\nrenamed_from = \"a b\"",
    );
    let (_, _, m) = invalid(&t);
    assert!(m.contains("renamed_from"), "{m}");
}

#[test]
fn cohorts_are_declared_by_list_or_pattern() {
    let s = load(&format!("{BASE}\n[cohorts]\nvalues = [\"eu\", \"na\"]\n"));
    let c = s.cohorts.as_ref().expect("cohorts");
    assert!(c.check("eu").is_ok() && c.check("asia").is_err());
    let s = load(&format!("{BASE}\n[cohorts]\npattern = \"[a-z]{{2,8}}\"\n"));
    let c = s.cohorts.as_ref().expect("cohorts");
    assert!(c.check("asia").is_ok());
    assert!(
        c.check("EU").is_err(),
        "the pattern matches the whole label"
    );
    assert!(
        c.check("a@b").is_err(),
        "labels are part of keys: a plain alphabet"
    );
    assert!(load(BASE).cohorts.is_none());
    for (section, needle) in [
        ("values = []", "cohorts.values is empty"),
        ("values = [\"eu\", \"eu\"]", "listed twice"),
        ("values = [\"e u\"]", "labels are 1-32 characters"),
        ("pattern = \"[a-\"", "not a valid regular expression"),
        ("values = [\"eu\"]\npattern = \"x\"", "exactly one of"),
        ("region = \"eu\"", "unknown key `region`"),
    ] {
        let t = format!("{BASE}\n[cohorts]\n{section}\n");
        let (line, _, m) = invalid(&t);
        assert!(m.contains(needle), "{section}: {m}");
        assert!(line >= line_of(&t, "[cohorts]"), "{section}: line {line}");
    }
}

#[test]
fn server_timeouts_are_read_and_checked() {
    let with = |lines: &str| format!("{BASE}\n[server]\n{lines}\n");
    let s = load(&with("request_timeout = \"5s\"\nidle_timeout = \"90s\""));
    assert_eq!(
        s.server.request_timeout,
        Some(std::time::Duration::from_secs(5))
    );
    assert_eq!(
        s.server.idle_timeout,
        Some(std::time::Duration::from_secs(90))
    );
    assert_eq!(load(BASE).server.idle_timeout, None);
    for bad in ["\"0s\"", "\"2h\"", "\"soon\""] {
        let line = format!("idle_timeout = {bad}");
        refused(&with(&line), &line, &["server.idle_timeout"]);
    }
    // A number is not a duration: refused on its line, as every typed key is.
    refused(
        &with("idle_timeout = 60"),
        "idle_timeout = 60",
        &["expected a string"],
    );
}

#[test]
fn limits_are_read_and_checked_at_their_key() {
    assert!(load(BASE).limits.is_empty());
    let s = load(&format!(
        "{BASE}\n[limits]\nmax_value = 500\nrate = \"30/1m\"\nmax_period_score = 90000\n"
    ));
    assert_eq!(s.limits.max_value, Some(500));
    assert_eq!(s.limits.max_period_score, Some(90_000));
    let rate = s.limits.rate.expect("rate");
    assert_eq!((rate.count, rate.window.as_secs()), (30, 60));
    let with = |section: &str| format!("{BASE}\n[limits]\n{section}\n");
    refused(
        &with("max_period_score = 1000001"),
        "max_period_score",
        &[
            "limits.max_period_score = 1000001",
            "scoring.max_score = 1000000",
        ],
    );
    refused(&with("max_value = 0"), "max_value", &["limits.max_value"]);
    for bad in ["\"30\"", "\"0/1m\"", "\"30/1y\"", "\"ten/1m\""] {
        refused(
            &with(&format!("rate = {bad}")),
            "rate",
            &["limits.rate", "30/1m"],
        );
    }
    refused(&with("burst = 3"), "burst", &["burst"]);
}
