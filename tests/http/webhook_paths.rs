//! Webhooks on the paths production takes, against real `serve` processes and a real
//! receiver, counting what arrived against what the event logs hold (read with the
//! library from the same Redis):
//!
//! - a scheduler catching up after downtime closes two periods in one run, after a
//!   staging clock moved two days while no server delivered: every event of both
//!   periods (placements logged meanwhile, closes, outcomes, rewards) arrives, on one
//!   server and on a cluster; and again with the delivering server killed (SIGKILL)
//!   twice mid-delivery, repeating only events in flight;
//! - a URL's starting point: a URL first seen with `LEAGUEKIT_WEBHOOK_FROM=start`
//!   gets every kept event, one first seen with the default (`now`) only what is
//!   logged afterwards, whatever kind of log;
//! - a hanging receiver beside a healthy one: the healthy one gets everything while
//!   the other holds only its own slots;
//! - redirects (301, 302, 307, 308) are failed attempts, never followed;
//! - dead letters: at most `LEAGUEKIT_WEBHOOK_DEAD_MAX` per URL (the oldest dropped,
//!   counted), listed by pages, replayed only to a URL a server delivers to;
//! - events trimmed from a full log before delivery become a dead letter naming the
//!   run, and count in `leaguekit_webhook_trimmed_total`;
//! - in each, a player's `reward.granted` comes after their bracket's close and their
//!   outcome.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use leaguekit::store::{LogRead, Pos};
use leaguekit::{League, RedisOptions, RedisStore, Season};
use reqwest::Method;
use serde_json::{Value, json};

use crate::common;
use crate::serving::{ADMIN, ADMIN_ENTRY, SERVER, Served, Start};
use crate::webhooks::{Hit, Mode, Receiver, call, check_posts, dead_until, season, start};

/// Every event the webhooks send by default (all but `player.overtaken`) in the logs
/// of `periods` and of the player buckets: id → type.
async fn logged(config: &Path, redis: &str, periods: &[u64]) -> BTreeMap<String, String> {
    let season = Season::load(config).expect("season");
    let store = RedisStore::connect(redis, RedisOptions::default())
        .await
        .expect("redis");
    let league = League::new(season, store);
    let events = league.events();
    let mut logs = events.bucket_logs();
    for p in periods {
        logs.extend(events.logs_of_period(*p).await.expect("a period's logs"));
    }
    let reads: Vec<LogRead<'_>> = logs
        .iter()
        .map(|log| LogRead {
            log,
            after: Pos::START,
            limit: 100_000,
        })
        .collect();
    let mut out = BTreeMap::new();
    for (log, read) in logs.iter().zip(events.read(&reads).await) {
        for e in read.expect("a log") {
            let kind = leaguekit::events::kind_of(&e.body).unwrap_or("?");
            if kind != "player.overtaken" {
                out.insert(leaguekit::events::event_id(log, e.pos), kind.to_owned());
            }
        }
    }
    out
}

/// `leaguekit rollover` against `redis`: its report.
fn rollover(config: &Path, redis: &str) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_leaguekit"))
        .arg("--config")
        .arg(config)
        .arg("--redis")
        .arg(redis)
        .arg("rollover")
        .env_remove("LEAGUEKIT_CONFIG")
        .env_remove("LEAGUEKIT_REDIS")
        .env("LEAGUEKIT_LOG", "warn")
        .output()
        .expect("run leaguekit rollover");
    assert!(
        out.status.success(),
        "rollover: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("a JSON report")
}

/// Players `from..to` (`p<i>`) join without a time of their own (the league clock
/// decides, staging offset included) and score `i`.
async fn play(http: &reqwest::Client, served: &Served, from: usize, to: usize) {
    for i in from..to {
        let path = format!("/v1/players/p{i}/scores");
        let (s, v) = call(
            http,
            served,
            Method::POST,
            &path,
            SERVER,
            Some(json!({ "value": i + 1 })),
        )
        .await;
        assert_eq!(s.as_u16(), 200, "{path}: {v}");
    }
}

/// Moves the staging clock by `by`.
async fn advance(http: &reqwest::Client, served: &Served, by: &str) {
    let (s, v) = call(
        http,
        served,
        Method::POST,
        "/v1/clock",
        ADMIN,
        Some(json!({ "advance": by, "reason": "QA: a day passes" })),
    )
    .await;
    assert_eq!(s.as_u16(), 200, "{v}");
}

/// A server that logs but delivers nothing (no webhook URLs, no scheduler).
fn quiet(config: &tempfile::NamedTempFile, redis: &str) -> Served {
    Start {
        redis: redis.to_owned(),
        admin_tokens: Some(ADMIN_ENTRY),
        ..Start::new(config.path())
    }
    .spawn()
}

/// Waits until `receiver` acknowledged every id of `want`; then checks the POSTs and
/// answers how many acknowledged POSTs repeated an id.
async fn wait_for_all(receiver: &Receiver, want: &BTreeMap<String, String>, what: &str) -> usize {
    let ids: BTreeSet<String> = want.keys().cloned().collect();
    receiver
        .wait(Duration::from_secs(120), what, |h| {
            let got: BTreeSet<&String> = h.iter().map(|h| &h.id).collect();
            ids.iter().all(|id| got.contains(id))
        })
        .await;
    let hits = receiver.hits();
    check_posts(&hits);
    let acked = receiver.acked();
    let unique = receiver.acked_ids();
    let extra: Vec<&String> = unique.iter().filter(|id| !want.contains_key(*id)).collect();
    assert!(
        extra.is_empty(),
        "{what}: events that were not logged: {extra:?}"
    );
    acked.len() - unique.len()
}

/// Each acknowledged `reward.granted` came after its bracket's `bracket.closed` and
/// its player's outcome (their first acknowledgements), as docs/http.md promises.
fn check_causal_order(hits: &[Hit]) {
    let acked: Vec<Value> = hits
        .iter()
        .filter(|h| h.answered == Mode::Ok)
        .map(Hit::event)
        .collect();
    let first = |pred: &dyn Fn(&Value) -> bool| acked.iter().position(pred);
    let mut rewards = 0;
    for (i, e) in acked.iter().enumerate() {
        if e["type"] != "reward.granted" {
            continue;
        }
        rewards += 1;
        let source = e["data"]["source"].as_str().expect("a source");
        let mut parts = source.split('/');
        let period: u64 = parts.next().and_then(|p| p.parse().ok()).expect("period");
        let tier = parts.next().expect("tier").to_owned();
        let bracket: u64 = parts.next().and_then(|b| b.parse().ok()).expect("bracket");
        let closed = first(&|x: &Value| {
            x["type"] == "bracket.closed"
                && x["period"] == period
                && x["tier"] == tier.as_str()
                && x["bracket"] == bracket
        });
        let outcome = first(&|x: &Value| {
            matches!(
                x["type"].as_str(),
                Some("player.promoted" | "player.demoted" | "player.stayed")
            ) && x["period"] == period
                && x["player"] == e["player"]
        });
        assert!(
            closed.is_some_and(|c| c < i) && outcome.is_some_and(|o| o < i),
            "{e}: its bracket's close at {closed:?}, the outcome at {outcome:?}, the reward at {i}"
        );
    }
    assert!(rewards > 0, "no reward to check the order of");
}

/// A delivering server sees `receiver`'s URL (player `p0` placed and delivered), then
/// stops (SIGTERM): from then on the URL is owed every event logged.
async fn seen(
    config: &tempfile::NamedTempFile,
    redis: &str,
    receiver: &Receiver,
    http: &reqwest::Client,
) {
    let mut first = Start {
        redis: redis.to_owned(),
        ..start(config, receiver, &[])
    }
    .spawn();
    play(http, &first, 0, 1).await;
    receiver
        .wait(Duration::from_secs(30), "the first placement", |h| {
            h.iter().any(|h| h.kind == "player.placed")
        })
        .await;
    first.terminate();
    assert!(
        first.wait(Duration::from_secs(20)).is_some(),
        "serve did not stop"
    );
}

/// The play of the catch-up tests: a URL seen by a delivering server, then two periods
/// played and the staging clock moved past both with no server delivering, then one
/// rollover closing both. Answers the config and the logged events.
async fn two_periods_unseen(
    tag: &str,
    redis: &str,
    receiver: &Receiver,
) -> (tempfile::NamedTempFile, BTreeMap<String, String>) {
    let config = season(tag, true);
    let http = reqwest::Client::new();
    seen(&config, redis, receiver, &http).await;

    let quiet = quiet(&config, redis);
    play(&http, &quiet, 1, 12).await;
    advance(&http, &quiet, "1d").await;
    play(&http, &quiet, 12, 24).await;
    advance(&http, &quiet, "1d").await;
    drop(quiet);
    let report = rollover(config.path(), redis);
    let closed: Vec<u64> = report["closed"]
        .as_array()
        .expect("closed periods")
        .iter()
        .filter_map(|p| p["period"].as_u64())
        .collect();
    assert_eq!(closed, [1, 2], "one run closes both periods: {report}");
    let want = logged(config.path(), redis, &[1, 2, 3]).await;
    let count = |kind: &str| want.values().filter(|k| *k == kind).count();
    assert_eq!(count("player.placed"), 24, "{want:?}");
    assert_eq!(count("period.closed"), 2, "{want:?}");
    assert!(
        count("bracket.closed") >= 2 && count("reward.granted") >= 2,
        "{want:?}"
    );
    (config, want)
}

async fn catch_up_is_delivered(tag: &str, redis: String) {
    let receiver = Receiver::start().await;
    let (config, want) = two_periods_unseen(tag, &redis, &receiver).await;
    let _served = Start {
        redis: redis.clone(),
        ..start(&config, &receiver, &[])
    }
    .spawn();
    let repeated = wait_for_all(&receiver, &want, "both periods' events").await;
    assert_eq!(repeated, 0, "a stop and a start repeat nothing");
    check_causal_order(&receiver.hits());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_catch_up_of_two_periods_loses_nothing() {
    catch_up_is_delivered("hook_catchup", common::redis_url()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_catch_up_of_two_periods_loses_nothing_on_a_cluster() {
    catch_up_is_delivered("hook_catchup_cl", common::cluster::cluster_url()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_mid_catch_up_then_new_urls_from_start_and_from_now() {
    let redis = common::redis_url();
    let receiver = Receiver::start().await;
    let (config, want) = two_periods_unseen("hook_kill", &redis, &receiver).await;
    let before = receiver.acked().len();

    // Killed twice while delivering, at spread points; a third server finishes. The
    // killed servers' leases expire after 30 s.
    let mut kills = 0;
    for after in [3, 20] {
        let served = start(&config, &receiver, &[]).spawn();
        let deadline = Instant::now() + Duration::from_secs(90);
        while receiver.acked().len() < before + after {
            assert!(Instant::now() < deadline, "no delivery after a restart");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        drop(served);
        kills += 1;
    }
    let third = start(&config, &receiver, &[]).spawn();
    let repeated = wait_for_all(&receiver, &want, "every event after two kills").await;
    // A kill repeats at most the events in flight: one per (log, URL) pair.
    assert!(
        repeated <= kills * 32,
        "{repeated} repeats after {kills} kills"
    );
    drop(third);

    // A URL first seen with FROM=start gets every kept event, of every kind of log;
    // the known URL, nothing again.
    let fresh = Receiver::start().await;
    let both = format!("{},{}", receiver.url, fresh.url);
    let seen = receiver.hits().len();
    let served = start(
        &config,
        &receiver,
        &[
            ("LEAGUEKIT_WEBHOOK_URLS", &both),
            ("LEAGUEKIT_WEBHOOK_FROM", "start"),
        ],
    )
    .spawn();
    assert_eq!(
        wait_for_all(&fresh, &want, "a new URL from the start").await,
        0
    );
    assert_eq!(
        receiver.hits().len(),
        seen,
        "a known URL starts where it was"
    );
    drop(served);

    // A URL first seen with the default (now) gets only what is logged afterwards.
    let late = Receiver::start().await;
    let served = start(&config, &late, &[]).spawn();
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(late.hits().len(), 0, "{:?}", late.hits());
    let http = reqwest::Client::new();
    play(&http, &served, 100, 101).await;
    late.wait(Duration::from_secs(30), "the new placement", |h| {
        !h.is_empty()
    })
    .await;
    tokio::time::sleep(Duration::from_secs(6)).await;
    let hits = late.hits();
    check_posts(&hits);
    let kinds: Vec<&str> = hits.iter().map(|h| h.kind.as_str()).collect();
    assert_eq!(kinds, ["player.placed"], "{hits:?}");
    assert_eq!(hits[0].event()["player"], "p100");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_receiver_never_slows_a_healthy_one() {
    let redis = common::redis_url();
    let hanging = Receiver::start().await;
    hanging.set(Mode::Hang);
    let healthy = Receiver::start().await;
    // Brackets of 5: a hundred players make 20 brackets and a hundred rewards, so
    // more logs have events than one URL's slots.
    let config = season("hook_hang", true);
    let text = std::fs::read_to_string(config.path()).expect("season");
    std::fs::write(config.path(), text.replacen("size = 100", "size = 5", 1)).expect("write");
    let urls = format!("{},{}", hanging.url, healthy.url);
    let served = start(&config, &healthy, &[("LEAGUEKIT_WEBHOOK_URLS", &urls)]).spawn();
    let http = reqwest::Client::new();
    play(&http, &served, 0, 100).await;
    advance(&http, &served, "1d").await;
    let report = rollover(config.path(), &redis);
    assert_eq!(report["closed"][0]["period"], 1, "{report}");
    let want = logged(config.path(), &redis, &[1, 2]).await;
    let began = Instant::now();
    assert_eq!(wait_for_all(&healthy, &want, "the healthy URL").await, 0);
    check_causal_order(&healthy.hits());
    assert!(began.elapsed() < Duration::from_secs(60));
    let answered = hanging
        .hits()
        .iter()
        .filter(|h: &&Hit| h.answered == Mode::Ok)
        .count();
    assert!(
        answered == 0 && hanging.hits().len() < want.len(),
        "the hanging URL got {} POSTs of {}",
        hanging.hits().len(),
        want.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirects_are_failed_attempts_never_followed() {
    let elsewhere = Receiver::start().await;
    let receiver = Receiver::start().await;
    receiver.redirect_to(&elsewhere.url);
    receiver.script(&[
        Mode::Redirect(301),
        Mode::Redirect(302),
        Mode::Redirect(307),
        Mode::Redirect(308),
    ]);
    let config = season("hook_redirect", false);
    let served = start(&config, &receiver, &[("LEAGUEKIT_WEBHOOK_ATTEMPTS", "1")]).spawn();
    let http = reqwest::Client::new();
    play(&http, &served, 0, 4).await;
    let dead = dead_until(
        &http,
        &served,
        Duration::from_secs(30),
        "four dead letters",
        |v| v["dead"].as_array().map(Vec::len) == Some(4),
    )
    .await;
    let mut errors: Vec<String> = dead["dead"]
        .as_array()
        .expect("letters")
        .iter()
        .map(|l| l["error"].as_str().unwrap_or("").to_owned())
        .collect();
    errors.sort();
    for (e, code) in errors.iter().zip(["301", "302", "307", "308"]) {
        assert!(
            e.starts_with(&format!("HTTP {code} to {}", elsewhere.url))
                && e.contains("redirects are not followed"),
            "{e}"
        );
    }
    assert_eq!(receiver.hits().len(), 4);
    assert!(elsewhere.hits().is_empty(), "{:?}", elsewhere.hits());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_trimmed_before_delivery_are_reported_never_silent() {
    let redis = common::redis_url();
    let receiver = Receiver::start().await;
    // A log of at most 100 events, and player.overtaken logged (not sent): a load
    // logged while no server delivers pushes placements out before delivery.
    let config = season("hook_trim", false);
    let text = std::fs::read_to_string(config.path()).expect("season");
    let text = text.replacen(
        "[events]\nkeep = \"1d\"\n",
        "[events]\nkeep = \"1d\"\nmax_per_log = 100\novertaken = true\n",
        1,
    );
    assert!(text.contains("max_per_log = 100"), "{text}");
    std::fs::write(config.path(), text).expect("write");
    let http = reqwest::Client::new();
    seen(&config, &redis, &receiver, &http).await;

    let quiet = quiet(&config, &redis);
    for round in 0..3 {
        play(&http, &quiet, 1 + round, 81).await;
    }
    drop(quiet);
    let served = start(&config, &receiver, &[]).spawn();
    let is_trimmed = |l: &Value| {
        l["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("trimmed:"))
    };
    let dead = dead_until(
        &http,
        &served,
        Duration::from_secs(30),
        "a trimmed letter",
        |v| {
            v["dead"]
                .as_array()
                .is_some_and(|a| a.iter().any(is_trimmed))
        },
    )
    .await;
    let trimmed: Vec<Value> = dead["dead"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|l| is_trimmed(l))
        .cloned()
        .collect();
    assert!(
        trimmed[0]["error"]
            .as_str()
            .expect("error")
            .contains("max_per_log")
    );
    let metrics = served.metrics(&http, ADMIN).await;
    let count: f64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("leaguekit_webhook_trimmed_total "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0.0);
    assert!(count >= 1.0, "{metrics}");
    // Nothing to replay: the events are gone.
    let (s, v) = call(
        &http,
        &served,
        Method::POST,
        "/v1/webhooks/dead:replay",
        ADMIN,
        Some(json!({"ids": [trimmed[0]["id"].clone()], "reason": "try"})),
    )
    .await;
    assert_eq!(s.as_u16(), 400, "{v}");
    check_posts(&receiver.hits());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dead_letters_are_bounded_paged_and_replayed_only_to_configured_urls() {
    let receiver = Receiver::start().await;
    receiver.set(Mode::Fail);
    let config = season("hook_deadmax", false);
    let served = start(
        &config,
        &receiver,
        &[
            ("LEAGUEKIT_WEBHOOK_ATTEMPTS", "1"),
            ("LEAGUEKIT_WEBHOOK_DEAD_MAX", "3"),
        ],
    )
    .spawn();
    let http = reqwest::Client::new();
    play(&http, &served, 0, 5).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while receiver.hits().len() < 5 {
        assert!(Instant::now() < deadline, "not five attempts");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let list = |q: &'static str| {
        let http = http.clone();
        let url = served.url(&format!("/v1/webhooks/dead{q}"));
        async move {
            let r = http.get(url).bearer_auth(ADMIN).send().await.expect("list");
            let status = r.status().as_u16();
            (status, r.json::<Value>().await.expect("JSON"))
        }
    };
    // Three kept (the newest), in the order recorded, by pages of two.
    let (s, first) = list("?limit=2").await;
    assert_eq!(s, 200, "{first}");
    assert_eq!(first["dead"].as_array().map(Vec::len), Some(2), "{first}");
    let next = first["next"].as_str().expect("a next page").to_owned();
    let url = served.url(&format!("/v1/webhooks/dead?limit=2&after={next}"));
    let second: Value = http
        .get(url)
        .bearer_auth(ADMIN)
        .send()
        .await
        .expect("page")
        .json()
        .await
        .expect("JSON");
    assert_eq!(second["dead"].as_array().map(Vec::len), Some(1), "{second}");
    assert_eq!(second["next"], Value::Null, "{second}");
    let players: Vec<String> = first["dead"]
        .as_array()
        .into_iter()
        .flatten()
        .chain(second["dead"].as_array().into_iter().flatten())
        .map(|l| {
            let e: Value = serde_json::from_str(l["event"].as_str().expect("event")).expect("JSON");
            e["player"].as_str().expect("player").to_owned()
        })
        .collect();
    assert_eq!(players, ["p2", "p3", "p4"], "the two oldest dropped");
    for bad in ["?after=nope", "?limit=0", "?limit=1001", "?after=1~x~zz"] {
        let (s, v) = list(bad).await;
        assert_eq!(s, 400, "{bad}: {v}");
    }
    let metrics = served.metrics(&http, ADMIN).await;
    assert!(
        metrics
            .lines()
            .any(|l| l.trim() == "leaguekit_webhook_dead_dropped_total 2"),
        "{metrics}"
    );
    drop(served);

    // A server whose only URL is another marks them all; none is posted anywhere, and
    // they stay marked for a server that delivers to their URL.
    let other = Receiver::start().await;
    let served = start(&config, &other, &[]).spawn();
    let (s, v) = call(
        &http,
        &served,
        Method::POST,
        "/v1/webhooks/dead:replay",
        ADMIN,
        Some(json!({"all": true, "reason": "receiver fixed"})),
    )
    .await;
    assert_eq!((s.as_u16(), v["marked"].as_u64()), (200, Some(3)), "{v}");
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(receiver.hits().len(), 5, "posted to a URL not configured");
    assert!(other.hits().is_empty(), "{:?}", other.hits());
    drop(served);
    receiver.set(Mode::Ok);
    let served = start(&config, &receiver, &[]).spawn();
    receiver
        .wait(Duration::from_secs(30), "the three replayed", |h| {
            h.len() == 3
        })
        .await;
    dead_until(
        &http,
        &served,
        Duration::from_secs(10),
        "letters removed once delivered",
        |v| v["dead"] == json!([]),
    )
    .await;
}
