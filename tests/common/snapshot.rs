//! Copies of a league's data, and what its players observe, for the tests that
//! compare a disturbed run (killed processes, moving slots, a stopped node) with an
//! undisturbed one on a copy of the same data.
//!
//! A copy is every key that starts with one key prefix, DUMPed and RESTOREd (with its
//! time to live) under another prefix on the same store: a cluster has no databases
//! to SELECT, and a season's hash tags do not contain the prefix, so the copy lives in
//! the same slots as the original. Nothing here knows the key layout beyond "every
//! key starts with the season's `key_prefix`".

use std::collections::BTreeMap;

use futures::StreamExt;
use leaguekit::{League, RedisConnection, RedisOptions, RedisStore};
use redis::Value;

/// Copies every key that starts with `from` to the same key starting with `to`
/// instead (DUMP, PTTL, RESTORE ... REPLACE). `url` is the store (RESTORE is routed by
/// key on a cluster); `nodes` are single-node URLs of every node whose keys must be
/// scanned (every master of a cluster, or `url` itself). A test-only SCAN of the
/// test's own prefix; leaguekit itself never scans. Returns how many keys were
/// copied. `from` and `to` must not start with one another.
pub async fn copy_prefix(
    url: &str,
    nodes: &[String],
    options: &RedisOptions,
    from: &str,
    to: &str,
) -> usize {
    assert!(
        !from.starts_with(to) && !to.starts_with(from),
        "copy {from:?} to {to:?}: one prefix starts with the other"
    );
    let writer = RedisConnection::open(url, options)
        .await
        .unwrap_or_else(|e| panic!("connect the copier to {url}: {e}"));
    // SCAN may return a key more than once while the keyspace rehashes (and the
    // restores below grow the same keyspace): count each key once.
    let mut seen = std::collections::HashSet::new();
    for node_url in nodes {
        let mut node = RedisConnection::open(node_url, options)
            .await
            .unwrap_or_else(|e| panic!("connect to node {node_url}: {e}"));
        let mut cursor = 0u64;
        loop {
            let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg(format!("{from}*"))
                .arg("COUNT")
                .arg(2000)
                .query_async(&mut node)
                .await
                .expect("scan");
            let replies: Vec<Value> = if keys.is_empty() {
                Vec::new()
            } else {
                let mut pipe = redis::pipe();
                for key in &keys {
                    pipe.cmd("DUMP").arg(key).cmd("PTTL").arg(key);
                }
                pipe.query_async(&mut node).await.expect("dump")
            };
            let mut restores = Vec::new();
            for (key, pair) in keys.iter().zip(replies.chunks(2)) {
                let (Value::BulkString(dump), Value::Int(ttl)) = (&pair[0], &pair[1]) else {
                    continue; // expired between SCAN and DUMP
                };
                if *ttl == -2 || !seen.insert(key.clone()) {
                    continue;
                }
                let new_key = format!("{to}{}", &key[from.len()..]);
                // PTTL -1 (no expiry) is RESTORE's 0.
                restores.push((new_key, dump.clone(), (*ttl).max(0)));
            }
            let mut done = futures::stream::iter(restores)
                .map(|(key, dump, ttl)| {
                    let mut w = writer.clone();
                    async move {
                        redis::cmd("RESTORE")
                            .arg(&key)
                            .arg(ttl)
                            .arg(dump)
                            .arg("REPLACE")
                            .query_async::<()>(&mut w)
                            .await
                            .unwrap_or_else(|e| panic!("restore {key}: {e}"))
                    }
                })
                .buffer_unordered(64);
            while done.next().await.is_some() {}
            cursor = next;
            if cursor == 0 {
                break;
            }
        }
    }
    seen.len()
}

/// What every player in `players` can observe of a closed `period`: their outcome
/// record (without its cursor, which is only a position) and their rewards. Panics
/// unless every one of them has an outcome.
pub async fn observe_outcomes(
    league: &League<RedisStore>,
    period: u64,
    players: &[String],
) -> BTreeMap<String, String> {
    let mut seen = BTreeMap::new();
    let mut cursor: Option<String> = None;
    loop {
        let page = league
            .outcomes(period, cursor.as_deref(), 5000)
            .await
            .expect("outcomes");
        let Some(last) = page.last() else { break };
        cursor = Some(last.cursor.clone());
        for r in page {
            let line = format!(
                "{} {}/{:?}/{} rank {} score {} {:?} -> {} reward {:?}",
                r.period,
                r.tier,
                r.cohort,
                r.bracket,
                r.rank,
                r.score,
                r.outcome,
                r.next_tier,
                r.reward
            );
            seen.insert(r.player.clone(), line);
        }
    }
    assert_eq!(
        seen.len(),
        players.len(),
        "every player has an outcome in period {period}"
    );
    let mut rewards = futures::stream::iter(players)
        .map(|p| async move {
            let rewards = league.rewards(p).await.expect("rewards");
            (p, rewards)
        })
        .buffer_unordered(32);
    while let Some((p, rewards)) = rewards.next().await {
        let line = seen
            .get_mut(p)
            .unwrap_or_else(|| panic!("{p} has no outcome in period {period}"));
        line.push_str(&format!(" rewards={rewards:?}"));
    }
    seen
}

/// The first key whose values differ, with both values, for failure messages.
pub fn first_difference(
    got: &BTreeMap<String, String>,
    want: &BTreeMap<String, String>,
) -> Option<(String, Option<String>, Option<String>)> {
    got.keys()
        .chain(want.keys())
        .find(|k| got.get(*k) != want.get(*k))
        .map(|k| (k.clone(), got.get(k).cloned(), want.get(k).cloned()))
}
