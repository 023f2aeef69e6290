//! Redis losing its data (FLUSHALL, a restart without persistence) under running
//! processes: the league goes on, for them and for processes started afterwards.

use super::*;

/// A running process writes the season's meta again after the loss (its close of
/// the next period, its shape); a process started later must read that meta as this
/// version's, not as leaguekit 0.2's layout, and work as the running one does.
#[tokio::test]
async fn processes_started_after_a_data_loss_accept_the_league() {
    let server = RedisServer::start(&[]);
    let clock = ManualClock::new(t("2026-01-05T10:00:00Z"));
    let prefix = common::unique_prefix("loss");
    let season = season(&prefix, "2026-01-05T00:00:00Z", 100, "");
    let running = League::with_clock(
        season.clone(),
        connect(&server).await,
        Arc::new(clock.clone()),
    );
    submit_at(&running, "a", 3, "2026-01-05T09:00:00Z").await;
    clock.set(t("2026-01-06T00:00:05Z"));
    running
        .rollover(None, RolloverOptions::default())
        .await
        .expect("rollover");
    let mut con = raw(&server).await;
    let () = redis::cmd("FLUSHALL")
        .query_async(&mut con)
        .await
        .expect("flushall");
    // The running process goes on: a player, then the next close.
    clock.set(t("2026-01-06T09:00:00Z"));
    submit_at(&running, "b", 4, "2026-01-06T09:00:00Z").await;
    clock.set(t("2026-01-07T00:00:05Z"));
    let r = running
        .rollover(None, RolloverOptions::default())
        .await
        .expect("rollover after the loss");
    assert_eq!(r.closed_through, 2);
    // A process started now works as the running one does.
    let started = League::with_clock(season, connect(&server).await, Arc::new(clock.clone()));
    started
        .rollover(None, RolloverOptions::default())
        .await
        .expect("a new process accepts the league");
    let placed = started.join("b", None).await.expect("join");
    assert_eq!((placed.period, placed.tier.as_str()), (3, "silver"));
    submit_at(&started, "c", 1, "2026-01-07T00:00:05Z").await;
}
