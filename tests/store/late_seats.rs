//! Reserved late seats (`[brackets] early_cap`, `late_after`) on every store: brackets
//! fill to `early_cap` until the late point by the league clock, late joiners top the
//! tier's existing brackets up in turn before a new bracket opens, a stepped-back
//! clock never turns a tier early again, cohorts count their own seats, hundreds of
//! concurrent late joins never exceed `size`, and a Redis that loses its data under
//! running game servers never overfills a bracket.

use crate::common;

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use leaguekit::season::seats::{Caps, TierJoins};
use leaguekit::{
    BatchItem, JoinItem, JoinOptions, League, ManualClock, MemoryStore, RedisOptions, RedisStore,
    Season, Store, SubmitOptions,
};

fn t(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s)
        .expect("test time")
        .with_timezone(&Utc)
}

/// A daily season from 2026-01-05 whose brackets of `size` fill to `cap` until
/// `late_after` (noon for "50%"); `extra` is appended.
fn season(prefix: &str, size: u32, cap: u32, extra: &str) -> Season {
    Season::from_toml(&season_text(prefix, size, cap, extra), "late.toml")
        .expect("test season is valid")
}

fn season_text(prefix: &str, size: u32, cap: u32, extra: &str) -> String {
    format!(
        r#"
name = "late"
key_prefix = "{prefix}"

[schedule]
timezone = "UTC"
period = "daily"
start = "2026-01-05T00:00:00Z"

[brackets]
size = {size}
early_cap = {cap}
late_after = "50%"
join = "explicit"

[scoring]
max_score = 1_000_000

[[tiers]]
name = "bronze"
promote = 1
demote = 0

[[tiers]]
name = "silver"
promote = 0
demote = 1
{extra}
"#
    )
}

/// Runs `$body` with `$make(size, cap, extra)` building a league (a fresh key prefix
/// each) on the embedded store and on each Redis form, all on one injected clock.
macro_rules! on_stores {
    (@redis $form:ident, $store:ident, $name:ident, |$make:ident, $clock:ident| $body:block) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $form() {
            let $clock = ManualClock::new(t("2026-01-05T06:00:00Z"));
            let store = common::$store().await;
            let c = $clock.clone();
            let $make = move |size: u32, cap: u32, extra: &str| {
                let prefix = common::unique_prefix(stringify!($name));
                Arc::new(League::with_clock(
                    season(&prefix, size, cap, extra),
                    store.clone(),
                    Arc::new(c.clone()),
                ))
            };
            $body
        }
    };
    ($name:ident, |$make:ident, $clock:ident| $body:block) => {
        mod $name {
            use super::*;

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn memory() {
                let $clock = ManualClock::new(t("2026-01-05T06:00:00Z"));
                let store = MemoryStore::with_clock(Arc::new($clock.clone()));
                let c = $clock.clone();
                let $make = move |size: u32, cap: u32, extra: &str| {
                    Arc::new(League::with_clock(
                        season(&common::unique_prefix("lklate"), size, cap, extra),
                        store.clone(),
                        Arc::new(c.clone()),
                    ))
                };
                $body
            }

            on_stores!(@redis redis, redis_store, $name, |$make, $clock| $body);
            on_stores!(@redis cluster, cluster_store, $name, |$make, $clock| $body);
            on_stores!(@redis tls, tls_store, $name, |$make, $clock| $body);
        }
    };
}

/// Joins `players` one by one; their brackets in order.
async fn join_each<S: Store>(league: &League<S>, players: &[String]) -> Vec<u32> {
    let mut out = Vec::new();
    for p in players {
        out.push(league.join(p, None).await.expect("join").bracket);
    }
    out
}

fn names(prefix: &str, range: std::ops::RangeInclusive<u32>) -> Vec<String> {
    range.map(|i| format!("{prefix}{i:03}")).collect()
}

/// Players per bracket of bronze in the running period (the boards, read back).
async fn board_sizes<S: Store>(league: &League<S>, cohort: Option<&str>) -> Vec<usize> {
    let counts = league.counts(None).await.expect("counts");
    let bronze = counts.iter().find(|c| c.tier == "bronze").expect("bronze");
    let brackets = match cohort {
        None => bronze.brackets,
        Some(c) => {
            bronze
                .cohorts
                .iter()
                .find(|x| x.cohort.as_deref() == Some(c))
                .expect("cohort")
                .brackets
        }
    };
    let mut out = Vec::new();
    for b in 1..=brackets {
        let page = league
            .standings("bronze", b as u32, None, 0, 100)
            .await
            .expect("standings");
        assert_eq!(page.players as usize, page.entries.len());
        out.push(page.entries.len());
    }
    out
}

on_stores!(
    late_joiners_top_up_the_brackets_in_turn_then_open_new,
    |make, clock| {
        let league = make(10, 8, "");
        // Before noon: brackets fill to 8.
        let early = join_each(&league, &names("e", 1..=20)).await;
        assert_eq!(early, [[1; 8].as_slice(), &[2; 8], &[3; 4]].concat());
        clock.set(t("2026-01-05T12:00:00Z"));
        // The first four late joiners bring the last early bracket to 8.
        assert_eq!(join_each(&league, &names("l", 1..=4)).await, [3, 3, 3, 3]);
        // Then one seat each in turn (a batch here, counted in its order).
        let items: Vec<JoinItem> = names("l", 5..=10).into_iter().map(JoinItem::new).collect();
        let batch: Vec<u32> = league
            .join_many(&items)
            .await
            .into_iter()
            .map(|r| r.expect("batch join").bracket)
            .collect();
        assert_eq!(batch, [1, 2, 3, 1, 2, 3]);
        // Every early bracket is full: a new bracket opens, of the full size.
        assert_eq!(join_each(&league, &names("l", 11..=12)).await, [4, 4]);
        // A join again answers the same bracket and counts nobody.
        assert_eq!(league.join("e020", None).await.expect("again").bracket, 3);
        assert_eq!(league.join("l005", None).await.expect("again").bracket, 1);
        assert_eq!(board_sizes(&league, None).await, [10, 10, 10, 2]);
        // The rollover finds and closes every bracket the counters opened (nobody
        // scored: every placed player is idle).
        clock.set(t("2026-01-06T00:00:05Z"));
        let report = league
            .rollover(None, leaguekit::RolloverOptions::default())
            .await
            .expect("rollover");
        assert_eq!(report.closed.len(), 1);
        assert_eq!(report.closed[0].brackets, 4);
        assert_eq!(report.closed[0].totals.idle, 32);
    }
);

on_stores!(
    the_late_point_is_the_league_clock_and_stays,
    |make, clock| {
        let league = make(3, 2, "");
        // One millisecond before noon is early: brackets of 2.
        clock.set(t("2026-01-05T11:59:59.999Z"));
        assert_eq!(join_each(&league, &names("a", 1..=3)).await, [1, 1, 2]);
        // Noon exactly is late: top up bracket 2, then one each in turn, then a new one.
        clock.set(t("2026-01-05T12:00:00Z"));
        assert_eq!(join_each(&league, &names("b", 1..=4)).await, [2, 1, 2, 3]);
        // A clock stepped back before noon does not make the tier early again: the new
        // bracket keeps filling to the full size.
        clock.set(t("2026-01-05T11:00:00Z"));
        assert_eq!(join_each(&league, &names("c", 1..=3)).await, [3, 3, 4]);
        assert_eq!(board_sizes(&league, None).await, [3, 3, 3, 1]);
        // Each period starts early again.
        clock.set(t("2026-01-06T01:00:00Z"));
        assert_eq!(join_each(&league, &names("d", 1..=3)).await, [1, 1, 2]);
    }
);

on_stores!(cohorts_count_their_own_late_seats, |make, clock| {
    let league = make(3, 2, "[cohorts]\nvalues = [\"eu\", \"na\"]\n");
    let join = |p: String, c: &'static str| {
        let league = league.clone();
        async move {
            league
                .join_with(&p, JoinOptions::default().cohort(c))
                .await
                .expect("join")
                .bracket
        }
    };
    for (p, want) in [("e1", 1), ("e2", 1), ("e3", 2)] {
        assert_eq!(join(p.into(), "eu").await, want, "{p}");
    }
    assert_eq!(join("n1".into(), "na").await, 1);
    clock.set(t("2026-01-05T18:00:00Z"));
    // eu: two early brackets (2 + 1); na: one (1).
    assert_eq!(join("e4".into(), "eu").await, 2);
    assert_eq!(join("n2".into(), "na").await, 1);
    assert_eq!(join("n3".into(), "na").await, 1);
    assert_eq!(join("n4".into(), "na").await, 2);
    assert_eq!(join("e5".into(), "eu").await, 1);
    assert_eq!(board_sizes(&league, Some("eu")).await.len(), 2);
    let counts = league.counts(None).await.expect("counts");
    let cohorts: BTreeMap<Option<String>, u64> = counts[0]
        .cohorts
        .iter()
        .map(|c| (c.cohort.clone(), c.brackets))
        .collect();
    assert_eq!(
        cohorts,
        BTreeMap::from([(Some("eu".to_owned()), 2), (Some("na".to_owned()), 2)])
    );
});

on_stores!(
    hundreds_of_concurrent_late_joins_never_exceed_size,
    |make, clock| {
        let league = make(10, 8, "");
        let early = names("e", 1..=45);
        let items: Vec<JoinItem> = early.iter().cloned().map(JoinItem::new).collect();
        for r in league.join_many(&items).await {
            r.expect("early join");
        }
        clock.set(t("2026-01-05T20:00:00Z"));
        // 300 late joins at once: 150 single joins and 30 batches of 5, on many tasks.
        let mut tasks = Vec::new();
        for i in 0..150u32 {
            let league = league.clone();
            tasks.push(tokio::spawn(async move {
                let p = format!("s{i:03}");
                let b = league.join(&p, None).await.expect("late join").bracket;
                vec![(p, b)]
            }));
        }
        for k in 0..30u32 {
            let league = league.clone();
            tasks.push(tokio::spawn(async move {
                let players: Vec<String> = (0..5).map(|j| format!("m{k:02}{j}")).collect();
                let items: Vec<JoinItem> = players.iter().cloned().map(JoinItem::new).collect();
                let placed = league.join_many(&items).await;
                players
                    .into_iter()
                    .zip(placed)
                    .map(|(p, r)| (p, r.expect("late batch join").bracket))
                    .collect::<Vec<_>>()
            }));
        }
        let mut placed: BTreeMap<String, u32> = BTreeMap::new();
        for task in tasks {
            for (p, b) in task.await.expect("task") {
                assert!(placed.insert(p, b).is_none(), "one placement per player");
            }
        }
        assert_eq!(placed.len(), 300);
        // The boards hold what the rule gives 45 early and 300 late joins, in any order:
        // the six early brackets full, then new brackets of 10, the last with 5.
        let caps = Caps {
            size: 10,
            early_cap: 8,
        };
        let mut rule = TierJoins::default();
        let mut want: BTreeMap<u64, usize> = BTreeMap::new();
        for i in 0..345 {
            *want.entry(rule.count(i >= 45, caps)).or_default() += 1;
        }
        let sizes = board_sizes(&league, None).await;
        assert_eq!(sizes, want.values().copied().collect::<Vec<_>>());
        assert!(sizes.iter().all(|&s| s <= 10));
        assert_eq!(sizes.iter().sum::<usize>(), 345);
        // Every late joiner is on the board of the bracket they were told.
        for (p, b) in placed.iter().take(40) {
            let view = league.player(p, None).await.expect("player view");
            assert_eq!(view.bracket, Some(*b), "{p}");
        }
    }
);

on_stores!(the_stores_place_as_the_rule_does, |make, clock| {
    // Joins one by one and in batches of mixed sizes, early then late, against the
    // rule of src/season/seats.rs, for many shapes.
    let mut shapes = 0;
    for size in [2u32, 3, 5, 7] {
        for cap in 1..size {
            for early in [0, 1, cap, 2 * cap + 1] {
                let late = 3 * size + 2;
                clock.set(t("2026-01-05T06:00:00Z"));
                let league = make(size, cap, "");
                let caps = Caps::new(size, Some(cap));
                let mut rule = TierJoins::default();
                let mut i = 0u32;
                let mut batch = 1usize;
                while i < early + late {
                    if i == early {
                        clock.set(t("2026-01-05T13:00:00Z"));
                    }
                    // A batch never crosses the late point (one clock per call).
                    let end = if i < early { early } else { early + late };
                    let n = (batch as u32).min(end - i);
                    let players: Vec<String> = (i..i + n).map(|k| format!("p{k:03}")).collect();
                    let items: Vec<JoinItem> = players.iter().cloned().map(JoinItem::new).collect();
                    let got: Vec<u32> = if n == 1 {
                        vec![league.join(&players[0], None).await.expect("join").bracket]
                    } else {
                        league
                            .join_many(&items)
                            .await
                            .into_iter()
                            .map(|r| r.expect("join").bracket)
                            .collect()
                    };
                    let want: Vec<u32> = (i..i + n)
                        .map(|k| rule.count(k >= early, caps) as u32)
                        .collect();
                    assert_eq!(
                        got, want,
                        "size {size}, cap {cap}, {early} early, joins {i}.."
                    );
                    i += n;
                    batch = batch % 4 + 1;
                }
                shapes += 1;
            }
        }
    }
    assert_eq!(shapes, 4 * (1 + 2 + 4 + 6));
});

async fn connect(server: &common::RedisServer) -> RedisStore {
    RedisStore::connect(&server.url(), RedisOptions::default())
        .await
        .expect("connect")
}

/// Redis loses its data (FLUSHALL, a restart without persistence) while game servers
/// keep running with cached placements, once in the early phase and once in the late
/// one, and then only the period's counters and assignments (a failover of the node
/// owning its slot) while its boards survive: no board ever holds more than `size`,
/// and every board is one the counters list.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn data_loss_under_running_game_servers_never_overfills() {
    let server = common::RedisServer::start(&[]);
    let clock = ManualClock::new(t("2026-01-05T06:00:00Z"));
    // Players join by their first score here, so a cached player is placed again.
    let text = season_text(&common::unique_prefix("lateloss"), 4, 3, "")
        .replace("join = \"explicit\"", "join = \"on_first_score\"");
    let season = Season::from_toml(&text, "late.toml").expect("season");
    // Two game servers of one league.
    let servers = [
        League::with_clock(
            season.clone(),
            connect(&server).await,
            Arc::new(clock.clone()),
        ),
        League::with_clock(season, connect(&server).await, Arc::new(clock.clone())),
    ];
    let mut con = redis::Client::open(server.url())
        .expect("client")
        .get_multiplexed_async_connection()
        .await
        .expect("connect");
    let score = |i: usize, p: String, v: i64| {
        let league = &servers[i % 2];
        async move {
            league
                .submit(&p, v, SubmitOptions::default())
                .await
                .unwrap_or_else(|e| panic!("submit {p}: {e}"))
                .bracket
        }
    };
    // Every board of bronze holds at most 4, and together they hold `players`.
    let check = |players: usize| {
        let league = &servers[0];
        async move {
            let counts = league.counts(None).await.expect("counts");
            let mut seen = 0;
            for b in 1..=counts[0].brackets as u32 {
                let s = league
                    .standings("bronze", b, None, 0, 100)
                    .await
                    .expect("standings");
                assert!(s.players <= 4, "bracket {b} holds {} players", s.players);
                seen += s.players as usize;
            }
            assert_eq!(seen, players, "every board is one the counters list");
        }
    };
    let mut everyone = Vec::new();
    for (phase, at) in [("e", "2026-01-05T06:00:00Z"), ("l", "2026-01-05T18:00:00Z")] {
        clock.set(t(at));
        let first = names(phase, 1..=9);
        for (i, p) in first.iter().enumerate() {
            servers[i % 2].join(p, None).await.expect("join");
            score(i, p.clone(), 1).await;
        }
        everyone.extend(first.clone());
        let () = redis::cmd("FLUSHALL")
            .query_async(&mut con)
            .await
            .expect("flushall");
        // Cached players score again (the boards are written anew), new players
        // arrive one by one and in batches, on both servers.
        for (i, p) in everyone.iter().enumerate() {
            score(i + 1, p.clone(), 2).await;
        }
        let more = names(&format!("{phase}n"), 1..=7);
        for (i, p) in more[..3].iter().enumerate() {
            score(i, p.clone(), 3).await;
        }
        let batch: Vec<BatchItem> = more[3..]
            .iter()
            .map(|p| BatchItem::new(p.clone(), 4))
            .collect();
        for r in servers[1].submit_many(&batch).await {
            r.expect("batch after the loss");
        }
        everyone.extend(more);
        check(everyone.len()).await;
    }

    // Only the period's counters and assignments are lost, in the late phase: the
    // surviving boards are full (or topped up), so new late joiners land past them.
    let period = servers[0].keys().period(1);
    let mut del = redis::cmd("DEL");
    for p in &everyone {
        del.arg(period.assign(p));
    }
    let () = del
        .arg(&period.joins)
        .query_async(&mut con)
        .await
        .expect("del");
    let before = servers[0].counts(None).await.expect("counts")[0].brackets;
    assert_eq!(before, 0, "the counters are gone");
    for (i, p) in names("z", 1..=6).into_iter().enumerate() {
        score(i, p.clone(), 5).await;
        everyone.push(p);
    }
    check(everyone.len()).await;
}
