//! Webhook delivery's storage (`DeliveryStore`): leases, cursors that only their
//! lease's owner moves and only forward, log heads, and dead letters removed only
//! while unchanged, period marks and targets' first sightings, in the conformance suite's form: every scenario runs on the
//! embedded store and on real Redis (one server, a cluster).

use crate::common;

use std::sync::Arc;

use leaguekit::store::keys::{hook_cursors, hook_lease};
use leaguekit::store::{DeadBounds, DeadLetter, Pos};
use leaguekit::{League, ManualClock, MemoryStore, Store, SubmitOptions};

use super::events::{season, t};

async fn delivery<S: Store>(league: League<S>) {
    let store = league.store();
    // Two placements log two events in bracket 1's log.
    for p in ["a", "b"] {
        league
            .submit(p, 1, SubmitOptions::default().at(t(1, 0)))
            .await
            .expect("submit");
    }
    let period = league.join("a", Some(t(1, 0))).await.expect("join").period;
    let log = league.keys().bracket(period, "bronze", 1).events();
    let empty = league.keys().bracket(period, "bronze", 9).events();
    let (cursors, empty_cursors) = (hook_cursors(&log), hook_cursors(&empty));
    let targets = ["u1".to_owned(), "u2".to_owned()];
    let heads = store
        .log_heads(&[(&log, &cursors), (&empty, &empty_cursors)], &targets)
        .await;
    let head = heads[0].clone().expect("head");
    assert!(head.last > Pos::START);
    assert_eq!(head.cursors, [Pos::START, Pos::START]);
    let none = heads[1].clone().expect("empty head");
    assert_eq!(none.last, Pos::START, "an absent log reads as empty");

    // Leases: one owner at a time, renewed by its owner, free once dropped.
    let lease = hook_lease(&log, "u1");
    assert!(store.take_lease(&lease, "p1", 30_000).await.expect("take"));
    assert!(!store.take_lease(&lease, "p2", 30_000).await.expect("busy"));
    assert!(store.take_lease(&lease, "p1", 30_000).await.expect("renew"));

    // Cursors: only the owner moves one, only forward.
    let first = Pos { ms: 1, seq: 0 };
    assert!(
        !store
            .advance_cursor(&lease, "p2", &cursors, "u1", head.last, 60_000)
            .await
            .expect("not the owner")
    );
    assert!(
        store
            .advance_cursor(&lease, "p1", &cursors, "u1", head.last, 60_000)
            .await
            .expect("advance")
    );
    assert!(
        store
            .advance_cursor(&lease, "p1", &cursors, "u1", first, 60_000)
            .await
            .expect("never back")
    );
    let head = store.log_heads(&[(&log, &cursors)], &targets).await[0]
        .clone()
        .expect("head");
    assert_eq!(
        head.cursors,
        [head.last, Pos::START],
        "u2's cursor is its own"
    );

    store.drop_lease(&lease, "p2").await.expect("not p2's");
    assert!(
        !store
            .take_lease(&lease, "p3", 30_000)
            .await
            .expect("still p1's")
    );
    store.drop_lease(&lease, "p1").await.expect("drop");
    assert!(store.take_lease(&lease, "p3", 30_000).await.expect("free"));

    // Dead letters: listed, replaced by key, removed only while unchanged.
    let season = league.keys().season();
    let letter = DeadLetter {
        id: "p1/bronze/b1@5-0".into(),
        url: "http://hooks.example/a".into(),
        event: "{\"id\":\"p1/bronze/b1@5-0\"}".into(),
        attempts: 8,
        error: "HTTP 500".into(),
        at_ms: 5,
        replay: false,
    };
    let none = DeadBounds::NONE;
    store.put_dead(&season, &letter, none).await.expect("put");
    let other = DeadLetter {
        url: "http://hooks.example/b".into(),
        at_ms: 6,
        ..letter.clone()
    };
    store
        .put_dead(&season, &other, none)
        .await
        .expect("put other");
    let listed = store.dead_letters(&season, None, 100).await.expect("list");
    assert_eq!(listed, [letter.clone(), other.clone()], "by time");
    assert_eq!(
        store.dead_of(&season, &letter.id).await.expect("of"),
        [letter.clone(), other.clone()]
    );
    assert!(
        store
            .marked_dead(&season, 10)
            .await
            .expect("marked")
            .is_empty()
    );
    let marked = DeadLetter {
        replay: true,
        ..letter.clone()
    };
    store.put_dead(&season, &marked, none).await.expect("mark");
    assert_eq!(
        store.marked_dead(&season, 10).await.expect("marked"),
        std::slice::from_ref(&marked)
    );
    store
        .remove_dead(&season, &letter, &letter.to_json())
        .await
        .expect("remove stale");
    let listed = store.dead_letters(&season, None, 100).await.expect("list");
    assert!(
        listed.contains(&marked),
        "a letter changed since stays: {listed:?}"
    );
    store
        .remove_dead(&season, &marked, &marked.to_json())
        .await
        .expect("remove");
    store
        .remove_dead(&season, &marked, &marked.to_json())
        .await
        .expect("again: idempotent");
    assert_eq!(
        store.dead_letters(&season, None, 100).await.expect("list"),
        std::slice::from_ref(&other)
    );
    assert!(
        store
            .marked_dead(&season, 10)
            .await
            .expect("marked")
            .is_empty()
    );

    // Pages in the order recorded, letters of one millisecond included; a URL keeps at
    // most its cap (the oldest go), and nothing older than the keep.
    let many: Vec<DeadLetter> = (0..7)
        .map(|i| DeadLetter {
            id: format!("p1/bronze/b2@{i}-0"),
            url: "http://hooks.example/c".into(),
            at_ms: 100 + i / 3,
            ..letter.clone()
        })
        .collect();
    let cap = DeadBounds {
        max_per_url: 5,
        before_ms: 0,
    };
    let mut dropped = 0;
    for l in &many {
        dropped += store.put_dead(&season, l, cap).await.expect("put");
    }
    assert_eq!(dropped, 2, "the cap of 5 drops the two oldest");
    let mut paged = Vec::new();
    let mut after: Option<(i64, String)> = None;
    loop {
        let page = store
            .dead_letters(&season, after.as_ref().map(|(ms, k)| (*ms, k.as_str())), 2)
            .await
            .expect("page");
        paged.extend(page.iter().cloned());
        match page.last() {
            Some(l) if page.len() == 2 => after = Some((l.at_ms, l.key())),
            _ => break,
        }
    }
    let mut expect = vec![other.clone()];
    expect.extend(many[2..].iter().cloned());
    assert_eq!(paged, expect, "pages of two, in order, none twice");
    let gone = store
        .prune_dead(&season, 101, &["x".to_owned()])
        .await
        .expect("prune");
    assert_eq!(gone, 2, "other (6) and b2@2 (100) were recorded before 101");
    assert_eq!(
        store.dead_letters(&season, None, 100).await.expect("list"),
        many[3..].to_vec()
    );
    let late = DeadBounds {
        max_per_url: 100,
        before_ms: 102,
    };
    let last = DeadLetter {
        id: "p1/bronze/b2@9-0".into(),
        at_ms: 102,
        ..many[0].clone()
    };
    store.put_dead(&season, &last, late).await.expect("put");
    assert_eq!(
        store.dead_letters(&season, None, 100).await.expect("list"),
        [many[6].clone(), last],
        "a put drops its URL's letters recorded before the keep"
    );
}

/// Period marks (kept at their largest), a target's done records (only at the mark
/// as it stands), pruning, and targets' first sightings.
async fn marks<S: Store>(league: League<S>) {
    let store = league.store();
    let season = league.keys().season();
    assert!(store.period_marks(&season).await.expect("none").is_empty());
    store
        .mark_periods(&season, &[3, 1], 1_000)
        .await
        .expect("mark");
    store
        .mark_periods(&season, &[3], 500)
        .await
        .expect("smaller: kept");
    store
        .mark_periods(&season, &[2], 2_000)
        .await
        .expect("mark");
    assert_eq!(
        store.period_marks(&season).await.expect("marks"),
        [(1, 1_000), (2, 2_000), (3, 1_000)]
    );
    assert!(
        !store
            .record_period_done(&season, "u1", 3, 500, 60_000)
            .await
            .expect("not the mark")
    );
    assert!(
        store
            .record_period_done(&season, "u1", 3, 1_000, 60_000)
            .await
            .expect("done")
    );
    assert!(
        store
            .record_period_done(&season, "u1", 2, 2_000, 60_000)
            .await
            .expect("done")
    );
    assert_eq!(
        store.periods_done(&season, "u1").await.expect("done"),
        [(2, 2_000), (3, 1_000)]
    );
    assert!(
        store
            .periods_done(&season, "u2")
            .await
            .expect("u2")
            .is_empty()
    );
    // Marked again: the old record no longer matches the mark.
    store
        .mark_periods(&season, &[3], 3_000)
        .await
        .expect("again");
    let marks = store.period_marks(&season).await.expect("marks");
    assert!(marks.contains(&(3, 3_000)), "{marks:?}");
    // Pruned below 1,500: period 1's mark, and its record wherever.
    store
        .record_period_done(&season, "u2", 1, 1_000, 60_000)
        .await
        .expect("done");
    store
        .prune_marks(&season, 1_500, &["u1".to_owned(), "u2".to_owned()])
        .await
        .expect("prune");
    assert_eq!(
        store.period_marks(&season).await.expect("marks"),
        [(2, 2_000), (3, 3_000)]
    );
    assert!(
        store
            .periods_done(&season, "u2")
            .await
            .expect("u2")
            .is_empty()
    );

    // Targets: first seen when registered; a target not seen for longer than the
    // stale time starts anew.
    assert_eq!(store.target_seen(&season, "u1").await.expect("seen"), None);
    assert_eq!(
        store
            .register_target(&season, "u1", 10_000, 5_000)
            .await
            .expect("new"),
        10_000
    );
    assert_eq!(
        store
            .register_target(&season, "u1", 14_000, 5_000)
            .await
            .expect("seen"),
        10_000
    );
    assert_eq!(
        store.target_seen(&season, "u1").await.expect("seen"),
        Some((10_000, 14_000))
    );
    assert_eq!(
        store
            .register_target(&season, "u1", 20_000, 5_000)
            .await
            .expect("stale"),
        20_000
    );
}

#[tokio::test]
async fn marks_on_memory() {
    let clock = ManualClock::new(t(1, 0));
    let store = MemoryStore::with_clock(Arc::new(clock.clone()));
    marks(League::with_clock(
        season("lkmk", Some("keep = \"1d\"")),
        store,
        Arc::new(clock),
    ))
    .await;
}

#[tokio::test]
async fn marks_on_redis() {
    let clock = ManualClock::new(t(1, 0));
    let league = League::with_clock(
        season(&common::unique_prefix("mk"), Some("keep = \"1d\"")),
        common::redis_store().await,
        Arc::new(clock),
    );
    marks(league).await;
}

#[tokio::test]
async fn marks_on_cluster() {
    let clock = ManualClock::new(t(1, 0));
    let league = League::with_clock(
        season(&common::unique_prefix("mk"), Some("keep = \"1d\"")),
        common::cluster_store().await,
        Arc::new(clock),
    );
    marks(league).await;
}

#[tokio::test]
async fn delivery_state_on_memory() {
    let clock = ManualClock::new(t(1, 0));
    let store = MemoryStore::with_clock(Arc::new(clock.clone()));
    let league = League::with_clock(
        season("lkdl", Some("keep = \"1d\"")),
        store,
        Arc::new(clock),
    );
    delivery(league).await;
}

#[tokio::test]
async fn delivery_state_on_redis() {
    let clock = ManualClock::new(t(1, 0));
    let league = League::with_clock(
        season(&common::unique_prefix("dl"), Some("keep = \"1d\"")),
        common::redis_store().await,
        Arc::new(clock),
    );
    delivery(league).await;
}

#[tokio::test]
async fn delivery_state_on_cluster() {
    let clock = ManualClock::new(t(1, 0));
    let league = League::with_clock(
        season(&common::unique_prefix("dl"), Some("keep = \"1d\"")),
        common::cluster_store().await,
        Arc::new(clock),
    );
    delivery(league).await;
}
