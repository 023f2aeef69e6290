//! Crash safety of the rollover on real Redis, on every kind of store leaguekit
//! supports: one server, a three-master Redis Cluster, and a TLS-only server with an
//! ACL user. A rollover process killed with SIGKILL at many points, then run again,
//! must end exactly where an uninterrupted run on a copy of the same data ends,
//! player by player; so must three processes started at once on another copy.
//!
//! The copies are made with DUMP and RESTORE of every key under the test's unique
//! key prefix into the same keys under another prefix, on the same store (a cluster
//! has no databases to SELECT). The season's hash tags do not contain the prefix, so
//! each copy lives in the same slots as the original; the test only relies on every
//! key starting with the prefix, not on the key layout.
//!
//! One server: 20,000 players over three tiers (200 brackets). The cluster and TLS
//! runs use 8,000 players (80 brackets, still three rounds of the 32 brackets one
//! process closes at once) to keep the time down; all three kill 16 runs.
//!
//! With an event log (`[events]`), on one server and a cluster: 6,000 players, ten
//! killed runs and a last one log every bracket's close and outcomes, every grant and
//! the period's close exactly once, the same events as an uninterrupted run on a copy.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use common::snapshot::{copy_prefix, first_difference, observe_outcomes};
use leaguekit::rollover::RolloverOptions;
use leaguekit::{BatchItem, SubmitOptions};
use leaguekit::{League, ManualClock, RedisOptions, RedisStore, Season};

/// The season, under `prefix`.
fn season_toml(prefix: &str) -> String {
    format!(
        r#"
name = "crash"
key_prefix = "{prefix}"
[schedule]
timezone = "Europe/Berlin"
period = "daily"
start = "2026-03-27T00:00:00+01:00"
[brackets]
size = 100
join = "on_first_score"
[scoring]
mode = "increment"
max_score = 1_000_000
[[tiers]]
name = "bronze"
promote = "30%"
demote = 0
rewards = [{{ ranks = "1", grant = "gems:100" }}, {{ ranks = "2-10", grant = "gems:10" }}]
[[tiers]]
name = "silver"
promote = "30%"
demote = 10
rewards = [{{ ranks = "1-3", grant = "gems:300" }}]
[[tiers]]
name = "gold"
promote = 0
demote = "20%"
rewards = [{{ ranks = "1-20", grant = "chest" }}]
"#
    )
}

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s)
        .expect("time")
        .with_timezone(&Utc)
}

/// A store under test and how hard to test it.
struct Target {
    /// What it is, for messages.
    name: &'static str,
    /// The URL the league and the rollover processes use.
    url: String,
    /// The CA of a TLS server (RedisOptions for the test, SSL_CERT_FILE for the
    /// rollover processes, which trust the system's roots and that variable).
    ca: Option<PathBuf>,
    /// One URL per node whose keys the copy must SCAN (every master of a cluster).
    nodes: Vec<String>,
    /// Players per period.
    players: usize,
    /// Rollover processes killed before the one that finishes.
    kill_points: u32,
}

impl Target {
    /// The test servers' plain single node.
    fn one_server(players: usize, kill_points: u32) -> Target {
        let url = common::redis_url();
        Target {
            name: "one server",
            nodes: vec![url.clone()],
            url,
            ca: None,
            players,
            kill_points,
        }
    }

    /// The test servers' cluster: every master is a node to copy.
    fn cluster(players: usize, kill_points: u32) -> Target {
        let url = common::cluster::cluster_url();
        Target {
            name: "cluster",
            nodes: common::cluster::cluster_ports(&url)
                .into_iter()
                .map(|port| format!("redis://127.0.0.1:{port}/"))
                .collect(),
            url,
            ca: None,
            players,
            kill_points,
        }
    }

    fn options(&self) -> RedisOptions {
        match &self.ca {
            Some(ca) => RedisOptions::default().with_ca_file(ca),
            None => RedisOptions::default(),
        }
    }
}

/// A league under `prefix` whose league clock is `clock` (the test replays past
/// periods: the rollovers themselves run in child processes on Redis's clock, with
/// `--at`).
async fn league(t: &Target, prefix: &str, clock: &ManualClock) -> Arc<League<RedisStore>> {
    let season = Season::from_toml(&season_toml(prefix), "crash.toml").expect("season");
    let store = RedisStore::connect(&t.url, t.options())
        .await
        .unwrap_or_else(|e| panic!("connect to the {}: {e}", t.name));
    Arc::new(League::with_clock(season, store, Arc::new(clock.clone())))
}

/// Deterministic scores: every player plays every period, 8 tasks at a time.
async fn play(league: &Arc<League<RedisStore>>, players: usize, when: DateTime<Utc>, salt: u64) {
    let mut tasks = Vec::new();
    for part in 0..8 {
        let l = league.clone();
        tasks.push(tokio::spawn(async move {
            let items: Vec<BatchItem> = (part..players)
                .step_by(8)
                .map(|i| {
                    let v = (i as u64 * 7919 + salt * 104_729) % 1000;
                    BatchItem::new(format!("player-{i:05}"), v as i64)
                        .with_options(SubmitOptions::default().at(when))
                })
                .collect();
            for chunk in items.chunks(500) {
                for r in l.submit_many(chunk).await {
                    r.expect("submit");
                }
            }
        }));
    }
    for t in tasks {
        t.await.expect("task");
    }
}

fn season_file(prefix: &str) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().expect("temp file");
    std::io::Write::write_all(&mut f, season_toml(prefix).as_bytes()).expect("write season");
    f
}

fn rollover_cmd(t: &Target, config: &Path, when: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_leaguekit"));
    c.arg("--config")
        .arg(config)
        .arg("--redis")
        .arg(&t.url)
        .args(["rollover", "--at", when]);
    if let Some(ca) = &t.ca {
        c.env("SSL_CERT_FILE", ca);
    }
    c.stdout(Stdio::null()).stderr(Stdio::piped());
    c
}

/// Runs a rollover to completion, failing (not hanging) if it takes over a minute:
/// a stuck lease or a livelock must show up as a failure.
/// Runs the rollover `t.kill_points` times, killing each run (SIGKILL) at a point
/// spread over `full` (how long an uninterrupted run took), then once to the end.
/// At least half the runs must have been killed before they finished; answers how
/// many were.
fn kill_then_finish(t: &Target, config: &Path, when: &str, full: Duration) -> u32 {
    let mut kills = 0;
    for step in 1..=t.kill_points {
        let delay = full.mul_f64(f64::from(step) / f64::from(t.kill_points + 1));
        let mut child = rollover_cmd(t, config, when).spawn().expect("spawn");
        std::thread::sleep(delay);
        if child.try_wait().expect("wait").is_none() {
            child.kill().expect("SIGKILL");
            kills += 1;
        }
        let _ = child.wait();
    }
    assert!(
        kills >= t.kill_points / 2,
        "{}: only {kills} of {} runs were killed before they finished",
        t.name,
        t.kill_points
    );
    finish(
        rollover_cmd(t, config, when).spawn().expect("spawn"),
        "the run after the kills",
    );
    kills
}

pub(crate) fn finish(mut child: std::process::Child, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match child.try_wait().expect("wait") {
            Some(status) => {
                let mut err = String::new();
                if let Some(mut e) = child.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut e, &mut err);
                }
                assert!(status.success(), "{what}: {status}: {err}");
                return;
            }
            None if Instant::now() > deadline => {
                let _ = child.kill();
                panic!("{what} did not finish within 60 s");
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

async fn killed_and_concurrent_rollovers(t: Target) {
    let began = Instant::now();
    let base = common::unique_prefix("crash");
    // Three prefixes of which none starts with another: the data the kills hit, the
    // uninterrupted reference, and the concurrent runs.
    let (main, reference_prefix, concurrent_prefix) =
        (format!("{base}a"), format!("{base}r"), format!("{base}c"));
    let players: Vec<String> = (0..t.players).map(|i| format!("player-{i:05}")).collect();
    let clock = ManualClock::new(at("2026-03-27T12:00:00Z"));
    let l0 = league(&t, &main, &clock).await;
    // Three periods of play, two rollovers between them, so period 3 has three tiers.
    // Each period closes max_skew (5 s) after its end.
    play(&l0, t.players, at("2026-03-27T12:00:00Z"), 1).await;
    clock.set(at("2026-03-27T23:00:05Z"));
    l0.rollover(None, RolloverOptions::default())
        .await
        .expect("p1");
    clock.set(at("2026-03-28T12:00:00Z"));
    play(&l0, t.players, at("2026-03-28T12:00:00Z"), 2).await;
    clock.set(at("2026-03-28T23:00:05Z"));
    l0.rollover(None, RolloverOptions::default())
        .await
        .expect("p2");
    clock.set(at("2026-03-29T12:00:00Z"));
    play(&l0, t.players, at("2026-03-29T12:00:00Z"), 3).await;
    let counts = l0.counts(Some(3)).await.expect("counts");
    assert!(
        counts.iter().all(|c| c.players >= t.players as u64 / 20),
        "{counts:?}"
    );
    eprintln!(
        "{}: populated {} players in {:?}: {counts:?}",
        t.name,
        t.players,
        began.elapsed()
    );
    let copying = Instant::now();
    let keys = copy_prefix(&t.url, &t.nodes, &t.options(), &main, &reference_prefix).await;
    assert!(keys > t.players, "{}: only {keys} keys", t.name);
    assert_eq!(
        copy_prefix(&t.url, &t.nodes, &t.options(), &main, &concurrent_prefix).await,
        keys
    );
    eprintln!(
        "{}: copied {keys} keys twice in {:?}",
        t.name,
        copying.elapsed()
    );
    // Period 3 ends at local midnight, 2026-03-30T00:00+02:00 (after the DST change),
    // and may close max_skew (5 s) later. The rollover processes decide by Redis's
    // clock, which is past that.
    let when = "2026-03-30T00:00:05+02:00";

    // The reference: one uninterrupted run on the first copy.
    let config = season_file(&reference_prefix);
    let run = Instant::now();
    finish(
        rollover_cmd(&t, config.path(), when).spawn().expect("run"),
        "the uninterrupted rollover",
    );
    let full = run.elapsed();
    let reference =
        observe_outcomes(&*league(&t, &reference_prefix, &clock).await, 3, &players).await;
    eprintln!(
        "{}: uninterrupted rollover of {} brackets took {full:?}",
        t.name,
        counts.iter().map(|c| c.brackets).sum::<u64>()
    );

    // Killed at many points of the original, spread over the run's duration.
    let config = season_file(&main);
    let kills = kill_then_finish(&t, config.path(), when, full);
    let recovered = observe_outcomes(&l0, 3, &players).await;
    assert!(
        recovered == reference,
        "{}: killed-and-rerun differs from uninterrupted: {:?}",
        t.name,
        first_difference(&recovered, &reference)
    );

    // Three processes at once on the second copy.
    let config = season_file(&concurrent_prefix);
    let children: Vec<_> = (0..3)
        .map(|_| {
            rollover_cmd(&t, config.path(), when)
                .spawn()
                .expect("spawn")
        })
        .collect();
    for c in children {
        finish(c, "a concurrent rollover");
    }
    let concurrent =
        observe_outcomes(&*league(&t, &concurrent_prefix, &clock).await, 3, &players).await;
    assert!(
        concurrent == reference,
        "{}: concurrent rollovers differ from one: {:?}",
        t.name,
        first_difference(&concurrent, &reference)
    );
    eprintln!(
        "{}: {kills} of {} runs killed; all equal to the reference; {:?} in all",
        t.name,
        t.kill_points,
        began.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_and_concurrent_rollovers_end_like_an_uninterrupted_one() {
    killed_and_concurrent_rollovers(Target::one_server(20_000, 16)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_cluster_killed_and_concurrent_rollovers_end_like_an_uninterrupted_one() {
    killed_and_concurrent_rollovers(Target::cluster(8_000, 16)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_tls_killed_and_concurrent_rollovers_end_like_an_uninterrupted_one() {
    let target = common::tls::tls_target();
    let url = target.url();
    killed_and_concurrent_rollovers(Target {
        name: "TLS server",
        nodes: vec![url.clone()],
        url,
        ca: Some(target.ca.clone()),
        players: 8_000,
        kill_points: 16,
    })
    .await;
}

/// The season with an event log.
fn events_season_toml(prefix: &str) -> String {
    format!(
        "{}\n[events]\nkeep = \"2d\"\nmax_per_log = 1_000_000\n",
        season_toml(prefix)
    )
}

/// Every event of period `period` and of the player buckets, as stored (no ids): each
/// log's bodies in order, by the log's name in its season (`p1/bronze/b3`).
async fn logged_events(
    league: &League<RedisStore>,
    period: u64,
) -> std::collections::BTreeMap<String, Vec<String>> {
    use leaguekit::store::{LogRead, Pos, keys::log_label};
    let events = league.events();
    let mut logs = events.logs_of_period(period).await.expect("logs");
    logs.extend(events.bucket_logs());
    let reads: Vec<LogRead<'_>> = logs
        .iter()
        .map(|log| LogRead {
            log,
            after: Pos::START,
            limit: 1_000_000,
        })
        .collect();
    let read = events.read(&reads).await;
    logs.iter()
        .zip(read)
        .map(|(log, entries)| {
            let bodies = entries.expect("read log").into_iter().map(|e| e.body);
            (log_label(log).to_owned(), bodies.collect())
        })
        .filter(|(_, bodies): &(String, Vec<String>)| !bodies.is_empty())
        .collect()
}

/// The rollover's events after killed runs and a last one: every bracket's close and
/// outcomes, every grant and the period's close exactly once, the same bodies in the
/// same logs as an uninterrupted run's on a copy of the data.
async fn killed_rollovers_log_each_event_once(t: Target) {
    use serde_json::Value;
    let base = common::unique_prefix("crashev");
    let (main, reference_prefix) = (format!("{base}a"), format!("{base}r"));
    let clock = ManualClock::new(at("2026-03-27T12:00:00Z"));
    let season_of = |prefix: &str| {
        Season::from_toml(&events_season_toml(prefix), "crash.toml").expect("season")
    };
    let connect = |prefix: String| {
        let clock = clock.clone();
        let season = season_of(&prefix);
        let (url, options) = (t.url.clone(), t.options());
        async move {
            let store = RedisStore::connect(&url, options).await.expect("connect");
            Arc::new(League::with_clock(season, store, Arc::new(clock)))
        }
    };
    let l0 = connect(main.clone()).await;
    assert!(l0.events().enabled());
    play(&l0, t.players, at("2026-03-27T12:00:00Z"), 1).await;
    let keys = copy_prefix(&t.url, &t.nodes, &t.options(), &main, &reference_prefix).await;
    assert!(keys > t.players / 100, "{}: only {keys} keys", t.name);
    let file = |prefix: &str| {
        let mut f = tempfile::NamedTempFile::new().expect("temp file");
        std::io::Write::write_all(&mut f, events_season_toml(prefix).as_bytes()).expect("write");
        f
    };
    // Period 1 ends at local midnight, 2026-03-28T00:00+01:00.
    let when = "2026-03-28T00:00:05+01:00";

    let config = file(&reference_prefix);
    let run = Instant::now();
    finish(
        rollover_cmd(&t, config.path(), when).spawn().expect("run"),
        "the uninterrupted rollover",
    );
    let full = run.elapsed();
    let reference = logged_events(&*connect(reference_prefix.clone()).await, 1).await;

    let config = file(&main);
    let kills = kill_then_finish(&t, config.path(), when, full);
    let recovered = logged_events(&l0, 1).await;

    // Exactly once, read from the recovered logs themselves.
    let parse = |b: &String| serde_json::from_str::<Value>(b).expect("event JSON");
    let mut brackets = 0;
    let mut outcomes = 0;
    let mut grants = std::collections::BTreeSet::new();
    let mut period_closed = 0;
    for (log, bodies) in &recovered {
        let events: Vec<Value> = bodies.iter().map(parse).collect();
        let count = |kind: &str| events.iter().filter(|e| e["type"] == kind).count();
        if log.contains("/b") {
            brackets += 1;
            assert_eq!(count("bracket.closed"), 1, "{log}: {bodies:?}");
            let mut told = std::collections::BTreeSet::new();
            for e in &events {
                if ["player.promoted", "player.stayed", "player.demoted"]
                    .contains(&e["type"].as_str().unwrap_or(""))
                {
                    assert!(told.insert(e["player"].to_string()), "{log}: twice: {e}");
                }
            }
            assert_eq!(told.len(), count("player.placed"), "{log}");
            outcomes += told.len();
        }
        for e in events.iter().filter(|e| e["type"] == "reward.granted") {
            let key = (e["player"].to_string(), e["data"]["source"].to_string());
            assert!(grants.insert(key), "{log}: granted twice: {e}");
        }
        period_closed += count("period.closed");
    }
    assert_eq!(period_closed, 1);
    assert_eq!(outcomes, t.players);
    assert_eq!(brackets, t.players.div_ceil(100));
    // Ranks 1 to 10 of each bronze bracket are rewarded.
    assert!(grants.len() >= brackets * 10 - 10, "{}", grants.len());
    // The same events in each log; a bucket's order depends on which brackets were
    // closed first, so each log is compared as a sorted list.
    let sorted = |logs: &std::collections::BTreeMap<String, Vec<String>>| {
        let mut logs = logs.clone();
        logs.values_mut().for_each(|bodies| bodies.sort());
        logs
    };
    let (recovered, reference) = (sorted(&recovered), sorted(&reference));
    let differs = recovered
        .iter()
        .find(|(log, bodies)| reference.get(*log) != Some(bodies))
        .map(|(log, _)| log.clone());
    assert!(
        recovered == reference,
        "{}: the killed-and-rerun logs differ from the uninterrupted run's, first in {differs:?} ({} logs, {} in the reference)",
        t.name,
        recovered.len(),
        reference.len()
    );
    eprintln!(
        "{}: {kills} of {} runs killed; {brackets} brackets, {} grants logged once each",
        t.name,
        t.kill_points,
        grants.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_rollovers_log_each_event_once_on_one_server() {
    killed_rollovers_log_each_event_once(Target::one_server(6_000, 10)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_rollovers_log_each_event_once_on_a_cluster() {
    killed_rollovers_log_each_event_once(Target::cluster(6_000, 10)).await;
}
