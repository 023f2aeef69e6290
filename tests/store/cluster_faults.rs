//! Redis Cluster faults under a running league, each on a private three-master
//! cluster (the shared one stays untouched for the tests running beside these):
//!
//! - slots moving while 50 game-server tasks submit updates with request ids (and
//!   resend every failed one with the same id, as a game server does) and a rollover
//!   runs: every update is applied exactly once, and the rollover's outcomes are those
//!   of a clean run on a copy of the data;
//! - a master stopped (SIGSTOP) during a rollover: the rollover fails with a clear
//!   error within the configured timeouts instead of hanging; once the master is
//!   killed and restarted from its own files, the rollover finishes and its outcomes
//!   are those of a clean run.
//!
//! The tests know the key layout only as "every key starts with the season's
//! `key_prefix`": they find the slots to move by scanning for the prefix.

use crate::common;

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use common::cluster::{Cluster, admin, move_slot, signal, slot_owner};
use common::snapshot::{copy_prefix, first_difference, observe_outcomes};
use leaguekit::rollover::RolloverOptions;
use leaguekit::{BatchItem, Error, SubmitOptions};
use leaguekit::{League, ManualClock, RedisOptions, RedisStore, Season};

fn season(prefix: &str) -> Season {
    let toml = format!(
        r#"
name = "faults"
key_prefix = "{prefix}"
[schedule]
timezone = "UTC"
period = "daily"
start = "2026-11-02T00:00:00Z"
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
promote = 0
demote = "20%"
rewards = [{{ ranks = "1-3", grant = "chest" }}]
"#
    );
    Season::from_toml(&toml, "faults.toml").expect("season")
}

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s)
        .expect("time")
        .with_timezone(&Utc)
}

/// When period 1 is played.
const PERIOD_1: &str = "2026-11-02T12:00:00Z";
/// A minute into period 2: period 1 may close (max_skew, 5 s, after its end), and
/// the period 2 updates are stamped with this time.
const PERIOD_2: &str = "2026-11-03T00:01:00Z";

fn player(i: usize) -> String {
    format!("p{i:04}")
}

async fn league(
    url: &str,
    options: RedisOptions,
    prefix: &str,
    clock: &ManualClock,
) -> Arc<League<RedisStore>> {
    let store = RedisStore::connect(url, options)
        .await
        .unwrap_or_else(|e| panic!("connect to {url}: {e}"));
    Arc::new(League::with_clock(
        season(prefix),
        store,
        Arc::new(clock.clone()),
    ))
}

/// Period 1: every player scores once (deterministic values, no ties that matter).
async fn play_period_1(league: &League<RedisStore>, players: usize) {
    let items: Vec<BatchItem> = (0..players)
        .map(|i| {
            BatchItem::new(player(i), ((i * 7919) % 1000) as i64)
                .with_options(SubmitOptions::default().at(at(PERIOD_1)))
        })
        .collect();
    for chunk in items.chunks(500) {
        for r in league.submit_many(chunk).await {
            r.expect("period 1 submit");
        }
    }
}

/// The nodes of a plain cluster, as single-node URLs (for the copy's SCAN).
fn node_urls(cluster: &Cluster) -> Vec<String> {
    cluster
        .ports()
        .iter()
        .map(|p| format!("redis://127.0.0.1:{p}/"))
        .collect()
}

/// A league on `cluster` whose period 1 has `players` players, a copy of it under
/// another prefix, and the clock moved into period 2.
struct SetUp {
    /// The league the test disturbs.
    league: Arc<League<RedisStore>>,
    /// The same data under another prefix, for the clean run.
    clean: Arc<League<RedisStore>>,
    /// The key prefix of `league`.
    prefix: String,
    players: Vec<String>,
}

async fn set_up(cluster: &Cluster, tag: &str, players: usize, options: &RedisOptions) -> SetUp {
    let url = cluster.url();
    let base = common::unique_prefix(tag);
    let (main, reference_prefix) = (format!("{base}a"), format!("{base}r"));
    let clock = ManualClock::new(at(PERIOD_1));
    let l0 = league(&url, options.clone(), &main, &clock).await;
    play_period_1(&l0, players).await;
    let copied = copy_prefix(&url, &node_urls(cluster), options, &main, &reference_prefix).await;
    assert!(copied > players, "only {copied} keys");
    clock.set(at(PERIOD_2));
    SetUp {
        league: l0,
        clean: league(&url, options.clone(), &reference_prefix, &clock).await,
        prefix: main,
        players: (0..players).map(player).collect(),
    }
}

// ---------------------------------------------------------------------------------
// Moving slots

/// Players, game-server tasks, and updates per player in period 2.
const PLAYERS: usize = 1000;
const WRITERS: usize = 50;
const ROUNDS: usize = 12;

/// The value of `player`'s update in `round` of period 2.
fn value(i: usize, round: usize) -> i64 {
    ((i * 31 + round * 7) % 50 + 1) as i64
}

fn request_id(i: usize, round: usize) -> String {
    format!("{}-r{round}", player(i))
}

/// Errors the game-server tasks saw (and retried), by message.
type Seen = Arc<Mutex<BTreeMap<String, usize>>>;

fn note(seen: &Seen, e: &Error) {
    let text: String = e.to_string().chars().take(100).collect();
    *seen.lock().expect("lock").entry(text).or_default() += 1;
}

/// What one game-server task saw.
#[derive(Default)]
struct Answers {
    /// Answers that said "applied", per request id.
    applied: HashMap<String, usize>,
    /// Per player: updates without a request id answered "applied", and answered
    /// "unknown" (not resent: without a request id a resend is not safe).
    plain_applied: HashMap<usize, u64>,
    plain_unknown: HashMap<usize, u64>,
}

/// One game-server task: `ROUNDS` updates for each of its players, every one with a
/// request id, resent with the same id (and time) until it is answered. Every
/// fourth update is sent again after its answer, which must say "not applied".
/// Even tasks submit one update at a time. Odd ones send a batch per round in which
/// each player's update is followed by a second one of 1 point without a request
/// id, so that a pipeline mixes calls that may be repeated with calls that may not;
/// a plain update refused for sure is sent again, one answered "unknown" is not.
async fn game_server(league: Arc<League<RedisStore>>, task: usize, seen: Seen) -> Answers {
    let mine: Vec<usize> = (task..PLAYERS).step_by(WRITERS).collect();
    let options = |i: usize, round: usize| {
        SubmitOptions::default()
            .at(at(PERIOD_2))
            .request_id(request_id(i, round))
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut out = Answers::default();
    for round in 0..ROUNDS {
        let mut pending = mine.clone();
        let mut plain: Vec<usize> = if !task.is_multiple_of(2) {
            mine.clone()
        } else {
            Vec::new()
        };
        while !pending.is_empty() || !plain.is_empty() {
            // (player, with a request id?, answer)
            let mut answers: Vec<(usize, bool, Result<leaguekit::Submission, Error>)> = Vec::new();
            if task.is_multiple_of(2) {
                for &i in &pending {
                    let answer = league
                        .submit(&player(i), value(i, round), options(i, round))
                        .await;
                    answers.push((i, true, answer));
                }
            } else {
                let mut items = Vec::new();
                let mut who = Vec::new();
                for &i in &mine {
                    if pending.contains(&i) {
                        items.push(
                            BatchItem::new(player(i), value(i, round))
                                .with_options(options(i, round)),
                        );
                        who.push((i, true));
                    }
                    if plain.contains(&i) {
                        items.push(
                            BatchItem::new(player(i), 1)
                                .with_options(SubmitOptions::default().at(at(PERIOD_2))),
                        );
                        who.push((i, false));
                    }
                }
                let results = league.submit_many(&items).await;
                answers.extend(who.into_iter().zip(results).map(|((i, id), r)| (i, id, r)));
            }
            let (mut failed, mut failed_plain) = (Vec::new(), Vec::new());
            let mut wait = Duration::from_millis(20);
            for (i, with_id, answer) in answers {
                match answer {
                    Ok(s) if !with_id => {
                        assert!(
                            s.applied,
                            "an update without a request id answered not applied"
                        );
                        *out.plain_applied.entry(i).or_default() += 1;
                    }
                    Ok(s) => {
                        if s.applied {
                            *out.applied.entry(request_id(i, round)).or_default() += 1;
                        }
                        if (i + round) % 4 == 0 {
                            let again = league
                                .submit(&player(i), value(i, round), options(i, round))
                                .await;
                            match again {
                                Ok(again) => {
                                    assert!(
                                        !again.applied,
                                        "{} applied twice",
                                        request_id(i, round)
                                    );
                                    assert!(again.score >= s.score);
                                }
                                // Not answered: it is sent again in the next pass.
                                Err(e) => {
                                    note(&seen, &e);
                                    failed.push(i);
                                }
                            }
                        }
                    }
                    Err(e) => {
                        note(&seen, &e);
                        if let Some(after) = e.retry_after() {
                            wait = wait.max(after);
                        }
                        assert!(
                            Instant::now() < deadline,
                            "{} is still refused after 120 s: {e}",
                            request_id(i, round)
                        );
                        match (with_id, e.is_unknown()) {
                            (true, _) => failed.push(i),
                            (false, true) => *out.plain_unknown.entry(i).or_default() += 1,
                            (false, false) => failed_plain.push(i),
                        }
                    }
                }
            }
            if !failed.is_empty() || !failed_plain.is_empty() {
                tokio::time::sleep(wait).await;
            }
            pending = failed;
            plain = failed_plain;
        }
        // Spread the rounds over the slot moves.
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    out
}

/// Redis Cluster's key slot: CRC16 (XMODEM) of the hash tag, or of the whole key.
fn key_slot(key: &[u8]) -> u16 {
    let mut part = key;
    if let Some(open) = key.iter().position(|&b| b == b'{')
        && let Some(len) = key[open + 1..].iter().position(|&b| b == b'}')
        && len > 0
    {
        part = &key[open + 1..open + 1 + len];
    }
    let mut crc: u16 = 0;
    for &b in part {
        crc ^= u16::from(b) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc % 16384
}

/// The slots that hold keys under `prefix`, busiest first.
fn slots_in_use(ports: &[u16], prefix: &str) -> Vec<u16> {
    let mut count: HashMap<u16, usize> = HashMap::new();
    for &port in ports {
        for key in keys_under(port, prefix) {
            *count.entry(key_slot(&key)).or_default() += 1;
        }
    }
    let mut slots: Vec<(u16, usize)> = count.into_iter().collect();
    slots.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    slots.into_iter().map(|(slot, _)| slot).collect()
}

/// Moves slots of the test's keys until `stop`: in each round the six busiest (the
/// brackets being written and the period's counters) and six others in turn
/// (players). Returns the slot moves and keys moved.
fn keep_moving(ports: Vec<u16>, prefix: String, stop: Arc<AtomicBool>) -> (usize, usize) {
    let (mut moves, mut keys) = (0, 0);
    let mut round = 0;
    while !stop.load(Ordering::SeqCst) {
        let slots = slots_in_use(&ports, &prefix);
        let busy = slots.len().min(6);
        let mut pick: Vec<u16> = slots[..busy].to_vec();
        let rest = &slots[busy..];
        for k in 0..6.min(rest.len()) {
            pick.push(rest[(round * 6 + k) % rest.len()]);
        }
        if pick.is_empty() {
            std::thread::sleep(Duration::from_millis(10));
        }
        for slot in pick {
            if stop.load(Ordering::SeqCst) {
                break;
            }
            let (_, from) = slot_owner(ports[0], slot);
            let next = ports.iter().position(|&p| p == from).expect("owner") + 1;
            // Slowly: the slot stays half-moved for a while, so that scripts meet ASK
            // and TRYAGAIN.
            keys += move_slot(&ports, slot, from, ports[next % ports.len()], true);
            moves += 1;
        }
        round += 1;
    }
    (moves, keys)
}

/// Every player's tier in period 2 (their scores are checked on their own).
async fn period_2(league: &League<RedisStore>) -> BTreeMap<String, String> {
    let mut seen = BTreeMap::new();
    for i in 0..PLAYERS {
        let me = league.player(&player(i), Some(2)).await.expect("player");
        seen.insert(player(i), me.tier);
    }
    seen
}

/// Moving slots while 50 tasks submit with request ids and a rollover runs: every
/// update applied exactly once, the rollover equal to a clean run's, no bracket over
/// its size.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slots_move_under_updates_with_request_ids_and_a_rollover() {
    // On a failure, the store's retries and redis-rs's slot refreshes and reconnections
    // are shown with the test's output.
    let _ = tracing_subscriber::fmt()
        .with_env_filter("redis=warn,leaguekit=warn")
        .with_test_writer()
        .try_init();
    let began = Instant::now();
    let cluster = Cluster::start();
    let url = cluster.url();
    let options = RedisOptions::default();
    let SetUp {
        league: l0,
        clean,
        prefix: main,
        players,
    } = set_up(&cluster, "moves", PLAYERS, &options).await;
    let clock = ManualClock::new(at(PERIOD_2));

    // The clean run, on the copy: the rollover, then the same updates.
    clean
        .rollover(None, RolloverOptions::default())
        .await
        .expect("clean rollover");
    for round in 0..ROUNDS {
        let items: Vec<BatchItem> = (0..PLAYERS)
            .map(|i| {
                BatchItem::new(player(i), value(i, round)).with_options(
                    SubmitOptions::default()
                        .at(at(PERIOD_2))
                        .request_id(request_id(i, round)),
                )
            })
            .collect();
        for r in clean.submit_many(&items).await {
            r.expect("clean submit");
        }
    }
    let want_outcomes = observe_outcomes(&clean, 1, &players).await;
    let want_period_2 = period_2(&clean).await;
    eprintln!("set-up and clean run in {:?}", began.elapsed());

    // The run under moving slots: the game servers, a rollover process and the slot
    // mover at once.
    let stop = Arc::new(AtomicBool::new(false));
    let mover = {
        let (ports, prefix, stop) = (cluster.ports(), main.clone(), stop.clone());
        std::thread::spawn(move || keep_moving(ports, prefix, stop))
    };
    let chaos = Instant::now();
    let seen: Seen = Arc::default();
    let writers: Vec<_> = (0..WRITERS)
        .map(|task| tokio::spawn(game_server(l0.clone(), task, seen.clone())))
        .collect();
    let roller = {
        // Its own connection, as a scheduler in another process would have.
        let l = league(&url, options.clone(), &main, &clock).await;
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            let mut failures = Vec::new();
            loop {
                match l.rollover(None, RolloverOptions::default()).await {
                    Ok(report) => return (report, failures),
                    Err(e) => {
                        failures.push(e.to_string());
                        assert!(
                            failures.len() < 20,
                            "the rollover keeps failing: {failures:?}"
                        );
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    }
                }
            }
        })
    };
    let mut applied: HashMap<String, usize> = HashMap::new();
    let (mut plain_applied, mut plain_unknown) = (HashMap::new(), HashMap::new());
    for w in writers {
        let answers = w.await.expect("game server task");
        for (id, n) in answers.applied {
            *applied.entry(id).or_default() += n;
        }
        plain_applied.extend(answers.plain_applied);
        plain_unknown.extend(answers.plain_unknown);
    }
    let (report, rollover_failures) = roller.await.expect("rollover task");
    let writing = chaos.elapsed();
    stop.store(true, Ordering::SeqCst);
    let (moves, keys_moved) = mover.join().expect("slot mover");
    let seen = seen.lock().expect("lock").clone();
    eprintln!(
        "{} updates with ids and {} without by {WRITERS} tasks and a rollover in \
         {writing:?}, while {moves} slot moves carried {keys_moved} keys; errors the tasks \
         saw: {seen:#?}; rollover failures: {rollover_failures:?}",
        PLAYERS * ROUNDS,
        plain_applied.values().sum::<u64>() + plain_unknown.values().sum::<u64>()
    );
    assert!(moves >= 10, "only {moves} slot moves during the run");
    assert_eq!(report.closed.len(), 1, "{report:?}");
    // A moving slot is the store's business: it waits the move out. (A timeout may
    // still reach a task, when the connection had to be reopened: see the README.)
    let moving = |e: &str| {
        ["Moved:", "Ask:", "TryAgain:", "MOVED ", "ASK ", "TRYAGAIN "]
            .iter()
            .any(|code| e.contains(code))
    };
    assert!(
        !seen.keys().any(|e| moving(e)) && !rollover_failures.iter().any(|e| moving(e)),
        "errors of a moving slot reached the callers: {seen:?} {rollover_failures:?}"
    );

    // Exactly once: no request answered "applied" twice, and every score is the sum
    // of its player's distinct requests (an update applied twice, or lost, shows),
    // plus the 1-point updates without an id answered "applied" (and at most those
    // answered "unknown").
    assert!(
        applied.values().all(|&n| n <= 1),
        "answered applied twice: {:?}",
        applied.iter().filter(|(_, n)| **n > 1).collect::<Vec<_>>()
    );
    for i in 0..PLAYERS {
        let me = l0.player(&player(i), Some(2)).await.expect("player");
        let with_ids: i64 = (0..ROUNDS).map(|r| value(i, r)).sum();
        let least = with_ids as u64 + plain_applied.get(&i).copied().unwrap_or(0);
        let most = least + plain_unknown.get(&i).copied().unwrap_or(0);
        let score = me.score.unwrap_or(0);
        assert!(
            (least..=most).contains(&score),
            "{}: score {score}, expected {least}..={most} ({with_ids} from requests with ids, \
             {:?} plain updates applied, {:?} unknown)",
            player(i),
            plain_applied.get(&i),
            plain_unknown.get(&i)
        );
    }
    let got_outcomes = observe_outcomes(&l0, 1, &players).await;
    assert!(
        got_outcomes == want_outcomes,
        "the rollover under moving slots differs from the clean one: {:?}",
        first_difference(&got_outcomes, &want_outcomes)
    );
    let got_period_2 = period_2(&l0).await;
    assert!(
        got_period_2 == want_period_2,
        "period 2 differs from the clean run: {:?}",
        first_difference(&got_period_2, &want_period_2)
    );
    // Joins raced the rollover and each other: still no bracket over its size.
    let mut placed = 0;
    for count in l0.counts(Some(2)).await.expect("counts") {
        for b in 1..=count.brackets as u32 {
            let table = l0
                .standings(&count.tier, b, Some(2), 0, 200)
                .await
                .expect("standings");
            assert!(
                table.entries.len() <= 100,
                "{} {b}: {}",
                count.tier,
                table.entries.len()
            );
            placed += table.entries.len();
        }
    }
    assert_eq!(placed, PLAYERS);
    eprintln!("slots_move_under_updates: {:?} in all", began.elapsed());
}

// ---------------------------------------------------------------------------------
// A slot held half-moved

/// A slot held half-moved (every key already on the new node, the slot still
/// MIGRATING on the old one).
///
/// 1. When every key an update declares exists, the old node answers ASK and the new
///    one runs the update after ASKING: the store follows ASK itself on the
///    connection that never resends, so updates without a request id are applied at
///    once, exactly once. Before, they met ASK until `cluster_response_timeout` and
///    failed.
/// 2. When a declared key does not exist yet (a running bracket has no meta hash),
///    Redis answers TRYAGAIN on both nodes until the move ends: the updates wait it
///    out and are applied exactly once after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn updates_without_a_request_id_follow_ask_or_wait_out_a_half_moved_slot() {
    let cluster = Cluster::start();
    let ports = cluster.ports();
    let prefix = common::unique_prefix("ask");
    let clock = ManualClock::new(at(PERIOD_1));
    let patience = Duration::from_secs(3);
    let options = RedisOptions::default().with_cluster_response_timeout(patience);
    let l = league(&cluster.url(), options, &prefix, &clock).await;
    let plain = || SubmitOptions::default().at(at(PERIOD_1));
    let (a, b) = (player(0), player(1));
    for (p, v) in [(&a, 10), (&b, 20)] {
        l.submit(p, v, plain()).await.expect("first score");
    }
    let me = l.player(&a, None).await.expect("player");
    let bracket = me.bracket.expect("placed");
    assert_eq!(
        l.player(&b, None).await.expect("player").bracket,
        Some(bracket)
    );
    let keys = leaguekit::store::keys::Keys::of(l.season()).bracket(me.period, &me.tier, bracket);
    let slot: u16 = redis::cmd("CLUSTER")
        .arg("KEYSLOT")
        .arg(&keys.board)
        .query(&mut admin(ports[0]))
        .expect("keyslot");
    let score = |p: &str| {
        let (l, p) = (l.clone(), p.to_string());
        async move { l.player(&p, None).await.expect("player").score }
    };
    let updates = || {
        let l = l.clone();
        let (a, b) = (a.clone(), b.clone());
        async move {
            let one = l.submit(&a, 5, plain()).await;
            let many = l
                .submit_many(&[
                    BatchItem::new(a.clone(), 1).with_options(plain()),
                    BatchItem::new(b.clone(), 2).with_options(plain()),
                    BatchItem::new(b.clone(), 3).with_options(plain()),
                ])
                .await;
            for r in std::iter::once(one).chain(many) {
                let s = r.expect("an update while the slot is half moved");
                assert!(s.applied, "{s:?}");
            }
        }
    };

    // 1. Every declared key exists: a field the update script does not read gives the
    // bracket its meta hash, and one its page cache (in practice both exist once a
    // page has been read and kept).
    let (_, from) = slot_owner(ports[0], slot);
    let to = *ports.iter().find(|&&p| p != from).expect("another master");
    for key in [&keys.meta, &keys.pages] {
        redis::cmd("HSET")
            .arg(key)
            .arg("test")
            .arg("1")
            .query::<()>(&mut admin(from))
            .expect("hset");
    }
    let moving = common::cluster::SlotMove::begin(slot, from, to);
    assert!(
        moving.migrate_keys(false) >= 2,
        "the bracket's keys are in slot {slot}"
    );
    let began = Instant::now();
    updates().await;
    let took = began.elapsed();
    moving.finish(&ports);
    assert!(
        took < Duration::from_secs(1),
        "took {took:?}: the updates waited for the move instead of following ASK"
    );
    assert_eq!((score(&a).await, score(&b).await), (Some(16), Some(25)));

    // 2. The meta hash gone: TRYAGAIN until the move ends, 500 ms later.
    redis::cmd("DEL")
        .arg(&keys.meta)
        .arg(&keys.pages)
        .query::<()>(&mut admin(to))
        .expect("del meta");
    let (from, to) = (to, from);
    let moving = common::cluster::SlotMove::begin(slot, from, to);
    moving.migrate_keys(false);
    let hold = Duration::from_millis(500);
    let finisher = {
        let ports = ports.clone();
        std::thread::spawn(move || {
            std::thread::sleep(hold);
            moving.finish(&ports);
        })
    };
    let began = Instant::now();
    updates().await;
    let took = began.elapsed();
    finisher.join().expect("finishing the move");
    assert!(
        took >= hold,
        "took {took:?}: applied before the move ended?"
    );
    assert_eq!((score(&a).await, score(&b).await), (Some(22), Some(30)));
}

// ---------------------------------------------------------------------------------
// A stopped master

/// Players of the stopped-master test: 80 brackets, three rounds of the 32 brackets
/// a rollover closes at once, so the rollover is still running when the node stops.
const STOP_PLAYERS: usize = 8000;

/// The keys under `prefix` on the node on `port` (a test-only SCAN).
fn keys_under(port: u16, prefix: &str) -> Vec<Vec<u8>> {
    let keys: redis::RedisResult<Vec<Vec<u8>>> = redis::cmd("SCAN")
        .cursor_arg(0)
        .arg("MATCH")
        .arg(format!("{prefix}*"))
        .arg("COUNT")
        .arg(1000)
        .clone()
        .iter(&mut admin(port))
        .expect("scan")
        .collect();
    keys.expect("scan")
}

/// A master stopped (SIGSTOP) while a rollover runs: the rollover fails with an error
/// that says Redis did not answer in time, within the configured timeouts, instead
/// of hanging; the master is then killed and restarted from its own nodes.conf and
/// append-only file on the same port, and the same store (reconnecting by itself)
/// finishes the rollover, equal to a clean run on a copy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_master_stopped_during_a_rollover() {
    let began = Instant::now();
    // Persistence on, so that a killed node comes back with its data, with every write
    // fsynced before its reply (`appendfsync always`): the test's premise is that a
    // killed node keeps what it acknowledged, which `everysec` does not promise (Redis
    // may postpone the AOF write while a background fsync is slow and answer all the
    // same). With `everysec` this test failed twice in about 27 runs (a
    // reward missing after the restart while its bracket was done); whether that was
    // the cause is not established (README, "Durability"), so a failure prints where
    // the missing reward's key lives. A node timeout longer than the test's outage, so
    // that the other masters keep serving.
    let mut cluster = Cluster::start_with_args(&[
        "--appendonly",
        "yes",
        "--appendfsync",
        "always",
        "--cluster-node-timeout",
        "30000",
    ]);
    let response = Duration::from_secs(1);
    let cluster_response = Duration::from_secs(2);
    let options = RedisOptions::default()
        .with_response_timeout(response)
        .with_cluster_response_timeout(cluster_response);
    let SetUp {
        league: l0,
        clean,
        prefix: main,
        players,
    } = set_up(&cluster, "stop", STOP_PLAYERS, &options).await;
    let run = Instant::now();
    clean
        .rollover(None, RolloverOptions::default())
        .await
        .expect("clean rollover");
    let clean_took = run.elapsed();
    let want = observe_outcomes(&clean, 1, &players).await;
    eprintln!(
        "set-up and clean rollover ({clean_took:?}) in {:?}",
        began.elapsed()
    );

    // Stop the master with the most of the league's keys, a moment into the rollover.
    let ports = cluster.ports();
    let victim = (0..ports.len())
        .max_by_key(|&i| keys_under(ports[i], &main).len())
        .expect("a node");
    let pid = cluster.pid(victim);
    let rolling = {
        let l = l0.clone();
        tokio::spawn(async move { l.rollover(None, RolloverOptions::default()).await })
    };
    tokio::time::sleep(clean_took / 8).await;
    signal(pid, "STOP");
    let stopped = Instant::now();
    let result = rolling.await.expect("rollover task");
    let failed_after = stopped.elapsed();
    let err = match result {
        Ok(report) => panic!(
            "the rollover finished before the node stopped ({report:?}); it took {clean_took:?} \
             on the copy: raise STOP_PLAYERS"
        ),
        Err(e) => e,
    };
    eprintln!(
        "with node {} stopped, the rollover failed after {failed_after:?}: {err}",
        ports[victim]
    );
    let text = err.to_string();
    assert!(
        text.contains("timed out") || text.contains("did not answer in time"),
        "not a clear timeout: {text}"
    );
    // Each request waits at most cluster_response_timeout, and is tried
    // command_attempts (3) times with short waits; the closes in flight fail together.
    // (The margin is for a loaded machine; a hang would take forever.)
    let bound = cluster_response * 3 + Duration::from_secs(10);
    assert!(
        failed_after < bound,
        "took {failed_after:?}, more than {bound:?}"
    );

    // While it is down, another attempt fails as fast.
    let again = Instant::now();
    let second = l0.rollover(None, RolloverOptions::default()).await;
    assert!(second.is_err(), "{second:?}");
    assert!(again.elapsed() < bound, "took {:?}", again.elapsed());

    // Killed and restarted where it was; the same store finishes the rollover.
    let down = Instant::now();
    cluster.kill_and_restart(victim, pid);
    eprintln!(
        "node {} restarted and the cluster ok in {:?}",
        ports[victim],
        down.elapsed()
    );
    let finish = Instant::now();
    let report = tokio::time::timeout(
        Duration::from_secs(60),
        l0.rollover(None, RolloverOptions::default()),
    )
    .await
    .expect("the rollover after the restart hangs")
    .expect("the rollover after the restart");
    assert_eq!(report.closed.len(), 1, "{report:?}");
    eprintln!("the rollover after the restart took {:?}", finish.elapsed());
    let got = observe_outcomes(&l0, 1, &players).await;
    if got != want {
        // Where the first differing player's rewards live, and what that node holds
        // now (for the failure message: which node, whether it was the stopped one).
        let diff = first_difference(&got, &want);
        let player = diff.as_ref().map_or("", |d| d.0.as_str());
        let key = l0.keys().player(player).rewards();
        let slot: u16 = redis::cmd("CLUSTER")
            .arg("KEYSLOT")
            .arg(&key)
            .query(&mut admin(ports[0]))
            .expect("keyslot");
        let held: Vec<String> = ports
            .iter()
            .map(|&port| {
                let mut con = admin(port);
                let owns: bool = redis::cmd("CLUSTER")
                    .arg("COUNTKEYSINSLOT")
                    .arg(slot)
                    .query::<i64>(&mut con)
                    .is_ok_and(|n| n > 0);
                let fields: redis::RedisResult<Vec<String>> =
                    redis::cmd("HGETALL").arg(&key).query(&mut con);
                format!("node {port} (keys in slot {slot}: {owns}): {fields:?}")
            })
            .collect();
        panic!(
            "the rollover interrupted by a stopped master differs from the clean one: \
             {diff:?}; {key} on the nodes, the stopped one {}: {held:?}; blocked grants: {:?}",
            ports[victim],
            {
                use leaguekit::store::RolloverStore as _;
                l0.store().blocked_grants(&l0.keys().season()).await
            }
        );
    }
    eprintln!(
        "a_master_stopped_during_a_rollover: {:?} in all",
        began.elapsed()
    );
}
