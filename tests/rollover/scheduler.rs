//! The scheduler: catch-up at start and closing at a real boundary, without relying
//! on its safety tick. Store-independent, so it runs on the embedded store.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Timelike, Utc};
use leaguekit::SubmitOptions;
use leaguekit::{League, ManualClock, MemoryStore, Scheduler, SchedulerOptions, Season};

fn season(period: &str, start: &str) -> Season {
    let text = format!(
        r#"
name = "sched"
key_prefix = "s"
[schedule]
timezone = "Europe/Berlin"
period = "{period}"
start = "{start}"
[scoring]
max_score = 1000
[[tiers]]
name = "bronze"
promote = 1
demote = 0
rewards = [{{ ranks = "1", grant = "g" }}]
[[tiers]]
name = "silver"
promote = 0
demote = 1
"#
    );
    Season::from_toml(&text, "sched.toml").expect("season")
}

// The scheduler runs its rollovers on a thread of their own on a multi-threaded
// runtime, and in place on a current-thread one: both catch up alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_catches_up_every_missed_period() {
    catch_up().await;
}

#[tokio::test(flavor = "current_thread")]
async fn start_catches_up_on_a_current_thread_runtime() {
    catch_up().await;
}

async fn catch_up() {
    let at: DateTime<Utc> = "2026-01-05T12:00:00Z".parse().expect("time");
    let clock = ManualClock::new(at);
    let league = Arc::new(League::with_clock(
        season("daily", "2026-01-05T00:00:00+01:00"),
        MemoryStore::with_clock(Arc::new(clock.clone())),
        Arc::new(clock.clone()),
    ));
    for (p, v) in [("a", 5), ("b", 9)] {
        league
            .submit(p, v, SubmitOptions::default().at(at))
            .await
            .expect("submit");
    }
    // Everything was down for twenty days.
    clock.set("2026-01-25T12:00:00Z".parse().expect("time"));
    let (scheduler, report) = Scheduler::start(league.clone(), SchedulerOptions::default())
        .await
        .expect("start");
    let now = league.period_at(None).expect("now").id;
    // Period 1 had players; the 19 after it had nobody (closed by the mark alone).
    assert_eq!(
        (
            report.closed.len() as u64,
            report.empty,
            report.closed_through
        ),
        (1, now - 2, now - 1),
        "every ended period closed"
    );
    assert_eq!(
        (report.closed[0].period, report.closed[0].totals.promoted),
        (1, 1)
    );
    assert_eq!(league.rewards("b").await.expect("rewards").len(), 1);
    scheduler.shutdown().await.expect("shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wakes_at_the_boundary() {
    // Periods of 3 seconds from a recent start, so a boundary comes soon.
    let now = Utc::now();
    let start = now.with_nanosecond(0).expect("time")
        - chrono::Duration::seconds(i64::from(now.second() % 3) + 30);
    let season = season(
        "*/3 * * * * *",
        &start.to_rfc3339_opts(SecondsFormat::Secs, true),
    );
    let league = Arc::new(League::new(season, MemoryStore::new()));
    let current = league.period_at(None).expect("period");
    league
        .submit("solo", 3, SubmitOptions::default())
        .await
        .expect("submit");
    // The safety tick is an hour away: only the boundary wake-up can close the period.
    let options = SchedulerOptions::default()
        .safety_tick(Duration::from_secs(3600))
        .grace(Duration::from_millis(100));
    let (scheduler, caught_up) = Scheduler::start(league.clone(), options)
        .await
        .expect("start");
    assert!(caught_up.closed.iter().all(|p| p.period < current.id));
    assert!(league.last_outcome("solo").await.expect("last").is_none());
    // The period may close max_skew (5 s) after its end; the wake-up comes then.
    let wait = (league.closes_at(&current) - Utc::now())
        .to_std()
        .unwrap_or_default()
        + Duration::from_millis(2500);
    tokio::time::sleep(wait).await;
    let last = league
        .last_outcome("solo")
        .await
        .expect("last")
        .expect("closed by the wake-up");
    assert_eq!(
        (last.period, last.next_tier.as_str()),
        (current.id, "silver")
    );
    scheduler.shutdown().await.expect("shutdown");
}
