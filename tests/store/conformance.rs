//! The shared conformance suite: every scenario runs on the embedded store and on
//! real Redis in each of the forms production uses: one server, a three-master Redis
//! Cluster (where batches span slots and nodes) and a TLS server with an ACL user (all
//! started by `scripts/test` or by the harness). Every form must behave the same.

use crate::common;

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use leaguekit::{BatchItem, SubmitOptions};
use leaguekit::{Error, InputError, League, ManualClock, MemoryStore, RedisStore, Season, Store};

const START: &str = "2026-01-05T00:00:00Z";

fn t(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s)
        .expect("test time")
        .with_timezone(&Utc)
}

/// A small season; `extra` is spliced into `[scoring]`/`[brackets]` by replacing
/// whole lines of the default text.
fn season_text(prefix: &str, mode: &str, size: u32, join: &str) -> String {
    format!(
        r#"
name = "conf"
key_prefix = "{prefix}"

[schedule]
timezone = "UTC"
period = "daily"
start = "{START}"

[brackets]
size = {size}
join = "{join}"

[scoring]
mode = "{mode}"
max_score = 1_000_000
time_resolution = "1s"
idempotency_window = "1h"

[profiles]
fields = ["name", "avatar"]
max_bytes = 64

[[tiers]]
name = "bronze"
promote = 1
demote = 0

[[tiers]]
name = "silver"
promote = 1
demote = 1

[[tiers]]
name = "gold"
promote = 0
demote = 1
"#
    )
}

fn season(prefix: &str, mode: &str, size: u32, join: &str) -> Season {
    Season::from_toml(&season_text(prefix, mode, size, join), "conformance.toml")
        .expect("test season is valid")
}

/// Runs `$body` with a league on each store: memory, redis, cluster and tls.
macro_rules! on_both {
    // One Redis form: `$store` is the `common` function that connects to it.
    (@redis $form:ident, $store:ident, $name:ident, ($mode:expr, $size:expr, $join:expr), |$league:ident, $clock:ident| $body:block) => {
        #[tokio::test]
        async fn $form() {
            let $clock = ManualClock::new(t("2026-01-05T12:00:00Z"));
            let store = common::$store().await;
            let prefix = common::unique_prefix(stringify!($name));
            let $league = Arc::new(League::with_clock(
                season(&prefix, $mode, $size, $join),
                store,
                Arc::new($clock.clone()),
            ));
            $body
        }
    };
    ($name:ident, |$league:ident, $clock:ident| $body:block) => {
        on_both!(
            $name,
            ("increment", 100, "on_first_score"),
            |$league, $clock| $body
        );
    };
    ($name:ident, ($mode:expr, $size:expr, $join:expr), |$league:ident, $clock:ident| $body:block) => {
        mod $name {
            use super::*;

            #[tokio::test]
            async fn memory() {
                let $clock = ManualClock::new(t("2026-01-05T12:00:00Z"));
                let store = MemoryStore::with_clock(Arc::new($clock.clone()));
                let $league = Arc::new(League::with_clock(
                    season("lkmem", $mode, $size, $join),
                    store,
                    Arc::new($clock.clone()),
                ));
                $body
            }

            on_both!(@redis redis, redis_store, $name, ($mode, $size, $join), |$league, $clock| $body);
            on_both!(@redis cluster, cluster_store, $name, ($mode, $size, $join), |$league, $clock| $body);
            on_both!(@redis tls, tls_store, $name, ($mode, $size, $join), |$league, $clock| $body);
        }
    };
}

async fn submit_at<S: Store>(l: &League<S>, p: &str, v: i64, at: &str) -> leaguekit::Submission {
    l.submit(p, v, SubmitOptions::default().at(t(at)))
        .await
        .expect("submit")
}

async fn order<S: Store>(l: &League<S>, tier: &str, bracket: u32) -> Vec<(String, u64)> {
    l.standings(tier, bracket, None, 0, 1000)
        .await
        .expect("standings")
        .entries
        .into_iter()
        .map(|e| (e.player, e.score))
        .collect()
}

fn input_err(e: Error) -> InputError {
    match e {
        Error::Input(i) => i,
        other => panic!("expected an input error, got {other:?}"),
    }
}

// The audit log: appends are idempotent, reads are ordered by time, and entries older
// than the retention go at the next append.
on_both!(audit_log_appends_once_in_order, |league, _clock| {
    use leaguekit::store::AuditStore;
    let season = league.keys().season();
    let store = league.store();
    for (at, entry) in [(3_000, "c"), (1_000, "a"), (2_000, "b"), (1_000, "a")] {
        store
            .append_audit(&season, at, entry, 0)
            .await
            .expect("append");
    }
    let all = store.audit_entries(&season, 0, 100).await.expect("read");
    assert_eq!(
        all,
        vec![
            (1_000, "a".into()),
            (2_000, "b".into()),
            (3_000, "c".into())
        ]
    );
    // An entry appended again keeps its first time.
    store
        .append_audit(&season, 5_000, "a", 0)
        .await
        .expect("again");
    assert_eq!(
        store.audit_entries(&season, 0, 100).await.expect("read")[0],
        (1_000, "a".into())
    );
    assert_eq!(
        store.audit_entries(&season, 2_000, 1).await.expect("since"),
        vec![(2_000, "b".into())]
    );
    // Retention: entries before 2,500 are dropped with the next append.
    store
        .append_audit(&season, 4_000, "d", 2_500)
        .await
        .expect("trim");
    assert_eq!(
        store.audit_entries(&season, 0, 100).await.expect("read"),
        vec![(3_000, "c".into()), (4_000, "d".into())]
    );
});

on_both!(order_score_then_time_then_id, |league, _clock| {
    // Same score reached at different times: earlier first.
    submit_at(&league, "late", 50, "2026-01-05T10:00:00Z").await;
    submit_at(&league, "early", 50, "2026-01-05T09:00:00Z").await;
    submit_at(&league, "top", 80, "2026-01-05T11:00:00Z").await;
    // Same score, same second: ascending player id bytes.
    submit_at(&league, "zed", 30, "2026-01-05T08:00:00Z").await;
    submit_at(&league, "amy", 30, "2026-01-05T08:00:00.900Z").await;
    let got = order(&league, "bronze", 1).await;
    let names: Vec<&str> = got.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(names, ["top", "early", "late", "amy", "zed"]);
});

on_both!(exact_increment_sum, |league, _clock| {
    let mut expected: i64 = 0;
    for (i, v) in [5, 17, -3, 999_000, -1000, 2].into_iter().enumerate() {
        expected += v;
        let s = league
            .submit(
                "p",
                v,
                SubmitOptions::default()
                    .at(t("2026-01-05T01:00:00Z") + Duration::seconds(i as i64)),
            )
            .await
            .expect("submit");
        assert_eq!(s.score as i64, expected);
        assert!(s.applied);
        assert_eq!(s.rank, Some(1));
    }
});

on_both!(
    best_keeps_maximum_and_time,
    ("best", 100, "on_first_score"),
    |league, _clock| {
        submit_at(&league, "a", 70, "2026-01-05T01:00:00Z").await;
        submit_at(&league, "b", 70, "2026-01-05T02:00:00Z").await;
        // A lower value later does not move a's time: a still ranks first.
        let s = submit_at(&league, "a", 10, "2026-01-05T03:00:00Z").await;
        assert_eq!(s.score, 70);
        // Equal to best later: unchanged, keeps the old (earlier) time.
        submit_at(&league, "a", 70, "2026-01-05T04:00:00Z").await;
        assert_eq!(
            order(&league, "bronze", 1).await,
            [("a".into(), 70), ("b".into(), 70)]
        );
        let s = submit_at(&league, "b", 71, "2026-01-05T05:00:00Z").await;
        assert_eq!((s.score, s.rank), (71, Some(1)));
    }
);

on_both!(
    set_replaces,
    ("set", 100, "on_first_score"),
    |league, _clock| {
        submit_at(&league, "a", 70, "2026-01-05T01:00:00Z").await;
        let s = submit_at(&league, "a", 3, "2026-01-05T02:00:00Z").await;
        assert_eq!(s.score, 3);
    }
);

on_both!(idempotent_retry, |league, _clock| {
    let opts = SubmitOptions::default()
        .request_id("req-1")
        .at(t("2026-01-05T01:00:00Z"));
    let first = league.submit("p", 10, opts.clone()).await.expect("first");
    assert!(first.applied);
    league
        .submit(
            "q",
            50,
            SubmitOptions::default().at(t("2026-01-05T01:30:00Z")),
        )
        .await
        .expect("q");
    let again = league.submit("p", 10, opts.clone()).await.expect("retry");
    assert!(!again.applied);
    assert_eq!((again.score, again.rank), (first.score, first.rank));
    let other = league
        .submit(
            "p",
            10,
            SubmitOptions::default()
                .request_id("req-2")
                .at(t("2026-01-05T02:00:00Z")),
        )
        .await
        .expect("second id");
    assert!(other.applied);
    assert_eq!(other.score, 20);
    assert_eq!(
        order(&league, "bronze", 1).await,
        [("q".into(), 50), ("p".into(), 20)]
    );
});

on_both!(idempotency_window_expires, |league, clock| {
    let opts = SubmitOptions::default()
        .request_id("r")
        .at(t("2026-01-05T12:00:00Z"));
    assert!(
        league
            .submit("p", 1, opts.clone())
            .await
            .expect("first")
            .applied
    );
    assert!(
        !league
            .submit("p", 1, opts.clone())
            .await
            .expect("retry")
            .applied
    );
    // Redis expiry follows the server's clock, so only the embedded store can be
    // moved past the window here; on Redis the key must still be present.
    clock.advance(Duration::hours(2));
    let later = league.submit("p", 1, opts).await.expect("after window");
    let memory = std::any::type_name_of_val(league.store()).contains("MemoryStore");
    assert_eq!(later.applied, memory);
});

on_both!(
    join_twice_same_bracket_and_split,
    ("increment", 3, "explicit"),
    |league, _clock| {
        let mut brackets = Vec::new();
        for i in 0..7 {
            let p = league.join(&format!("p{i}"), None).await.expect("join");
            assert_eq!(p.tier, "bronze");
            brackets.push(p.bracket);
        }
        assert_eq!(brackets, [1, 1, 1, 2, 2, 2, 3]);
        let again = league.join("p4", None).await.expect("rejoin");
        assert_eq!(again.bracket, 2);
        let counts = league.counts(None).await.expect("counts");
        assert_eq!((counts[0].players, counts[0].brackets), (7, 3));
        assert_eq!(counts[1].players, 0);
        // Every bracket holds at most its size, and joined players sit on the board.
        for b in 1..=3 {
            let s = league
                .standings("bronze", b, None, 0, 100)
                .await
                .expect("standings");
            assert!(s.players <= 3);
            assert!(s.entries.iter().all(|e| e.score == 0));
        }
    }
);

on_both!(
    concurrent_joins_one_player,
    ("increment", 5, "explicit"),
    |league, _clock| {
        let mut tasks = Vec::new();
        for _ in 0..32 {
            let l = league.clone();
            tasks.push(tokio::spawn(async move { l.join("same", None).await }));
        }
        let mut seen = std::collections::BTreeSet::new();
        for task in tasks {
            let p = task.await.expect("task").expect("join");
            seen.insert((p.tier, p.bracket));
        }
        assert_eq!(seen.len(), 1);
        let counts = league.counts(None).await.expect("counts");
        assert_eq!(counts[0].players, 1);
    }
);

on_both!(
    explicit_join_required,
    ("increment", 100, "explicit"),
    |league, _clock| {
        let e = league
            .submit("nobody", 5, SubmitOptions::default())
            .await
            .unwrap_err();
        assert!(matches!(input_err(e), InputError::NotJoined { .. }));
        league.join("nobody", None).await.expect("join");
        assert_eq!(
            league
                .submit("nobody", 5, SubmitOptions::default())
                .await
                .expect("submit")
                .score,
            5
        );
    }
);

on_both!(out_of_range_writes_nothing, |league, _clock| {
    submit_at(&league, "p", 10, "2026-01-05T01:00:00Z").await;
    let e = league
        .submit("p", -11, SubmitOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(input_err(e), InputError::Score(_)));
    let e = league
        .submit("p", 999_991, SubmitOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(input_err(e), InputError::Score(_)));
    // Hopeless values never place a player.
    let e = league
        .submit("fresh", 2_000_000, SubmitOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(input_err(e), InputError::Score(_)));
    assert_eq!(order(&league, "bronze", 1).await, [("p".into(), 10)]);
    assert_eq!(league.counts(None).await.expect("counts")[0].players, 1);
    // Edge: exactly max_score is fine.
    assert_eq!(
        league
            .submit("p", 999_990, SubmitOptions::default())
            .await
            .expect("max")
            .score,
        1_000_000
    );
});

on_both!(bad_input_is_typed_and_writes_nothing, |league, _clock| {
    for bad in ["", "a\nb", "tab\tid", &"x".repeat(65)] {
        let e = league
            .submit(bad, 1, SubmitOptions::default())
            .await
            .unwrap_err();
        assert!(
            matches!(input_err(e), InputError::PlayerId { .. }),
            "{bad:?}"
        );
        let e = league.join(bad, None).await.unwrap_err();
        assert!(matches!(input_err(e), InputError::PlayerId { .. }));
    }
    let e = league
        .submit("p", 1, SubmitOptions::default().request_id(""))
        .await
        .unwrap_err();
    assert!(matches!(input_err(e), InputError::RequestId { .. }));
    let e = league
        .submit(
            "p",
            1,
            SubmitOptions::default().at(t("2026-01-04T23:59:59Z")),
        )
        .await
        .unwrap_err();
    assert!(matches!(input_err(e), InputError::BeforeSeason { .. }));
    let e = league
        .standings("mithril", 1, None, 0, 10)
        .await
        .unwrap_err();
    assert!(input_err(e).to_string().contains("bronze, silver, gold"));
    let e = league
        .standings("bronze", 0, None, 0, 10)
        .await
        .unwrap_err();
    assert!(matches!(input_err(e), InputError::BadBracket { .. }));
    let e = league.standings("bronze", 1, None, 0, 0).await.unwrap_err();
    assert!(matches!(input_err(e), InputError::BadLimit { .. }));
    let e = league
        .standings("bronze", 1, Some(0), 0, 10)
        .await
        .unwrap_err();
    assert!(matches!(input_err(e), InputError::UnknownPeriod { .. }));
    assert_eq!(league.counts(None).await.expect("counts")[0].players, 0);
    // The longest valid id works.
    let long = "é".repeat(32);
    assert_eq!(
        league
            .submit(&long, 1, SubmitOptions::default())
            .await
            .expect("64 bytes")
            .score,
        1
    );
});

on_both!(hostile_ids_stay_apart, |league, _clock| {
    let ids = [
        "a}b", "{a}", "a:b", "a b", "a%7Db", "}", "{", "a", "a/b", "x}:{y",
    ];
    for (i, id) in ids.iter().enumerate() {
        league
            .submit(id, i as i64 + 1, SubmitOptions::default())
            .await
            .expect("submit");
        league
            .set_profile(id, &[("name".into(), format!("n{i}"))])
            .await
            .expect("profile");
    }
    for (i, id) in ids.iter().enumerate() {
        let v = league.player(id, None).await.expect("player");
        assert_eq!(v.score, Some(i as u64 + 1), "{id}");
        assert_eq!(
            league.profile(id).await.expect("profile")["name"],
            format!("n{i}")
        );
    }
    let s = league
        .standings("bronze", 1, None, 0, 100)
        .await
        .expect("standings");
    assert_eq!(s.players, ids.len() as u64);
});

on_both!(profiles_ride_with_standings, |league, _clock| {
    league
        .set_profile("p", &[("name".into(), "Pat".into())])
        .await
        .expect("before join");
    league
        .submit("p", 3, SubmitOptions::default())
        .await
        .expect("submit");
    league
        .submit("q", 4, SubmitOptions::default())
        .await
        .expect("submit");
    league
        .set_profile("q", &[("avatar".into(), "q.png".into())])
        .await
        .expect("after join");
    let s = league
        .standings("bronze", 1, None, 0, 10)
        .await
        .expect("standings");
    assert_eq!(s.entries[0].profile, serde_json::json!({"avatar": "q.png"}));
    assert_eq!(s.entries[1].profile, serde_json::json!({"name": "Pat"}));
    let e = league
        .set_profile("p", &[("email".into(), "x".into())])
        .await
        .unwrap_err();
    assert!(matches!(
        input_err(e),
        InputError::UnknownProfileField { .. }
    ));
    let e = league
        .set_profile("p", &[("name".into(), "x".repeat(100))])
        .await
        .unwrap_err();
    assert!(matches!(input_err(e), InputError::ProfileTooLarge { .. }));
    assert_eq!(league.profile("p").await.expect("profile")["name"], "Pat");
});

on_both!(around_and_paging, |league, _clock| {
    for i in 0..10 {
        submit_at(&league, &format!("p{i}"), 100 - i, "2026-01-05T01:00:00Z").await;
    }
    let w = league
        .around("p5", 2, None)
        .await
        .expect("around")
        .expect("placed");
    let names: Vec<_> = w
        .entries
        .iter()
        .map(|e| (e.rank, e.player.as_str()))
        .collect();
    assert_eq!(
        names,
        [(4, "p3"), (5, "p4"), (6, "p5"), (7, "p6"), (8, "p7")]
    );
    let w = league
        .around("p0", 2, None)
        .await
        .expect("around")
        .expect("placed");
    assert_eq!(w.entries.len(), 3);
    assert!(
        league
            .around("ghost", 2, None)
            .await
            .expect("around")
            .is_none()
    );
    let page = league
        .standings("bronze", 1, None, 8, 5)
        .await
        .expect("page");
    assert_eq!(page.players, 10);
    assert_eq!(
        page.entries.iter().map(|e| e.rank).collect::<Vec<_>>(),
        [9, 10]
    );
    let v = league.player("p9", None).await.expect("player");
    assert_eq!((v.rank, v.score, v.bracket), (Some(10), Some(91), Some(1)));
    let v = league.player("ghost", None).await.expect("player");
    assert_eq!(
        (v.rank, v.score, v.bracket, v.tier.as_str()),
        (None, None, None, "bronze")
    );
});

// A page read again shows every change since: Redis keeps built pages (the page
// cache), and every write that changes a page must drop them in the same step.
on_both!(a_page_read_again_shows_every_change, |league, _clock| {
    async fn page<S: Store>(l: &League<S>, offset: u64) -> Vec<(String, u64, leaguekit::Profile)> {
        // Twice, so the second read is the kept page where there is a page cache.
        let first = l
            .standings("bronze", 1, None, offset, 3)
            .await
            .expect("page");
        let again = l
            .standings("bronze", 1, None, offset, 3)
            .await
            .expect("page");
        let flat = |p: leaguekit::Standings| {
            (
                p.players,
                p.entries
                    .into_iter()
                    .map(|e| (e.player, e.score, e.profile))
                    .collect::<Vec<_>>(),
            )
        };
        let (first, again) = (flat(first), flat(again));
        assert_eq!(first, again, "the same page read twice");
        first.1
    }
    let names = |p: &[(String, u64, leaguekit::Profile)]| -> Vec<(String, u64)> {
        p.iter().map(|(n, s, _)| (n.clone(), *s)).collect()
    };
    submit_at(&league, "a", 30, "2026-01-05T01:00:00Z").await;
    submit_at(&league, "b", 20, "2026-01-05T01:00:00Z").await;
    assert_eq!(
        names(&page(&league, 0).await),
        [("a".into(), 30), ("b".into(), 20)]
    );
    assert_eq!(names(&page(&league, 1).await), [("b".into(), 20)]);

    // A score change (single and batched).
    submit_at(&league, "b", 15, "2026-01-05T02:00:00Z").await;
    assert_eq!(
        names(&page(&league, 0).await),
        [("b".into(), 35), ("a".into(), 30)]
    );
    assert_eq!(names(&page(&league, 1).await), [("a".into(), 30)]);
    let out = league
        .submit_many(&[BatchItem::new("a", 10)
            .with_options(SubmitOptions::default().at(t("2026-01-05T03:00:00Z")))])
        .await;
    assert!(out[0].is_ok(), "{out:?}");
    assert_eq!(
        names(&page(&league, 0).await),
        [("a".into(), 40), ("b".into(), 35)]
    );

    // A change that leaves the score as it was keeps the page right too.
    submit_at(&league, "a", 0, "2026-01-05T04:00:00Z").await;
    assert_eq!(
        names(&page(&league, 0).await),
        [("a".into(), 40), ("b".into(), 35)]
    );

    // A new player on the board.
    submit_at(&league, "c", 50, "2026-01-05T05:00:00Z").await;
    assert_eq!(
        names(&page(&league, 0).await),
        [("c".into(), 50), ("a".into(), 40), ("b".into(), 35)]
    );

    // A profile change of a player on the board.
    league
        .set_profile("a", &[("name".into(), "Ada".into())])
        .await
        .expect("profile");
    let p = page(&league, 0).await;
    assert_eq!(p[1].2, serde_json::json!({"name": "Ada"}));
    league
        .set_profile("a", &[("name".into(), "Ada L".into())])
        .await
        .expect("profile");
    let p = page(&league, 1).await;
    assert_eq!(p[0].2, serde_json::json!({"name": "Ada L"}));
});

on_both!(periods_are_separate, |league, clock| {
    clock.set(t("2026-01-05T23:59:59.500Z"));
    submit_at(&league, "p", 10, "2026-01-05T23:59:59Z").await;
    // Period 1 may close (and decide p's tier) once max_skew (5 s) has passed.
    clock.set(t("2026-01-06T00:00:05Z"));
    let next = submit_at(&league, "p", 7, "2026-01-06T00:00:00Z").await;
    assert_eq!((next.period, next.score), (2, 7));
    clock.set(t("2026-01-06T05:00:00Z"));
    assert_eq!(
        league.player("p", Some(1)).await.expect("p1").score,
        Some(10)
    );
    assert_eq!(league.player("p", None).await.expect("p2").score, Some(7));
});

on_both!(batch_matches_single, |league, _clock| {
    let items: Vec<BatchItem> = (0..50)
        .map(|i| {
            // Items 45..50 repeat the (player, request id) of items 0..5.
            BatchItem::new(format!("p{}", (i % 45) % 7), i * 13 % 17).with_options(
                SubmitOptions::default()
                    .request_id(format!("r{}", i % 45))
                    .at(t("2026-01-05T02:00:00Z") + Duration::seconds(i)),
            )
        })
        .chain([BatchItem::new("", 1), BatchItem::new("big", 5_000_000)])
        .collect();
    let out = league.submit_many(&items).await;
    assert_eq!(out.len(), 52);
    assert!(out[50].is_err() && out[51].is_err());
    let dupes = out
        .iter()
        .filter(|r| matches!(r, Ok(s) if !s.applied))
        .count();
    assert_eq!(dupes, 5);
    let mut expected = std::collections::BTreeMap::new();
    for (i, item) in items.iter().take(45).enumerate() {
        let _ = i;
        *expected.entry(item.player.clone()).or_insert(0u64) += item.value as u64;
    }
    for (p, score) in expected {
        assert_eq!(
            league.player(&p, None).await.expect("player").score,
            Some(score),
            "{p}"
        );
    }
});

// ---- hardening (issue 7): clocks, shared request ids, retries after the close,
// profile size under concurrency, leap seconds. Every case fails before its fix.

/// An error's input error, or a panic naming what came instead.
fn refused(r: Result<leaguekit::Submission, Error>) -> InputError {
    match r {
        Err(e) => input_err(e),
        Ok(s) => panic!("expected a refusal, got {s:?}"),
    }
}

on_both!(
    future_times_are_refused_and_write_nothing,
    |league, clock| {
        // The league clock reads 12:00:00; max_skew is 5 s.
        let e = refused(
            league
                .submit(
                    "fut",
                    1,
                    SubmitOptions::default().at(t("2026-01-05T12:00:06Z")),
                )
                .await,
        );
        assert!(
            matches!(
                e,
                InputError::FutureTime {
                    ahead_ms: 6000,
                    max_skew_ms: 5000,
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(e.to_string().contains("in the future"), "{e}");
        // A time in the next period, and one decades ahead: refused the same way.
        for at in ["2026-01-06T00:00:00Z", "2046-01-01T00:00:00Z"] {
            let e = refused(
                league
                    .submit("fut", 1, SubmitOptions::default().at(t(at)))
                    .await,
            );
            assert!(matches!(e, InputError::FutureTime { .. }), "{at}: {e:?}");
            let e = league.join("fut", Some(t(at))).await.unwrap_err();
            assert!(
                matches!(input_err(e), InputError::FutureTime { .. }),
                "{at}"
            );
        }
        // Within the skew is fine.
        let s = league
            .submit(
                "ok",
                1,
                SubmitOptions::default().at(t("2026-01-05T12:00:04Z")),
            )
            .await
            .expect("within the skew");
        assert_eq!(s.period, 1);
        // Nothing was written for the refused player.
        assert_eq!(
            league.player("fut", Some(1)).await.expect("view").bracket,
            None
        );
        assert_eq!(
            league.player("fut", Some(2)).await.expect("view").bracket,
            None
        );
        assert_eq!(league.counts(Some(2)).await.expect("counts")[0].players, 0);
        // A rollover may not look ahead; a dry run may.
        let e = league
            .rollover(Some(t("2026-01-07T00:00:00Z")), Default::default())
            .await
            .unwrap_err();
        assert!(matches!(input_err(e), InputError::FutureTime { .. }));
        let dry = league
            .rollover(
                Some(t("2026-01-07T00:00:00Z")),
                leaguekit::RolloverOptions::default().dry_run(true),
            )
            .await
            .expect("dry run");
        assert_eq!(dry.closed.len(), 1);
        // Nothing closed: period 1 still takes updates.
        clock.set(t("2026-01-05T12:00:10Z"));
        submit_at(&league, "ok", 1, "2026-01-05T12:00:09Z").await;
    }
);

on_both!(
    a_fast_clock_at_the_boundary_closes_nothing,
    |league, clock| {
        clock.set(t("2026-01-05T23:59:58Z"));
        submit_at(&league, "a", 10, "2026-01-05T23:00:00Z").await;
        submit_at(&league, "b", 20, "2026-01-05T23:30:00Z").await;
        // A game server 3 s fast stamps period 2 while the league clock is in period 1:
        // a typed, retryable refusal; nothing is placed or closed.
        let e = league
            .submit(
                "a",
                1,
                SubmitOptions::default().at(t("2026-01-06T00:00:01Z")),
            )
            .await
            .unwrap_err();
        assert_eq!(
            e.retry_after(),
            Some(std::time::Duration::from_millis(2000))
        );
        assert!(matches!(
            input_err(e),
            InputError::NotStarted {
                period: 2,
                retry_after_ms: 2000,
                ..
            }
        ));
        let e = league
            .join("new", Some(t("2026-01-06T00:00:01Z")))
            .await
            .unwrap_err();
        assert!(matches!(input_err(e), InputError::NotStarted { .. }));
        assert_eq!(league.counts(Some(2)).await.expect("counts")[0].players, 0);
        // Period 1 is untouched: others still join it and score, no reward is out.
        submit_at(&league, "c", 5, "2026-01-05T23:59:57Z").await;
        submit_at(&league, "a", 1, "2026-01-05T23:59:58Z").await;
        assert!(league.rewards("b").await.expect("rewards").is_empty());
        assert_eq!(
            league.player("c", Some(1)).await.expect("view").score,
            Some(5)
        );
    }
);

on_both!(nothing_closes_before_its_end_plus_skew, |league, clock| {
    clock.set(t("2026-01-05T23:59:59Z"));
    submit_at(&league, "a", 30, "2026-01-05T22:00:00Z").await;
    submit_at(&league, "b", 20, "2026-01-05T22:00:00Z").await;
    // Period 2 has begun, but period 1 accepts late events until 00:00:05.
    clock.set(t("2026-01-06T00:00:02Z"));
    let r = league
        .rollover(None, Default::default())
        .await
        .expect("rollover");
    assert!(r.closed.is_empty(), "closed early: {r:?}");
    // A slow server's last event of period 1 still counts.
    submit_at(&league, "b", 15, "2026-01-05T23:59:59.500Z").await;
    // a's tier in period 2 depends on period 1's outcome: not yet.
    let e = league
        .submit(
            "a",
            1,
            SubmitOptions::default().at(t("2026-01-06T00:00:01Z")),
        )
        .await
        .unwrap_err();
    assert_eq!(
        e.retry_after(),
        Some(std::time::Duration::from_millis(3000))
    );
    assert!(matches!(
        input_err(e),
        InputError::StillClosing { period: 1, .. }
    ));
    // A new player has no previous period and joins period 2 at once.
    submit_at(&league, "n", 1, "2026-01-06T00:00:01Z").await;
    // From 00:00:05 period 1 is closed, whether or not the rollover has run.
    clock.set(t("2026-01-06T00:00:05Z"));
    let e = league
        .submit(
            "b",
            1,
            SubmitOptions::default().at(t("2026-01-05T23:59:59.900Z")),
        )
        .await
        .unwrap_err();
    assert!(matches!(
        input_err(e),
        InputError::PeriodClosed { period: 1 }
    ));
    // b's late 15 made b first: b is promoted, a is not.
    let s = league
        .submit(
            "a",
            1,
            SubmitOptions::default().at(t("2026-01-06T00:00:05Z")),
        )
        .await
        .expect("a in period 2");
    assert_eq!(s.tier, "bronze");
    let s = league
        .submit(
            "b",
            1,
            SubmitOptions::default().at(t("2026-01-06T00:00:05Z")),
        )
        .await
        .expect("b in period 2");
    assert_eq!(s.tier, "silver");
    let r = league
        .rollover(None, Default::default())
        .await
        .expect("rollover");
    assert_eq!(r.closed.len(), 1);
    assert_eq!(r.closed[0].totals.players, 2);
});

on_both!(request_ids_are_per_player, |league, _clock| {
    // One match id sent for both participants: two requests, two answers.
    let opts = SubmitOptions::default()
        .request_id("match-1")
        .at(t("2026-01-05T10:00:00Z"));
    let ana = league.submit("ana", 10, opts.clone()).await.expect("ana");
    let bo = league.submit("bo", 3, opts.clone()).await.expect("bo");
    assert!(ana.applied && bo.applied);
    assert_eq!((ana.player.as_str(), ana.score), ("ana", 10));
    assert_eq!((bo.player.as_str(), bo.score, bo.rank), ("bo", 3, Some(2)));
    // Each one's retry answers with that player's own first answer.
    let again = league.submit("bo", 3, opts.clone()).await.expect("retry");
    assert!(!again.applied);
    assert_eq!(
        (again.player.as_str(), again.score, again.rank),
        ("bo", 3, Some(2))
    );
    let again = league.submit("ana", 10, opts).await.expect("retry");
    assert_eq!((again.score, again.rank), (10, Some(1)));
    assert_eq!(
        order(&league, "bronze", 1).await,
        [("ana".to_owned(), 10), ("bo".to_owned(), 3)]
    );
});

on_both!(
    a_retry_changes_nothing_whatever_it_would_do_now,
    |league, _clock| {
        // The Redis store checks a request id where the update would apply, after
        // moving the board, and puts the board back if the id was seen: the board, ties
        // included, and the page cache must come out as if nothing had been sent.
        let at = "2026-01-05T03:00:00Z";
        let first = |id: &str| SubmitOptions::default().request_id(id).at(t(at));
        let a = league.submit("a", 10, first("ra")).await.expect("a");
        let b = league.submit("b", 10, first("rb")).await.expect("b");
        // Equal scores at the same time: the ids break the tie.
        assert_eq!((a.rank, b.rank), (Some(1), Some(2)));
        let big = league.submit("c", 600_000, first("rc")).await.expect("c");
        league
            .submit("c", 300_000, first("rc2"))
            .await
            .expect("c again");
        let page = order(&league, "bronze", 1).await;
        assert_eq!(
            page,
            [("c".into(), 900_000), ("a".into(), 10), ("b".into(), 10)]
        );
        // Retries: one that would now apply (b to 20, first), one that would now be
        // out of range (c past max_score), one of a repeated first answer.
        for _ in 0..2 {
            let again = league.submit("b", 10, first("rb")).await.expect("b retry");
            assert_eq!(
                (again.applied, again.score, again.rank),
                (false, 10, Some(2))
            );
            let again = league
                .submit("c", 600_000, first("rc"))
                .await
                .expect("c retry");
            assert_eq!(
                (again.applied, again.score, again.rank),
                (false, big.score, big.rank)
            );
            // The kept page (the read above kept it) still shows the board.
            assert_eq!(order(&league, "bronze", 1).await, page);
        }
        let b_now = league.player("b", None).await.expect("b");
        assert_eq!((b_now.score, b_now.rank), (Some(10), Some(3)));
        // A new id applies as usual, and the page follows.
        let moved = league.submit("b", 1, first("rb2")).await.expect("b moves");
        assert_eq!(
            (moved.applied, moved.score, moved.rank),
            (true, 11, Some(2))
        );
        assert_eq!(
            order(&league, "bronze", 1).await,
            [("c".into(), 900_000), ("b".into(), 11), ("a".into(), 10)]
        );
    }
);

on_both!(
    an_update_without_rank_answers_none_and_moves_the_board_the_same,
    |league, _clock| {
        let at = t("2026-01-05T03:00:00Z");
        let with = |id: &str| SubmitOptions::default().request_id(id).at(at);
        let without = |id: &str| with(id).without_rank();
        let a = league.submit("a", 10, with("ra")).await.expect("a");
        assert_eq!((a.score, a.rank), (10, Some(1)));
        let b = league.submit("b", 20, without("rb")).await.expect("b");
        assert_eq!((b.applied, b.score, b.rank), (true, 20, None));
        // The board moved as with a rank: b is first.
        assert_eq!(
            order(&league, "bronze", 1).await,
            [("b".into(), 20), ("a".into(), 10)]
        );
        // A retry answers as the first time did, whatever it asks now: no rank for b's,
        // a rank for one whose first answer had one.
        let again = league.submit("b", 20, with("rb")).await.expect("b retry");
        assert_eq!((again.applied, again.score, again.rank), (false, 20, None));
        let c = league.submit("c", 5, with("rc")).await.expect("c");
        assert_eq!(c.rank, Some(3));
        let again = league.submit("c", 5, without("rc")).await.expect("c retry");
        assert_eq!(
            (again.applied, again.score, again.rank),
            (false, 5, Some(3))
        );
        // Without a request id, and in a batch mixing both.
        let d = league
            .submit("d", 1, SubmitOptions::default().at(at).without_rank())
            .await
            .expect("d");
        assert_eq!((d.score, d.rank), (1, None));
        let out = league
            .submit_many(&[
                BatchItem::new("a", 15).with_options(without("ra2")),
                BatchItem::new("c", 1).with_options(with("rc2")),
            ])
            .await;
        let ranks: Vec<_> = out
            .into_iter()
            .map(|r| r.map(|s| (s.score, s.rank)).expect("batch item"))
            .collect();
        assert_eq!(ranks, [(25, None), (6, Some(3))]);
        assert_eq!(
            order(&league, "bronze", 1).await,
            [
                ("a".into(), 25),
                ("b".into(), 20),
                ("c".into(), 6),
                ("d".into(), 1)
            ]
        );
    }
);

on_both!(a_retry_after_the_close_is_answered, |league, clock| {
    // Within the idempotency window (1 h) of the first submission.
    clock.set(t("2026-01-05T23:50:00Z"));
    let opts = SubmitOptions::default()
        .request_id("r1")
        .at(t("2026-01-05T11:00:00Z"));
    let first = league.submit("a", 7, opts.clone()).await.expect("first");
    league
        .submit(
            "b",
            2,
            SubmitOptions::default().at(t("2026-01-05T11:00:00Z")),
        )
        .await
        .expect("b");
    // Past the close, before and after the rollover: the retry gets the first answer.
    clock.set(t("2026-01-06T00:10:00Z"));
    for rollover in [false, true] {
        if rollover {
            league
                .rollover(None, Default::default())
                .await
                .expect("rollover");
        }
        let again = league.submit("a", 7, opts.clone()).await.expect("retry");
        assert_eq!(
            (again.applied, again.score, again.rank, again.period),
            (false, first.score, first.rank, 1),
            "after rollover: {rollover}"
        );
        // Anything else with a time in period 1 is refused.
        let e = league
            .submit("a", 7, opts.clone().request_id("r2"))
            .await
            .unwrap_err();
        assert!(matches!(
            input_err(e),
            InputError::PeriodClosed { period: 1 }
        ));
        let e = league
            .submit(
                "a",
                7,
                SubmitOptions::default().at(t("2026-01-05T11:00:00Z")),
            )
            .await
            .unwrap_err();
        assert!(matches!(
            input_err(e),
            InputError::PeriodClosed { period: 1 }
        ));
    }
    assert_eq!(
        league.player("a", Some(1)).await.expect("view").score,
        Some(7)
    );
});

on_both!(
    concurrent_profile_edits_stay_within_max_bytes,
    |league, _clock| {
        // max_bytes is 64: {"name":"<30>"} is 41 bytes, {"avatar":"<30>","name":"<30>"} 83.
        for round in 0..8 {
            let player = format!("p{round}");
            submit_at(&league, &player, 1, "2026-01-05T10:00:00Z").await;
            let (l1, l2) = (league.clone(), league.clone());
            let (p1, p2) = (player.clone(), player.clone());
            let name = tokio::spawn(async move {
                l1.set_profile(&p1, &[("name".into(), "n".repeat(30))])
                    .await
            });
            let avatar = tokio::spawn(async move {
                l2.set_profile(&p2, &[("avatar".into(), "a".repeat(30))])
                    .await
            });
            let results = [name.await.expect("task"), avatar.await.expect("task")];
            let ok = results.iter().filter(|r| r.is_ok()).count();
            assert_eq!(ok, 1, "round {round}: {results:?}");
            for r in results {
                if let Err(e) = r {
                    assert!(matches!(
                        input_err(e),
                        InputError::ProfileTooLarge { bytes: 83, max: 64 }
                    ));
                }
            }
            let stored = league.profile(&player).await.expect("profile");
            assert_eq!(stored.len(), 1, "{stored:?}");
            let cached = league
                .standings("bronze", 1, Some(1), 0, 100)
                .await
                .expect("standings")
                .entries
                .into_iter()
                .find(|e| e.player == player)
                .expect("on the board")
                .profile;
            let json = serde_json::to_string(&stored).expect("json");
            assert!(json.len() <= 64);
            assert_eq!(
                cached,
                serde_json::from_str::<serde_json::Value>(&json).expect("v")
            );
        }
    }
);

on_both!(profile_size_is_counted_in_json_bytes, |league, _clock| {
    // Quotes, backslashes, control bytes (escaped), DEL and non-ASCII (not escaped):
    // the same size on both stores, byte for byte what serde_json writes.
    let mut value = "\"\\\n\t\u{1}\u{1f}\u{7f}é✓".to_owned();
    let size = |v: &str| {
        let mut m = std::collections::BTreeMap::new();
        m.insert("name", v);
        serde_json::to_string(&m).expect("json").len()
    };
    while size(&value) < 64 {
        value.push('x');
    }
    assert_eq!(size(&value), 64);
    league
        .set_profile("p", &[("name".into(), value.clone())])
        .await
        .expect("exactly max_bytes");
    assert_eq!(league.profile("p").await.expect("profile")["name"], value);
    value.push('x');
    let e = league
        .set_profile("p", &[("name".into(), value)])
        .await
        .unwrap_err();
    assert!(matches!(
        input_err(e),
        InputError::ProfileTooLarge { bytes: 65, max: 64 }
    ));
});

on_both!(
    a_leap_second_is_the_last_instant_of_its_second,
    |league, clock| {
        clock.set(t("2026-01-05T23:59:59.900Z"));
        let leap = DateTime::parse_from_rfc3339("2026-01-05T23:59:60.5Z")
            .expect("chrono reads leap seconds")
            .with_timezone(&Utc);
        let s = league
            .submit("leap", 5, SubmitOptions::default().at(leap))
            .await
            .expect("a leap second is an ordinary time");
        assert_eq!(s.period, 1);
        submit_at(&league, "last", 5, "2026-01-05T23:59:59Z").await;
        // Same score, same (last) second of the period: tied on time, so by player id.
        let names: Vec<String> = order(&league, "bronze", 1)
            .await
            .into_iter()
            .map(|(p, _)| p)
            .collect();
        assert_eq!(names, ["last", "leap"]);
        assert_eq!(league.period_at(Some(leap)).expect("period").id, 1);
    }
);

mod precision {
    use super::*;

    /// Weekly, 1 ms: the largest max_score this allows, at the very top and with the
    /// latest possible time in the period.
    fn edge_season(prefix: &str) -> Season {
        let text = season_text(prefix, "set", 100, "on_first_score")
            .replace("period = \"daily\"", "period = \"weekly\"")
            .replace("max_score = 1_000_000", "max_score = 14_804_731")
            .replace("time_resolution = \"1s\"", "time_resolution = \"1ms\"");
        Season::from_toml(&text, "edge.toml").expect("edge season is valid")
    }

    async fn check<S: Store>(league: League<S>) {
        let max = league.season().packing.max_score();
        assert_eq!(max, 14_804_731);
        let last = t("2026-01-11T23:59:59.999Z");
        league
            .submit("top_late", max as i64, SubmitOptions::default().at(last))
            .await
            .expect("late");
        league
            .submit(
                "top_early",
                max as i64,
                SubmitOptions::default().at(t(START)),
            )
            .await
            .expect("early");
        league
            .submit(
                "below",
                max as i64 - 1,
                SubmitOptions::default().at(t(START)),
            )
            .await
            .expect("below");
        let s = league
            .standings("bronze", 1, Some(1), 0, 10)
            .await
            .expect("standings");
        let got: Vec<_> = s
            .entries
            .iter()
            .map(|e| (e.player.as_str(), e.score))
            .collect();
        assert_eq!(
            got,
            [("top_early", max), ("top_late", max), ("below", max - 1)]
        );
        let e = league
            .submit("x", max as i64 + 1, SubmitOptions::default().at(t(START)))
            .await
            .unwrap_err();
        assert!(matches!(input_err(e), InputError::Score(_)));
    }

    /// The league clock at the period's last millisecond, so that every event time
    /// of the test is in the past and the period still open.
    fn clock() -> Arc<ManualClock> {
        Arc::new(ManualClock::new(t("2026-01-11T23:59:59.999Z")))
    }

    #[tokio::test]
    async fn memory() {
        check(League::with_clock(
            edge_season("lkmem"),
            MemoryStore::new(),
            clock(),
        ))
        .await;
    }

    #[tokio::test]
    async fn redis() {
        let prefix = common::unique_prefix("edge");
        check(League::with_clock(
            edge_season(&prefix),
            common::redis_store().await,
            clock(),
        ))
        .await;
    }
    #[tokio::test]
    async fn cluster() {
        let prefix = common::unique_prefix("edge");
        check(League::with_clock(
            edge_season(&prefix),
            common::cluster_store().await,
            clock(),
        ))
        .await;
    }
    #[tokio::test]
    async fn tls() {
        let prefix = common::unique_prefix("edge");
        check(League::with_clock(
            edge_season(&prefix),
            common::tls_store().await,
            clock(),
        ))
        .await;
    }
}

#[allow(dead_code)]
fn _assert_redis_store_is_store(s: RedisStore) -> impl Store {
    s
}

on_both!(
    tier_top_merges_brackets_in_board_order,
    ("increment", 4, "on_first_score"),
    |league, clock| {
        // 30 players in brackets of 4: many equal scores, some reached at the same
        // second, so the order across brackets needs score, then time, then id.
        let mut expected: Vec<(i64, String, String)> = Vec::new();
        for i in 0..30 {
            let player = format!("p{:02}", (i * 17) % 30);
            let score = ((i * 7) % 5) as i64 * 10 + 10;
            let at = format!("2026-01-05T09:0{}:00Z", i % 3);
            submit_at(&league, &player, score, &at).await;
            expected.push((-score, at, player));
        }
        expected.sort();
        let want = |n: usize| -> Vec<(String, u64)> {
            expected[..n]
                .iter()
                .map(|(s, _, p)| (p.clone(), (-s) as u64))
                .collect()
        };
        league
            .set_profile("p00", &[("name".into(), "Zero".into())])
            .await
            .expect("profile");
        let got = |t: &leaguekit::TierTop| -> Vec<(String, u64)> {
            t.entries
                .iter()
                .map(|e| (e.player.clone(), e.score))
                .collect()
        };
        for limit in [1, 5, 12, 30, 1000] {
            let top = league.top("bronze", None, limit).await.expect("top");
            assert_eq!(got(&top), want((limit as usize).min(30)), "limit {limit}");
            assert_eq!((top.brackets, top.frozen, top.period), (8, false, 1));
            assert!(
                top.entries
                    .iter()
                    .enumerate()
                    .all(|(i, e)| e.rank == i as u64 + 1)
            );
        }
        // Each entry names its bracket and carries the cached profile.
        let all = league.top("bronze", None, 30).await.expect("top");
        for e in &all.entries {
            let view = league.player(&e.player, None).await.expect("player");
            assert_eq!(view.bracket, Some(e.bracket), "{}", e.player);
        }
        let zero = all.entries.iter().find(|e| e.player == "p00").expect("p00");
        assert_eq!(zero.profile.get("name").as_deref(), Some("Zero"));
        // An empty tier has an empty list; bad input is refused.
        let silver = league.top("silver", None, 10).await.expect("silver");
        assert!(silver.entries.is_empty() && silver.brackets == 0);
        for (tier, limit) in [("bronze", 0), ("bronze", 1001), ("mithril", 10)] {
            let e = league.top(tier, None, limit).await.unwrap_err();
            assert!(
                matches!(
                    input_err(e),
                    InputError::BadLimit { .. } | InputError::UnknownTier { .. }
                ),
                "{tier} {limit}"
            );
        }
        // Closed: the list frozen at the rollover, the same as the last live one. Two
        // players return before the rollover runs, which closes their brackets on
        // the spot: the rollover finds those done and reads them back for the list,
        // while it takes the others from the boards it freezes itself.
        clock.set(t("2026-01-06T00:00:06Z"));
        // (Not from p00's bracket, so that its profile comes through the boards'
        // path.)
        let mut returning: Vec<&leaguekit::TopEntry> = Vec::new();
        for e in &all.entries {
            if e.bracket != zero.bracket && returning.iter().all(|r| r.bracket != e.bracket) {
                returning.push(e);
            }
        }
        for e in &returning[..2] {
            league.join(&e.player, None).await.expect("returns");
        }
        league
            .rollover(None, leaguekit::RolloverOptions::default())
            .await
            .expect("rollover");
        for limit in [7, 1000] {
            let frozen = league.top("bronze", Some(1), limit).await.expect("frozen");
            assert!(frozen.frozen);
            assert_eq!(
                got(&frozen),
                want((limit as usize).min(30)),
                "limit {limit}"
            );
            assert_eq!(frozen.entries[0].profile, all.entries[0].profile);
            let n = frozen.entries.len();
            assert_eq!(frozen.entries, all.entries[..n], "limit {limit}");
        }
    }
);

/// The running period's list is shared for `TOP_CACHE`, then read again.
#[tokio::test]
async fn tier_top_cache_expires() {
    let clock = ManualClock::new(t("2026-01-05T12:00:00Z"));
    let league = League::with_clock(
        season("lkmem", "increment", 4, "on_first_score"),
        MemoryStore::with_clock(Arc::new(clock.clone())),
        Arc::new(clock.clone()),
    );
    submit_at(&league, "a", 10, "2026-01-05T09:00:00Z").await;
    let first = league.top("bronze", None, 10).await.expect("top");
    submit_at(&league, "b", 20, "2026-01-05T09:00:00Z").await;
    let cached = league.top("bronze", None, 10).await.expect("top");
    assert_eq!(first, cached, "read within TOP_CACHE");
    tokio::time::sleep(leaguekit::ranking::TOP_CACHE + std::time::Duration::from_millis(50)).await;
    let fresh = league.top("bronze", None, 10).await.expect("top");
    assert_eq!(fresh.entries[0].player, "b");
}

on_both!(
    cohorts_form_their_own_brackets,
    ("increment", 2, "on_first_score"),
    |plain, clock| {
        // A season without cohorts refuses a label, and writes nothing.
        let e = plain
            .join_with("x", leaguekit::JoinOptions::default().cohort("eu"))
            .await
            .unwrap_err();
        assert!(matches!(input_err(e), InputError::UnknownCohort { .. }));
        assert!(
            plain
                .counts(None)
                .await
                .expect("counts")
                .iter()
                .all(|c| c.players == 0)
        );

        let text = season_text(
            &format!("{}c", plain.season().key_prefix),
            "increment",
            2,
            "on_first_score",
        ) + "\n[cohorts]\nvalues = [\"eu\", \"na\"]\n";
        let season = Season::from_toml(&text, "cohorts.toml").expect("season with cohorts");
        let league = League::with_clock(season, plain.store().clone(), Arc::new(clock.clone()));
        let at = t("2026-01-05T09:00:00Z");
        let join = |p: &'static str, c: Option<&'static str>| {
            let mut o = leaguekit::JoinOptions::default().at(at);
            if let Some(c) = c {
                o = o.cohort(c);
            }
            let league = &league;
            async move { league.join_with(p, o).await.expect("join") }
        };
        let placed = [
            join("e1", Some("eu")).await,
            join("e2", Some("eu")).await,
            join("e3", Some("eu")).await,
            join("n1", Some("na")).await,
            join("x1", None).await,
        ];
        let got: Vec<(Option<&str>, u32)> = placed
            .iter()
            .map(|p| (p.cohort.as_deref(), p.bracket))
            .collect();
        assert_eq!(
            got,
            [
                (Some("eu"), 1),
                (Some("eu"), 1),
                (Some("eu"), 2),
                (Some("na"), 1),
                (None, 1)
            ]
        );
        assert!(placed.iter().all(|p| p.tier == "bronze"));
        // An undeclared label is refused before anything is written.
        let e = league
            .join_with("z", leaguekit::JoinOptions::default().cohort("asia"))
            .await
            .unwrap_err();
        match input_err(e) {
            InputError::UnknownCohort { known, .. } => assert!(known.contains("eu, na"), "{known}"),
            other => panic!("{other:?}"),
        }
        // A first score places in its cohort; a placed player keeps theirs.
        for (p, v, c) in [
            ("e1", 30, None::<&str>),
            ("e2", 20, None),
            ("e3", 10, None),
            ("n1", 50, None),
        ] {
            let mut o = SubmitOptions::default().at(at);
            if let Some(c) = c {
                o = o.cohort(c);
            }
            league.submit(p, v, o).await.expect("submit");
        }
        let n2 = league
            .submit("n2", 40, SubmitOptions::default().at(at).cohort("na"))
            .await
            .expect("n2");
        assert_eq!((n2.cohort.as_deref(), n2.bracket), (Some("na"), 1));
        let e1 = league
            .submit("e1", 0, SubmitOptions::default().at(at).cohort("na"))
            .await
            .expect("e1");
        assert_eq!(
            e1.cohort.as_deref(),
            Some("eu"),
            "a player keeps their cohort"
        );
        // Reads per cohort, and across cohorts.
        let eu = league
            .standings("bronze@eu", 1, None, 0, 10)
            .await
            .expect("eu");
        assert_eq!(
            (
                eu.tier.as_str(),
                eu.cohort.as_deref(),
                order(&league, "bronze@eu", 1).await
            ),
            (
                "bronze",
                Some("eu"),
                vec![("e1".to_owned(), 30), ("e2".to_owned(), 20)]
            )
        );
        assert_eq!(order(&league, "bronze", 1).await, [("x1".to_owned(), 0)]);
        let counts = league.counts(None).await.expect("counts");
        assert_eq!((counts[0].players, counts[0].brackets), (6, 4));
        let by: Vec<(Option<&str>, u64, u64)> = counts[0]
            .cohorts
            .iter()
            .map(|c| (c.cohort.as_deref(), c.players, c.brackets))
            .collect();
        assert_eq!(by, [(None, 1, 1), (Some("eu"), 3, 2), (Some("na"), 2, 1)]);
        let na = league.top("bronze@na", None, 10).await.expect("top na");
        assert_eq!(
            na.entries
                .iter()
                .map(|e| e.player.as_str())
                .collect::<Vec<_>>(),
            ["n1", "n2"]
        );
        let all = league.top("bronze", None, 10).await.expect("top");
        let list: Vec<(&str, Option<&str>)> = all
            .entries
            .iter()
            .map(|e| (e.player.as_str(), e.cohort.as_deref()))
            .collect();
        assert_eq!(
            list,
            [
                ("n1", Some("na")),
                ("n2", Some("na")),
                ("e1", Some("eu")),
                ("e2", Some("eu")),
                ("e3", Some("eu")),
                ("x1", None)
            ]
        );
        assert_eq!(all.brackets, 4);
        // The rollover closes every cohort's brackets; lists are frozen per cohort and
        // per tier; a returning player keeps their cohort by default.
        clock.set(t("2026-01-06T00:00:06Z"));
        let report = league
            .rollover(None, leaguekit::RolloverOptions::default())
            .await
            .expect("rollover");
        assert_eq!(
            (report.closed[0].brackets, report.closed[0].totals.players),
            (4, 6)
        );
        assert!(
            league
                .top("bronze@eu", Some(1), 10)
                .await
                .expect("eu")
                .frozen
        );
        let frozen = league.top("bronze", Some(1), 10).await.expect("all");
        assert!(frozen.frozen);
        assert_eq!(frozen.entries, all.entries);
        clock.set(t("2026-01-06T01:00:00Z"));
        let back = league
            .join("e1", Some(t("2026-01-06T01:00:00Z")))
            .await
            .expect("e1 returns");
        assert_eq!(
            (back.tier.as_str(), back.cohort.as_deref()),
            ("silver", Some("eu"))
        );
        let last = back.last.expect("last");
        assert_eq!(
            (last.tier.as_str(), last.cohort.as_deref()),
            ("bronze", Some("eu"))
        );
        // The outcome log pages across cohorts without loss or repeat.
        let whole = league.outcomes(1, None, 100).await.expect("log");
        assert_eq!(whole.len(), 6);
        let mut paged = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let page = league
                .outcomes(1, cursor.as_deref(), 1)
                .await
                .expect("page");
            let Some(r) = page.last() else { break };
            cursor = Some(r.cursor.clone());
            paged.extend(page);
        }
        assert_eq!(paged, whole);
        assert_eq!(
            whole
                .iter()
                .filter(|r| r.cohort.as_deref() == Some("eu"))
                .count(),
            3
        );
    }
);

on_both!(
    join_many_places_as_single_joins_do,
    ("increment", 3, "explicit"),
    |league, _clock| {
        use leaguekit::{JoinItem, JoinOptions};
        let mut items: Vec<JoinItem> = (0..7).map(|i| JoinItem::new(format!("p{i}"))).collect();
        // A bad id and a time in the future are refused alone; a repeat of a player
        // in the batch gets the same bracket, and the welcome once.
        items.insert(2, JoinItem::new("bad\u{1}id"));
        items.insert(
            4,
            JoinItem::new("early")
                .with_options(JoinOptions::default().at(t("2026-01-09T00:00:00Z"))),
        );
        items.push(JoinItem::new("p4"));
        let got = league.join_many(&items).await;
        assert_eq!(got.len(), items.len());
        assert!(matches!(
            &got[2],
            Err(Error::Input(InputError::PlayerId { .. }))
        ));
        assert!(matches!(
            &got[4],
            Err(Error::Input(InputError::FutureTime { .. }))
        ));
        let placed: Vec<(String, u32)> = got
            .iter()
            .filter_map(|r| r.as_ref().ok())
            .map(|p| (p.player.clone(), p.bracket))
            .collect();
        let expected: Vec<(String, u32)> = [1, 1, 1, 2, 2, 2, 3, 2]
            .iter()
            .enumerate()
            .map(|(i, b)| (format!("p{}", if i == 7 { 4 } else { i }), *b))
            .collect();
        assert_eq!(placed, expected);
        let first = got[6].as_ref().expect("p4");
        assert_eq!(first.pending_rewards, Some(Vec::new()));
        let repeat = got[9].as_ref().expect("p4 again");
        assert_eq!(
            (repeat.last.clone(), repeat.pending_rewards.clone()),
            (None, None)
        );
        let counts = league.counts(None).await.expect("counts");
        assert_eq!((counts[0].players, counts[0].brackets), (7, 3));
        // The same as joins one by one: joining again finds every placement.
        for (player, bracket) in &expected {
            let again = league.join(player, None).await.expect("join again");
            assert_eq!((&again.player, again.bracket), (player, *bracket));
            assert_eq!(again.pending_rewards, None);
        }
        for b in 1..=3 {
            let s = league
                .standings("bronze", b, None, 0, 100)
                .await
                .expect("standings");
            assert_eq!(s.players, if b == 3 { 1 } else { 3 });
        }
    }
);

on_both!(
    join_many_gives_returning_players_their_last_result,
    ("increment", 3, "explicit"),
    |league, clock| {
        use leaguekit::JoinItem;
        let players = ["a", "b", "c", "d"];
        let items: Vec<JoinItem> = players.iter().map(|p| JoinItem::new(*p)).collect();
        for r in league.join_many(&items).await {
            r.expect("join");
        }
        for (i, p) in players.iter().enumerate() {
            submit_at(&league, p, 10 * (i as i64 + 1), "2026-01-05T11:00:00Z").await;
        }
        // No rollover ran: the next day's joins close the old brackets on the spot.
        clock.set(t("2026-01-06T01:00:00Z"));
        let got = league.join_many(&items).await;
        let mut seen = Vec::new();
        for r in got {
            let p = r.expect("join in period 2");
            let last = p.last.expect("the last result on the placing reply");
            assert_eq!(last.period, 1);
            seen.push((p.player, p.tier, last.rank, last.next_tier));
        }
        // Bracket 1 is a, b, c (c best: promoted); bracket 2 is d alone (promoted).
        assert_eq!(
            seen,
            [
                ("a".to_owned(), "bronze".to_owned(), 3, "bronze".to_owned()),
                ("b".to_owned(), "bronze".to_owned(), 2, "bronze".to_owned()),
                ("c".to_owned(), "silver".to_owned(), 1, "silver".to_owned()),
                ("d".to_owned(), "silver".to_owned(), 1, "silver".to_owned()),
            ]
        );
        // Each player's state moved on: a join one by one finds the same placement.
        let single = league.join("c", None).await.expect("c");
        assert_eq!((single.tier.as_str(), single.last), ("silver", None));
    }
);

on_both!(
    submit_many_places_new_players_together,
    ("increment", 3, "on_first_score"),
    |league, _clock| {
        let mut items: Vec<BatchItem> = (0..5)
            .map(|i| BatchItem::new(format!("n{i}"), i + 1))
            .collect();
        // n0 scores twice in the batch: both count, one placement.
        items.push(BatchItem::new("n0", 100));
        // An id that is refused, and an explicit later join of a known player.
        items.push(BatchItem::new("", 1));
        let got = league.submit_many(&items).await;
        let ok: Vec<_> = got.iter().filter_map(|r| r.as_ref().ok()).collect();
        assert_eq!(ok.len(), 6);
        assert!(got[6].is_err());
        let brackets: Vec<(&str, u32)> =
            ok.iter().map(|s| (s.player.as_str(), s.bracket)).collect();
        assert_eq!(
            brackets,
            [
                ("n0", 1),
                ("n1", 1),
                ("n2", 1),
                ("n3", 2),
                ("n4", 2),
                ("n0", 1)
            ]
        );
        assert_eq!(ok[5].score, 101);
        assert!(ok[0].last.is_none() && ok[0].pending_rewards == Some(Vec::new()));
        assert_eq!(ok[5].pending_rewards, None);
        let counts = league.counts(None).await.expect("counts");
        assert_eq!(counts[0].players, 5);
        // A second batch finds them placed (no second placement, no welcome).
        let again = league
            .submit_many(&[BatchItem::new("n3", 1), BatchItem::new("n5", 1)])
            .await;
        let again: Vec<_> = again.into_iter().map(|r| r.expect("again")).collect();
        assert_eq!(
            (
                again[0].bracket,
                again[0].score,
                again[0].pending_rewards.clone()
            ),
            (2, 5, None)
        );
        assert_eq!(
            (again[1].bracket, again[1].pending_rewards.clone()),
            (2, Some(Vec::new()))
        );
    }
);

// join_many at the store: a batch is counted as its joins one by one would be; new
// players of each tier in order, a player listed twice placed once, a refused join
// (its time) refused alone, and a join past a full bracket moving the counter after
// the batch's earlier joins of that tier.
on_both!(store_join_many_counts_as_one_by_one, |league, _clock| {
    use leaguekit::StoreError;
    use leaguekit::store::{JoinRequest, Joined, LeagueStore, Now, TimeCheck};
    let store = league.store();
    let period = league.keys().period(9);
    let join =
        |p: &'static str, tier: &'static str| JoinRequest::new(p, tier, 2, TimeCheck::unbounded());
    let future = JoinRequest::new(
        "e",
        "bronze",
        2,
        TimeCheck::new(Now::At(0), 10_000, 0, i64::MAX, 0),
    );
    let placed = |r: Result<Joined, StoreError>| {
        r.map(|j| (j.tier, j.bracket, j.new))
            .map_err(|e| format!("{e:?}"))
    };
    let first: Vec<_> = store
        .join_many(
            &period,
            &[
                join("a", "bronze"),
                join("b", "silver"),
                join("c", "bronze"),
                join("a", "bronze"),
                future,
                join("d", "bronze"),
            ],
        )
        .await
        .into_iter()
        .map(placed)
        .collect();
    let b = |n: u32, new: bool| Ok(("bronze".to_owned(), n, new));
    assert_eq!(first[0], b(1, true));
    assert_eq!(first[1], Ok(("silver".to_owned(), 1, true)));
    assert_eq!(first[2], b(1, true));
    assert_eq!(first[3], b(1, false));
    assert!(
        first[4].as_ref().is_err_and(|e| e.contains("Future")),
        "{:?}",
        first[4]
    );
    assert_eq!(first[5], b(2, true));
    // Later: known players keep their brackets, the counter goes on; a join past c's
    // bracket (found full) lands after the new player listed before it.
    let second: Vec<_> = store
        .join_many(
            &period,
            &[
                join("c", "silver"),
                join("f", "bronze"),
                join("h", "bronze"),
                join("c", "bronze").replacing_full(1),
            ],
        )
        .await
        .into_iter()
        .map(placed)
        .collect();
    assert_eq!(second, [b(1, false), b(2, true), b(3, true), b(3, true)]);
    assert_eq!(
        store.placement(&period, "c").await.expect("placement"),
        Some(("bronze".to_owned(), 3))
    );
    // A known player listed between new ones of their tier takes no place: the
    // players after them land where they would have without that listing.
    let third: Vec<_> = store
        .join_many(
            &period,
            &[
                join("i", "bronze"),
                join("f", "bronze"),
                join("k", "bronze"),
            ],
        )
        .await
        .into_iter()
        .map(placed)
        .collect();
    assert_eq!(third, [b(4, true), b(2, false), b(4, true)]);
    let mut joined: Vec<(String, u64)> = store
        .joined(&period)
        .await
        .expect("joined")
        .into_iter()
        .map(|(tier, j)| (tier, j.counted()))
        .collect();
    joined.sort();
    assert_eq!(joined, [("bronze".to_owned(), 8), ("silver".to_owned(), 1)]);
});

// enter_many: a batch's players of one bracket are entered in order until the board
// is full (the rest answered Full, their profiles not cached); an entry is entered once; a player listed twice is entered once with the newest profile; an older
// profile version never replaces a newer one; a closed bracket refuses the whole batch
// and stays unchanged; other brackets' entries in the same batch are their own.
on_both!(enter_many_fills_a_bracket_in_order, |league, _clock| {
    use leaguekit::StoreError;
    use leaguekit::store::{
        BoardEntry, CloseCheck, Entered, LeagueStore, RankingStore, RolloverStore,
    };
    let store = league.store();
    let keys = league.keys();
    let one = keys.bracket(7, "bronze", 1);
    let two = keys.bracket(7, "bronze", 2);
    assert_eq!(
        store
            .enter(&one, "a", 3, Some((5, r#"{"name":"a5"}"#)), 3600)
            .await
            .expect("enter"),
        Entered::Ok
    );
    let entries = [
        BoardEntry::new(&one, "a", 3, 3600).profile(Some((4, r#"{"name":"a4"}"#))),
        BoardEntry::new(&one, "b", 3, 3600).profile(Some((1, r#"{"name":"b1"}"#))),
        BoardEntry::new(&two, "x", 3, 3600),
        BoardEntry::new(&one, "b", 3, 3600).profile(Some((3, r#"{"name":"b3"}"#))),
        BoardEntry::new(&one, "c", 3, 3600),
        BoardEntry::new(&one, "d", 3, 3600).profile(Some((1, r#"{"name":"d1"}"#))),
        BoardEntry::new(&one, "b", 3, 3600).profile(Some((2, r#"{"name":"b2"}"#))),
    ];
    let got: Vec<Entered> = store
        .enter_many(&entries)
        .await
        .into_iter()
        .map(|r| r.expect("entered"))
        .collect();
    use Entered::{Full, Ok};
    assert_eq!(got, [Ok, Ok, Ok, Ok, Ok, Full, Ok]);
    let page = store.standings(&one, 0, 10).await.expect("standings");
    let mut on_board: Vec<(String, u64, Option<String>)> = page
        .entries
        .into_iter()
        .map(|e| (e.player, e.packed, e.profile.map(|p| p.as_str().to_owned())))
        .collect();
    on_board.sort();
    let name = |n: &str| Some(format!(r#"{{"name":"{n}"}}"#));
    assert_eq!(
        on_board,
        [
            ("a".to_owned(), 0, name("a5")),
            ("b".to_owned(), 0, name("b3")),
            ("c".to_owned(), 0, None),
        ]
    );
    assert_eq!(page.total, 3);
    let two_page = store.standings(&two, 0, 10).await.expect("standings");
    assert_eq!(two_page.total, 1);
    // Entered again: unchanged.
    let again = store
        .enter_many(&[BoardEntry::new(&one, "c", 3, 3600)])
        .await;
    assert!(matches!(again.as_slice(), [Result::Ok(Ok)]), "{again:?}");
    assert_eq!(
        store.standings(&one, 0, 10).await.expect("standings").total,
        3
    );
    // A closed bracket refuses every entry of the batch; the other bracket's go on.
    store
        .freeze(&one, CloseCheck::unbounded())
        .await
        .expect("freeze");
    let closed = store
        .enter_many(&[
            BoardEntry::new(&one, "e", 3, 3600),
            BoardEntry::new(&two, "y", 3, 3600),
            BoardEntry::new(&one, "a", 3, 3600).profile(Some((9, r#"{"name":"a9"}"#))),
        ])
        .await;
    assert!(
        matches!(
            closed.as_slice(),
            [
                Err(StoreError::PeriodClosed),
                Result::Ok(Ok),
                Err(StoreError::PeriodClosed)
            ]
        ),
        "{closed:?}"
    );
    let page = store.standings(&one, 0, 10).await.expect("standings");
    assert_eq!(page.total, 3);
    assert!(page.entries.iter().any(
        |e| e.player == "a" && e.profile.as_ref().map(|p| p.as_str().to_owned()) == name("a5")
    ));
    assert_eq!(
        store.standings(&two, 0, 10).await.expect("standings").total,
        2
    );
});

// record_state: a later period moves the placement to `previous`; the same period
// replaces tier and bracket and keeps `previous` (a join whose bracket was found full
// corrects the state); an earlier period changes nothing.
on_both!(record_state_same_period_replaces, |league, _clock| {
    use leaguekit::store::{LeagueStore, PlayerState};
    let store = league.store();
    let keys = league.keys().player("rs");
    let state = |p: u64, tier: &str, b: u32| PlayerState::new(p, tier, b);
    let read = || async { store.player_state(&keys).await.expect("state") };
    store
        .record_state(&keys, &state(3, "bronze", 2), 3600, 0)
        .await
        .expect("record");
    let got = read().await.expect("recorded");
    assert_eq!(
        (got.period, got.tier.as_str(), got.bracket),
        (3, "bronze", 2)
    );
    assert_eq!(got.previous, None);
    // The same period, another bracket: replaced, still no previous.
    store
        .record_state(&keys, &state(3, "bronze", 7), 3600, 0)
        .await
        .expect("record");
    let got = read().await.expect("recorded");
    assert_eq!((got.period, got.bracket), (3, 7));
    assert_eq!(got.previous, None);
    // A later period: the placement moves to previous.
    store
        .record_state(&keys, &state(4, "silver", 1), 3600, 0)
        .await
        .expect("record");
    // The same period again: tier and bracket replaced, previous kept.
    store
        .record_state(&keys, &state(4, "gold", 5), 3600, 0)
        .await
        .expect("record");
    let got = read().await.expect("recorded");
    assert_eq!((got.period, got.tier.as_str(), got.bracket), (4, "gold", 5));
    assert_eq!(got.previous, Some((3, "bronze".to_owned(), 7)));
    // An earlier period: ignored.
    store
        .record_state(&keys, &state(2, "silver", 9), 3600, 0)
        .await
        .expect("record");
    let again = read().await.expect("recorded");
    assert_eq!(again, got);
    // Another player is untouched by all of it.
    assert_eq!(
        store
            .player_state(&league.keys().player("other"))
            .await
            .expect("state"),
        None
    );
});

// Many players share one bucket of records: each keeps their own state, profile,
// rewards and claims.
on_both!(players_of_one_bucket_stay_apart, |league, clock| {
    let keys = league.keys();
    let first = keys.player("mate0").bucket;
    let mates: Vec<String> = (1..)
        .map(|i| format!("mate{i}"))
        .filter(|p| keys.player(p).bucket == first)
        .take(4)
        .chain(std::iter::once("mate0".to_owned()))
        .collect();
    for (i, p) in mates.iter().enumerate() {
        league
            .set_profile(p, &[("name".into(), format!("N{i}"))])
            .await
            .expect("profile");
        submit_at(&league, p, i as i64 + 1, "2026-01-05T11:00:00Z").await;
    }
    clock.set(t("2026-01-06T00:00:05Z"));
    league
        .rollover(None, leaguekit::RolloverOptions::default())
        .await
        .expect("rollover");
    clock.set(t("2026-01-06T01:00:00Z"));
    for (i, p) in mates.iter().enumerate() {
        assert_eq!(
            league.profile(p).await.expect("profile")["name"],
            format!("N{i}")
        );
        let placed = league.join(p, None).await.expect("join");
        // The best (the last) is promoted, the others stay in bronze.
        let want = if i == mates.len() - 1 {
            "silver"
        } else {
            "bronze"
        };
        assert_eq!(placed.tier, want, "{p}");
        let last = placed.last.expect("last period");
        assert_eq!(last.score, i as u64 + 1, "{p}");
        let view = league.player(p, None).await.expect("view");
        assert_eq!(view.tier, want, "{p}");
    }
});

// ---- hardening II: writes refused before they place anyone, late events, retries
// beyond the retention. Every case fails before its fix.

// A first score that an empty board refuses (a negative delta) places nobody: the
// player gets no bracket and no tier counter moves, alone or in a batch.
on_both!(a_refused_first_score_places_nobody, |league, clock| {
    let _ = &clock;
    for _ in 0..3 {
        let e = refused(league.submit("neg", -1, SubmitOptions::default()).await);
        assert!(
            matches!(
                e,
                InputError::Score(leaguekit::season::packing::ScoreRangeError::OutOfRange {
                    current: 0,
                    ..
                })
            ),
            "{e:?}"
        );
    }
    let batch = league
        .submit_many(&[BatchItem::new("neg2", -5), BatchItem::new("pos", 4)])
        .await;
    assert!(
        matches!(&batch[0], Err(Error::Input(InputError::Score(_)))),
        "{:?}",
        batch[0]
    );
    assert_eq!(batch[1].as_ref().expect("positive first score").score, 4);
    for p in ["neg", "neg2"] {
        assert_eq!(
            league.player(p, None).await.expect("view").bracket,
            None,
            "{p}"
        );
    }
    // Only "pos" was placed.
    assert_eq!(league.counts(None).await.expect("counts")[0].players, 1);
    // A placed player's negative delta is refused by the board, with their real score.
    submit_at(&league, "pos", 3, "2026-01-05T12:00:00Z").await;
    let e = refused(league.submit("pos", -10, SubmitOptions::default()).await);
    assert!(
        matches!(
            e,
            InputError::Score(leaguekit::season::packing::ScoreRangeError::OutOfRange {
                current: 7,
                ..
            })
        ),
        "{e:?}"
    );
});

// A player placed in period 2 cannot then be placed in period 1 by a late event
// (within the skew of period 1's end): their tier in period 2 was decided without
// it, so its outcome would be lost to the ladder.
on_both!(
    a_late_event_cannot_place_a_player_in_an_earlier_period,
    |league, clock| {
        // Period 1 ends at midnight and closes 5 s later (max_skew).
        clock.set(t("2026-01-06T00:00:02Z"));
        let now = league
            .submit("late", 3, SubmitOptions::default())
            .await
            .expect("placed in period 2");
        assert_eq!((now.period, now.tier.as_str()), (2, "bronze"));
        let e = refused(
            league
                .submit(
                    "late",
                    5,
                    SubmitOptions::default().at(t("2026-01-05T23:59:59Z")),
                )
                .await,
        );
        assert!(
            matches!(
                e,
                InputError::PlacedLater {
                    period: 1,
                    later: 2,
                    ..
                }
            ),
            "{e:?}"
        );
        let e = league
            .join("late", Some(t("2026-01-05T23:59:59Z")))
            .await
            .unwrap_err();
        assert!(
            matches!(input_err(e), InputError::PlacedLater { .. }),
            "join"
        );
        // The batch path refuses it the same way.
        league
            .submit("late2", 1, SubmitOptions::default())
            .await
            .expect("placed in period 2");
        let batch = league
            .submit_many(&[BatchItem::new("late2", 9)
                .with_options(SubmitOptions::default().at(t("2026-01-05T23:59:58Z")))])
            .await;
        assert!(
            matches!(&batch[0], Err(Error::Input(InputError::PlacedLater { .. }))),
            "{:?}",
            batch[0]
        );
        // Nothing was written in period 1; a player without a later placement still may.
        for p in ["late", "late2"] {
            assert_eq!(
                league.player(p, Some(1)).await.expect("view").bracket,
                None,
                "{p}"
            );
        }
        submit_at(&league, "early", 2, "2026-01-05T23:59:59Z").await;
        clock.set(t("2026-01-06T00:00:06Z"));
        let r = league
            .rollover(None, leaguekit::RolloverOptions::default())
            .await
            .expect("rollover");
        assert_eq!(r.closed.len(), 1);
        assert_eq!(r.closed[0].totals.players, 1);
    }
);

// A season that keeps fewer periods than its idempotency window spans still answers
// a retry within the window from its record, after the period closed and its
// retention ran out.
on_both!(a_retry_is_answered_for_the_whole_window, |league, clock| {
    let text = season_text(
        &league.season().key_prefix,
        "increment",
        100,
        "on_first_score",
    )
    .replace("name = \"conf\"", "name = \"window\"")
    .replace("idempotency_window = \"1h\"", "idempotency_window = \"4d\"")
        + "\n[retention]\nperiods = 1\n";
    let season = Season::from_toml(&text, "window.toml").expect("season");
    let short = League::with_clock(season, league.store().clone(), Arc::new(clock.clone()));
    let once = || {
        SubmitOptions::default()
            .request_id("q1")
            .at(t("2026-01-05T12:00:00Z"))
    };
    let first = short.submit("r", 5, once()).await.expect("first");
    assert!(first.applied);
    for day in [
        "2026-01-06T00:01:00Z",
        "2026-01-07T00:01:00Z",
        "2026-01-08T00:01:00Z",
    ] {
        clock.set(t(day));
        short
            .rollover(None, leaguekit::RolloverOptions::default())
            .await
            .expect("rollover");
        // Somebody plays every period, so each close applies the retention.
        short
            .submit("x", 1, SubmitOptions::default())
            .await
            .expect("play");
    }
    // Three days after the close, one period kept: the retry is within the window.
    // It comes to another process (which has not seen the player placed).
    let other = League::with_clock(
        short.season().clone(),
        league.store().clone(),
        Arc::new(clock.clone()),
    );
    let again = other.submit("r", 5, once()).await.expect("retry answered");
    assert!(!again.applied);
    assert_eq!((again.period, again.score), (1, 5));
});

// A value that can never fit (its size alone is past max_score) is refused before any
// write, and still names the player's real current score, alone and in a batch; for a
// player with no score it names 0.
on_both!(
    a_hopeless_value_names_the_real_current_score,
    |league, clock| {
        let _ = &clock;
        submit_at(&league, "p", 121, "2026-01-05T12:00:00Z").await;
        let current = |e: InputError| match e {
            InputError::Score(leaguekit::season::packing::ScoreRangeError::OutOfRange {
                current,
                result,
                ..
            }) => (current, result),
            other => panic!("expected score_out_of_range, got {other:?}"),
        };
        let e = refused(
            league
                .submit("p", -2_000_000, SubmitOptions::default())
                .await,
        );
        assert_eq!(current(e.clone()), (121, 121 - 2_000_000), "{e}");
        assert!(e.to_string().contains("current 121"), "{e}");
        let batch = league
            .submit_many(&[
                BatchItem::new("p", 2_000_000),
                BatchItem::new("nobody", 2_000_000),
            ])
            .await;
        let e = |r: &Result<leaguekit::Submission, Error>| match r {
            Err(Error::Input(i)) => current(i.clone()),
            other => panic!("expected a refusal, got {other:?}"),
        };
        assert_eq!(e(&batch[0]), (121, 121 + 2_000_000));
        assert_eq!(e(&batch[1]), (0, 2_000_000));
        assert_eq!(
            league.player("p", None).await.expect("view").score,
            Some(121)
        );
        assert_eq!(
            league.player("nobody", None).await.expect("view").bracket,
            None
        );
    }
);

// A profile change sets and removes fields in one step, on the stored profile or
// replacing it whole; the copy cached beside the board follows, and a refused change
// writes nothing.
on_both!(
    profile_changes_remove_and_replace_fields,
    |league, _clock| {
        use leaguekit::store::ProfileChange;
        submit_at(&league, "p", 5, "2026-01-05T12:00:00Z").await;
        league
            .set_profile(
                "p",
                &[
                    ("name".into(), "Pat".into()),
                    ("avatar".into(), "p.png".into()),
                ],
            )
            .await
            .expect("set");
        let got = league
            .change_profile(
                "p",
                &ProfileChange::default().remove("avatar").set("name", "Pa"),
            )
            .await
            .expect("patch");
        assert_eq!(serde_json::json!(got), serde_json::json!({"name": "Pa"}));
        assert_eq!(
            cached_profile(&league).await,
            serde_json::json!({"name": "Pa"})
        );
        // Removing a field that is not set is no error.
        league
            .change_profile("p", &ProfileChange::default().remove("avatar"))
            .await
            .expect("remove absent");
        let got = league
            .change_profile(
                "p",
                &ProfileChange::replace(&[("avatar".into(), "a".into())]),
            )
            .await
            .expect("replace");
        assert_eq!(serde_json::json!(got), serde_json::json!({"avatar": "a"}));
        assert_eq!(
            cached_profile(&league).await,
            serde_json::json!({"avatar": "a"})
        );
        // Refused: an unknown field, or too large; nothing changes.
        let e = league
            .change_profile(
                "p",
                &ProfileChange::replace(&[("email".into(), "x".into())]),
            )
            .await
            .unwrap_err();
        assert!(matches!(
            input_err(e),
            InputError::UnknownProfileField { .. }
        ));
        let e = league
            .change_profile("p", &ProfileChange::default().remove("email"))
            .await
            .unwrap_err();
        assert!(matches!(
            input_err(e),
            InputError::UnknownProfileField { .. }
        ));
        let e = league
            .change_profile(
                "p",
                &ProfileChange::replace(&[("name".into(), "x".repeat(100))]),
            )
            .await
            .unwrap_err();
        assert!(matches!(input_err(e), InputError::ProfileTooLarge { .. }));
        assert_eq!(
            serde_json::json!(league.profile("p").await.expect("profile")),
            serde_json::json!({"avatar": "a"})
        );
        // Replacing with nothing clears it.
        let got = league
            .change_profile("p", &ProfileChange::replace(&[]))
            .await
            .expect("clear");
        assert!(got.is_empty());
        assert_eq!(cached_profile(&league).await, serde_json::json!({}));
    }
);

/// The profile cached beside bronze bracket 1's board for its first entry.
async fn cached_profile<S: Store>(league: &League<S>) -> serde_json::Value {
    let s = league
        .standings("bronze", 1, None, 0, 10)
        .await
        .expect("standings");
    serde_json::json!(s.entries[0].profile)
}
