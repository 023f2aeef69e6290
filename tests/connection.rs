//! Connecting to Redis as operators deploy it, against real servers: a TLS-only
//! server with an ACL user (certificates made at test time), a three-master Redis
//! Cluster, and the failures an operator meets first (wrong password, unknown CA,
//! plaintext against TLS, a dead seed node, a cluster URL for a single server, a
//! stopped node); a TLS cluster; scripts that meet an empty script cache after
//! SCRIPT FLUSH or a slot moved to another node; unix sockets. Each failure must be
//! a typed error within seconds, whose message says what to check and never
//! contains the password. URL parsing itself is unit-tested in `src/store/redis/connection/url/tests.rs`.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use leaguekit::SubmitOptions;
use leaguekit::store::keys::Keys;
use leaguekit::store::redis::connection::ConnectError;
use leaguekit::{League, ManualClock, PeriodId, RedisOptions, RedisStore, Season};

use common::cluster::{
    Cluster, admin as node, cluster_ports, cluster_url, move_slot, slot_owner as owner_of,
};
use common::tls::{TestCerts, TlsServer, tls_target};
use common::{command, unique_prefix};

const START: &str = "2026-01-05T00:00:00Z";

/// Generous bound for a failure that should come on the first answer (measured in
/// tens of milliseconds on loopback; the margin covers a loaded 2-core machine).
const FAST_FAILURE: Duration = Duration::from_secs(3);

fn start() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(START)
        .expect("test start time")
        .with_timezone(&Utc)
}

/// A daily season with two tiers, brackets of `size`, and one reward (rank 1) per
/// bracket, so that a rollover grants at most one reward per bracket.
fn season(prefix: &str, size: u32) -> Season {
    let text = format!(
        r#"
name = "conn"
key_prefix = "{prefix}"

[schedule]
timezone = "UTC"
period = "daily"
start = "{START}"

[brackets]
size = {size}
join = "on_first_score"

[scoring]
mode = "increment"
max_score = 1000000
time_resolution = "1s"
idempotency_window = "1h"

[profiles]
fields = ["name"]
max_bytes = 128

[[tiers]]
name = "bronze"
promote = 1
demote = 0
rewards = [{{ ranks = "1", grant = "gems:10" }}]

[[tiers]]
name = "gold"
promote = 0
demote = 1
"#
    );
    Season::from_toml(&text, "test").expect("test season")
}

/// A league whose league clock stands at noon of the season's first day: the test
/// events (in its first minutes) are in the past and period 1 is open.
fn pinned(season: Season, store: RedisStore) -> (League<RedisStore>, ManualClock) {
    let clock = ManualClock::new(start() + chrono::Duration::hours(12));
    (
        League::with_clock(season, store, std::sync::Arc::new(clock.clone())),
        clock,
    )
}

fn at(seconds: i64) -> SubmitOptions {
    SubmitOptions::default().at(start() + chrono::Duration::seconds(seconds))
}

/// Connects, or fails the test with the error.
async fn connect(url: &str, options: RedisOptions) -> RedisStore {
    match RedisStore::connect(url, options).await {
        Ok(store) => store,
        Err(e) => panic!("cannot connect to {url}: {e}"),
    }
}

/// Connects expecting a failure; returns it with the time it took.
async fn connect_err(url: &str, options: RedisOptions) -> (ConnectError, Duration) {
    let began = Instant::now();
    match RedisStore::connect(url, options).await {
        Ok(_) => panic!("{url} connected"),
        Err(e) if ConnectError::of(&e).is_some() => {
            let elapsed = began.elapsed();
            eprintln!("{url}: after {elapsed:?}: {e}");
            (
                ConnectError::of(&e).cloned().expect("a connect error"),
                elapsed,
            )
        }
        Err(other) => panic!("{url}: not a connect error: {other:?}"),
    }
}

/// Joins, scores, names and reads a few players; the answers must be the same on
/// every deployment.
async fn small_league_flow(store: RedisStore, tag: &str) {
    let season = season(&unique_prefix(tag), 100);
    let (league, _clock) = pinned(season, store);
    // Many player ids, so player keys land in many slots (on a cluster, on every node).
    let players: Vec<String> = (0..12).map(|i| format!("p{i}-{{x}}:{i}")).collect();
    // Profiles first: a bracket caches its players' profiles when they enter it.
    for (i, player) in players.iter().enumerate() {
        league
            .set_profile(player, &[("name".into(), format!("Player {i}"))])
            .await
            .expect("set profile");
    }
    let joined = league.join(&players[0], Some(start())).await.expect("join");
    for (i, player) in players.iter().enumerate() {
        let score = league
            .submit(player, 10 + i as i64, at(60).request_id(format!("r-{i}")))
            .await
            .expect("submit with a request id");
        assert!(score.applied);
        // An update without a request id goes through the at-most-once path.
        league
            .submit(player, 1, at(61))
            .await
            .expect("submit without a request id");
    }
    let retry = league
        .submit(&players[3], 13, at(60).request_id("r-3"))
        .await
        .expect("retried submit");
    assert!(!retry.applied);
    assert_eq!(retry.score, 13);
    let period = league.period_at(Some(start())).expect("period").id;
    let table = league
        .standings(&joined.tier, joined.bracket, Some(period), 0, 20)
        .await
        .expect("standings");
    assert_eq!(table.players, 12);
    assert_eq!(table.entries[0].player, players[11]);
    assert_eq!(table.entries[0].score, 10 + 11 + 1);
    assert_eq!(
        table.entries[0].profile.get("name").as_deref(),
        Some("Player 11")
    );
    let me = league
        .player(&players[5], Some(period))
        .await
        .expect("player");
    assert_eq!(me.rank, Some(7));
    assert_eq!(
        league.profile(&players[5]).await.expect("profile")["name"],
        "Player 5"
    );
}

// ---------------------------------------------------------------------------------
// TLS

#[tokio::test]
async fn a_league_runs_over_tls_with_an_acl_user_and_a_private_ca() {
    let target = tls_target();
    let began = Instant::now();
    let store = connect(
        &target.url(),
        RedisOptions::default().with_ca_file(&target.ca),
    )
    .await;
    eprintln!("TLS connect in {:?}", began.elapsed());
    small_league_flow(store, "tls").await;
    // RESP3 over TLS too.
    let url = format!("{}?protocol=resp3", target.url());
    let store = connect(&url, RedisOptions::default().with_ca_file(&target.ca)).await;
    small_league_flow(store, "tls3").await;
}

#[tokio::test]
async fn a_wrong_password_fails_at_once_with_a_clear_message() {
    let target = tls_target();
    let options = || RedisOptions::default().with_ca_file(&target.ca);
    let wrong = "not-the-Passw0rd";
    let (err, elapsed) = connect_err(&target.url_with(&target.user, wrong), options()).await;
    assert!(matches!(err, ConnectError::Auth { .. }), "{err:?}");
    assert!(elapsed < FAST_FAILURE, "took {elapsed:?}");
    let message = err.to_string();
    assert!(!message.contains(wrong), "{message}");
    assert!(message.contains(&target.user), "names the user: {message}");
    assert!(
        message.contains("user:password@"),
        "says what to fix: {message}"
    );
    // The same for a user that does not exist, and for no credentials at all (the
    // default user is disabled).
    let (err, elapsed) = connect_err(&target.url_with("nobody", &target.password), options()).await;
    assert!(matches!(err, ConnectError::Auth { .. }), "{err:?}");
    assert!(elapsed < FAST_FAILURE, "took {elapsed:?}");
    assert!(!err.to_string().contains(&target.password));
    let (err, elapsed) = connect_err(&target.anonymous_url(), options()).await;
    assert!(matches!(err, ConnectError::Auth { .. }), "{err:?}");
    assert!(elapsed < FAST_FAILURE, "took {elapsed:?}");
    assert!(err.to_string().contains("without credentials"), "{err}");
}

#[tokio::test]
async fn an_unknown_ca_fails_the_handshake_clearly() {
    let target = tls_target();
    let dir = tempfile::tempdir().expect("temp dir");
    let other_ca = TestCerts::make(dir.path()).other_ca();
    // A CA file that did not sign the server's certificate.
    let (err, elapsed) = connect_err(
        &target.url(),
        RedisOptions::default().with_ca_file(&other_ca),
    )
    .await;
    assert!(matches!(err, ConnectError::Tls { .. }), "{err:?}");
    assert!(elapsed < FAST_FAILURE, "took {elapsed:?}");
    let message = err.to_string();
    assert!(message.contains("with_ca_file"), "{message}");
    assert!(!message.contains(&target.password), "{message}");
    // Only the system's roots: the test CA is not among them.
    let (err, elapsed) = connect_err(&target.url(), RedisOptions::default()).await;
    assert!(matches!(err, ConnectError::Tls { .. }), "{err:?}");
    assert!(elapsed < FAST_FAILURE, "took {elapsed:?}");
    // An address the certificate does not list (it names 127.0.0.1, ::1 and
    // localhost; the test servers also listen on 127.0.0.2).
    let mut elsewhere = target.clone();
    elsewhere.host = "127.0.0.2".into();
    let (err, elapsed) = connect_err(
        &elsewhere.url(),
        RedisOptions::default().with_ca_file(&target.ca),
    )
    .await;
    assert!(matches!(err, ConnectError::Tls { .. }), "{err:?}");
    assert!(elapsed < FAST_FAILURE, "took {elapsed:?}");
    assert!(err.to_string().contains("does not name the host"), "{err}");
}

#[tokio::test]
async fn tls_and_plaintext_mismatches_are_explained() {
    let target = tls_target();
    // rediss:// against a plaintext server.
    let plain = common::redis_url();
    let tls_to_plain = plain.replacen("redis://", "rediss://", 1);
    // Redis waits for the end of a command line that the ClientHello never sends, so
    // this fails after the connection timeout, not on an answer.
    let (err, elapsed) = connect_err(
        &tls_to_plain,
        RedisOptions::default()
            .with_ca_file(&target.ca)
            .with_connection_timeout(Duration::from_secs(1)),
    )
    .await;
    assert!(matches!(err, ConnectError::Unreachable { .. }), "{err:?}");
    assert!(elapsed < FAST_FAILURE, "took {elapsed:?}");
    assert!(
        err.to_string().contains("redis://"),
        "says to use redis://: {err}"
    );
    // redis:// against the TLS port.
    let plain_to_tls = target.url().replacen("rediss://", "redis://", 1);
    let (err, elapsed) = connect_err(&plain_to_tls, RedisOptions::default()).await;
    assert!(elapsed < FAST_FAILURE, "took {elapsed:?}");
    assert!(err.to_string().contains("rediss://"), "{err}");
    assert!(!err.to_string().contains(&target.password), "{err}");
    // TLS options with a plaintext URL are refused rather than silently unused.
    let (err, _) = connect_err(&plain, RedisOptions::default().with_ca_file(&target.ca)).await;
    assert!(matches!(err, ConnectError::Options(_)), "{err:?}");
    // Unreadable or wrong files.
    let (err, _) = connect_err(
        &target.url(),
        RedisOptions::default().with_ca_file("/nonexistent/ca.pem"),
    )
    .await;
    assert!(matches!(err, ConnectError::TlsFile { .. }), "{err:?}");
    let key = target.ca.with_file_name("server.key");
    let (err, _) = connect_err(&target.url(), RedisOptions::default().with_ca_file(&key)).await;
    assert!(matches!(err, ConnectError::TlsFile { .. }), "{err:?}");
}

#[tokio::test]
async fn mutual_tls_needs_the_client_certificate() {
    let server = TlsServer::start("yes");
    let target = server.target();
    let (err, elapsed) = connect_err(
        &target.url(),
        RedisOptions::default().with_ca_file(&target.ca),
    )
    .await;
    assert!(matches!(err, ConnectError::Tls { .. }), "{err:?}");
    assert!(elapsed < FAST_FAILURE, "took {elapsed:?}");
    assert!(err.to_string().contains("client certificate"), "{err}");
    let (cert, key) = server.certs.client();
    let store = connect(
        &target.url(),
        RedisOptions::default()
            .with_ca_file(&target.ca)
            .with_client_cert(&cert, &key),
    )
    .await;
    small_league_flow(store, "mtls").await;
    // A certificate without its key is refused before connecting.
    let mut half = RedisOptions::default().with_ca_file(&target.ca);
    half.client_cert = Some(cert);
    let (err, _) = connect_err(&target.url(), half).await;
    assert!(matches!(err, ConnectError::Options(_)), "{err:?}");
}

/// The command line has no CA option: a private CA is trusted through
/// `SSL_CERT_FILE`, which rustls-native-certs reads as OpenSSL does.
#[test]
fn the_command_line_trusts_ssl_cert_file() {
    let target = tls_target();
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("season.toml");
    let text = std::fs::read_to_string("config/season.toml")
        .expect("config/season.toml")
        .replacen(
            "key_prefix = \"lk\"",
            &format!("key_prefix = \"{}\"", unique_prefix("cli_tls")),
            1,
        );
    std::fs::write(&config, text).expect("write season");
    let run = |ssl_cert_file: Option<&std::path::Path>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_leaguekit"));
        cmd.arg("--config")
            .arg(&config)
            .arg("--redis")
            .arg(target.url())
            .args(["join", "ana"])
            .env_remove("SSL_CERT_DIR");
        match ssl_cert_file {
            Some(file) => cmd.env("SSL_CERT_FILE", file),
            None => cmd.env_remove("SSL_CERT_FILE"),
        };
        cmd.output().expect("run leaguekit")
    };
    let out = run(Some(&target.ca));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"player\":\"ana\""));
    let out = run(None);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("SSL_CERT_FILE"), "{stderr}");
    assert!(!stderr.contains(&target.password), "{stderr}");
}

// ---------------------------------------------------------------------------------
// Redis Cluster

#[tokio::test]
async fn a_league_runs_on_a_three_master_cluster() {
    let url = cluster_url();
    let began = Instant::now();
    let store = connect(&url, RedisOptions::default()).await;
    eprintln!("cluster connect in {:?}", began.elapsed());
    small_league_flow(store.clone(), "cluster").await;
    // The keys really are spread over the masters.
    let mut nodes_with_keys = 0;
    for port in cluster_ports(&url) {
        let size = command(port, &["DBSIZE"]).expect("dbsize");
        if size.trim_start_matches(':').trim() != "0" {
            nodes_with_keys += 1;
        }
    }
    assert!(nodes_with_keys >= 2, "keys on {nodes_with_keys} node(s)");
}

#[tokio::test]
async fn scripts_survive_a_script_flush_on_every_node() {
    let url = cluster_url();
    let store = connect(&url, RedisOptions::default()).await;
    let (league, _clock) = pinned(season(&unique_prefix("flush"), 100), store);
    league
        .submit("ana", 5, at(10).request_id("a1"))
        .await
        .expect("submit");
    // As after a failover or resharding: the node that now owns a slot has an empty
    // script cache.
    for port in cluster_ports(&url) {
        let ok = command(port, &["SCRIPT", "FLUSH"]).expect("script flush");
        assert!(ok.starts_with("+OK"), "{ok}");
    }
    // EVALSHA meets NOSCRIPT; redis-rs loads the script and runs it again, on the
    // resending connection (request id) and on the at-most-once one (none).
    let s = league
        .submit("ana", 5, at(11).request_id("a2"))
        .await
        .expect("submit after SCRIPT FLUSH");
    assert_eq!(s.score, 10);
    for port in cluster_ports(&url) {
        command(port, &["SCRIPT", "FLUSH"]).expect("script flush");
    }
    let s = league
        .submit("ana", 5, at(12))
        .await
        .expect("submit without id");
    assert_eq!(s.score, 15);
    for port in cluster_ports(&url) {
        command(port, &["SCRIPT", "FLUSH"]).expect("script flush");
    }
    let period = league.period_at(Some(start())).expect("period").id;
    let me = league.player("ana", Some(period)).await.expect("player");
    assert_eq!(me.score, Some(15));
    // A page built after a flush: its MULTI meets NOSCRIPT for open_page.lua, which
    // is loaded on every primary before the build runs again; the page is then kept.
    for port in cluster_ports(&url) {
        command(port, &["SCRIPT", "FLUSH"]).expect("script flush");
    }
    ana_alone_built_then_kept(&league, period).await;
}

#[tokio::test]
async fn a_cluster_url_with_a_dead_seed_connects_through_another() {
    let url = cluster_url();
    let live = cluster_ports(&url);
    let dead = common::free_port();
    let seeds = format!("redis+cluster://127.0.0.1:{dead},127.0.0.1:{}", live[1]);
    let began = Instant::now();
    let store = connect(&seeds, RedisOptions::default()).await;
    let elapsed = began.elapsed();
    eprintln!("cluster with a dead seed: connected in {elapsed:?}");
    assert!(elapsed < FAST_FAILURE, "took {elapsed:?}");
    small_league_flow(store, "deadseed").await;
    // No seed at all: an Unreachable error naming the seeds.
    let dead2 = common::free_port();
    let (err, elapsed) = connect_err(
        &format!("redis+cluster://127.0.0.1:{dead},127.0.0.1:{dead2}"),
        RedisOptions::default(),
    )
    .await;
    assert!(matches!(err, ConnectError::Unreachable { .. }), "{err:?}");
    assert!(err.to_string().contains(&dead2.to_string()), "{err}");
    // Default options: 6 retries with a doubling delay from 100 ms.
    assert!(elapsed < Duration::from_secs(15), "took {elapsed:?}");
}

#[tokio::test]
async fn cluster_credentials_in_the_url() {
    let url = cluster_url();
    let ports = cluster_ports(&url);
    let user = unique_prefix("acl");
    let password = "cl@ster:pw/%";
    for &port in &ports {
        let ok = command(
            port,
            &[
                "ACL",
                "SETUSER",
                &user,
                "on",
                &format!(">{password}"),
                "~*",
                "&*",
                "+@all",
            ],
        )
        .expect("acl setuser");
        assert!(ok.starts_with("+OK"), "{ok}");
    }
    let hosts: Vec<String> = ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
    let good = format!(
        "redis+cluster://{user}:cl%40ster%3Apw%2F%25@{}",
        hosts.join(",")
    );
    let store = connect(&good, RedisOptions::default()).await;
    small_league_flow(store, "clusteracl").await;
    let bad = format!("redis+cluster://{user}:wrong@{}", hosts.join(","));
    let (err, elapsed) = connect_err(&bad, RedisOptions::default()).await;
    assert!(matches!(err, ConnectError::Auth { .. }), "{err:?}");
    assert!(elapsed < FAST_FAILURE, "took {elapsed:?}");
    for &port in &ports {
        command(port, &["ACL", "DELUSER", &user]).expect("acl deluser");
    }
}

#[tokio::test]
async fn a_cluster_url_for_a_single_server_is_explained() {
    let plain = common::redis_url();
    let as_cluster = plain.replacen("redis://", "redis+cluster://", 1);
    let (err, elapsed) = connect_err(&as_cluster, RedisOptions::default()).await;
    assert!(matches!(err, ConnectError::Refused { .. }), "{err:?}");
    assert!(elapsed < FAST_FAILURE, "took {elapsed:?}");
    assert!(err.to_string().contains("not a Redis Cluster"), "{err}");
}

/// A rollover of a tiny league on the cluster: every step is one script on one slot,
/// and each bracket grants one reward (a single-command pipeline). Rollovers whose
/// grants span slots wait for the store to group pipelines by slot.
#[tokio::test]
async fn a_tiny_rollover_runs_on_the_cluster() {
    let store = connect(&cluster_url(), RedisOptions::default()).await;
    let (league, clock) = pinned(season(&unique_prefix("clroll"), 2), store);
    for (i, player) in ["a", "b", "c", "d", "e"].iter().enumerate() {
        league
            .submit(player, 10 + i as i64, at(10).request_id("x"))
            .await
            .expect("submit");
    }
    // Period 1 may close max_skew (5 s) after its end.
    clock.set(start() + chrono::Duration::days(1) + chrono::Duration::seconds(5));
    let report = league
        .rollover(None, leaguekit::RolloverOptions::default())
        .await
        .expect("rollover");
    assert_eq!(report.closed.len(), 1);
    let rewards = league.rewards("e").await.expect("rewards");
    assert_eq!(rewards.len(), 1, "{rewards:?}");
}

/// A private cluster with one node stopped: commands for its slots fail with a
/// typed error instead of hanging, within the cluster response timeout.
#[tokio::test]
async fn a_stopped_node_is_an_error_not_a_hang() {
    let mut cluster = Cluster::start();
    let url = cluster.url();
    let options = RedisOptions::default()
        .with_cluster_response_timeout(Duration::from_secs(2))
        .with_response_timeout(Duration::from_secs(1));
    let store = connect(&url, options).await;
    let (league, _clock) = pinned(season(&unique_prefix("stop"), 100), store);
    league
        .submit("ana", 1, at(1).request_id("1"))
        .await
        .expect("submit");
    drop(cluster.nodes.remove(2));
    let began = Instant::now();
    let (mut failures, mut slowest) = (0, Duration::ZERO);
    for i in 0..12 {
        let one = Instant::now();
        if let Err(e) = league
            .set_profile(&format!("p{i}"), &[("name".into(), "x".into())])
            .await
        {
            if failures == 0 {
                eprintln!("a write to the stopped node: {e}");
            }
            failures += 1;
        }
        slowest = slowest.max(one.elapsed());
    }
    eprintln!(
        "one node down: {failures}/12 profile writes failed in {:?}, the slowest took {slowest:?}",
        began.elapsed()
    );
    assert!(failures > 0, "no player key on the stopped node?");
    // At most command_attempts (3) requests of cluster_response_timeout (2 s) each,
    // plus the retry delays.
    assert!(slowest < Duration::from_secs(7), "took {slowest:?}");
}

/// `--help` shows where `--redis` comes from, but never the URL in the environment,
/// which may carry a password.
#[test]
fn help_never_prints_the_url_from_the_environment() {
    for flag in ["-h", "--help"] {
        let out = Command::new(env!("CARGO_BIN_EXE_leaguekit"))
            .arg(flag)
            .env("LEAGUEKIT_REDIS", "rediss://app:Hunter2Secret@h:6380/")
            .output()
            .expect("run leaguekit");
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(help.contains("redis+cluster://"), "{help}");
        assert!(help.contains("LEAGUEKIT_REDIS"), "{help}");
        assert!(!help.contains("Hunter2Secret"), "{help}");
    }
}

/// A Redis Cluster over TLS (as managed clusters with in-transit encryption are):
/// TLS to every node the cluster announces, verified against the private CA.
#[tokio::test]
async fn a_league_runs_on_a_tls_cluster() {
    let dir = tempfile::tempdir().expect("temp dir");
    let certs = TestCerts::make(dir.path());
    let cluster = Cluster::start_tls(&certs);
    let url = cluster.url();
    assert!(url.starts_with("rediss+cluster://"), "{url}");
    let store = connect(&url, RedisOptions::default().with_ca_file(certs.ca())).await;
    small_league_flow(store, "tlscluster").await;
    // Without the CA: the handshake fails on the first answer.
    let (err, elapsed) = connect_err(&url, RedisOptions::default()).await;
    assert!(matches!(err, ConnectError::Tls { .. }), "{err:?}");
    assert!(elapsed < FAST_FAILURE, "took {elapsed:?}");
    // Scripts survive an empty script cache here too.
    for port in cluster.ports() {
        let ok = cluster
            .command(port, &["SCRIPT", "FLUSH"])
            .expect("script flush");
        assert!(ok.contains("OK"), "{ok}");
    }
    let store = connect(&url, RedisOptions::default().with_ca_file(certs.ca())).await;
    small_league_flow(store, "tlscluster2").await;
}

/// Unix sockets keep working as they did when redis-rs parsed the URL.
#[tokio::test]
async fn unix_socket_urls_still_work() {
    let socket = std::env::temp_dir().join(format!("{}.sock", unique_prefix("sock")));
    let socket_arg = socket.to_string_lossy().into_owned();
    let _server = common::RedisServer::start(&["--unixsocket", &socket_arg]);
    let store = connect(
        &format!("unix://{}?protocol=resp3", socket.display()),
        RedisOptions::default(),
    )
    .await;
    small_league_flow(store, "unix").await;
    let _ = std::fs::remove_file(&socket);
}

/// Resharding under a running store: the slot of a bracket moves to another node
/// whose script cache is empty. Both the resending connection (an update with a
/// request id) and the at-most-once one (without) follow the move and reload the
/// script, and no update is applied twice.
#[tokio::test]
async fn a_slot_moved_under_a_running_store() {
    let cluster = Cluster::start();
    let ports = cluster.ports();
    let store = connect(&cluster.url(), RedisOptions::default()).await;
    let season = season(&unique_prefix("reshard"), 100);
    let board = Keys::of(&season).bracket(1, "bronze", 1).board;
    let (league, _clock) = pinned(season, store);
    let s = league
        .submit("ana", 5, at(10).request_id("a1"))
        .await
        .expect("submit");
    assert_eq!((s.tier.as_str(), s.bracket), ("bronze", 1));
    let slot: u16 = redis::cmd("CLUSTER")
        .arg("KEYSLOT")
        .arg(&board)
        .query(&mut node(ports[0]))
        .expect("keyslot");
    let (_, from) = owner_of(ports[0], slot);
    let to = *ports.iter().find(|&&p| p != from).expect("another node");
    move_slot(&ports, slot, from, to, false);
    assert_eq!(owner_of(ports[0], slot).1, to);
    for &port in &ports {
        let _: () = redis::cmd("SCRIPT")
            .arg("FLUSH")
            .query(&mut node(port))
            .expect("script flush");
    }
    // Without a request id first: MOVED comes back to the store, which retries on
    // the refreshed slot map; then NOSCRIPT, then the script runs once.
    let s = league
        .submit("ana", 5, at(11))
        .await
        .expect("submit after the move");
    assert_eq!(s.score, 10);
    let s = league
        .submit("ana", 5, at(12).request_id("a2"))
        .await
        .expect("submit with an id after the move");
    assert_eq!(s.score, 15);
    let exists: i64 = redis::cmd("EXISTS")
        .arg(&board)
        .query(&mut node(to))
        .expect("exists");
    assert_eq!(exists, 1, "the board lives on the new node");
    let period = league.period_at(Some(start())).expect("period").id;
    let me = league.player("ana", Some(period)).await.expect("player");
    assert_eq!(me.score, Some(15));
    // A page of the moved slot, built on its new node and then kept.
    ana_alone_built_then_kept(&league, period).await;
}

/// Bronze bracket 1 of `period` holds ana alone with 15, read once built and once
/// kept, the same page both times.
async fn ana_alone_built_then_kept(league: &League<RedisStore>, period: PeriodId) {
    let built = league
        .standings("bronze", 1, Some(period), 0, 10)
        .await
        .expect("built page");
    assert_eq!(
        built
            .entries
            .iter()
            .map(|e| (e.player.as_str(), e.score))
            .collect::<Vec<_>>(),
        [("ana", 15)]
    );
    let kept = league
        .standings("bronze", 1, Some(period), 0, 10)
        .await
        .expect("kept page");
    assert_eq!(kept, built);
}

// ---------------------------------------------------------------------------------
// The pool of connections on one server

/// The clients of the server at `port` other than the one asking, each as its
/// `CLIENT LIST` line.
fn other_clients(port: u16) -> Vec<String> {
    let list = command(port, &["CLIENT", "LIST"]).expect("client list");
    list.lines()
        .filter(|line| !line.contains("cmd=client|list"))
        .map(str::to_owned)
        .collect()
}

/// A store on one server opens `RedisOptions::connections` connections and spreads
/// its calls over all of them; a pool of one is one connection. A private server, so
/// that no other test's clients are counted.
#[tokio::test]
async fn calls_are_spread_over_the_pool_of_connections() {
    for (connections, expected) in [(3, 3), (1, 1), (0, 1)] {
        let server = common::RedisServer::start(&[]);
        let store = connect(
            &server.url(),
            RedisOptions::default().with_connections(connections),
        )
        .await;
        small_league_flow(store.clone(), &format!("pool{connections}")).await;
        let clients = other_clients(server.port);
        assert_eq!(
            clients.len(),
            expected,
            "with_connections({connections}) gave these clients:\n{}",
            clients.join("\n")
        );
        // Every connection's last command was the league's, not the set-up of the
        // connection (HELLO, CLIENT SETINFO, PING): the round robin reached each one.
        for client in &clients {
            let cmd = client
                .split(' ')
                .find_map(|field| field.strip_prefix("cmd="))
                .unwrap_or("?");
            assert!(
                !["NULL", "hello", "ping", "select", "auth", "?"].contains(&cmd)
                    && !cmd.starts_with("client"),
                "a connection of the pool carried none of the league's calls: {client}"
            );
        }
        drop(store);
    }
}

/// Redis's calls of a kind (`cmdstat_<name>` of INFO commandstats) since the last
/// CONFIG RESETSTAT.
fn calls_of(port: u16, name: &str) -> u64 {
    let stats = command(port, &["INFO", "commandstats"]).expect("info");
    stats
        .lines()
        .find_map(|line| line.strip_prefix(&format!("cmdstat_{name}:calls=")))
        .and_then(|rest| rest.split(',').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Concurrent single joins on one server are gathered into batches of the bulk path:
/// far fewer script calls than four a join, and the same placements as joins one by
/// one (brackets filled in order, each player once). With gathering off, every join
/// makes its own four calls.
#[tokio::test]
async fn concurrent_joins_are_gathered_into_batches() {
    const JOINS: usize = 60;
    for gather in [true, false] {
        let server = common::RedisServer::start(&[]);
        let store = connect(
            &server.url(),
            RedisOptions::default().with_gather_joins(gather),
        )
        .await;
        let (league, _clock) = pinned(season(&unique_prefix("gather"), 10), store);
        let league = std::sync::Arc::new(league);
        command(server.port, &["CONFIG", "RESETSTAT"]).expect("resetstat");
        let joins: Vec<_> = (0..JOINS)
            .map(|i| {
                let league = league.clone();
                tokio::spawn(async move { league.join(&format!("g{i}"), None).await })
            })
            .collect();
        let mut per_bracket = std::collections::BTreeMap::new();
        for join in joins {
            let placed = join.await.expect("task").expect("join");
            *per_bracket.entry(placed.bracket).or_insert(0) += 1;
        }
        let calls = calls_of(server.port, "evalsha");
        eprintln!("gather {gather}: {calls} script calls for {JOINS} joins");
        // Brackets of 10, filled in order: 1..=6, ten players each.
        assert_eq!(
            per_bracket,
            (1..=6).map(|b| (b, 10)).collect(),
            "gather {gather}"
        );
        if gather {
            assert!(
                calls < 2 * JOINS as u64,
                "{calls} script calls for {JOINS} gathered joins"
            );
        } else {
            assert!(
                calls >= 4 * JOINS as u64,
                "{calls} script calls for {JOINS} joins alone"
            );
        }
        // Joined again, each player is where they were.
        for i in [0, 17, 59] {
            let player = format!("g{i}");
            let again = league.join(&player, None).await.expect("join again");
            let view = league.player(&player, None).await.expect("player");
            assert_eq!(view.bracket, Some(again.bracket));
        }
    }
}

/// A server behind one address that refuses a script whose keys span slots (a
/// sharding proxy; here a one-node Redis Cluster owning every slot, reached by a
/// plain `redis://` URL) answers CROSSSLOT; the store then keeps its batches to one
/// slot per call, and every placement succeeds.
#[tokio::test]
async fn a_server_refusing_cross_slot_scripts_gets_calls_of_one_slot() {
    let server = common::RedisServer::start(&["--cluster-enabled", "yes"]);
    command(server.port, &["CLUSTER", "ADDSLOTSRANGE", "0", "16383"]).expect("addslots");
    let began = Instant::now();
    while !command(server.port, &["CLUSTER", "INFO"])
        .expect("cluster info")
        .contains("cluster_state:ok")
    {
        assert!(began.elapsed() < Duration::from_secs(20), "cluster not ok");
        std::thread::sleep(Duration::from_millis(50));
    }
    let store = connect(&server.url(), RedisOptions::default()).await;
    let (league, _clock) = pinned(season(&unique_prefix("proxy"), 10), store);
    let items: Vec<leaguekit::JoinItem> = (0..40)
        .map(|i| leaguekit::JoinItem::new(format!("x{i}")))
        .collect();
    for (i, placed) in league.join_many(&items).await.into_iter().enumerate() {
        let placed = placed.unwrap_or_else(|e| panic!("x{i}: {e}"));
        assert_eq!(placed.bracket, i as u32 / 10 + 1, "x{i}");
    }
    // Refused once, then never sent again across slots.
    let refused = calls_of_failed(server.port, "evalsha");
    assert!(refused >= 1, "the server never refused a cross-slot script");
    let more: Vec<leaguekit::JoinItem> = (40..80)
        .map(|i| leaguekit::JoinItem::new(format!("x{i}")))
        .collect();
    for placed in league.join_many(&more).await {
        placed.expect("join after the first refusal");
    }
    assert_eq!(calls_of_failed(server.port, "evalsha"), refused);
    // A new store whose first cross-slot call is a batch of score updates (40 players
    // in four brackets: one update.lua call on a server that takes any slots): refused
    // once, sent again by slot, every update applied once.
    let fresh = connect(&server.url(), RedisOptions::default()).await;
    let (updating, _clock) = pinned(league.season().clone(), fresh);
    let items: Vec<leaguekit::BatchItem> = (0..40)
        .map(|i| leaguekit::BatchItem::new(format!("x{i}"), 7))
        .collect();
    for (i, sub) in updating.submit_many(&items).await.into_iter().enumerate() {
        let sub = sub.unwrap_or_else(|e| panic!("x{i}: {e}"));
        assert_eq!((sub.score, sub.applied), (7, true), "x{i}");
    }
    assert_eq!(calls_of_failed(server.port, "evalsha"), refused + 1);
    small_league_flow(
        connect(&server.url(), RedisOptions::default()).await,
        "proxy",
    )
    .await;
}

/// Redis's refused calls of a kind (`rejected_calls` of INFO commandstats: refused before
/// they ran, as CROSSSLOT is).
fn calls_of_failed(port: u16, name: &str) -> u64 {
    let stats = command(port, &["INFO", "commandstats"]).expect("info");
    stats
        .lines()
        .find(|line| line.starts_with(&format!("cmdstat_{name}:")))
        .and_then(|line| {
            line.split(',')
                .find_map(|f| f.strip_prefix("rejected_calls="))
        })
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}
