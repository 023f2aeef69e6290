//! Redis memory per joined player, with and without a profile, and where the bytes go.
//!
//! ```text
//! redis-server --port 6390 --save '' --daemonize yes
//! cargo bench --bench bench_memory -- redis://127.0.0.1:6390/ [PLAYERS]
//! ```
//!
//! Joins PLAYERS players (default 200,000) of the example season under a fresh key
//! prefix and prints INFO used_memory's growth per player; then PLAYERS more under
//! another prefix, each with a two-field profile (`name`, `avatar`) set before the
//! join. For each run it lists every kind of key written (grouped by the key's shape:
//! its hash tag's kind and its name after the tag), with how many keys, their
//! encodings and MEMORY USAGE summed per player. Use a server of its own with the
//! default configuration (hash-max-listpack-entries 128, hash-max-listpack-value 64,
//! zset-max-listpack-entries 128), nothing else on it.

#[allow(dead_code)] // each benchmark uses part of it
mod common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use chrono::Utc;
use futures::StreamExt;
use leaguekit::{League, RedisOptions, RedisStore};

/// The kind of a key: its hash tag's kind (season, period, bracket, player, player
/// bucket) and the first part of its name after the tag.
fn kind(key: &str) -> String {
    let (Some(open), Some(close)) = (key.find('{'), key.find('}')) else {
        return key.to_owned();
    };
    let tag = &key[open + 1..close];
    let parts: Vec<&str> = tag.split('/').collect();
    let group = match parts.as_slice() {
        [_] => "season",
        [_, "u", ..] => "player",
        [_, "ub", ..] => "player bucket",
        [_, _] => "period",
        _ => "bracket",
    };
    let name = key[close + 1..]
        .trim_start_matches(':')
        .split(':')
        .next()
        .unwrap_or("");
    format!("{group}:{name}")
}

#[derive(Default)]
struct Kind {
    keys: u64,
    bytes: u64,
    encodings: BTreeMap<String, u64>,
}

/// Every key under `prefix`, grouped by kind.
async fn breakdown(
    con: &mut redis::aio::MultiplexedConnection,
    prefix: &str,
) -> BTreeMap<String, Kind> {
    let mut keys: Vec<String> = Vec::new();
    let mut cursor = 0u64;
    loop {
        let (next, batch): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(format!("{prefix}:*"))
            .arg("COUNT")
            .arg(10_000)
            .query_async(con)
            .await
            .expect("scan");
        keys.extend(batch);
        cursor = next;
        if cursor == 0 {
            break;
        }
    }
    let mut kinds: BTreeMap<String, Kind> = BTreeMap::new();
    for chunk in keys.chunks(2_000) {
        let mut pipe = redis::pipe();
        for key in chunk {
            pipe.cmd("MEMORY")
                .arg("USAGE")
                .arg(key)
                .arg("SAMPLES")
                .arg(0);
            pipe.cmd("OBJECT").arg("ENCODING").arg(key);
        }
        let replies: Vec<redis::Value> = pipe.query_async(con).await.expect("memory usage");
        for (key, pair) in chunk.iter().zip(replies.chunks(2)) {
            let k = kinds.entry(kind(key)).or_default();
            k.keys += 1;
            if let [bytes, encoding] = pair {
                k.bytes += redis::from_redis_value_ref::<u64>(bytes).unwrap_or(0);
                let e = redis::from_redis_value_ref::<String>(encoding).unwrap_or_default();
                *k.encodings.entry(e).or_default() += 1;
            }
        }
    }
    kinds
}

async fn run(
    url: &str,
    con: &mut redis::aio::MultiplexedConnection,
    players: usize,
    with_profile: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    let prefix = format!("mem{}", Utc::now().timestamp_millis());
    let league = Arc::new(League::new(
        common::example_season(&prefix),
        RedisStore::connect(url, RedisOptions::default()).await?,
    ));
    let before = common::used_memory(con).await;
    let t = Instant::now();
    let mut joins = futures::stream::iter(0..players)
        .map(|i| {
            let league = league.clone();
            async move {
                let p = format!("player-{i:06}");
                if with_profile {
                    league
                        .set_profile(
                            &p,
                            &[
                                ("name".into(), format!("Player {i}")),
                                ("avatar".into(), format!("av{}", i % 50)),
                            ],
                        )
                        .await?;
                }
                league.join(&p, None).await.map(|_| ())
            }
        })
        .buffer_unordered(32);
    while let Some(r) = joins.next().await {
        r?;
    }
    let elapsed = t.elapsed();
    let after = common::used_memory(con).await;
    let per = after.saturating_sub(before) as f64 / players as f64;
    println!(
        "{players} players joined {} in {:.1} s: used_memory +{} B, {per:.0} B per joined player",
        if with_profile {
            "with a two-field profile"
        } else {
            "without a profile"
        },
        elapsed.as_secs_f64(),
        after.saturating_sub(before),
    );
    println!(
        "  {:<24} {:>9} {:>14} {:>9}  encodings",
        "key kind", "keys", "MEMORY USAGE", "B/player"
    );
    for (name, k) in breakdown(con, &prefix).await {
        let enc: Vec<String> = k
            .encodings
            .iter()
            .map(|(e, n)| format!("{e} {n}"))
            .collect();
        println!(
            "  {name:<24} {:>9} {:>14} {:>9.1}  {}",
            k.keys,
            k.bytes,
            k.bytes as f64 / players as f64,
            enc.join(", ")
        );
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .filter(|a| a != "--bench")
        .nth(1)
        .or_else(|| std::env::var("LEAGUEKIT_REDIS").ok())
        .ok_or("usage: bench_memory REDIS_URL [PLAYERS]")?;
    let players: usize = std::env::args()
        .filter(|a| a != "--bench")
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(200_000);
    let client = redis::Client::open(url.as_str())?;
    let mut con = client.get_multiplexed_async_connection().await?;
    let version: String = redis::cmd("INFO")
        .arg("server")
        .query_async(&mut con)
        .await?;
    let version = version
        .lines()
        .find_map(|l| l.strip_prefix("redis_version:"))
        .unwrap_or("?")
        .trim()
        .to_owned();
    println!("leaguekit memory per joined player, redis-server {version}, {url}");
    run(&url, &mut con, players, false).await?;
    run(&url, &mut con, players, true).await?;
    Ok(())
}
