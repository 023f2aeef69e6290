//! Zones for brackets that never filled: `zones = "players" | "size"` and
//! `min_players`, season-wide in `[brackets]` and per tier. The pure rule over every
//! bracket size (property tests), the table of docs/rules.md, the season file's
//! errors, and a season played on the embedded store and on Redis.

use crate::common;

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use leaguekit::rollover::RolloverOptions;
use leaguekit::rollover::outcome::{BracketRule, Movement, bracket_outcomes};
use leaguekit::season::{Quota, Zones};
use leaguekit::{Clock, League, ManualClock, MemoryStore, Season, Store, SubmitOptions};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

/// A quota as the season file writes it.
fn toml_quota(q: Quota) -> String {
    match q {
        Quota::Count(n) => n.to_string(),
        Quota::Percent(p) => format!("\"{p}%\""),
        _ => unreachable!("a quota is a count or a percentage"),
    }
}

/// `zones = ...` and `min_players = ...` lines, each only when given.
fn zone_keys(zones: Option<Zones>, min_players: Option<u32>) -> String {
    let mut s = String::new();
    if let Some(z) = zones {
        s.push_str(&format!("zones = \"{}\"\n", z.as_str()));
    }
    if let Some(m) = min_players {
        s.push_str(&format!("min_players = {m}\n"));
    }
    s
}

/// One tier of a generated ladder: quotas and its own zone keys.
#[derive(Debug, Clone)]
struct TierSpec {
    promote: Quota,
    demote: Quota,
    zones: Option<Zones>,
    min_players: Option<u32>,
}

/// A three-tier season with brackets of `size`.
fn season_of(size: u32, zones: Option<Zones>, min: Option<u32>, tiers: &[TierSpec]) -> Season {
    let mut text = format!(
        "name = \"z\"\nkey_prefix = \"z\"\n[schedule]\ntimezone = \"UTC\"\nperiod = \"daily\"\n\
         start = \"2026-01-05T00:00:00Z\"\n[brackets]\nsize = {size}\n{}[scoring]\n\
         max_score = 1000\n",
        zone_keys(zones, min)
    );
    for (i, t) in tiers.iter().enumerate() {
        text.push_str(&format!(
            "[[tiers]]\nname = \"t{i}\"\npromote = {}\ndemote = {}\n{}",
            toml_quota(t.promote),
            toml_quota(t.demote),
            zone_keys(t.zones, t.min_players)
        ));
    }
    Season::from_toml(&text, "z.toml").unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// How many of a bracket a quota takes, as docs/rules.md states it: a count is
/// itself (at most the headcount it is taken of), a percentage of `base` is rounded
/// down.
fn spec_quota(q: Quota, base: u64) -> u64 {
    match q {
        Quota::Count(n) => u64::from(n).min(base),
        Quota::Percent(p) => base * u64::from(p) / 100,
        _ => unreachable!(),
    }
}

fn quota(size: u32) -> impl Strategy<Value = Quota> {
    prop_oneof![
        (0..=size).prop_map(Quota::Count),
        (0u32..=100).prop_map(Quota::Percent),
    ]
}

fn zones() -> impl Strategy<Value = Zones> {
    prop_oneof![Just(Zones::Players), Just(Zones::Size)]
}

/// `q`, lowered until it takes at most `room` of a full bracket of `size`.
fn fit(q: Quota, size: u32, room: u64) -> Quota {
    match q {
        Quota::Count(n) => Quota::Count(n.min(room as u32)),
        Quota::Percent(mut p) => {
            while u64::from(size) * u64::from(p) / 100 > room {
                p -= 1;
            }
            Quota::Percent(p)
        }
        _ => unreachable!(),
    }
}

/// A season (size 1..=200, three tiers with random quotas, zones and min_players at
/// either level) and a bracket of every tier: `(players, active)`.
fn case() -> impl Strategy<Value = (Season, Vec<TierSpec>, Option<Zones>, Option<u32>, u64, u64)> {
    (1u32..=200)
        .prop_flat_map(|size| {
            let spec = (
                quota(size),
                quota(size),
                proptest::option::of(zones()),
                proptest::option::of(0..=size),
            );
            (
                Just(size),
                proptest::option::of(zones()),
                proptest::option::of(0..=size),
                proptest::collection::vec(spec, 3),
                1..=u64::from(size),
            )
        })
        .prop_flat_map(|(size, zones, min, specs, players)| {
            let last = specs.len() - 1;
            let tiers: Vec<TierSpec> = specs
                .into_iter()
                .enumerate()
                .map(|(i, (p, d, z, m))| {
                    // The top tier promotes nobody, the bottom one demotes nobody, and a
                    // full bracket's zones do not overlap (the season file's rules).
                    let promote = if i == last { Quota::Count(0) } else { p };
                    let up = spec_quota(promote, u64::from(size));
                    let demote = if i == 0 {
                        Quota::Count(0)
                    } else {
                        fit(d, size, u64::from(size) - up)
                    };
                    TierSpec {
                        promote,
                        demote,
                        zones: z,
                        min_players: m,
                    }
                })
                .collect();
            let season = season_of(size, zones, min, &tiers);
            (
                Just(season),
                Just(tiers),
                Just(zones),
                Just(min),
                Just(players),
                0..=players,
            )
        })
}

/// Who moves, rank by rank among `active` active players.
fn movements(season: &Season, rule: &BracketRule, active: u64) -> Vec<Movement> {
    (1..=active)
        .map(|a| rule.movement(season, Some(a)))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 400,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("regressions"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn the_rule_over_every_bracket_size(
        (season, specs, zones, min, players, active) in case()
    ) {
        let size = season.brackets.size;
        let top = season.tiers.len() - 1;
        for (i, (tier, spec)) in season.tiers.iter().zip(&specs).enumerate() {
            // The tier's own keys win over [brackets]'s, which win over the defaults.
            let want_zones = spec.zones.or(zones).unwrap_or(Zones::Players);
            let want_min = spec.min_players.or(min).unwrap_or(0);
            prop_assert_eq!(tier.zones, want_zones);
            prop_assert_eq!(tier.min_players, want_min);

            let rule = BracketRule::new(&season, i, players, active).expect("a tier");
            let moves = movements(&season, &rule, active);
            let promoted = moves.iter().filter(|m| **m == Movement::Promoted).count() as u64;
            let demoted = moves.iter().filter(|m| **m == Movement::Demoted).count() as u64;
            prop_assert_eq!((promoted, demoted), (rule.promoted, rule.demoted));
            // Nobody is both; promotion takes the top active ranks, demotion the
            // bottom ones, and the two never meet.
            prop_assert!(promoted + demoted <= active);
            for (r, m) in moves.iter().enumerate() {
                let r = r as u64 + 1;
                let want = if r <= promoted {
                    Movement::Promoted
                } else if r > active - demoted {
                    Movement::Demoted
                } else {
                    Movement::Stayed
                };
                prop_assert_eq!(*m, want, "active rank {} of {}", r, active);
            }
            // The exact counts of docs/rules.md.
            let base = match want_zones {
                Zones::Size => u64::from(size),
                _ => players,
            };
            let p = if i == top { 0 } else { spec_quota(tier.promote, base) };
            let d = if i == 0 || active < u64::from(want_min) {
                0
            } else {
                spec_quota(tier.demote, base)
            };
            prop_assert_eq!(rule.promoted, p.min(active));
            prop_assert_eq!(rule.demoted, d.min(active - rule.promoted));
            if i == top {
                prop_assert_eq!(rule.promoted, 0);
            }
            if i == 0 {
                prop_assert_eq!(rule.demoted, 0);
            }
            if active < u64::from(want_min) {
                prop_assert_eq!(rule.demoted, 0);
            }
            // Counts are the same under both rules; with "size" nothing depends on the
            // headcount, only on the active players.
            if want_zones == Zones::Size || (
                !matches!(tier.promote, Quota::Percent(_)) && !matches!(tier.demote, Quota::Percent(_))
            ) {
                for other in [active.max(1), players, u64::from(size)] {
                    let again = BracketRule::new(&season, i, other.max(active), active).expect("tier");
                    prop_assert_eq!((again.promoted, again.demoted), (rule.promoted, rule.demoted));
                }
            }
            // Idle players are never promoted.
            prop_assert_ne!(rule.movement(&season, None), Movement::Promoted);

            // The same through a board: the best active scores are promoted, the worst
            // demoted, idle players (ranked last) neither promoted nor counted.
            let board: Vec<(String, u64)> = (0..players)
                .map(|k| {
                    let packed = if k < active {
                        season.packing.pack(1000 - k, 1).expect("fits")
                    } else {
                        season.packing.idle()
                    };
                    (format!("p{k:03}"), packed)
                })
                .collect();
            let outcomes = bracket_outcomes(&season, i, &board);
            prop_assert_eq!(outcomes.len() as u64, players);
            for (k, o) in outcomes.iter().enumerate() {
                let k = k as u64;
                prop_assert_eq!(o.rank, k + 1);
                if k < active {
                    prop_assert_eq!(o.outcome, moves[k as usize]);
                } else {
                    prop_assert!(o.idle);
                    prop_assert_ne!(o.outcome, Movement::Promoted);
                }
            }
        }
    }
}

fn tier(promote: Quota, demote: Quota) -> TierSpec {
    TierSpec {
        promote,
        demote,
        zones: None,
        min_players: None,
    }
}

/// The middle tier of a ladder with `promote = "20%"`, `demote = "20%"`.
fn twenty(size: u32, zones: Zones, min: Option<u32>) -> Season {
    let c0 = Quota::Count(0);
    let p20 = Quota::Percent(20);
    season_of(
        size,
        Some(zones),
        min,
        &[tier(p20, c0), tier(p20, p20), tier(c0, p20)],
    )
}

#[test]
fn the_table_of_the_rules() {
    // docs/rules.md: promote "20%", demote "20%", brackets of 100, every player active.
    // players, then (promoted, demoted) under "players", "size", and "players" with
    // min_players = 10.
    type Moved = (u64, u64);
    let table: [(u64, Moved, Moved, Moved); 6] = [
        (1, (0, 0), (1, 0), (0, 0)),
        (3, (0, 0), (3, 0), (0, 0)),
        (9, (1, 1), (9, 0), (1, 0)),
        (10, (2, 2), (10, 0), (2, 2)),
        (50, (10, 10), (20, 20), (10, 10)),
        (100, (20, 20), (20, 20), (20, 20)),
    ];
    let players = twenty(100, Zones::Players, None);
    let size = twenty(100, Zones::Size, None);
    let min10 = twenty(100, Zones::Players, Some(10));
    for (n, by_players, by_size, by_min) in table {
        let got = |s: &Season| {
            let r = BracketRule::new(s, 1, n, n).expect("silver");
            (r.promoted, r.demoted)
        };
        assert_eq!(
            got(&players),
            by_players,
            "{n} players, zones = \"players\""
        );
        assert_eq!(got(&size), by_size, "{n} players, zones = \"size\"");
        assert_eq!(got(&min10), by_min, "{n} players, min_players = 10");
    }
    // The worked example: a bracket of 9 with 6 active, 3 idle, zones = "size" and
    // min_players = 8: 20 promoted capped by the 6 active, nobody demoted.
    let s = twenty(100, Zones::Size, Some(8));
    let r = BracketRule::new(&s, 1, 9, 6).expect("silver");
    assert_eq!((r.promoted, r.demoted), (6, 0));
    // Under "players" with the same minimum: 20% of 9 = 1 promoted, nobody demoted.
    let s = twenty(100, Zones::Players, Some(8));
    let r = BracketRule::new(&s, 1, 9, 6).expect("silver");
    assert_eq!((r.promoted, r.demoted), (1, 0));
}

#[test]
fn a_bracket_of_one() {
    for zones in [Zones::Players, Zones::Size] {
        for size in [1, 2, 100] {
            let s = twenty(size, zones, None);
            for tier in 0..3 {
                let idle = BracketRule::new(&s, tier, 1, 0).expect("tier");
                assert_eq!((idle.promoted, idle.demoted), (0, 0));
                let one = BracketRule::new(&s, tier, 1, 1).expect("tier");
                assert!(one.promoted + one.demoted <= 1);
                // "20%" of a bracket of 1 is nobody; of the size, at least one from 5 up.
                let want = zones == Zones::Size && size >= 5;
                let moved = if tier == 2 { one.demoted } else { one.promoted };
                assert_eq!(moved == 1, want, "{zones:?} size {size} tier {tier}");
            }
        }
    }
}

fn season_error(brackets: &str, tier: &str) -> String {
    let text = format!(
        "name = \"z\"\nkey_prefix = \"z\"\n[schedule]\ntimezone = \"UTC\"\nperiod = \"daily\"\n\
         start = \"2026-01-05T00:00:00Z\"\n[brackets]\nsize = 10\n{brackets}\n[scoring]\n\
         max_score = 1000\n[[tiers]]\nname = \"bronze\"\npromote = 2\ndemote = 0\n\
         [[tiers]]\nname = \"silver\"\npromote = 0\ndemote = \"20%\"\n{tier}\n"
    );
    match Season::from_toml(&text, "z.toml") {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_zone_keys_are_typed_errors() {
    for (brackets, tier, needles) in [
        (
            "zones = \"bracket\"",
            "",
            &[
                "brackets.zones = \"bracket\" is not a zone rule",
                "use \"players\" or \"size\"",
            ][..],
        ),
        (
            "",
            "zones = \"full\"",
            &[
                "in tier \"silver\", zones = \"full\"",
                "use \"players\" or \"size\"",
            ][..],
        ),
        (
            "min_players = 11",
            "",
            &[
                "brackets.min_players = 11 is more than brackets.size",
                "from 0 (no minimum) to 10",
            ][..],
        ),
        (
            "",
            "min_players = -1",
            &[
                "in tier \"silver\", min_players = -1 is negative",
                "from 0 (no minimum) to 10",
            ][..],
        ),
        // serde's type errors point at the value (line 9: the [brackets] key).
        ("zones = 3", "", &["z.toml:9:", "expected a string"][..]),
        (
            "",
            "min_players = \"5\"",
            &["invalid type: string \"5\""][..],
        ),
    ] {
        let e = season_error(brackets, tier);
        for n in needles {
            assert!(e.contains(n), "{n:?} in {e}");
        }
        assert!(e.contains("z.toml:"), "{e}");
    }
    // The full-bracket overlap check is the same under either rule.
    let overlap = "name = \"z\"\nkey_prefix = \"z\"\n[schedule]\ntimezone = \"UTC\"\nperiod = \"daily\"\n\
         start = \"2026-01-05T00:00:00Z\"\n[brackets]\nsize = 10\nzones = \"size\"\n[scoring]\n\
         max_score = 1000\n[[tiers]]\nname = \"bronze\"\npromote = 2\ndemote = 0\n\
         [[tiers]]\nname = \"silver\"\npromote = \"60%\"\ndemote = \"50%\"\n[[tiers]]\n\
         name = \"gold\"\npromote = 0\ndemote = 1\n";
    let e = Season::from_toml(overlap, "z.toml").expect_err("overlap");
    assert!(e.to_string().contains("both promoted and demoted"), "{e}");
}

// ---------------------------------------------------------------------------------
// A season with zones = "size" and min_players, played on the embedded store and on
// Redis: brackets that never filled close by the configured size.
// ---------------------------------------------------------------------------------

/// Brackets of 5, zones of the size, no demotion under 3 active players; gold takes
/// its percentages of the players and has no minimum.
fn played_season(prefix: &str) -> Season {
    Season::from_toml(&PLAYED.replace("{prefix}", prefix), "zones.toml").expect("season")
}

const PLAYED: &str = r#"
name = "zones"
key_prefix = "{prefix}"
[schedule]
timezone = "UTC"
period = "daily"
start = "2026-01-05T00:00:00Z"
[brackets]
size = 5
zones = "size"
min_players = 3
[scoring]
max_score = 1000
[[tiers]]
name = "bronze"
promote = "40%"
demote = 0
rewards = [{ ranks = "1", grant = "gems:10" }]
[[tiers]]
name = "silver"
promote = "20%"
demote = "40%"
[[tiers]]
name = "gold"
promote = 0
demote = "40%"
zones = "players"
min_players = 0
"#;

fn day(d: i64, hh: i64) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-01-05T00:00:00Z")
        .expect("time")
        .with_timezone(&Utc)
        + Duration::days(d)
        + Duration::hours(hh)
}

async fn play<S: Store>(l: &League<S>, clock: &ManualClock, d: i64, scores: &[(&str, i64)]) {
    for (p, v) in scores {
        let at = day(d, 2);
        if clock.now() < at {
            clock.set(at);
        }
        l.submit(p, *v, SubmitOptions::default().at(at))
            .await
            .expect("submit");
    }
}

/// Closes day `d`'s period; `(players, promoted, demoted, stayed)` of it.
async fn close<S: Store>(l: &League<S>, clock: &ManualClock, d: i64) -> (u64, u64, u64, u64) {
    clock.set(day(d + 1, 0) + Duration::seconds(5));
    let report = l
        .rollover(None, RolloverOptions::default())
        .await
        .expect("rollover");
    assert_eq!(report.closed.len(), 1, "{report:?}");
    let t = &report.closed[0].totals;
    (t.players, t.promoted, t.demoted, t.stayed)
}

async fn outcomes<S: Store>(l: &League<S>, players: &[&str]) -> Vec<(Movement, String)> {
    let mut out = Vec::new();
    for p in players {
        let o = l.last_outcome(p).await.expect("read").expect("an outcome");
        out.push((o.outcome, o.next_tier));
    }
    out
}

fn moved(m: &[(Movement, &str)]) -> Vec<(Movement, String)> {
    m.iter().map(|(m, t)| (*m, (*t).to_owned())).collect()
}

async fn small_brackets_close_by_size<S: Store>(league: League<S>, clock: ManualClock) {
    use Movement::{Demoted, Promoted, Stayed};
    // Day 0, bronze: a..e fill bracket 1; f and g open bracket 2, which never fills.
    // "40%" of the size is 2 in either bracket: under "players" bracket 2 would
    // promote nobody (40% of 2 rounds down to 0).
    let first: Vec<(&str, i64)> = ["a", "b", "c", "d", "e", "f", "g"]
        .iter()
        .enumerate()
        .map(|(i, p)| (*p, 100 - i as i64))
        .collect();
    play(&league, &clock, 0, &first).await;
    assert_eq!(close(&league, &clock, 0).await, (7, 4, 0, 3));
    assert_eq!(
        outcomes(&league, &["a", "b", "c", "f", "g"]).await,
        moved(&[
            (Promoted, "silver"),
            (Promoted, "silver"),
            (Stayed, "bronze"),
            (Promoted, "silver"),
            (Promoted, "silver"),
        ])
    );
    // Rewards go by rank as usual: the winner of each bronze bracket.
    assert_eq!(league.rewards("f").await.expect("rewards").len(), 1);
    assert!(league.rewards("g").await.expect("rewards").is_empty());

    // Day 1: a and f play silver (2 active, under min_players = 3): "20%" of 5
    // promotes a, and nobody is demoted. c, d, e play bronze: 2 of 3 promoted.
    play(
        &league,
        &clock,
        1,
        &[("a", 50), ("f", 10), ("c", 30), ("d", 20), ("e", 10)],
    )
    .await;
    assert_eq!(close(&league, &clock, 1).await, (5, 3, 0, 2));
    assert_eq!(
        outcomes(&league, &["a", "f", "c", "d", "e"]).await,
        moved(&[
            (Promoted, "gold"),
            (Stayed, "silver"),
            (Promoted, "silver"),
            (Promoted, "silver"),
            (Stayed, "bronze"),
        ])
    );

    // Day 2: five play silver (at min_players and above: 1 promoted, "40%" of 5 = 2
    // demoted); a is alone in gold, whose "40%" is of its players: 0 of 1.
    let silver = [("b", 90), ("c", 80), ("d", 70), ("f", 60), ("g", 50)];
    play(&league, &clock, 2, &silver).await;
    play(&league, &clock, 2, &[("a", 5)]).await;
    assert_eq!(close(&league, &clock, 2).await, (6, 1, 2, 3));
    assert_eq!(
        outcomes(&league, &["b", "c", "d", "f", "g", "a"]).await,
        moved(&[
            (Promoted, "gold"),
            (Stayed, "silver"),
            (Stayed, "silver"),
            (Demoted, "bronze"),
            (Demoted, "bronze"),
            (Stayed, "gold"),
        ])
    );
}

#[tokio::test]
async fn small_brackets_close_by_size_on_memory() {
    let clock = ManualClock::new(day(0, 1));
    let store = MemoryStore::with_clock(Arc::new(clock.clone()));
    let league = League::with_clock(played_season("lkz"), store, Arc::new(clock.clone()));
    small_brackets_close_by_size(league, clock).await;
}

#[tokio::test]
async fn small_brackets_close_by_size_on_redis() {
    let clock = ManualClock::new(day(0, 1));
    let prefix = common::unique_prefix("zones");
    let store = common::redis_store().await;
    let league = League::with_clock(played_season(&prefix), store, Arc::new(clock.clone()));
    small_brackets_close_by_size(league, clock).await;
}

#[tokio::test]
async fn small_brackets_close_by_size_on_cluster() {
    let clock = ManualClock::new(day(0, 1));
    let prefix = common::unique_prefix("zones");
    let store = common::cluster_store().await;
    let league = League::with_clock(played_season(&prefix), store, Arc::new(clock.clone()));
    small_brackets_close_by_size(league, clock).await;
}

#[tokio::test]
async fn zone_edits_are_reported_like_quota_edits() {
    let clock = ManualClock::new(day(0, 1));
    let store = MemoryStore::with_clock(Arc::new(clock.clone()));
    let league = League::with_clock(played_season("lkze"), store, Arc::new(clock.clone()));
    play(&league, &clock, 0, &[("a", 10), ("b", 5)]).await;
    close(&league, &clock, 0).await;
    let same = league.compare_with_live().await.expect("compare");
    assert!(
        !same
            .changes
            .iter()
            .any(|c| c.contains("zones") || c.contains("min_players")),
        "{same:?}"
    );
    // The designer takes silver's percentages of the players and lowers the minimum
    // season-wide (gold keeps its own 0).
    let edited = Season::from_toml(
        &PLAYED
            .replace("{prefix}", "lkze")
            .replace("min_players = 3", "min_players = 2")
            .replace(
                "promote = \"20%\"\ndemote = \"40%\"",
                "promote = \"20%\"\ndemote = \"40%\"\nzones = \"players\"",
            ),
        "edited.toml",
    )
    .expect("edited");
    let next = League::with_clock(edited, league.store().clone(), Arc::new(clock.clone()));
    let said = next
        .compare_with_live()
        .await
        .expect("compare")
        .changes
        .join("\n");
    for needle in [
        "tier \"silver\": zones \"size\" -> \"players\": applies from the close of period 2",
        "tier \"bronze\": min_players 3 -> 2",
        "tier \"silver\": min_players 3 -> 2",
    ] {
        assert!(said.contains(needle), "{needle:?} in {said}");
    }
    assert!(!said.contains("tier \"gold\""), "{said}");
}
