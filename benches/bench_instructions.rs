//! Redis's instructions an operation, counted by callgrind: the Redis side of `bench`'s
//! figures, repeatable where this machine's timings are not.
//!
//! ```text
//! cargo bench --bench bench_instructions                  # 20,000 players, ~8 min
//! cargo bench --bench bench_instructions -- --players 50000 --ops 40000
//! cargo bench --bench bench_instructions -- --keep   # keep each phase's callgrind file
//! cargo bench --bench bench_instructions -- --keep --server /path/to/redis-server
//! ```
//!
//! `--server` runs another redis-server binary than the one on the `PATH`. Debian's
//! is stripped, so `callgrind_annotate` names few of its functions (none of Lua's);
//! one built from Redis's source of the same version (`make MALLOC=libc` at the tag,
//! a couple of minutes here) names them all, which is how the breakdowns of a script
//! call's instructions in docs/performance.md were read. Its counts differ from
//! Debian's binary by a few percent (another allocator, other compiler flags):
//! compare runs of one binary.
//!
//! On this 2-core machine the same code's timed figures move by 20% or more between
//! runs (the seeds' script alone cost Redis 7.2–14.6 µs an update on different
//! evenings), so a change worth 5% cannot be seen in `bench`. This program starts its
//! own redis-server under `valgrind --tool=callgrind` (apt-get install valgrind) and
//! counts the server's instructions over each phase (`callgrind_control --zero` before,
//! `--dump` after), for leaguekit's operations and for `bench`'s raw-Redis baselines
//! (redis-benchmark, `-c 50 -P 16`, the same scripts and commands), with the same
//! season and 50 concurrent tasks on one `League<RedisStore>`:
//! - `set_profile` and placements through `join_many` (5,000 a call) of PLAYERS new
//!   players with a two-field profile, against the raw join;
//! - idempotent single submits (a request id each, gathered into shared calls), with
//!   and without the rank, against the seeds' update script;
//! - standings pages of 100: each bracket's first read (built), then reads of kept
//!   pages, against `ZREVRANGE key 0 99 WITHSCORES`;
//! - single joins of new players (gathered), against the raw join.
//!
//! Each row prints instructions an operation, ours and raw, their ratio (raw / ours:
//! the ratio `bench` would time if Redis's time were its instructions), and how many
//! operations shared a script call. The last line holds the same as `key=value`.
//!
//! What the counts leave out, so read them as a comparison of versions, not as
//! `bench`'s ratios: the kernel's share (a round trip's reads and writes, which a
//! gathered call and `-P 16` both spread over many operations), cache misses (a
//! 1,000,000-player server's data does not fit the caches; this one's mostly does),
//! and the client. Under callgrind Redis runs about 50 times slower, so concurrent
//! operations wait longer and gather into larger calls than in `bench`: the
//! operations-a-call column says how large.

#[allow(dead_code)] // each benchmark uses part of it
mod common;

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use chrono::Duration as Span;
use leaguekit::{League, ManualClock, RedisOptions, RedisStore};

use common::server::Server;
use common::{
    RAW_JOIN, SEED_UPDATE, TASKS, bench_season, concurrent, fill_seed_boards, join_all, read_pages,
    seed_updates, set_profiles, submits,
};

/// Under callgrind a call takes about 50 times as long: no timeouts on the way.
const SLOW: Duration = Duration::from_secs(600);

/// What the command line asks for.
struct Args {
    players: usize,
    ops: usize,
    keep: bool,
    /// The redis-server binary to run under callgrind.
    server: String,
}

/// A baseline phase: redis-benchmark's `cmd` `n` times; the server's instructions a
/// call of `command` (redis-benchmark may send a few more than -n: a pipeline's last
/// round).
async fn raw(
    server: &mut Server,
    phase: &str,
    command: &str,
    n: usize,
    cmd: &[&str],
) -> Result<f64, String> {
    let port = server.port;
    let (instr, calls) = server
        .count(phase, command, async move { benchmark(port, n, cmd) })
        .await?;
    Ok(instr as f64 / calls.max(1) as f64)
}

/// redis-benchmark's `cmd`, `n` times, 50 connections, 16 deep, random ids.
fn benchmark(port: u16, n: usize, cmd: &[&str]) -> Result<(), String> {
    let status = Command::new("redis-benchmark")
        .args(["-p", &port.to_string(), "-c", &TASKS.to_string()])
        .args(["-P", "16", "-n", &n.to_string(), "-r", "1000000", "-q"])
        .args(cmd)
        .stdout(Stdio::null())
        .status()
        .map_err(|e| format!("redis-benchmark: {e}"))?;
    if !status.success() {
        return Err(format!("redis-benchmark {cmd:?} failed"));
    }
    Ok(())
}

/// One row: instructions an operation, ours and raw, and ours a script call.
#[derive(Clone, Copy)]
struct Row {
    ours: f64,
    raw: f64,
    per_call: f64,
}

impl Row {
    fn new((instr, calls): (u64, u64), ops: usize, raw: f64) -> Row {
        Row {
            ours: instr as f64 / ops as f64,
            raw,
            // No script call: 0, printed as "-".
            per_call: if calls == 0 {
                0.0
            } else {
                ops as f64 / calls as f64
            },
        }
    }

    fn ratio(&self) -> f64 {
        if self.ours > 0.0 {
            self.raw / self.ours
        } else {
            0.0
        }
    }

    fn print(&self, what: &str) {
        let raw = if self.raw > 0.0 {
            format!("{:>10.0}   x{:<5.2}", self.raw, self.ratio())
        } else {
            format!("{:>10}   {:<6}", "", "")
        };
        let per_call = if self.per_call > 0.0 {
            format!("{:>6.1}", self.per_call)
        } else {
            format!("{:>6}", "-")
        };
        println!("{what:<38} {:>10.0} {raw} {per_call}", self.ours);
    }
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        players: 20_000,
        ops: 20_000,
        keep: false,
        server: "redis-server".to_owned(),
    };
    let mut it = std::env::args().filter(|a| a != "--bench").skip(1);
    while let Some(arg) = it.next() {
        let mut number = |name: &str| -> Result<usize, String> {
            it.next()
                .and_then(|v| v.replace('_', "").parse().ok())
                .filter(|&n| n >= 1_000)
                .ok_or_else(|| format!("{name} takes a number of at least 1000"))
        };
        match arg.as_str() {
            "--players" => a.players = number("--players")?,
            "--ops" => a.ops = number("--ops")?,
            "--keep" => a.keep = true,
            "--server" => {
                a.server = it
                    .next()
                    .ok_or("--server takes the path of a redis-server binary")?
            }
            "-h" | "--help" => {
                println!(
                    "bench_instructions [--players N (20000)] [--ops N (20000)] [--keep] \
                     [--server PATH (redis-server)]"
                );
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other}: see --help")),
        }
    }
    Ok(a)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Args {
        players,
        ops,
        keep,
        server,
    } = args()?;
    let mut server = Server::start(&server, true, keep, "instr")?;
    let url = format!("redis://127.0.0.1:{}/", server.port);
    let season = bench_season("ix");
    let opened = season.schedule.start;
    let clock = ManualClock::new(opened + Span::hours(12));
    let store =
        RedisStore::connect(&url, RedisOptions::default().with_response_timeout(SLOW)).await?;
    let league = Arc::new(League::with_clock(season, store, Arc::new(clock)));
    println!(
        "leaguekit bench_instructions: redis-server under callgrind, {players} players in \
         brackets of 100 with profiles, {TASKS} tasks"
    );
    println!(
        "{:<38} {:>10} {:>10}   {:>5}   {:>6}",
        "instructions an operation", "leaguekit", "raw Redis", "ratio", "a call"
    );

    // The baselines first, on a server that holds nothing else yet (`bench` runs them
    // after its load: the baselines' keys are their own either way).
    let raw_join_sha = server.cli(&["script", "load", RAW_JOIN]).trim().to_owned();
    let seed_sha = server
        .cli(&["script", "load", SEED_UPDATE])
        .trim()
        .to_owned();
    let mut page = vec!["zadd".to_owned(), "{raw}:page".to_owned()];
    for i in 0..100 {
        page.push((i * 1000 + 7).to_string());
        page.push(format!("player-{i:05}"));
    }
    server.cli(&page.iter().map(String::as_str).collect::<Vec<_>>());
    let raw_join = raw(
        &mut server,
        "raw_join",
        "evalsha",
        ops,
        &[
            "EVALSHA",
            &raw_join_sha,
            "3",
            "{raw}:joins",
            "{raw}:assign",
            "{raw}:board:",
            "j__rand_int__",
        ],
    )
    .await?;
    let raw_submit = raw(
        &mut server,
        "raw_submit",
        "evalsha",
        ops,
        &[
            "EVALSHA",
            &seed_sha,
            "1",
            "{raw}:b__rand_int__",
            "rq__rand_int__",
            "p__rand_int__",
            "7",
            "1767225600",
        ],
    )
    .await?;
    // redis-benchmark may send a few more than -n (a pipeline's last round), and
    // seed_updates rounds up to 16: divide by the calls the server answered.
    let per_op = |(instr, calls): (u64, u64)| instr as f64 / calls.max(1) as f64;
    // The seeds' update on boards like a bracket's (see `common::fill_seed_boards`).
    let client = redis::Client::open(url.as_str())?;
    let mut con = client
        .get_multiplexed_async_connection_with_config(
            &redis::AsyncConnectionConfig::new().set_response_timeout(Some(SLOW)),
        )
        .await?;
    fill_seed_boards(&mut con, "raw").await?;
    let targets = Arc::new(vec![(con, "raw".to_owned())]);
    let raw_submit_100 = per_op(
        server
            .count("raw_submit_100", "evalsha", async {
                seed_updates(targets, &seed_sha, "s", ops).await;
                Ok(())
            })
            .await?,
    );
    let raw_read = raw(
        &mut server,
        "raw_read",
        "zrevrange",
        ops,
        &["ZREVRANGE", "{raw}:page", "0", "99", "WITHSCORES"],
    )
    .await?;

    // The league: profiles, then placements through join_many.
    let ids: Arc<Vec<String>> = Arc::new((0..players).map(|i| format!("p{i:07}")).collect());
    let profiles = server
        .count("set_profile", "evalsha", async {
            set_profiles(&league, &ids).await;
            Ok(())
        })
        .await?;
    let profiles = Row::new(profiles, players, 0.0);
    profiles.print("set_profile");
    let placements = server
        .count("placement", "evalsha", async {
            join_all(&league, &ids).await;
            Ok(())
        })
        .await?;
    let placements = Row::new(placements, players, raw_join);
    placements.print("placement (join_many, with profile)");

    // Idempotent submits, with the rank and without.
    let at = opened + Span::hours(11);
    let submit_phase = |prefix: &'static str, without_rank: bool| {
        let (l, ids) = (league.clone(), ids.clone());
        async move {
            submits(&l, &ids, at, prefix, 0..ops, without_rank).await;
            Ok(())
        }
    };
    let submits = Row::new(
        server
            .count("submit", "evalsha", submit_phase("r", false))
            .await?,
        ops,
        raw_submit,
    );
    submits.print("idempotent submit");
    let submits_100 = Row {
        raw: raw_submit_100,
        ..submits
    };
    submits_100.print("  against the seeds' on boards of 100");
    let unranked = Row::new(
        server
            .count("submit_unranked", "evalsha", submit_phase("u", true))
            .await?,
        ops,
        raw_submit,
    );
    unranked.print("  the same, without_rank()");

    // Standings: each bracket's first read since the submits builds its page; the
    // reads after it find the page kept.
    let brackets = players.div_ceil(100);
    let read_phase = |n: usize| {
        let l = league.clone();
        async move {
            read_pages(&l, n, brackets).await;
            Ok(())
        }
    };
    let built = Row::new(
        server
            .count("read_built", "evalsha", read_phase(brackets))
            .await?,
        brackets,
        raw_read,
    );
    built.print("standings page of 100, built");
    let kept = Row::new(
        server
            .count("read_kept", "evalsha", read_phase(ops))
            .await?,
        ops,
        raw_read,
    );
    kept.print("  the same, kept");

    // Single joins of new players, gathered.
    let l = league.clone();
    let n_joins = ops / 2;
    let joins = server
        .count("join", "evalsha", async move {
            concurrent(n_joins, move |i| {
                let l = l.clone();
                async move {
                    l.join(&format!("j{i:07}"), None).await.expect("join");
                }
            })
            .await;
            Ok(())
        })
        .await?;
    let joins = Row::new(joins, n_joins, raw_join);
    joins.print("join of a new player");

    println!(
        "(raw: the raw join {raw_join:.0}, the seeds' update {raw_submit:.0}, ZREVRANGE of 100 \
         {raw_read:.0} instructions an operation, redis-benchmark -c {TASKS} -P 16; the seeds' \
         update on boards of 100 {raw_submit_100:.0}, pipelines of 16 from {TASKS} tasks)"
    );
    if keep {
        println!(
            "callgrind files of the phases kept in {} (callgrind_annotate --inclusive=yes \
             {}/submit.callgrind)",
            server.dir.display(),
            server.dir.display()
        );
    }
    println!(
        "submit_instr={:.0} submit_instr_ratio={:.2} submit_unranked_instr={:.0} \
         submit_unranked_instr_ratio={:.2} read_built_instr={:.0} read_built_instr_ratio={:.2} \
         read_kept_instr={:.0} read_kept_instr_ratio={:.2} join_instr={:.0} join_instr_ratio={:.2} \
         placement_instr={:.0} placement_instr_ratio={:.2} set_profile_instr={:.0} \
         submit_instr_ratio_boards100={:.2} \
         raw_submit_instr={raw_submit:.0} raw_submit_boards100_instr={raw_submit_100:.0} raw_read_instr={raw_read:.0} raw_join_instr={raw_join:.0}",
        submits.ours,
        submits.ratio(),
        unranked.ours,
        unranked.ratio(),
        built.ours,
        built.ratio(),
        kept.ours,
        kept.ratio(),
        joins.ours,
        joins.ratio(),
        placements.ours,
        placements.ratio(),
        profiles.ours,
        submits_100.ratio(),
    );
    Ok(())
}
