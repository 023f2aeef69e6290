//! The designer's simulator: deterministic, conserving players, and the same on both
//! stores.

mod common;

use std::sync::Arc;

use leaguekit::sim::{SimOptions, SimReport, simulate};
use leaguekit::{ManualClock, MemoryStore, Season};

fn season(prefix: &str, promote: &str, demote: &str, join: &str) -> Season {
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
[scoring]
mode = "increment"
max_score = 100000
[idle]
policy = "drop_one_tier"
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
[[tiers]]
name = "diamond"
promote = 0
demote = {demote}
[simulation]
players = 400
periods = 6
seed = 7
"#
    );
    Season::from_toml(&text, "simtest.toml").expect("valid season")
}

async fn run_memory(season: Season, options: &SimOptions) -> SimReport {
    let clock = ManualClock::new(season.schedule.start);
    let store = MemoryStore::with_clock(Arc::new(clock.clone()));
    simulate(season, store, clock, options, |_, _| {})
        .await
        .expect("simulation")
}

#[tokio::test]
async fn same_seed_same_report() {
    let s = season("s", "4", "3", "on_first_score");
    let options = SimOptions::from_season(&s);
    let a = serde_json::to_string(&run_memory(s.clone(), &options).await).expect("json");
    let b = serde_json::to_string(&run_memory(s.clone(), &options).await).expect("json");
    assert_eq!(a, b);
    let mut other = options.clone();
    other.seed = 8;
    let c = serde_json::to_string(&run_memory(s, &other).await).expect("json");
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
    assert_eq!(
        serde_json::to_string(&memory).expect("json"),
        serde_json::to_string(&redis).expect("json")
    );
}

#[tokio::test]
async fn bad_options_are_refused() {
    let s = season("s", "4", "3", "on_first_score");
    let mut options = SimOptions::from_season(&s);
    options.active_share = 1.5;
    let clock = ManualClock::new(s.schedule.start);
    let e = simulate(s, MemoryStore::new(), clock, &options, |_, _| {})
        .await
        .unwrap_err();
    assert!(e.to_string().contains("active_share"), "{e}");
}
