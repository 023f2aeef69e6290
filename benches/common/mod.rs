//! Helpers the benchmarks share: the repository's example season under a
//! fresh key prefix, the benchmarks' own season and raw-Redis baselines, Redis's
//! `used_memory`, this process's CPU, concurrent operations from many tasks, free
//! ports, percentiles of latencies, and a redis-server of their own ([`server`]). Each benchmark declares `mod common;` and uses
//! what it needs.

pub mod server;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use leaguekit::{JoinItem, League, RedisStore, Season, SubmitOptions};

/// Concurrent tasks of the benchmarks (and `redis-benchmark -c` of their baselines).
pub const TASKS: usize = 50;

/// `config/season.toml` with its key prefix replaced by `prefix` (run from the
/// repository root).
pub fn example_season(prefix: &str) -> Season {
    let text = std::fs::read_to_string("config/season.toml").expect("run from the repository root");
    let text = text.replacen(
        "key_prefix = \"lk\"",
        &format!("key_prefix = \"{prefix}\""),
        1,
    );
    Season::from_toml(&text, "config/season.toml").expect("valid season")
}

/// `used_memory` from `INFO memory` of the server behind `con` (0 if absent).
pub async fn used_memory(con: &mut redis::aio::MultiplexedConnection) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("memory")
        .query_async(con)
        .await
        .expect("info");
    used_memory_in(&info)
}

/// `used_memory` from the text of `INFO memory` (0 if absent).
pub fn used_memory_in(info: &str) -> u64 {
    info.lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// The `p` quantile (0 to 1) of `sorted` latencies, nearest rank (zero if empty).
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).copied().unwrap_or_default()
}

/// The benchmarks' season: brackets of 100, a two-field profile, an idempotency
/// window, three tiers. `PREFIX` stands for the key prefix.
const BENCH_SEASON: &str = r#"
name = "bench"
key_prefix = "PREFIX"
[schedule]
timezone = "UTC"
period = "daily"
start = "2026-01-05T00:00:00Z"
[brackets]
size = 100
join = "explicit"
[scoring]
max_score = 1_000_000
idempotency_window = "10m"
[profiles]
fields = ["name", "avatar"]
max_bytes = 128
[[tiers]]
name = "bronze"
promote = 20
demote = 0
rewards = [{ ranks = "1", grant = "gems:100" }, { ranks = "2-10", grant = "gems:10" }]
[[tiers]]
name = "silver"
promote = 15
demote = 15
[[tiers]]
name = "gold"
promote = 0
demote = 20
"#;

/// The benchmarks' season under the key prefix `prefix`.
pub fn bench_season(prefix: &str) -> Season {
    bench_season_with(prefix, "")
}

/// The benchmarks' season under the key prefix `prefix`, with `extra` (whole sections,
/// such as `[events]`) appended.
pub fn bench_season_with(prefix: &str, extra: &str) -> Season {
    let text = format!("{}\n{extra}", BENCH_SEASON.replace("PREFIX", prefix));
    Season::from_toml(&text, "bench").expect("bench season")
}

/// The seeds' idempotent update (../shared/seeds 003), with the time tiebreak in the
/// fraction: SET NX EX on the request id, ZSCORE, ZADD.
pub const SEED_UPDATE: &str = r#"
local res = redis.call('SET', KEYS[1] .. '_' .. ARGV[1], '0', 'EX', '3600', 'NX')
if res then
  local current = redis.call('ZSCORE', KEYS[1], ARGV[2])
  local integer = 0
  if current then integer = math.floor(tonumber(current)) end
  local score = integer + tonumber(ARGV[3]) + (2524579200 - tonumber(ARGV[4])) / 10000000000
  redis.call('ZADD', KEYS[1], score, ARGV[2])
end
return 0
"#;

/// The least a join must do: count the joiner, assign a bracket, enter its board.
pub const RAW_JOIN: &str = r#"
local n = redis.call('HINCRBY', KEYS[1], 'bronze', 1)
local b = math.floor((n + 99) / 100)
redis.call('HSET', KEYS[2], ARGV[1], 'bronze:' .. b)
redis.call('ZADD', KEYS[3] .. b, 0, ARGV[1])
return b
"#;

/// A free loopback port whose port + 10000 (a cluster node's bus) is free too.
pub fn free_port() -> u16 {
    loop {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free loopback port");
        // A cluster node also needs port + 10000 (its bus), below 65536.
        if port < 55_000 && std::net::TcpListener::bind(("127.0.0.1", port + 10_000)).is_ok() {
            return port;
        }
    }
}

/// Runs `op(i)` for i in 0..n from TASKS tasks: operations per second and the sorted
/// latencies.
pub async fn concurrent<F, Fut>(n: usize, op: F) -> (f64, Vec<Duration>)
where
    F: Fn(usize) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let op = Arc::new(op);
    let next = Arc::new(AtomicUsize::new(0));
    let t = Instant::now();
    let tasks: Vec<_> = (0..TASKS)
        .map(|_| {
            let op = op.clone();
            let next = next.clone();
            tokio::spawn(async move {
                let mut lat = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        return lat;
                    }
                    let s = Instant::now();
                    op(i).await;
                    lat.push(s.elapsed());
                }
            })
        })
        .collect();
    let mut all = Vec::with_capacity(n);
    for t in tasks {
        all.extend(t.await.expect("task"));
    }
    let rate = n as f64 / t.elapsed().as_secs_f64();
    all.sort();
    (rate, all)
}

/// Boards of the seeds' update shaped like a bracket's: `SEED_BOARDS` boards
/// `{tag}:w0..` of 100 members each, with the seeds' fractional scores.
/// redis-benchmark's random keys give each of its boards about one member, where a
/// board of 100 makes ZSCORE and ZADD scan a listpack of 100 scores, which the seeds'
/// fractions keep as strings to parse.
pub async fn fill_seed_boards(
    con: &mut redis::aio::MultiplexedConnection,
    tag: &str,
) -> redis::RedisResult<()> {
    let mut fill = redis::pipe();
    for b in 0..SEED_BOARDS {
        let mut z = redis::cmd("ZADD");
        z.arg(format!("{{{tag}}}:w{b}"));
        for j in 0..100 {
            z.arg(format!("{j}.7")).arg(format!("p{j}"));
        }
        fill.add_command(z).ignore();
    }
    fill.query_async(con).await
}

/// Boards a node's share of [`seed_updates`] spreads over.
pub const SEED_BOARDS: usize = 100;

/// `ops` runs of the seeds' update (`sha`: [`SEED_UPDATE`] loaded) on the boards of
/// [`fill_seed_boards`], each raising a member of a board of 100 under a request id of
/// its own (`{prefix}{n}`), in pipelines of 16 from [`TASKS`] tasks spread over
/// `targets` (a connection and the tag of its boards, one a node): updates a second,
/// and the updates run (`ops` rounded up to a multiple of 16).
pub async fn seed_updates(
    targets: Arc<Vec<(redis::aio::MultiplexedConnection, String)>>,
    sha: &str,
    prefix: &'static str,
    ops: usize,
) -> (f64, usize) {
    let sha = Arc::new(sha.to_owned());
    let calls = ops.div_ceil(16);
    let t = Instant::now();
    concurrent(calls, move |i| {
        let (targets, sha) = (targets.clone(), sha.clone());
        async move {
            let (con, tag) = &targets[i % targets.len()];
            let mut pipe = redis::pipe();
            for k in 0..16 {
                let n = i * 16 + k;
                pipe.cmd("EVALSHA")
                    .arg(sha.as_str())
                    .arg(1)
                    .arg(format!("{{{tag}}}:w{}", (n * 7919) % SEED_BOARDS))
                    .arg(format!("{prefix}{n}"))
                    .arg(format!("p{}", n % 100))
                    .arg(7)
                    .arg(1_767_225_600)
                    .ignore();
            }
            pipe.query_async::<()>(&mut con.clone())
                .await
                .expect("the seeds' update");
        }
    })
    .await;
    let n = calls * 16;
    (n as f64 / t.elapsed().as_secs_f64(), n)
}

/// Idempotent submits `which` (request ids `{prefix}{i}`, at `at`) from TASKS tasks,
/// each to a player spread over `ids`: operations per second and the sorted latencies.
pub async fn submits(
    league: &Arc<League<RedisStore>>,
    ids: &Arc<Vec<String>>,
    at: chrono::DateTime<chrono::Utc>,
    prefix: &'static str,
    which: std::ops::Range<usize>,
    without_rank: bool,
) -> (f64, Vec<Duration>) {
    let (l, ids) = (league.clone(), ids.clone());
    let first = which.start;
    concurrent(which.len(), move |i| {
        let (l, ids) = (l.clone(), ids.clone());
        async move {
            let i = first + i;
            let p = &ids[(i * 7919) % ids.len()];
            let mut o = SubmitOptions::default()
                .request_id(format!("{prefix}{i}"))
                .at(at);
            if without_rank {
                o = o.without_rank();
            }
            l.submit(p, (i % 50) as i64 + 1, o).await.expect("submit");
        }
    })
    .await
}

/// Reads `n` first pages of 100 of period 1's bronze brackets (1..=brackets, in a
/// stride that visits each once before any twice) from TASKS tasks.
pub async fn read_pages(
    league: &Arc<League<RedisStore>>,
    n: usize,
    brackets: usize,
) -> (f64, Vec<Duration>) {
    let l = league.clone();
    concurrent(n, move |i| {
        let l = l.clone();
        async move {
            let b = (i * 31) % brackets + 1;
            l.standings("bronze", b as u32, Some(1), 0, 100)
                .await
                .expect("standings");
        }
    })
    .await
}

/// Sets a two-field profile (`name`, `avatar`) for each of `ids` from [`TASKS`]
/// tasks: profiles a second.
pub async fn set_profiles(league: &Arc<League<RedisStore>>, ids: &Arc<Vec<String>>) -> f64 {
    let (l, ids) = (league.clone(), ids.clone());
    concurrent(ids.len(), move |i| {
        let (l, ids) = (l.clone(), ids.clone());
        async move {
            let fields = [
                ("name".to_owned(), format!("Player {i}")),
                ("avatar".to_owned(), format!("a{}", i % 64)),
            ];
            l.set_profile(&ids[i], &fields).await.expect("set_profile");
        }
    })
    .await
    .0
}

/// Joins all of `ids` through `join_many`, [`JOIN_CHUNK`] a call, a few calls in
/// flight (one pipeline's round trip overlaps the next's work).
pub async fn join_all(league: &League<RedisStore>, ids: &[String]) {
    let chunks: Vec<Vec<JoinItem>> = ids
        .chunks(JOIN_CHUNK)
        .map(|c| c.iter().map(|p| JoinItem::new(p.clone())).collect())
        .collect();
    let mut runs = futures::stream::iter(chunks.iter().map(|items| league.join_many(items)))
        .buffer_unordered(4);
    while let Some(results) = runs.next().await {
        for r in results {
            r.expect("join_many");
        }
    }
}

/// Players a `join_many` call of the benchmarks places.
pub const JOIN_CHUNK: usize = 5_000;

/// Seconds of CPU this process has used, all its threads, user and system
/// (`CLOCK_PROCESS_CPUTIME_ID`). Beside Redis's CPU it says which side an operation's
/// time is on: the machine's two cores are shared by Redis and this process, so a
/// phase whose client costs more than Redis is limited by the client.
pub fn own_cpu() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}
