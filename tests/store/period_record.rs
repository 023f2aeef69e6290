//! What the store tells of a period's close (`League::period_record`), on both
//! stores: open until its rollover, closed with the rollover's report, closed with an
//! empty report when nobody played, and expired once `retention.periods` have passed
//! (on the embedded store, whose clock drives its expiry; Redis expires by its own
//! clock, which a test cannot move).

use crate::common;

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use leaguekit::rollover::{PeriodRecord, RolloverOptions};
use leaguekit::{League, ManualClock, MemoryStore, Season, Store, SubmitOptions};

fn day(d: i64, hh: i64) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-01-05T00:00:00Z")
        .expect("time")
        .with_timezone(&Utc)
        + Duration::days(d)
        + Duration::hours(hh)
}

fn season(prefix: &str) -> Season {
    let text = format!(
        r#"
name = "records"
key_prefix = "{prefix}"
[schedule]
timezone = "UTC"
period = "daily"
start = "2026-01-05T00:00:00Z"
[brackets]
size = 4
[scoring]
max_score = 1000
[retention]
periods = 2
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
    Season::from_toml(&text, "records.toml").expect("season")
}

/// Periods 1 (played) and 2 (nobody played) closed in turn; returns nothing, asserts
/// every record on the way.
async fn open_closed_empty<S: Store>(league: &League<S>, clock: &ManualClock) {
    for (p, v) in [("a", 30), ("b", 20), ("c", 10)] {
        league
            .submit(p, v, SubmitOptions::default().at(day(0, 1)))
            .await
            .expect("submit");
    }
    assert_eq!(league.closed_through().await.expect("mark"), 0);
    assert_eq!(
        league.period_record(1).await.expect("record"),
        PeriodRecord::Open
    );

    clock.set(day(1, 0) + Duration::seconds(5));
    let report = league
        .rollover(None, RolloverOptions::default())
        .await
        .expect("rollover");
    assert_eq!(report.closed.len(), 1);
    assert_eq!(league.closed_through().await.expect("mark"), 1);
    let PeriodRecord::Closed(one) = league.period_record(1).await.expect("record") else {
        panic!("period 1 is closed");
    };
    assert_eq!(one, report.closed[0], "the same report as the rollover's");
    assert_eq!((one.period, one.brackets, one.totals.players), (1, 1, 3));
    assert_eq!((one.totals.promoted, one.totals.demoted), (1, 0));

    // Nobody plays in period 2: it closes by the season's mark alone.
    clock.set(day(2, 0) + Duration::seconds(5));
    let report = league
        .rollover(None, RolloverOptions::default())
        .await
        .expect("rollover");
    assert_eq!((report.closed.len(), report.empty), (0, 1));
    assert_eq!(league.closed_through().await.expect("mark"), 2);
    let PeriodRecord::Closed(two) = league.period_record(2).await.expect("record") else {
        panic!("period 2 is closed (empty)");
    };
    assert_eq!((two.period, two.brackets, two.totals.players), (2, 0, 0));
    assert!(two.tiers.is_empty(), "{two:?}");
    // The running period is open; one outside the calendar is refused.
    assert_eq!(
        league.period_record(3).await.expect("record"),
        PeriodRecord::Open
    );
    assert!(league.period_record(0).await.is_err());
}

#[tokio::test]
async fn memory() {
    let clock = ManualClock::new(day(0, 1));
    let store = MemoryStore::with_clock(Arc::new(clock.clone()));
    let league = League::with_clock(season("lkm"), store, Arc::new(clock.clone()));
    open_closed_empty(&league, &clock).await;

    // Period 1's keys live until period 3 (1 + retention.periods) has ended; the
    // embedded store drops expired periods when it closes another one. Someone plays
    // in period 4, nobody in 3; both close at the start of day 4.
    clock.set(day(3, 1));
    league
        .submit("a", 5, SubmitOptions::default())
        .await
        .expect("submit");
    clock.set(day(4, 1));
    let report = league
        .rollover(None, RolloverOptions::default())
        .await
        .expect("rollover");
    assert_eq!((report.closed.len(), report.empty), (1, 1));
    assert_eq!(
        league.period_record(1).await.expect("record"),
        PeriodRecord::Expired
    );
    // Period 2 was empty and is past its retention too; period 3 is not.
    assert_eq!(
        league.period_record(2).await.expect("record"),
        PeriodRecord::Expired
    );
    let PeriodRecord::Closed(three) = league.period_record(3).await.expect("record") else {
        panic!("period 3 is closed (empty) and kept until period 5 ends");
    };
    assert_eq!((three.period, three.brackets), (3, 0));
    assert!(matches!(
        league.period_record(4).await.expect("record"),
        PeriodRecord::Closed(r) if r.totals.players == 1
    ));
}

#[tokio::test]
async fn redis() {
    let clock = ManualClock::new(day(0, 1));
    let prefix = common::unique_prefix("period_record");
    let league = League::with_clock(
        season(&prefix),
        common::redis_store().await,
        Arc::new(clock.clone()),
    );
    open_closed_empty(&league, &clock).await;
}
