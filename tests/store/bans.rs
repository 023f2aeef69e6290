//! Bans on every store (memory, Redis, a Redis Cluster, TLS): a banned player leaves
//! the board at once, is refused joins and score updates, takes nothing at the close,
//! stays banned across a rollover, and comes back after an unban or the ban's end; a
//! ban racing the player's joins never leaves them on a board; bad input writes
//! nothing.

use crate::common;

use std::sync::Arc;

use chrono::{DateTime, Utc};
use leaguekit::operator::{Actor, AuditQuery};
use leaguekit::{
    Error, InputError, League, ManualClock, MemoryStore, Season, Store, SubmitOptions,
};

fn t(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s)
        .expect("test time")
        .with_timezone(&Utc)
}

fn season(prefix: &str) -> Season {
    let text = format!(
        r#"
name = "bans"
key_prefix = "{prefix}"

[schedule]
timezone = "UTC"
period = "daily"
start = "2026-01-05T00:00:00Z"

[brackets]
size = 100

[scoring]
mode = "increment"
max_score = 1_000_000
time_resolution = "1s"

[[tiers]]
name = "bronze"
promote = 1
demote = 0
rewards = [{{ ranks = "1", grant = "gems:100" }}]

[[tiers]]
name = "silver"
promote = 0
demote = 1
"#
    );
    Season::from_toml(&text, "bans.toml").expect("test season is valid")
}

/// Runs `$body` with a league on each store.
macro_rules! on_every_store {
    (@redis $form:ident, $store:ident, $name:ident, |$league:ident, $clock:ident| $body:block) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $form() {
            let $clock = ManualClock::new(t("2026-01-05T12:00:00Z"));
            let store = common::$store().await;
            let prefix = common::unique_prefix(stringify!($name));
            let $league = Arc::new(League::with_clock(
                season(&prefix),
                store,
                Arc::new($clock.clone()),
            ));
            $body
        }
    };
    ($name:ident, |$league:ident, $clock:ident| $body:block) => {
        mod $name {
            use super::*;

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn memory() {
                let $clock = ManualClock::new(t("2026-01-05T12:00:00Z"));
                let store = MemoryStore::with_clock(Arc::new($clock.clone()));
                let $league = Arc::new(League::with_clock(
                    season("lkmem"),
                    store,
                    Arc::new($clock.clone()),
                ));
                $body
            }

            on_every_store!(@redis redis, redis_store, $name, |$league, $clock| $body);
            on_every_store!(@redis cluster, cluster_store, $name, |$league, $clock| $body);
            on_every_store!(@redis tls, tls_store, $name, |$league, $clock| $body);
        }
    };
}

fn ops() -> Actor {
    Actor::new("ops").expect("actor")
}

async fn score<S: Store>(l: &League<S>, player: &str, value: i64) -> Result<u64, Error> {
    l.submit(player, value, SubmitOptions::default())
        .await
        .map(|s| s.score)
}

/// `(player, rank, score)` of bronze bracket 1 in `period`.
async fn board<S: Store>(l: &League<S>, period: u64) -> Vec<(String, u64, u64)> {
    l.standings("bronze", 1, Some(period), 0, 100)
        .await
        .expect("standings")
        .entries
        .into_iter()
        .map(|e| (e.player, e.rank, e.score))
        .collect()
}

fn banned(r: Result<impl std::fmt::Debug, Error>) -> Option<DateTime<Utc>> {
    match r {
        Err(Error::Input(InputError::Banned { until, .. })) => until,
        other => panic!("expected banned, got {other:?}"),
    }
}

on_every_store!(a_ban_takes_the_player_off_the_board, |league, _clock| {
    for (p, v) in [("a", 30), ("b", 20), ("c", 10)] {
        score(&league, p, v).await.expect("score");
    }
    let ban = league
        .operator()
        .ban(&ops(), "b", "aimbot", None)
        .await
        .expect("ban");
    assert_eq!(ban.until, None);
    // The others' ranks close up.
    assert_eq!(
        board(&league, 1).await,
        vec![("a".to_owned(), 1, 30), ("c".to_owned(), 2, 10)]
    );
    // Joins and updates are refused, from this process (whose cache knows b's
    // bracket) and from a fresh one.
    assert_eq!(banned(league.join("b", None).await), None);
    assert_eq!(banned(score(&league, "b", 5).await), None);
    let fresh = League::with_clock(
        league.season().clone(),
        league.context().store().clone(),
        league.context().clock().clone(),
    );
    assert_eq!(banned(score(&fresh, "b", 5).await), None);
    assert_eq!(banned(fresh.join("b", None).await), None);
    assert_eq!(board(&league, 1).await.len(), 2);
    // The bracket's place is not given to anyone else: a new player takes the 4th.
    score(&league, "d", 1).await.expect("d");
    assert_eq!(league.player("d", None).await.expect("d").bracket, Some(1));
    assert_eq!(
        league.counts(None).await.expect("counts")[0].players,
        4,
        "the join counter keeps b's place"
    );
    // Listed and audited.
    let bans = league.operator().bans().await.expect("bans");
    assert_eq!(bans.len(), 1);
    assert_eq!(bans[0].player, "b");
    assert_eq!(
        league.operator().ban_of("b").await.expect("ban_of"),
        Some(ban)
    );
    let audit = league
        .operator()
        .audit(&AuditQuery::default().player("b"))
        .await
        .expect("audit");
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0].action, "ban");
    assert_eq!(audit[0].reason.as_deref(), Some("aimbot"));
    assert_eq!(audit[0].actor, "ops");
});

on_every_store!(the_close_gives_a_banned_player_nothing, |league, clock| {
    score(&league, "cheat", 900).await.expect("cheat");
    score(&league, "honest", 20).await.expect("honest");
    league
        .operator()
        .ban(&ops(), "cheat", "impossible score", None)
        .await
        .expect("ban");
    clock.set(t("2026-01-06T00:01:00Z"));
    league
        .rollover(None, Default::default())
        .await
        .expect("rollover");
    // The runner-up wins the bracket: promoted and rewarded.
    let last = league
        .last_outcome("honest")
        .await
        .expect("last")
        .expect("outcome");
    assert_eq!((last.rank, last.next_tier.as_str()), (1, "silver"));
    assert_eq!(league.rewards("honest").await.expect("rewards").len(), 1);
    // The banned player never reached the board: no outcome, no reward.
    assert_eq!(league.last_outcome("cheat").await.expect("last"), None);
    assert!(league.rewards("cheat").await.expect("rewards").is_empty());
    // The ban survives the rollover.
    assert_eq!(banned(league.join("cheat", None).await), None);
    assert_eq!(banned(score(&league, "cheat", 1).await), None);
    // Lifted, the player comes back in the tier the idle policy gives a player who
    // skipped the period (`stay`: bronze), with no score.
    let lifted = league
        .operator()
        .unban(&ops(), "cheat", Some("appeal accepted"))
        .await
        .expect("unban");
    assert!(lifted.is_some());
    let placed = league.join("cheat", None).await.expect("join after unban");
    assert_eq!((placed.period, placed.tier.as_str()), (2, "bronze"));
    assert!(league.operator().bans().await.expect("bans").is_empty());
    let actions: Vec<String> = league
        .operator()
        .audit(&AuditQuery::default())
        .await
        .expect("audit")
        .into_iter()
        .map(|e| e.action)
        .collect();
    assert_eq!(actions, ["ban", "unban"]);
});

on_every_store!(
    an_unban_puts_the_player_back_without_their_score,
    |league, _clock| {
        score(&league, "a", 50).await.expect("a");
        score(&league, "b", 10).await.expect("b");
        league
            .operator()
            .ban(&ops(), "a", "review", None)
            .await
            .expect("ban");
        league
            .operator()
            .unban(&ops(), "a", None)
            .await
            .expect("unban");
        // Same period, same bracket, back as never-scored.
        let placed = league.join("a", None).await.expect("join");
        assert_eq!((placed.tier.as_str(), placed.bracket), ("bronze", 1));
        assert_eq!(board(&league, 1).await[1], ("a".to_owned(), 2, 0));
        assert_eq!(score(&league, "a", 5).await.expect("score"), 5);
        // Unbanning again is harmless.
        let again = league
            .operator()
            .unban(&ops(), "a", None)
            .await
            .expect("unban");
        assert_eq!(again, None);
    }
);

on_every_store!(a_ban_ends_by_the_league_clock, |league, clock| {
    score(&league, "a", 40).await.expect("a");
    score(&league, "b", 10).await.expect("b");
    let until = t("2026-01-05T13:00:00Z");
    league
        .operator()
        .ban(&ops(), "a", "cool-down", Some(until))
        .await
        .expect("ban");
    assert_eq!(banned(score(&league, "a", 1).await), Some(until));
    clock.set(t("2026-01-05T12:59:59Z"));
    assert_eq!(banned(league.join("a", None).await), Some(until));
    clock.set(t("2026-01-05T13:00:00Z"));
    assert_eq!(league.operator().ban_of("a").await.expect("ban_of"), None);
    assert!(league.operator().bans().await.expect("bans").is_empty());
    // Back on the board as never-scored, and playing.
    assert_eq!(score(&league, "a", 3).await.expect("score"), 3);
    assert_eq!(
        board(&league, 1).await,
        vec![("b".to_owned(), 1, 10), ("a".to_owned(), 2, 3)]
    );
});

on_every_store!(a_ban_ends_for_a_player_not_placed_yet, |league, clock| {
    score(&league, "a", 1).await.expect("a");
    clock.set(t("2026-01-06T00:01:00Z"));
    league
        .rollover(None, Default::default())
        .await
        .expect("rollover");
    league
        .operator()
        .ban(&ops(), "a", "cool-down", Some(t("2026-01-06T06:00:00Z")))
        .await
        .expect("ban");
    assert!(banned(league.join("a", None).await).is_some());
    clock.set(t("2026-01-06T06:00:00Z"));
    let placed = league.join("a", None).await.expect("join");
    assert_eq!(placed.period, 2);
});

on_every_store!(bad_bans_write_nothing, |league, _clock| {
    score(&league, "a", 1).await.expect("a");
    let op = league.operator();
    let e = op
        .ban(&ops(), "a", "late", Some(t("2026-01-05T11:00:00Z")))
        .await
        .unwrap_err();
    assert!(
        matches!(e, Error::Input(InputError::BanInPast { .. })),
        "{e:?}"
    );
    let e = op
        .ban(&ops(), "a", "now", Some(t("2026-01-05T12:00:00Z")))
        .await
        .unwrap_err();
    assert!(
        matches!(e, Error::Input(InputError::BanInPast { .. })),
        "{e:?}"
    );
    let e = op.ban(&ops(), "ghost", "who", None).await.unwrap_err();
    assert!(
        matches!(e, Error::Input(InputError::UnknownPlayer { .. })),
        "{e:?}"
    );
    let e = op.unban(&ops(), "ghost", None).await.unwrap_err();
    assert!(
        matches!(e, Error::Input(InputError::UnknownPlayer { .. })),
        "{e:?}"
    );
    assert!(op.ban(&ops(), "a", " ", None).await.is_err());
    assert!(op.ban(&ops(), "", "why", None).await.is_err());
    assert_eq!(op.ban_of("a").await.expect("ban_of"), None);
    assert!(op.bans().await.expect("bans").is_empty());
    assert!(
        op.audit(&AuditQuery::default())
            .await
            .expect("audit")
            .is_empty()
    );
    assert_eq!(board(&league, 1).await.len(), 1);
    assert_eq!(score(&league, "a", 1).await.expect("score"), 2);
});

on_every_store!(
    a_ban_racing_joins_never_leaves_the_player_on_a_board,
    |league, clock| {
        const ROUNDS: usize = 24;
        // Known players (a state of period 1), then period 2, where each round's player
        // joins and scores from several tasks while they are banned.
        for i in 0..ROUNDS {
            score(&league, &format!("p{i}"), 1).await.expect("period 1");
        }
        clock.set(t("2026-01-06T00:01:00Z"));
        league
            .rollover(None, Default::default())
            .await
            .expect("rollover");
        for i in 0..ROUNDS {
            let player = format!("p{i}");
            let mut tasks = Vec::new();
            for k in 0..4 {
                let (l, who) = (league.clone(), player.clone());
                tasks.push(tokio::spawn(async move {
                    // Refusals (banned) are expected; what matters is the end state.
                    if k % 2 == 0 {
                        let _ = l.join(&who, None).await;
                    } else {
                        let _ = l.submit(&who, 1, SubmitOptions::default()).await;
                    }
                }));
                if k == i % 4 {
                    let (l, who) = (league.clone(), player.clone());
                    tasks.push(tokio::spawn(async move {
                        l.operator()
                            .ban(&ops(), &who, "race", None)
                            .await
                            .expect("ban");
                    }));
                }
            }
            for task in tasks {
                task.await.expect("task");
            }
            // Whatever the order: not on the board, and refused from now on.
            let view = league.player(&player, Some(2)).await.expect("view");
            assert_eq!(view.rank, None, "round {i}: {view:?}");
            assert!(banned(league.join(&player, None).await).is_none());
        }
        for tier in ["bronze", "silver"] {
            let page = league
                .standings(tier, 1, Some(2), 0, 100)
                .await
                .expect("standings");
            assert!(
                page.entries.is_empty(),
                "banned players on {tier}: {page:?}"
            );
        }
    }
);
