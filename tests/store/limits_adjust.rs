//! The season's plausibility limits and operators' adjustments, in the conformance
//! suite's form: every scenario runs on the embedded store and on real Redis (one
//! server, a cluster, TLS), and must behave the same on each.

use crate::common;

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use leaguekit::error::Limit;
use leaguekit::operator::{Actor, Adjustment, AuditQuery};
use leaguekit::store::{Adjust, AdjustStore, Adjusted, Now, TimeCheck};
use leaguekit::{BatchItem, SubmitOptions};
use leaguekit::{Clock, Error, InputError, League, ManualClock, MemoryStore, Season, Store};

fn t(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s)
        .expect("test time")
        .with_timezone(&Utc)
}

/// A daily season with `limits` as its `[limits]` section ("" for none).
fn season(prefix: &str, limits: &str) -> Season {
    let text = format!(
        r#"
name = "lim"
key_prefix = "{prefix}"

[schedule]
timezone = "UTC"
period = "daily"
start = "2026-01-05T00:00:00Z"

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

{limits}
"#
    );
    Season::from_toml(&text, "limits.toml").expect("test season is valid")
}

const LIMITS: &str = "[limits]\nmax_value = 100\nrate = \"3/1m\"\nmax_period_score = 250\n";

/// Runs `$body` with a league of the season whose `[limits]` is `$limits` on each
/// store: memory, redis, cluster and tls.
macro_rules! on_each {
    (@redis $form:ident, $store:ident, $name:ident, $limits:expr, |$league:ident, $clock:ident| $body:block) => {
        #[tokio::test]
        async fn $form() {
            let $clock = ManualClock::new(t("2026-01-05T12:00:00Z"));
            let store = common::$store().await;
            let prefix = common::unique_prefix(stringify!($name));
            let $league = Arc::new(League::with_clock(
                season(&prefix, $limits),
                store,
                Arc::new($clock.clone()),
            ));
            $body
        }
    };
    ($name:ident, $limits:expr, |$league:ident, $clock:ident| $body:block) => {
        mod $name {
            use super::*;

            #[tokio::test]
            async fn memory() {
                let $clock = ManualClock::new(t("2026-01-05T12:00:00Z"));
                let store = MemoryStore::with_clock(Arc::new($clock.clone()));
                let $league = Arc::new(League::with_clock(
                    season("lkmem", $limits),
                    store,
                    Arc::new($clock.clone()),
                ));
                $body
            }

            on_each!(@redis redis, redis_store, $name, $limits, |$league, $clock| $body);
            on_each!(@redis cluster, cluster_store, $name, $limits, |$league, $clock| $body);
            on_each!(@redis tls, tls_store, $name, $limits, |$league, $clock| $body);
        }
    };
}

fn limited(r: Result<leaguekit::Submission, Error>) -> (Limit, Option<u64>) {
    match r {
        Err(Error::Input(InputError::LimitExceeded {
            limit,
            retry_after_ms,
            ..
        })) => (limit, retry_after_ms),
        other => panic!("expected a limit refusal, got {other:?}"),
    }
}

async fn score<S: Store>(l: &League<S>, player: &str) -> Option<u64> {
    l.player(player, None).await.expect("player").score
}

fn rid(id: &str) -> SubmitOptions {
    SubmitOptions::default().request_id(id)
}

on_each!(
    max_value_refuses_and_writes_nothing,
    LIMITS,
    |league, clock| {
        // A first update beyond the limit does not even place the player.
        let (limit, wait) = limited(league.submit("a", 101, rid("r1")).await);
        assert_eq!((limit, wait), (Limit::MaxValue, None));
        assert_eq!(league.player("a", None).await.expect("view").bracket, None);
        league
            .submit("a", 40, SubmitOptions::default())
            .await
            .expect("40");
        let (limit, _) = limited(league.submit("a", -101, SubmitOptions::default()).await);
        assert_eq!(limit, Limit::MaxValue);
        assert_eq!(score(&league, "a").await, Some(40));
        // The refused request id was not remembered: sent again within the limit, it
        // applies as a new request.
        let s = league.submit("a", 10, rid("r1")).await.expect("r1");
        assert!(s.applied);
        assert_eq!(s.score, 50);
        let _ = clock;
    }
);

on_each!(
    max_period_score_refuses_and_writes_nothing,
    LIMITS,
    |league, clock| {
        for (i, v) in [100, 100].into_iter().enumerate() {
            clock.advance(Duration::seconds(30));
            league
                .submit("a", v, rid(&format!("ok{i}")))
                .await
                .expect("within");
        }
        clock.advance(Duration::seconds(30));
        let refused = league.submit("a", 51, rid("over")).await;
        match &refused {
            Err(Error::Input(InputError::LimitExceeded { got, .. })) => assert_eq!(*got, 251),
            other => panic!("{other:?}"),
        }
        assert_eq!(limited(refused).0, Limit::MaxPeriodScore);
        // A retry of the refused request is refused again, never answered as applied.
        assert_eq!(
            limited(league.submit("a", 51, rid("over")).await).0,
            Limit::MaxPeriodScore
        );
        assert_eq!(score(&league, "a").await, Some(200));
        let s = league
            .submit("a", 50, rid("over"))
            .await
            .expect("to the limit");
        assert!(s.applied);
        assert_eq!(s.score, 250);
        // Another player's period score is their own.
        let b = league.submit("b", 100, SubmitOptions::default()).await;
        assert_eq!(b.expect("b").score, 100);
    }
);

on_each!(rate_refuses_then_refills, LIMITS, |league, clock| {
    for i in 0..3 {
        let s = league
            .submit("a", 1, rid(&format!("r{i}")))
            .await
            .expect("burst");
        assert!(s.applied);
    }
    let (limit, wait) = limited(league.submit("a", 1, rid("r3")).await);
    assert_eq!((limit, wait), (Limit::Rate, Some(20_000)));
    // A retry of an applied request is answered as it was, whatever the rate.
    let again = league.submit("a", 1, rid("r0")).await.expect("duplicate");
    assert!(!again.applied);
    assert_eq!(score(&league, "a").await, Some(3));
    // The refused request was not remembered, and is still refused a moment later.
    clock.advance(Duration::seconds(19));
    assert_eq!(
        limited(league.submit("a", 1, rid("r3")).await),
        (Limit::Rate, Some(1000))
    );
    clock.advance(Duration::seconds(1));
    let s = league.submit("a", 1, rid("r3")).await.expect("refilled");
    assert!(s.applied);
    assert_eq!(s.score, 4);
    assert_eq!(
        limited(league.submit("a", 1, rid("r4")).await).0,
        Limit::Rate
    );
    // Another player has a bucket of their own.
    league
        .submit("b", 1, SubmitOptions::default())
        .await
        .expect("b");
    // A minute later a whole burst again.
    clock.advance(Duration::seconds(60));
    for i in 0..3 {
        league
            .submit("a", 1, rid(&format!("s{i}")))
            .await
            .expect("burst");
    }
    assert_eq!(score(&league, "a").await, Some(7));
});

on_each!(a_batch_answers_limits_per_item, LIMITS, |league, clock| {
    let items: Vec<BatchItem> = [("a", 1), ("a", 500), ("b", 5), ("a", 2), ("a", 3), ("a", 4)]
        .into_iter()
        .map(|(p, v)| BatchItem::new(p, v))
        .collect();
    let out = league.submit_many(&items).await;
    assert_eq!(out.len(), 6);
    assert_eq!(out[0].as_ref().expect("a 1").score, 1);
    assert!(matches!(
        &out[1],
        Err(Error::Input(InputError::LimitExceeded {
            limit: Limit::MaxValue,
            ..
        }))
    ));
    assert_eq!(out[2].as_ref().expect("b 5").score, 5);
    assert_eq!(out[3].as_ref().expect("a 2").score, 3);
    assert_eq!(out[4].as_ref().expect("a 3").score, 6);
    assert!(matches!(
        &out[5],
        Err(Error::Input(InputError::LimitExceeded {
            limit: Limit::Rate,
            retry_after_ms: Some(_),
            ..
        }))
    ));
    assert_eq!(score(&league, "a").await, Some(6));
    let _ = clock;
});

on_each!(a_season_without_limits_has_none, "", |league, clock| {
    assert!(league.season().limits.is_empty());
    for i in 0..20 {
        league
            .submit("a", 5000, rid(&format!("r{i}")))
            .await
            .expect("no limit");
    }
    assert_eq!(score(&league, "a").await, Some(100_000));
    let _ = clock;
});

on_each!(
    adjust_changes_a_score_exactly_and_audits_it,
    LIMITS,
    |league, clock| {
        let op = league.operator();
        let actor = Actor::new("ops").expect("actor");
        league
            .submit("a", 100, SubmitOptions::default())
            .await
            .expect("a");
        clock.advance(Duration::seconds(10));
        league
            .submit("b", 90, SubmitOptions::default())
            .await
            .expect("b");
        clock.advance(Duration::seconds(10));
        // Limits do not apply: above max_period_score, by more than max_value.
        let done = op
            .adjust(&actor, "b", Adjustment::By(400), "lost match result")
            .await
            .expect("by");
        assert_eq!((done.before, done.after, done.bracket), (90, 490, 1));
        // Set: "a" back to 490 ties with "b", and ranks first: its score keeps the time it
        // was reached (before b's), whatever the adjustment's time.
        op.adjust(&actor, "a", Adjustment::Set(490), "support ticket 7")
            .await
            .expect("set");
        let order: Vec<(String, u64)> = league
            .standings("bronze", 1, None, 0, 10)
            .await
            .expect("standings")
            .entries
            .into_iter()
            .map(|e| (e.player, e.score))
            .collect();
        assert_eq!(order, [("a".to_owned(), 490), ("b".to_owned(), 490)]);
        // A never-scored entry takes the adjustment's time: after both.
        league.join("c", None).await.expect("join");
        op.adjust(&actor, "c", Adjustment::By(490), "goodwill")
            .await
            .expect("idle");
        clock.advance(Duration::seconds(10));
        league
            .submit("d", 100, SubmitOptions::default())
            .await
            .expect("d");
        op.adjust(&actor, "d", Adjustment::Set(490), "late")
            .await
            .expect("d");
        let players: Vec<String> = league
            .standings("bronze", 1, None, 0, 10)
            .await
            .expect("standings")
            .entries
            .into_iter()
            .map(|e| e.player)
            .collect();
        assert_eq!(players, ["a", "b", "c", "d"]);
        let audit = op
            .audit(&AuditQuery::default().player("b"))
            .await
            .expect("audit");
        assert_eq!(audit.len(), 1);
        assert_eq!(audit[0].action, "adjust");
        assert_eq!(audit[0].actor, "ops");
        assert_eq!(audit[0].reason.as_deref(), Some("lost match result"));
        assert_eq!(audit[0].details["before"], 90);
        assert_eq!(audit[0].details["after"], 490);
        assert_eq!(audit[0].details["by"], 400);
    }
);

on_each!(
    a_refused_adjustment_writes_nothing,
    LIMITS,
    |league, clock| {
        let op = league.operator();
        let actor = Actor::new("ops").expect("actor");
        league
            .submit("a", 100, SubmitOptions::default())
            .await
            .expect("a");
        let err = |r: Result<leaguekit::operator::AdjustOutcome, Error>| match r {
            Err(Error::Input(i)) => i,
            other => panic!("expected a refusal, got {other:?}"),
        };
        assert!(matches!(
            err(op.adjust(&actor, "nobody", Adjustment::By(1), "x").await),
            InputError::NotPlaced { .. }
        ));
        assert!(matches!(
            err(op.adjust(&actor, "a", Adjustment::By(-101), "x").await),
            InputError::Score(_)
        ));
        assert!(matches!(
            err(op
                .adjust(&actor, "a", Adjustment::Set(1_000_001), "x")
                .await),
            InputError::Score(_)
        ));
        assert!(matches!(
            err(op.adjust(&actor, "a", Adjustment::Set(-1), "x").await),
            InputError::Score(_)
        ));
        assert!(
            err(op.adjust(&actor, "a", Adjustment::By(1), " ").await)
                .to_string()
                .contains("reason")
        );
        assert_eq!(score(&league, "a").await, Some(100));
        assert!(
            op.audit(&AuditQuery::default())
                .await
                .expect("audit")
                .is_empty()
        );
        // The store refuses a closed bracket, and the next day the player is not placed.
        let now = clock.now().timestamp_millis();
        let period = league.period_at(None).expect("period");
        let keys = league.keys().bracket(period.id, "bronze", 1);
        let packing = league.season().packing;
        let closed = TimeCheck::new(Now::At(now), now, now - 1000, now - 1, 0);
        let adjust = Adjust::new(
            "a",
            Adjustment::By(1),
            (packing.max_score(), packing.span()),
            0,
            closed,
        );
        assert_eq!(
            league.store().adjust(&keys, &adjust).await.expect("store"),
            Adjusted::Closed
        );
        assert_eq!(score(&league, "a").await, Some(100));
        clock.advance(Duration::days(1));
        assert!(matches!(
            err(op.adjust(&actor, "a", Adjustment::By(1), "x").await),
            InputError::NotPlaced { .. }
        ));
    }
);

/// On Redis, the rate's state is one hash in the bracket's slot that expires a window
/// after its last write; a season without limits writes no such key.
#[tokio::test]
async fn the_rate_state_lives_in_the_bracket_and_expires() {
    let mut con = redis::Client::open(common::redis_url())
        .expect("client")
        .get_multiplexed_async_connection()
        .await
        .expect("connect");
    for (limits, expect) in [(LIMITS, true), ("", false)] {
        let clock = ManualClock::new(t("2026-01-05T12:00:00Z"));
        let prefix = common::unique_prefix("ratekey");
        let league = League::with_clock(
            season(&prefix, limits),
            common::redis_store().await,
            Arc::new(clock.clone()),
        );
        league
            .submit("a", 1, SubmitOptions::default())
            .await
            .expect("a");
        let period = league.period_at(None).expect("period");
        let key = league.keys().bracket(period.id, "bronze", 1).rate();
        let ttl: i64 = redis::cmd("PTTL")
            .arg(&key)
            .query_async(&mut con)
            .await
            .expect("pttl");
        if expect {
            assert!((60_000..=120_000).contains(&ttl), "{key}: {ttl}");
        } else {
            assert_eq!(ttl, -2, "{key} exists without limits");
        }
    }
}

on_each!(
    a_first_update_beyond_the_period_score_places_nobody,
    "[limits]\nmax_period_score = 50\n",
    |league, clock| {
        let r = league.submit("a", 60, SubmitOptions::default()).await;
        assert_eq!(limited(r), (Limit::MaxPeriodScore, None));
        assert_eq!(league.player("a", None).await.expect("view").bracket, None);
        league
            .submit("a", 50, SubmitOptions::default())
            .await
            .expect("50");
        let r = league.submit("a", 1, SubmitOptions::default()).await;
        assert_eq!(limited(r).0, Limit::MaxPeriodScore);
        league
            .submit("a", -10, SubmitOptions::default())
            .await
            .expect("down");
        assert_eq!(score(&league, "a").await, Some(40));
        let _ = clock;
    }
);
