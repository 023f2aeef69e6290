//! Keys of the wrong type planted at a bracket's keys (by a foreign tool, or by
//! hand): the bracket is reported blocked with the key and the reason, the rest of
//! its period and later periods close, and a later rollover closes it once repaired.

use super::*;

async fn plant(con: &mut redis::aio::MultiplexedConnection, args: &[&str]) {
    let mut del = redis::cmd("DEL");
    del.arg(args[1]);
    let _: i64 = del.query_async(con).await.expect("del");
    let mut cmd = redis::cmd(args[0]);
    for a in &args[1..] {
        cmd.arg(*a);
    }
    let _: redis::Value = cmd.query_async(con).await.expect("plant");
}

#[tokio::test]
async fn a_bracket_with_a_foreign_key_is_blocked_and_the_rest_closes() {
    let server = RedisServer::start(&[]);
    let clock = ManualClock::new(t("2026-01-05T10:00:00Z"));
    let prefix = common::unique_prefix("foreign");
    let league = League::with_clock(
        season(&prefix, "2026-01-05T00:00:00Z", 2, ""),
        connect(&server).await,
        Arc::new(clock.clone()),
    );
    // Two brackets in period 1 and in period 2.
    for (p, v) in [("a", 4), ("b", 3), ("c", 2), ("d", 1)] {
        submit_at(&league, p, v, "2026-01-05T09:00:00Z").await;
    }
    clock.set(t("2026-01-06T09:00:00Z"));
    for (p, v) in [("e", 4), ("f", 3), ("g", 2), ("h", 1)] {
        submit_at(&league, p, v, "2026-01-06T09:00:00Z").await;
    }
    let mut con = raw(&server).await;
    let k = league.keys();
    // Period 1: a hash where bracket 1's outcomes go (SET ... NX did nothing, silently).
    let outcomes = k.bracket(1, "bronze", 1).outcomes;
    plant(&mut con, &["HSET", &outcomes, "x", "1"]).await;
    // Period 2: a zset at bracket 1's lease, a string at bracket 2's board.
    let lease = k.bracket(2, "bronze", 1).lease;
    plant(&mut con, &["ZADD", &lease, "1", "x"]).await;
    let board = k.bracket(2, "bronze", 2).board;
    plant(&mut con, &["SET", &board, "x"]).await;

    clock.set(t("2026-01-08T00:00:10Z"));
    let r = league
        .rollover(None, RolloverOptions::default())
        .await
        .expect("the rollover goes on past the blocked brackets");
    assert_eq!(r.closed_through, 3, "{r:?}");
    let blocked: Vec<(&str, &str)> = r
        .blocked_brackets
        .iter()
        .map(|b| (b.source.as_str(), b.key.as_str()))
        .collect();
    assert_eq!(
        blocked,
        [
            ("1/bronze/1", outcomes.as_str()),
            ("2/bronze/1", lease.as_str()),
            ("2/bronze/2", board.as_str())
        ],
        "{r:?}"
    );
    for b in &r.blocked_brackets {
        assert!(b.error.contains("delete or rename"), "{}", b.error);
    }
    // The rest of period 1 closed (one bracket of two, with its two players).
    assert_eq!(r.closed[0].brackets, 1);
    assert_eq!(r.closed[0].totals.players, 2, "{:?}", r.closed[0]);
    // A later rollover retries and still finds them blocked, closing nothing twice.
    let again = league
        .rollover(None, RolloverOptions::default())
        .await
        .expect("rollover");
    assert_eq!(again.blocked_brackets.len(), 3);
    assert_eq!(again.unblocked_brackets, 0);
    // Repaired, they close: their outcomes are recorded, their rewards granted once.
    for key in [&outcomes, &lease] {
        plant(&mut con, &["DEL", key]).await;
    }
    let repaired = league
        .rollover(None, RolloverOptions::default())
        .await
        .expect("rollover");
    assert_eq!(repaired.unblocked_brackets, 2, "{repaired:?}");
    assert_eq!(repaired.blocked_brackets.len(), 1);
    for p in ["a", "e"] {
        let placed = league.join(p, None).await.expect("join");
        assert_eq!(placed.tier, "silver", "{p}");
        let last = placed.last.expect("last outcome");
        assert_eq!(last.rank, 1, "{p}");
        assert_eq!(placed.pending_rewards.expect("rewards").len(), 1, "{p}");
    }
}
