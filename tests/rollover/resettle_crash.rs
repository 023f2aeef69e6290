//! Crash safety of a re-settlement on real Redis (one server and a three-master
//! cluster): `leaguekit resettle` killed with SIGKILL at many points of its run, then
//! run again, must end exactly where an uninterrupted run on a copy of the same data
//! ends, player by player (outcomes, corrected marks, every reward, tier credits and
//! the audit log); so must three processes started at once on another copy.
//!
//! One bracket of 1,000 players whose bronze tier rewards each of the first 300 ranks
//! with a grant of its own, so excluding two players moves 300 rewards: a run is
//! hundreds of steps, and the kills land between them. Half the players were placed
//! in the next period before the correction, so promotions become tier credits.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

use crate::crash::finish;
use chrono::{DateTime, Utc};
use common::snapshot::{copy_prefix, first_difference, observe_outcomes};
use leaguekit::operator::AuditQuery;
use leaguekit::store::CorrectionStore;
use leaguekit::{BatchItem, League, ManualClock, RedisOptions, RedisStore, Season, SubmitOptions};

const PLAYERS: usize = 1000;

fn season_toml(prefix: &str) -> String {
    let rewards: Vec<String> = (1..=300)
        .map(|r| format!("{{ ranks = \"{r}\", grant = \"gems:{}\" }}", 1000 - r))
        .collect();
    format!(
        r#"
name = "fixcrash"
key_prefix = "{prefix}"
[schedule]
timezone = "UTC"
period = "daily"
start = "2026-03-27T00:00:00Z"
[brackets]
size = 1000
join = "on_first_score"
[scoring]
mode = "increment"
max_score = 1_000_000
[[tiers]]
name = "bronze"
promote = "30%"
demote = 0
rewards = [{}]
[[tiers]]
name = "silver"
promote = 0
demote = "20%"
"#,
        rewards.join(", ")
    )
}

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s)
        .expect("time")
        .with_timezone(&Utc)
}

async fn league(url: &str, prefix: &str, clock: &ManualClock) -> Arc<League<RedisStore>> {
    let season = Season::from_toml(&season_toml(prefix), "fixcrash.toml").expect("season");
    let store = RedisStore::connect(url, RedisOptions::default())
        .await
        .expect("connect");
    Arc::new(League::with_clock(season, store, Arc::new(clock.clone())))
}

fn resettle_cmd(url: &str, config: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_leaguekit"));
    c.arg("--config").arg(config).arg("--redis").arg(url).args([
        "resettle",
        "--period",
        "1",
        "--tier",
        "bronze",
        "--bracket",
        "1",
        "--exclude",
        "player-0000",
        "player-0002",
        "--reason",
        "two accounts of one cheater",
    ]);
    c.stdout(Stdio::null()).stderr(Stdio::piped());
    c
}

fn season_file(prefix: &str) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().expect("temp file");
    std::io::Write::write_all(&mut f, season_toml(prefix).as_bytes()).expect("write season");
    f
}

/// What the players and the operators see: every outcome with its corrected mark and
/// reason, every player's rewards and tier credits, and the audit log (without the
/// times, which differ from copy to copy).
async fn observe(league: &League<RedisStore>, players: &[String]) -> BTreeMap<String, String> {
    let mut seen = observe_outcomes(league, 1, players).await;
    for r in league.outcomes(1, None, 5000).await.expect("outcomes") {
        if let Some(line) = seen.get_mut(&r.player) {
            line.push_str(&format!(" corrected={} {:?}", r.corrected, r.reason));
        }
    }
    for p in players {
        let credits = league
            .store()
            .credits(&league.keys().player(p))
            .await
            .expect("credits");
        if let Some(line) = seen.get_mut(p) {
            line.push_str(&format!(" credits={credits:?}"));
        }
    }
    let audit = league
        .operator()
        .audit(&AuditQuery::default())
        .await
        .expect("audit");
    let entries: Vec<String> = audit
        .iter()
        .map(|e| {
            format!(
                "{} {} {:?} {:?} {}",
                e.actor, e.action, e.player, e.reason, e.details
            )
        })
        .collect();
    seen.insert("~audit".to_owned(), format!("{entries:?}"));
    seen
}

/// Whether the copy under `prefix` holds a correction begun and not done.
async fn partial(url: &str, prefix: &str, clock: &ManualClock) -> bool {
    let l = league(url, prefix, clock).await;
    let record = l
        .store()
        .correction(&l.keys().bracket(1, "bronze", 1))
        .await
        .expect("record");
    !record.versions.is_empty() && record.done < record.versions.len() as u64
}

async fn killed_and_concurrent_resettles(name: &str, url: String, nodes: Vec<String>) {
    let base = common::unique_prefix("fixcrash");
    let (main, reference_prefix, concurrent_prefix) =
        (format!("{base}a"), format!("{base}r"), format!("{base}c"));
    let players: Vec<String> = (0..PLAYERS).map(|i| format!("player-{i:04}")).collect();
    let clock = ManualClock::new(at("2026-03-27T12:00:00Z"));
    let l0 = league(&url, &main, &clock).await;
    let items: Vec<BatchItem> = players
        .iter()
        .enumerate()
        .map(|(i, p)| {
            BatchItem::new(p.clone(), (5000 - i) as i64)
                .with_options(SubmitOptions::default().at(at("2026-03-27T12:00:00Z")))
        })
        .collect();
    for chunk in items.chunks(500) {
        for r in l0.submit_many(chunk).await {
            r.expect("submit");
        }
    }
    clock.set(at("2026-03-28T00:00:10Z"));
    l0.rollover(None, Default::default()).await.expect("close");
    // Half the players (every other one) are placed in period 2 already.
    clock.set(at("2026-03-28T12:00:00Z"));
    for p in players.iter().step_by(2) {
        l0.join(p, None).await.expect("join");
    }
    let keys = copy_prefix(
        &url,
        &nodes,
        &RedisOptions::default(),
        &main,
        &reference_prefix,
    )
    .await;
    assert_eq!(
        copy_prefix(
            &url,
            &nodes,
            &RedisOptions::default(),
            &main,
            &concurrent_prefix
        )
        .await,
        keys
    );

    // The reference: one uninterrupted run.
    let config = season_file(&reference_prefix);
    let run = Instant::now();
    finish(
        resettle_cmd(&url, config.path()).spawn().expect("run"),
        "the uninterrupted re-settlement",
    );
    let full = run.elapsed();
    let reference = observe(&*league(&url, &reference_prefix, &clock).await, &players).await;
    assert!(
        reference["player-0001"].contains("corrected=true"),
        "{}",
        reference["player-0001"]
    );
    assert!(
        reference["~audit"].contains("player-0002"),
        "{}",
        reference["~audit"]
    );
    // Ranks 301 and 302 are promoted now: the first was placed in period 2 already
    // (from the outcome as it was: a tier credit from period 3), the second was not
    // (their next placement reads the corrected outcome: no credit).
    assert!(
        reference["player-0300"].contains("credits=[(\"t:1/bronze/1/c1\", \"3|1\")]"),
        "{}",
        reference["player-0300"]
    );
    assert!(
        reference["player-0301"].contains("Promoted -> silver")
            && reference["player-0301"].contains("credits=[]"),
        "{}",
        reference["player-0301"]
    );

    // Killed at many points of its run on the original, then run to the end.
    let config = season_file(&main);
    let kill_points = 16u32;
    let (mut kills, mut partials) = (0, 0);
    for step in 1..=kill_points {
        let delay = full.mul_f64(f64::from(step) / f64::from(kill_points + 1));
        let mut child = resettle_cmd(&url, config.path()).spawn().expect("spawn");
        std::thread::sleep(delay);
        if child.try_wait().expect("wait").is_none() {
            child.kill().expect("SIGKILL");
            kills += 1;
        }
        let _ = child.wait();
        partials += u32::from(partial(&url, &main, &clock).await);
    }
    assert!(
        kills >= kill_points / 2,
        "{name}: only {kills} of {kill_points} runs were killed before they finished"
    );
    finish(
        resettle_cmd(&url, config.path()).spawn().expect("spawn"),
        "the run after the kills",
    );
    let recovered = observe(&l0, &players).await;
    assert!(
        recovered == reference,
        "{name}: killed-and-rerun differs from uninterrupted: {:?}",
        first_difference(&recovered, &reference)
    );

    // Three processes at once on the other copy.
    let config = season_file(&concurrent_prefix);
    let children: Vec<_> = (0..3)
        .map(|_| resettle_cmd(&url, config.path()).spawn().expect("spawn"))
        .collect();
    for c in children {
        finish(c, "a concurrent re-settlement");
    }
    let concurrent = observe(&*league(&url, &concurrent_prefix, &clock).await, &players).await;
    assert!(
        concurrent == reference,
        "{name}: concurrent re-settlements differ from one: {:?}",
        first_difference(&concurrent, &reference)
    );
    eprintln!(
        "{name}: a re-settlement took {full:?}; {kills} of {kill_points} runs killed, \
         {partials} of them left a partial correction; all equal to the reference"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_and_concurrent_resettles_end_like_an_uninterrupted_one() {
    let url = common::redis_url();
    killed_and_concurrent_resettles("one server", url.clone(), vec![url]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_cluster_killed_and_concurrent_resettles_end_like_an_uninterrupted_one() {
    let url = common::cluster::cluster_url();
    let nodes = common::cluster::cluster_ports(&url)
        .into_iter()
        .map(|port| format!("redis://127.0.0.1:{port}/"))
        .collect();
    killed_and_concurrent_resettles("cluster", url, nodes).await;
}
