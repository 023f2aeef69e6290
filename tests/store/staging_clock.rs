//! The staging clock (`[clock] travel = true`) on every store: the offset is read and
//! applied by joins, updates and closes (on Redis inside the scripts, added to
//! `TIME`), it only moves forward, every move is audited, another process sees a move
//! within about a second, and a season without travel refuses a move and writes
//! nothing.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use leaguekit::operator::{Actor, AuditQuery};
use leaguekit::store::ClockStore;
use leaguekit::{
    Error, InputError, League, ManualClock, MemoryStore, RolloverOptions, Season, Store,
    SubmitOptions,
};

const DAY: Duration = Duration::from_secs(86_400);

fn season(prefix: &str, travel: bool) -> Season {
    let text = format!(
        r#"
name = "staging"
key_prefix = "{prefix}"

[schedule]
timezone = "UTC"
period = "daily"
start = "2026-01-05T00:00:00Z"

[scoring]
mode = "increment"
max_score = 1_000_000
time_resolution = "1s"

[clock]
max_skew = "2s"
travel = {travel}

[[tiers]]
name = "bronze"
promote = 1
demote = 0

[[tiers]]
name = "silver"
promote = 0
demote = 1
"#
    );
    Season::from_toml(&text, "staging.toml").expect("test season is valid")
}

fn input_err(e: Error) -> InputError {
    match e {
        Error::Input(i) => i,
        other => panic!("expected an input error, got {other:?}"),
    }
}

fn actor() -> Actor {
    Actor::new("qa").expect("actor")
}

/// Runs `$body` with `$make(travel)` building a league (a fresh key prefix each) on
/// the embedded store and on each Redis form, all on the store's own clock.
macro_rules! on_stores {
    ($name:ident, |$make:ident| $body:block) => {
        mod $name {
            use super::*;

            #[tokio::test]
            async fn memory() {
                let store = MemoryStore::new();
                let $make =
                    move |travel: bool| League::new(season("lkstage", travel), store.clone());
                $body
            }

            #[tokio::test]
            async fn redis() {
                let store = common::redis_store().await;
                let $make = move |travel: bool| {
                    let prefix = common::unique_prefix(stringify!($name));
                    League::new(season(&prefix, travel), store.clone())
                };
                $body
            }

            #[tokio::test]
            async fn cluster() {
                let store = common::cluster_store().await;
                let $make = move |travel: bool| {
                    let prefix = common::unique_prefix(stringify!($name));
                    League::new(season(&prefix, travel), store.clone())
                };
                $body
            }
        }
    };
}

/// Advances the clock of `league` by one day and checks the view it answers.
async fn advance_day<S: Store>(league: &League<S>, before: i64) -> i64 {
    let view = league
        .operator()
        .advance_clock(&actor(), DAY, Some("next day"))
        .await
        .expect("advance");
    assert!(view.travel);
    assert_eq!(view.offset_ms, before + DAY.as_millis() as i64);
    view.offset_ms
}

on_stores!(offset_applied_in_joins_updates_and_closes, |make| {
    let league = make(true);
    // A second process of the same league, which holds the offset it read last.
    let other = League::new(league.season().clone(), league.store().clone());
    let start = league.operator().clock().await.expect("clock");
    assert!(start.travel);
    assert_eq!(start.offset_ms, 0);
    let s = league
        .submit("a", 10, SubmitOptions::default())
        .await
        .expect("submit");
    let p0 = s.period;
    // The other process reads the league clock (and the offset, 0) now.
    other.now().await.expect("now");

    let offset = advance_day(&league, 0).await;
    let view = league.operator().clock().await.expect("clock");
    assert_eq!(view.offset_ms, offset);
    assert!(view.now >= start.now + TimeDelta::days(1));

    // The period closes by the moved clock: on Redis the close script adds the offset
    // to TIME (without it, TIME is a day before the period's end).
    let report = league
        .rollover(None, RolloverOptions::default())
        .await
        .expect("rollover");
    let closed: Vec<u64> = report.closed.iter().map(|p| p.period).collect();
    assert_eq!(closed, [p0]);
    assert_eq!(league.closed_through().await.expect("mark"), p0);

    // Joins and updates stamped by the moved clock are in the next period: the scripts
    // judge them by TIME plus the offset (without it they are a day in the future).
    let s = league
        .submit("b", 7, SubmitOptions::default())
        .await
        .expect("submit after the move");
    assert_eq!(s.period, p0 + 1);
    let placed = league.join("c", None).await.expect("join after the move");
    assert_eq!(placed.period, p0 + 1);
    // An event of the closed period is refused.
    let late = league
        .submit("a", 1, SubmitOptions::default().at(start.now))
        .await
        .expect_err("closed period");
    assert!(
        matches!(input_err(late), InputError::PeriodClosed { period } if period == p0),
        "an event in the closed period"
    );

    // The other process still holds offset 0 (an earlier time, as a slow clock): its
    // write of the closed period is refused by the close marker, and it stamps the
    // write again with the offset read anew, into the next period.
    let s = other
        .submit("d", 3, SubmitOptions::default())
        .await
        .expect("stale process's submit");
    assert_eq!(s.period, p0 + 1);
    // And within about a second it reads the moved clock by itself.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let now = other.now().await.expect("now");
    assert!(
        now >= start.now + TimeDelta::days(1),
        "{now} after the move"
    );

    // A second move closes the next period as well, once: the other process, once it
    // has read the move, finds nothing left to close.
    advance_day(&league, offset).await;
    let report = league
        .rollover(None, RolloverOptions::default())
        .await
        .expect("rollover");
    let closed: Vec<u64> = report.closed.iter().map(|p| p.period).collect();
    assert_eq!(closed, [p0 + 1]);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let again = other
        .rollover(None, RolloverOptions::default())
        .await
        .expect("rollover");
    assert!(again.closed.is_empty(), "every period closes once");
    assert_eq!(again.closed_through, p0 + 1);

    // Each move is in the audit log.
    let log = league
        .operator()
        .audit(&AuditQuery::default())
        .await
        .expect("audit");
    let moves: Vec<i64> = log
        .iter()
        .filter(|e| e.action == "clock")
        .map(|e| e.details["offset_ms"].as_i64().expect("offset_ms"))
        .collect();
    assert_eq!(moves, [offset, 2 * offset]);
    assert!(log.iter().all(|e| e.actor == "qa"));
});

on_stores!(time_only_moves_forward, |make| {
    let league = make(true);
    let offset = advance_day(&league, 0).await;
    let now = league.operator().clock().await.expect("clock").now;
    let op = league.operator();
    // Setting a time before the league clock's now is refused, writing nothing.
    let e = op
        .set_clock(&actor(), now - TimeDelta::hours(1), None)
        .await
        .expect_err("backwards");
    assert!(matches!(input_err(e), InputError::ClockNotForward { .. }));
    let e = op
        .advance_clock(&actor(), Duration::ZERO, None)
        .await
        .expect_err("zero");
    assert!(matches!(input_err(e), InputError::ClockNotForward { .. }));
    let keys = league.keys().season();
    assert_eq!(
        league.store().clock_offset(&keys).await.expect("offset"),
        offset
    );
    // Setting a later time moves it there.
    let to = now + TimeDelta::days(2);
    let view = op.set_clock(&actor(), to, Some("jump")).await.expect("set");
    assert_eq!(view.now, to);
    assert!(view.offset_ms > offset);
    assert!(league.now().await.expect("now") >= to);
    let log = op.audit(&AuditQuery::default()).await.expect("audit");
    assert_eq!(log.len(), 2, "the refused moves are not logged");
    // The store never lowers the offset, and a retried move changes nothing.
    let store = league.store();
    assert_eq!(
        store
            .move_clock(&keys, view.offset_ms, 5)
            .await
            .expect("move"),
        view.offset_ms
    );
    assert_eq!(
        store
            .move_clock(&keys, offset, view.offset_ms)
            .await
            .expect("retry"),
        view.offset_ms
    );
});

on_stores!(without_travel_nothing_moves, |make| {
    let league = make(false);
    let view = league.operator().clock().await.expect("clock");
    assert!(!view.travel);
    assert_eq!(view.offset_ms, 0);
    let op = league.operator();
    let e = op
        .advance_clock(&actor(), DAY, Some("try"))
        .await
        .expect_err("no travel");
    let e = input_err(e);
    assert!(matches!(e, InputError::NoStagingClock { .. }));
    assert!(e.to_string().contains("travel = true"), "{e}");
    let e = op
        .set_clock(&actor(), view.now + TimeDelta::days(1), None)
        .await
        .expect_err("no travel");
    assert!(matches!(input_err(e), InputError::NoStagingClock { .. }));
    // Nothing was written: no offset, no audit entry.
    let keys = league.keys().season();
    assert_eq!(league.store().clock_offset(&keys).await.expect("offset"), 0);
    assert!(
        op.audit(&AuditQuery::default())
            .await
            .expect("audit")
            .is_empty()
    );
    // And an offset in the store (written by a staging build of the same season) is
    // never read by a league without travel.
    league
        .store()
        .move_clock(&keys, 0, DAY.as_millis() as i64)
        .await
        .expect("move");
    let now = league.now().await.expect("now");
    assert!(now < view.now + TimeDelta::hours(1));
});

/// With a clock the league was built with (tests, replays), the offset is added to it.
#[tokio::test]
async fn injected_clock_travels() {
    let at: DateTime<Utc> = "2026-01-05T12:00:00Z".parse().expect("time");
    let clock = ManualClock::new(at);
    let store = MemoryStore::with_clock(Arc::new(clock.clone()));
    let league = League::with_clock(season("lkinj", true), store, Arc::new(clock.clone()));
    league
        .submit("a", 1, SubmitOptions::default())
        .await
        .expect("submit");
    league
        .operator()
        .advance_clock(&actor(), DAY, None)
        .await
        .expect("advance");
    assert_eq!(league.now().await.expect("now"), at + TimeDelta::days(1));
    let report = league
        .rollover(None, RolloverOptions::default())
        .await
        .expect("rollover");
    assert_eq!(report.closed.len(), 1);
    let s = league
        .submit("a", 1, SubmitOptions::default())
        .await
        .expect("submit");
    assert_eq!(s.period, report.closed[0].period + 1);
}
