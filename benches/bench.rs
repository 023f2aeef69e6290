//! The benchmark of leaguekit on Redis: every figure against raw Redis measured in the
//! same run on the same server.
//!
//! ```text
//! cargo bench --bench bench                      # starts its own redis-server
//! cargo bench --bench bench -- --cluster         # its own three-master cluster
//! cargo bench --bench bench -- redis://127.0.0.1:6379/   # a running server
//! cargo bench --bench bench -- --players 200000  # a smaller league
//! cargo bench --bench bench -- --connections 1   # one connection, not a pool
//! cargo bench --bench bench -- --no-gather       # every single join and submit alone
//! cargo bench --bench bench -- --no-gather-submits  # every single submit alone
//! cargo bench --bench bench -- --no-settle       # start each phase without waiting for Redis to finish rehashing
//! ```
//!
//! It loads PLAYERS (default 1,000,000) players with a two-field profile into brackets
//! of 100 through the bulk path (`set_profile` from 50 tasks, then `join_many`), then
//! measures, with 50 concurrent tasks on one `League<RedisStore>`:
//! - idempotent submits (a request id each) against the seeds' own update script
//!   (SET NX EX + ZSCORE + ZADD) by EVALSHA, `redis-benchmark -c 50 -P 16`; then the
//!   same submits `without_rank()` (no ZRANK), in rounds alternating with submits
//!   with the rank;
//! - standings pages of 100 with profiles against `ZREVRANGE key 0 99 WITHSCORES`:
//!   five reads a bracket after the submits (the first builds the page, the others read
//!   it kept), the same reads again (every page kept), a read of each bracket right
//!   after a score update of it (a build with the profiles kept as one string: the
//!   reads of a bracket in play), and with the page cache off (every page built);
//! - joins of new players against one script doing HINCRBY + HSET + ZADD;
//! - the rollover of every player loaded;
//! - Redis memory per joined player (INFO used_memory over 200,000 players, without
//!   and with a two-field profile).
//!
//! Before each measured phase (and each reading of memory) it waits until no node is
//! rehashing its keyspace, driving the rehash on with RANDOMKEY (see `settle`), so
//! that no phase pays for the growth of the keyspace that an earlier one caused.
//!
//! It prints a table, with Redis's CPU per operation (INFO `used_cpu_*` around each
//! phase) under the submit, read and join rows, for ours and the baseline's, and this
//! process's CPU per operation in ours (`CLOCK_PROCESS_CPUTIME_ID`; the baselines' client is
//! redis-benchmark). The submit and join ratios are ratios of Redis time; the reads'
//! are not: on this machine the client is their limit (`bench_client` measures it
//! alone). Then one last line of `key=value` figures. redis-benchmark
//! cannot route a script by its keys in cluster mode, so on a cluster the baselines
//! run one redis-benchmark per master (with the connections split between them), on
//! keys of a slot that master owns, and add up.

#[allow(dead_code)] // each benchmark uses part of it
mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Duration as Span;
use leaguekit::{
    League, ManualClock, RedisOptions, RedisStore, RolloverOptions, Season, SubmitOptions,
};

use common::{
    JOIN_CHUNK, RAW_JOIN, SEED_UPDATE, TASKS, concurrent, free_port, join_all, own_cpu, read_pages,
    set_profiles, submits,
};

const PIPELINE: usize = 16;

struct Args {
    url: Option<String>,
    cluster: bool,
    players: usize,
    memory_players: usize,
    connections: usize,
    gather: bool,
    gather_submits: bool,
    settle: bool,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        url: None,
        cluster: false,
        players: 1_000_000,
        memory_players: 200_000,
        connections: RedisOptions::default().connections,
        gather: RedisOptions::default().gather_joins,
        gather_submits: RedisOptions::default().gather_submits,
        settle: true,
    };
    let mut it = std::env::args().filter(|a| a != "--bench").skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--cluster" => a.cluster = true,
            "--players" => {
                a.players = it
                    .next()
                    .and_then(|v| v.replace('_', "").parse().ok())
                    .ok_or("--players takes a number")?
            }
            "--memory-players" => {
                a.memory_players = it
                    .next()
                    .and_then(|v| v.replace('_', "").parse().ok())
                    .ok_or("--memory-players takes a number")?
            }
            "--connections" => {
                a.connections = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .filter(|n| *n >= 1)
                    .ok_or("--connections takes a number of at least 1")?
            }
            "--no-gather" => {
                a.gather = false;
                a.gather_submits = false;
            }
            "--no-gather-submits" => a.gather_submits = false,
            "--no-settle" => a.settle = false,
            url if url.contains("://") => a.url = Some(url.to_owned()),
            other => {
                return Err(format!(
                    "unknown argument {other:?}; usage: bench [URL] [--cluster] [--players N] \
                     [--memory-players N] [--connections N] [--no-gather] [--no-gather-submits] [--no-settle]"
                ));
            }
        }
    }
    Ok(a)
}

/// A redis-server (or three, as a cluster) this program started, stopped on drop.
struct Servers {
    children: Vec<Child>,
    dir: PathBuf,
}

impl Drop for Servers {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn cli(port: u16, args: &[&str]) -> String {
    let out = Command::new("redis-cli")
        .arg("-p")
        .arg(port.to_string())
        .args(args)
        .output()
        .expect("redis-cli (apt-get install redis-server)");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn start(cluster: bool) -> (Servers, String) {
    let dir = std::env::temp_dir().join(format!("leaguekit-bench-{}", std::process::id()));
    let mut servers = Servers {
        children: Vec::new(),
        dir: dir.clone(),
    };
    let mut ports = Vec::new();
    for i in 0..if cluster { 3 } else { 1 } {
        let port = free_port();
        let d = dir.join(format!("n{i}"));
        std::fs::create_dir_all(&d).expect("temp dir");
        let mut cmd = Command::new("redis-server");
        cmd.args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&d)
            .stdout(Stdio::null());
        if cluster {
            cmd.args(["--cluster-enabled", "yes"]);
        }
        servers.children.push(
            cmd.spawn()
                .expect("redis-server (apt-get install redis-server)"),
        );
        ports.push(port);
    }
    for &p in &ports {
        let t = Instant::now();
        while !cli(p, &["ping"]).contains("PONG") {
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "redis-server did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    if !cluster {
        return (servers, format!("redis://127.0.0.1:{}/", ports[0]));
    }
    let nodes: Vec<String> = ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
    let status = Command::new("redis-cli")
        .args(["--cluster", "create"])
        .args(&nodes)
        .args(["--cluster-replicas", "0", "--cluster-yes"])
        .stdout(Stdio::null())
        .status()
        .expect("redis-cli --cluster create");
    assert!(status.success(), "redis-cli --cluster create failed");
    let t = Instant::now();
    while !ports
        .iter()
        .all(|&p| cli(p, &["cluster", "info"]).contains("cluster_state:ok"))
    {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "the cluster is not ok"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    (servers, format!("redis+cluster://{}/", nodes.join(",")))
}

/// Host, port, user and password of each node of a `redis://` or
/// `redis+cluster://` URL (a running cluster: its seeds are taken as its masters).
struct Node {
    host: String,
    port: u16,
    auth: Option<(String, String)>,
}

impl Node {
    /// A `redis://` URL of this node alone, with the user and password given (as
    /// written in the URL the node came from, so still percent-encoded).
    fn url(&self) -> String {
        match &self.auth {
            Some((user, password)) => {
                format!("redis://{user}:{password}@{}:{}/", self.host, self.port)
            }
            None => format!("redis://{}:{}/", self.host, self.port),
        }
    }
}

fn nodes_of(url: &str) -> Result<(Vec<Node>, bool), String> {
    let (cluster, rest) = if let Some(r) = url.strip_prefix("redis+cluster://") {
        (true, r)
    } else if let Some(r) = url.strip_prefix("redis://") {
        (false, r)
    } else {
        return Err(format!(
            "the baselines need redis:// or redis+cluster:// (redis-benchmark here has no \
             TLS client certificate set-up): {url}"
        ));
    };
    let rest = rest.split('/').next().unwrap_or("");
    let (auth, hosts) = match rest.rsplit_once('@') {
        Some((a, h)) => {
            let (u, p) = a.split_once(':').unwrap_or(("default", a));
            (Some((u.to_owned(), p.to_owned())), h)
        }
        None => (None, rest),
    };
    let mut out = Vec::new();
    for h in hosts.split(',') {
        let (host, port) = h.rsplit_once(':').unwrap_or((h, "6379"));
        out.push(Node {
            host: host.to_owned(),
            port: port.parse().map_err(|_| format!("bad port in {url}"))?,
            auth: auth.clone(),
        });
    }
    Ok((out, cluster))
}

/// A hash tag that a node owns, for each node (all of them on one server).
async fn tags_per_node(
    client: &mut redis::aio::MultiplexedConnection,
    nodes: &[Node],
    cluster: bool,
) -> Vec<String> {
    if !cluster {
        return vec!["raw".to_owned()];
    }
    // CLUSTER SLOTS: [[start, end, [host, port, id], ...], ...]
    let slots: Vec<(i64, i64, (String, i64))> = redis::cmd("CLUSTER")
        .arg("SLOTS")
        .query_async::<Vec<redis::Value>>(client)
        .await
        .expect("cluster slots")
        .into_iter()
        .filter_map(|v| match v {
            redis::Value::Array(items) if items.len() >= 3 => {
                let int = |v: &redis::Value| match v {
                    redis::Value::Int(i) => Some(*i),
                    _ => None,
                };
                let node = match &items[2] {
                    redis::Value::Array(n) if n.len() >= 2 => match (&n[0], &n[1]) {
                        (redis::Value::BulkString(h), redis::Value::Int(p)) => {
                            Some((String::from_utf8_lossy(h).into_owned(), *p))
                        }
                        _ => None,
                    },
                    _ => None,
                };
                Some((int(&items[0])?, int(&items[1])?, node?))
            }
            _ => None,
        })
        .collect();
    let mut tags = Vec::new();
    for node in nodes {
        let mut i = 0u32;
        loop {
            let tag = format!("raw{i}");
            let slot: i64 = redis::cmd("CLUSTER")
                .arg("KEYSLOT")
                .arg(&tag)
                .query_async(client)
                .await
                .expect("keyslot");
            if slots
                .iter()
                .any(|(a, b, (_, p))| (*a..=*b).contains(&slot) && *p == i64::from(node.port))
            {
                tags.push(tag);
                break;
            }
            i += 1;
        }
    }
    tags
}

/// A redis-benchmark run on each node at once (its share of the connections), on
/// keys of a slot it owns: the summed requests per second, and p50/p99 latency of
/// the first node, in microseconds.
fn redis_benchmark(nodes: &[Node], tags: &[String], n: usize, cmd: &[String]) -> (f64, f64, f64) {
    let runs: Vec<_> = nodes
        .iter()
        .zip(tags)
        .map(|(node, tag)| {
            let mut c = Command::new("redis-benchmark");
            c.args(["-h", &node.host, "-p", &node.port.to_string()])
                .args(["-c", &TASKS.div_ceil(nodes.len()).to_string()])
                .args(["-P", &PIPELINE.to_string()])
                .args(["-n", &(n / nodes.len()).to_string()])
                .args(["-r", "1000000", "--csv"]);
            if let Some((user, password)) = &node.auth {
                c.args(["--user", user, "-a", password]);
            }
            c.args(cmd.iter().map(|a| a.replace("TAG", tag)))
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .expect("redis-benchmark (apt-get install redis-server)")
        })
        .collect();
    let mut rps = 0.0;
    let mut lat = (0.0, 0.0);
    for (i, run) in runs.into_iter().enumerate() {
        let out = run.wait_with_output().expect("redis-benchmark ran");
        let text = String::from_utf8_lossy(&out.stdout);
        // "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms",
        // "p95_latency_ms","p99_latency_ms","max_latency_ms"
        let row = text
            .lines()
            .nth(1)
            .unwrap_or_else(|| panic!("redis-benchmark printed nothing usable: {text}"));
        let cols: Vec<f64> = row
            .split("\",\"")
            .skip(1)
            .map(|c| c.trim_matches('"').parse().unwrap_or(0.0))
            .collect();
        rps += cols.first().copied().unwrap_or(0.0);
        if i == 0 {
            lat = (
                cols.get(3).copied().unwrap_or(0.0) * 1000.0,
                cols.get(5).copied().unwrap_or(0.0) * 1000.0,
            );
        }
    }
    (rps, lat.0, lat.1)
}

/// One node's `INFO section`, read with redis-cli.
fn node_info(node: &Node, section: &str) -> String {
    let mut c = Command::new("redis-cli");
    c.args(["-h", &node.host, "-p", &node.port.to_string()]);
    if let Some((user, password)) = &node.auth {
        c.args(["--user", user, "--pass", password, "--no-auth-warning"]);
    }
    let out = c.args(["info", section]).output().expect("redis-cli");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "INFO {section} on {}:{} failed: {text}",
        node.host,
        node.port
    );
    text
}

async fn used_memory(url: &str) -> u64 {
    // On a cluster, the sum over the masters.
    let (nodes, _) = nodes_of(url).unwrap_or_default();
    nodes
        .iter()
        .map(|node| common::used_memory_in(&node_info(node, "memory")))
        .sum()
}

fn season(prefix: &str) -> Season {
    common::bench_season(prefix)
}

/// The `p` quantile of `sorted`, in microseconds.
fn pct(sorted: &[Duration], p: f64) -> f64 {
    common::percentile(sorted, p).as_secs_f64() * 1e6
}

/// Sets a two-field profile for `ids` (from TASKS tasks), then joins them all through
/// `join_many`: the profiles' rate, the placements' rate and the CPU a placement.
async fn load(
    league: &Arc<League<RedisStore>>,
    ids: &Arc<Vec<String>>,
    profiles: bool,
    nodes: &[Node],
) -> (f64, f64, Cpu) {
    let profile_rate = if profiles {
        set_profiles(league, ids).await
    } else {
        0.0
    };
    settle(nodes).await.expect("settle");
    let cpu = Cpu::now(nodes);
    let t = Instant::now();
    join_all(league, ids).await;
    let rate = ids.len() as f64 / t.elapsed().as_secs_f64();
    (profile_rate, rate, cpu.per_op(nodes, ids.len()))
}

/// Waits until no node is rehashing its keyspace, and drives the rehash on meanwhile:
/// a phase measured during another phase's rehash pays for keys it did not create.
///
/// Redis grows a database's dictionary (and its dictionary of expiries) by doubling
/// it and moving the keys over one bucket at a time: one step with each lookup, and
/// a millisecond each tenth of a second in its cron. A phase that adds many keys (the
/// submits' request ids, the seeds' script's, which create two keys an update) can
/// leave a rehash of a million keys half done, and the phases after it pay for the
/// rest: 18% of Redis's time in the first read row of one run (measured with `perf`),
/// before this wait. Each phase still pays for the rehashes its own keys cause.
///
/// Whether a dictionary is rehashing is read from MEMORY STATS, whose overhead of a
/// database's keyspace is, on Redis 7.0, 40 B a key (the entry and the key's object)
/// plus 8 B a slot of both tables, and of its expiries 24 B a key plus 8 B a slot:
/// a table not rehashing has a power of two of slots, one rehashing the sum of two.
/// Another layout (a keyspace split into a dictionary a slot, as newer servers' cluster
/// mode has) is not waited for, and the program says so. RANDOMKEY drives the rehash:
/// it takes up to 15 steps on the keyspace and one on the expiries.
async fn settle(nodes: &[Node]) -> Result<(), Box<dyn std::error::Error>> {
    if NO_SETTLE.load(std::sync::atomic::Ordering::Relaxed) {
        return Ok(());
    }
    let t = Instant::now();
    for node in nodes {
        let mut con = redis::Client::open(node.url())?
            .get_multiplexed_async_connection()
            .await?;
        loop {
            match rehashing(&mut con).await? {
                Some(true) => {}
                Some(false) => break,
                None => {
                    if !UNKNOWN_LAYOUT.swap(true, std::sync::atomic::Ordering::Relaxed) {
                        println!(
                            "  (not waiting for rehashes on {}:{}: its MEMORY STATS do not \
                             add up as Redis 7.0's)",
                            node.host, node.port
                        );
                    }
                    break;
                }
            }
            if t.elapsed() > Duration::from_secs(60) {
                println!("  (still rehashing after 60 s; measuring anyway)");
                break;
            }
            let mut pipe = redis::pipe();
            for _ in 0..20_000 {
                pipe.cmd("RANDOMKEY").ignore();
            }
            pipe.query_async::<()>(&mut con).await?;
        }
    }
    let waited = u64::try_from(t.elapsed().as_millis()).unwrap_or(u64::MAX);
    SETTLED_MS.fetch_add(waited, std::sync::atomic::Ordering::Relaxed);
    Ok(())
}

/// `--no-settle`: [`settle`] returns at once.
static NO_SETTLE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether [`settle`] has said it cannot read a node's rehashes (said once).
static UNKNOWN_LAYOUT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Milliseconds [`settle`] has waited in all.
static SETTLED_MS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Whether a dictionary of the node's keyspace is being rehashed (see [`settle`]);
/// `None` when its MEMORY STATS do not add up as Redis 7.0's.
async fn rehashing(
    con: &mut redis::aio::MultiplexedConnection,
) -> Result<Option<bool>, redis::RedisError> {
    use redis::Value;
    let keyspace: String = redis::cmd("INFO").arg("keyspace").query_async(con).await?;
    let stats: Value = redis::cmd("MEMORY").arg("STATS").query_async(con).await?;
    let pairs = |v: &Value| -> Vec<(String, Value)> {
        match v {
            Value::Array(items) => items
                .chunks_exact(2)
                .filter_map(|kv| match &kv[0] {
                    Value::BulkString(k) => {
                        Some((String::from_utf8_lossy(k).into_owned(), kv[1].clone()))
                    }
                    Value::SimpleString(k) => Some((k.clone(), kv[1].clone())),
                    _ => None,
                })
                .collect(),
            Value::Map(items) => items
                .iter()
                .filter_map(|(k, v)| match k {
                    Value::BulkString(k) => {
                        Some((String::from_utf8_lossy(k).into_owned(), v.clone()))
                    }
                    Value::SimpleString(k) => Some((k.clone(), v.clone())),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    };
    // A table's slots: a power of two (or none) when settled, the sum of two while
    // rehashing; anything else is not this layout.
    let table = |bytes: i64, keys: i64, per_key: i64| -> Option<bool> {
        let slots = bytes.checked_sub(keys * per_key)?;
        if slots < 0 || slots % 8 != 0 {
            return None;
        }
        let slots = slots / 8;
        match slots.count_ones() {
            0 | 1 => Some(false),
            2 => Some(true),
            _ => None,
        }
    };
    let mut any = false;
    for line in keyspace.lines() {
        // db0:keys=1000,expires=10,avg_ttl=0
        let Some((db, rest)) = line.trim().split_once(':') else {
            continue;
        };
        let Some(n) = db.strip_prefix("db") else {
            continue;
        };
        let field = |name: &str| {
            rest.split(',')
                .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
                .and_then(|v| v.parse::<i64>().ok())
        };
        let (Some(keys), Some(expires)) = (field("keys"), field("expires")) else {
            return Ok(None);
        };
        let Some((_, db_stats)) = pairs(&stats)
            .into_iter()
            .find(|(k, _)| *k == format!("db.{n}"))
        else {
            return Ok(None);
        };
        let db_stats = pairs(&db_stats);
        let int = |name: &str| {
            db_stats.iter().find_map(|(k, v)| match v {
                Value::Int(i) if k == name => Some(*i),
                _ => None,
            })
        };
        let (Some(main), Some(exp)) = (
            int("overhead.hashtable.main"),
            int("overhead.hashtable.expires"),
        ) else {
            return Ok(None);
        };
        match (table(main, keys, 40), table(exp, expires, 24)) {
            (Some(a), Some(b)) => any |= a || b,
            _ => return Ok(None),
        }
    }
    Ok(Some(any))
}

/// Seconds of CPU the servers have used (INFO's `used_cpu_user` + `used_cpu_sys`,
/// summed over the nodes): taken around a phase, Redis's CPU per operation, the
/// figure a ratio is made of when Redis is the limit.
fn redis_cpu(nodes: &[Node]) -> f64 {
    let mut total = 0.0;
    for node in nodes {
        let info = node_info(node, "cpu");
        let used: Vec<f64> = info
            .lines()
            .filter_map(|l| {
                l.strip_prefix("used_cpu_user:")
                    .or_else(|| l.strip_prefix("used_cpu_sys:"))
            })
            .filter_map(|v| v.trim().parse().ok())
            .collect();
        assert_eq!(used.len(), 2, "no used_cpu_user/sys in INFO cpu: {info}");
        total += used.iter().sum::<f64>();
    }
    total
}

/// Redis's CPU and this process's, taken before a phase.
#[derive(Clone, Copy)]
struct Cpu {
    redis: f64,
    own: f64,
}

impl Cpu {
    fn now(nodes: &[Node]) -> Cpu {
        Cpu {
            redis: redis_cpu(nodes),
            own: own_cpu(),
        }
    }

    /// µs of each a operation since `self`, over `ops` operations.
    fn per_op(self, nodes: &[Node], ops: usize) -> Cpu {
        let now = Cpu::now(nodes);
        Cpu {
            redis: (now.redis - self.redis) * 1e6 / ops as f64,
            own: (now.own - self.own) * 1e6 / ops as f64,
        }
    }
}

/// The line under a row: Redis's CPU per operation, ours and the baseline's, and this
/// process's (the library's client side with the bench's tasks) in ours.
fn cpu_row(ours: Cpu, raw: f64) {
    println!(
        "  Redis CPU an operation: {:.1} us, raw {raw:.1} us; this process's: {:.1} us",
        ours.redis, ours.own
    );
}

fn row(what: &str, ours: f64, raw: f64, unit: &str) {
    println!(
        "{what:<44} {ours:>12.0} {raw:>12.0} {unit:<9} x{:.2}",
        if raw > 0.0 { ours / raw } else { 0.0 }
    );
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a = args()?;
    NO_SETTLE.store(!a.settle, std::sync::atomic::Ordering::Relaxed);
    let (_servers, url) = match &a.url {
        Some(u) => (None, u.clone()),
        None => {
            let (s, u) = start(a.cluster);
            (Some(s), u)
        }
    };
    let (nodes, cluster) = nodes_of(&url)?;
    let tag = chrono::Utc::now().timestamp_millis() % 1_000_000;
    let opened = season("x").schedule.start;
    let clock = ManualClock::new(opened + Span::hours(12));
    let store = RedisStore::connect(
        &url,
        RedisOptions::default()
            .with_connections(a.connections)
            .with_gather_joins(a.gather)
            .with_gather_submits(a.gather_submits),
    )
    .await?;
    let league_of = |prefix: String| {
        Arc::new(League::with_clock(
            season(&prefix),
            store.clone(),
            Arc::new(clock.clone()),
        ))
    };
    let client = if cluster {
        // Any node answers CLUSTER SLOTS and KEYSLOT.
        redis::Client::open(nodes[0].url())?
    } else {
        redis::Client::open(url.as_str())?
    };
    let mut con = client.get_multiplexed_async_connection().await?;
    let tags = tags_per_node(&mut con, &nodes, cluster).await;
    println!(
        "leaguekit bench: {} players in brackets of 100 with profiles, {} tasks, {}, joins {}, \
         submits {}, on {}{}",
        a.players,
        TASKS,
        if cluster {
            "redis-rs's cluster connection".to_owned()
        } else {
            format!("{} connection(s)", a.connections)
        },
        if a.gather { "gathered" } else { "each alone" },
        if a.gather_submits {
            "gathered"
        } else {
            "each alone"
        },
        if cluster { "a cluster of " } else { "" },
        nodes
            .iter()
            .map(|n| format!("{}:{}", n.host, n.port))
            .collect::<Vec<_>>()
            .join(",")
    );

    // Memory: joined players without a profile, then with a two-field one.
    let m = a.memory_players;
    let ids: Arc<Vec<String>> = Arc::new((0..m).map(|i| format!("m{i:07}")).collect());
    settle(&nodes).await?;
    let before = used_memory(&url).await;
    let (_, bare_rate, _) = load(&league_of(format!("m0x{tag}")), &ids, false, &nodes).await;
    settle(&nodes).await?;
    let mid = used_memory(&url).await;
    load(&league_of(format!("m2x{tag}")), &ids, true, &nodes).await;
    settle(&nodes).await?;
    let after = used_memory(&url).await;
    let bytes = mid.saturating_sub(before) as f64 / m as f64;
    let bytes_profiles = after.saturating_sub(mid) as f64 / m as f64;
    println!(
        "memory over {m} joined players: {bytes:.0} B each without a profile, \
         {bytes_profiles:.0} B with a two-field profile (join_many alone: {bare_rate:.0}/s)"
    );

    // The league: profiles, then the bulk join.
    let league = league_of(format!("bx{tag}"));
    let ids: Arc<Vec<String>> = Arc::new((0..a.players).map(|i| format!("p{i:07}")).collect());
    let (profile_rate, load_rate, load_cpu) = load(&league, &ids, true, &nodes).await;
    println!(
        "loaded {} players: profiles {profile_rate:.0}/s (set_profile, {TASKS} tasks), \
         placements {load_rate:.0}/s (join_many, {JOIN_CHUNK} a call)",
        a.players
    );
    let brackets = a.players.div_ceil(100);
    let n_ops = 200_000.min(a.players);
    println!(
        "{:<44} {:>12} {:>12} {:<9} ratio",
        "", "leaguekit", "raw Redis", "unit"
    );

    // Idempotent submits, steady state (placements cached), vs the seeds' script.
    let at = opened + Span::hours(11);
    settle(&nodes).await?;
    let cpu = Cpu::now(&nodes);
    let (submit_rate, submit_lat) = submits(&league, &ids, at, "r", 0..n_ops, false).await;
    let submit_cpu = cpu.per_op(&nodes, n_ops);
    let sha: String = redis::cmd("SCRIPT")
        .arg("LOAD")
        .arg(SEED_UPDATE)
        .query_async(&mut con)
        .await?;
    let mut loaded = 0;
    for node in &nodes {
        // Every node needs the scripts (a cluster node only has what it was sent).
        let c = redis::Client::open(node.url())?;
        let mut c = c.get_multiplexed_async_connection().await?;
        let _: String = redis::cmd("SCRIPT")
            .arg("LOAD")
            .arg(SEED_UPDATE)
            .query_async(&mut c)
            .await?;
        let _: String = redis::cmd("SCRIPT")
            .arg("LOAD")
            .arg(RAW_JOIN)
            .query_async(&mut c)
            .await?;
        loaded += 1;
    }
    assert_eq!(loaded, nodes.len());
    settle(&nodes).await?;
    let cpu = redis_cpu(&nodes);
    let raw_submit = redis_benchmark(
        &nodes,
        &tags,
        n_ops * 4,
        &[
            "EVALSHA",
            &sha,
            "1",
            "{TAG}:b__rand_int__",
            "rq__rand_int__",
            "p__rand_int__",
            "7",
            "1767225600",
        ]
        .map(str::to_owned),
    );
    let raw_submit_cpu = (redis_cpu(&nodes) - cpu) * 1e6 / (n_ops * 4) as f64;
    row("idempotent submit", submit_rate, raw_submit.0, "ops/s");
    cpu_row(submit_cpu, raw_submit_cpu);
    // The seeds' update on boards like a bracket's, 100 members (redis-benchmark's
    // random keys give its boards about one member each; see
    // `common::fill_seed_boards`): driven from this program, so compared by Redis's CPU
    // an update, not by rate.
    let mut targets = Vec::new();
    for (node, tag) in nodes.iter().zip(&tags) {
        let c = redis::Client::open(node.url())?;
        let mut c = c.get_multiplexed_async_connection().await?;
        common::fill_seed_boards(&mut c, tag).await?;
        targets.push((c, tag.clone()));
    }
    settle(&nodes).await?;
    let cpu = redis_cpu(&nodes);
    let (seed_rate, seed_ops) = common::seed_updates(Arc::new(targets), &sha, "s", n_ops).await;
    let seed_cpu = (redis_cpu(&nodes) - cpu) * 1e6 / seed_ops as f64;
    let submit_cpu_ratio_boards100 = seed_cpu / submit_cpu.redis;
    println!(
        "  the seeds' update on boards of 100 (pipelines of 16 from {TASKS} tasks): \
         {seed_rate:.0} ops/s, Redis CPU {seed_cpu:.1} us an update: ours x{submit_cpu_ratio_boards100:.2} \
         by Redis CPU"
    );
    // The same submits leaving the rank out (no ZRANK, the scan of the board's listpack
    // that a rank costs), against the same submits with it: alternating rounds, since
    // this machine's speed drifts within minutes and every round adds keys.
    // (seconds, Redis's CPU, this process's CPU) of each kind's rounds.
    let (mut ranked, mut unranked) = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0));
    let round = n_ops / 8;
    for r in 0..8 {
        let without_rank = r % 2 == 1;
        settle(&nodes).await?;
        let cpu = Cpu::now(&nodes);
        let t = Instant::now();
        submits(
            &league,
            &ids,
            at,
            "u",
            r * round..(r + 1) * round,
            without_rank,
        )
        .await;
        let after = Cpu::now(&nodes);
        let spent = (
            t.elapsed().as_secs_f64(),
            after.redis - cpu.redis,
            after.own - cpu.own,
        );
        let sum = if without_rank {
            &mut unranked
        } else {
            &mut ranked
        };
        *sum = (sum.0 + spent.0, sum.1 + spent.1, sum.2 + spent.2);
    }
    let half = (round * 4) as f64;
    let unranked_rate = half / unranked.0;
    println!(
        "  alternating rounds of {round}: with the rank {:.0} ops/s, {:.1} us of Redis CPU each",
        half / ranked.0,
        ranked.1 * 1e6 / half
    );
    row(
        "  the same, without_rank()",
        unranked_rate,
        raw_submit.0,
        "ops/s",
    );
    cpu_row(
        Cpu {
            redis: unranked.1 * 1e6 / half,
            own: unranked.2 * 1e6 / half,
        },
        raw_submit_cpu,
    );

    // Standings pages of 100 with profiles vs ZREVRANGE of a 100-member set. Every
    // bracket's page was dropped by the submits above, so each bracket's first read
    // here builds its page and the later ones read it kept.
    settle(&nodes).await?;
    let cpu = Cpu::now(&nodes);
    let (read_rate, read_lat) = read_pages(&league, n_ops / 4, brackets).await;
    let read_cpu = cpu.per_op(&nodes, n_ops / 4);
    // The same reads again: every page is kept now, so these are the steady state of
    // brackets read more often than written, and the difference is what builds cost.
    settle(&nodes).await?;
    let cpu = Cpu::now(&nodes);
    let (kept_rate, _) = read_pages(&league, n_ops / 4, brackets).await;
    let kept_cpu = cpu.per_op(&nodes, n_ops / 4);
    // Reads of brackets in play: a score update drops the bracket's pages, so the
    // read after it builds again, with the profiles the builds above kept as one
    // string (a score does not touch them; they are kept as long as pages are). One
    // score to each bracket's leader (read from its kept page), then one read of each
    // bracket: every read of this row is such a build.
    {
        let l = league.clone();
        concurrent(brackets, move |i| {
            let l = l.clone();
            async move {
                let b = i as u32 + 1;
                let top = l
                    .standings("bronze", b, Some(1), 0, 1)
                    .await
                    .expect("standings");
                if let Some(leader) = top.entries.first() {
                    let o = SubmitOptions::default().request_id(format!("rb{b}")).at(at);
                    l.submit(&leader.player, 1, o).await.expect("submit");
                }
            }
        })
        .await;
    }
    settle(&nodes).await?;
    let cpu = Cpu::now(&nodes);
    let (rebuilt_rate, _) = read_pages(&league, brackets, brackets).await;
    let rebuilt_cpu = cpu.per_op(&nodes, brackets);
    for (node, tag) in nodes.iter().zip(&tags) {
        let c = redis::Client::open(node.url())?;
        let mut c = c.get_multiplexed_async_connection().await?;
        let mut cmd = redis::cmd("ZADD");
        cmd.arg(format!("{{{tag}}}:page"));
        for i in 0..100 {
            cmd.arg(i * 1000 + 7).arg(format!("player-{i:05}"));
        }
        let _: i64 = cmd.query_async(&mut c).await?;
    }
    settle(&nodes).await?;
    let cpu = redis_cpu(&nodes);
    let raw_read = redis_benchmark(
        &nodes,
        &tags,
        n_ops,
        &["ZREVRANGE", "{TAG}:page", "0", "99", "WITHSCORES"].map(str::to_owned),
    );
    let raw_read_cpu = (redis_cpu(&nodes) - cpu) * 1e6 / n_ops as f64;
    row(
        "standings page of 100 with profiles",
        read_rate,
        raw_read.0,
        "pages/s",
    );
    cpu_row(read_cpu, raw_read_cpu);
    row(
        "  the same, every page kept",
        kept_rate,
        raw_read.0,
        "pages/s",
    );
    cpu_row(kept_cpu, raw_read_cpu);
    row(
        "  each right after a score (a build)",
        rebuilt_rate,
        raw_read.0,
        "pages/s",
    );
    cpu_row(rebuilt_cpu, raw_read_cpu);
    // The same reads with the page cache off: every page built (in the client, from
    // one MULTI), as the first read of a bracket after a write is.
    let cold_store = RedisStore::connect(
        &url,
        RedisOptions::default()
            .with_page_cache(Duration::ZERO)
            .with_connections(a.connections),
    )
    .await?;
    let cold = Arc::new(League::with_clock(
        season(&format!("bx{tag}")),
        cold_store,
        Arc::new(clock.clone()),
    ));
    settle(&nodes).await?;
    let cpu = Cpu::now(&nodes);
    let (cold_rate, _) = read_pages(&cold, n_ops / 4, brackets).await;
    let cold_cpu = cpu.per_op(&nodes, n_ops / 4);
    row(
        "  the same, page cache off",
        cold_rate,
        raw_read.0,
        "pages/s",
    );
    cpu_row(cold_cpu, raw_read_cpu);
    println!(
        "  ({} of the {} reads of the first row were a bracket's first, built; the others \
         were kept pages)",
        brackets.min(n_ops / 4),
        n_ops / 4
    );

    // Joins of new players, one call each, vs one script doing HINCRBY + HSET + ZADD.
    let l = league.clone();
    settle(&nodes).await?;
    let cpu = Cpu::now(&nodes);
    let (join_rate, _) = concurrent(n_ops / 2, move |i| {
        let l = l.clone();
        async move {
            l.join(&format!("j{i:07}"), None).await.expect("join");
        }
    })
    .await;
    let join_cpu = cpu.per_op(&nodes, n_ops / 2);
    let raw_join_sha: String = redis::cmd("SCRIPT")
        .arg("LOAD")
        .arg(RAW_JOIN)
        .query_async(&mut con)
        .await?;
    settle(&nodes).await?;
    let cpu = redis_cpu(&nodes);
    let raw_join = redis_benchmark(
        &nodes,
        &tags,
        n_ops,
        &[
            "EVALSHA",
            &raw_join_sha,
            "3",
            "{TAG}:joins",
            "{TAG}:assign",
            "{TAG}:board:",
            "j__rand_int__",
        ]
        .map(str::to_owned),
    );
    let raw_join_cpu = (redis_cpu(&nodes) - cpu) * 1e6 / n_ops as f64;
    row("join of a new player", join_rate, raw_join.0, "joins/s");
    cpu_row(join_cpu, raw_join_cpu);
    row(
        "placing new players (join_many)",
        load_rate,
        raw_join.0,
        "players/s",
    );
    cpu_row(load_cpu, raw_join_cpu);

    // The rollover of everyone loaded (and joined since).
    clock.set(opened + Span::days(1) + Span::seconds(6));
    settle(&nodes).await?;
    let t = Instant::now();
    let report = league.rollover(None, RolloverOptions::default()).await?;
    let rollover_s = t.elapsed().as_secs_f64();
    let closed = report.closed.first().ok_or("the rollover closed nothing")?;
    println!(
        "rollover of {} players in {} brackets: {rollover_s:.2} s",
        closed.totals.players, closed.brackets
    );
    if a.settle {
        println!(
            "waited {:.1} s in all, outside the measured phases, for rehashes of the keyspace \
             to finish (see `settle`)",
            SETTLED_MS.load(std::sync::atomic::Ordering::Relaxed) as f64 / 1000.0
        );
    } else {
        println!("--no-settle: phases measured whatever rehash was in progress");
    }

    println!(
        "submit latency p50/p99 {:.0}/{:.0} us (raw -P {PIPELINE}: {:.0}/{:.0} us); \
         standings {:.0}/{:.0} us (raw {:.0}/{:.0} us)",
        pct(&submit_lat, 0.5),
        pct(&submit_lat, 0.99),
        raw_submit.1,
        raw_submit.2,
        pct(&read_lat, 0.5),
        pct(&read_lat, 0.99),
        raw_read.1,
        raw_read.2
    );
    let dir = Path::new("target").join("bench");
    let _ = std::fs::create_dir_all(&dir);
    let last = format!(
        "submit_ratio={:.2} submit_unranked_ratio={:.2} read_ratio={:.2} read_kept_ratio={:.2} read_rebuilt_ratio={:.2} read_uncached_ratio={:.2} \
         join_ratio={:.2} \
         submit_p50_us={:.0} \
         submit_p99_us={:.0} read_p50_us={:.0} read_p99_us={:.0} load_players_per_s={:.0} \
         rollover_s={:.2} bytes_per_player={:.0} bytes_per_player_profiles={:.0} \
         submit_cpu_ratio_boards100={:.2}",
        submit_rate / raw_submit.0,
        unranked_rate / raw_submit.0,
        read_rate / raw_read.0,
        kept_rate / raw_read.0,
        rebuilt_rate / raw_read.0,
        cold_rate / raw_read.0,
        join_rate / raw_join.0,
        pct(&submit_lat, 0.5),
        pct(&submit_lat, 0.99),
        pct(&read_lat, 0.5),
        pct(&read_lat, 0.99),
        load_rate,
        rollover_s,
        bytes,
        bytes_profiles,
        submit_cpu_ratio_boards100
    );
    let _ = std::fs::write(dir.join("last.txt"), format!("{last}\n"));
    println!("{last}");
    Ok(())
}
