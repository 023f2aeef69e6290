//! The events that score changes log in the bracket's log: `player.overtaken` (opt-in:
//! `[events] overtaken = true`), an operator's `score.adjusted` and a re-settlement's
//! `player.resettled`, in the conformance suite's form: every scenario runs on the
//! embedded store and on real Redis (one server, a cluster) and must log the same
//! events, byte for byte, on each.

use crate::common;

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use leaguekit::store::Pos;
use leaguekit::{BatchItem, League, ManualClock, MemoryStore, Season, Store, SubmitOptions};
use serde_json::Value;

/// A daily season with bracket size 10, `[events]` holding `events` (`None`: no
/// section).
pub(crate) fn season(prefix: &str, events: Option<&str>) -> Season {
    let events = events.map_or(String::new(), |e| format!("[events]\n{e}\n"));
    let text = format!(
        r#"
name = "ot"
key_prefix = "{prefix}"

[schedule]
timezone = "UTC"
period = "daily"
start = "2026-01-05T00:00:00Z"

[brackets]
size = 10

[scoring]
mode = "increment"
max_score = 1_000_000
time_resolution = "1s"
idempotency_window = "1h"

[[tiers]]
name = "bronze"
promote = 1
demote = 0

[[tiers]]
name = "silver"
promote = 0
demote = 1

{events}
"#
    );
    Season::from_toml(&text, "events.toml").expect("test season is valid")
}

pub(crate) fn t(hh: i64, mm: i64) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-01-05T00:00:00Z")
        .expect("time")
        .with_timezone(&Utc)
        + Duration::hours(hh)
        + Duration::minutes(mm)
}

/// The events of bracket `b` of bronze in `period`: each one's raw JSON.
pub(crate) async fn logged<S: Store>(l: &League<S>, period: u64, b: u32) -> Vec<String> {
    l.events()
        .bracket(period, "bronze", b, Pos::START, 1000)
        .await
        .expect("bracket events")
        .into_iter()
        .map(|e| e.json)
        .collect()
}

/// The events of `kind` among `events`, parsed.
pub(crate) fn of_kind(events: &[String], kind: &str) -> Vec<Value> {
    events
        .iter()
        .map(|e| serde_json::from_str::<Value>(e).expect("event JSON"))
        .filter(|e| e["type"] == kind)
        .collect()
}

/// `(player, by, rank)` of each `player.overtaken` event.
fn passes(events: &[String]) -> Vec<(String, String, u64)> {
    of_kind(events, "player.overtaken")
        .iter()
        .map(|e| {
            (
                e["player"].as_str().expect("player").to_owned(),
                e["data"]["by"].as_str().expect("by").to_owned(),
                e["data"]["rank"].as_u64().expect("rank"),
            )
        })
        .collect()
}

/// A player id that JSON must escape (and that cjson would escape differently).
const ODD: &str = "b\"/\\é";

async fn submit<S: Store>(l: &League<S>, player: &str, value: i64, at: DateTime<Utc>, rq: &str) {
    let mut options = SubmitOptions::default().at(at);
    if !rq.is_empty() {
        options = options.request_id(rq);
    }
    l.submit(player, value, options).await.expect("submit");
}

/// Who passed whom, on one store: ties, a retry (on Redis the update is applied and
/// undone inside the script when its record is found), a never-scored player, a
/// player moving down, a batch of updates in one call.
async fn overtakes_are_logged_once<S: Store>(league: League<S>, clock: ManualClock) {
    clock.set(t(12, 0));
    submit(&league, "a", 30, t(1, 0), "").await;
    submit(&league, ODD, 20, t(1, 1), "").await;
    submit(&league, "c", 10, t(1, 2), "").await;
    let period = league
        .join("aa-idle", Some(t(1, 3)))
        .await
        .expect("join")
        .period;
    // First scores pass nobody who scored.
    assert_eq!(passes(&logged(&league, period, 1).await), []);

    // c 35 passes a and b.
    submit(&league, "c", 25, t(2, 0), "c1").await;
    // b reaches a's 30 later than a did: no pass.
    submit(&league, ODD, 10, t(2, 1), "").await;
    // b 40 passes c and a; then a 50 passes b and c, in one call with an update
    // that passes nobody.
    submit(&league, ODD, 10, t(2, 2), "b1").await;
    let batch = league
        .submit_many(&[
            BatchItem::new("a", 20)
                .with_options(SubmitOptions::default().at(t(2, 3)).request_id("a1")),
            BatchItem::new("c", 0).with_options(SubmitOptions::default().at(t(2, 3))),
        ])
        .await;
    for r in batch {
        r.expect("batch item");
    }
    // A retry of b's +10 would now tie a at 50 reached earlier, passing a: it is a
    // duplicate, and logs nothing.
    submit(&league, ODD, 10, t(2, 2), "b1").await;
    // A first score of 0 passes the never-scored aa-idle, who is not told.
    submit(&league, "zed", 0, t(3, 0), "").await;
    // Moving down passes nobody.
    submit(&league, "a", -15, t(3, 1), "").await;

    let events = logged(&league, period, 1).await;
    let owned = |v: &[(&str, &str, u64)]| -> Vec<(String, String, u64)> {
        v.iter()
            .map(|(p, b, r)| ((*p).to_owned(), (*b).to_owned(), *r))
            .collect()
    };
    assert_eq!(
        passes(&events),
        owned(&[
            ("a", "c", 2),
            (ODD, "c", 3),
            ("c", ODD, 2),
            ("a", ODD, 3),
            (ODD, "a", 2),
            ("c", "a", 3),
        ])
    );
    let first = of_kind(&events, "player.overtaken").remove(0);
    assert_eq!(first["season"], "ot");
    assert_eq!(first["period"], period);
    assert_eq!(first["tier"], "bronze");
    assert_eq!(first["bracket"], 1);
    assert_eq!(first["at"], t(2, 0).timestamp_millis());
    // The same bytes on every store: serde_json's escapes, '/' as is.
    let raw = events
        .iter()
        .find(|e| e.contains("\"player.overtaken\"") && e.contains("\"by\":\"c\",\"rank\":3"))
        .expect("b passed by c");
    assert!(
        raw.contains(
            r#""player":"b\"/\\é","tier":"bronze","bracket":1,"data":{"by":"c","rank":3}}"#
        ),
        "{raw}"
    );
    assert!(
        raw.starts_with(r#"{"id":"#)
            && raw.contains(r#""type":"player.overtaken","season":"ot","period":"#)
    );
}

/// Updates of two brackets in one batch (one `update.lua` call on one server): each
/// logs its passes in its own bracket's log.
async fn each_bracket_logs_its_own<S: Store>(league: League<S>, clock: ManualClock) {
    clock.set(t(12, 0));
    for i in 0..12 {
        let at = t(1, 0) + Duration::seconds(i);
        // Falling first scores: nobody passes anybody yet.
        submit(&league, &format!("q{i:02}"), 12 - i, at, "").await;
    }
    let batch = league
        .submit_many(&[
            BatchItem::new("q09", 100).with_options(SubmitOptions::default().at(t(2, 0))),
            BatchItem::new("q11", 100).with_options(SubmitOptions::default().at(t(2, 0))),
        ])
        .await;
    let mut period = 0;
    for r in batch {
        period = r.expect("batch item").period;
    }
    let first = passes(&logged(&league, period, 1).await);
    let want: Vec<(String, String, u64)> = (0..9)
        .map(|i| (format!("q{i:02}"), "q09".to_owned(), i + 2))
        .collect();
    assert_eq!(first, want);
    let second = passes(&logged(&league, period, 2).await);
    assert_eq!(second, [("q10".to_owned(), "q11".to_owned(), 2)]);
}

/// A season whose `[events]` leaves `overtaken` off logs no pass.
async fn off_logs_no_pass<S: Store>(league: League<S>, clock: ManualClock) {
    clock.set(t(12, 0));
    submit(&league, "a", 30, t(1, 0), "").await;
    submit(&league, "b", 20, t(1, 1), "").await;
    submit(&league, "b", 20, t(1, 2), "").await;
    let period = league.join("a", Some(t(1, 3))).await.expect("join").period;
    let events = logged(&league, period, 1).await;
    assert_eq!(passes(&events), []);
    assert_eq!(of_kind(&events, "player.placed").len(), 2);
}

/// Runs `$body(league, clock)` with the season's `[events]` set to `$events` on the
/// embedded store, one Redis server and a cluster.
macro_rules! on_each {
    ($name:ident, $events:expr, $body:ident) => {
        mod $name {
            use super::*;

            #[tokio::test]
            async fn memory() {
                let clock = ManualClock::new(t(12, 0));
                let store = MemoryStore::with_clock(Arc::new(clock.clone()));
                let league = League::with_clock(
                    season(&common::unique_prefix(stringify!($name)), $events),
                    store,
                    Arc::new(clock.clone()),
                );
                $body(league, clock).await;
            }

            #[tokio::test]
            async fn redis() {
                let clock = ManualClock::new(t(12, 0));
                let league = League::with_clock(
                    season(&common::unique_prefix(stringify!($name)), $events),
                    common::redis_store().await,
                    Arc::new(clock.clone()),
                );
                $body(league, clock).await;
            }

            #[tokio::test]
            async fn cluster() {
                let clock = ManualClock::new(t(12, 0));
                let league = League::with_clock(
                    season(&common::unique_prefix(stringify!($name)), $events),
                    common::cluster_store().await,
                    Arc::new(clock.clone()),
                );
                $body(league, clock).await;
            }
        }
    };
}

on_each!(
    overtaken,
    Some("overtaken = true"),
    overtakes_are_logged_once
);
on_each!(
    overtaken_brackets,
    Some("overtaken = true"),
    each_bracket_logs_its_own
);
on_each!(overtaken_off, Some("keep = \"2d\""), off_logs_no_pass);

/// An operator's corrections: an adjustment logs `score.adjusted` when it applies
/// (not when refused); a re-settlement logs `player.resettled` for each player whose
/// outcome the recorded version changed, once (a repeat logs nothing).
async fn corrections_are_logged_once<S: Store>(league: League<S>, clock: ManualClock) {
    use leaguekit::operator::{Actor, Adjustment};
    let actor = Actor::new("ops:test").expect("actor");
    clock.set(t(11, 0));
    for (p, v) in [("cheat", 999), ("p1", 90), ("p2", 80), ("p3", 70)] {
        submit(&league, p, v, t(10, 0), "").await;
    }
    let op = league.operator();
    let done = op
        .adjust(&actor, "p3", Adjustment::By(5), "lost match result")
        .await
        .expect("adjust");
    assert_eq!((done.before, done.after), (70, 75));
    op.adjust(&actor, "p3", Adjustment::Set(-1), "out of range")
        .await
        .expect_err("refused");
    let period = done.period;
    let events = logged(&league, period, 1).await;
    let adjusted = of_kind(&events, "score.adjusted");
    assert_eq!(adjusted.len(), 1, "{events:?}");
    assert_eq!(adjusted[0]["player"], "p3");
    assert_eq!(adjusted[0]["tier"], "bronze");
    assert_eq!(adjusted[0]["bracket"], 1);
    assert_eq!(adjusted[0]["at"], t(11, 0).timestamp_millis());
    assert!(
        events
            .iter()
            .any(|e| e.ends_with(r#""data":{"before":70,"after":75}}"#)),
        "{events:?}"
    );

    // Close the period, then settle it again without the cheater, twice.
    clock.set(t(24, 0) + Duration::seconds(10));
    league
        .rollover(None, Default::default())
        .await
        .expect("rollover");
    let resettle = |exclude: &'static [&'static str]| {
        let exclude: Vec<String> = exclude.iter().map(|s| (*s).to_owned()).collect();
        let op = league.operator();
        let actor = actor.clone();
        async move {
            op.resettle(&actor, period, "bronze", 1, &exclude, "injected scores")
                .await
                .expect("resettle")
        }
    };
    let who = |events: &[Value], version: u64| -> Vec<String> {
        let mut out: Vec<String> = events
            .iter()
            .filter(|e| e["data"]["version"] == version)
            .map(|e| e["player"].as_str().expect("player").to_owned())
            .collect();
        out.sort();
        out
    };
    resettle(&["cheat"]).await;
    resettle(&["cheat"]).await;
    let resettled = of_kind(&logged(&league, period, 1).await, "player.resettled");
    assert_eq!(
        who(&resettled, 1),
        ["cheat", "p1", "p2", "p3"],
        "{resettled:?}"
    );
    assert_eq!(resettled.len(), 4, "{resettled:?}");
    let p1 = resettled.iter().find(|e| e["player"] == "p1").expect("p1");
    assert_eq!(p1["data"]["rank"], 1);
    assert_eq!(p1["data"]["outcome"], "promoted");
    assert_eq!(p1["data"]["next_tier"], "silver");
    assert_eq!(p1["tier"], "bronze");
    assert_eq!(p1["period"], period);

    // A second version: the players it changes (each one here: the excluded rank
    // last, so cheat moves up behind p1).
    resettle(&["cheat", "p1"]).await;
    resettle(&["p1"]).await;
    let resettled = of_kind(&logged(&league, period, 1).await, "player.resettled");
    assert_eq!(
        who(&resettled, 2),
        ["cheat", "p1", "p2", "p3"],
        "{resettled:?}"
    );
    assert_eq!(resettled.len(), 8, "{resettled:?}");
    let cheat = resettled
        .iter()
        .find(|e| e["player"] == "cheat" && e["data"]["version"] == 2)
        .expect("cheat");
    assert_eq!(cheat["data"]["rank"], 3);
    let p2 = resettled
        .iter()
        .find(|e| e["player"] == "p2" && e["data"]["version"] == 2)
        .expect("p2");
    assert_eq!(p2["data"]["outcome"], "promoted");
}

on_each!(
    corrections,
    Some("keep = \"2d\""),
    corrections_are_logged_once
);
