//! Measures a tier-wide leaderboard (`League::top`) on Redis for a tier of many
//! brackets, against the naive merge on raw Redis measured in the same run: one
//! pipelined `ZRANGE board 0 99 WITHSCORES` of every bracket (all of their top 100).
//!
//! ```text
//! redis-server --port 6390 --save '' --daemonize yes
//! cargo bench --bench bench_top -- redis://127.0.0.1:6390/ [BRACKETS] [LIMIT]
//! ```
//!
//! Fills BRACKETS (default 1,000) brackets of 100 of the first tier with scores, then
//! reads the tier's top LIMIT (default 100): uncached (a new `League` each time, so no
//! cached list is reused), cached, and the raw baseline.

#[allow(dead_code)] // each benchmark uses part of it
mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use leaguekit::{BatchItem, League, RedisOptions, RedisStore};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().filter(|a| a != "--bench").skip(1);
    let url = args
        .next()
        .or_else(|| std::env::var("LEAGUEKIT_REDIS").ok())
        .ok_or("usage: bench_top REDIS_URL [BRACKETS] [LIMIT]")?;
    let brackets: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1000);
    let limit: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(100);
    let players = brackets * 100;
    let tag = Utc::now().timestamp_millis();
    let season = common::example_season(&format!("benchtop{tag}"));
    let tier = season.tiers[0].name.clone();
    let store = RedisStore::connect(&url, RedisOptions::default()).await?;
    let league = Arc::new(League::new(season.clone(), store.clone()));

    println!("tier-wide top {limit} of {brackets} brackets ({players} players), {url}");
    let t = Instant::now();
    let mut tasks = Vec::new();
    for part in 0..8 {
        let league = league.clone();
        tasks.push(tokio::spawn(async move {
            let ids: Vec<usize> = (part..players).step_by(8).collect();
            for chunk in ids.chunks(1000) {
                let items: Vec<BatchItem> = chunk
                    .iter()
                    .map(|i| BatchItem::new(format!("p{i:07}"), ((i * 7919) % 100_000) as i64))
                    .collect();
                for r in league.submit_many(&items).await {
                    r.expect("submit");
                }
            }
        }));
    }
    for t in tasks {
        t.await?;
    }
    println!("filled in {:.1?}", t.elapsed());

    let mut uncached = Vec::new();
    let mut top = None;
    for _ in 0..10 {
        let fresh = League::new(season.clone(), store.clone());
        let t = Instant::now();
        top = Some(fresh.top(&tier, None, limit).await?);
        uncached.push(t.elapsed());
    }
    let top = top.ok_or("no read")?;
    assert_eq!(top.brackets as usize, brackets, "every bracket counted");
    let mut cached = Vec::new();
    for _ in 0..100 {
        let t = Instant::now();
        league.top(&tier, None, limit).await?;
        cached.push(t.elapsed());
    }

    // Raw: every bracket's top 100 with scores, pipelined over one connection.
    let client = redis::Client::open(url.as_str())?;
    let mut con = client.get_multiplexed_async_connection().await?;
    let period = top.period;
    let keys = leaguekit::store::keys::Keys::of(&season);
    let boards: Vec<String> = (1..=brackets as u32)
        .map(|b| keys.bracket(period, &tier, b).board)
        .collect();
    let mut raw = Vec::new();
    for _ in 0..10 {
        let t = Instant::now();
        let mut pipe = redis::pipe();
        for b in &boards {
            pipe.cmd("ZRANGE").arg(b).arg(0).arg(99).arg("WITHSCORES");
        }
        let pages: Vec<Vec<(String, f64)>> = pipe.query_async(&mut con).await?;
        let mut all: Vec<(f64, String)> =
            pages.into_iter().flatten().map(|(p, s)| (s, p)).collect();
        all.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
        all.truncate(limit as usize);
        raw.push(t.elapsed());
    }
    let (u, c, r) = (median(uncached), median(cached), median(raw));
    println!(
        "{:<44} {:>10.2?}",
        "leaguekit top, uncached (median of 10)", u
    );
    println!(
        "{:<44} {:>10.2?}",
        "leaguekit top, cached (median of 100)", c
    );
    println!(
        "{:<44} {:>10.2?}",
        "raw: ZRANGE 0 99 of every bracket + sort", r
    );
    println!("uncached / raw: x{:.2}", u.as_secs_f64() / r.as_secs_f64());
    Ok(())
}
