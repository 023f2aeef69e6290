//! Hardening (issue 7) against a real redis-server, as a hostile or unlucky production
//! would break leaguekit: Redis losing its data under running game servers, a batch
//! whose connection drops, one player's corrupt rewards key, the league clock being
//! Redis's own, player keys that expire and stay small. The store-independent cases
//! (clocks, shared request ids, retries after the close, profile sizes, leap seconds)
//! are in `tests/store/conformance.rs`, on both stores.

use crate::common;
mod full_memory;
mod outage;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use leaguekit::rollover::RolloverOptions;
use leaguekit::store::{LeagueStore as _, RolloverStore as _};
use leaguekit::{BatchItem, SubmitOptions};
use leaguekit::{
    Clock, Error, InputError, League, ManualClock, MemoryStore, RedisOptions, RedisStore, Season,
    Store,
};

use common::RedisServer;

mod clocks;
mod data_loss;
mod foreign_keys;

fn t(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s)
        .expect("time")
        .with_timezone(&Utc)
}

/// A daily season from `start`; `extra` is appended (more sections).
fn season(prefix: &str, start: &str, size: u32, extra: &str) -> Season {
    let text = format!(
        r#"
name = "hard"
key_prefix = "{prefix}"
[schedule]
timezone = "UTC"
period = "daily"
start = "{start}"
[brackets]
size = {size}
[scoring]
max_score = 1_000_000
[profiles]
fields = ["name"]
[[tiers]]
name = "bronze"
promote = 1
demote = 0
rewards = [{{ ranks = "1", grant = "gems:100" }}, {{ ranks = "2", grant = "gems:10" }}]
[[tiers]]
name = "silver"
promote = 0
demote = 1
{extra}
"#
    );
    Season::from_toml(&text, "hard.toml").expect("season")
}

async fn connect(server: &RedisServer) -> RedisStore {
    RedisStore::connect(&server.url(), RedisOptions::default())
        .await
        .expect("connect")
}

async fn raw(server: &RedisServer) -> redis::aio::MultiplexedConnection {
    redis::Client::open(server.url())
        .expect("client")
        .get_multiplexed_async_connection()
        .await
        .expect("connect")
}

/// Every key of the server (a private test server: leaguekit itself never scans).
async fn all_keys(con: &mut redis::aio::MultiplexedConnection) -> Vec<String> {
    redis::cmd("KEYS")
        .arg("*")
        .query_async(con)
        .await
        .expect("keys")
}

async fn submit_at<S: Store>(l: &League<S>, p: &str, v: i64, at: &str) {
    l.submit(p, v, SubmitOptions::default().at(t(at)))
        .await
        .unwrap_or_else(|e| panic!("submit {p}: {e}"));
}

/// Case 4: Redis loses its data (FLUSHALL, a restart without persistence, a failover
/// to an empty replica) while game servers keep running with cached placements. No
/// bracket may exceed its size, and every board must belong to a period the rollover
/// finds (and so get a TTL).
#[tokio::test]
async fn lost_data_never_overfills_a_bracket_or_hides_one_from_the_rollover() {
    let server = RedisServer::start(&[]);
    let clock = ManualClock::new(t("2026-01-05T10:00:00Z"));
    let league = League::with_clock(
        season("lost", "2026-01-05T00:00:00Z", 3, ""),
        connect(&server).await,
        Arc::new(clock.clone()),
    );
    let first: Vec<String> = ["a", "b", "c", "d", "e", "f"].map(String::from).to_vec();
    for p in &first {
        submit_at(&league, p, 1, "2026-01-05T09:00:00Z").await;
    }
    let mut con = raw(&server).await;
    let () = redis::cmd("FLUSHALL")
        .query_async(&mut con)
        .await
        .expect("flushall");
    // The game server goes on: cached players update, new players arrive, one by one
    // and in a batch.
    for p in &first[..3] {
        submit_at(&league, p, 2, "2026-01-05T09:30:00Z").await;
    }
    for p in ["g", "h", "i"] {
        submit_at(&league, p, 5, "2026-01-05T09:30:00Z").await;
    }
    let batch: Vec<BatchItem> = first[3..]
        .iter()
        .map(|p| {
            BatchItem::new(p.clone(), 2)
                .with_options(SubmitOptions::default().at(t("2026-01-05T09:40:00Z")))
        })
        .collect();
    for r in league.submit_many(&batch).await {
        r.expect("batch after the loss");
    }
    let counts = league.counts(Some(1)).await.expect("counts");
    let placed = counts[0].players;
    assert_eq!(placed, 9, "{counts:?}");
    let mut seen = 0;
    for b in 1..=counts[0].brackets as u32 {
        let s = league
            .standings("bronze", b, Some(1), 0, 100)
            .await
            .expect("standings");
        assert!(s.players <= 3, "bracket {b} holds {} players", s.players);
        seen += s.players;
    }
    assert_eq!(seen, 9, "every board is one the counters list");

    // Only the period's keys are lost (a failover of the node that owns its slot):
    // the surviving boards are full, so a new joiner must land past them.
    let period = league.keys().period(1);
    let mut del = redis::cmd("DEL");
    for p in ["a", "b", "c", "d", "e", "f", "g", "h", "i"] {
        del.arg(period.assign(p));
    }
    let () = del
        .arg(&period.joins)
        .query_async(&mut con)
        .await
        .expect("del");
    let late = league
        .submit(
            "late",
            1,
            SubmitOptions::default().at(t("2026-01-05T09:50:00Z")),
        )
        .await
        .expect("placed past the full brackets");
    assert_eq!(late.bracket, 4);
    for b in 1..=4 {
        let s = league
            .standings("bronze", b, Some(1), 0, 100)
            .await
            .expect("standings");
        assert!(s.players <= 3, "bracket {b} holds {} players", s.players);
    }

    // The rollover finds every board, and nothing of the period lives forever.
    clock.set(t("2026-01-06T00:00:05Z"));
    let r = league
        .rollover(None, RolloverOptions::default())
        .await
        .expect("rollover");
    assert_eq!(r.closed[0].brackets, 4);
    for key in all_keys(&mut con).await {
        let ttl: i64 = redis::cmd("TTL")
            .arg(&key)
            .query_async(&mut con)
            .await
            .expect("ttl");
        // The season's own progress mark is the one key meant to stay.
        assert!(
            ttl > 0 || key.ends_with("{hard}:meta"),
            "{key} has TTL {ttl}"
        );
    }
}

/// A proxy to `upstream` that cuts the connection carrying the `cut_after`-th
/// EVALSHA call of `sha` (counted over all connections), in the middle of whatever
/// pipeline carries it; everything else passes through untouched.
fn cutting_proxy(upstream: u16, sha: String, cut_after: usize) -> u16 {
    struct Watch {
        sha: String,
        limit: usize,
        seen: AtomicUsize,
        cut: AtomicBool,
    }
    fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
        hay.windows(needle.len()).position(|w| w == needle)
    }
    fn pump(mut from: TcpStream, mut to: TcpStream, watch: Option<Arc<Watch>>) {
        let mut buf = vec![0u8; 16 * 1024];
        let mut tail: Vec<u8> = Vec::new();
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 {
                break;
            }
            let mut upto = n;
            let mut cut_here = false;
            if let Some(w) = &watch
                && !w.cut.load(Ordering::SeqCst)
            {
                // Count the calls in this read (a hash may straddle two reads: keep a
                // tail), and forward only up to the call that reaches the limit.
                let mut window = std::mem::take(&mut tail);
                let offset = window.len();
                window.extend_from_slice(&buf[..n]);
                let mut at = 0;
                while let Some(i) = find(&window[at..], w.sha.as_bytes()) {
                    if w.seen.fetch_add(1, Ordering::SeqCst) + 1 == w.limit {
                        upto = (at + i).saturating_sub(offset);
                        cut_here = true;
                        break;
                    }
                    at += i + w.sha.len();
                }
                tail = window[window.len().saturating_sub(w.sha.len())..].to_vec();
            }
            let _ = to.write_all(&buf[..upto]);
            if cut_here {
                if let Some(w) = &watch {
                    w.cut.store(true, Ordering::SeqCst);
                }
                let _ = to.shutdown(std::net::Shutdown::Both);
                let _ = from.shutdown(std::net::Shutdown::Both);
                return;
            }
        }
        let _ = to.shutdown(std::net::Shutdown::Both);
    }
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind proxy");
    let port = listener.local_addr().expect("addr").port();
    let watch = Arc::new(Watch {
        sha,
        limit: cut_after,
        seen: AtomicUsize::new(0),
        cut: AtomicBool::new(false),
    });
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { break };
            let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
                continue;
            };
            let (Ok(client2), Ok(server2)) = (client.try_clone(), server.try_clone()) else {
                continue;
            };
            let w = watch.clone();
            std::thread::spawn(move || pump(client, server, Some(w)));
            std::thread::spawn(move || pump(server2, client2, None));
        }
    });
    port
}

/// Case 5: `submit --batch` of plain updates (no request ids) whose connection drops
/// in the middle of a pipeline. Every line gets exactly one output line; the lines of
/// the cut chunk are "unknown" (Redis may hold some of them), never "applied" or
/// silently lost; the run goes on with the next chunk; the summary is on stderr and the
/// exit code is 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_cut_mid_pipeline_reports_every_line_honestly() {
    const LINES: usize = 2500;
    let server = RedisServer::start(&[]);
    // A season whose period holds the league clock (Redis's), so the CLI takes it.
    let now = Utc::now();
    let start = (now - chrono::Duration::hours(1)).to_rfc3339_opts(SecondsFormat::Secs, true);
    let prefix = common::unique_prefix("cut");
    let s = season(&prefix, &start, 100, "");
    let mut config = tempfile::NamedTempFile::new().expect("temp");
    let text = format!(
        "name = \"hard\"\nkey_prefix = \"{prefix}\"\n[schedule]\ntimezone = \"UTC\"\n\
         period = \"daily\"\nstart = \"{start}\"\n[scoring]\nmax_score = 1_000_000\n\
         [[tiers]]\nname = \"bronze\"\npromote = 0\ndemote = 0\n"
    );
    config.write_all(text.as_bytes()).expect("write");
    // update.lua as src/store/redis/scripts.rs assembles it, with its preludes.
    let sha = redis::Script::new(concat!(
        include_str!("../../src/store/redis/lua/clock.lua"),
        include_str!("../../src/store/redis/lua/numbers.lua"),
        include_str!("../../src/store/redis/lua/events.lua"),
        include_str!("../../src/store/redis/lua/update.lua")
    ))
    .get_hash()
    .to_owned();
    // A chunk of 1000 lines is 16 calls of update.lua (64 updates a call, see
    // src/store/redis/updates.rs): the first chunk passes, and the cut comes at the
    // 7th call of the second, after six calls (384 updates) were sent.
    let proxy = cutting_proxy(server.port, sha, 16 + 7);
    let at = (now - chrono::Duration::minutes(1)).to_rfc3339_opts(SecondsFormat::Millis, true);
    let input: String = (0..LINES)
        .map(|i| format!("{{\"player\":\"p{i:04}\",\"value\":1,\"at\":\"{at}\"}}\n"))
        .collect();
    let mut child = Command::new(env!("CARGO_BIN_EXE_leaguekit"))
        .arg("--config")
        .arg(config.path())
        .arg("--redis")
        .arg(format!("redis://127.0.0.1:{proxy}/"))
        .args(["submit", "--batch", "-", "--wait", "30"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .expect("utf-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(lines.len(), LINES, "one output line per input line");
    let mut status: BTreeMap<String, u64> = BTreeMap::new();
    for (i, l) in lines.iter().enumerate() {
        assert_eq!(l["line"].as_u64(), Some(i as u64 + 1));
        *status
            .entry(l["status"].as_str().unwrap_or("?").to_owned())
            .or_default() += 1;
    }
    let applied = status.get("applied").copied().unwrap_or(0);
    let unknown = status.get("unknown").copied().unwrap_or(0);
    assert!(unknown >= 1, "{status:?}");
    assert_eq!(
        applied + unknown,
        LINES as u64,
        "{status:?}: nothing else failed"
    );
    // The chunk after the cut was tried and applied.
    assert!(
        lines[LINES - 1]["status"] == "applied",
        "{}",
        lines[LINES - 1]
    );
    assert!(
        stderr.contains(&format!("{LINES} line(s): {applied} applied")),
        "{stderr}"
    );
    assert!(stderr.contains("unknown"), "{stderr}");
    // What Redis holds: at least what was reported applied, at most that plus unknown.
    let league = League::new(s, connect(&server).await);
    let mut held = 0;
    for i in 0..LINES {
        let v = league
            .player(&format!("p{i:04}"), None)
            .await
            .expect("view");
        if v.score == Some(1) {
            held += 1;
        }
    }
    assert!(
        applied <= held && held <= applied + unknown,
        "reported {applied} applied and {unknown} unknown; Redis holds {held}"
    );
    assert!(
        held > applied,
        "the cut chunk was partly applied: {held} vs {applied}"
    );
    eprintln!("batch cut mid-pipeline: {status:?}; Redis holds {held} applied updates");
}

/// A server of its own and a league on it whose replies time out after 300 ms with
/// no retries, with 50 players placed (each scoring 1): for the stalled-server cases.
async fn stalling_league(prefix: &str) -> (RedisServer, Arc<League<RedisStore>>) {
    let server = RedisServer::start(&[]);
    let store = RedisStore::connect(
        &server.url(),
        RedisOptions::default()
            .with_response_timeout(Duration::from_millis(300))
            .with_command_attempts(1),
    )
    .await
    .expect("connect");
    let clock = ManualClock::new(t("2026-01-05T10:00:00Z"));
    let league = Arc::new(League::with_clock(
        season(prefix, "2026-01-05T00:00:00Z", 100, ""),
        store,
        Arc::new(clock),
    ));
    let items: Vec<BatchItem> = (0..50).map(stall_item).collect();
    for r in league.submit_many(&items).await {
        r.expect("first");
    }
    (server, league)
}

/// Player `i`'s update of 1 in the stalled-server cases.
fn stall_item(i: usize) -> BatchItem {
    BatchItem::new(format!("p{i}"), 1)
        .with_options(SubmitOptions::default().at(t("2026-01-05T09:00:00Z")))
}

/// Pauses the server's writes for 1.5 s.
fn stall(server: &RedisServer) {
    let paused =
        common::command(server.port, &["CLIENT", "PAUSE", "1500", "WRITE"]).expect("pause");
    assert!(paused.starts_with("+OK"), "{paused}");
}

/// Once the stall has ended: the server ran each update it had received at most
/// once (every score 1 or 2).
async fn each_ran_at_most_once(league: &League<RedisStore>) {
    tokio::time::sleep(Duration::from_millis(1700)).await;
    let mut scores = BTreeMap::new();
    for i in 0..50 {
        let v = league
            .player(&format!("p{i}"), Some(1))
            .await
            .expect("view");
        *scores.entry(v.score).or_insert(0) += 1;
    }
    eprintln!("after the stall: scores {scores:?}");
    assert!(
        scores.keys().all(|s| matches!(s, Some(1) | Some(2))),
        "{scores:?}"
    );
}

/// Case 5, in the library: plain updates in a pipeline that times out (the server
/// stalls, then runs them) are each answered "unknown", never "applied" or "refused".
#[tokio::test]
async fn submit_many_answers_unknown_when_the_server_stalls() {
    let (server, league) = stalling_league("stall").await;
    let items: Vec<BatchItem> = (0..50).map(stall_item).collect();
    stall(&server);
    let results = league.submit_many(&items).await;
    assert_eq!(results.len(), items.len());
    for r in &results {
        match r {
            Err(e) if e.is_unknown() => {}
            other => panic!("expected unknown, got {other:?}"),
        }
    }
    assert!(
        results[0]
            .as_ref()
            .unwrap_err()
            .to_string()
            .contains("unknown")
    );
    each_ran_at_most_once(&league).await;
}

/// Case 5, gathered: concurrent single submits without request ids, gathered into
/// shared `update.lua` calls, while the server stalls: every one is answered
/// "unknown" (a gathered call is never resent unless every update in it has a
/// request id), none "applied" or "refused", and the server ran each at most once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gathered_submits_answer_unknown_when_the_server_stalls() {
    let (server, league) = stalling_league("stallg").await;
    assert!(
        league.store().options().gather_submits,
        "gathering is the default"
    );
    stall(&server);
    let tasks: Vec<_> = (0..50)
        .map(|i| {
            let league = league.clone();
            tokio::spawn(async move {
                let item = stall_item(i);
                league.submit(&item.player, item.value, item.options).await
            })
        })
        .collect();
    for task in tasks {
        match task.await.expect("task") {
            Err(e) if e.is_unknown() => {}
            other => panic!("expected unknown, got {other:?}"),
        }
    }
    each_ran_at_most_once(&league).await;
}

/// Case 9: one player's rewards key of the wrong type blocks only that grant; the
/// period closes, the report and the logs say so, and a later rollover grants it once
/// the key is repaired.
#[tokio::test]
async fn a_corrupt_rewards_key_blocks_only_its_grant() {
    let server = RedisServer::start(&[]);
    let clock = ManualClock::new(t("2026-01-05T10:00:00Z"));
    let league = League::with_clock(
        season("corrupt", "2026-01-05T00:00:00Z", 100, ""),
        connect(&server).await,
        Arc::new(clock.clone()),
    );
    submit_at(&league, "first", 50, "2026-01-05T09:00:00Z").await;
    submit_at(&league, "second", 40, "2026-01-05T09:00:00Z").await;
    submit_at(&league, "third", 30, "2026-01-05T09:00:00Z").await;
    let mut con = raw(&server).await;
    let bad = league.keys().player("first").rewards();
    let () = redis::cmd("SET")
        .arg(&bad)
        .arg("not a hash")
        .query_async(&mut con)
        .await
        .expect("set");
    clock.set(t("2026-01-06T00:00:05Z"));
    let r = league
        .rollover(None, RolloverOptions::default())
        .await
        .expect("the rollover goes on");
    assert_eq!(r.closed.len(), 1);
    assert_eq!(r.blocked.len(), 1, "{r:?}");
    let b = &r.blocked[0];
    assert_eq!(
        (b.player.as_str(), b.source.as_str(), b.grant.as_str()),
        ("first", "1/bronze/1", "gems:100")
    );
    assert!(b.error.contains("WRONGTYPE"), "{}", b.error);
    // The rest of the period is closed and granted.
    assert_eq!(
        league.rewards("second").await.expect("rewards")[0].grant,
        "gems:10"
    );
    assert_eq!(
        league
            .store()
            .closed_through(&league.keys().season())
            .await
            .expect("mark"),
        1
    );
    // Still blocked while the key is bad; granted once it is repaired.
    let again = league
        .rollover(None, RolloverOptions::default())
        .await
        .expect("again");
    assert_eq!((again.blocked.len(), again.unblocked), (1, 0));
    let () = redis::cmd("DEL")
        .arg(&bad)
        .query_async(&mut con)
        .await
        .expect("del");
    let fixed = league
        .rollover(None, RolloverOptions::default())
        .await
        .expect("fixed");
    assert_eq!((fixed.blocked.len(), fixed.unblocked), (0, 1));
    let granted = league.rewards("first").await.expect("rewards");
    assert_eq!(granted.len(), 1);
    assert_eq!(granted[0].grant, "gems:100");
    // Exactly once: a further rollover grants nothing more.
    let more = league
        .rollover(None, RolloverOptions::default())
        .await
        .expect("more");
    assert_eq!(more.unblocked, 0);
    assert_eq!(league.rewards("first").await.expect("rewards").len(), 1);
}

/// Case 1 on Redis's own clock: a league built with `League::new` decides by Redis's
/// `TIME`, inside the scripts: an event too far ahead is refused, and nothing closes
/// before the period's end plus max_skew.
#[tokio::test]
async fn league_new_decides_by_the_redis_clock() {
    let server = RedisServer::start(&[]);
    let store = connect(&server).await;
    let redis_now = store.now().await.expect("TIME");
    let local = Utc::now().timestamp_millis();
    assert!((redis_now - local).abs() < 2000, "{redis_now} vs {local}");
    // Period 1 ends in 3 s; max_skew is 1 s.
    let end = Utc::now() + chrono::Duration::seconds(3);
    let start = (end - chrono::Duration::days(1)).to_rfc3339_opts(SecondsFormat::Millis, true);
    let league = League::new(
        season(
            &common::unique_prefix("time"),
            &start,
            100,
            "[clock]\nmax_skew = \"1s\"",
        ),
        store,
    );
    league
        .submit("a", 5, SubmitOptions::default())
        .await
        .expect("now");
    league
        .submit("b", 3, SubmitOptions::default())
        .await
        .expect("now");
    let ahead = Utc::now() + chrono::Duration::seconds(30);
    let e = league
        .submit("a", 1, SubmitOptions::default().at(ahead))
        .await
        .unwrap_err();
    assert!(
        matches!(e, Error::Input(InputError::FutureTime { .. })),
        "{e:?}"
    );
    let r = league
        .rollover(None, RolloverOptions::default())
        .await
        .expect("rollover");
    assert!(r.closed.is_empty());
    let wait = (end + chrono::Duration::milliseconds(1300) - Utc::now())
        .to_std()
        .unwrap_or_default();
    tokio::time::sleep(wait).await;
    let r = league
        .rollover(None, RolloverOptions::default())
        .await
        .expect("rollover");
    assert_eq!(r.closed.len(), 1);
    assert_eq!(r.closed[0].totals.promoted, 1);
}

/// A league of daily periods from 2026-01-05 with a `player_ttl` of two days, on
/// `server` and `clock`, where player "p" has set a profile.
async fn profiled_league(
    server: &RedisServer,
    prefix: &str,
    clock: &ManualClock,
) -> League<RedisStore> {
    let league = League::with_clock(
        season(
            prefix,
            "2026-01-05T00:00:00Z",
            100,
            "[retention]\nplayer_ttl = \"2d\"",
        ),
        connect(server).await,
        Arc::new(clock.clone()),
    );
    league
        .set_profile("p", &[("name".into(), "P".into())])
        .await
        .expect("profile");
    league
}

/// Case 8 on Redis: every key of a player carries a TTL of `retention.player_ttl`
/// (plus the rest of the period), refreshed by every join.
#[tokio::test]
async fn player_keys_expire_after_player_ttl() {
    let server = RedisServer::start(&[]);
    let clock = ManualClock::new(t("2026-01-05T12:00:00Z"));
    let league = profiled_league(&server, "pttl", &clock).await;
    submit_at(&league, "p", 5, "2026-01-05T11:00:00Z").await;
    submit_at(&league, "q", 1, "2026-01-05T11:00:00Z").await;
    clock.set(t("2026-01-06T00:00:05Z"));
    league
        .rollover(None, RolloverOptions::default())
        .await
        .expect("rollover");
    league.claim("p", Some("c1")).await.expect("claim");
    let mut con = raw(&server).await;
    let keys = league.keys().player("p");
    // 2 days, plus the 12 h left in the period when p was placed; the state and
    // profile buckets, shared by many players, a minute more (record_state.lua).
    let want = 2 * 86_400 + 12 * 3600;
    for (key, most) in [
        (keys.state(), want + 60),
        (keys.profile(), want + 60),
        (keys.rewards(), want),
        (keys.claims(), want),
    ] {
        let ttl: i64 = redis::cmd("TTL")
            .arg(&key)
            .query_async(&mut con)
            .await
            .expect("ttl");
        assert!(
            (2 * 86_400 - 60..=most).contains(&ttl),
            "{key}: ttl {ttl}, want about {want}, at most {most}"
        );
    }
    // State and profile are records of the player's bucket: each carries its
    // deadline (unix seconds by the server's clock), read as absent from then on.
    let now = chrono::Utc::now().timestamp();
    for key in [keys.state(), keys.profile()] {
        let record: String = redis::cmd("HGET")
            .arg(&key)
            .arg("p")
            .query_async(&mut con)
            .await
            .expect("record");
        let deadline: i64 = record
            .split('|')
            .next()
            .and_then(|d| d.parse().ok())
            .unwrap_or_else(|| panic!("{key}: record {record:?} without a deadline"));
        assert!(
            (now + 2 * 86_400 - 60..=now + want).contains(&deadline),
            "{key}: deadline in {} s, want about {want}",
            deadline - now
        );
    }
}

/// The profile record of `player` in its bucket: (deadline, the rest).
async fn profile_record(
    con: &mut redis::aio::MultiplexedConnection,
    league: &League<RedisStore>,
    player: &str,
) -> (i64, String) {
    let key = league.keys().player(player).profile();
    let record: String = redis::cmd("HGET")
        .arg(&key)
        .arg(player)
        .query_async(con)
        .await
        .expect("profile record");
    let (deadline, rest) = record
        .split_once('|')
        .unwrap_or_else(|| panic!("{key}: record {record:?} without a deadline"));
    (
        deadline
            .parse()
            .unwrap_or_else(|_| panic!("{key}: deadline {deadline:?}")),
        rest.to_owned(),
    )
}

/// A placement leaves alone a profile that already lives as long as the placement
/// (set in its period: the snapshot's hint saves reading and writing it again), and
/// raises one that would lapse first (set in an earlier period) to the placement's
/// deadline. The stored deadlines are moved by hand, since Redis's clock cannot be.
#[tokio::test]
async fn a_placement_refreshes_a_profile_only_when_it_would_lapse_first() {
    let server = RedisServer::start(&[]);
    let clock = ManualClock::new(t("2026-01-05T12:00:00Z"));
    let league = profiled_league(&server, "pfresh", &clock).await;
    let mut con = raw(&server).await;
    let key = league.keys().player("p").profile();
    let (set, body) = profile_record(&mut con, &league, "p").await;
    // The profile record with another deadline (a second connection, so `con` stays
    // free for the reads).
    let writer = con.clone();
    let put = async |deadline: i64| {
        let _: () = redis::cmd("HSET")
            .arg(&key)
            .arg("p")
            .arg(format!("{deadline}|{body}"))
            .query_async(&mut writer.clone())
            .await
            .expect("hset");
    };
    // As if set some seconds later than the placement's own deadline: left alone, it
    // keeps this one; written again, it would take the placement's (now + ttl).
    put(set + 30).await;
    league.join("p", None).await.expect("join");
    assert_eq!(
        profile_record(&mut con, &league, "p").await,
        (set + 30, body.clone()),
        "a profile of this period is left as it was"
    );

    // A profile that lapses an hour before the next placement's state (as one set in
    // an earlier period would: a deadline is Redis's clock plus the seconds to the
    // period's end and player_ttl, and this league's clock moves apart from Redis's,
    // so the next period's placement has about the same deadline as this one's).
    put(set - 3600).await;
    clock.set(t("2026-01-06T12:00:00Z"));
    league.join("p", None).await.expect("join period 2");
    let (raised, kept) = profile_record(&mut con, &league, "p").await;
    assert_eq!(kept, body, "the profile's version and fields stay");
    assert!(
        (set - 60..=set + 60).contains(&raised),
        "the profile's deadline {raised} was not raised to the placement's (about {set})"
    );
    let profile = league.profile("p").await.expect("profile");
    assert_eq!(profile.get("name").map(String::as_str), Some("P"));
}

/// Drives `players` through `periods` daily periods: everyone scores once, the
/// rollover runs, and the winners claim. Returns a figure per period from `measure`.
async fn play_periods<S: Store, F, Fut>(
    league: &League<S>,
    clock: &ManualClock,
    players: usize,
    periods: i64,
    mut measure: F,
) -> Vec<u64>
where
    F: FnMut(i64) -> Fut,
    Fut: std::future::Future<Output = u64>,
{
    let day0 = t("2026-01-05T00:00:00Z");
    let mut figures = Vec::new();
    for d in 0..periods {
        let at = day0 + chrono::Duration::days(d) + chrono::Duration::hours(12);
        clock.set(at);
        let items: Vec<BatchItem> = (0..players)
            .map(|i| {
                BatchItem::new(
                    format!("player-{i:05}"),
                    ((i * 7919 + d as usize * 31) % 997) as i64,
                )
                .with_options(SubmitOptions::default().at(at))
            })
            .collect();
        for chunk in items.chunks(1000) {
            for r in league.submit_many(chunk).await {
                r.expect("submit");
            }
        }
        clock.set(day0 + chrono::Duration::days(d + 1) + chrono::Duration::seconds(5));
        league
            .rollover(None, RolloverOptions::default())
            .await
            .expect("rollover");
        for i in 0..players {
            let p = format!("player-{i:05}");
            if !league.rewards(&p).await.expect("rewards").is_empty() {
                league
                    .claim(&p, Some(&format!("claim-{d}")))
                    .await
                    .expect("claim");
            }
        }
        figures.push(measure(d + 1).await);
    }
    figures
}

/// Case 8 on the embedded store: the same population over 20 periods keeps the same
/// footprint (closed periods, claimed rewards and claim answers are trimmed).
#[tokio::test]
async fn memory_per_player_stays_flat_on_the_embedded_store() {
    let clock = ManualClock::new(t("2026-01-05T12:00:00Z"));
    let store = MemoryStore::with_clock(Arc::new(clock.clone()));
    let league = League::with_clock(
        season(
            "flat",
            "2026-01-05T00:00:00Z",
            100,
            "[retention]\nperiods = 1",
        ),
        store.clone(),
        Arc::new(clock.clone()),
    );
    let mut prints = Vec::new();
    let figures = play_periods(&league, &clock, 1000, 20, |_| {
        let f = store.footprint();
        prints.push(f);
        async move { f.brackets + f.periods + f.rewards + f.claims + f.requests }
    })
    .await;
    eprintln!("embedded footprint per period: {prints:?}");
    assert_eq!(prints[19].players, 1000);
    // Retention 1 keeps one closed period besides the open one, and claimed rewards
    // and claim answers of the periods before: the footprint is complete at period 4
    // and never grows after.
    assert!(
        figures[3..].iter().all(|f| *f <= figures[3]),
        "footprint grows: {figures:?}"
    );
}

/// Case 8 on Redis: bytes per player (INFO used_memory) at period 2 and at period 20
/// of the same population. Closed periods expire by TTL in real time, so this league
/// runs on Redis's own clock with periods of two seconds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_per_player_stays_flat_on_redis() {
    const PLAYERS: usize = 300;
    let server = RedisServer::start(&[]);
    let store = connect(&server).await;
    let mut con = raw(&server).await;
    let used = |con: &mut redis::aio::MultiplexedConnection| {
        let mut con = con.clone();
        async move {
            // Touch every key, so expired ones are gone before measuring.
            let _ = all_keys(&mut con).await;
            let info: String = redis::cmd("INFO")
                .arg("memory")
                .query_async(&mut con)
                .await
                .expect("info");
            info.lines()
                .find_map(|l| l.strip_prefix("used_memory:"))
                .and_then(|v| v.trim().parse::<u64>().ok())
                .expect("used_memory")
        }
    };
    let base = used(&mut con).await;
    let now = Utc::now();
    let start = now
        - chrono::Duration::milliseconds(i64::from(now.timestamp_subsec_millis()))
        - chrono::Duration::seconds(i64::from(chrono::Timelike::second(&now) % 2));
    let text = format!(
        r#"
name = "flat"
key_prefix = "flat"
[schedule]
timezone = "UTC"
period = "*/2 * * * * *"
start = "{}"
[scoring]
max_score = 1_000_000
# A closed period is kept at least the idempotency window (a retry within it is
# answered from its record): 2 s, so that retention alone bounds what is kept.
idempotency_window = "2s"
[clock]
max_skew = "1s"
[retention]
periods = 1
[[tiers]]
name = "bronze"
promote = 10
demote = 0
rewards = [{{ ranks = "1-3", grant = "gems" }}]
[[tiers]]
name = "silver"
promote = 0
demote = 10
rewards = [{{ ranks = "1-3", grant = "gems" }}]
"#,
        start.to_rfc3339_opts(SecondsFormat::Secs, true)
    );
    let league = League::new(
        Season::from_toml(&text, "flat.toml").expect("season"),
        store,
    );
    let mut bytes = Vec::new();
    let mut keys = Vec::new();
    let mut last_period = 0;
    while bytes.len() < 20 {
        let now = league.now().await.expect("now");
        let period = league.period_at(Some(now)).expect("period");
        if period.id == last_period {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        }
        last_period = period.id;
        // Everyone plays early in the period; the previous periods close; winners claim.
        let items: Vec<BatchItem> = (0..PLAYERS)
            .map(|i| {
                BatchItem::new(
                    format!("p{i:04}"),
                    ((i * 31 + period.id as usize) % 97) as i64,
                )
            })
            .collect();
        for r in league.submit_many(&items).await {
            if let Err(e) = r {
                // At a boundary, on a busy machine: the previous period may still be
                // closing, or this one already closed by the time the update ran.
                assert!(
                    e.retry_after().is_some()
                        || matches!(e, Error::Input(InputError::PeriodClosed { .. })),
                    "{e}"
                );
            }
        }
        league
            .rollover(None, RolloverOptions::default())
            .await
            .expect("rollover");
        for i in 0..PLAYERS {
            let p = format!("p{i:04}");
            league
                .claim(&p, Some(&format!("c{}", period.id)))
                .await
                .expect("claim");
        }
        let b = used(&mut con).await.saturating_sub(base);
        bytes.push(b / PLAYERS as u64);
        keys.push(all_keys(&mut con).await.len());
    }
    eprintln!("bytes per player by period: {bytes:?}; keys: {keys:?}");
    // Retention 1 keeps one closed period besides the open one, and claimed rewards
    // and claim answers of the period before that: the footprint is complete from
    // period 4 on (as on the embedded store) and must not grow after it.
    let (steady, late) = (bytes[3], bytes[19]);
    assert!(
        late as f64 <= steady as f64 * 1.15,
        "memory per player grows: {} B at period 2, {steady} B at period 4, {late} B at \
         period 20",
        bytes[1]
    );
    assert!(keys[19] <= keys[3] + keys[3] / 10, "keys grow: {keys:?}");
}

/// A player whose records expired (retention.player_ttl after their last period)
/// starts again as a new player in the bottom tier; on the embedded store, whose
/// clock the test moves.
#[tokio::test]
async fn an_expired_player_starts_anew() {
    let clock = ManualClock::new(t("2026-01-05T12:00:00Z"));
    let store = MemoryStore::with_clock(Arc::new(clock.clone()));
    let league = League::with_clock(
        season(
            "expire",
            "2026-01-05T00:00:00Z",
            100,
            "[retention]\nplayer_ttl = \"1d\"",
        ),
        store.clone(),
        Arc::new(clock.clone()),
    );
    submit_at(&league, "w", 9, "2026-01-05T11:00:00Z").await;
    submit_at(&league, "x", 1, "2026-01-05T11:00:00Z").await;
    clock.set(t("2026-01-06T00:00:05Z"));
    league
        .rollover(None, RolloverOptions::default())
        .await
        .expect("rollover");
    // Within the TTL, w joins silver.
    clock.set(t("2026-01-06T12:00:00Z"));
    assert_eq!(league.join("w", None).await.expect("join").tier, "silver");
    // Placed in period 2 (ends 01-07): kept until 01-08; back on 01-09, w is new.
    clock.set(t("2026-01-09T12:00:00Z"));
    league
        .rollover(None, RolloverOptions::default())
        .await
        .expect("rollover");
    assert_eq!(league.join("w", None).await.expect("join").tier, "bronze");
    assert!(store.footprint().players <= 1, "{:?}", store.footprint());
    let clock_now = clock.now();
    assert_eq!(clock_now, t("2026-01-09T12:00:00Z"));
}
