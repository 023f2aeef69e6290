//! Period lifecycle on every store (memory; Redis as one server, a three-master
//! cluster, and TLS with an ACL user): closing, promotions and demotions through every
//! tier, exactly-once rewards, catch-up, on-the-spot outcomes, the outcome log.

use crate::common;

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use leaguekit::rollover::RolloverOptions;
use leaguekit::{BatchItem, SubmitOptions};
use leaguekit::{Clock, Error, InputError, League, ManualClock, MemoryStore, Season, Store};

fn t(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s)
        .expect("time")
        .with_timezone(&Utc)
}

/// Daily periods from 2026-01-05 (UTC); brackets of 4; three tiers.
fn season_text(prefix: &str, join: &str, idle: &str) -> String {
    format!(
        r#"
name = "roll"
key_prefix = "{prefix}"
[schedule]
timezone = "UTC"
period = "daily"
start = "2026-01-05T00:00:00Z"
[brackets]
size = 4
join = "{join}"
[scoring]
max_score = 1000
[idle]
policy = "{idle}"
[retention]
periods = 3
[[tiers]]
name = "bronze"
promote = 1
demote = 0
rewards = [{{ ranks = "1", grant = "gems:100" }}, {{ ranks = "2", grant = "gems|10 {{odd}}" }}]
[[tiers]]
name = "silver"
promote = 1
demote = 1
rewards = [{{ ranks = "1", grant = "gems:500" }}]
[[tiers]]
name = "gold"
promote = 0
demote = "25%"
"#
    )
}

/// Day `d` (0-based) at `hh:mm`.
fn day(d: i64, hh: i64) -> DateTime<Utc> {
    t("2026-01-05T00:00:00Z") + Duration::days(d) + Duration::hours(hh)
}

/// When the period of day `d - 1` may close: the start of day `d` plus the default
/// `[clock] max_skew` (5 s), by the league clock.
fn closable(d: i64) -> DateTime<Utc> {
    day(d, 0) + Duration::seconds(5)
}

/// Time passes as events arrive: moves the league clock forward to `at` (never back)
/// and returns `at`.
fn now(clock: &ManualClock, at: DateTime<Utc>) -> DateTime<Utc> {
    if clock.now() < at {
        clock.set(at);
    }
    at
}

macro_rules! on_both {
    // One Redis form: `$store` is the `common` function that connects to it.
    (@redis $form:ident, $store:ident, $name:ident, ($join:expr, $idle:expr), |$league:ident, $clock:ident| $body:block) => {
        #[tokio::test]
        async fn $form() {
            let $clock = ManualClock::new(day(0, 1));
            let prefix = common::unique_prefix(stringify!($name));
            let season = Season::from_toml(&season_text(&prefix, $join, $idle), "roll.toml")
                .expect("season");
            let $league = Arc::new(League::with_clock(
                season,
                common::$store().await,
                Arc::new($clock.clone()),
            ));
            $body
        }
    };
    ($name:ident, ($join:expr, $idle:expr), |$league:ident, $clock:ident| $body:block) => {
        mod $name {
            use super::*;

            #[tokio::test]
            async fn memory() {
                let $clock = ManualClock::new(day(0, 1));
                let store = MemoryStore::with_clock(Arc::new($clock.clone()));
                let season = Season::from_toml(&season_text("lkm", $join, $idle), "roll.toml")
                    .expect("season");
                let $league = Arc::new(League::with_clock(season, store, Arc::new($clock.clone())));
                $body
            }

            on_both!(@redis redis, redis_store, $name, ($join, $idle), |$league, $clock| $body);
            on_both!(@redis cluster, cluster_store, $name, ($join, $idle), |$league, $clock| $body);
            on_both!(@redis tls, tls_store, $name, ($join, $idle), |$league, $clock| $body);
        }
    };
}

async fn score<S: Store>(l: &League<S>, clock: &ManualClock, p: &str, v: i64, at: DateTime<Utc>) {
    l.submit(p, v, SubmitOptions::default().at(now(clock, at)))
        .await
        .expect("submit");
}

async fn tier_of<S: Store>(
    l: &League<S>,
    clock: &ManualClock,
    p: &str,
    at: DateTime<Utc>,
) -> String {
    l.join(p, Some(now(clock, at))).await.expect("join").tier
}

on_both!(
    close_promote_reward_claim,
    ("on_first_score", "stay"),
    |league, clock| {
        for (i, p) in ["a", "b", "c", "d"].iter().enumerate() {
            score(&league, &clock, p, 40 - 10 * i as i64, day(0, 2)).await;
        }
        clock.set(day(1, 0) + Duration::seconds(5));
        let report = league
            .rollover(None, RolloverOptions::default())
            .await
            .expect("rollover");
        assert_eq!(report.closed.len(), 1);
        let p1 = &report.closed[0];
        assert_eq!(
            (
                p1.period,
                p1.brackets,
                p1.totals.players,
                p1.totals.promoted,
                p1.totals.demoted,
                p1.totals.stayed,
                p1.totals.rewards
            ),
            (1, 1, 4, 1, 0, 3, 2)
        );
        // The closed period refuses updates and keeps its standings.
        let e = league
            .submit("b", 5, SubmitOptions::default().at(day(0, 3)))
            .await
            .unwrap_err();
        assert!(
            matches!(e, Error::Input(InputError::PeriodClosed { period: 1 })),
            "{e:?}"
        );
        let s = league
            .standings("bronze", 1, Some(1), 0, 10)
            .await
            .expect("standings");
        assert_eq!(
            s.entries.iter().map(|e| e.score).collect::<Vec<_>>(),
            [40, 30, 20, 10]
        );
        // Late joins into the closed period are refused too.
        let e = league.join("late", Some(day(0, 5))).await.unwrap_err();
        assert!(
            matches!(e, Error::Input(InputError::PeriodClosed { .. })),
            "{e:?}"
        );
        // Next period: a is in silver, the rest stay in bronze.
        assert_eq!(tier_of(&league, &clock, "a", day(1, 1)).await, "silver");
        assert_eq!(tier_of(&league, &clock, "b", day(1, 1)).await, "bronze");
        // Rewards: pending until claimed, claimed exactly once.
        let pending = league.rewards("b").await.expect("rewards");
        assert_eq!(pending.len(), 1);
        assert_eq!(pending[0].grant, "gems|10 {odd}");
        let first = league.claim("b", Some("claim-1")).await.expect("claim");
        assert_eq!(first, pending);
        let again = league
            .claim("b", Some("claim-1"))
            .await
            .expect("claim again");
        assert_eq!(again, first);
        assert!(
            league
                .claim("b", None)
                .await
                .expect("claim anew")
                .is_empty()
        );
        assert!(league.rewards("b").await.expect("rewards").is_empty());
        // Re-running the rollover changes nothing and grants nothing again.
        let again = league
            .rollover(None, RolloverOptions::default())
            .await
            .expect("again");
        assert!(again.closed.is_empty());
        assert!(league.rewards("b").await.expect("rewards").is_empty());
        let last = league
            .last_outcome("a")
            .await
            .expect("last")
            .expect("has one");
        assert_eq!(
            (
                last.period,
                last.rank,
                last.next_tier.as_str(),
                last.reward.as_deref()
            ),
            (1, 1, "silver", Some("gems:100"))
        );
    }
);

on_both!(
    on_the_spot_outcome_matches_rollover,
    ("on_first_score", "stay"),
    |league, clock| {
        for (i, p) in ["a", "b", "c"].iter().enumerate() {
            score(&league, &clock, p, 10 + i as i64, day(0, 2)).await;
        }
        // c won period 1; it plays period 2 before any rollover ran.
        clock.set(day(1, 3));
        let s = league
            .submit("c", 1, SubmitOptions::default().at(day(1, 3)))
            .await
            .expect("submit");
        assert_eq!(s.tier, "silver");
        // Period 1 is now closing: its brackets refuse updates.
        let e = league
            .submit("a", 1, SubmitOptions::default().at(day(0, 23)))
            .await
            .unwrap_err();
        assert!(
            matches!(e, Error::Input(InputError::PeriodClosed { .. })),
            "{e:?}"
        );
        let report = league
            .rollover(None, RolloverOptions::default())
            .await
            .expect("rollover");
        assert_eq!(report.closed[0].totals.promoted, 1);
        assert_eq!(league.rewards("c").await.expect("rewards").len(), 1);
        assert_eq!(tier_of(&league, &clock, "b", day(1, 4)).await, "bronze");
    }
);

on_both!(
    through_every_tier_with_catch_up,
    ("on_first_score", "stay"),
    |league, clock| {
        // "ace" always wins; "dud" always loses. Four players per period.
        let mut expect_ace = ["bronze", "silver", "gold", "gold", "gold"].iter();
        for d in 0..5 {
            let at = day(d, 2);
            let mut items =
                vec![BatchItem::new("ace", 900).with_options(SubmitOptions::default().at(at))];
            for (i, p) in ["x", "y", "dud"].iter().enumerate() {
                items.push(
                    BatchItem::new(*p, 100 - 40 * i as i64)
                        .with_options(SubmitOptions::default().at(at)),
                );
            }
            now(&clock, at);
            let out = league.submit_many(&items).await;
            let ace = out[0].as_ref().expect("ace");
            assert_eq!(ace.tier, *expect_ace.next().expect("tier"), "day {d}");
            // Only every second boundary has a rollover: the joins above closed the
            // previous period's brackets on the spot, and the rollover catches up.
            if d % 2 == 1 {
                clock.set(closable(d + 1));
                let r = league
                    .rollover(None, RolloverOptions::default())
                    .await
                    .expect("rollover");
                assert_eq!(r.closed.len(), 2, "day {d}");
            }
        }
        // Boundaries missed entirely: nothing ran while periods 5 to 8 ended.
        clock.set(closable(8));
        let r = league
            .rollover(None, RolloverOptions::default())
            .await
            .expect("catch up");
        // Period 5 had players; 6 to 8 had nobody: closed by the mark alone.
        assert_eq!(r.closed.iter().map(|p| p.period).collect::<Vec<_>>(), [5]);
        assert_eq!((r.empty, r.closed_through), (3, 8));
        assert_eq!(r.closed[0].totals.players, 4);
        let log = league
            .outcomes(7, None, 10)
            .await
            .expect("an empty period is closed");
        assert!(log.is_empty());
    }
);

on_both!(
    idle_and_skipped_drop_a_tier,
    ("explicit", "drop_one_tier"),
    |league, clock| {
        // Period 1: p and q play; p wins and goes to silver.
        for p in ["p", "q"] {
            league
                .join(p, Some(now(&clock, day(0, 1))))
                .await
                .expect("join");
        }
        score(&league, &clock, "p", 50, day(0, 2)).await;
        score(&league, &clock, "q", 10, day(0, 2)).await;
        // Period 2: p joins silver but never scores (idle) → back to bronze.
        assert_eq!(tier_of(&league, &clock, "p", day(1, 1)).await, "silver");
        league
            .join("s", Some(now(&clock, day(1, 1))))
            .await
            .expect("join");
        clock.set(closable(2));
        league
            .rollover(None, RolloverOptions::default())
            .await
            .expect("rollover");
        let last = league.last_outcome("p").await.expect("last").expect("some");
        assert_eq!((last.period, last.next_tier.as_str()), (2, "bronze"));
        // r reaches silver in period 3, skips periods 4 and 5, and returns in 6: one
        // tier per skipped period, not below the bottom.
        league
            .join("r", Some(now(&clock, day(2, 1))))
            .await
            .expect("join");
        score(&league, &clock, "r", 5, day(2, 2)).await;
        assert_eq!(tier_of(&league, &clock, "r", day(5, 1)).await, "bronze");
        // p, not placed in period 3, is shown the tier they would join: bronze.
        let v = league.player("p", Some(3)).await.expect("view");
        assert_eq!((v.tier.as_str(), v.bracket), ("bronze", None));
    }
);

on_both!(
    outcome_log_resumes_from_cursor,
    ("on_first_score", "stay"),
    |league, clock| {
        let items: Vec<BatchItem> = (0..11)
            .map(|i| {
                BatchItem::new(format!("p{i:02}"), 10 + i)
                    .with_options(SubmitOptions::default().at(day(0, 2)))
            })
            .collect();
        now(&clock, day(0, 2));
        league.submit_many(&items).await;
        let e = league.outcomes(1, None, 100).await.unwrap_err();
        assert!(e.to_string().contains("not closed"), "{e}");
        clock.set(closable(1));
        league
            .rollover(None, RolloverOptions::default())
            .await
            .expect("rollover");
        let all = league.outcomes(1, None, 1000).await.expect("all");
        assert_eq!(all.len(), 11);
        let mut paged = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let page = league
                .outcomes(1, cursor.as_deref(), 3)
                .await
                .expect("page");
            if page.is_empty() {
                break;
            }
            cursor = page.last().map(|r| r.cursor.clone());
            paged.extend(page);
        }
        assert_eq!(paged, all);
        let order: Vec<_> = all.iter().map(|r| (r.bracket, r.rank)).collect();
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(order, sorted);
        assert!(league.outcomes(1, Some("x.y"), 3).await.is_err());
    }
);

on_both!(
    dry_run_writes_nothing,
    ("on_first_score", "stay"),
    |league, clock| {
        score(&league, &clock, "a", 10, day(0, 2)).await;
        score(&league, &clock, "b", 20, day(0, 2)).await;
        // A dry run may look ahead of the league clock (period 1 is still open).
        clock.set(day(0, 20));
        let dry = league
            .rollover(Some(closable(1)), RolloverOptions::default().dry_run(true))
            .await
            .expect("dry");
        assert_eq!(dry.closed[0].totals.promoted, 1);
        // Still open: an update in period 1 is accepted and changes the result.
        score(&league, &clock, "a", 50, day(0, 21)).await;
        assert!(league.rewards("b").await.expect("rewards").is_empty());
        // A real rollover may not look ahead: it is refused and closes nothing.
        let e = league
            .rollover(Some(closable(1)), RolloverOptions::default())
            .await
            .unwrap_err();
        assert!(
            matches!(e, Error::Input(InputError::FutureTime { .. })),
            "{e:?}"
        );
        clock.set(closable(1));
        let real = league
            .rollover(None, RolloverOptions::default())
            .await
            .expect("real");
        assert_eq!(real.closed[0].totals.players, 2);
        assert_eq!(
            league
                .last_outcome("a")
                .await
                .expect("last")
                .expect("a")
                .rank,
            1
        );
    }
);

on_both!(
    concurrent_rollovers_grant_once,
    ("on_first_score", "stay"),
    |league, clock| {
        let items: Vec<BatchItem> = (0..40)
            .map(|i| {
                BatchItem::new(format!("p{i:02}"), 1 + i)
                    .with_options(SubmitOptions::default().at(day(0, 2)))
            })
            .collect();
        now(&clock, day(0, 2));
        league.submit_many(&items).await;
        clock.set(closable(1));
        let mut tasks = Vec::new();
        for _ in 0..4 {
            let l = league.clone();
            tasks.push(tokio::spawn(async move {
                l.rollover(None, RolloverOptions::default()).await
            }));
        }
        let mut reports = Vec::new();
        for task in tasks {
            reports.push(task.await.expect("task").expect("rollover"));
        }
        // Each period is reported by whoever closed it; all agree on the figures.
        let figures: Vec<_> = reports
            .iter()
            .flat_map(|r| {
                r.closed
                    .iter()
                    .map(|p| (p.totals.players, p.totals.promoted, p.totals.rewards))
            })
            .collect();
        assert!(!figures.is_empty());
        assert!(figures.iter().all(|f| *f == (40, 10, 20)), "{figures:?}");
        let mut granted = 0;
        for i in 0..40 {
            granted += league
                .rewards(&format!("p{i:02}"))
                .await
                .expect("rewards")
                .len();
        }
        assert_eq!(granted, 20);
    }
);

/// Redis only: closed periods expire through TTLs (retention), and a period closed
/// late keeps its data for the retention counted from now, not from the calendar.
#[tokio::test]
async fn closed_keys_carry_retention_ttls() {
    let prefix = common::unique_prefix("ttl");
    let season = Season::from_toml(&season_text(&prefix, "on_first_score", "stay"), "roll.toml")
        .expect("season");
    let clock = ManualClock::new(day(0, 1));
    let league = League::with_clock(season, common::redis_store().await, Arc::new(clock.clone()));
    score(&league, &clock, "a", 10, day(0, 2)).await;
    clock.set(closable(1));
    league
        .rollover(None, RolloverOptions::default())
        .await
        .expect("rollover");
    let client = redis::Client::open(common::redis_url()).expect("client");
    let mut con = client
        .get_multiplexed_async_connection()
        .await
        .expect("connect");
    let keys = league.keys();
    let bracket = keys.bracket(1, "bronze", 1);
    // Retention 3 daily periods after period 1 ends (the clock is 5 s past its end).
    for key in [
        &bracket.board,
        &bracket.meta,
        &bracket.outcomes,
        &keys.period(1).meta,
    ] {
        let ttl: i64 = redis::cmd("TTL")
            .arg(key)
            .query_async(&mut con)
            .await
            .expect("ttl");
        assert!(
            (3 * 86_400 - 60..=3 * 86_400).contains(&ttl),
            "{key}: {ttl}"
        );
    }
    // The lease is gone; the player's rewards live as long as the player's records
    // (retention.player_ttl, 180 days by default, from the grant).
    let lease: i64 = redis::cmd("EXISTS")
        .arg(&bracket.lease)
        .query_async(&mut con)
        .await
        .expect("exists");
    assert_eq!(lease, 0);
    let rewards: i64 = redis::cmd("TTL")
        .arg(keys.player("a").rewards())
        .query_async(&mut con)
        .await
        .expect("ttl");
    assert!(
        (179 * 86_400..=180 * 86_400).contains(&rewards),
        "rewards ttl {rewards}"
    );
}

/// A bracket larger than one HSET chunk in record_outcomes.lua (1000 pairs), on both
/// stores: every player gets an outcome, the export order is by rank.
async fn big_bracket<S: Store>(league: League<S>, clock: ManualClock) {
    let items: Vec<BatchItem> = (0..1500)
        .map(|i| {
            BatchItem::new(format!("p{i:04}"), 1 + i % 700)
                .with_options(SubmitOptions::default().at(day(0, 2)))
        })
        .collect();
    now(&clock, day(0, 2));
    for chunk in items.chunks(500) {
        for r in league.submit_many(chunk).await {
            r.expect("submit");
        }
    }
    clock.set(closable(1));
    let r = league
        .rollover(None, RolloverOptions::default())
        .await
        .expect("rollover");
    assert_eq!(
        (r.closed[0].brackets, r.closed[0].totals.players),
        (1, 1500)
    );
    let all = league.outcomes(1, None, 5000).await.expect("outcomes");
    assert_eq!(all.len(), 1500);
    assert!(all.windows(2).all(|w| w[0].rank + 1 == w[1].rank));
    assert_eq!(all[0].score, 700);
}

fn big_season(prefix: &str) -> Season {
    let text = season_text(prefix, "on_first_score", "stay").replace("size = 4", "size = 2000");
    Season::from_toml(&text, "big.toml").expect("season")
}

#[tokio::test]
async fn big_bracket_memory() {
    let clock = ManualClock::new(day(0, 1));
    let store = MemoryStore::with_clock(Arc::new(clock.clone()));
    big_bracket(
        League::with_clock(big_season("lkm"), store, Arc::new(clock.clone())),
        clock,
    )
    .await;
}

#[tokio::test]
async fn big_bracket_redis() {
    let clock = ManualClock::new(day(0, 1));
    let season = big_season(&common::unique_prefix("big"));
    big_bracket(
        League::with_clock(season, common::redis_store().await, Arc::new(clock.clone())),
        clock,
    )
    .await;
}

on_both!(
    the_last_result_comes_with_the_next_placement,
    ("on_first_score", "stay"),
    |league, clock| {
        // A brand-new player is told there is nothing before: no result, no rewards.
        let first = league
            .submit("a", 40, SubmitOptions::default().at(now(&clock, day(0, 2))))
            .await
            .expect("first score");
        assert_eq!(
            (first.last.as_ref(), first.pending_rewards.as_deref()),
            (None, Some(&[][..]))
        );
        // Later replies of the period say nothing more.
        let again = league
            .submit("a", 1, SubmitOptions::default().at(now(&clock, day(0, 2))))
            .await
            .expect("second score");
        assert_eq!((again.last, again.pending_rewards), (None, None));
        for (i, p) in ["b", "c", "d"].iter().enumerate() {
            score(&league, &clock, p, 30 - 10 * i as i64, day(0, 2)).await;
        }
        // No rollover ran: the first placement of day 1 closes a's bracket on the spot
        // and tells a the result, with the reward just granted.
        clock.set(closable(1));
        let placed = league
            .join("a", Some(now(&clock, day(1, 1))))
            .await
            .expect("join day 1");
        assert_eq!(placed.tier, "silver");
        let last = placed.last.expect("the last result, once");
        assert_eq!(
            (
                last.period,
                last.tier.as_str(),
                last.rank,
                last.score,
                last.next_tier.as_str()
            ),
            (1, "bronze", 1, 41, "silver")
        );
        assert_eq!(
            serde_json::to_value(last.outcome).expect("json"),
            serde_json::json!("promoted")
        );
        assert_eq!(last.reward.as_deref(), Some("gems:100"));
        let pending = placed.pending_rewards.expect("pending rewards, once");
        assert_eq!(
            pending.iter().map(|r| r.grant.as_str()).collect::<Vec<_>>(),
            ["gems:100"]
        );
        // Joining again is the same placement, without the news.
        let repeat = league
            .join("a", Some(now(&clock, day(1, 2))))
            .await
            .expect("join again");
        assert_eq!(
            (repeat.bracket, repeat.last, repeat.pending_rewards),
            (placed.bracket, None, None)
        );
        // A first score is a placement too: b (second, "gems|10 {odd}") learns it there.
        let b = league
            .submit("b", 5, SubmitOptions::default().at(now(&clock, day(1, 3))))
            .await
            .expect("b's first score of day 1");
        let last = b.last.expect("b's last result");
        assert_eq!(
            (last.rank, last.reward.as_deref()),
            (2, Some("gems|10 {odd}"))
        );
        assert_eq!(b.pending_rewards.map(|r| r.len()), Some(1));
        // A claimed reward is no longer pending at the next placement; the result of
        // the last period played is still told after a skipped period.
        league.claim("b", None).await.expect("claim");
        clock.set(closable(3));
        let later = league
            .join("b", Some(now(&clock, day(3, 1))))
            .await
            .expect("join day 3");
        let last = later.last.expect("the result of day 1");
        assert_eq!((last.period, last.rank), (2, 1));
        assert_eq!(
            later.pending_rewards.map(|r| r.len()),
            Some(1),
            "day 1's reward for rank 1"
        );
        // And the library and the player command still show it at any time.
        let shown = league.last_outcome("b").await.expect("last outcome");
        assert_eq!(shown.map(|o| o.period), Some(2));
    }
);

/// The same league under an edited season file (same store, same key prefix).
fn edited<S: Store + Clone>(
    league: &League<S>,
    clock: &ManualClock,
    edit: impl Fn(String) -> String,
) -> League<S> {
    let text = season_text(&league.season().key_prefix, "on_first_score", "stay");
    let edited = edit(text);
    let season = Season::from_toml(&edited, "edited.toml").expect("edited season");
    League::with_clock(season, league.store().clone(), Arc::new(clock.clone()))
}

on_both!(
    season_edits_between_periods,
    ("on_first_score", "stay"),
    |league, clock| {
        for (i, p) in ["a", "b", "c", "d"].iter().enumerate() {
            score(&league, &clock, p, 40 - 10 * i as i64, day(0, 2)).await;
        }
        clock.set(closable(1));
        league
            .rollover(None, RolloverOptions::default())
            .await
            .expect("rollover of period 1");
        // The designer renames silver, promotes two from bronze, and adds a top tier.
        let next = edited(&league, &clock, |t| {
            t.replace(
                "name = \"silver\"",
                "name = \"argent\"\nrenamed_from = \"silver\"",
            )
            .replacen("promote = 1\ndemote = 0", "promote = 2\ndemote = 0", 1)
            .replace(
                "name = \"gold\"\npromote = 0",
                "name = \"gold\"\npromote = 1",
            ) + "[[tiers]]\nname = \"diamond\"\npromote = 0\ndemote = 1\n"
        });
        let edits = next.compare_with_live().await.expect("compare");
        assert!(edits.refused.is_empty(), "{edits:?}");
        let said = edits.changes.join("\n");
        for needle in [
            "tier \"silver\" is renamed \"argent\"",
            "tier \"bronze\": promote 1 -> 2",
            "new tier \"diamond\"",
            "tier \"gold\": promote 0 -> 1",
        ] {
            assert!(said.contains(needle), "{needle:?} in {said}");
        }
        assert_eq!(edits.running, 2);
        // a was promoted to silver: under the new file a is in argent.
        let a = next
            .join("a", Some(now(&clock, day(1, 1))))
            .await
            .expect("a joins");
        assert_eq!(a.tier, "argent");
        assert_eq!(a.last.map(|l| l.next_tier), Some("silver".to_owned()));
        score(&next, &clock, "a", 5, day(1, 1)).await;
        for (i, p) in ["b", "c", "d"].iter().enumerate() {
            score(&next, &clock, p, 30 - 10 * i as i64, day(1, 2)).await;
        }
        // A file that loses the tier a is placed in is refused by the rollover, and
        // nothing is written; so is a changed bracket size.
        clock.set(closable(2));
        let lost = edited(&league, &clock, |t| {
            t.replace("[[tiers]]\nname = \"silver\"\npromote = 1\ndemote = 1\nrewards = [{ ranks = \"1\", grant = \"gems:500\" }]\n", "")
        });
        assert_eq!(lost.season().tiers.len(), 2, "the edit removed a tier");
        let refused = lost.compare_with_live().await.expect("compare");
        assert!(
            refused.refused.iter().any(|r| r
                .contains("tier \"argent\" has 0 player(s) placed in period 3 and 1 in period 2")),
            "{refused:?}"
        );
        let e = lost
            .rollover(None, RolloverOptions::default())
            .await
            .unwrap_err();
        assert!(e.to_string().contains("renamed_from = \"argent\""), "{e}");
        let resized = edited(&league, &clock, |t| t.replace("size = 4", "size = 5"));
        let e = resized
            .rollover(None, RolloverOptions::default())
            .await
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("brackets.size is 4 in the live league and 5"),
            "{e}"
        );
        assert_eq!(
            next.rollover(None, RolloverOptions::default().dry_run(true))
                .await
                .expect("dry run")
                .closed_through,
            1,
            "the refused runs closed nothing"
        );
        // The edited file closes period 2 with its new rules: two promoted from bronze.
        let report = next
            .rollover(None, RolloverOptions::default())
            .await
            .expect("rollover of period 2");
        let bronze = &report.closed[0].tiers["bronze"];
        assert_eq!(bronze.promoted, 2, "{report:?}");
        for (p, tier) in [
            ("a", "gold"),
            ("b", "argent"),
            ("c", "argent"),
            ("d", "bronze"),
        ] {
            let placed = next
                .join(p, Some(now(&clock, day(2, 1))))
                .await
                .expect("join");
            assert_eq!(placed.tier, tier, "{p}");
        }
    }
);
