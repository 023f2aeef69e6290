//! The event log (`[events]`): each change appends its events in its own atomic
//! step, on the embedded store, Redis and Redis Cluster alike; a rollover run again
//! appends nothing twice; a player's stream reads their events across their logs.

use crate::common;

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use leaguekit::events::cursor::PlayerCursor;
use leaguekit::rollover::RolloverOptions;
use leaguekit::store::Pos;
use leaguekit::{League, ManualClock, MemoryStore, Season, Store, SubmitOptions};
use serde_json::Value;

const SEASON: &str = r#"
name = "ev"
key_prefix = "{prefix}"
[schedule]
timezone = "UTC"
period = "daily"
start = "2026-01-05T00:00:00Z"
[brackets]
size = 3
[scoring]
max_score = 1000
[events]
keep = "2d"
[[tiers]]
name = "bronze"
promote = 1
demote = 0
rewards = [{ ranks = "1", grant = "gems:10" }]
[[tiers]]
name = "silver"
promote = 0
demote = 1
"#;

fn season(prefix: &str) -> Season {
    Season::from_toml(&SEASON.replace("{prefix}", prefix), "events.toml").expect("season")
}

fn day(d: i64, hh: i64) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-01-05T00:00:00Z")
        .expect("time")
        .with_timezone(&Utc)
        + Duration::days(d)
        + Duration::hours(hh)
}

fn parse(json: &str) -> Value {
    serde_json::from_str(json).expect("event JSON")
}

/// `(type, player)` of each event.
fn kinds(events: &[Value]) -> Vec<(String, String)> {
    events
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap_or("").to_owned(),
                e["player"].as_str().unwrap_or("-").to_owned(),
            )
        })
        .collect()
}

async fn bracket_events<S: Store>(l: &League<S>, period: u64, tier: &str, b: u32) -> Vec<Value> {
    l.events()
        .bracket(period, tier, b, Pos::START, 1000)
        .await
        .expect("bracket events")
        .iter()
        .map(|e| parse(&e.json))
        .collect()
}

async fn a_period_logged_once<S: Store>(league: League<S>, clock: ManualClock) {
    assert!(league.events().enabled());
    // Day 0: four players: bracket 1 holds a, b, c; bracket 2 holds d.
    clock.set(day(0, 2));
    for (p, v) in [("a", 30), ("b", 20), ("c", 10), ("d", 5)] {
        league
            .submit(p, v, SubmitOptions::default().at(day(0, 2)))
            .await
            .expect("submit");
    }
    // Joining again places nobody again: no second player.placed.
    let p0 = league
        .join("a", Some(day(0, 2)))
        .await
        .expect("join")
        .period;
    let e = bracket_events(&league, p0, "bronze", 1).await;
    assert_eq!(
        kinds(&e),
        [
            ("player.placed", "a"),
            ("player.placed", "b"),
            ("player.placed", "c")
        ]
        .map(|(k, p)| (k.to_owned(), p.to_owned()))
    );
    assert_eq!(e[0]["season"], "ev");
    assert_eq!(e[0]["period"], p0);
    assert_eq!(e[0]["tier"], "bronze");
    assert_eq!(e[0]["bracket"], 1);
    assert_eq!(e[0]["at"], day(0, 2).timestamp_millis());

    // The rollover, twice: the second run appends nothing.
    clock.set(day(1, 0) + Duration::seconds(5));
    for _ in 0..2 {
        league
            .rollover(None, RolloverOptions::default())
            .await
            .expect("rollover");
    }
    let e = bracket_events(&league, p0, "bronze", 1).await;
    let closing: Vec<(String, String)> = kinds(&e[3..]);
    assert_eq!(
        closing,
        [
            ("bracket.closed", "-"),
            ("player.promoted", "a"),
            ("player.stayed", "b"),
            ("player.stayed", "c"),
        ]
        .map(|(k, p)| (k.to_owned(), p.to_owned()))
    );
    assert_eq!(e[3]["data"]["players"], 3);
    assert_eq!(e[4]["data"]["next_tier"], "silver");
    assert_eq!(e[4]["data"]["rank"], 1);
    assert_eq!(e[4]["at"], day(1, 0).timestamp_millis());
    let ids: std::collections::BTreeSet<&str> =
        e.iter().map(|v| v["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), e.len(), "ids are unique: {e:?}");

    // The claim logs once; claiming again (nothing pending) logs nothing.
    let granted = league.claim("a", Some("c1")).await.expect("claim");
    assert_eq!(granted.len(), 1);
    league.claim("a", Some("c2")).await.expect("claim again");

    // a's stream: placed, the bracket's close, promoted, the grant, the claim and the
    // period's close; not b's, c's or d's events.
    let page = league
        .events()
        .player("a", &PlayerCursor::default(), 100)
        .await
        .expect("player events");
    let mine: Vec<Value> = page.events.iter().map(|e| parse(&e.json)).collect();
    let mut got: Vec<String> = mine
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_owned())
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            "bracket.closed",
            "period.closed",
            "player.placed",
            "player.promoted",
            "reward.claimed",
            "reward.granted"
        ]
    );
    for e in &mine {
        assert!(e["player"] == "a" || e["player"].is_null(), "{e}");
    }
    let claimed = mine.iter().find(|e| e["type"] == "reward.claimed").unwrap();
    assert_eq!(claimed["data"]["rewards"][0]["grant"], "gems:10");
    assert_eq!(
        claimed["data"]["rewards"][0]["source"],
        format!("{p0}/bronze/1")
    );
    let closed = mine.iter().find(|e| e["type"] == "period.closed").unwrap();
    assert_eq!(closed["data"]["players"], 4);
    assert_eq!(closed["data"]["brackets"], 2);

    // Resuming from any event's cursor gives exactly the events after it.
    for (k, e) in page.events.iter().enumerate() {
        let from: PlayerCursor = e.cursor.parse().expect("cursor");
        let rest = league
            .events()
            .player("a", &from, 100)
            .await
            .expect("resume");
        let rest: Vec<&str> = rest.events.iter().map(|e| e.json.as_str()).collect();
        let want: Vec<&str> = page.events[k + 1..]
            .iter()
            .map(|e| e.json.as_str())
            .collect();
        assert_eq!(rest, want, "resumed after event {k}");
    }

    // Day 1: a plays silver; the stream follows into the new period.
    clock.set(day(1, 2));
    league
        .submit("a", 1, SubmitOptions::default().at(day(1, 2)))
        .await
        .expect("submit");
    let next = league
        .events()
        .player("a", &page.cursor, 100)
        .await
        .expect("next period");
    assert_eq!(
        kinds(
            &next
                .events
                .iter()
                .map(|e| parse(&e.json))
                .collect::<Vec<_>>()
        ),
        [("player.placed".to_owned(), "a".to_owned())]
    );
    assert_eq!(parse(&next.events[0].json)["tier"], "silver");
}

#[tokio::test]
async fn a_period_is_logged_once_on_memory() {
    let clock = ManualClock::new(day(0, 1));
    let store = MemoryStore::with_clock(Arc::new(clock.clone()));
    let league = League::with_clock(season("lkev"), store, Arc::new(clock.clone()));
    a_period_logged_once(league, clock).await;
}

#[tokio::test]
async fn a_period_is_logged_once_on_redis() {
    let clock = ManualClock::new(day(0, 1));
    let store = common::redis_store().await;
    let league = League::with_clock(
        season(&common::unique_prefix("events")),
        store,
        Arc::new(clock.clone()),
    );
    a_period_logged_once(league, clock).await;
}

#[tokio::test]
async fn a_period_is_logged_once_on_cluster() {
    let clock = ManualClock::new(day(0, 1));
    let store = common::cluster_store().await;
    let league = League::with_clock(
        season(&common::unique_prefix("events")),
        store,
        Arc::new(clock.clone()),
    );
    a_period_logged_once(league, clock).await;
}

#[tokio::test]
async fn a_season_without_events_logs_nothing() {
    let clock = ManualClock::new(day(0, 2));
    let store = MemoryStore::with_clock(Arc::new(clock.clone()));
    let text = SEASON
        .replace("{prefix}", "lknoev")
        .replace("[events]\nkeep = \"2d\"\n", "");
    let league = League::with_clock(
        Season::from_toml(&text, "noevents.toml").expect("season"),
        store,
        Arc::new(clock.clone()),
    );
    assert!(!league.events().enabled());
    league
        .submit("a", 3, SubmitOptions::default().at(day(0, 2)))
        .await
        .expect("submit");
    let p0 = league
        .join("a", Some(day(0, 2)))
        .await
        .expect("join")
        .period;
    assert!(bracket_events(&league, p0, "bronze", 1).await.is_empty());
}
