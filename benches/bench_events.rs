//! What the event log costs score updates: submits a second and Redis's cost a submit
//! for one season three ways, measured in the same run on the same server:
//! - no `[events]` (the baseline: updates run exactly what they ran before events);
//! - `[events]` with `overtaken` off (updates still log nothing);
//! - `[events]` with `overtaken = true` (an update that passes players logs one
//!   `player.overtaken` each).
//!
//! ```text
//! cargo bench --bench bench_events                   # starts its own redis-server
//! cargo bench --bench bench_events -- redis://127.0.0.1:6379/   # a running server
//! cargo bench --bench bench_events -- --players 20000 --ops 50000 --rounds 3
//! cargo bench --bench bench_events -- --instructions # redis-server under callgrind
//! ```
//!
//! Each season gets PLAYERS players (default 20,000) in brackets of 100 (`join_many`),
//! then one unmeasured submit each (so boards hold scores, as in play), then, for
//! ROUNDS rounds (default 3), each season in turn takes OPS (default 50,000) idempotent
//! submits (a request id each, an increment of 1 to 50, the rank asked for) from 50
//! concurrent tasks on one `League<RedisStore>`, gathered into shared `update.lua`
//! calls. A row prints the median over the rounds of submits a second, Redis's CPU a
//! submit (INFO `used_cpu_*` around the phase), their ratios to the baseline's, and
//! the events an update logged (`XADD` calls a submit). With `--instructions` the
//! server runs under `valgrind --tool=callgrind` and the rows count Redis's
//! instructions a submit instead of its CPU (one round of OPS, default 5,000): on
//! this 2-core machine timings move by 20% between runs, instructions do not.

#[allow(dead_code)] // each benchmark uses part of it
mod common;

use std::sync::Arc;
use std::time::Duration;

use chrono::Duration as Span;
use leaguekit::{League, ManualClock, RedisOptions, RedisStore};

use common::server::Server;
use common::{TASKS, bench_season_with, join_all, submits};

/// The seasons compared, by name, with the sections appended to the bench season.
const VARIANTS: [(&str, &str); 3] = [
    ("no [events] (baseline)", ""),
    ("[events], overtaken off", "[events]\n"),
    ("[events], overtaken = true", "[events]\novertaken = true\n"),
];

struct Args {
    url: Option<String>,
    players: usize,
    ops: Option<usize>,
    rounds: Option<usize>,
    instructions: bool,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        url: None,
        players: 20_000,
        ops: None,
        rounds: None,
        instructions: false,
    };
    let mut it = std::env::args().filter(|a| a != "--bench").skip(1);
    while let Some(arg) = it.next() {
        let mut number = |what: &str| -> Result<usize, String> {
            it.next()
                .and_then(|v| v.replace('_', "").parse().ok())
                .filter(|&n| n > 0)
                .ok_or(format!("{what} takes a positive number"))
        };
        match arg.as_str() {
            "--players" => a.players = number("--players")?,
            "--ops" => a.ops = Some(number("--ops")?),
            "--rounds" => a.rounds = Some(number("--rounds")?),
            "--instructions" => a.instructions = true,
            "-h" | "--help" => {
                return Err("bench_events [redis://URL] [--players N (20000)] [--ops N \
                            (50000; 5000 with --instructions)] [--rounds N (3; 1)] \
                            [--instructions]"
                    .into());
            }
            url if url.starts_with("redis://") || url.starts_with("rediss://") => {
                a.url = Some(url.to_owned());
            }
            other => return Err(format!("unknown argument {other}: see --help")),
        }
    }
    if a.instructions && a.url.is_some() {
        return Err("--instructions starts its own server: give no URL".into());
    }
    Ok(a)
}

/// `INFO section` of the server behind `con`.
async fn info(con: &mut redis::aio::MultiplexedConnection, section: &str) -> String {
    redis::cmd("INFO")
        .arg(section)
        .query_async(con)
        .await
        .expect("INFO")
}

/// Redis's CPU so far, user and system, in seconds.
async fn redis_cpu(con: &mut redis::aio::MultiplexedConnection) -> f64 {
    info(con, "cpu")
        .await
        .lines()
        .filter_map(|l| {
            l.strip_prefix("used_cpu_user:")
                .or_else(|| l.strip_prefix("used_cpu_sys:"))
        })
        .filter_map(|v| v.trim().parse::<f64>().ok())
        .sum()
}

/// XADD calls the server has answered so far.
async fn xadds(con: &mut redis::aio::MultiplexedConnection) -> u64 {
    info(con, "commandstats")
        .await
        .lines()
        .filter_map(|l| l.strip_prefix("cmdstat_xadd:"))
        .filter_map(|l| {
            l.split("calls=")
                .nth(1)?
                .split(',')
                .next()?
                .parse::<u64>()
                .ok()
        })
        .sum()
}

/// One measured phase of a season: submits a second, Redis's cost a submit (µs of CPU,
/// or instructions under callgrind) and events logged a submit.
#[derive(Clone, Copy, Default)]
struct Phase {
    rate: f64,
    cost: f64,
    events: f64,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a = args()?;
    let ops = a.ops.unwrap_or(if a.instructions { 5_000 } else { 50_000 });
    let rounds = a.rounds.unwrap_or(if a.instructions { 1 } else { 3 });
    let mut server = match &a.url {
        Some(_) => None,
        None => Some(Server::start(
            "redis-server",
            a.instructions,
            false,
            "events",
        )?),
    };
    let url = match (&a.url, &server) {
        (Some(url), _) => url.clone(),
        (None, Some(s)) => format!("redis://127.0.0.1:{}/", s.port),
        (None, None) => unreachable!("a server is started when no URL is given"),
    };
    let slow = Duration::from_secs(600);
    let options = || RedisOptions::default().with_response_timeout(slow);
    let mut con = redis::Client::open(url.as_str())?
        .get_multiplexed_async_connection_with_config(
            &redis::AsyncConnectionConfig::new().set_response_timeout(Some(slow)),
        )
        .await?;
    let run = std::process::id();
    let ids: Arc<Vec<String>> = Arc::new((0..a.players).map(|i| format!("p{i:07}")).collect());
    let mut leagues = Vec::new();
    for (v, (_, extra)) in VARIANTS.iter().enumerate() {
        let season = bench_season_with(&format!("ev{run}v{v}"), extra);
        let opened = season.schedule.start;
        let clock = ManualClock::new(opened + Span::hours(12));
        let store = RedisStore::connect(&url, options()).await?;
        let league = Arc::new(League::with_clock(season, store, Arc::new(clock)));
        join_all(&league, &ids).await;
        // One score each, unmeasured: boards in play hold scores.
        let warm: &'static str = Box::leak(format!("w{v}-").into_boxed_str());
        submits(
            &league,
            &ids,
            opened + Span::hours(10),
            warm,
            0..a.players,
            false,
        )
        .await;
        leagues.push((league, opened + Span::hours(11)));
    }
    println!(
        "leaguekit bench_events: {} players a season in brackets of 100, {TASKS} tasks, \
         {ops} idempotent submits a phase, {rounds} round(s){}",
        a.players,
        if a.instructions {
            ", redis-server under callgrind"
        } else {
            ""
        }
    );
    let mut phases: Vec<Vec<Phase>> = vec![Vec::new(); VARIANTS.len()];
    for round in 0..rounds {
        for (v, (league, at)) in leagues.iter().enumerate() {
            let prefix: &'static str = Box::leak(format!("r{round}v{v}-").into_boxed_str());
            let (cpu, logged) = (redis_cpu(&mut con).await, xadds(&mut con).await);
            let mut rate = 0.0;
            let phase = async {
                rate = submits(league, &ids, *at, prefix, 0..ops, false).await.0;
                Ok(())
            };
            let cost = match server.as_mut().filter(|s| s.callgrind) {
                Some(s) => s.count(prefix, "evalsha", phase).await?.0 as f64 / ops as f64,
                None => {
                    phase.await?;
                    (redis_cpu(&mut con).await - cpu) * 1e6 / ops as f64
                }
            };
            let events = (xadds(&mut con).await - logged) as f64 / ops as f64;
            phases[v].push(Phase { rate, cost, events });
        }
    }
    let rows: Vec<Phase> = phases
        .into_iter()
        .map(|p| Phase {
            rate: median(p.iter().map(|x| x.rate).collect()),
            cost: median(p.iter().map(|x| x.cost).collect()),
            events: median(p.iter().map(|x| x.events).collect()),
        })
        .collect();
    let unit = if a.instructions {
        "Redis instr/submit"
    } else {
        "Redis us/submit"
    };
    println!(
        "{:<30} {:>10} {:>7} {:>19} {:>7} {:>14}",
        "season", "submits/s", "ratio", unit, "ratio", "events/submit"
    );
    let base = rows[0];
    let ratio = |x: f64, b: f64| if b > 0.0 { x / b } else { 0.0 };
    for ((name, _), r) in VARIANTS.iter().zip(&rows) {
        println!(
            "{name:<30} {:>10.0} {:>7.2} {:>19.1} {:>7.2} {:>14.2}",
            r.rate,
            ratio(r.rate, base.rate),
            r.cost,
            ratio(r.cost, base.cost),
            r.events
        );
    }
    let key = if a.instructions { "instr" } else { "redis_us" };
    println!(
        "submits_per_s_base={:.0} submits_per_s_events={:.0} submits_per_s_overtaken={:.0} \
         rate_ratio_events={:.3} rate_ratio_overtaken={:.3} {key}_base={:.1} \
         {key}_events={:.1} {key}_overtaken={:.1} overtaken_events_per_submit={:.2}",
        rows[0].rate,
        rows[1].rate,
        rows[2].rate,
        ratio(rows[1].rate, base.rate),
        ratio(rows[2].rate, base.rate),
        rows[0].cost,
        rows[1].cost,
        rows[2].cost,
        rows[2].events
    );
    drop(server);
    Ok(())
}
