//! Redis-specific tests of `RedisStore`: exactness at the edge of 2^53, one slot per
//! script (on a real cluster-mode node), timeouts and retries, pipelined batches,
//! RESP3, and data the store did not write; for the rollover: TTLs of closed keys,
//! a 10,000-player bracket, opaque grants through claims, and claim retries. The
//! behaviour both stores share is in `tests/store/conformance.rs` and `tests/rollover/rollover.rs`.

use crate::common;

use std::collections::HashMap;
use std::net::TcpListener;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use leaguekit::season::packing::{EXACT_LIMIT, ScoreMode};
use leaguekit::store::keys::{BracketKeys, Keys, hash_tag};
use leaguekit::store::{Claim, CloseCheck, JoinRequest, ProfileChange, TimeCheck};
use leaguekit::store::{LeagueStore as _, RankingStore as _, RolloverStore as _};
use leaguekit::{BatchItem, SubmitOptions};
use leaguekit::{
    Error, InputError, League, ManualClock, RedisOptions, RedisStore, Season, Store, StoreError,
};

use common::{RedisServer, redis_store, redis_url, unique_prefix};

const START: &str = "2026-01-05T00:00:00Z";

fn start() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(START)
        .expect("test start time")
        .with_timezone(&Utc)
}

fn season_text(prefix: &str, mode: &str, resolution: &str, size: u32, max: u64) -> String {
    format!(
        r#"
name = "rs"
key_prefix = "{prefix}"

[schedule]
timezone = "UTC"
period = "daily"
start = "{START}"

[brackets]
size = {size}
join = "on_first_score"

[scoring]
mode = "{mode}"
max_score = {max}
time_resolution = "{resolution}"
idempotency_window = "1h"

[profiles]
fields = ["name", "avatar"]
max_bytes = 128

[[tiers]]
name = "bronze"
promote = 1
demote = 0

[[tiers]]
name = "gold"
promote = 0
demote = 1
"#
    )
}

/// A daily season; `max` defaults to the largest max_score its packing allows.
fn season(prefix: &str, mode: &str, resolution: &str, size: u32, max: Option<u64>) -> Season {
    let max = max.unwrap_or_else(|| {
        let probe = Season::from_toml(&season_text(prefix, mode, resolution, size, 1), "probe")
            .expect("probe season");
        leaguekit::season::packing::Packing::largest_max_score(probe.packing.ticks())
            .expect("a daily season packs")
    });
    Season::from_toml(&season_text(prefix, mode, resolution, size, max), "test")
        .expect("test season")
}

fn at_tick(season: &Season, tick: u64) -> DateTime<Utc> {
    let millis = tick * season.scoring.time_resolution.millis();
    start() + chrono::Duration::milliseconds(millis as i64)
}

fn opts_at(at: DateTime<Utc>) -> SubmitOptions {
    SubmitOptions::default().at(at)
}

/// A league whose league clock stands at the last millisecond of period 1 (the
/// test seasons' first day): every event time of period 1 is in the past and the
/// period is still open.
fn pinned<S: Store>(season: Season, store: S) -> League<S> {
    let clock = ManualClock::new(start() + chrono::Duration::milliseconds(86_400_000 - 1));
    League::with_clock(season, store, std::sync::Arc::new(clock))
}

/// `(player, outcome)` pairs as the rollover store methods take them.
fn pairs(v: &[(String, String)]) -> Vec<(&str, &str)> {
    v.iter().map(|(p, o)| (p.as_str(), o.as_str())).collect()
}

/// Scores near 2^53 (packed values far above 1e14, where Lua's `%.14g` would lose
/// digits) come back exactly, in the right order, from every read.
#[tokio::test]
async fn packed_scores_at_the_2_53_edge_round_trip_exactly() {
    for resolution in ["1s", "1ms"] {
        let s = season(&unique_prefix("edge"), "set", resolution, 100, None);
        let packing = s.packing;
        let max = packing.max_score();
        let keys = Keys::of(&s);
        let league = pinned(s.clone(), redis_store().await);
        // The last tick of this (24 h) period.
        let last = 86_400_000 / s.scoring.time_resolution.millis() - 1;
        let cases = [
            ("a-top", max, 0),
            ("b-later", max, 1),
            ("c-last", max, last),
            ("d-below", max - 1, 0),
            ("e-low", 123_456, last),
        ];
        for (player, score, tick) in cases {
            let sub = league
                .submit(player, score as i64, opts_at(at_tick(&s, tick)))
                .await
                .expect("submit");
            assert_eq!(sub.score, score, "{resolution} {player}");
        }
        let top = packing.pack(max, 0).expect("packs");
        assert_eq!(top, (max + 1) * packing.span() - 1);
        assert!(top < EXACT_LIMIT && top > 1_000_000_000_000_000, "{top}");

        let period = league.period_at(Some(start())).expect("period").id;
        let bracket = keys.bracket(period, "bronze", 1);
        let page = league
            .store()
            .standings(&bracket, 0, 10)
            .await
            .expect("standings");
        let got: Vec<(String, u64)> = page
            .entries
            .iter()
            .map(|e| (e.player.clone(), e.packed))
            .collect();
        let want: Vec<(String, u64)> = cases
            .iter()
            .map(|(p, score, tick)| ((*p).to_owned(), packing.pack(*score, *tick).expect("pack")))
            .collect();
        assert_eq!(got, want, "{resolution}");
        for (rank, (player, packed)) in want.iter().enumerate() {
            let entry = league.store().entry(&bracket, player).await.expect("entry");
            assert_eq!(entry, Some((rank as u64, *packed)), "{resolution} {player}");
        }
        let around = league
            .store()
            .around(&bracket, "c-last", 1, 1)
            .await
            .expect("around")
            .expect("on the board");
        assert_eq!(around.offset, 1);
        assert_eq!(
            around.entries.iter().map(|e| e.packed).collect::<Vec<_>>(),
            vec![want[1].1, want[2].1, want[3].1]
        );
        let standings = league
            .standings("bronze", 1, Some(period), 0, 10)
            .await
            .expect("standings");
        assert_eq!(standings.entries[0].score, max);
        assert_eq!(standings.entries[3].score, max - 1);
    }
}

/// Increments one unit at a time just below max_score stay exact, and the step past
/// it is refused without writing.
#[tokio::test]
async fn increments_near_the_limit_are_exact() {
    let s = season(&unique_prefix("inc"), "increment", "1s", 100, None);
    let max = s.packing.max_score();
    let league = pinned(s.clone(), redis_store().await);
    let at = opts_at(at_tick(&s, 7));
    let first = league
        .submit("p", (max - 5) as i64, at.clone())
        .await
        .expect("first");
    assert_eq!(first.score, max - 5);
    for i in 1..=5 {
        let sub = league.submit("p", 1, at.clone()).await.expect("increment");
        assert_eq!(sub.score, max - 5 + i);
    }
    let refused = league.submit("p", 1, at.clone()).await;
    assert!(
        matches!(refused, Err(Error::Input(InputError::Score(_)))),
        "{refused:?}"
    );
    let view = league.player("p", None).await;
    let period = league.period_at(Some(start())).expect("period").id;
    let bracket = Keys::of(&s).bracket(period, "bronze", 1);
    let entry = league.store().entry(&bracket, "p").await.expect("entry");
    assert_eq!(
        entry,
        Some((0, s.packing.pack(max, 7).expect("pack"))),
        "{view:?}"
    );
    let back = league
        .submit("p", -(max as i64), at)
        .await
        .expect("to zero");
    assert_eq!(back.score, 0);
}

/// A tiny deterministic generator, so failures reproduce.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 11
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// `update.lua` computes exactly what `Packing::apply` computes, in every mode, with
/// the largest max_score, on random updates: scores, times, ranks and refusals.
#[tokio::test]
async fn update_script_mirrors_packing_apply() {
    for mode in [ScoreMode::Increment, ScoreMode::Best, ScoreMode::Set] {
        let s = season(&unique_prefix("mirror"), mode.as_str(), "1s", 100, None);
        let packing = s.packing;
        let max = packing.max_score();
        let league = pinned(s.clone(), redis_store().await);
        let period = league.period_at(Some(start())).expect("period").id;
        let bracket = Keys::of(&s).bracket(period, "bronze", 1);
        let mut rng = Lcg(0x5eed ^ mode.as_str().len() as u64);
        let mut model: HashMap<String, u64> = HashMap::new();
        for step in 0..300 {
            let player = format!("p{}", rng.below(6));
            // Values the engine does not refuse up front: |delta| <= max, or 0..=max.
            let value: i64 = match (mode, rng.below(5)) {
                (_, 0) => max as i64,
                (_, 1) => 0,
                (ScoreMode::Increment, 2) => -(rng.below(max + 1) as i64),
                (ScoreMode::Increment, 3) => rng.below(3) as i64 - 1,
                _ => rng.below(max + 1) as i64,
            };
            let tick = match rng.below(3) {
                0 => 0,
                1 => 86_399,
                _ => rng.below(86_400),
            };
            let placed = model.contains_key(&player);
            let current = *model.entry(player.clone()).or_insert(0);
            let expected = packing.apply(mode, Some(current), value, tick);
            let got = league
                .submit(&player, value, opts_at(at_tick(&s, tick)))
                .await;
            match (expected, got) {
                (Ok(packed), Ok(sub)) => {
                    model.insert(player.clone(), packed);
                    let mut order: Vec<(&String, &u64)> = model.iter().collect();
                    order.sort_by(|a, b| b.1.cmp(a.1).then(a.0.as_bytes().cmp(b.0.as_bytes())));
                    let rank = order
                        .iter()
                        .position(|(p, _)| **p == player)
                        .expect("in model");
                    assert_eq!(sub.score, packed / packing.span(), "step {step}");
                    assert_eq!(sub.rank, Some(rank as u64 + 1), "step {step}");
                    assert!(sub.applied);
                    let entry = league
                        .store()
                        .entry(&bracket, &player)
                        .await
                        .expect("entry");
                    assert_eq!(entry, Some((rank as u64, packed)), "{mode:?} step {step}");
                }
                (Err(_), Err(Error::Input(InputError::Score(_)))) => {
                    let entry = league
                        .store()
                        .entry(&bracket, &player)
                        .await
                        .expect("entry");
                    // A refused first score places nobody: no entry at all.
                    let want = placed.then_some(current);
                    assert_eq!(entry.map(|e| e.1), want, "refusal wrote");
                    if !placed {
                        model.remove(&player);
                    }
                }
                (want, got) => panic!("{mode:?} step {step}: expected {want:?}, got {got:?}"),
            }
        }
    }
}

/// Every script touches one group's keys, and each group shares one hash tag, whatever
/// the ids contain.
#[test]
fn keys_of_each_script_share_one_slot() {
    let keys = Keys::new("lk", "season");
    for id in ["plain", "a}b", "{x}", "a:b", "a b", "%7D", "é{}", "u/1"] {
        let bracket = keys.bracket(3, "gold", 2);
        let tag = hash_tag(&bracket.board);
        // update.lua: board, meta, idempotency key; enter/standings/around: board, prof;
        // a page's MULTI and open_page/keep_page.lua: board, prof, page, meta.
        for key in [
            &bracket.meta,
            &bracket.profiles,
            &bracket.pages,
            &bracket.request(id, id),
        ] {
            assert_eq!(hash_tag(key), tag, "{key}");
        }
        // join.lua: the player's assign bucket, joins, meta; finish_period.lua: meta,
        // joins and every assign bucket.
        let period = keys.period(3);
        assert_eq!(hash_tag(&period.joins), hash_tag(&period.assign(id)));
        assert_eq!(hash_tag(&period.meta), hash_tag(&period.assign(id)));
        for bucket in period.assign_buckets() {
            assert_eq!(hash_tag(&bucket), hash_tag(&period.meta), "{bucket}");
        }
        // record_state.lua (state and profile buckets, rewards, claims), snapshot.lua
        // (state, profile, rewards), set_profile.lua, claim_rewards.lua, grant.lua:
        // the keys of the player's bucket.
        let player = keys.player(id);
        for key in [player.profile(), player.rewards(), player.claims()] {
            assert_eq!(hash_tag(&key), hash_tag(&player.state()), "{key}");
        }
        assert_ne!(
            hash_tag(&player.state()),
            player.state(),
            "no tag in {}",
            player.state()
        );
        // Two players of one bucket share its keys but never a per-player key.
        let twin = (0..)
            .map(|i| format!("twin{i}"))
            .find(|t| keys.player(t).bucket == player.bucket && t != id)
            .expect("another player of the bucket");
        let twin = keys.player(&twin);
        assert_eq!(twin.state(), player.state());
        assert_ne!(twin.rewards(), player.rewards());
        assert_ne!(twin.claims(), player.claims());
    }
}

/// Starts a single-node Redis Cluster that owns every slot. Redis then refuses any
/// script whose declared keys span two slots (CROSSSLOT); with
/// `scripts_touch_only_declared_keys` (in `src/store/redis/scripts.rs`), which checks that no
/// script touches a key it did not declare, every store operation that succeeds here
/// would run unchanged on a real cluster.
fn cluster_node() -> RedisServer {
    let server = RedisServer::start(&[
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        "nodes.conf",
    ]);
    let added = common::command(server.port, &["CLUSTER", "ADDSLOTSRANGE", "0", "16383"])
        .expect("cluster addslotsrange");
    if !added.starts_with("+OK") {
        // Redis before 7.0 has no ADDSLOTSRANGE.
        let slots: Vec<String> = (0..16384).map(|s| s.to_string()).collect();
        let mut args = vec!["CLUSTER", "ADDSLOTS"];
        args.extend(slots.iter().map(String::as_str));
        let added = common::command(server.port, &args).expect("cluster addslots");
        assert!(added.starts_with("+OK"), "CLUSTER ADDSLOTS: {added}");
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let info = common::command(server.port, &["CLUSTER", "INFO"]).expect("cluster info");
        if info.contains("cluster_state:ok") {
            return server;
        }
        assert!(Instant::now() < deadline, "cluster never became ok: {info}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test]
async fn every_operation_runs_on_a_cluster_node() {
    let node = cluster_node();
    // The check has teeth: two tags in one script are refused.
    let cross =
        common::command(node.port, &["EVAL", "return 1", "2", "{a}x", "{b}y"]).expect("eval");
    assert!(cross.starts_with("-CROSSSLOT"), "{cross}");

    let store = RedisStore::connect(&node.url(), RedisOptions::default())
        .await
        .expect("connect to the cluster node");
    let s = season(
        &unique_prefix("cluster"),
        "increment",
        "1s",
        2,
        Some(1_000_000),
    );
    let league = pinned(s.clone(), store.clone());
    let at = opts_at(at_tick(&s, 10));
    for player in ["a{1}", "b:2", "c 3", "d}4", "e"] {
        league.join(player, Some(start())).await.expect("join");
        league
            .submit(player, 10, at.clone().request_id(format!("r-{player}")))
            .await
            .expect("submit");
        league
            .set_profile(player, &[("name".into(), format!("N {player}"))])
            .await
            .expect("set profile");
    }
    let again = league
        .submit("a{1}", 10, at.clone().request_id("r-a{1}"))
        .await
        .expect("duplicate");
    assert!(!again.applied);
    let batch: Vec<BatchItem> = (0..20)
        .map(|i| {
            BatchItem::new(format!("p{i}"), i)
                .with_options(at.clone().request_id(format!("batch-{}", i % 7)))
        })
        .collect();
    for result in league.submit_many(&batch).await {
        result.expect("batch item");
    }
    let period = league.period_at(Some(start())).expect("period").id;
    let standings = league
        .standings("bronze", 1, Some(period), 0, 10)
        .await
        .expect("standings");
    assert_eq!(standings.players, 2);
    assert!(
        league
            .around("b:2", 2, Some(period))
            .await
            .expect("around")
            .is_some()
    );
    league.player("c 3", Some(period)).await.expect("player");
    league.profile("d}4").await.expect("profile");
    let counts = league.counts(Some(period)).await.expect("counts");
    assert_eq!(counts.iter().map(|c| c.players).sum::<u64>(), 25);
}

/// A server that accepts connections and never answers.
fn silent_server() -> (u16, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let handle = std::thread::spawn(move || {
        let mut held = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(10);
        listener.set_nonblocking(true).expect("nonblocking");
        while Instant::now() < deadline {
            match listener.accept() {
                Ok((socket, _)) => held.push(socket),
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    });
    (port, handle)
}

/// A server that never answers gives an error within the configured timeouts, not a
/// hang (whether redis-rs notices at connect or at the first command).
#[tokio::test]
async fn a_silent_server_times_out() {
    let (port, _server) = silent_server();
    let options = RedisOptions::default()
        .with_connection_timeout(Duration::from_millis(200))
        .with_response_timeout(Duration::from_millis(200))
        .with_reconnect_retries(0)
        .with_command_attempts(1);
    let began = Instant::now();
    let url = format!("redis://127.0.0.1:{port}/");
    let outcome = match RedisStore::connect(&url, options).await {
        Err(e) => Err(e),
        Ok(store) => {
            let keys = Keys::new("lk", "s").bracket(1, "gold", 1);
            store.entry(&keys, "p").await.map(|_| ())
        }
    };
    let elapsed = began.elapsed();
    assert!(outcome.is_err(), "a silent server answered: {outcome:?}");
    assert!(elapsed < Duration::from_secs(3), "took {elapsed:?}");
    eprintln!(
        "silent server: error after {elapsed:?}: {}",
        outcome.unwrap_err()
    );
}

/// Pauses every client of `server` for `millis` (the server runs the queued commands
/// afterwards, as it would after a network stall).
fn pause(server: &RedisServer, millis: u64) {
    let ok = common::command(server.port, &["CLIENT", "PAUSE", &millis.to_string()])
        .expect("client pause");
    assert!(ok.starts_with("+OK"), "CLIENT PAUSE: {ok}");
}

/// A league on a private server (pausing the shared one would slow other tests).
async fn private_league(
    server: &RedisServer,
    options: RedisOptions,
) -> (League<RedisStore>, Season) {
    let store = RedisStore::connect(&server.url(), options)
        .await
        .expect("connect");
    let s = season(
        &unique_prefix("retry"),
        "increment",
        "1s",
        100,
        Some(1_000_000),
    );
    (pinned(s.clone(), store), s)
}

#[tokio::test]
async fn a_reply_slower_than_response_timeout_is_a_timeout_error() {
    let server = RedisServer::start(&[]);
    let options = RedisOptions::default()
        .with_response_timeout(Duration::from_millis(100))
        .with_command_attempts(1);
    let (league, s) = private_league(&server, options).await;
    let bracket = Keys::of(&s).bracket(1, "bronze", 1);
    league
        .store()
        .entry(&bracket, "p")
        .await
        .expect("entry before the pause");
    pause(&server, 600);
    let began = Instant::now();
    let err = league
        .store()
        .entry(&bracket, "p")
        .await
        .expect_err("paused");
    let elapsed = began.elapsed();
    match &err {
        StoreError::Backend {
            backend: "redis",
            kind: leaguekit::error::BackendFailure::Timeout,
            ..
        } => {}
        other => panic!("expected a Redis timeout, got {other:?}"),
    }
    assert!(elapsed < Duration::from_millis(500), "took {elapsed:?}");
}

/// An update with a request id whose reply timed out is retried; the retry finds the
/// first attempt's record, which carries this call's token, so the caller gets
/// `applied: true` and the score moved once.
#[tokio::test]
async fn a_retried_update_with_a_request_id_applies_once_and_reports_applied() {
    let server = RedisServer::start(&[]);
    let options = RedisOptions::default()
        .with_response_timeout(Duration::from_millis(400))
        .with_retry_delay(Duration::from_millis(50))
        .with_command_attempts(3);
    let (league, s) = private_league(&server, options).await;
    let at = opts_at(at_tick(&s, 5));
    league.submit("p", 10, at.clone()).await.expect("place");
    pause(&server, 600);
    let began = Instant::now();
    let sub = league
        .submit("p", 5, at.clone().request_id("once"))
        .await
        .expect("retried update");
    let elapsed = began.elapsed();
    assert!(
        elapsed >= Duration::from_millis(400),
        "no timeout happened: {elapsed:?}"
    );
    assert!(
        sub.applied,
        "the caller's own first attempt is not a duplicate"
    );
    assert_eq!(sub.score, 15);
    let again = league
        .submit("p", 5, at.request_id("once"))
        .await
        .expect("repeat");
    assert!(!again.applied);
    assert_eq!(again.score, 15);
    let view = league.player("p", Some(1)).await.expect("player");
    assert_eq!(view.score, Some(15));
}

/// Without a request id an update is not retried: the first attempt may run after
/// its reply timed out (as here), and a second would apply the delta twice.
#[tokio::test]
async fn an_update_without_a_request_id_is_not_retried() {
    let server = RedisServer::start(&[]);
    let options = RedisOptions::default()
        .with_response_timeout(Duration::from_millis(200))
        .with_retry_delay(Duration::from_millis(10))
        .with_command_attempts(5);
    let (league, s) = private_league(&server, options).await;
    let at = opts_at(at_tick(&s, 5));
    league.submit("p", 10, at.clone()).await.expect("place");
    pause(&server, 500);
    let began = Instant::now();
    let err = league.submit("p", 5, at).await.expect_err("timed out");
    assert!(
        began.elapsed() < Duration::from_millis(450),
        "retried: {err}"
    );
    tokio::time::sleep(Duration::from_millis(600)).await;
    let view = league.player("p", Some(1)).await.expect("player");
    assert_eq!(view.score, Some(15), "the paused update ran exactly once");
}

/// `update_many` sends a whole batch in one pipeline and answers exactly as the same
/// updates sent one at a time.
#[tokio::test]
async fn update_many_pipelines_and_matches_sequential_updates() {
    batch_matches_sequential(redis_store().await).await;
}

/// On a Redis Cluster the batch's four brackets live in different slots (and, with
/// three masters, mostly on different nodes): redis-rs refuses a pipeline that spans
/// slots, so the store sends one per slot, concurrently. The answers are still
/// exactly those of the same updates sent one at a time.
#[tokio::test]
async fn update_many_spans_slots_and_nodes_of_a_cluster() {
    batch_matches_sequential(common::cluster_store().await).await;
}

async fn batch_matches_sequential(store: RedisStore) {
    const N: usize = 1000;
    let mut rng = Lcg(42);
    let items: Vec<BatchItem> = (0..N)
        .map(|i| {
            let player = format!("p{:03}", rng.below(150));
            // Some negative deltas take scores below 0 and are refused in place.
            let value = rng.below(40) as i64 - 8;
            let mut options = opts_at(start() + chrono::Duration::seconds(i as i64));
            if rng.below(3) == 0 {
                options = options.request_id(format!("rq{}", rng.below(200)));
            }
            BatchItem::new(player, value).with_options(options)
        })
        .collect();
    let players: Vec<String> = (0..150).map(|i| format!("p{i:03}")).collect();
    let batched = pinned(
        season(
            &unique_prefix("batch"),
            "increment",
            "1s",
            40,
            Some(1_000_000),
        ),
        store.clone(),
    );
    let sequential = pinned(
        season(
            &unique_prefix("seq"),
            "increment",
            "1s",
            40,
            Some(1_000_000),
        ),
        store,
    );
    // Place everyone first, so only the updates are timed.
    for league in [&batched, &sequential] {
        for p in &players {
            league.join(p, Some(start())).await.expect("join");
        }
    }
    let began = Instant::now();
    let many = batched.submit_many(&items).await;
    let pipelined = began.elapsed();
    let began = Instant::now();
    let mut one_by_one = Vec::with_capacity(N);
    for item in &items {
        one_by_one.push(
            sequential
                .submit(&item.player, item.value, item.options.clone())
                .await,
        );
    }
    let sequential_time = began.elapsed();
    assert_eq!(many.len(), N);
    let (mut applied, mut duplicate, mut refused) = (0, 0, 0);
    for (i, (a, b)) in many.iter().zip(&one_by_one).enumerate() {
        match (a, b) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a, b, "item {i}");
                if a.applied {
                    applied += 1;
                } else {
                    duplicate += 1;
                }
            }
            (Err(a), Err(b)) => {
                assert_eq!(a.to_string(), b.to_string(), "item {i}");
                refused += 1;
            }
            (a, b) => panic!("item {i}: batch {a:?} vs sequential {b:?}"),
        }
    }
    assert!(
        applied > 0 && duplicate > 0 && refused > 0,
        "{applied} {duplicate} {refused}"
    );
    for bracket in 1..=4 {
        let a = batched
            .standings("bronze", bracket, Some(1), 0, 100)
            .await
            .expect("a");
        let b = sequential
            .standings("bronze", bracket, Some(1), 0, 100)
            .await
            .expect("b");
        assert_eq!(a.entries, b.entries, "bracket {bracket}");
    }
    eprintln!(
        "{N} updates ({applied} applied, {duplicate} duplicate, {refused} refused): \
         pipelined {pipelined:?}, one at a time {sequential_time:?}"
    );
}

/// A TCP proxy to `upstream` that holds every chunk of bytes for `delay` before
/// passing it on, in both directions: a slow network, where round trips dominate.
fn slow_proxy(upstream: u16, delay: Duration) -> u16 {
    use std::io::{Read, Write};
    use std::net::TcpStream;

    fn pump(mut from: TcpStream, mut to: TcpStream, delay: Duration) {
        let mut buf = vec![0u8; 64 * 1024];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 {
                break;
            }
            std::thread::sleep(delay);
            if to.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = to.shutdown(std::net::Shutdown::Both);
    }

    let listener = TcpListener::bind("127.0.0.1:0").expect("bind proxy");
    let port = listener.local_addr().expect("proxy addr").port();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { break };
            let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
                continue;
            };
            let (Ok(client2), Ok(server2)) = (client.try_clone(), server.try_clone()) else {
                continue;
            };
            std::thread::spawn(move || pump(client, server, delay));
            std::thread::spawn(move || pump(server2, client2, delay));
        }
    });
    port
}

/// Over a slow link a batch costs about one round trip, not one per update: proof
/// that `update_many` pipelines.
#[tokio::test]
async fn update_many_costs_one_round_trip_not_one_per_update() {
    const N: usize = 500;
    let server = RedisServer::start(&[]);
    let proxy = slow_proxy(server.port, Duration::from_millis(30));
    let s = season(
        &unique_prefix("rtt"),
        "increment",
        "1s",
        100,
        Some(1_000_000),
    );
    let players = ["a", "b", "c", "d"];
    // Place the players over the direct connection...
    let direct = RedisStore::connect(&server.url(), RedisOptions::default())
        .await
        .expect("connect");
    let placed = pinned(s.clone(), direct);
    for p in players {
        placed.join(p, Some(start())).await.expect("join");
    }
    // ...then update over the slow one.
    let slow = RedisStore::connect(
        &format!("redis://127.0.0.1:{proxy}/"),
        RedisOptions::default(),
    )
    .await
    .expect("connect through the proxy");
    let league = pinned(s.clone(), slow.clone());
    let bracket = Keys::of(&s).bracket(1, "bronze", 1);
    slow.entry(&bracket, "a").await.expect("warm up");
    let began = Instant::now();
    slow.entry(&bracket, "a").await.expect("entry");
    let rtt = began.elapsed();
    let items: Vec<BatchItem> = (0..N)
        .map(|i| {
            BatchItem::new(players[i % players.len()], 1)
                .with_options(opts_at(at_tick(&s, i as u64)).request_id(format!("r{i}")))
        })
        .collect();
    let began = Instant::now();
    let results = league.submit_many(&items).await;
    let batch = began.elapsed();
    assert!(results.iter().all(|r| r.as_ref().is_ok_and(|s| s.applied)));
    let view = placed.player("a", Some(1)).await.expect("player");
    assert_eq!(view.score, Some((N / players.len()) as u64));
    eprintln!(
        "slow link: one round trip {rtt:?}; {N} updates in one batch {batch:?} \
         (one at a time would take about {:?})",
        rtt * N as u32
    );
    // The engine looks up each player's placement once (4 round trips), then the
    // batch: one pipeline, a few chunks each way. One round trip per update would be
    // 500.
    assert!(batch < rtt * 12, "batch {batch:?} vs round trip {rtt:?}");
}

/// Over a slow link, placing a batch of new players costs a few round trips for the
/// whole batch (one per stage), not a few per player: proof that `join_many` and the
/// placements inside `submit_many` are pipelined.
#[tokio::test]
async fn bulk_placements_cost_a_few_round_trips_not_a_few_per_player() {
    const N: usize = 300;
    let server = RedisServer::start(&[]);
    let proxy = slow_proxy(server.port, Duration::from_millis(30));
    let slow = RedisStore::connect(
        &format!("redis://127.0.0.1:{proxy}/"),
        RedisOptions::default(),
    )
    .await
    .expect("connect through the proxy");
    let s = season(
        &unique_prefix("bulkrtt"),
        "increment",
        "1s",
        100,
        Some(1_000_000),
    );
    let bracket = Keys::of(&s).bracket(1, "bronze", 1);
    slow.entry(&bracket, "nobody").await.expect("warm up");
    let began = Instant::now();
    slow.entry(&bracket, "nobody").await.expect("entry");
    let rtt = began.elapsed();

    // The server's script cache warmed by another league: a pipeline's first call of
    // a script the server lacks costs one more round trip (NOSCRIPT, then SCRIPT LOAD
    // and the call again), once per server.
    let warm = pinned(
        season(
            &unique_prefix("bulkwarm"),
            "increment",
            "1s",
            100,
            Some(1_000_000),
        ),
        slow.clone(),
    );
    for placed in warm.join_many(&[leaguekit::JoinItem::new("w")]).await {
        placed.expect("warm-up join");
    }
    for submitted in warm.submit_many(&[BatchItem::new("v", 1)]).await {
        submitted.expect("warm-up submit");
    }

    let league = pinned(s.clone(), slow.clone());
    let items: Vec<leaguekit::JoinItem> = (0..N)
        .map(|i| leaguekit::JoinItem::new(format!("j{i:03}")))
        .collect();
    let began = Instant::now();
    let placed = league.join_many(&items).await;
    let joins = began.elapsed();
    for (i, p) in placed.into_iter().enumerate() {
        let p = p.expect("join_many");
        assert_eq!(p.bracket, (i / 100) as u32 + 1);
    }
    // A single join of a new player: the snapshot, the counter, then the board entry
    // and the state record together: three round trips.
    let began = Instant::now();
    let solo_at = league.join("solo", None).await.expect("join");
    let solo = began.elapsed();
    assert!(
        solo < rtt * 37 / 10,
        "a join took {solo:?}, over three round trips of {rtt:?}"
    );
    // A profile of a placed player: the profile written and the placement read
    // together, then the bracket's cached copy: two round trips.
    // (The first call loads the two scripts: NOSCRIPT, SCRIPT LOAD, EVALSHA.)
    let warm = [("name".to_string(), "first".to_string())];
    league
        .set_profile("solo", &warm)
        .await
        .expect("set_profile");
    let fields = [("name".to_string(), "Solo".to_string())];
    let began = Instant::now();
    league
        .set_profile("solo", &fields)
        .await
        .expect("set_profile");
    let profile = began.elapsed();
    assert!(
        profile < rtt * 27 / 10,
        "set_profile took {profile:?}, over two round trips of {rtt:?}"
    );
    let page = league
        .standings(&solo_at.tier, solo_at.bracket, None, 0, 200)
        .await
        .expect("standings");
    let entry = page
        .entries
        .iter()
        .find(|e| e.player == "solo")
        .expect("solo placed");
    assert_eq!(
        entry.profile.get("name").as_deref(),
        Some("Solo"),
        "the cached copy is in the bracket: {entry:?}"
    );
    let items: Vec<BatchItem> = (0..N)
        .map(|i| BatchItem::new(format!("s{i:03}"), 1).with_options(opts_at(at_tick(&s, i as u64))))
        .collect();
    let began = Instant::now();
    let submitted = league.submit_many(&items).await;
    let submits = began.elapsed();
    assert!(
        submitted
            .iter()
            .all(|r| r.as_ref().is_ok_and(|s| s.applied))
    );
    eprintln!(
        "slow link: one round trip {rtt:?}; one join {solo:?}; {N} new players by join_many \
         {joins:?}, by submit_many {submits:?} (one at a time would take about {:?})",
        rtt * 4 * N as u32
    );
    // Stages: snapshots, counters, board entries, states (and for submit_many the
    // assignment lookup and the updates), a few chunks each way. One round trip per
    // player would be 300.
    assert!(
        joins < rtt * 15,
        "join_many {joins:?} vs round trip {rtt:?}"
    );
    assert!(
        submits < rtt * 20,
        "submit_many {submits:?} vs round trip {rtt:?}"
    );
}

/// Pipelines carry no script source: a warm batch sends EVALSHA alone (no SCRIPT
/// LOAD, whose 7 KB Redis would hash on every pipeline), and after the server's script
/// cache is emptied (as after a restart or a failover) the calls answered NOSCRIPT,
/// which did not run, are sent again after one SCRIPT LOAD: every player placed once.
#[tokio::test]
async fn pipelines_load_scripts_only_when_the_server_lacks_them() {
    const N: usize = 300;
    let server = RedisServer::start(&[]);
    let (league, _) = private_league(&server, RedisOptions::default()).await;
    let batch = |from: usize| -> Vec<leaguekit::JoinItem> {
        (from..from + N)
            .map(|i| leaguekit::JoinItem::new(format!("n{i:04}")))
            .collect()
    };
    let check = |placed: Vec<Result<leaguekit::Placement, leaguekit::Error>>, from: usize| {
        for (i, p) in placed.into_iter().enumerate() {
            let p = p.expect("join_many");
            assert_eq!(p.bracket as usize, (from + i) / 100 + 1, "{p:?}");
        }
    };
    let loads = |used: &HashMap<String, u64>| {
        // Redis 7 counts `script|load`; Redis 6 every SCRIPT subcommand as `script`.
        used.get("script|load")
            .or_else(|| used.get("script"))
            .copied()
            .unwrap_or(0)
    };
    check(league.join_many(&batch(0)).await, 0);
    let before = calls(server.port);
    check(league.join_many(&batch(N)).await, N);
    let used = calls_since(server.port, &before);
    assert_eq!(loads(&used), 0, "a warm batch loaded scripts: {used:?}");
    assert!(used.get("evalsha").copied().unwrap_or(0) >= 3, "{used:?}");

    common::command(server.port, &["SCRIPT", "FLUSH"]).expect("script flush");
    let before = calls(server.port);
    check(league.join_many(&batch(2 * N)).await, 2 * N);
    let used = calls_since(server.port, &before);
    // Each stage's pipeline met NOSCRIPT once and loaded its script once.
    let loaded = loads(&used);
    assert!(
        (1..=4).contains(&loaded),
        "{loaded} loads after a flush: {used:?}"
    );
    // Nobody was counted twice: the next new player lands right after them.
    let next = league.join("last", None).await.expect("join");
    assert_eq!(next.bracket as usize, 3 * N / 100 + 1);
    let page = league
        .standings("bronze", next.bracket, None, 0, 200)
        .await
        .expect("standings");
    assert_eq!(page.entries.len(), 1, "{page:?}");
}

/// A batch of state writes of different periods, lifetimes and trims (record_state.lua
/// takes them once a call, so the store sends each kind in calls of its own) records
/// each write as if it went alone; a tier the record cannot hold is refused alone.
#[tokio::test]
async fn state_writes_of_several_periods_in_one_batch_each_keep_their_own() {
    use leaguekit::store::{PlayerState, StateWrite};
    let keys = Keys::new(&unique_prefix("mixed"), "s");
    let store = redis_store().await;
    let mut con = raw_connection().await;
    let players: Vec<_> = (0..6).map(|i| keys.player(&format!("m{i}"))).collect();
    let states = [
        PlayerState::new(3, "gold", 1),
        PlayerState::new(4, "silver", 2),
        PlayerState::new(3, "gold", 3),
        PlayerState::new(4, "bad|tier", 4),
        PlayerState::new(5, "bronze", 5),
        PlayerState::new(4, "silver", 6),
    ];
    // Lifetimes in seconds: one per period but the last write of period 4, whose
    // differs (a batch whose clock read differed).
    let ttls: [u64; 6] = [3_600, 7_200, 3_600, 7_200, 10_800, 14_400];
    let writes: Vec<StateWrite<'_>> = players
        .iter()
        .zip(&states)
        .zip(ttls)
        .map(|((k, s), ttl)| StateWrite::new(k, s, ttl, s.period - 1).found(false, false))
        .collect();
    let results = store.record_states(&writes).await;
    assert!(
        matches!(results[3], Err(StoreError::Protocol(_))),
        "{:?}",
        results[3]
    );
    for i in [0, 1, 2, 4, 5] {
        results[i].as_ref().expect("recorded");
        let read = store.player_state(&players[i]).await.expect("read");
        assert_eq!(read.as_ref(), Some(&states[i]), "m{i}");
        let record: String = redis::cmd("HGET")
            .arg(players[i].state())
            .arg(&players[i].player)
            .query_async(&mut con)
            .await
            .expect("hget");
        let deadline: i64 = record
            .split('|')
            .next()
            .and_then(|d| d.parse().ok())
            .expect("a deadline");
        let left = deadline - chrono::Utc::now().timestamp();
        let ttl = i64::try_from(ttls[i]).expect("small");
        assert!(
            (ttl - 5..=ttl + 1).contains(&left),
            "m{i}: lives {left} s, wrote {} s",
            ttls[i]
        );
    }
    assert_eq!(
        store.player_state(&players[3]).await.expect("read"),
        None,
        "a refused write wrote"
    );
}

/// A state write carries what the caller's snapshot found (`StateWrite::found`): a
/// player with no state is created without a read of their bucket, and a player
/// without a profile leaves the profile bucket alone. A wrong hint costs a read, never
/// a wrong record: a state found after all moves to `previous` as usual, a profile set
/// since keeps its own deadline, and a record leaguekit did not write is still
/// refused with nothing written.
#[tokio::test]
async fn state_writes_use_what_the_snapshot_found_and_survive_wrong_hints() {
    use leaguekit::store::{PlayerState, StateWrite};
    let keys = Keys::new(&unique_prefix("hints"), "s");
    let store = redis_store().await;
    let mut con = raw_connection().await;
    let write = |player: &str, period: u64, found: (bool, bool)| {
        let keys = keys.player(player);
        let state = PlayerState::new(period, "gold", 2);
        let store = store.clone();
        async move {
            let w = StateWrite::new(&keys, &state, 3600, 0).found(found.0, found.1);
            store.record_states(&[w]).await.remove(0)
        }
    };
    // Right hints: a new player's state is created.
    write("new", 3, (false, false)).await.expect("state");
    let state = store.player_state(&keys.player("new")).await.expect("read");
    assert_eq!(state, Some(PlayerState::new(3, "gold", 2)));
    // A wrong "no state": the stored state of period 3 moves to previous.
    write("new", 4, (false, false)).await.expect("state");
    let state = store
        .player_state(&keys.player("new"))
        .await
        .expect("read")
        .expect("placed");
    assert_eq!((state.period, state.previous.map(|p| p.0)), (4, Some(3)));
    // A wrong "no profile": the profile stays with its own deadline (60 s here), while
    // a write without the hint moves it to the state's (3600 s).
    let player = keys.player("pro");
    store
        .set_profile(
            &player,
            &ProfileChange::merge(&[("a".into(), "b".into())]),
            &["a".into()],
            100,
            60,
        )
        .await
        .expect("profile");
    let deadline = |record: String| -> i64 {
        record
            .split('|')
            .next()
            .and_then(|d| d.parse().ok())
            .expect("deadline")
    };
    let profile_key = player.profile();
    let profile_deadline = |mut con: redis::aio::MultiplexedConnection| {
        let key = profile_key.clone();
        async move {
            let record: String = redis::cmd("HGET")
                .arg(key)
                .arg("pro")
                .query_async(&mut con)
                .await
                .expect("hget");
            deadline(record) - Utc::now().timestamp()
        }
    };
    write("pro", 3, (false, false)).await.expect("state");
    let left = profile_deadline(con.clone()).await;
    assert!(
        (50..=61).contains(&left),
        "profile deadline moved: {left} s"
    );
    assert_eq!(
        store.profile(&player).await.expect("profile"),
        (vec![("a".to_owned(), "b".to_owned())], 1)
    );
    write("pro", 3, (true, true)).await.expect("state");
    let left = profile_deadline(con.clone()).await;
    assert!(
        (3590..=3601).contains(&left),
        "profile deadline kept: {left} s"
    );
    // A wrong hint over a record leaguekit did not write: refused, nothing written.
    let bad = keys.player("bad");
    let _: () = redis::cmd("HSET")
        .arg(bad.state())
        .arg("bad")
        .arg("not a record")
        .query_async(&mut con)
        .await
        .expect("hset");
    let refused = write("bad", 3, (false, false)).await;
    assert!(
        matches!(refused, Err(StoreError::Protocol(_))),
        "{refused:?}"
    );
    let stored: String = redis::cmd("HGET")
        .arg(bad.state())
        .arg("bad")
        .query_async(&mut con)
        .await
        .expect("hget");
    assert_eq!(stored, "not a record");
}

/// A gathered or bulk join of new players without profiles looks each player up in
/// their buckets once (the snapshot: state, profile, ban) and their assign bucket once:
/// the state write creates the record without reading it again (HSETNX), and leaves
/// the profile bucket alone.
#[tokio::test]
async fn a_new_player_is_read_once_per_bucket() {
    const N: usize = 200;
    let server = RedisServer::start(&[]);
    let (league, _) = private_league(&server, RedisOptions::default()).await;
    let items = |from: usize| -> Vec<leaguekit::JoinItem> {
        (from..from + N)
            .map(|i| leaguekit::JoinItem::new(format!("n{i:04}")))
            .collect()
    };
    for placed in league.join_many(&items(0)).await {
        placed.expect("warm-up");
    }
    let before = calls(server.port);
    for placed in league.join_many(&items(N)).await {
        placed.expect("join_many");
    }
    let used = calls_since(server.port, &before);
    let n = N as u64;
    // Snapshot: state, profile and ban record; join.lua: the assignment (the period's
    // ban markers are read with its closing mark, one HMGET per call).
    assert_eq!(used.get("hget").copied(), Some(4 * n), "{used:?}");
    assert_eq!(used.get("hsetnx").copied(), Some(n), "{used:?}");
    // HSET: the assignment only.
    assert_eq!(used.get("hset").copied(), Some(n), "{used:?}");
}

/// A store on the test server speaking RESP3 (`?protocol=resp3`).
async fn resp3_store() -> RedisStore {
    let url = redis_url();
    let resp3_url = if url.contains('?') {
        format!("{url}&protocol=resp3")
    } else {
        format!("{url}?protocol=resp3")
    };
    RedisStore::connect(&resp3_url, RedisOptions::default())
        .await
        .expect("connect with RESP3")
}

/// With RESP3 (`?protocol=resp3`) Redis sends maps, doubles and booleans where RESP2
/// sends arrays, strings and nils; every reply still parses to the same answers.
#[tokio::test]
async fn resp3_connections_answer_the_same() {
    let resp3 = resp3_store().await;
    let resp2 = redis_store().await;
    let mut results = Vec::new();
    for store in [resp2, resp3] {
        let s = season(&unique_prefix("resp"), "best", "1s", 100, Some(1_000_000));
        let keys = Keys::of(&s);
        let league = pinned(s.clone(), store.clone());
        for (i, p) in ["x", "y", "z"].iter().enumerate() {
            league
                .set_profile(p, &[("name".into(), format!("N{i}"))])
                .await
                .expect("profile");
            league
                .submit(p, 100 - i as i64, opts_at(at_tick(&s, i as u64)))
                .await
                .expect("submit");
        }
        league.join("idle", Some(start())).await.expect("join");
        let bracket = keys.bracket(1, "bronze", 1);
        let page = store.standings(&bracket, 0, 10).await.expect("standings");
        let around = store.around(&bracket, "y", 1, 1).await.expect("around");
        let entry = store.entry(&bracket, "z").await.expect("entry");
        let missing = store.entry(&bracket, "nobody").await.expect("entry");
        let joined = store.joined(&keys.period(1)).await.expect("joined");
        let profile = store.profile(&keys.player("x")).await.expect("profile");
        let state = store.player_state(&keys.player("x")).await.expect("state");
        let no_state = store
            .player_state(&keys.player("nobody"))
            .await
            .expect("state");
        let placement = store
            .placement(&keys.period(1), "y")
            .await
            .expect("placement");
        results.push(format!(
            "{page:?} {around:?} {entry:?} {missing:?} {joined:?} {profile:?} {state:?} \
             {no_state:?} {placement:?}"
        ));
    }
    assert_eq!(results[0], results[1]);
}

/// Data leaguekit did not write is reported as a protocol error, never trusted or
/// unwrapped.
#[tokio::test]
async fn foreign_data_is_a_protocol_error() {
    let s = season(
        &unique_prefix("foreign"),
        "increment",
        "1s",
        100,
        Some(1_000),
    );
    let keys = Keys::of(&s);
    let store = redis_store().await;
    let league = pinned(s.clone(), store.clone());
    league
        .submit("ok", 1, opts_at(start()))
        .await
        .expect("submit");
    let bracket = keys.bracket(1, "bronze", 1);
    let client = redis::Client::open(redis_url()).expect("client");
    let mut con = client
        .get_multiplexed_async_connection()
        .await
        .expect("connect");
    // A positive score is minus a negative packed value; 0.5 is not an integer.
    let _: redis::Value = redis::cmd("ZADD")
        .arg(&bracket.board)
        .arg("5")
        .arg("neg")
        .arg("-0.5")
        .arg("half")
        .query_async(&mut con)
        .await
        .expect("zadd");
    let protocol = |r: Result<_, StoreError>| matches!(r, Err(StoreError::Protocol(_)));
    assert!(protocol(store.standings(&bracket, 0, 10).await.map(|_| ())));
    assert!(protocol(store.entry(&bracket, "half").await.map(|_| ())));
    assert!(protocol(
        store.around(&bracket, "neg", 0, 0).await.map(|_| ())
    ));
    let refused = league.submit("half", 1, opts_at(start())).await;
    assert!(
        matches!(refused, Err(Error::Store(StoreError::Protocol(_)))),
        "{refused:?}"
    );
    let _: redis::Value = redis::cmd("HSET")
        .arg(keys.period(1).assign("odd"))
        .arg("odd")
        .arg("no-bracket")
        .query_async(&mut con)
        .await
        .expect("hset");
    assert!(protocol(
        store.placement(&keys.period(1), "odd").await.map(|_| ())
    ));
    let joined = store
        .join(
            &keys.period(1),
            &JoinRequest::new("odd", "bronze", 100, TimeCheck::unbounded()),
        )
        .await;
    assert!(protocol(joined.map(|_| ())));
}

/// A period marked closing refuses joins; a closed bracket refuses updates.
#[tokio::test]
async fn closing_and_closed_markers_are_honoured() {
    let s = season(
        &unique_prefix("closed"),
        "increment",
        "1s",
        100,
        Some(1_000),
    );
    let keys = Keys::of(&s);
    let store = redis_store().await;
    let league = pinned(s.clone(), store.clone());
    league
        .submit("a", 1, opts_at(start()))
        .await
        .expect("submit");
    let client = redis::Client::open(redis_url()).expect("client");
    let mut con = client
        .get_multiplexed_async_connection()
        .await
        .expect("connect");
    let _: redis::Value = redis::cmd("HSET")
        .arg(&keys.bracket(1, "bronze", 1).meta)
        .arg("closed")
        .arg("1")
        .query_async(&mut con)
        .await
        .expect("hset");
    let refused = league.submit("a", 1, opts_at(start())).await;
    assert!(
        matches!(refused, Err(Error::Input(InputError::PeriodClosed { .. }))),
        "{refused:?}"
    );
    let _: redis::Value = redis::cmd("HSET")
        .arg(&keys.period(1).meta)
        .arg("closing")
        .arg("1")
        .query_async(&mut con)
        .await
        .expect("hset");
    let joined = store
        .join(
            &keys.period(1),
            &JoinRequest::new("late", "bronze", 100, TimeCheck::unbounded()),
        )
        .await;
    assert!(
        matches!(&joined, Err(StoreError::PeriodClosed)),
        "{joined:?}"
    );
}

// ---- rollover (issue 3): the Redis-only properties. The behaviour both stores share
// is in tests/store/conformance.rs and tests/rollover/rollover.rs.

/// A raw connection to the shared test server, for inspecting keys.
async fn raw_connection() -> redis::aio::MultiplexedConnection {
    redis::Client::open(redis_url())
        .expect("client")
        .get_multiplexed_async_connection()
        .await
        .expect("connect")
}

async fn hget(
    con: &mut redis::aio::MultiplexedConnection,
    key: &str,
    field: &str,
) -> Option<String> {
    redis::cmd("HGET")
        .arg(key)
        .arg(field)
        .query_async(con)
        .await
        .expect("hget")
}

/// The integer answer of `command key` (PTTL, PEXPIRETIME).
async fn key_int(con: &mut redis::aio::MultiplexedConnection, command: &str, key: &str) -> i64 {
    redis::cmd(command)
        .arg(key)
        .query_async(con)
        .await
        .unwrap_or_else(|e| panic!("{command} {key}: {e}"))
}

async fn pttl(con: &mut redis::aio::MultiplexedConnection, key: &str) -> i64 {
    key_int(con, "PTTL", key).await
}

async fn pexpire(con: &mut redis::aio::MultiplexedConnection, key: &str, ms: u64) {
    let set: bool = redis::cmd("PEXPIRE")
        .arg(key)
        .arg(ms)
        .query_async(con)
        .await
        .expect("PEXPIRE");
    assert!(set, "PEXPIRE {key}: no such key");
}

async fn pexpiretime(con: &mut redis::aio::MultiplexedConnection, key: &str) -> i64 {
    key_int(con, "PEXPIRETIME", key).await
}

/// PTTL of each key a closed bracket keeps for the retention: board, profiles, meta
/// and outcomes.
async fn closed_ttls(
    con: &mut redis::aio::MultiplexedConnection,
    bracket: &leaguekit::store::keys::BracketKeys,
) -> Vec<(String, i64)> {
    let mut ttls = Vec::new();
    for key in [
        &bracket.board,
        &bracket.profiles,
        &bracket.meta,
        &bracket.outcomes,
    ] {
        ttls.push((key.clone(), pttl(con, key).await));
    }
    ttls
}

/// Sources and grants are opaque strings: quotes, backslashes, slashes (which cjson
/// escapes), JSON look-alikes, the `p|`/`c|` markers themselves, control bytes, NUL,
/// non-ASCII and the empty string all come back byte for byte, from `rewards`, from a
/// claim, and from the stored answer of a repeated claim id, over RESP2 and RESP3.
#[tokio::test]
async fn odd_grants_round_trip_through_rewards_and_claims() {
    let odd = [
        "quote\"d",
        "back\\slash",
        "a/b/c",
        "[\"x\",\"y\"]",
        "{}",
        "p|c|nested",
        "c|",
        "line\nbreak\ttab\r",
        "nul\0byte",
        "\u{7f}\u{1}",
        "ünïcødé 🎁",
        "",
        "1e400",
        "null",
    ];
    let big = "g".repeat(20_000);
    let resp3 = resp3_store().await;
    for store in [redis_store().await, resp3] {
        let keys = Keys::new(&unique_prefix("odd"), "s");
        let player = keys.player("p");
        let mut want: Vec<(String, String)> = odd
            .iter()
            .enumerate()
            .map(|(i, g)| (format!("{i:02}/{g}"), (*g).to_owned()))
            .collect();
        want.push(("99/big".to_owned(), big.clone()));
        let grants: Vec<_> = want
            .iter()
            .map(|(s, g)| (player.clone(), s.clone(), g.clone()))
            .collect();
        store.grant(&grants, 3600).await.expect("grant");
        // Granting again changes nothing (HSETNX), even with other grants.
        let again: Vec<_> = want
            .iter()
            .map(|(s, _)| (player.clone(), s.clone(), "other".to_owned()))
            .collect();
        store.grant(&again, 3600).await.expect("grant again");
        want.sort();
        assert_eq!(store.rewards(&player).await.expect("rewards"), want);
        let first = store
            .claim_rewards(&player, &Claim::new(Some("claim-1")))
            .await
            .expect("claim");
        assert_eq!(first, want);
        // The repeated id answers from the stored (cjson-encoded) answer.
        let repeat = store
            .claim_rewards(&player, &Claim::new(Some("claim-1")))
            .await
            .expect("repeat");
        assert_eq!(repeat, want);
        assert!(store.rewards(&player).await.expect("rewards").is_empty());
        // A claimed source is never granted again.
        store.grant(&grants, 3600).await.expect("grant claimed");
        assert!(store.rewards(&player).await.expect("rewards").is_empty());
        // An empty claim id is an id like any other (as in MemoryStore).
        let late = vec![(player.clone(), "late".to_owned(), "x".to_owned())];
        store.grant(&late, 3600).await.expect("grant late");
        let empty_id = store
            .claim_rewards(&player, &Claim::new(Some("")))
            .await
            .expect("claim");
        assert_eq!(empty_id, vec![("late".to_owned(), "x".to_owned())]);
        let empty_again = store
            .claim_rewards(&player, &Claim::new(Some("")))
            .await
            .expect("again");
        assert_eq!(empty_again, empty_id);
        // An id that claimed nothing remembers nothing, and stays nothing.
        assert!(
            store
                .claim_rewards(&player, &Claim::new(Some("none")))
                .await
                .expect("c")
                .is_empty()
        );
        store
            .grant(
                &[(player.clone(), "later".to_owned(), "y".to_owned())],
                3600,
            )
            .await
            .expect("grant");
        assert!(
            store
                .claim_rewards(&player, &Claim::new(Some("none")))
                .await
                .expect("c")
                .is_empty()
        );
        assert_eq!(
            store
                .claim_rewards(&player, &Claim::new(None))
                .await
                .expect("claim"),
            vec![("later".to_owned(), "y".to_owned())]
        );
        assert!(
            store
                .claim_rewards(&player, &Claim::new(None))
                .await
                .expect("c")
                .is_empty()
        );
        // Nothing at all to grant costs nothing and does nothing.
        store.grant(&[], 3600).await.expect("empty grant");
    }
}

/// A closed bracket's outcomes are opaque text to the store: whatever a player id or
/// an encoded outcome holds (the separators and escape byte the Redis store keeps them
/// with, an outcome that reads like another player's entry, the empty string,
/// non-ASCII) comes back exactly, one player's alone and all together, on both
/// stores (and the cluster); a player with no entry has none.
#[tokio::test]
async fn odd_outcomes_round_trip_on_both_stores() {
    async fn check<S: leaguekit::store::Store>(store: S, what: &str) {
        let keys = Keys::new(&unique_prefix("oddout"), "s");
        let bracket = keys.bracket(1, "bronze", 1);
        let outcomes: Vec<(String, String)> = vec![
            ("a".into(), "1|50|0|promoted|silver|+gems:100".into()),
            ("b".into(), "\u{1e}a\u{1f}forged".into()),
            ("sep\u{1e}\u{1f}\u{1b}".into(), "esc\u{1b}0\u{1b}".into()),
            ("empty".into(), "".into()),
            ("".into(), "empty id".into()),
            ("ünï 🎁".into(), "2|0|1|stay|bronze|+\u{1b}1".into()),
        ];
        store
            .record_outcomes(&bracket, &pairs(&outcomes), 3600)
            .await
            .expect("record");
        for (player, outcome) in &outcomes {
            assert_eq!(
                store.outcome(&bracket, player).await.expect("outcome"),
                Some(outcome.clone()),
                "{what}: {player:?}"
            );
        }
        for absent in ["c", "forged", "a\u{1f}", "\u{1e}a"] {
            assert_eq!(
                store.outcome(&bracket, absent).await.expect("outcome"),
                None,
                "{what}: {absent:?}"
            );
        }
        let mut all = store.outcomes(&bracket).await.expect("outcomes");
        all.sort();
        let mut want = outcomes.clone();
        want.sort();
        assert_eq!(all, want, "{what}");
        let none = keys.bracket(1, "bronze", 2);
        assert!(
            store.outcomes(&none).await.expect("none").is_empty(),
            "{what}"
        );
        assert_eq!(
            store.outcome(&none, "a").await.expect("none"),
            None,
            "{what}"
        );
    }
    check(leaguekit::MemoryStore::new(), "memory").await;
    check(redis_store().await, "redis").await;
    check(common::cluster_store().await, "cluster").await;
}

/// The rollover's two steps of a bracket, on both stores (and the cluster): the claim
/// with the frozen board, then the outcomes with the done mark. Refused before its
/// time, a claim writes nothing (no lease, no freeze); the lease keeps other owners
/// out and its own owner may claim again; a frozen bracket takes no entry; the
/// outcomes and the tally are recorded once, and a finished bracket answers its
/// tally to every claim. On Redis the bracket's keys then carry the retention and
/// the lease is gone.
#[tokio::test]
async fn claim_and_freeze_then_finish_with_outcomes_on_both_stores() {
    use leaguekit::store::{FrozenClaim, Now};
    async fn check<S: leaguekit::store::Store>(store: &S, what: &str) -> Keys {
        let keys = Keys::new(&unique_prefix("twostep"), "s");
        let bracket = keys.bracket(1, "bronze", 1);
        for p in ["c", "a", "b"] {
            store
                .enter(&bracket, p, 10, None, 3600)
                .await
                .expect("enter");
        }
        let early = store
            .claim_and_freeze(
                &bracket,
                "x",
                15_000,
                CloseCheck::new(Now::At(1_000), 3_000),
            )
            .await;
        assert!(
            matches!(
                early,
                Err(StoreError::Time(leaguekit::error::TimeRefusal::NotYet {
                    wait_ms: 2_000
                }))
            ),
            "{what}: {early:?}"
        );
        // Not frozen, and no lease taken: another entry goes in, another owner claims.
        store
            .enter(&bracket, "d", 10, None, 3600)
            .await
            .expect("enter after a refused claim");
        let board: Vec<(String, u64)> = ["a", "b", "c", "d"]
            .iter()
            .map(|p| ((*p).to_owned(), 0))
            .collect();
        let claim = |owner: &'static str| {
            store.claim_and_freeze(&bracket, owner, 15_000, CloseCheck::unbounded())
        };
        assert_eq!(
            claim("o").await.expect("claim"),
            FrozenClaim::Mine(board.clone()),
            "{what}"
        );
        assert_eq!(
            claim("p").await.expect("claim"),
            FrozenClaim::Busy,
            "{what}"
        );
        assert_eq!(
            claim("o").await.expect("claim again"),
            FrozenClaim::Mine(board.clone()),
            "{what}"
        );
        let late = store.enter(&bracket, "e", 10, None, 3600).await;
        assert!(
            matches!(late, Err(StoreError::PeriodClosed)),
            "{what}: {late:?}"
        );
        let outcomes: Vec<(String, String)> = board
            .iter()
            .map(|(p, _)| (p.clone(), format!("{p}|stay")))
            .collect();
        store
            .finish_with_outcomes(&bracket, &pairs(&outcomes), 3600, "tally", None)
            .await
            .expect("finish");
        assert_eq!(
            claim("p").await.expect("claim"),
            FrozenClaim::Done("tally".into()),
            "{what}"
        );
        // Once: a second finish (another process, a retry) changes nothing.
        store
            .finish_with_outcomes(&bracket, &[("a", "changed")], 3600, "other", None)
            .await
            .expect("finish again");
        let mut all = store.outcomes(&bracket).await.expect("outcomes");
        all.sort();
        assert_eq!(all, outcomes, "{what}");
        assert_eq!(
            claim("o").await.expect("claim"),
            FrozenClaim::Done("tally".into()),
            "{what}"
        );
        keys
    }
    check(&leaguekit::MemoryStore::new(), "memory").await;
    check(&common::cluster_store().await, "cluster").await;
    let keys = check(&redis_store().await, "redis").await;
    let bracket = keys.bracket(1, "bronze", 1);
    let mut con = raw_connection().await;
    for (key, ttl) in closed_ttls(&mut con, &bracket).await {
        // The profiles key was never written (no profiles entered): nothing to expire.
        if key == bracket.profiles {
            assert_eq!(ttl, -2, "{key}");
        } else {
            assert!(3_500_000 < ttl && ttl <= 3_600_000, "{key}: {ttl} ms");
        }
    }
    assert_eq!(pttl(&mut con, &bracket.lease).await, -2, "lease released");
}

/// Recording the outcomes of a bracket of 10,000 players (the largest
/// `brackets.size` a season allows: 20,001 script arguments, far beyond what Lua's
/// `unpack` takes at once) records every outcome, once; and the closed keys carry the
/// retention TTL, except the lease, which keeps its own short one.
#[tokio::test]
async fn record_outcomes_of_ten_thousand_players_and_their_ttls() {
    let keys = Keys::new(&unique_prefix("big"), "s");
    let bracket = keys.bracket(1, "bronze", 1);
    let store = redis_store().await;
    let mut con = raw_connection().await;
    store
        .enter(
            &bracket,
            "p00000",
            10_000,
            Some((1, "{\"name\":\"zero\"}")),
            3600,
        )
        .await
        .expect("enter");
    assert_eq!(
        store
            .claim_bracket(&bracket, "me", 15_000, CloseCheck::unbounded())
            .await
            .expect("claim"),
        leaguekit::store::BracketClaim::Mine
    );
    let outcomes: Vec<(String, String)> = (0..10_000)
        .map(|i| (format!("p{i:05}"), format!("{i}|stay|bronze|")))
        .collect();
    let week = 7 * 86_400;
    store
        .record_outcomes(&bracket, &pairs(&outcomes), week)
        .await
        .expect("record");
    let mut got = store.outcomes(&bracket).await.expect("outcomes");
    got.sort();
    assert_eq!(got, outcomes);
    assert_eq!(
        store.outcome(&bracket, "p09999").await.expect("outcome"),
        Some("9999|stay|bronze|".to_owned())
    );
    // Recorded once: a second recording (another process, a retry) changes nothing.
    store
        .record_outcomes(&bracket, &[("p00001", "changed")], week)
        .await
        .expect("record again");
    assert_eq!(
        store.outcome(&bracket, "p00001").await.expect("outcome"),
        Some("1|stay|bronze|".to_owned())
    );
    for (key, ttl) in closed_ttls(&mut con, &bracket).await {
        assert!(
            (week as i64 - 60) * 1000 < ttl && ttl <= week as i64 * 1000,
            "{key}: {ttl} ms"
        );
    }
    // A holder killed here must not block the bracket for the whole retention.
    let lease = pttl(&mut con, &bracket.lease).await;
    assert!(0 < lease && lease <= 15_000, "lease {lease} ms");
    store
        .finish_bracket(&bracket, "tally")
        .await
        .expect("finish");
    assert_eq!(pttl(&mut con, &bracket.lease).await, -2, "lease released");
    assert!(pttl(&mut con, &bracket.meta).await > 0, "done kept the TTL");
    assert_eq!(
        store
            .claim_bracket(&bracket, "other", 15_000, CloseCheck::unbounded())
            .await
            .expect("claim"),
        leaguekit::store::BracketClaim::Done("tally".to_owned())
    );

    // The period's keys: the closed marker, the counters and the assignments.
    let period = keys.period(1);
    store
        .join(
            &period,
            &JoinRequest::new("p00000", "bronze", 100, TimeCheck::unbounded()),
        )
        .await
        .expect("join");
    store
        .begin_close(&period, CloseCheck::unbounded())
        .await
        .expect("begin close");
    store
        .finish_period(&period, "{}", week)
        .await
        .expect("finish period");
    for key in [&period.meta, &period.joins, &period.assign("p00000")] {
        let ttl = pttl(&mut con, key).await;
        assert!(
            (week as i64 - 60) * 1000 < ttl && ttl <= week as i64 * 1000,
            "{key}: {ttl} ms"
        );
    }
}

/// A claim with a claim id whose reply timed out is retried and answers the stored
/// grants; without a claim id it is not retried, because the first attempt may have
/// claimed everything (as here) and a retry would answer "nothing".
#[tokio::test]
async fn claims_are_retried_only_with_a_claim_id() {
    let server = RedisServer::start(&[]);
    let options = RedisOptions::default()
        .with_response_timeout(Duration::from_millis(400))
        .with_retry_delay(Duration::from_millis(50))
        .with_command_attempts(3);
    let store = RedisStore::connect(&server.url(), options)
        .await
        .expect("connect");
    let keys = Keys::new(&unique_prefix("claimretry"), "s");
    let (a, b) = (keys.player("a"), keys.player("b"));
    let grants = vec![
        (a.clone(), "1/gold/1".to_owned(), "gems:100".to_owned()),
        (b.clone(), "1/gold/1".to_owned(), "gems:50".to_owned()),
    ];
    store.grant(&grants, 3600).await.expect("grant");

    pause(&server, 600);
    let began = Instant::now();
    let claimed = store
        .claim_rewards(&a, &Claim::new(Some("c1")))
        .await
        .expect("retried claim");
    assert!(
        began.elapsed() >= Duration::from_millis(400),
        "no timeout happened: {:?}",
        began.elapsed()
    );
    assert_eq!(
        claimed,
        vec![("1/gold/1".to_owned(), "gems:100".to_owned())]
    );

    pause(&server, 600);
    let began = Instant::now();
    let err = store
        .claim_rewards(&b, &Claim::new(None))
        .await
        .expect_err("timed out");
    assert!(
        began.elapsed() < Duration::from_millis(550),
        "retried: {err}"
    );
    tokio::time::sleep(Duration::from_millis(400)).await;
    // The paused claim ran once: the reward is claimed, and was not granted twice.
    assert!(store.rewards(&b).await.expect("rewards").is_empty());
    assert!(
        store
            .claim_rewards(&b, &Claim::new(None))
            .await
            .expect("claim")
            .is_empty()
    );
}

/// Every rollover script declares keys of one slot: a whole rollover, the player
/// state with its previous placement, rewards and claims all run on a cluster node.
#[tokio::test]
async fn rollover_runs_on_a_cluster_node() {
    let node = cluster_node();
    let store = RedisStore::connect(&node.url(), RedisOptions::default())
        .await
        .expect("connect to the cluster node");
    let s = season(
        &unique_prefix("clusterroll"),
        "increment",
        "1s",
        2,
        Some(1_000_000),
    );
    let keys = Keys::of(&s);
    let clock = ManualClock::new(at_tick(&s, 20));
    let league = League::with_clock(s.clone(), store.clone(), std::sync::Arc::new(clock.clone()));
    for (i, player) in ["a{1}", "b:2", "c 3", "d}4", "e"].iter().enumerate() {
        league
            .submit(player, 10 + i as i64, opts_at(at_tick(&s, 10)))
            .await
            .expect("submit");
    }
    // Periods 1 and 2 may be closed two days (and max_skew) after the start.
    clock.set(start() + chrono::Duration::days(2) + chrono::Duration::seconds(5));
    let report = league
        .rollover(None, leaguekit::RolloverOptions::default())
        .await
        .expect("rollover");
    // Period 1 had players and is reported; nobody played period 2, which is
    // closed by moving the mark and counted as empty.
    assert_eq!(report.closed.len(), 1, "{report:?}");
    assert_eq!((report.empty, report.closed_through), (1, 2), "{report:?}");
    assert_eq!(store.closed_through(&keys.season()).await.expect("mark"), 2);
    store
        .set_closed_through(&keys.season(), 1)
        .await
        .expect("never lowered");
    assert_eq!(store.closed_through(&keys.season()).await.expect("mark"), 2);
    assert!(
        store
            .period_summary(&keys.period(1))
            .await
            .expect("summary")
            .is_some()
    );
    let mut outcomes = 0;
    for b in 1..=3 {
        outcomes += store
            .outcomes(&keys.bracket(1, "bronze", b))
            .await
            .expect("outcomes")
            .len();
    }
    assert_eq!(outcomes, 5);
    // Joining a frozen bracket is refused.
    let frozen = store
        .enter(&keys.bracket(1, "bronze", 1), "late", 100, None, 3600)
        .await;
    assert!(
        matches!(frozen, Err(StoreError::PeriodClosed)),
        "{frozen:?}"
    );
    // Player keys: state with its previous placement, rewards and claims.
    let player = keys.player("a{1}");
    store
        .record_state(
            &player,
            &leaguekit::store::PlayerState::new(7, "gold", 3),
            3600,
            0,
        )
        .await
        .expect("record state");
    let state = store
        .player_state(&player)
        .await
        .expect("state")
        .expect("stored");
    assert_eq!(
        (state.period, state.tier.as_str(), state.bracket),
        (7, "gold", 3)
    );
    assert!(state.previous.is_some(), "{state:?}");
    store
        .grant(&[(player.clone(), "x/y".into(), "g".into())], 3600)
        .await
        .expect("grant");
    store.rewards(&player).await.expect("rewards");
    store
        .claim_rewards(&player, &Claim::new(Some("id")))
        .await
        .expect("claim with id");
    store
        .claim_rewards(&player, &Claim::new(Some("id")))
        .await
        .expect("repeated claim");
    store
        .claim_rewards(&player, &Claim::new(None))
        .await
        .expect("claim");
}

/// The rollover replies parse to the same answers over RESP3 (where a Lua `false`
/// arrives as a boolean) as over RESP2.
#[tokio::test]
async fn rollover_replies_are_the_same_over_resp3() {
    let resp3 = resp3_store().await;
    let mut results = Vec::new();
    for store in [redis_store().await, resp3] {
        let keys = Keys::new(&unique_prefix("resp3roll"), "s");
        let period = keys.period(1);
        let bracket = keys.bracket(1, "bronze", 1);
        let mut log = Vec::new();
        log.push(format!("{:?}", store.closed_through(&keys.season()).await));
        for p in ["x", "y"] {
            store
                .join(
                    &period,
                    &JoinRequest::new(p, "bronze", 10, TimeCheck::unbounded()),
                )
                .await
                .expect("join");
            store
                .enter(&bracket, p, 10, None, 3600)
                .await
                .expect("enter");
        }
        log.push(format!("{:?}", store.period_summary(&period).await));
        log.push(format!(
            "{:?}",
            store.begin_close(&period, CloseCheck::unbounded()).await
        ));
        log.push(format!(
            "{:?}",
            store
                .claim_bracket(&bracket, "o", 1000, CloseCheck::unbounded())
                .await
        ));
        log.push(format!(
            "{:?}",
            store
                .claim_bracket(&bracket, "p", 1000, CloseCheck::unbounded())
                .await
        ));
        log.push(format!(
            "{:?}",
            store.freeze(&bracket, CloseCheck::unbounded()).await
        ));
        let outcomes = vec![
            ("x".to_owned(), "o1".to_owned()),
            ("y".to_owned(), "o2".to_owned()),
        ];
        store
            .record_outcomes(&bracket, &pairs(&outcomes), 3600)
            .await
            .expect("record");
        let mut all = store.outcomes(&bracket).await.expect("outcomes");
        all.sort();
        log.push(format!("{all:?}"));
        log.push(format!("{:?}", store.outcome(&bracket, "x").await));
        log.push(format!("{:?}", store.outcome(&bracket, "nobody").await));
        store.finish_bracket(&bracket, "t").await.expect("finish");
        log.push(format!(
            "{:?}",
            store
                .claim_bracket(&bracket, "o", 1000, CloseCheck::unbounded())
                .await
        ));
        store
            .finish_period(&period, "sum", 3600)
            .await
            .expect("finish");
        log.push(format!(
            "{:?}",
            store.begin_close(&period, CloseCheck::unbounded()).await
        ));
        store
            .set_closed_through(&keys.season(), 1)
            .await
            .expect("mark");
        log.push(format!("{:?}", store.closed_through(&keys.season()).await));
        let player = keys.player("x");
        for (period, tier) in [(1, "bronze"), (2, "gold"), (1, "silver")] {
            store
                .record_state(
                    &player,
                    &leaguekit::store::PlayerState::new(period, tier, 1),
                    3600,
                    0,
                )
                .await
                .expect("state");
        }
        log.push(format!("{:?}", store.player_state(&player).await));
        store
            .grant(&[(player.clone(), "1/bronze/1".into(), "g".into())], 3600)
            .await
            .expect("grant");
        log.push(format!("{:?}", store.rewards(&player).await));
        log.push(format!(
            "{:?}",
            store.claim_rewards(&player, &Claim::new(Some("c"))).await
        ));
        log.push(format!(
            "{:?}",
            store.claim_rewards(&player, &Claim::new(Some("c"))).await
        ));
        results.push(log);
    }
    assert_eq!(results[0], results[1]);
}

/// A player state or a stored claim leaguekit did not write is a protocol error.
#[tokio::test]
async fn foreign_rollover_data_is_a_protocol_error() {
    let keys = Keys::new(&unique_prefix("foreignroll"), "s");
    let store = redis_store().await;
    let mut con = raw_connection().await;
    let player = keys.player("p");
    // State records of the player's bucket: no deadline; no tier.
    for bad in ["3", "99999999999|3:1", "99999999999|3:gold:1|x"] {
        let _: redis::Value = redis::cmd("HSET")
            .arg(player.state())
            .arg("p")
            .arg(bad)
            .query_async(&mut con)
            .await
            .expect("hset");
        let state = store
            .record_state(
                &player,
                &leaguekit::store::PlayerState::new(4, "gold", 1),
                3600,
                0,
            )
            .await;
        assert!(
            matches!(state, Err(StoreError::Protocol(_))),
            "{bad}: {state:?}"
        );
        let read = store.player_state(&player).await;
        assert!(
            matches!(read, Err(StoreError::Protocol(_))),
            "{bad}: {read:?}"
        );
        // Read among others (one flat reply for all): only this player's answer is
        // the error.
        let (before, after) = (keys.player("q"), keys.player("r"));
        let read = store.player_snapshots(&[&before, &player, &after]).await;
        assert!(
            matches!(
                read.as_slice(),
                [Ok(_), Err(StoreError::Protocol(_)), Ok(_)]
            ),
            "{bad}: {read:?}"
        );
        let stored: String = redis::cmd("HGET")
            .arg(player.state())
            .arg("p")
            .query_async(&mut con)
            .await
            .expect("hget");
        assert_eq!(stored, bad, "a refused record_state wrote");
    }
    // Profile records: no version; not JSON; not a map of strings.
    for bad in [
        "99999999999|{}",
        "99999999999|1|not json",
        "99999999999|1|{\"a\":1}",
    ] {
        let _: redis::Value = redis::cmd("HSET")
            .arg(player.profile())
            .arg("p")
            .arg(bad)
            .query_async(&mut con)
            .await
            .expect("hset");
        let set = store
            .set_profile(
                &player,
                &ProfileChange::merge(&[("a".into(), "b".into())]),
                &["a".into()],
                100,
                60,
            )
            .await;
        assert!(
            matches!(set, Err(StoreError::Protocol(_))),
            "{bad}: {set:?}"
        );
        let read = store.profile(&player).await;
        assert!(
            matches!(read, Err(StoreError::Protocol(_))),
            "{bad}: {read:?}"
        );
    }
    let _: redis::Value = redis::cmd("HSET")
        .arg(player.claims())
        .arg("bad")
        .arg("not json")
        .query_async(&mut con)
        .await
        .expect("hset");
    let claim = store.claim_rewards(&player, &Claim::new(Some("bad"))).await;
    assert!(matches!(claim, Err(StoreError::Protocol(_))), "{claim:?}");
}

/// All keys under `prefix`.
async fn keys_under(con: &mut redis::aio::MultiplexedConnection, prefix: &str) -> Vec<String> {
    let mut keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{prefix}:*"))
        .query_async(con)
        .await
        .expect("keys");
    keys.sort();
    keys
}

/// Data of 0.2.0's key layout (a season record without a layout, or a period's single
/// assignment hash) is refused with a typed error that says what to do, and nothing is
/// written; a new season records the layout it writes.
#[tokio::test]
async fn data_of_the_old_layout_is_refused_and_nothing_written() {
    let mut con = raw_connection().await;
    let at = opts_at(start() + chrono::Duration::hours(1));
    // A season a 0.2 rollover recorded: closed_through and shape, no layout.
    let prefix = unique_prefix("oldmeta");
    let league = pinned(
        season(&prefix, "increment", "1s", 100, None),
        redis_store().await,
    );
    let meta = league.keys().season().meta;
    let _: redis::Value = redis::cmd("HSET")
        .arg(&meta)
        .arg("closed_through")
        .arg("1")
        .query_async(&mut con)
        .await
        .expect("hset");
    let before = keys_under(&mut con, &prefix).await;
    for refused in [
        league.submit("a", 1, at.clone()).await.map(|_| ()),
        league.join("a", None).await.map(|_| ()),
        league
            .set_profile("a", &[("name".into(), "A".into())])
            .await
            .map(|_| ()),
        league.claim("a", Some("c")).await.map(|_| ()),
        league
            .rollover(None, leaguekit::RolloverOptions::default())
            .await
            .map(|_| ()),
    ] {
        let e = refused.expect_err("old layout refused");
        assert!(
            matches!(e, Error::Store(StoreError::OldLayout { .. })),
            "{e:?}"
        );
        let text = e.to_string();
        assert!(
            text.contains("finish the season on leaguekit 0.2") && text.contains("key_prefix"),
            "{text}"
        );
    }
    assert_eq!(
        keys_under(&mut con, &prefix).await,
        before,
        "nothing written"
    );
    let fields: HashMap<String, String> = redis::cmd("HGETALL")
        .arg(&meta)
        .query_async(&mut con)
        .await
        .expect("hgetall");
    assert_eq!(fields.len(), 1, "{fields:?}");

    // Players placed by 0.2 in the running period: its single assignment hash.
    let prefix = unique_prefix("oldassign");
    let league = pinned(
        season(&prefix, "increment", "1s", 100, None),
        redis_store().await,
    );
    let _: redis::Value = redis::cmd("HSET")
        .arg(league.keys().period(1).legacy_assign())
        .arg("a")
        .arg("bronze:1")
        .query_async(&mut con)
        .await
        .expect("hset");
    let before = keys_under(&mut con, &prefix).await;
    let e = league
        .submit("b", 1, at.clone())
        .await
        .expect_err("refused");
    assert!(
        matches!(e, Error::Store(StoreError::OldLayout { .. })),
        "{e:?}"
    );
    assert_eq!(
        keys_under(&mut con, &prefix).await,
        before,
        "nothing written"
    );

    // A new season records its layout, and a league of another process reads it.
    let prefix = unique_prefix("newlayout");
    let league = pinned(
        season(&prefix, "increment", "1s", 100, None),
        redis_store().await,
    );
    league.submit("a", 1, at.clone()).await.expect("submit");
    let layout: String = redis::cmd("HGET")
        .arg(league.keys().season().meta)
        .arg("season:layout")
        .query_async(&mut con)
        .await
        .expect("layout");
    assert_eq!(layout, leaguekit::store::keys::LAYOUT);
    let again = pinned(
        season(&prefix, "increment", "1s", 100, None),
        redis_store().await,
    );
    again.submit("b", 2, at).await.expect("second process");
}

/// A player's records carry their deadline (unix seconds by the server's clock): a
/// record past it reads as absent (the player starts anew, as after a key's expiry),
/// and the next write to the bucket deletes it.
#[tokio::test]
async fn records_past_their_deadline_are_absent_and_pruned() {
    let keys = Keys::new(&unique_prefix("deadline"), "s");
    let store = redis_store().await;
    let mut con = raw_connection().await;
    let player = keys.player("old");
    store
        .record_state(
            &player,
            &leaguekit::store::PlayerState::new(3, "gold", 2),
            3600,
            0,
        )
        .await
        .expect("state");
    store
        .set_profile(
            &player,
            &ProfileChange::merge(&[("a".into(), "b".into())]),
            &["a".into()],
            100,
            60,
        )
        .await
        .expect("profile");
    // The deadline is now + ttl by the server's clock; the bucket key lives as long.
    let record: String = redis::cmd("HGET")
        .arg(player.state())
        .arg("old")
        .query_async(&mut con)
        .await
        .expect("hget");
    let (deadline, rest) = record.split_once('|').expect("deadline|placement");
    assert_eq!(rest, "3:gold:2");
    let now = Utc::now().timestamp();
    let deadline: i64 = deadline.parse().expect("deadline");
    assert!((now + 3590..=now + 3610).contains(&deadline), "{deadline}");
    assert!(pttl(&mut con, &player.state()).await > 3_590_000);
    // Past their deadline (set back by hand): absent.
    for (key, body) in [
        (player.state(), "3:gold:2"),
        (player.profile(), "1|{\"a\":\"b\"}"),
    ] {
        let _: redis::Value = redis::cmd("HSET")
            .arg(key)
            .arg("old")
            .arg(format!("{}|{body}", now - 1))
            .query_async(&mut con)
            .await
            .expect("hset");
    }
    assert_eq!(store.player_state(&player).await.expect("state"), None);
    assert_eq!(store.profile(&player).await.expect("profile"), (vec![], 0));
    // A new placement starts anew (no previous), and the stale profile goes with it.
    store
        .record_state(
            &player,
            &leaguekit::store::PlayerState::new(5, "bronze", 1),
            3600,
            0,
        )
        .await
        .expect("state");
    let state = store
        .player_state(&player)
        .await
        .expect("state")
        .expect("placed");
    assert_eq!((state.period, state.previous), (5, None));
    let profile: Option<String> = redis::cmd("HGET")
        .arg(player.profile())
        .arg("old")
        .query_async(&mut con)
        .await
        .expect("hget");
    assert_eq!(profile, None);
    // Other players' writes to the bucket prune a stale record: one write in 16 samples
    // the bucket (a bucket this small is sampled whole), so within 400 writes it goes
    // (a chance of (15/16)^400, below 1e-11, that it stays), and the live records stay.
    let mate = (0..)
        .map(|i| format!("m{i}"))
        .find(|m| keys.player(m).bucket == player.bucket)
        .expect("a mate");
    let _: redis::Value = redis::cmd("HSET")
        .arg(player.state())
        .arg("old")
        .arg(format!("{}|5:bronze:1", now - 1))
        .query_async(&mut con)
        .await
        .expect("hset");
    let mut writes = 0;
    let stale = loop {
        store
            .record_state(
                &keys.player(&mate),
                &leaguekit::store::PlayerState::new(5 + writes, "bronze", 1),
                3600,
                0,
            )
            .await
            .expect("state");
        writes += 1;
        let stale: Option<String> = redis::cmd("HGET")
            .arg(player.state())
            .arg("old")
            .query_async(&mut con)
            .await
            .expect("hget");
        if stale.is_none() || writes == 400 {
            break stale;
        }
    };
    assert_eq!(stale, None, "pruned within {writes} writes");
    let mate_state = store
        .player_state(&keys.player(&mate))
        .await
        .expect("state")
        .expect("the writer's own record stays");
    assert_eq!(mate_state.period, 4 + writes);
}

/// Kept standings pages (the page cache): the page hash expires within
/// `RedisOptions::page_cache`; the meta hash that flags it takes the board's expiry, so
/// no key is left without one; a change to the board drops the pages and the flag;
/// and with the cache off nothing is kept. (That a kept page is never stale is in
/// tests/store/conformance.rs, on every store.)
#[tokio::test]
async fn kept_pages_expire_and_go_with_the_next_change() {
    let prefix = unique_prefix("pages");
    let s = season(&prefix, "increment", "1s", 100, Some(1_000_000));
    let league = pinned(s, redis_store().await);
    let at = start() + chrono::Duration::hours(1);
    for p in ["a", "b"] {
        league
            .submit(p, 5, SubmitOptions::default().at(at))
            .await
            .expect("submit");
    }
    let mut con = raw_connection().await;
    let read = || league.standings("bronze", 1, None, 0, 10);
    read().await.expect("page");
    let keys = keys_under(&mut con, &prefix).await;
    let find = |end: &str| {
        keys.iter()
            .find(|k| k.ends_with(end))
            .unwrap_or_else(|| panic!("no {end} key in {keys:?}"))
            .clone()
    };
    let (page, meta, board) = (find(":page"), find(":meta"), find(":board"));
    let page_ttl = pttl(&mut con, &page).await;
    assert!(
        0 < page_ttl && page_ttl <= 30_000,
        "page cache: {page_ttl} ms"
    );
    let (meta_ttl, board_ttl) = (pttl(&mut con, &meta).await, pttl(&mut con, &board).await);
    assert!(
        meta_ttl > 0 && (board_ttl - meta_ttl).abs() < 5_000,
        "meta {meta_ttl} ms, board {board_ttl} ms"
    );
    assert_eq!(hget(&mut con, &meta, "paged").await.as_deref(), Some("1"));

    league
        .submit("a", 1, SubmitOptions::default().at(at))
        .await
        .expect("submit");
    assert_eq!(
        pttl(&mut con, &page).await,
        -2,
        "the change dropped the pages"
    );
    assert_eq!(hget(&mut con, &meta, "paged").await, None, "and the flag");

    let off = RedisStore::connect(
        &redis_url(),
        RedisOptions::default().with_page_cache(Duration::ZERO),
    )
    .await
    .expect("connect");
    let league = pinned(
        season(&prefix, "increment", "1s", 100, Some(1_000_000)),
        off,
    );
    let page_of_off = league
        .standings("bronze", 1, None, 0, 10)
        .await
        .expect("page");
    assert_eq!(page_of_off.entries.len(), 2);
    assert_eq!(
        pttl(&mut con, &page).await,
        -2,
        "nothing kept with the cache off"
    );
}

/// A page reads the bracket's cached profiles without checking them; one that is not
/// a JSON object (data leaguekit did not write) still reads, is written out and
/// compares as `{}`, as it did when every profile was checked on reading.
#[tokio::test]
async fn a_cached_profile_that_is_not_json_reads_as_empty() {
    let s = season(
        &unique_prefix("badprof"),
        "increment",
        "1s",
        100,
        Some(1_000),
    );
    let keys = Keys::of(&s);
    let league = pinned(s, redis_store().await);
    for p in ["good", "bad"] {
        league.submit(p, 1, opts_at(start())).await.expect("submit");
    }
    let bracket = keys.bracket(1, "bronze", 1);
    let mut con = raw_connection().await;
    for (player, cached) in [("good", r#"7 {"name":"Ada"}"#), ("bad", r#"7 {"name":"#)] {
        let _: redis::Value = redis::cmd("HSET")
            .arg(&bracket.profiles)
            .arg(player)
            .arg(cached)
            .query_async(&mut con)
            .await
            .expect("hset");
    }
    let page = league
        .standings("bronze", 1, Some(1), 0, 10)
        .await
        .expect("page");
    let profile = |who: &str| {
        page.entries
            .iter()
            .find(|e| e.player == who)
            .unwrap_or_else(|| panic!("{who} not on {page:?}"))
            .profile
            .clone()
    };
    assert_eq!(profile("good").get("name").as_deref(), Some("Ada"));
    assert_eq!(profile("bad").as_json(), "{}");
    assert_eq!(profile("bad"), leaguekit::Profile::empty());
    let json = serde_json::to_value(&page).expect("serialise");
    let profiles: Vec<_> = json["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| e["profile"].clone())
        .collect();
    assert!(
        profiles.contains(&serde_json::json!({"name": "Ada"}))
            && profiles.contains(&serde_json::json!({})),
        "{profiles:?}"
    );
}

/// In the bulk path one item's failure (here, foreign data under a player's bucket)
/// is that item's error, and the items around it are placed as if they had gone
/// alone.
#[tokio::test]
async fn a_batch_item_that_fails_fails_alone() {
    let prefix = unique_prefix("batchfail");
    let s = season(&prefix, "increment", "1s", 100, Some(1_000_000));
    let keys = Keys::of(&s);
    let league = pinned(s, redis_store().await);
    let mut con = raw_connection().await;
    let bad = keys.player("p1");
    let _: () = redis::cmd("SET")
        .arg(bad.state())
        .arg("not a hash")
        .query_async(&mut con)
        .await
        .expect("set");
    let items: Vec<leaguekit::JoinItem> = ["p0", "p1", "p2"]
        .into_iter()
        .map(leaguekit::JoinItem::new)
        .collect();
    let placed = league.join_many(&items).await;
    assert!(placed[0].is_ok(), "{:?}", placed[0]);
    assert!(placed[2].is_ok(), "{:?}", placed[2]);
    let err = placed[1].as_ref().expect_err("foreign data");
    assert!(err.to_string().contains("WRONGTYPE"), "{err}");
    for p in ["p0", "p2"] {
        let v = league.player(p, None).await.expect("player");
        assert_eq!(v.bracket, Some(1), "{p}");
    }
}

/// Calls of each command on the server at `port` (INFO commandstats; commands run by
/// scripts count too).
fn calls(port: u16) -> HashMap<String, u64> {
    let info = common::command(port, &["INFO", "commandstats"]).expect("info");
    info.lines()
        .filter_map(|l| l.strip_prefix("cmdstat_"))
        .filter_map(|l| {
            let (name, rest) = l.split_once(':')?;
            let n = rest
                .strip_prefix("calls=")?
                .split(',')
                .next()?
                .parse()
                .ok()?;
            Some((name.to_owned(), n))
        })
        .collect()
}

/// Calls of each command since `before`.
fn calls_since(port: u16, before: &HashMap<String, u64>) -> HashMap<String, u64> {
    calls(port)
        .into_iter()
        .filter_map(|(name, n)| {
            let d = n - before.get(&name).copied().unwrap_or(0);
            (d > 0 && name != "info").then_some((name, d))
        })
        .collect()
}

/// A page is built in the client from one MULTI (open_page.lua, ZRANGE, and GET of
/// the profiles kept as one string) and kept by keep_page.lua; a kept page is one HGET
/// and no script. Over RESP2 and RESP3, on a server of its own so that the command
/// counts are this test's alone.
#[tokio::test]
async fn a_page_is_built_in_one_multi_and_a_kept_page_is_one_hget() {
    let server = RedisServer::start(&[]);
    for url in [
        server.url(),
        format!("redis://127.0.0.1:{}/?protocol=resp3", server.port),
    ] {
        let store = RedisStore::connect(&url, RedisOptions::default().with_connections(1))
            .await
            .expect("connect");
        let s = season(&unique_prefix("built"), "best", "1s", 100, Some(1_000_000));
        let league = pinned(s.clone(), store);
        for (i, p) in ["x", "y", "z"].iter().enumerate() {
            league
                .set_profile(p, &[("name".into(), format!("N{i}"))])
                .await
                .expect("profile");
            league
                .submit(p, 100 + i as i64, opts_at(at_tick(&s, i as u64)))
                .await
                .expect("submit");
        }
        // A first build loads the scripts on this new server; a score moves the page
        // on, so the next read builds again, on a server that has them, and, the
        // bracket built again, keeps its profiles as one string; another score, and
        // the build measured below reads that string.
        for (value, tick) in [(140, 3), (150, 4)] {
            league
                .standings("bronze", 1, None, 0, 10)
                .await
                .expect("page");
            league
                .submit("x", value, opts_at(at_tick(&s, tick)))
                .await
                .expect("submit");
        }
        let before = calls(server.port);
        let built = league
            .standings("bronze", 1, None, 0, 10)
            .await
            .expect("page");
        let got: Vec<(String, u64, String)> = built
            .entries
            .iter()
            .map(|e| (e.player.clone(), e.score, e.profile.to_string()))
            .collect();
        assert_eq!(
            got,
            [
                ("x".to_owned(), 150, r#"{"name":"N0"}"#.to_owned()),
                ("z".to_owned(), 102, r#"{"name":"N2"}"#.to_owned()),
                ("y".to_owned(), 101, r#"{"name":"N1"}"#.to_owned()),
            ],
            "{url}"
        );
        assert_eq!(built.players, 3);
        let build = calls_since(server.port, &before);
        // The profiles come as one string (the MULTI's GET): the first build
        // kept it, and the score update left it.
        for (command, n) in [("multi", 1), ("exec", 1), ("zrange", 1), ("get", 1)] {
            assert_eq!(build.get(command), Some(&n), "{url}: {build:?}");
        }
        // open_page.lua and keep_page.lua; neither standings.lua nor a read of the
        // profile cache (HGETALL, HSCAN, HMGET) ran.
        assert_eq!(build.get("evalsha"), Some(&2), "{url}: {build:?}");
        for command in ["hgetall", "hscan", "hmget"] {
            assert_eq!(build.get(command), None, "{url}: {build:?}");
        }

        let before = calls(server.port);
        let kept = league
            .standings("bronze", 1, None, 0, 10)
            .await
            .expect("page");
        assert_eq!(kept, built, "{url}");
        let read = calls_since(server.port, &before);
        assert_eq!(
            read,
            HashMap::from([("hget".to_owned(), 1)]),
            "{url}: a kept page"
        );
    }
}

/// A bracket whose players have no profiles (a season without them) has no profile
/// cache and so no profiles' string to keep: its builds, however often repeated,
/// stay one MULTI with the (empty) HSCAN, make no claim on a string, and never pay a
/// second round trip looking for one.
#[tokio::test]
async fn a_bracket_without_profiles_never_looks_for_a_profiles_string() {
    let server = RedisServer::start(&[]);
    let store = RedisStore::connect(&server.url(), RedisOptions::default().with_connections(1))
        .await
        .expect("connect");
    let s = season(&unique_prefix("bare"), "best", "1s", 100, Some(1_000_000));
    let league = pinned(s.clone(), store);
    for (i, (p, value)) in [("x", 300), ("y", 101), ("z", 102)].iter().enumerate() {
        league
            .submit(p, *value, opts_at(at_tick(&s, i as u64)))
            .await
            .expect("submit");
    }
    // Builds of a bracket in play, each after a score: the second and later ones are
    // builds again within the keep time, which for a bracket with profiles keep them
    // as one string.
    for round in 0..4u64 {
        let before = calls(server.port);
        let page = league
            .standings("bronze", 1, None, 0, 10)
            .await
            .expect("page");
        assert_eq!(page.entries[0].player, "x", "round {round}");
        assert_eq!(page.entries[0].score, 300 + 10 * round, "round {round}");
        let build = calls_since(server.port, &before);
        if round > 0 {
            for (command, n) in [("multi", 1), ("exec", 1), ("zrange", 1), ("hscan", 1)] {
                assert_eq!(build.get(command), Some(&n), "round {round}: {build:?}");
            }
            // open_page.lua and keep_page.lua; no GET of a string, no claim on one
            // (open_page's EXISTS), no second HSCAN.
            assert_eq!(build.get("evalsha"), Some(&2), "round {round}: {build:?}");
            for command in ["get", "exists", "set"] {
                assert_eq!(build.get(command), None, "round {round}: {build:?}");
            }
        }
        league
            .submit(
                "x",
                310 + 10 * round as i64,
                opts_at(at_tick(&s, 3 + round)),
            )
            .await
            .expect("submit");
    }
}

/// Bronze bracket 1 of period 1 in a fresh season (1 s resolution, brackets of 100),
/// with each of `players` scored 5 at `at`: where the page cache's tests start.
struct ScoredBracket {
    keys: Keys,
    store: RedisStore,
    league: League<RedisStore>,
    bracket: BracketKeys,
    at: DateTime<Utc>,
    con: redis::aio::MultiplexedConnection,
}

async fn scored_bracket(name: &str, players: &[&str]) -> ScoredBracket {
    let s = season(
        &unique_prefix(name),
        "increment",
        "1s",
        100,
        Some(1_000_000),
    );
    let keys = Keys::of(&s);
    let store = redis_store().await;
    let league = pinned(s, store.clone());
    let at = start() + chrono::Duration::hours(1);
    for p in players {
        league.submit(p, 5, opts_at(at)).await.expect("submit");
    }
    let bracket = keys.bracket(1, "bronze", 1);
    ScoredBracket {
        keys,
        store,
        league,
        bracket,
        at,
        con: raw_connection().await,
    }
}

/// The guard of the page cache's fill: open_page.lua's claim is made in the same
/// atomic step as the page's reads, and keep_page.lua keeps the page only while the
/// claim stands. Any change to what the page shows in between (a score, a join, a
/// profile), or a newer build's claim, leaves nothing kept.
#[tokio::test]
async fn a_change_between_a_build_and_its_fill_keeps_nothing() {
    let ScoredBracket {
        keys,
        league,
        bracket,
        at,
        mut con,
        ..
    } = scored_bracket("guard", &["a", "b"]).await;
    // Assembled with their preludes as src/store/redis/scripts.rs assembles them.
    let open = redis::Script::new(concat!(
        include_str!("../../src/store/redis/lua/cache_writes.lua"),
        include_str!("../../src/store/redis/lua/page_expiry.lua"),
        include_str!("../../src/store/redis/lua/open_page.lua")
    ));
    let keep = redis::Script::new(concat!(
        include_str!("../../src/store/redis/lua/cache_writes.lua"),
        include_str!("../../src/store/redis/lua/page_expiry.lua"),
        include_str!("../../src/store/redis/lua/keep_page.lua")
    ));
    // open_page.lua's call claiming page 0:9 under `nonce`, with the key of the
    // profiles' string when asked for it too.
    let open_call = |nonce: &'static str, text_key: Option<String>| {
        let mut call = open.prepare_invoke();
        call.key(&bracket.board)
            .key(&bracket.pages)
            .key(&bracket.meta)
            .arg("?0:9")
            .arg(nonce)
            .arg(30_000);
        if let Some(text_key) = text_key {
            call.key(text_key);
        }
        call
    };
    let claim = |nonce: &'static str| {
        let call = open_call(nonce, None);
        async move {
            let mut con = raw_connection().await;
            let total: u64 = call.invoke_async(&mut con).await.expect("open_page");
            total
        }
    };
    let fill = |nonce: &'static str| {
        let keep = &keep;
        let bracket = &bracket;
        async move {
            let mut con = raw_connection().await;
            let kept: u64 = keep
                .key(&bracket.pages)
                .arg("?0:9")
                .arg(nonce)
                .arg("0:9")
                .arg(format!("a page built under {nonce}"))
                .invoke_async(&mut con)
                .await
                .expect("keep_page");
            kept
        }
    };
    let changes: [(&str, Box<dyn Fn() -> _>); 3] = [
        (
            "a score",
            Box::new(|| {
                Box::pin(async {
                    league.submit("a", 1, opts_at(at)).await.expect("submit");
                }) as std::pin::Pin<Box<dyn std::future::Future<Output = ()> + '_>>
            }),
        ),
        (
            "a join",
            Box::new(|| {
                Box::pin(async {
                    league.submit("c", 1, opts_at(at)).await.expect("join");
                })
            }),
        ),
        (
            "a profile",
            Box::new(|| {
                Box::pin(async {
                    league
                        .set_profile("b", &[("name".into(), "B".into())])
                        .await
                        .expect("profile");
                })
            }),
        ),
    ];
    for (what, change) in &changes {
        assert!(claim("n1").await > 0);
        change().await;
        assert_eq!(fill("n1").await, 0, "kept after {what}");
        assert_eq!(hget(&mut con, &bracket.pages, "0:9").await, None, "{what}");
    }
    // A newer build's claim supersedes an older one.
    claim("n2").await;
    claim("n3").await;
    assert_eq!(fill("n2").await, 0, "the older claim");
    assert_eq!(fill("n3").await, 1, "the newer claim");
    assert_eq!(
        hget(&mut con, &bracket.pages, "0:9").await.as_deref(),
        Some("a page built under n3")
    );
    assert_eq!(
        hget(&mut con, &bracket.pages, "?0:9").await,
        None,
        "claim used"
    );
    assert_eq!(fill("n3").await, 0, "a claim keeps one page once");

    // The profiles' string has a claim of its own, in the meta: a score since the
    // snapshot leaves it, a change to the profile cache (a new profile, a joiner's)
    // keeps no string.
    let text_key = bracket.profiles_text();
    // open_page.lua with the string's key, and the string it finds (the MULTI's GET).
    let open_text = |nonce: &'static str| {
        let call = open_call(nonce, Some(text_key.clone()));
        let text_key = text_key.clone();
        async move {
            let mut con = raw_connection().await;
            let total: u64 = call.invoke_async(&mut con).await.expect("open_page");
            let text: Option<String> = redis::cmd("GET")
                .arg(&text_key)
                .query_async(&mut con)
                .await
                .expect("get");
            (total, text)
        }
    };
    let fill_text = |nonce: &'static str| {
        let (keep, bracket, text_key) = (&keep, &bracket, &text_key);
        async move {
            let mut con = raw_connection().await;
            let _: u64 = keep
                .key(&bracket.pages)
                .key(&bracket.meta)
                .key(text_key)
                .key(&bracket.profiles)
                .arg("?0:9")
                .arg(nonce)
                .arg("")
                .arg("")
                .arg(format!("profiles read under {nonce}"))
                .arg(30_000)
                .invoke_async(&mut con)
                .await
                .expect("keep_page");
            let kept: Option<String> = redis::cmd("GET")
                .arg(text_key)
                .query_async(&mut con)
                .await
                .expect("get");
            kept
        }
    };
    let del = |key: String| async move {
        let mut con = raw_connection().await;
        let _: () = redis::cmd("DEL")
            .arg(key)
            .query_async(&mut con)
            .await
            .expect("del");
    };
    let (_, none) = open_text("t1").await;
    assert_eq!(none, None);
    league.submit("a", 1, opts_at(at)).await.expect("submit");
    assert_eq!(
        fill_text("t1").await.as_deref(),
        Some("profiles read under t1"),
        "a score leaves the claim"
    );
    let (_, kept) = open_text("t2").await;
    assert_eq!(kept.as_deref(), Some("profiles read under t1"));
    assert_eq!(
        hget(&mut con, &bracket.meta, "texted").await.as_deref(),
        Some("1")
    );
    del(text_key.clone()).await;
    open_text("t3").await;
    league
        .set_profile("b", &[("name".into(), "Bee".into())])
        .await
        .expect("profile");
    assert_eq!(fill_text("t3").await, None, "kept after a profile");
    open_text("t4").await;
    league
        .set_profile("d", &[("name".into(), "D".into())])
        .await
        .expect("profile");
    league.submit("d", 1, opts_at(at)).await.expect("join");
    assert_eq!(fill_text("t4").await, None, "kept after a joiner's profile");

    // No board, no claim: reading a bracket nobody joined writes nothing.
    let empty = keys.bracket(1, "bronze", 7);
    let total: u64 = open
        .key(&empty.board)
        .key(&empty.pages)
        .key(&empty.meta)
        .arg("?0:9")
        .arg("n4")
        .arg(30_000)
        .invoke_async(&mut con)
        .await
        .expect("open_page");
    assert_eq!(total, 0);
    assert_eq!(
        keys_under(&mut con, &empty.base).await,
        Vec::<String>::new()
    );
}

/// Kept pages are read without looking at the board, so the page cache never
/// outlives it: a page kept near the board's end goes with the board, and the
/// rollover's retention shortens the page cache's expiry, never lengthens it.
#[tokio::test]
async fn kept_pages_never_outlive_their_board() {
    let ScoredBracket {
        store,
        league,
        bracket,
        at,
        mut con,
        ..
    } = scored_bracket("outlive", &["a", "b"]).await;
    pexpire(&mut con, &bracket.board, 1_500).await;
    let page = league
        .standings("bronze", 1, None, 0, 10)
        .await
        .expect("page");
    assert_eq!(page.players, 2);
    // The board first: a PTTL read later is smaller by the time between the reads,
    // so reading the page cache first could make equal expiries look out of order
    // (CI once saw "pages 1500 ms, board 1499 ms").
    let board = pttl(&mut con, &bracket.board).await;
    let kept = pttl(&mut con, &bracket.pages).await;
    assert!(
        0 < kept && kept <= board,
        "pages {kept} ms, board {board} ms"
    );
    // The meta the read created expires with the board, to the millisecond (absolute
    // expiry times, so the order of the reads does not matter).
    let board_at = pexpiretime(&mut con, &bracket.board).await;
    assert!(board_at > 0, "board expiry time {board_at}");
    assert_eq!(pexpiretime(&mut con, &bracket.meta).await, board_at);
    assert_eq!(pexpiretime(&mut con, &bracket.pages).await, board_at);
    tokio::time::sleep(Duration::from_millis(1_600)).await;
    let gone = league
        .standings("bronze", 1, None, 0, 10)
        .await
        .expect("page");
    assert_eq!((gone.players, gone.entries.len()), (0, 0), "{gone:?}");

    // The rollover's retention, shorter than the keep time, shortens the page cache.
    for p in ["c", "d"] {
        league.submit(p, 5, opts_at(at)).await.expect("submit");
    }
    league
        .standings("bronze", 1, None, 0, 10)
        .await
        .expect("page");
    assert!(pttl(&mut con, &bracket.pages).await > 2_000);
    store
        .record_outcomes(&bracket, &[], 2)
        .await
        .expect("record_outcomes");
    let board = pttl(&mut con, &bracket.board).await;
    let kept = pttl(&mut con, &bracket.pages).await;
    assert!(
        0 < kept && kept <= board && board <= 2_000,
        "pages {kept}, board {board}"
    );
    // A longer retention leaves the page cache's own, shorter expiry.
    store
        .record_outcomes(&bracket, &[], 3_600)
        .await
        .expect("record_outcomes");
    assert!(pttl(&mut con, &bracket.pages).await <= 2_000);
}

/// The batch read's script (`standings.lua`, the path of `standings_many`, of the
/// rollover's tier-wide lists, and of a build whose MULTI failed) keeps its pages and
/// the meta hash it creates to the board's own expiry time, like the single read's.
#[tokio::test]
async fn batch_read_pages_and_meta_expire_with_their_board() {
    let ScoredBracket {
        store,
        bracket,
        mut con,
        ..
    } = scored_bracket("outlive-many", &["a", "b", "c"]).await;
    // Start without a meta hash, so that the read creates it.
    let () = redis::cmd("DEL")
        .arg(&bracket.meta)
        .query_async(&mut con)
        .await
        .expect("del meta");
    pexpire(&mut con, &bracket.board, 1_500).await;
    let pages = store.standings_many(&[(&bracket, 0, 10)]).await;
    let [page] = pages.as_slice() else {
        panic!("one read, {} results", pages.len());
    };
    let page = page.as_ref().expect("page");
    assert_eq!((page.total, page.entries.len()), (3, 3), "{page:?}");
    let board_at = pexpiretime(&mut con, &bracket.board).await;
    assert!(board_at > 0, "board expiry time {board_at}");
    assert_eq!(pexpiretime(&mut con, &bracket.pages).await, board_at);
    assert_eq!(pexpiretime(&mut con, &bracket.meta).await, board_at);
    // The kept page is answered again, the same, until the board is gone with it.
    let again = store.standings_many(&[(&bracket, 0, 10)]).await;
    assert_eq!(again[0].as_ref().expect("kept page"), page);
    tokio::time::sleep(Duration::from_millis(1_600)).await;
    for key in [&bracket.board, &bracket.pages, &bracket.meta] {
        assert_eq!(pttl(&mut con, key).await, -2, "{key} outlived the board");
    }
}

/// A profile cache that is a large hash table (200 profiles of more than 64 bytes) is
/// not answered whole by the build's HSCAN; the page's players' profiles are then read
/// by HMGET (and no string of the profiles is kept), with the page cache on or off,
/// and every entry still shows its own profile, kept or built, at any offset.
#[tokio::test]
async fn pages_of_a_large_profile_cache_show_every_profile() {
    const LONG: &str = "-a-name-long-enough-that-the-cached-profile-passes-64-bytes";
    let prefix = unique_prefix("large");
    let s = season(&prefix, "increment", "1s", 300, Some(1_000_000));
    let keys = Keys::of(&s);
    // A server of its own, so that its command counts are this test's alone.
    let server = RedisServer::start(&[]);
    let store = RedisStore::connect(&server.url(), RedisOptions::default())
        .await
        .expect("connect");
    let league = std::sync::Arc::new(pinned(s.clone(), store));
    let at = start() + chrono::Duration::hours(1);
    let tasks: Vec<_> = (0..200)
        .map(|i| {
            let league = league.clone();
            tokio::spawn(async move {
                let p = format!("p{i:03}");
                league
                    .set_profile(&p, &[("name".into(), format!("N{i}{LONG}"))])
                    .await
                    .expect("profile");
                league.submit(&p, i + 1, opts_at(at)).await.expect("submit");
            })
        })
        .collect();
    for t in tasks {
        t.await.expect("task");
    }
    let mut con = redis::Client::open(server.url())
        .expect("client")
        .get_multiplexed_async_connection()
        .await
        .expect("connect");
    let bracket = keys.bracket(1, "bronze", 1);
    let encoding: String = redis::cmd("OBJECT")
        .arg("ENCODING")
        .arg(&bracket.profiles)
        .query_async(&mut con)
        .await
        .expect("encoding");
    let cached: u64 = redis::cmd("HLEN")
        .arg(&bracket.profiles)
        .query_async(&mut con)
        .await
        .expect("hlen");
    assert_eq!((encoding.as_str(), cached), ("hashtable", 200));
    let read_all = |league: std::sync::Arc<League<RedisStore>>| async move {
        for (offset, limit) in [(0, 100), (150, 50), (195, 20), (0, 100)] {
            let page = league
                .standings("bronze", 1, None, offset, limit)
                .await
                .expect("page");
            assert_eq!(page.players, 200);
            let want = 200u64.saturating_sub(offset).min(limit);
            assert_eq!(page.entries.len() as u64, want);
            for (i, e) in page.entries.iter().enumerate() {
                let n = 199 - offset as usize - i;
                assert_eq!(e.player, format!("p{n:03}"));
                assert_eq!(e.rank, offset + i as u64 + 1);
                assert_eq!(e.profile.to_string(), format!(r#"{{"name":"N{n}{LONG}"}}"#));
            }
        }
    };
    let before = calls(server.port);
    read_all(league).await;
    // Three builds (the last read was kept), none by standings.lua (whose ZCARD would
    // show); the first MULTI met NOSCRIPT on this new server, loaded open_page.lua and
    // ran again. Each MULTI read the cache with HSCAN (the failed one's too: no string
    // of it was ever kept, so none is asked for), got part of it, and each build read
    // the page's players' with HMGET.
    let reads = calls_since(server.port, &before);
    assert_eq!(
        (
            reads.get("exec"),
            reads.get("zcard"),
            reads.get("get"),
            reads.get("hscan"),
            reads.get("hmget")
        ),
        (Some(&4), Some(&3), None, Some(&4), Some(&3)),
        "{reads:?}"
    );
    assert_eq!(pttl(&mut con, &bracket.profiles_text()).await, -2);

    let off = RedisStore::connect(
        &server.url(),
        RedisOptions::default().with_page_cache(Duration::ZERO),
    )
    .await
    .expect("connect");
    let before = calls(server.port);
    read_all(std::sync::Arc::new(pinned(s.clone(), off))).await;
    // Four builds, each an HSCAN that answered part of the cache and an HMGET.
    let reads = calls_since(server.port, &before);
    assert_eq!(
        (reads.get("exec"), reads.get("hscan"), reads.get("hmget")),
        (Some(&4), Some(&4), Some(&4)),
        "{reads:?}"
    );
}

/// The bracket's profiles kept as one string for page builds (open_page.lua)
/// outlive a score update, and go with every change to the profile cache: a new
/// profile, a new player's, the rollover's retention. A cache holding the separator
/// (data leaguekit did not write) is never gathered, and with the page cache off
/// nothing is kept.
#[tokio::test]
async fn the_profiles_string_follows_every_profile_change() {
    let prefix = unique_prefix("proftext");
    let s = season(&prefix, "increment", "1s", 100, Some(1_000_000));
    let keys = Keys::of(&s);
    let bracket = keys.bracket(1, "bronze", 1);
    let text_key = bracket.profiles_text();
    let league = pinned(s.clone(), redis_store().await);
    let mut con = raw_connection().await;
    let at = start() + chrono::Duration::hours(1);
    for (p, name) in [("a", "Ann"), ("b", "Bo")] {
        league
            .set_profile(p, &[("name".into(), name.into())])
            .await
            .expect("profile");
        league.submit(p, 5, opts_at(at)).await.expect("submit");
    }
    let names = |page: &leaguekit::Standings| -> Vec<(String, u64, String)> {
        page.entries
            .iter()
            .map(|e| {
                let name = e.profile.get("name").unwrap_or_default();
                (e.player.clone(), e.score, name)
            })
            .collect()
    };
    let read = || league.standings("bronze", 1, None, 0, 10);
    // A bracket's first build keeps no string; its next one (here another page
    // of it, not kept) does.
    read().await.expect("page");
    assert_eq!(pttl(&mut con, &text_key).await, -2, "not on a first build");
    league
        .standings("bronze", 1, None, 0, 5)
        .await
        .expect("page");
    let ttl = pttl(&mut con, &text_key).await;
    assert!(0 < ttl && ttl <= 30_000, "the string: {ttl} ms");
    assert_eq!(
        hget(&mut con, &bracket.meta, "texted").await.as_deref(),
        Some("1")
    );

    // A score changes the board, not the profiles: the string stays.
    league.submit("b", 10, opts_at(at)).await.expect("submit");
    assert!(pttl(&mut con, &text_key).await > 0, "kept through a score");
    assert_eq!(
        names(&read().await.expect("page")),
        [("b".into(), 15, "Bo".into()), ("a".into(), 5, "Ann".into())]
    );

    // A new profile of a placed player (cache_profile.lua).
    league
        .set_profile("a", &[("name".into(), "Anna".into())])
        .await
        .expect("profile");
    assert_eq!(pttl(&mut con, &text_key).await, -2, "gone with a profile");
    assert_eq!(
        names(&read().await.expect("page")),
        [
            ("b".into(), 15, "Bo".into()),
            ("a".into(), 5, "Anna".into())
        ]
    );

    // A new player with a profile (enter.lua, which finds the flag).
    league
        .set_profile("c", &[("name".into(), "Cy".into())])
        .await
        .expect("profile");
    league.submit("c", 7, opts_at(at)).await.expect("submit");
    assert_eq!(
        pttl(&mut con, &text_key).await,
        -2,
        "gone with a joiner's profile"
    );
    assert_eq!(
        hget(&mut con, &bracket.meta, "texted").await,
        None,
        "and the flag"
    );
    assert_eq!(
        names(&read().await.expect("page")),
        [
            ("b".into(), 15, "Bo".into()),
            ("c".into(), 7, "Cy".into()),
            ("a".into(), 5, "Anna".into())
        ]
    );
    assert!(pttl(&mut con, &text_key).await > 0, "made again");

    // A field holding the separator: read through HMGET, the string never made.
    let _: () = redis::cmd("DEL")
        .arg(&text_key)
        .query_async(&mut con)
        .await
        .expect("del");
    let _: () = redis::cmd("HSET")
        .arg(&bracket.profiles)
        .arg("x\u{1f}y")
        .arg("1 {}")
        .query_async(&mut con)
        .await
        .expect("hset");
    league.submit("a", 1, opts_at(at)).await.expect("submit");
    assert_eq!(
        names(&read().await.expect("page")),
        [
            ("b".into(), 15, "Bo".into()),
            ("c".into(), 7, "Cy".into()),
            ("a".into(), 6, "Anna".into())
        ]
    );
    assert_eq!(pttl(&mut con, &text_key).await, -2, "not gathered");
    let _: () = redis::cmd("HDEL")
        .arg(&bracket.profiles)
        .arg("x\u{1f}y")
        .query_async(&mut con)
        .await
        .expect("hdel");

    // The rollover gives the bracket's keys the season's retention: the string's
    // expiry is only ever shortened, as the page cache's. (A build that could make
    // no string forgot the bracket: the next build notes it, the one after keeps
    // the string.)
    for _ in 0..2 {
        league.submit("a", 1, opts_at(at)).await.expect("submit");
        read().await.expect("page");
    }
    assert!(pttl(&mut con, &text_key).await > 0);
    let finish = redis::Script::new(concat!(
        include_str!("../../src/store/redis/lua/foreign_keys.lua"),
        include_str!("../../src/store/redis/lua/page_expiry.lua"),
        include_str!("../../src/store/redis/lua/finish_bracket.lua")
    ));
    let _: i64 = finish
        .key(&bracket.meta)
        .key(&bracket.lease)
        .key(&bracket.board)
        .key(&bracket.profiles)
        .key(&bracket.outcomes)
        .key(&bracket.pages)
        .key(&text_key)
        .arg("record")
        .arg("")
        .arg(2)
        .arg("")
        .invoke_async(&mut con)
        .await
        .expect("finish_bracket");
    let ttl = pttl(&mut con, &text_key).await;
    assert!(
        0 < ttl && ttl <= 2_000,
        "shortened to the retention: {ttl} ms"
    );

    // The page cache off keeps nothing.
    let _: () = redis::cmd("DEL")
        .arg(&text_key)
        .query_async(&mut con)
        .await
        .expect("del");
    let off = RedisStore::connect(
        &redis_url(),
        RedisOptions::default().with_page_cache(Duration::ZERO),
    )
    .await
    .expect("connect");
    let league = pinned(s, off);
    league
        .standings("bronze", 1, None, 0, 10)
        .await
        .expect("page");
    assert_eq!(
        pttl(&mut con, &text_key).await,
        -2,
        "nothing kept with the cache off"
    );
}

/// Reads racing writes on one bracket: once the writes stop, the page read (kept or
/// built) is the page a store without a page cache reads. A fill that did not check
/// its claim would, now and then, keep a page built before the last write.
#[tokio::test]
async fn pages_read_while_scores_change_are_never_left_stale() {
    let prefix = unique_prefix("race");
    let s = season(&prefix, "increment", "1s", 100, Some(1_000_000));
    let league = std::sync::Arc::new(pinned(s.clone(), redis_store().await));
    let at = start() + chrono::Duration::hours(1);
    let players: Vec<String> = (0..20).map(|i| format!("r{i:02}")).collect();
    for p in &players {
        league.submit(p, 1, opts_at(at)).await.expect("submit");
    }
    let off = RedisStore::connect(
        &redis_url(),
        RedisOptions::default().with_page_cache(Duration::ZERO),
    )
    .await
    .expect("connect");
    let fresh = pinned(s.clone(), off);
    for round in 0..5 {
        let writing = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let writers: Vec<_> = (0..4)
            .map(|w| {
                let (league, players) = (league.clone(), players.clone());
                tokio::spawn(async move {
                    for i in 0..25 {
                        let p = &players[(w * 7 + i * 3 + round) % players.len()];
                        league.submit(p, 1, opts_at(at)).await.expect("submit");
                    }
                })
            })
            .collect();
        let readers: Vec<_> = (0..4)
            .map(|_| {
                let (league, writing) = (league.clone(), writing.clone());
                tokio::spawn(async move {
                    while writing.load(std::sync::atomic::Ordering::Relaxed) {
                        league
                            .standings("bronze", 1, None, 0, 100)
                            .await
                            .expect("page");
                    }
                })
            })
            .collect();
        for w in writers {
            w.await.expect("writer");
        }
        writing.store(false, std::sync::atomic::Ordering::Relaxed);
        for r in readers {
            r.await.expect("reader");
        }
        let want = fresh
            .standings("bronze", 1, None, 0, 100)
            .await
            .expect("page");
        for _ in 0..2 {
            let got = league
                .standings("bronze", 1, None, 0, 100)
                .await
                .expect("page");
            assert_eq!(got, want, "round {round}");
        }
    }
}

/// Concurrent single submits are gathered into shared `update.lua` calls (far fewer
/// EVALSHA than submits, counted on a server of its own), and each answers as it
/// would alone: every score is the sum so far, and a request id sent again, gathered
/// with others, answers the first time's score as a duplicate and changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_submits_share_calls_and_answer_as_alone() {
    let server = RedisServer::start(&[]);
    let store = RedisStore::connect(&server.url(), RedisOptions::default())
        .await
        .expect("connect");
    let used = gathered_submits_answer_as_alone(store, Some(server.port)).await;
    let evalsha = used.get("evalsha").copied().unwrap_or(0);
    assert!(
        evalsha * 2 <= GATHER_SUBMITS,
        "{GATHER_SUBMITS} concurrent submits made {evalsha} script calls: {used:?}"
    );
}

/// The same on a Redis Cluster, where the brackets' slots differ: a gathered batch
/// is sent as one call per slot, and every answer is still the one alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_submits_on_a_cluster_answer_as_alone() {
    gathered_submits_answer_as_alone(common::cluster_store().await, None).await;
}

const GATHER_PLAYERS: usize = 40;
const GATHER_ROUNDS: i64 = 10;
const GATHER_SUBMITS: u64 = GATHER_PLAYERS as u64 * GATHER_ROUNDS as u64;

/// Places 40 players in four brackets of ten, then submits ten rounds for each from
/// 40 tasks, twice with the same request ids; checks every answer and score. Answers
/// the command counts over the first rounds, given the port of a server of its own.
async fn gathered_submits_answer_as_alone(
    store: RedisStore,
    port: Option<u16>,
) -> HashMap<String, u64> {
    let s = season(
        &unique_prefix("gather"),
        "increment",
        "1s",
        10,
        Some(1_000_000),
    );
    let league = std::sync::Arc::new(pinned(s.clone(), store));
    let at = start() + chrono::Duration::hours(1);
    // Placed (and scoring 1) one at a time.
    for i in 0..GATHER_PLAYERS {
        league
            .submit(&format!("p{i:02}"), 1, opts_at(at))
            .await
            .expect("place");
    }
    let rounds = || {
        let tasks: Vec<_> = (0..GATHER_PLAYERS)
            .map(|i| {
                let league = league.clone();
                tokio::spawn(async move {
                    let mut answers = Vec::new();
                    for r in 1..=GATHER_ROUNDS {
                        let opts = opts_at(at).request_id(format!("r{r}"));
                        let sub = league
                            .submit(&format!("p{i:02}"), r, opts)
                            .await
                            .expect("submit");
                        answers.push((sub.score, sub.applied));
                    }
                    answers
                })
            })
            .collect();
        async move {
            let mut all = Vec::new();
            for t in tasks {
                all.push(t.await.expect("task"));
            }
            all
        }
    };
    let before = port.map(calls).unwrap_or_default();
    let first = rounds().await;
    let used = port
        .map(|port| calls_since(port, &before))
        .unwrap_or_default();
    for answers in &first {
        let mut score = 1;
        for (r, (got, applied)) in (1..=GATHER_ROUNDS).zip(answers) {
            score += r as u64;
            assert_eq!((*got, *applied), (score, true), "round {r}: {answers:?}");
        }
    }
    // The same request ids again, gathered: each answers its first score, unapplied.
    let again = rounds().await;
    for (answers, first) in again.iter().zip(&first) {
        let want: Vec<(u64, bool)> = first.iter().map(|(s, _)| (*s, false)).collect();
        assert_eq!(answers, &want);
    }
    for i in 0..GATHER_PLAYERS {
        let view = league
            .player(&format!("p{i:02}"), None)
            .await
            .expect("view");
        assert_eq!(view.score, Some(1 + 55), "p{i:02}");
    }
    used
}

/// One `update.lua` call carries many updates, and an update the server refuses
/// (its idempotency key holds a hash, data leaguekit did not write: WRONGTYPE) is
/// that update's error alone; the others of the call are applied.
#[tokio::test]
async fn a_refused_update_fails_alone_in_its_call() {
    let server = RedisServer::start(&[]);
    let store = RedisStore::connect(&server.url(), RedisOptions::default())
        .await
        .expect("connect");
    let s = season(
        &unique_prefix("alone"),
        "increment",
        "1s",
        100,
        Some(1_000_000),
    );
    let keys = Keys::of(&s);
    let league = pinned(s.clone(), store);
    let at = start() + chrono::Duration::hours(1);
    let players: Vec<String> = (0..8).map(|i| format!("p{i}")).collect();
    for p in &players {
        league.submit(p, 1, opts_at(at)).await.expect("place");
    }
    let bracket = keys.bracket(1, "bronze", 1);
    common::command(
        server.port,
        &["HSET", &bracket.request("p3", "bad"), "not", "a string"],
    )
    .expect("hset");
    let items: Vec<BatchItem> = players
        .iter()
        .map(|p| {
            let id = if p == "p3" { "bad" } else { "good" };
            BatchItem::new(p.clone(), 2).with_options(opts_at(at).request_id(id))
        })
        .collect();
    let before = calls(server.port);
    let results = league.submit_many(&items).await;
    let used = calls_since(server.port, &before);
    assert_eq!(used.get("evalsha"), Some(&1), "one call: {used:?}");
    for (p, r) in players.iter().zip(&results) {
        match (p.as_str(), r) {
            ("p3", Err(e)) => assert!(e.to_string().contains("WRONGTYPE"), "{e}"),
            ("p3", Ok(sub)) => panic!("p3 applied: {sub:?}"),
            (_, Ok(sub)) => assert_eq!((sub.score, sub.applied), (3, true), "{p}"),
            (_, Err(e)) => panic!("{p}: {e}"),
        }
    }
    let view = league.player("p3", None).await.expect("view");
    assert_eq!(
        view.score,
        Some(1),
        "nothing written for the refused update"
    );
}
