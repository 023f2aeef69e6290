//! Measures a whole rollover on Redis: PLAYERS (default 200,000) in brackets of 100
//! over the season's tiers, closed in one `rollover` call, against the time Redis
//! itself takes, in the same run, to read every one of those boards and write one
//! outcome per player (pipelined ZRANGE + HSET per bracket): the data the rollover
//! must move, without its guarantees.
//!
//! ```text
//! redis-server --port 6390 --save '' --daemonize yes
//! cargo bench --bench bench_rollover -- redis://127.0.0.1:6390/ [PLAYERS] [--scheduler | --spawned]
//! ```
//!
//! The rollover runs from `main` (as `leaguekit rollover` runs it); `--scheduler` runs
//! it as a [`Scheduler`] does (its catch-up run at start), and `--spawned` inside a
//! task spawned on the runtime's workers, as a game server calling
//! [`League::rollover`] from its own task would.

use std::sync::Arc;
use std::time::Instant;

use chrono::Duration;
use leaguekit::{
    BatchItem, League, ManualClock, RedisOptions, RedisStore, RolloverOptions, Scheduler,
    SchedulerOptions, Season, SubmitOptions,
};

const SEASON: &str = r#"
name = "benchroll"
key_prefix = "PREFIX"
[schedule]
timezone = "UTC"
period = "daily"
start = "2026-01-05T00:00:00Z"
[brackets]
size = 100
[scoring]
max_score = 1_000_000
[[tiers]]
name = "bronze"
promote = 20
demote = 0
rewards = [{ ranks = "1", grant = "gems:100" }, { ranks = "2-10", grant = "gems:10" }]
[[tiers]]
name = "silver"
promote = 15
demote = 15
rewards = [{ ranks = "1-3", grant = "gems:300" }]
[[tiers]]
name = "gold"
promote = 0
demote = 20
rewards = [{ ranks = "1-10", grant = "chest" }]
"#;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let all: Vec<String> = std::env::args()
        .filter(|a| a != "--bench")
        .skip(1)
        .collect();
    let (flags, positional): (Vec<String>, Vec<String>) =
        all.into_iter().partition(|a| a.starts_with("--"));
    let how = match flags.as_slice() {
        [] => "main",
        [f] if f == "--scheduler" => "scheduler",
        [f] if f == "--spawned" => "spawned",
        other => return Err(format!("unknown flags {other:?}: --scheduler or --spawned").into()),
    };
    let mut args = positional.into_iter();
    let url = args
        .next()
        .or_else(|| std::env::var("LEAGUEKIT_REDIS").ok())
        .ok_or("usage: bench_rollover REDIS_URL [PLAYERS]")?;
    let players: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(200_000);
    let tag = chrono::Utc::now().timestamp_millis();
    let season = Season::from_toml(&SEASON.replace("PREFIX", &format!("br{tag}")), "bench")?;
    let start = season.schedule.start;
    let clock = ManualClock::new(start + Duration::hours(12));
    let store = RedisStore::connect(&url, RedisOptions::default()).await?;
    let league = Arc::new(League::with_clock(
        season.clone(),
        store,
        Arc::new(clock.clone()),
    ));
    println!("rollover of {players} players in brackets of 100, {url}");
    let t = Instant::now();
    let mut tasks = Vec::new();
    for part in 0..8 {
        let league = league.clone();
        tasks.push(tokio::spawn(async move {
            let ids: Vec<usize> = (part..players).step_by(8).collect();
            for chunk in ids.chunks(1000) {
                let items: Vec<BatchItem> = chunk
                    .iter()
                    .map(|i| {
                        BatchItem::new(format!("p{i:07}"), ((i * 7919) % 100_000) as i64)
                            .with_options(SubmitOptions::default().at(start + Duration::hours(1)))
                    })
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
    clock.set(start + Duration::days(1) + Duration::seconds(6));
    let t = Instant::now();
    let (report, took) = match how {
        "scheduler" => {
            let (scheduler, report) =
                Scheduler::start(league.clone(), SchedulerOptions::default()).await?;
            let took = t.elapsed();
            scheduler.shutdown().await?;
            (report, took)
        }
        "spawned" => {
            let l = league.clone();
            let run =
                tokio::spawn(async move { l.rollover(None, RolloverOptions::default()).await });
            (run.await??, t.elapsed())
        }
        _ => (
            league.rollover(None, RolloverOptions::default()).await?,
            t.elapsed(),
        ),
    };
    println!("rolled over in {took:.2?} ({how})");
    let closed = report.closed.first().ok_or("nothing closed")?;
    assert_eq!(
        closed.totals.players as usize, players,
        "every player closed"
    );

    // Raw: read every board whole and write one outcome per player, pipelined per
    // bracket, 64 brackets at a time.
    let client = redis::Client::open(url.as_str())?;
    let con = client.get_multiplexed_async_connection().await?;
    let keys = leaguekit::store::keys::Keys::of(&season);
    let brackets: Vec<_> = (1..=players.div_ceil(100) as u32)
        .map(|b| keys.bracket(1, "bronze", b))
        .collect();
    let t = Instant::now();
    use futures::StreamExt;
    let mut runs = futures::stream::iter(brackets.iter().map(|b| {
        let mut con = con.clone();
        async move {
            let board: Vec<(String, f64)> = redis::cmd("ZRANGE")
                .arg(&b.board)
                .arg(0)
                .arg(-1)
                .arg("WITHSCORES")
                .query_async(&mut con)
                .await?;
            let mut cmd = redis::cmd("HSET");
            cmd.arg(format!("{}:rawout", b.base));
            for (i, (p, _)) in board.iter().enumerate() {
                cmd.arg(p).arg(i);
            }
            let _: i64 = cmd.query_async(&mut con).await?;
            Ok::<_, redis::RedisError>(())
        }
    }))
    .buffer_unordered(64);
    while let Some(r) = runs.next().await {
        r?;
    }
    let raw = t.elapsed();
    println!(
        "{:<46} {:>8.2?} ({:.0} players/s)",
        "leaguekit rollover",
        took,
        players as f64 / took.as_secs_f64()
    );
    println!(
        "{:<46} {:>8.2?} ({:.0} players/s)",
        "raw: read every board, write every outcome",
        raw,
        players as f64 / raw.as_secs_f64()
    );
    println!(
        "rollover / raw: x{:.2}; for 1,000,000 players at this rate: {:.1} s",
        took.as_secs_f64() / raw.as_secs_f64(),
        took.as_secs_f64() * 1_000_000.0 / players as f64
    );
    Ok(())
}
