//! Measures `leaguekit serve` over HTTP against the library called directly, in the
//! same run, on the same Redis, with the same work, and prints both with their ratio.
//!
//! ```text
//! redis-server --port 6390 --save '' --daemonize yes
//! cargo bench --bench bench_http -- redis://127.0.0.1:6390/ [REQUESTS] [CLIENTS]
//! ```
//!
//! The HTTP side is the service `leaguekit serve` runs (`leaguekit::server::router`
//! with every layer: auth, limits, timeouts, compression, metrics, tracing), served on
//! a loopback port of this process; CLIENTS (default 50) keep-alive clients, each
//! with its own connection, send REQUESTS requests in all. The direct side is the same
//! number of tasks calling `League::submit` / `League::standings` on one shared
//! `League`. Both leagues have the same players (PLAYERS = 5000, joined beforehand,
//! with names), each under its own key prefix. Every submit carries a request id, as
//! a game server's should. Each measurement is taken twice, alternating HTTP and
//! direct after a warm-up, and the better of the two is printed for each (the
//! machine may be shared): requests/s, p50 and p99 latency, CPU time per request of
//! this process and of Redis (`INFO cpu`), and HTTP's share of direct throughput. A
//! bare axum handler on the same clients gives the HTTP floor of the machine. The
//! clients run on the same cores as the server, so on a small machine their CPU is
//! part of the HTTP figures.
//!
//! Last, webhooks, with the deliverer `leaguekit serve` runs
//! (`leaguekit::server::webhooks::start`) POSTing signed events to a receiver on a
//! loopback port of this process that answers 200 at once:
//! - the delivery rate: 2,000 players join a league with an event log in brackets of
//!   two (1,000 bracket logs), then the deliverer starts; events/s from its start to
//!   the last event received (its first looks included);
//! - the delay: 1,000 more join at 500 a second while it runs; p50/p99 of the time
//!   from each event's write (its log position) to its arrival;
//! - the cost of looking with nothing new: 10,000 bracket logs in the running period
//!   (those of a million players in brackets of 100), all delivered, then 10 s of
//!   nothing; Redis's commands/s and CPU, beside the same 10 s without a deliverer.
//!
//! `cargo bench --bench bench_http -- REDIS_URL webhooks` measures only these.

#[allow(dead_code)] // each benchmark uses part of it
mod common;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use leaguekit::server::{CancellationToken, ServerOptions, Tokens};
use leaguekit::{League, RedisOptions, RedisStore, Season, SubmitOptions};

const PLAYERS: usize = 5000;
const TOKEN: &str = "bench-server-token-0123456789";

fn season(prefix: &str) -> Result<Season, Box<dyn std::error::Error>> {
    let text = std::fs::read_to_string("config/season.toml").map_err(|e| {
        format!("cannot read config/season.toml ({e}): run from the repository root")
    })?;
    let text = text.replacen(
        "key_prefix = \"lk\"",
        &format!("key_prefix = \"{prefix}\""),
        1,
    );
    Ok(Season::from_toml(&text, "config/season.toml")?)
}

fn player(i: usize) -> String {
    format!("player-{i:05}")
}

/// One measurement: requests, wall time, CPU time of this process and of Redis, and
/// every latency, sorted.
struct Run {
    n: usize,
    wall: Duration,
    lat: Vec<Duration>,
    /// This process's CPU over the run (user + system, all threads).
    cpu: Duration,
    redis_cpu: Option<Duration>,
}

/// Redis's CPU time (used_cpu_user + used_cpu_sys of INFO cpu).
async fn redis_cpu(con: &mut redis::aio::MultiplexedConnection) -> Option<Duration> {
    let info: String = redis::cmd("INFO").arg("cpu").query_async(con).await.ok()?;
    let field = |name: &str| -> Option<f64> {
        info.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse().ok())
    };
    Some(Duration::from_secs_f64(
        field("used_cpu_user:")? + field("used_cpu_sys:")?,
    ))
}

impl Run {
    /// CPU per request of this process and of Redis, in microseconds.
    fn cpu_per_request(&self) -> String {
        let per = |d: Option<Duration>| {
            d.map_or("?".to_owned(), |d| {
                format!("{:.0}", d.as_secs_f64() * 1e6 / self.n as f64)
            })
        };
        format!(
            "CPU/request {:>4} µs here + {:>3} µs Redis",
            per(Some(self.cpu)),
            per(self.redis_cpu)
        )
    }

    fn rate(&self) -> f64 {
        self.n as f64 / self.wall.as_secs_f64()
    }

    fn pct(&self, p: f64) -> Duration {
        let i = ((self.lat.len() as f64 - 1.0) * p).round() as usize;
        self.lat.get(i).copied().unwrap_or_default()
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Submit,
    Standings,
    /// A bare axum handler on another port: the HTTP floor of this machine.
    Floor,
}

/// `clients` tasks doing `total` operations in all through `one(worker, i)`.
async fn drive<F, Fut>(clients: usize, total: usize, one: F) -> Result<Run, String>
where
    F: Fn(usize, usize) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<(), String>> + Send,
{
    let one = Arc::new(one);
    let per = total / clients;
    let cpu0 = common::own_cpu();
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(clients);
    for w in 0..clients {
        let one = one.clone();
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::with_capacity(per);
            for i in 0..per {
                let t = Instant::now();
                one(w, i).await?;
                lat.push(t.elapsed());
            }
            Ok::<_, String>(lat)
        }));
    }
    let mut lat = Vec::with_capacity(per * clients);
    for t in tasks {
        lat.extend(t.await.map_err(|e| e.to_string())??);
    }
    let wall = started.elapsed();
    let cpu = Duration::from_secs_f64((common::own_cpu() - cpu0).max(0.0));
    lat.sort();
    Ok(Run {
        n: lat.len(),
        wall,
        lat,
        cpu,
        redis_cpu: None,
    })
}

struct Bench {
    direct: Arc<League<RedisStore>>,
    base: String,
    clients: Vec<reqwest::Client>,
    brackets: usize,
    floor: String,
    con: redis::aio::MultiplexedConnection,
}

impl Bench {
    /// One measurement over HTTP or direct, with Redis's CPU time.
    async fn run(&self, http: bool, op: Op, round: usize, total: usize) -> Result<Run, String> {
        let mut con = self.con.clone();
        let before = redis_cpu(&mut con).await;
        let mut run = if http {
            self.http(op, round, total).await?
        } else {
            self.direct(op, round, total).await?
        };
        run.redis_cpu = redis_cpu(&mut con)
            .await
            .zip(before)
            .map(|(b, a)| b.saturating_sub(a));
        Ok(run)
    }

    async fn http(&self, op: Op, round: usize, total: usize) -> Result<Run, String> {
        let n = self.clients.len();
        let clients = Arc::new(self.clients.clone());
        let base = self.base.clone();
        let floor = self.floor.clone();
        let brackets = self.brackets;
        drive(n, total, move |w, i| {
            let client = clients[w].clone();
            let base = base.clone();
            let floor = floor.clone();
            async move {
                let r = match op {
                    Op::Floor => client.get(format!("{floor}/ping")).send().await,
                    Op::Submit => {
                        let p = player((w + i * n) % PLAYERS);
                        client
                            .post(format!("{base}/v1/players/{p}/scores"))
                            .bearer_auth(TOKEN)
                            .header("content-type", "application/json")
                            .body(format!(
                                "{{\"value\":1,\"request_id\":\"h{round}-{w}-{i}\"}}"
                            ))
                            .send()
                            .await
                    }
                    Op::Standings => {
                        let b = (w + i) % brackets + 1;
                        client
                            .get(format!("{base}/v1/tiers/bronze/brackets/{b}?limit=100"))
                            .bearer_auth(TOKEN)
                            .send()
                            .await
                    }
                }
                .map_err(|e| format!("request failed: {e}"))?;
                let status = r.status();
                let body = r.bytes().await.map_err(|e| e.to_string())?;
                if !status.is_success() {
                    return Err(format!("{status}: {}", String::from_utf8_lossy(&body)));
                }
                Ok(())
            }
        })
        .await
    }

    async fn direct(&self, op: Op, round: usize, total: usize) -> Result<Run, String> {
        let n = self.clients.len();
        let league = self.direct.clone();
        let brackets = self.brackets;
        drive(n, total, move |w, i| {
            let league = league.clone();
            async move {
                match op {
                    Op::Floor => Ok(()),
                    Op::Submit => {
                        let p = player((w + i * n) % PLAYERS);
                        let o = SubmitOptions::default().request_id(format!("d{round}-{w}-{i}"));
                        league.submit(&p, 1, o).await.map(drop)
                    }
                    Op::Standings => {
                        let b = (w + i) % brackets + 1;
                        league
                            .standings("bronze", b as u32, None, 0, 100)
                            .await
                            .map(drop)
                    }
                }
                .map_err(|e| e.to_string())
            }
        })
        .await
    }
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn report(what: &str, http: &Run, direct: &Run) {
    println!(
        "{what:<10} HTTP   {:>9.0}/s  p50 {:>9}  p99 {:>9}  {}",
        http.rate(),
        ms(http.pct(0.5)),
        ms(http.pct(0.99)),
        http.cpu_per_request()
    );
    println!(
        "{:<10} direct {:>9.0}/s  p50 {:>9}  p99 {:>9}  {}",
        "",
        direct.rate(),
        ms(direct.pct(0.5)),
        ms(direct.pct(0.99)),
        direct.cpu_per_request()
    );
    println!(
        "{:<10} HTTP/direct: throughput x{:.2}, p50 x{:.2}, p99 x{:.2}",
        "",
        http.rate() / direct.rate(),
        http.pct(0.5).as_secs_f64() / direct.pct(0.5).as_secs_f64(),
        http.pct(0.99).as_secs_f64() / direct.pct(0.99).as_secs_f64()
    );
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().filter(|a| a != "--bench").skip(1);
    let url = args
        .next()
        .or_else(|| std::env::var("LEAGUEKIT_REDIS").ok())
        .ok_or("usage: bench_http REDIS_URL [REQUESTS [CLIENTS] | webhooks]")?;
    let first = args.next();
    if first.as_deref() == Some("webhooks") {
        return webhook_rate(&url).await;
    }
    let total: usize = first.and_then(|s| s.parse().ok()).unwrap_or(20_000);
    let clients: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(50);
    if clients == 0 || total < clients {
        return Err("REQUESTS must be at least CLIENTS, and CLIENTS at least 1".into());
    }
    let tag = Utc::now().timestamp_millis();
    let connect = || RedisStore::connect(&url, RedisOptions::default());
    let served = Arc::new(League::new(season(&format!("bh{tag}"))?, connect().await?));
    let direct = Arc::new(League::new(season(&format!("bd{tag}"))?, connect().await?));

    // The same players in both leagues, placed and named beforehand.
    for league in [&served, &direct] {
        for i in 0..PLAYERS {
            let p = player(i);
            league.join(&p, None).await?;
            league
                .set_profile(&p, &[("name".into(), format!("Player {i}"))])
                .await?;
        }
    }
    let brackets = PLAYERS.div_ceil(100);

    let options = ServerOptions::new(Tokens::new([TOKEN], Vec::<&str>::new())?);
    let shutdown = CancellationToken::new();
    let router = leaguekit::server::router(served.clone(), &options, shutdown.clone());
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await?;
    let base = format!("http://{}", listener.local_addr()?);
    let server = tokio::spawn(leaguekit::server::serve(
        listener,
        router,
        shutdown.clone(),
        Duration::from_secs(5),
    ));
    // The floor: the same clients against a handler that does nothing.
    let bare = axum::Router::new().route("/ping", axum::routing::get(|| async { "{}" }));
    let floor_listener =
        tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await?;
    let floor = format!("http://{}", floor_listener.local_addr()?);
    let stop_floor = shutdown.clone();
    let floor_server = tokio::spawn(async move {
        axum::serve(floor_listener, bare)
            .with_graceful_shutdown(async move { stop_floor.cancelled().await })
            .await
    });
    let bench = Bench {
        direct,
        base,
        clients: (0..clients)
            .map(|_| reqwest::Client::builder().pool_max_idle_per_host(1).build())
            .collect::<Result<_, _>>()?,
        brackets,
        floor,
        con: redis::Client::open(url.as_str())?
            .get_multiplexed_async_connection()
            .await?,
    };

    println!(
        "leaguekit serve over HTTP vs the library directly: {clients} concurrent clients, \
         {total} requests a measurement, {PLAYERS} players in {brackets} brackets, {url}"
    );
    println!("(best of two alternating runs each, after a warm-up; latency is per request)");
    println!();
    let warm = (total / 10).max(clients);
    bench.run(true, Op::Floor, 0, warm).await?;
    let mut floor: Option<Run> = None;
    for _ in 0..2 {
        let f = bench.run(true, Op::Floor, 0, total).await?;
        if floor.as_ref().is_none_or(|b| f.rate() > b.rate()) {
            floor = Some(f);
        }
    }
    if let Some(f) = &floor {
        println!(
            "HTTP floor (a bare axum handler, no store, same clients): {:.0}/s  p50 {}  p99 {}  {}",
            f.rate(),
            ms(f.pct(0.5)),
            ms(f.pct(0.99)),
            f.cpu_per_request()
        );
        println!();
    }
    for (op, name) in [(Op::Submit, "submit"), (Op::Standings, "standings")] {
        bench.run(true, op, 0, warm).await?;
        bench.run(false, op, 0, warm).await?;
        let mut best_http: Option<Run> = None;
        let mut best_direct: Option<Run> = None;
        for round in 1..=2 {
            let h = bench.run(true, op, round, total).await?;
            let d = bench.run(false, op, round, total).await?;
            if best_http.as_ref().is_none_or(|b| h.rate() > b.rate()) {
                best_http = Some(h);
            }
            if best_direct.as_ref().is_none_or(|b| d.rate() > b.rate()) {
                best_direct = Some(d);
            }
        }
        if let (Some(h), Some(d)) = (best_http, best_direct) {
            report(name, &h, &d);
            if op == Op::Submit {
                let share = h.rate() / d.rate();
                println!(
                    "{:<10} target: HTTP at least 0.6 of direct: {} ({share:.2})",
                    "",
                    if share >= 0.6 { "met" } else { "NOT met" }
                );
            }
        }
        println!();
    }
    shutdown.cancel();
    server.await??;
    floor_server.await??;
    webhook_rate(&url).await
}

/// Bracket logs the webhook delivery rate is measured on (brackets of two players).
const WEBHOOK_LOGS: usize = 1000;
/// Events whose delay from write to receipt is measured, and how many a second.
const DELAY_EVENTS: usize = 1000;
const DELAY_RATE: u64 = 500;
/// Brackets of one player in the running period when the cost of looking is measured:
/// the bracket logs of a million players in brackets of 100.
const IDLE_LOGS: usize = 10_000;
/// How long the cost of looking is measured.
const IDLE_FOR: Duration = Duration::from_secs(10);

/// A league with an event log, brackets of `size`, under its own prefix.
async fn hook_league(
    url: &str,
    size: usize,
) -> Result<Arc<League<RedisStore>>, Box<dyn std::error::Error>> {
    let tag = Utc::now().timestamp_millis();
    let text = std::fs::read_to_string("config/season.toml")?
        .replacen(
            "key_prefix = \"lk\"",
            &format!("key_prefix = \"bw{tag}s{size}\""),
            1,
        )
        .replacen("size = 100", &format!("size = {size}"), 1)
        + "\n[events]\nkeep = \"1d\"\n";
    let season = Season::from_toml(&text, "config/season.toml")?;
    Ok(Arc::new(League::new(
        season,
        RedisStore::connect(url, RedisOptions::default()).await?,
    )))
}

/// A receiver on a loopback port answering 200 at once, recording when each event
/// arrived and its position's time (unix ms, from `Leaguekit-Event-Id`).
struct HookReceiver {
    url: String,
    arrived: Arc<std::sync::Mutex<Vec<(i64, i64)>>>,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl HookReceiver {
    async fn start() -> Result<HookReceiver, Box<dyn std::error::Error>> {
        let arrived = Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = arrived.clone();
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |headers: axum::http::HeaderMap| {
                let now = Utc::now().timestamp_millis();
                let written = headers
                    .get("leaguekit-event-id")
                    .and_then(|v| v.to_str().ok())
                    .and_then(|id| id.rsplit_once('@'))
                    .and_then(|(_, pos)| pos.split_once('-'))
                    .and_then(|(ms, _)| ms.parse::<i64>().ok())
                    .unwrap_or(now);
                log.lock().expect("arrivals").push((now, written));
                async { "" }
            }),
        );
        let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await?;
        let url = format!("http://{}/hook", listener.local_addr()?);
        let stop = CancellationToken::new();
        let until = stop.clone();
        let task = tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async move { until.cancelled().await })
                .await
        });
        Ok(HookReceiver {
            url,
            arrived,
            stop,
            task,
        })
    }

    fn count(&self) -> usize {
        self.arrived.lock().expect("arrivals").len()
    }

    async fn wait_for(&self, n: usize) -> Result<(), Box<dyn std::error::Error>> {
        let start = Instant::now();
        while self.count() < n {
            if start.elapsed() > Duration::from_secs(300) {
                return Err(format!("only {} of {n} webhooks in 5 minutes", self.count()).into());
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        Ok(())
    }
}

/// Starts a deliverer of `league` to `url`, every kept event from the start.
async fn deliver(
    league: Arc<League<RedisStore>>,
    url: &str,
    shutdown: &CancellationToken,
) -> Result<tokio::task::JoinHandle<()>, Box<dyn std::error::Error>> {
    let config = leaguekit::server::webhooks::WebhookConfig::from_lookup(|k| match k {
        "LEAGUEKIT_WEBHOOK_URLS" => Some(url.to_owned()),
        "LEAGUEKIT_WEBHOOK_SECRET" => Some("bench-webhook-secret-0123456789abcdef".to_owned()),
        "LEAGUEKIT_WEBHOOK_FROM" => Some("start".to_owned()),
        _ => None,
    })?
    .ok_or("no webhook configuration")?;
    Ok(leaguekit::server::webhooks::start(league, config, shutdown.clone()).await?)
}

/// Commands Redis has answered (`total_commands_processed` of INFO stats).
async fn redis_commands(con: &mut redis::aio::MultiplexedConnection) -> Option<u64> {
    let info: String = redis::cmd("INFO")
        .arg("stats")
        .query_async(con)
        .await
        .ok()?;
    info.lines()
        .find_map(|l| l.strip_prefix("total_commands_processed:"))
        .and_then(|v| v.trim().parse().ok())
}

/// Webhooks: the delivery rate from [`WEBHOOK_LOGS`] bracket logs, the delay from a
/// write to the receiver's answer under a steady load, and Redis's cost of looking
/// for new events when there are none, at [`IDLE_LOGS`] bracket logs.
async fn webhook_rate(url: &str) -> Result<(), Box<dyn std::error::Error>> {
    // The rate: 2 placements in each of 1,000 brackets, logged before the deliverer
    // starts.
    let league = hook_league(url, 2).await?;
    for i in 0..WEBHOOK_LOGS * 2 {
        league.join(&player(i), None).await?;
    }
    let receiver = HookReceiver::start().await?;
    let shutdown = CancellationToken::new();
    let start = Instant::now();
    let deliverer = deliver(league.clone(), &receiver.url, &shutdown).await?;
    receiver.wait_for(WEBHOOK_LOGS * 2).await?;
    let wall = start.elapsed();
    println!(
        "webhook delivery: {} events from {WEBHOOK_LOGS} bracket logs, signed, to a local \
         receiver answering 200 at once: {:.0} events/s ({} in all, one process, {url})",
        WEBHOOK_LOGS * 2,
        (WEBHOOK_LOGS * 2) as f64 / wall.as_secs_f64(),
        ms(wall)
    );

    // The delay: placements at a steady rate while the deliverer runs.
    let before = receiver.count();
    let pace = Duration::from_micros(1_000_000 / DELAY_RATE);
    let began = Instant::now();
    for i in 0..DELAY_EVENTS {
        let due = began + pace * u32::try_from(i).unwrap_or(u32::MAX);
        tokio::time::sleep_until(due.into()).await;
        league.join(&player(WEBHOOK_LOGS * 2 + i), None).await?;
    }
    receiver.wait_for(before + DELAY_EVENTS).await?;
    let mut delays: Vec<i64> = receiver.arrived.lock().expect("arrivals")[before..]
        .iter()
        .map(|(at, written)| at - written)
        .collect();
    delays.sort_unstable();
    let pick = |q: f64| delays[((delays.len() - 1) as f64 * q) as usize];
    println!(
        "webhook delay from the write to the receiver, {DELAY_EVENTS} placements at \
         {DELAY_RATE}/s: p50 {} ms, p99 {} ms, max {} ms",
        pick(0.5),
        pick(0.99),
        delays.last().copied().unwrap_or(0)
    );
    shutdown.cancel();
    deliverer.await?;

    // The cost of looking: 10,000 bracket logs in the running period, all delivered,
    // then nothing new; Redis's commands and CPU over IDLE_FOR with the deliverer and,
    // as the baseline of the same run, without.
    let idle = hook_league(url, 1).await?;
    let mut joined = 0;
    while joined < IDLE_LOGS {
        let batch: Vec<String> = (joined..(joined + 500).min(IDLE_LOGS))
            .map(player)
            .collect();
        for p in &batch {
            idle.join(p, None).await?;
        }
        joined += batch.len();
    }
    let client = redis::Client::open(url)?;
    let mut con = client.get_multiplexed_async_connection().await?;
    let measure = |con: &mut redis::aio::MultiplexedConnection| {
        let mut con = con.clone();
        async move {
            let (c0, t0) = (redis_commands(&mut con).await, redis_cpu(&mut con).await);
            tokio::time::sleep(IDLE_FOR).await;
            let (c1, t1) = (redis_commands(&mut con).await, redis_cpu(&mut con).await);
            let secs = IDLE_FOR.as_secs_f64();
            // The two INFO calls of each reading are Redis commands too.
            let cmds = match (c0, c1) {
                (Some(a), Some(b)) => (b.saturating_sub(a).saturating_sub(2)) as f64 / secs,
                _ => f64::NAN,
            };
            let cpu = match (t0, t1) {
                (Some(a), Some(b)) => b.saturating_sub(a).as_secs_f64() / secs * 100.0,
                _ => f64::NAN,
            };
            (cmds, cpu)
        }
    };
    let (base_cmds, base_cpu) = measure(&mut con).await;
    let receiver_idle = HookReceiver::start().await?;
    let shutdown = CancellationToken::new();
    let deliverer = deliver(idle, &receiver_idle.url, &shutdown).await?;
    receiver_idle.wait_for(IDLE_LOGS).await?;
    // Let the buckets' first look pass.
    tokio::time::sleep(Duration::from_secs(6)).await;
    let (cmds, cpu) = measure(&mut con).await;
    shutdown.cancel();
    deliverer.await?;
    println!(
        "webhook looks with nothing new, {IDLE_LOGS} bracket logs in the running period (a \
         million players in brackets of 100) and the 16,384 buckets, one process: Redis \
         {cmds:.0} commands/s and {cpu:.1}% of a core (baseline without a deliverer: \
         {base_cmds:.0} commands/s, {base_cpu:.1}%); each more process adds as much"
    );
    for r in [receiver, receiver_idle] {
        r.stop.cancel();
        r.task.await??;
    }
    Ok(())
}
