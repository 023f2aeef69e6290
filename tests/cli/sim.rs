//! The designer's simulator: deterministic, conserving players, the same on both
//! stores; the fast path equal to the full engine path byte for byte (differential
//! tests), whatever the number of threads; replays and the tuner.

use crate::common;

use std::sync::Arc;

use leaguekit::sim::{
    History, SimOptions, SimReport, replay, replay_fast, simulate, simulate_fast,
};
use leaguekit::{ManualClock, MemoryStore, Season};

/// A four-tier weekly season in a DST zone with 20-player brackets; `extra` is more
/// TOML (sections not set here: `[idle]`, `[retention]`).
fn custom(
    prefix: &str,
    promote: &str,
    demote: &str,
    join: &str,
    scoring: &str,
    extra: &str,
) -> Season {
    custom_brackets(prefix, promote, demote, join, scoring, extra, "")
}

/// [`custom`] with more `[brackets]` keys.
fn custom_brackets(
    prefix: &str,
    promote: &str,
    demote: &str,
    join: &str,
    scoring: &str,
    extra: &str,
    brackets: &str,
) -> Season {
    let text = format!(
        r#"
name = "simtest"
key_prefix = "{prefix}"
[schedule]
timezone = "Europe/Berlin"
period = "weekly"
start = "2026-03-02T00:00:00+01:00"
[brackets]
size = 20
join = "{join}"
{brackets}
[scoring]
{scoring}
[[tiers]]
name = "bronze"
promote = {promote}
demote = 0
rewards = [{{ ranks = "1-3", grant = "g" }}]
[[tiers]]
name = "silver"
promote = {promote}
demote = {demote}
[[tiers]]
name = "gold"
promote = {promote}
demote = {demote}
rewards = [{{ ranks = "1", grant = "g" }}]
[[tiers]]
name = "diamond"
promote = 0
demote = {demote}
[simulation]
players = 400
periods = 6
seed = 7
{extra}
"#
    );
    Season::from_toml(&text, "simtest.toml").expect("valid season")
}

fn season(prefix: &str, promote: &str, demote: &str, join: &str) -> Season {
    custom(
        prefix,
        promote,
        demote,
        join,
        "mode = \"increment\"\nmax_score = 100000",
        "[idle]\npolicy = \"drop_one_tier\"",
    )
}

async fn run_memory(season: Season, options: &SimOptions) -> SimReport {
    let clock = ManualClock::new(season.schedule.start);
    let store = MemoryStore::with_clock(Arc::new(clock.clone()));
    simulate(season, store, clock, options, |_, _| {})
        .await
        .expect("simulation")
}

fn json(r: &SimReport) -> String {
    serde_json::to_string_pretty(r).expect("json")
}

/// Asserts two reports are the same bytes; on a difference, shows where.
#[track_caller]
fn same(a: &str, b: &str, what: &str) {
    if a == b {
        return;
    }
    let (al, bl): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let at = al
        .iter()
        .zip(&bl)
        .position(|(x, y)| x != y)
        .unwrap_or(al.len().min(bl.len()));
    let from = at.saturating_sub(12);
    panic!(
        "{what}: the reports differ at line {}:\n--- first\n{}\n--- second\n{}",
        at + 1,
        al[from..(at + 3).min(al.len())].join("\n"),
        bl[from..(at + 3).min(bl.len())].join("\n")
    );
}

#[tokio::test]
async fn same_seed_same_report() {
    let s = season("s", "4", "3", "on_first_score");
    let options = SimOptions::from_season(&s);
    let a = json(&run_memory(s.clone(), &options).await);
    let b = json(&run_memory(s.clone(), &options).await);
    same(&a, &b, "two runs");
    let mut other = options.clone();
    other.seed = 8;
    let c = json(&run_memory(s, &other).await);
    assert_ne!(a, c);
}

#[tokio::test]
async fn players_are_conserved_between_tiers() {
    // Everybody plays every period, so each tier's population follows exactly from
    // the previous period's movement.
    let s = season("s", "4", "3", "on_first_score");
    let mut options = SimOptions::from_season(&s);
    options.active_share = 1.0;
    options.quit_rate = 0.0;
    let r = run_memory(s, &options).await;
    let tiers = &r.tiers;
    for p in &r.periods {
        assert_eq!(
            p.players.values().sum::<u64>(),
            options.players,
            "period {}",
            p.period
        );
        assert_eq!(p.playing, options.players);
        assert_eq!(p.active, p.players);
    }
    let mut moved = 0;
    for w in r.periods.windows(2) {
        let (before, after) = (&w[0], &w[1]);
        for (k, t) in tiers.iter().enumerate() {
            let get = |m: &std::collections::BTreeMap<String, u64>, i: usize| {
                tiers.get(i).and_then(|t| m.get(t)).copied().unwrap_or(0)
            };
            let expected =
                get(&before.players, k) - get(&before.promoted, k) - get(&before.demoted, k)
                    + if k > 0 {
                        get(&before.promoted, k - 1)
                    } else {
                        0
                    }
                    + get(&before.demoted, k + 1);
            assert_eq!(
                after.players[t], expected,
                "tier {t} in period {}",
                after.period
            );
            moved += get(&before.promoted, k);
        }
    }
    assert!(moved > 0, "the ladder moved somebody");
    // Reaching a tier above the bottom takes at least one period.
    assert!(
        r.reach[1..]
            .iter()
            .all(|x| x.average_periods.is_none_or(|a| a >= 1.0))
    );
    // The distribution counts every player who reached the tier.
    for x in &r.reach {
        assert_eq!(x.distribution.iter().sum::<u64>(), x.reached, "{}", x.tier);
        assert_eq!(x.distribution.len(), r.periods.len());
    }
}

#[tokio::test]
async fn a_frozen_ladder_moves_nobody() {
    let s = season("s", "0", "0", "on_first_score");
    let r = run_memory(s.clone(), &SimOptions::from_season(&s)).await;
    for p in &r.periods {
        assert!(
            p.promoted
                .values()
                .chain(p.demoted.values())
                .all(|&n| n == 0)
        );
        assert_eq!(p.players["bronze"], p.playing);
    }
    assert!(r.reach[1..].iter().all(|x| x.reached == 0));
}

#[tokio::test]
async fn explicit_joins_report_idle_players() {
    let s = season("s", "4", "3", "explicit");
    let r = run_memory(s.clone(), &SimOptions::from_season(&s)).await;
    assert!(r.periods.iter().any(|p| p.idle > 0));
    for p in &r.periods {
        assert_eq!(p.players.values().sum::<u64>(), p.playing + p.idle);
    }
}

/// Seasons that exercise every rule the fast path mirrors: both join policies, both
/// idle policies, counts and percentages, rewards, best and set modes, 1 ms ties, and
/// short retentions (records and outcomes that expire while players are away).
fn variants() -> Vec<(&'static str, Season)> {
    let inc = "mode = \"increment\"\nmax_score = 100000";
    vec![
        (
            "on_first_score, drop_one_tier",
            season("s", "4", "3", "on_first_score"),
        ),
        ("explicit, drop_one_tier", season("s", "4", "3", "explicit")),
        (
            "percentages, stay, best mode, 1 ms",
            custom(
                "s",
                "\"25%\"",
                "\"10%\"",
                "on_first_score",
                "mode = \"best\"\nmax_score = 400\ntime_resolution = \"1ms\"",
                "",
            ),
        ),
        (
            "explicit, set mode, short retention",
            custom(
                "s",
                "5",
                "5",
                "explicit",
                "mode = \"set\"\nmax_score = 300",
                "[idle]\npolicy = \"stay\"\n[retention]\nperiods = 1\nplayer_ttl = \"9d\"",
            ),
        ),
        (
            "drop_one_tier, short retention",
            custom(
                "s",
                "6",
                "2",
                "on_first_score",
                inc,
                // 14 days: a player placed two periods ago has just expired, unless
                // a reward at the close (a few seconds later) kept them.
                "[idle]\npolicy = \"drop_one_tier\"\n[retention]\nperiods = 2\nplayer_ttl = \"14d\"",
            ),
        ),
        (
            "stay, rewards that keep records",
            custom(
                "s",
                "4",
                "3",
                "on_first_score",
                inc,
                "[idle]\npolicy = \"stay\"\n[retention]\nperiods = 4\nplayer_ttl = \"14d\"",
            ),
        ),
    ]
}

#[tokio::test]
async fn the_fast_path_equals_the_full_engine_path() {
    for (what, s) in variants() {
        let mut options = SimOptions::from_season(&s);
        options.players = 300;
        options.periods = 9;
        // Players come and go, so retention and the idle policy matter.
        options.quit_rate = 0.3;
        options.return_rate = 0.4;
        let engine = json(&run_memory(s.clone(), &options).await);
        let fast = json(&simulate_fast(&s, &options, 2, |_, _| {}).expect("fast path"));
        same(&engine, &fast, what);
    }
}

#[test]
fn the_fast_path_is_the_same_on_any_number_of_threads() {
    let s = season("s", "4", "3", "explicit");
    let mut options = SimOptions::from_season(&s);
    // More players than one work item, so threads really share the work.
    options.players = 20_000;
    options.periods = 4;
    let one = json(&simulate_fast(&s, &options, 1, |_, _| {}).expect("1 thread"));
    for threads in [2, 3] {
        let many = json(&simulate_fast(&s, &options, threads, |_, _| {}).expect("threads"));
        same(&one, &many, &format!("{threads} threads"));
    }
}

#[tokio::test]
async fn memory_and_redis_give_the_same_report() {
    let s = season("s", "4", "3", "explicit");
    let mut options = SimOptions::from_season(&s);
    options.players = 150;
    options.periods = 4;
    let memory = run_memory(s, &options).await;
    let prefix = common::unique_prefix("sim");
    let s = season(&prefix, "4", "3", "explicit");
    let clock = ManualClock::new(s.schedule.start);
    let redis = simulate(s, common::redis_store().await, clock, &options, |_, _| {})
        .await
        .expect("simulation on redis");
    same(&json(&memory), &json(&redis), "memory vs redis");
}

/// Over nine periods with short retentions, players who come and go meet expired
/// records and expired outcomes: Redis, given the league clock, must drop them when the
/// embedded store does (its own clock would keep them for real weeks, and returning
/// players would land in other tiers), report for report.
#[tokio::test]
async fn memory_and_redis_agree_when_retention_and_player_ttl_run_out() {
    let retention = ["short retention", "rewards that keep records"];
    for (what, s) in variants()
        .into_iter()
        .filter(|(what, _)| retention.iter().any(|r| what.contains(r)))
    {
        let mut options = SimOptions::from_season(&s);
        options.players = 300;
        options.periods = 9;
        options.quit_rate = 0.3;
        options.return_rate = 0.4;
        memory_equals_redis(s, &options, "simttl", what).await;
    }
}

#[tokio::test]
async fn bad_options_are_refused() {
    let s = season("s", "4", "3", "on_first_score");
    let mut options = SimOptions::from_season(&s);
    options.active_share = 1.5;
    let clock = ManualClock::new(s.schedule.start);
    let e = simulate(s.clone(), MemoryStore::new(), clock, &options, |_, _| {})
        .await
        .unwrap_err();
    assert!(e.to_string().contains("active_share"), "{e}");
    let e = simulate_fast(&s, &options, 1, |_, _| {}).unwrap_err();
    assert!(e.to_string().contains("active_share"), "{e}");
}

/// A history with what real files hold: lines out of time order, a retry (same
/// request id), values the league refuses, export rows (one with score 0), and
/// several periods with a gap.
fn history_text() -> String {
    let mut lines = Vec::new();
    for i in 0..60 {
        let p = format!("p{:02}", (i * 7) % 41);
        let day = 2 + (i % 5);
        lines.push(format!(
            r#"{{"player":"{p}","value":{},"at":"2026-03-{day:02}T1{}:00:00Z"}}"#,
            10 + (i * 13) % 90,
            i % 10
        ));
        // The next week, and (skipping one) the week after.
        lines.push(format!(
            r#"{{"player":"{p}","value":{},"at":"2026-03-{:02}T09:00:00Z"}}"#,
            5 + (i * 11) % 70,
            9 + (i % 5)
        ));
        if i % 3 == 0 {
            lines.push(format!(
                r#"{{"player":"{p}","value":{},"at":"2026-03-{:02}T08:00:00Z"}}"#,
                20 + i,
                23 + (i % 4)
            ));
        }
    }
    lines.reverse();
    lines.push(
        r#"{"player":"p01","value":50,"at":"2026-03-03T10:00:00Z","request_id":"r1"}"#.into(),
    );
    lines.push(
        r#"{"player":"p01","value":50,"at":"2026-03-03T10:00:00Z","request_id":"r1"}"#.into(),
    );
    lines.push(r#"{"player":"p02","value":-500,"at":"2026-03-03T10:00:00Z"}"#.into());
    lines.push(r#"{"player":"p03","value":999999,"at":"2026-03-03T11:00:00Z"}"#.into());
    // Players whose only update is refused, neither placed: a negative first delta
    // (an empty board refuses it), a value no score can take.
    lines.push(r#"{"player":"zz-neg","value":-7,"at":"2026-03-04T10:00:00Z"}"#.into());
    lines.push(r#"{"player":"zz-huge","value":999999,"at":"2026-03-04T10:00:00Z"}"#.into());
    lines.push(r#"{"period":2,"tier":"bronze","bracket":1,"rank":1,"player":"x-export","cohort":"eu","score":77,"outcome":"stayed","next_tier":"bronze","reward":null}"#.into());
    lines.push(r#"{"period":2,"tier":"bronze","bracket":1,"rank":2,"player":"y-export","score":0,"outcome":"stayed","next_tier":"bronze","reward":null}"#.into());
    lines.join("\n") + "\n"
}

#[tokio::test]
async fn a_replay_is_the_same_on_both_paths_and_on_redis() {
    let history = History::parse(&history_text(), "history.jsonl").expect("history");
    for (what, s) in [
        ("on_first_score", season("s", "4", "3", "on_first_score")),
        ("explicit", season("s", "4", "3", "explicit")),
    ] {
        let (engine, fast) = replay_both(&s, &history).await;
        same(&json(&engine), &json(&fast), what);
        let info = fast.replay.as_ref().expect("replay info");
        assert_eq!(info.duplicates, 1, "{what}");
        assert_eq!((info.first_period, info.last_period), (1, 4), "{what}");
        // Negative results and values past max_score are refused and change nothing;
        // a player whose only update was refused is placed (idle) only by an explicit
        // join (zz-neg and zz-huge): a refused update places nobody.
        assert_eq!(fast.periods[0].refused, 4, "{what}");
        let explicit = what == "explicit";
        assert_eq!(fast.periods[0].idle, 2 * u64::from(explicit), "{what}");
        // The export row with score 0 is an idle join only where joins are explicit.
        assert_eq!(info.skipped, u64::from(what == "on_first_score"), "{what}");
        assert_eq!(
            fast.periods[1].idle,
            u64::from(what == "explicit"),
            "{what}"
        );
    }
    let prefix = common::unique_prefix("replay");
    let s = season(&prefix, "4", "3", "explicit");
    let clock = ManualClock::new(s.schedule.start);
    let on_redis = replay(
        s.clone(),
        common::redis_store().await,
        clock,
        history.bind(&s).expect("bind"),
        |_, _| {},
    )
    .await
    .expect("replay on redis");
    let fast = replay_fast(&s, history.bind(&s).expect("bind"), 1, |_, _| {}).expect("fast");
    same(&json(&on_redis), &json(&fast), "replay on redis vs fast");
}

#[test]
fn bad_replay_lines_name_the_line_and_the_fix() {
    let cases = [
        ("{\"player\":\"a\",\"value\":1}\n", 1, "no \"at\""),
        (
            "\n{\"player\":\"a\",\"value\":1,\"at\":\"yesterday\"}\n",
            2,
            "RFC 3339",
        ),
        (
            "{\"player\":\"\",\"value\":1,\"at\":\"2026-03-03T10:00:00Z\"}",
            1,
            "player id",
        ),
        ("{\"player\":\"a\",\"colour\":1}", 1, "unknown field"),
        ("{\"player\":\"a\"}", 1, "neither an update"),
        ("not json", 1, "one JSON object per line"),
    ];
    for (text, line, why) in cases {
        let e = History::parse(text, "h.jsonl").unwrap_err().to_string();
        assert!(e.starts_with(&format!("h.jsonl:{line}: ")), "{e}");
        assert!(e.contains(why), "{e}");
    }
    let e = History::parse("", "h.jsonl").unwrap_err().to_string();
    assert!(e.contains("no events"), "{e}");
    // A time before the season's start: the bind says which start would do.
    let h = History::parse(
        "{\"player\":\"a\",\"value\":1,\"at\":\"2025-01-01T00:00:00Z\"}",
        "h.jsonl",
    )
    .expect("parse");
    let e = h
        .bind(&season("s", "4", "3", "explicit"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("h.jsonl:1:") && e.contains("before the season's start"),
        "{e}"
    );
}

/// `leaguekit simulate --replay`: the same report.json on the fast path, the full
/// engine and Redis; with `--compare`, the same history under a second season.
#[test]
fn the_command_line_replays_history_anywhere() {
    let dir = tempfile::tempdir().expect("dir");
    let history = dir.path().join("history.jsonl");
    std::fs::write(&history, history_text()).expect("write");
    let config = |name: &str, promote: &str| {
        let prefix = common::unique_prefix("clireplay");
        let text = format!(
            "name = \"{name}\"\nkey_prefix = \"{prefix}\"\n[schedule]\ntimezone = \"Europe/Berlin\"\n\
             period = \"weekly\"\nstart = \"2026-03-02T00:00:00+01:00\"\n[brackets]\nsize = 20\n\
             [scoring]\nmax_score = 100000\n[[tiers]]\nname = \"bronze\"\npromote = {promote}\n\
             demote = 0\n[[tiers]]\nname = \"silver\"\npromote = 0\ndemote = 3\n"
        );
        let path = dir.path().join(format!("{name}.toml"));
        std::fs::write(&path, text).expect("write");
        path
    };
    let a = config("a", "4");
    let b = config("b", "8");
    let run = |extra: &[&str], out: &str| -> String {
        let out = dir.path().join(out);
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_leaguekit"))
            .arg("--config")
            .arg(&a)
            .args(["simulate", "--quiet", "--replay"])
            .arg(&history)
            .arg("--out")
            .arg(&out)
            .args(extra)
            .output()
            .expect("run leaguekit");
        assert!(
            o.status.success(),
            "{extra:?}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        std::fs::read_to_string(out.join("report.json")).expect("report.json")
    };
    let fast = run(&[], "fast");
    assert!(
        fast.contains("\"replay\"") && fast.contains("history.jsonl"),
        "{fast}"
    );
    same(&fast, &run(&["--full-engine"], "engine"), "--full-engine");
    same(&fast, &run(&["--threads", "1"], "one"), "--threads 1");
    let url = common::redis_url();
    same(&fast, &run(&["--redis", &url], "redis"), "--redis");
    run(&["--compare", &b.display().to_string()], "compare");
    let other = std::fs::read_to_string(dir.path().join("compare/compare-report.json"))
        .expect("compare-report.json");
    assert!(other.contains("\"season\": \"b\""), "{other}");
    assert!(dir.path().join("compare/reach.png").exists());
}

/// Reserved late seats under arrivals spread over the period: a uniform and a
/// front-loaded arrival, both join policies.
fn late_seat_variants() -> Vec<(&'static str, Season, leaguekit::sim::Arrival)> {
    use leaguekit::sim::Arrival;
    let inc = "mode = \"increment\"\nmax_score = 100000";
    let late = |join: &str, after: &str, idle: &str| {
        let keys = format!("early_cap = 14\nlate_after = \"{after}\"");
        custom_brackets("s", "4", "3", join, inc, idle, &keys)
    };
    vec![
        (
            "late seats, uniform, on_first_score",
            late(
                "on_first_score",
                "60%",
                "[idle]\npolicy = \"drop_one_tier\"\n[retention]\nperiods = 2\nplayer_ttl = \"14d\"",
            ),
            Arrival::Uniform,
        ),
        (
            "late seats, front, explicit",
            late("explicit", "3d", "[idle]\npolicy = \"stay\""),
            Arrival::Front,
        ),
        (
            "late seats, matches, on_first_score",
            late("on_first_score", "50%", ""),
            Arrival::Matches,
        ),
        (
            "late seats and zones of the size with min_players, uniform, explicit",
            custom_brackets(
                "s",
                "\"20%\"",
                "\"15%\"",
                "explicit",
                inc,
                "[idle]\npolicy = \"drop_one_tier\"",
                "early_cap = 14\nlate_after = \"70%\"\nzones = \"size\"\nmin_players = 6",
            ),
            Arrival::Uniform,
        ),
    ]
}

/// Zones of the size and `min_players` alone (brackets filled as today): the fast
/// path equals the engine path, and today's rule (percentages of the headcount, no
/// minimum) promotes other players.
#[tokio::test]
async fn the_fast_path_equals_the_full_engine_path_with_zones() {
    let s = custom_brackets(
        "z",
        "\"20%\"",
        "\"20%\"",
        "on_first_score",
        "mode = \"increment\"\nmax_score = 100000",
        "",
        "zones = \"size\"\nmin_players = 8",
    );
    let mut options = SimOptions::from_season(&s);
    options.players = 300;
    options.periods = 5;
    options.arrival = leaguekit::sim::Arrival::Uniform;
    let engine = engine_beside_today(&s, &options).await;
    let fast = fast_beside_today(&s, &options);
    same(&json(&engine), &json(&fast), "zones");
    let today = fast.fairness.today_rule.as_ref().expect("today's rule");
    assert_ne!(
        fast.fairness.season_rule.tiers, today.tiers,
        "zones of the size promote more in small brackets"
    );
}

/// Runs `s` and, under today's rule, the same population; the second's fairness
/// beside the first's.
async fn engine_beside_today(s: &Season, options: &SimOptions) -> SimReport {
    let mut r = run_memory(s.clone(), options).await;
    let today = leaguekit::sim::today_rule(s).expect("another rule than today's");
    r.beside_today(&run_memory(today, options).await);
    r
}

fn fast_beside_today(s: &Season, options: &SimOptions) -> SimReport {
    let mut r = simulate_fast(s, options, 2, |_, _| {}).expect("fast path");
    let today = leaguekit::sim::today_rule(s).expect("another rule than today's");
    r.beside_today(&simulate_fast(&today, options, 3, |_, _| {}).expect("fast path"));
    r
}

#[tokio::test]
async fn the_fast_path_equals_the_full_engine_path_with_late_seats() {
    for (what, s, arrival) in late_seat_variants() {
        let mut options = SimOptions::from_season(&s);
        options.players = 400;
        options.periods = 6;
        options.quit_rate = 0.2;
        options.return_rate = 0.4;
        options.arrival = arrival;
        let engine = engine_beside_today(&s, &options).await;
        let fast = fast_beside_today(&s, &options);
        same(&json(&engine), &json(&fast), what);
        // Every placed player is in one closed bracket; late seats changed the
        // brackets (fewer small ones).
        let f = &fast.fairness;
        let placed: u64 = fast
            .periods
            .iter()
            .map(|p| p.players.values().sum::<u64>())
            .sum();
        assert_eq!(f.season_rule.players.iter().sum::<u64>(), placed, "{what}");
        let today = f.today_rule.as_ref().expect("today's rule");
        assert_eq!(today.players.iter().sum::<u64>(), placed, "{what}");
        assert_ne!(f.season_rule.brackets, today.brackets, "{what}");
        assert_eq!(f.buckets, ["1", "2-4", "5-9", "10-15", "16-19", "20"]);
    }
}

#[tokio::test]
async fn late_seats_are_the_same_on_redis() {
    let (what, s, arrival) = late_seat_variants().remove(0);
    let mut options = SimOptions::from_season(&s);
    options.players = 300;
    options.periods = 5;
    options.quit_rate = 0.2;
    options.return_rate = 0.4;
    options.arrival = arrival;
    memory_equals_redis(s, &options, "simlate", what).await;
}

/// The full engine path gives the same report on the embedded store and on Redis
/// (under a fresh key prefix starting with `tag`).
async fn memory_equals_redis(s: Season, options: &SimOptions, tag: &str, what: &str) {
    let memory = json(&run_memory(s.clone(), options).await);
    let mut s = s;
    s.key_prefix = common::unique_prefix(tag);
    let clock = ManualClock::new(s.schedule.start);
    let store = common::redis_store()
        .await
        .with_clock(Arc::new(clock.clone()));
    let redis = simulate(s, store, clock, options, |_, _| {})
        .await
        .expect("simulation on redis");
    same(&memory, &json(&redis), what);
}

#[test]
fn arrivals_keep_the_default_draws_and_spread_the_joins() {
    use leaguekit::sim::Arrival;
    let s = season("s", "4", "3", "on_first_score");
    let mut options = SimOptions::from_season(&s);
    options.players = 5_000;
    options.periods = 2;
    let by_join = |arrival: Arrival| {
        let mut o = options.clone();
        o.arrival = arrival;
        let r = simulate_fast(&s, &o, 2, |_, _| {}).expect("fast path");
        let joins: Vec<u64> = (0..10)
            .map(|d| {
                r.fairness
                    .season_rule
                    .tiers
                    .iter()
                    .map(|t| t.by_join[d].players)
                    .sum()
            })
            .collect();
        (r, joins)
    };
    let (matches, m) = by_join(Arrival::Matches);
    let (_, u) = by_join(Arrival::Uniform);
    let (_, f) = by_join(Arrival::Front);
    // The default draws are today's: players join at their first match, so early.
    assert_eq!(options.arrival, Arrival::Matches);
    assert!(m[0] > m[9] * 3, "{m:?}");
    // Uniform: about a tenth of the joins in each tenth.
    let total: u64 = u.iter().sum();
    assert!(
        u.iter()
            .all(|&x| x * 10 > total * 8 / 10 && x * 10 < total * 12 / 10),
        "{u:?}"
    );
    // Front: start = length * u^2, so a share of sqrt(0.1) = 32% in the first tenth.
    assert!(f[0] * 100 > total * 28 && f[0] * 100 < total * 36, "{f:?}");
    assert!(f[9] < f[0] / 4, "{f:?}");
    assert!(matches.fairness.today_rule.is_none());
}

/// `history` replayed under `s` on the full engine path (the embedded store) and on
/// the fast path.
async fn replay_both(s: &Season, history: &History) -> (SimReport, SimReport) {
    let clock = ManualClock::new(s.schedule.start);
    let store = MemoryStore::with_clock(Arc::new(clock.clone()));
    let engine = replay(
        s.clone(),
        store,
        clock,
        history.bind(s).expect("bind"),
        |_, _| {},
    )
    .await
    .expect("replay");
    let fast = replay_fast(s, history.bind(s).expect("bind"), 2, |_, _| {}).expect("fast");
    (engine, fast)
}

/// A replay under reserved late seats: the history's own join times against the
/// late point, the same on both paths.
#[tokio::test]
async fn a_replay_with_late_seats_is_the_same_on_both_paths() {
    let history = History::parse(&history_text(), "history.jsonl").expect("history");
    for (what, s, _) in late_seat_variants() {
        let (engine, fast) = replay_both(&s, &history).await;
        same(&json(&engine), &json(&fast), what);
    }
}

/// `leaguekit simulate --arrival uniform` on a season with late seats: the fairness
/// table with today's rule beside the season's, the chart, and the same report on
/// the full engine.
#[test]
fn the_command_line_shows_fairness_beside_todays_rule() {
    let dir = tempfile::tempdir().expect("dir");
    let config = dir.path().join("late.toml");
    let text = "name = \"late\"\nkey_prefix = \"late\"\n[schedule]\ntimezone = \"UTC\"\n\
                period = \"weekly\"\nstart = \"2026-03-02T00:00:00Z\"\n[brackets]\nsize = 20\n\
                early_cap = 15\nlate_after = \"70%\"\n[scoring]\nmax_score = 100000\n\
                [[tiers]]\nname = \"bronze\"\npromote = \"25%\"\ndemote = 0\n[[tiers]]\n\
                name = \"silver\"\npromote = 0\ndemote = 3\n";
    std::fs::write(&config, text).expect("write");
    let run = |extra: &[&str], out: &str| -> (String, String) {
        let out = dir.path().join(out);
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_leaguekit"))
            .arg("--config")
            .arg(&config)
            .args([
                "simulate",
                "--quiet",
                "--players",
                "300",
                "--periods",
                "3",
                "--arrival",
                "uniform",
                "--out",
            ])
            .arg(&out)
            .args(extra)
            .output()
            .expect("run leaguekit");
        let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(
            o.status.success(),
            "{extra:?}: {stdout}{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(out.join("fairness.png").exists());
        let report = std::fs::read_to_string(out.join("report.json")).expect("report.json");
        (stdout, report)
    };
    let (text, fast) = run(&[], "fast");
    assert!(
        text.contains("season's rule: late joiners") && text.contains("today's rule: late"),
        "{text}"
    );
    assert!(text.contains("bronze*"), "{text}");
    assert!(
        fast.contains("\"today_rule\"") && fast.contains("\"arrival\": \"uniform\""),
        "{fast}"
    );
    let (_, engine) = run(&["--full-engine"], "engine");
    same(&fast, &engine, "--full-engine");
}
