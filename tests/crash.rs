//! Crash safety of the rollover on real Redis: a rollover process killed with SIGKILL
//! at many points, then run again, must end exactly where an uninterrupted run on a
//! copy of the same data ends, player by player; so must three processes started at
//! once. The population is 20,000 players over three tiers.

mod common;

use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

use chrono::{DateTime, Utc};
use leaguekit::rollover::RolloverOptions;
use leaguekit::{BatchItem, SubmitOptions};
use leaguekit::{League, ManualClock, RedisOptions, RedisStore, Season};

const PLAYERS: usize = 20_000;
const SEASON: &str = r#"
name = "crash"
key_prefix = "lkcrash"
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
rewards = [{ ranks = "1", grant = "gems:100" }, { ranks = "2-10", grant = "gems:10" }]
[[tiers]]
name = "silver"
promote = "30%"
demote = 10
rewards = [{ ranks = "1-3", grant = "gems:300" }]
[[tiers]]
name = "gold"
promote = 0
demote = "20%"
rewards = [{ ranks = "1-20", grant = "chest" }]
"#;

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s)
        .expect("time")
        .with_timezone(&Utc)
}

/// A league whose league clock is `clock` (the test replays past periods: the
/// rollovers themselves run in child processes on Redis's clock, with `--at`).
async fn league(url: &str, clock: &ManualClock) -> Arc<League<RedisStore>> {
    let season = Season::from_toml(SEASON, "crash.toml").expect("season");
    let store = RedisStore::connect(url, RedisOptions::default())
        .await
        .expect("connect");
    Arc::new(League::with_clock(season, store, Arc::new(clock.clone())))
}

/// Deterministic scores: every player plays every period, 8 tasks at a time.
async fn play(league: &Arc<League<RedisStore>>, when: DateTime<Utc>, salt: u64) {
    let mut tasks = Vec::new();
    for part in 0..8 {
        let l = league.clone();
        tasks.push(tokio::spawn(async move {
            let items: Vec<BatchItem> = (part..PLAYERS)
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

/// Copies every key of the season from database 0 to database `db` (a test-only
/// scan of a private server; leaguekit itself never scans the keyspace).
async fn copy_to(base: &str, db: u32) {
    let client = redis::Client::open(format!("{base}0")).expect("client");
    let mut con = client
        .get_multiplexed_async_connection()
        .await
        .expect("connect");
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("lkcrash:*")
        .query_async(&mut con)
        .await
        .expect("keys");
    assert!(keys.len() > PLAYERS, "only {} keys", keys.len());
    let mut pipe = redis::pipe();
    for key in &keys {
        pipe.cmd("COPY")
            .arg(key)
            .arg(key)
            .arg("DB")
            .arg(db)
            .arg("REPLACE")
            .ignore();
    }
    let () = pipe.query_async(&mut con).await.expect("copy");
}

fn season_file() -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().expect("temp file");
    std::io::Write::write_all(&mut f, SEASON.as_bytes()).expect("write season");
    f
}

fn rollover_cmd(config: &std::path::Path, url: &str, when: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_leaguekit"));
    c.arg("--config")
        .arg(config)
        .arg("--redis")
        .arg(url)
        .args(["rollover", "--at", when]);
    c.stdout(Stdio::null()).stderr(Stdio::null());
    c
}

/// Runs a rollover to completion, failing (not hanging) if it takes over a minute:
/// a stuck lease or a livelock must show up as a failure.
fn finish(mut child: std::process::Child, what: &str) {
    let deadline = Instant::now() + std::time::Duration::from_secs(60);
    loop {
        match child.try_wait().expect("wait") {
            Some(status) => {
                assert!(status.success(), "{what}: {status}");
                return;
            }
            None if Instant::now() > deadline => {
                let _ = child.kill();
                panic!("{what} did not finish within 60 s");
            }
            None => std::thread::sleep(std::time::Duration::from_millis(20)),
        }
    }
}

/// Everything a player can observe after the rollover, for every player.
async fn observe(league: &League<RedisStore>, period: u64) -> BTreeMap<String, String> {
    let mut seen = BTreeMap::new();
    let mut cursor: Option<String> = None;
    loop {
        let page = league
            .outcomes(period, cursor.as_deref(), 5000)
            .await
            .expect("outcomes");
        let Some(last) = page.last() else { break };
        cursor = Some(last.cursor.clone());
        for r in page {
            seen.insert(r.player.clone(), format!("{r:?}"));
        }
    }
    assert_eq!(seen.len(), PLAYERS, "every player has an outcome");
    for i in 0..PLAYERS {
        let p = format!("player-{i:05}");
        let rewards = league.rewards(&p).await.expect("rewards");
        if let Some(line) = seen.get_mut(&p) {
            line.push_str(&format!(" rewards={rewards:?}"));
        }
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_and_concurrent_rollovers_end_like_an_uninterrupted_one() {
    let server = common::RedisServer::start(&[]);
    let base = format!("redis://127.0.0.1:{}/", server.port);
    let config = season_file();
    let clock = ManualClock::new(at("2026-03-27T12:00:00Z"));
    let l0 = league(&format!("{base}0"), &clock).await;
    // Three periods of play, two rollovers between them, so period 3 has three tiers.
    // Each period closes max_skew (5 s) after its end.
    let started = Instant::now();
    play(&l0, at("2026-03-27T12:00:00Z"), 1).await;
    clock.set(at("2026-03-27T23:00:05Z"));
    l0.rollover(None, RolloverOptions::default())
        .await
        .expect("p1");
    clock.set(at("2026-03-28T12:00:00Z"));
    play(&l0, at("2026-03-28T12:00:00Z"), 2).await;
    clock.set(at("2026-03-28T23:00:05Z"));
    l0.rollover(None, RolloverOptions::default())
        .await
        .expect("p2");
    clock.set(at("2026-03-29T12:00:00Z"));
    play(&l0, at("2026-03-29T12:00:00Z"), 3).await;
    let counts = l0.counts(Some(3)).await.expect("counts");
    assert!(counts.iter().all(|c| c.players > 1000), "{counts:?}");
    eprintln!(
        "populated {PLAYERS} players in {:?}: {counts:?}",
        started.elapsed()
    );
    copy_to(&base, 1).await;
    copy_to(&base, 2).await;
    // Period 3 ends at local midnight, 2026-03-30T00:00+02:00 (after the DST change),
    // and may close max_skew (5 s) later. The rollover processes decide by Redis's
    // clock, which is past that.
    let when = "2026-03-30T00:00:05+02:00";

    // The reference: one uninterrupted run on database 1.
    let t = Instant::now();
    let status = rollover_cmd(config.path(), &format!("{base}1"), when)
        .status()
        .expect("run");
    assert!(status.success());
    let full = t.elapsed();
    let reference = observe(&*league(&format!("{base}1"), &clock).await, 3).await;
    eprintln!("uninterrupted rollover of 200 brackets took {full:?}");

    // Killed at many points on database 0, spread over the run's duration.
    let mut kills = 0;
    for step in 1..=16u32 {
        let delay = full.mul_f64(f64::from(step) / 17.0);
        let mut child = rollover_cmd(config.path(), &format!("{base}0"), when)
            .spawn()
            .expect("spawn");
        std::thread::sleep(delay);
        if child.try_wait().expect("wait").is_none() {
            child.kill().expect("SIGKILL");
            kills += 1;
        }
        let _ = child.wait();
    }
    assert!(
        kills >= 8,
        "only {kills} of 16 runs were killed before they finished"
    );
    finish(
        rollover_cmd(config.path(), &format!("{base}0"), when)
            .spawn()
            .expect("spawn"),
        "the run after the kills",
    );
    let recovered = observe(&l0, 3).await;
    assert_eq!(
        recovered, reference,
        "killed-and-rerun differs from uninterrupted"
    );

    // Three processes at once on database 2.
    let children: Vec<_> = (0..3)
        .map(|_| {
            rollover_cmd(config.path(), &format!("{base}2"), when)
                .spawn()
                .expect("spawn")
        })
        .collect();
    for c in children {
        finish(c, "a concurrent rollover");
    }
    let concurrent = observe(&*league(&format!("{base}2"), &clock).await, 3).await;
    assert_eq!(
        concurrent, reference,
        "concurrent rollovers differ from one"
    );
    drop(server);
}
