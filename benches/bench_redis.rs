//! Measures leaguekit on Redis against raw Redis commands doing the nearest equivalent
//! work, in the same run on the same server, and prints both with their ratio.
//!
//! ```text
//! redis-server --port 6390 --save '' --daemonize yes
//! cargo bench --bench bench_redis -- redis://127.0.0.1:6390/ [PLAYERS]
//! ```
//!
//! The raw baseline is a ZINCRBY on one sorted set per 100 players: what a league
//! without exact packing, time tiebreaks, idempotency or brackets would send. The
//! engine does more (a Lua script with a request-id check, exact packing and a rank),
//! so the ratio is the price of those guarantees.

#[allow(dead_code)] // each benchmark uses part of it
mod common;

use std::time::{Duration, Instant};

use chrono::Utc;
use leaguekit::{BatchItem, SubmitOptions};
use leaguekit::{League, RedisOptions, RedisStore};

fn rate(n: usize, d: Duration) -> f64 {
    n as f64 / d.as_secs_f64()
}

fn line(what: &str, n: usize, engine: Duration, raw: Duration) {
    println!(
        "{what:<34} {:>10.0}/s {:>10.0}/s   x{:.2}",
        rate(n, engine),
        rate(n, raw),
        engine.as_secs_f64() / raw.as_secs_f64()
    );
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .filter(|a| a != "--bench")
        .nth(1)
        .or_else(|| std::env::var("LEAGUEKIT_REDIS").ok())
        .ok_or("usage: bench_redis REDIS_URL [PLAYERS]")?;
    let players: usize = std::env::args()
        .filter(|a| a != "--bench")
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000);
    let tag = Utc::now().timestamp_millis();
    let league = League::new(
        common::example_season(&format!("bench{tag}")),
        RedisStore::connect(&url, RedisOptions::default()).await?,
    );
    let client = redis::Client::open(url.as_str())?;
    let mut con = client.get_multiplexed_async_connection().await?;
    let raw_key = |i: usize| format!("rawbench{tag}:{{b{}}}", i / 100);
    let ids: Vec<String> = (0..players).map(|i| format!("player-{i:06}")).collect();

    println!("leaguekit vs raw Redis, {players} players, {url}");
    println!("{:<34} {:>12} {:>12}   time ratio", "", "leaguekit", "raw");

    // Memory: everyone joins (placement, board entry, state) vs one ZADD each.
    let before = common::used_memory(&mut con).await;
    let t = Instant::now();
    for p in &ids {
        league.join(p, None).await?;
    }
    let join = t.elapsed();
    let mid = common::used_memory(&mut con).await;
    let t = Instant::now();
    for (i, p) in ids.iter().enumerate() {
        let _: i64 = redis::cmd("ZADD")
            .arg(raw_key(i))
            .arg(0)
            .arg(p)
            .query_async(&mut con)
            .await?;
    }
    let raw_join = t.elapsed();
    let after = common::used_memory(&mut con).await;
    line("join (sequential)", players, join, raw_join);

    // Sequential updates: one round trip each (placements are cached after the join).
    let mut lat = Vec::with_capacity(players);
    let t = Instant::now();
    for (i, p) in ids.iter().enumerate() {
        let s = Instant::now();
        league
            .submit(p, (i % 97) as i64, SubmitOptions::default())
            .await?;
        lat.push(s.elapsed());
    }
    let seq = t.elapsed();
    let mut raw_lat = Vec::with_capacity(players);
    let t = Instant::now();
    for (i, p) in ids.iter().enumerate() {
        let s = Instant::now();
        let _: f64 = redis::cmd("ZINCRBY")
            .arg(raw_key(i))
            .arg(i % 97)
            .arg(p)
            .query_async(&mut con)
            .await?;
        raw_lat.push(s.elapsed());
    }
    let raw_seq = t.elapsed();
    line("submit (sequential)", players, seq, raw_seq);

    // With request ids (idempotent retries): one more SET inside the same script.
    let t = Instant::now();
    for (i, p) in ids.iter().enumerate() {
        league
            .submit(p, 1, SubmitOptions::default().request_id(format!("rq-{i}")))
            .await?;
    }
    line("submit with request id", players, t.elapsed(), raw_seq);

    // Pipelined batches of 1000.
    let items: Vec<BatchItem> = ids.iter().map(|p| BatchItem::new(p.clone(), 3)).collect();
    let t = Instant::now();
    for chunk in items.chunks(1000) {
        for r in league.submit_many(chunk).await {
            r?;
        }
    }
    let batch = t.elapsed();
    let t = Instant::now();
    for (c, chunk) in ids.chunks(1000).enumerate() {
        let mut pipe = redis::pipe();
        for (j, p) in chunk.iter().enumerate() {
            pipe.cmd("ZINCRBY").arg(raw_key(c * 1000 + j)).arg(3).arg(p);
        }
        let _: Vec<f64> = pipe.query_async(&mut con).await?;
    }
    line(
        "submit (pipelined, 1000 a batch)",
        players,
        batch,
        t.elapsed(),
    );

    // Standings pages of 100 with profiles vs ZREVRANGE WITHSCORES.
    let pages = players.div_ceil(100);
    let t = Instant::now();
    for b in 1..=pages {
        league.standings("bronze", b as u32, None, 0, 100).await?;
    }
    let st = t.elapsed();
    let t = Instant::now();
    for b in 0..pages {
        let _: Vec<(String, f64)> = redis::cmd("ZREVRANGE")
            .arg(raw_key(b * 100))
            .arg(0)
            .arg(99)
            .arg("WITHSCORES")
            .query_async(&mut con)
            .await?;
    }
    line("standings page of 100", pages, st, t.elapsed());

    lat.sort();
    raw_lat.sort();
    println!(
        "submit latency p50/p99: leaguekit {:?}/{:?}, raw {:?}/{:?}",
        common::percentile(&lat, 0.5),
        common::percentile(&lat, 0.99),
        common::percentile(&raw_lat, 0.5),
        common::percentile(&raw_lat, 0.99)
    );
    let engine_bytes = mid.saturating_sub(before) as f64 / players as f64;
    let raw_bytes = after.saturating_sub(mid) as f64 / players as f64;
    println!(
        "memory per joined player at {players} players: leaguekit {engine_bytes:.0} B, raw zset entry {raw_bytes:.0} B (x{:.1}); \
         benches/bench_memory measures 200,000 with and without profiles, by kind of key",
        engine_bytes / raw_bytes.max(1.0)
    );
    Ok(())
}
