//! Webhooks from `leaguekit serve` on a real Redis, to a receiver in the test: every
//! POST is signed as docs/http.md says; a receiver that fails, times out and recovers
//! gets every event, in order per log, none twice; events given up become dead letters
//! that an operator replays; two servers deliver each event once; a server stopped or
//! killed mid-stream is resumed by the next one, repeating at most the event in flight
//! (a kill) or nothing (a stop); a rollover's events arrive on a Redis Cluster.

use crate::common;
use crate::serving;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use hmac::{Hmac, Mac};
use reqwest::Method;
use serde_json::{Value, json};
use serving::{ADMIN, ADMIN_ENTRY, SERVER, Served, Start, VIEWER, now, rfc};
use sha2::Sha256;

pub(crate) const SECRET: &str = "webhook-secret-for-tests-0123456789abcdef";

/// What the receiver answers to one POST.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// 200 at once.
    Ok,
    /// 500 at once.
    Fail,
    /// No answer for 5 s (past the test servers' 300 ms timeout).
    Hang,
    /// This redirect status, to the receiver's `redirect_to`.
    Redirect(u16),
}

/// One POST received.
#[derive(Debug, Clone)]
pub(crate) struct Hit {
    pub(crate) id: String,
    pub(crate) kind: String,
    signature: String,
    /// Standard Webhooks' `webhook-id`, `webhook-timestamp` and `webhook-signature`.
    webhook_id: String,
    webhook_timestamp: String,
    webhook_signature: String,
    content_type: String,
    pub(crate) body: String,
    pub(crate) answered: Mode,
}

impl Hit {
    pub(crate) fn event(&self) -> Value {
        serde_json::from_str(&self.body).expect("a JSON body")
    }
}

#[derive(Default)]
struct State {
    hits: Vec<Hit>,
    script: VecDeque<Mode>,
    mode: Option<Mode>,
    redirect_to: String,
}

/// A webhook receiver on a free loopback port.
#[derive(Clone)]
pub(crate) struct Receiver {
    pub(crate) url: String,
    state: Arc<Mutex<State>>,
}

impl Receiver {
    pub(crate) async fn start() -> Receiver {
        let state = Arc::new(Mutex::new(State::default()));
        let shared = state.clone();
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |headers: HeaderMap, body: Bytes| {
                let state = shared.clone();
                async move {
                    let mode = {
                        let mut s = state.lock().expect("state");
                        let mode = s.script.pop_front().or(s.mode).unwrap_or(Mode::Ok);
                        let h = |n: &str| {
                            headers
                                .get(n)
                                .and_then(|v| v.to_str().ok())
                                .unwrap_or("")
                                .to_owned()
                        };
                        s.hits.push(Hit {
                            id: h("leaguekit-event-id"),
                            kind: h("leaguekit-event-type"),
                            signature: h("leaguekit-signature"),
                            webhook_id: h("webhook-id"),
                            webhook_timestamp: h("webhook-timestamp"),
                            webhook_signature: h("webhook-signature"),
                            content_type: h("content-type"),
                            body: String::from_utf8_lossy(&body).into_owned(),
                            answered: mode,
                        });
                        mode
                    };
                    let to = state.lock().expect("state").redirect_to.clone();
                    match mode {
                        Mode::Ok => (StatusCode::OK, [("location", to)]),
                        Mode::Fail => (StatusCode::INTERNAL_SERVER_ERROR, [("location", to)]),
                        Mode::Hang => {
                            tokio::time::sleep(Duration::from_secs(5)).await;
                            (StatusCode::OK, [("location", to)])
                        }
                        Mode::Redirect(code) => (
                            StatusCode::from_u16(code).expect("a status"),
                            [("location", to)],
                        ),
                    }
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the receiver");
        let addr = listener.local_addr().expect("addr");
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Receiver {
            url: format!("http://{addr}/hook"),
            state,
        }
    }

    pub(crate) fn set(&self, mode: Mode) {
        self.state.lock().expect("state").mode = Some(mode);
    }

    /// Redirects point at `url`.
    pub(crate) fn redirect_to(&self, url: &str) {
        self.state.lock().expect("state").redirect_to = url.to_owned();
    }

    pub(crate) fn script(&self, modes: &[Mode]) {
        self.state.lock().expect("state").script.extend(modes);
    }

    pub(crate) fn hits(&self) -> Vec<Hit> {
        self.state.lock().expect("state").hits.clone()
    }

    /// The POSTs answered 200, in the order received.
    pub(crate) fn acked(&self) -> Vec<Hit> {
        self.hits()
            .into_iter()
            .filter(|h| h.answered == Mode::Ok)
            .collect()
    }

    /// Ids of the acknowledged events, each once.
    pub(crate) fn acked_ids(&self) -> BTreeSet<String> {
        self.acked().into_iter().map(|h| h.id).collect()
    }

    /// Waits until `done(acked hits)`, at most `limit`.
    pub(crate) async fn wait(&self, limit: Duration, what: &str, done: impl Fn(&[Hit]) -> bool) {
        let deadline = Instant::now() + limit;
        loop {
            let acked = self.acked();
            if done(&acked) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{what}: not within {limit:?}; acknowledged {} of {} POSTs: {:?}",
                acked.len(),
                self.hits().len(),
                acked.iter().map(|h| (&h.kind, &h.id)).collect::<Vec<_>>()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// Verifies a POST's signatures as docs/http.md tells a receiver to: its
/// `Leaguekit-Signature`, computed here, and its Standard Webhooks headers, with
/// `verify_standard` (the same id as `Leaguekit-Event-Id`, the same time as `t`).
fn verify(hit: &Hit) -> bool {
    use leaguekit::server::webhooks;
    let (header, body) = (hit.signature.as_str(), hit.body.as_str());
    let now = chrono::Utc::now().timestamp();
    let secret = webhooks::Secret::parse(SECRET).expect("the tests' secret");
    let standard = hit.webhook_id == hit.id
        && webhooks::verify_standard(
            &secret,
            &hit.webhook_id,
            &hit.webhook_timestamp,
            &hit.webhook_signature,
            body.as_bytes(),
            now,
            webhooks::TOLERANCE_SECS,
        );
    let mut t = None;
    let mut v1 = Vec::new();
    for part in header.split(',') {
        match part.split_once('=') {
            Some(("t", v)) => t = v.parse::<i64>().ok(),
            Some(("v1", v)) => v1.push(v.to_owned()),
            _ => {}
        }
    }
    let Some(t) = t else { return false };
    let mut mac = Hmac::<Sha256>::new_from_slice(SECRET.as_bytes()).expect("key");
    mac.update(format!("{t}.{body}").as_bytes());
    let expected: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    standard
        && hit.webhook_timestamp == t.to_string()
        && (now - t).abs() <= 300
        && v1.contains(&expected)
}

/// The example season with an event log (daily periods, the first ending in 12 h).
pub(crate) fn season(tag: &str, travel: bool) -> tempfile::NamedTempFile {
    let file = serving::season(
        tag,
        now() + chrono::Duration::hours(12),
        "1s",
        "\n[events]\nkeep = \"1d\"\n",
    );
    let text = std::fs::read_to_string(file.path()).expect("season");
    let text = text.replacen(
        "max_skew = \"1s\"",
        &format!("max_skew = \"1s\"\ntravel = {travel}"),
        1,
    );
    std::fs::write(file.path(), text).expect("write season");
    file
}

/// A server delivering to `receiver`, with short retries for tests.
pub(crate) fn start<'a>(
    config: &'a tempfile::NamedTempFile,
    receiver: &Receiver,
    more: &[(&'a str, &str)],
) -> Start<'a> {
    let mut env = vec![
        ("LEAGUEKIT_WEBHOOK_URLS", receiver.url.clone()),
        ("LEAGUEKIT_WEBHOOK_SECRET", SECRET.to_owned()),
        ("LEAGUEKIT_WEBHOOK_BACKOFF_MS", "50".to_owned()),
        ("LEAGUEKIT_WEBHOOK_TIMEOUT_MS", "300".to_owned()),
    ];
    env.extend(more.iter().map(|(k, v)| (*k, (*v).to_owned())));
    Start {
        admin_tokens: Some(ADMIN_ENTRY),
        env,
        ..Start::new(config.path())
    }
}

pub(crate) async fn call(
    http: &reqwest::Client,
    served: &Served,
    method: Method,
    path: &str,
    token: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let mut req = http.request(method, served.url(path)).bearer_auth(token);
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req.send().await.expect("request");
    let status = StatusCode::from_u16(resp.status().as_u16()).expect("status");
    (status, resp.json().await.unwrap_or(Value::Null))
}

/// Joins players `from..to` (`p<i>`), through the servers in turn.
pub(crate) async fn join(http: &reqwest::Client, servers: &[&Served], from: usize, to: usize) {
    for i in from..to {
        let served = servers[i % servers.len()];
        let path = format!("/v1/players/p{i}/join");
        let (s, v) = call(
            http,
            served,
            Method::POST,
            &path,
            SERVER,
            Some(json!({"at": rfc(now())})),
        )
        .await;
        assert_eq!(s, StatusCode::OK, "{path}: {v}");
    }
}

/// Ids of `player.placed` events acknowledged, by player.
pub(crate) fn placed(hits: &[Hit]) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for h in hits.iter().filter(|h| h.kind == "player.placed") {
        let e = h.event();
        out.entry(e["player"].as_str().unwrap_or("").to_owned())
            .or_default()
            .insert(h.id.clone());
    }
    out
}

/// Every POST is signed, typed and named as its body says; each log's acknowledged
/// events arrive in log order (an event repeated after a crash, right after itself).
pub(crate) fn check_posts(hits: &[Hit]) {
    for h in hits {
        assert!(verify(h), "bad signature: {h:?}");
        assert_eq!(h.content_type, "application/json", "{h:?}");
        let e = h.event();
        assert_eq!(e["id"].as_str(), Some(h.id.as_str()), "{h:?}");
        assert_eq!(e["type"].as_str(), Some(h.kind.as_str()), "{h:?}");
    }
    let mut last: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for h in hits.iter().filter(|h| h.answered == Mode::Ok) {
        let (log, pos) = h.id.split_once('@').expect("id = log@pos");
        let (ms, seq) = pos.split_once('-').expect("pos = ms-seq");
        let pos = (ms.parse().expect("ms"), seq.parse().expect("seq"));
        if let Some(before) = last.insert(log.to_owned(), pos) {
            // The event in flight when a server was killed may come again, at once.
            assert!(before <= pos, "log {log}: {before:?} then {pos:?}");
        }
    }
}

/// Reads the dead letters (`GET /v1/webhooks/dead`, first page) until `done` says so,
/// at most `limit`: the last answer.
pub(crate) async fn dead_until(
    http: &reqwest::Client,
    served: &Served,
    limit: Duration,
    what: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + limit;
    loop {
        let (s, v) = call(http, served, Method::GET, "/v1/webhooks/dead", ADMIN, None).await;
        assert_eq!(s, StatusCode::OK, "{v}");
        if done(&v) {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: not within {limit:?}: {v}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_then_hanging_receiver_gets_every_event_once_in_order() {
    let receiver = Receiver::start().await;
    // The first five POSTs fail: three 500s, then two with no answer in time.
    receiver.script(&[Mode::Fail, Mode::Fail, Mode::Fail, Mode::Hang, Mode::Hang]);
    let config = season("hook_retry", false);
    let served = start(&config, &receiver, &[]).spawn();
    assert!(
        served.stderr().contains("delivering webhooks to 1 URL"),
        "{}",
        served.stderr()
    );
    let http = reqwest::Client::new();
    join(&http, &[&served], 0, 20).await;
    receiver
        .wait(Duration::from_secs(30), "20 placements", |h| {
            placed(h).len() == 20
        })
        .await;
    let hits = receiver.hits();
    check_posts(&hits);
    let failed: Vec<Mode> = hits.iter().take(5).map(|h| h.answered).collect();
    assert_eq!(
        failed,
        [Mode::Fail, Mode::Fail, Mode::Fail, Mode::Hang, Mode::Hang]
    );
    // The failed event was sent again until acknowledged, then the others; none is
    // acknowledged twice.
    assert!(hits[..6].iter().all(|h| h.id == hits[0].id), "{hits:?}");
    let acked = receiver.acked();
    assert_eq!(acked.len(), receiver.acked_ids().len(), "{acked:?}");
    assert!(placed(&acked).values().all(|ids| ids.len() == 1));
    // player.overtaken is not sent by default; nothing is dead.
    let (s, dead) = call(
        &http,
        &served,
        Method::GET,
        "/v1/webhooks/dead",
        ADMIN,
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{dead}");
    assert_eq!(dead["dead"], json!([]), "{dead}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_given_up_are_dead_letters_that_an_operator_replays() {
    let receiver = Receiver::start().await;
    receiver.set(Mode::Fail);
    let config = season("hook_dead", false);
    let served = start(&config, &receiver, &[("LEAGUEKIT_WEBHOOK_ATTEMPTS", "2")]).spawn();
    let http = reqwest::Client::new();
    join(&http, &[&served], 0, 2).await;
    let dead = dead_until(
        &http,
        &served,
        Duration::from_secs(30),
        "two dead letters",
        |v| v["dead"].as_array().map(Vec::len) == Some(2),
    )
    .await;
    // Each event was tried twice, then given up; delivery went on with the next.
    assert_eq!(receiver.hits().len(), 4);
    for letter in dead["dead"].as_array().expect("letters") {
        assert_eq!(letter["attempts"], 2, "{letter}");
        assert_eq!(letter["error"], "HTTP 500", "{letter}");
        assert_eq!(letter["url"].as_str(), Some(receiver.url.as_str()));
        assert_eq!(letter["replay"], false);
        let event: Value =
            serde_json::from_str(letter["event"].as_str().expect("event")).expect("JSON");
        assert_eq!(event["id"], letter["id"], "{letter}");
        assert_eq!(event["type"], "player.placed");
    }
    let first = dead["dead"][0]["id"].as_str().expect("id").to_owned();

    // Only admins; a body must say which and why; an unknown id marks nothing.
    let body = json!({"all": true, "reason": "receiver fixed"});
    for token in [SERVER, VIEWER] {
        let (s, _) = call(
            &http,
            &served,
            Method::POST,
            "/v1/webhooks/dead:replay",
            token,
            Some(body.clone()),
        )
        .await;
        assert_eq!(s, StatusCode::FORBIDDEN);
    }
    for bad in [
        json!({"reason": "why"}),
        json!({"all": true}),
        json!({"all": true, "ids": [first.clone()], "reason": "both"}),
        json!({"ids": ["p9/nope@1-0"], "reason": "unknown id"}),
    ] {
        let (s, v) = call(
            &http,
            &served,
            Method::POST,
            "/v1/webhooks/dead:replay",
            ADMIN,
            Some(bad.clone()),
        )
        .await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{bad}: {v}");
    }
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(receiver.hits().len(), 4, "nothing replayed yet");

    // The receiver recovers; one letter, then the rest, are replayed.
    receiver.set(Mode::Ok);
    let (s, v) = call(
        &http,
        &served,
        Method::POST,
        "/v1/webhooks/dead:replay",
        ADMIN,
        Some(json!({"ids": [first.clone()], "reason": "receiver fixed"})),
    )
    .await;
    assert_eq!((s, v["marked"].as_u64()), (StatusCode::OK, Some(1)), "{v}");
    receiver
        .wait(Duration::from_secs(20), "the replayed letter", |h| {
            h.iter().any(|h| h.id == first)
        })
        .await;
    let (s, v) = call(
        &http,
        &served,
        Method::POST,
        "/v1/webhooks/dead:replay",
        ADMIN,
        Some(body),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    receiver
        .wait(Duration::from_secs(20), "every replayed letter", |h| {
            placed(h).len() == 2
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
    check_posts(&receiver.hits());
    assert_eq!(receiver.acked().len(), 2, "{:?}", receiver.acked());
    let (_, audit) = call(&http, &served, Method::GET, "/v1/audit", ADMIN, None).await;
    let replays = audit["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|e| e["action"] == "webhooks.replay")
        .count();
    assert_eq!(replays, 2, "{audit}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_deliver_each_event_exactly_once() {
    let receiver = Receiver::start().await;
    let config = season("hook_two", false);
    let a = start(&config, &receiver, &[]).spawn();
    let b = start(&config, &receiver, &[]).spawn();
    let http = reqwest::Client::new();
    join(&http, &[&a, &b], 0, 60).await;
    receiver
        .wait(Duration::from_secs(30), "60 placements", |h| {
            placed(h).len() == 60
        })
        .await;
    // Both scan every half second: more than enough for a second delivery to show.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let hits = receiver.hits();
    check_posts(&hits);
    assert_eq!(
        hits.len(),
        60,
        "{:?}",
        hits.iter().map(|h| &h.id).collect::<Vec<_>>()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_or_killed_server_is_resumed_without_loss() {
    let receiver = Receiver::start().await;
    let config = season("hook_restart", false);
    let http = reqwest::Client::new();

    // Stopped (SIGTERM) mid-stream: it finishes its POST in flight and records it.
    let mut first = start(&config, &receiver, &[]).spawn();
    receiver.script(&[Mode::Fail; 6]);
    join(&http, &[&first], 0, 30).await;
    receiver
        .wait(Duration::from_secs(30), "a few placements", |h| {
            !h.is_empty()
        })
        .await;
    first.terminate();
    assert!(
        first.wait(Duration::from_secs(20)).is_some(),
        "serve did not stop"
    );
    let before = receiver.acked().len();
    let second = start(&config, &receiver, &[]).spawn();
    receiver
        .wait(Duration::from_secs(30), "30 placements", |h| {
            placed(h).len() == 30
        })
        .await;
    let acked = receiver.acked();
    assert_eq!(
        acked.len(),
        30,
        "a stop repeats nothing ({before} before it)"
    );

    // Killed (SIGKILL) while the receiver hangs: the pair's lease expires (30 s), the
    // next server goes on, and only the event in flight may come twice.
    receiver.set(Mode::Hang);
    join(&http, &[&second], 30, 40).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    while receiver.hits().len() <= 30 + 6 {
        assert!(Instant::now() < deadline, "no POST of the new events");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    drop(second);
    receiver.set(Mode::Ok);
    let _third = start(&config, &receiver, &[]).spawn();
    receiver
        .wait(Duration::from_secs(60), "40 placements", |h| {
            placed(h).len() == 40
        })
        .await;
    let hits = receiver.hits();
    check_posts(&hits);
    let acked = receiver.acked();
    assert_eq!(acked.len(), 40, "{acked:?}");
    assert!(placed(&acked).values().all(|ids| ids.len() == 1));
}

#[test]
fn serve_refuses_a_bad_webhook_configuration() {
    let with_log = season("hook_config", false);
    let without_log = serving::open_season("hook_nolog");
    type Case<'a> = (
        &'a tempfile::NamedTempFile,
        Vec<(&'a str, &'a str)>,
        &'a str,
    );
    let cases: Vec<Case<'_>> = vec![
        (
            &with_log,
            vec![("LEAGUEKIT_WEBHOOK_URLS", "http://127.0.0.1:9/h")],
            "LEAGUEKIT_WEBHOOK_SECRET",
        ),
        (
            &with_log,
            vec![
                ("LEAGUEKIT_WEBHOOK_URLS", "http://127.0.0.1:9/h"),
                ("LEAGUEKIT_WEBHOOK_SECRET", "short"),
            ],
            "too short",
        ),
        (
            // Standard Webhooks' form, but not base64 (URL-safe base64).
            &with_log,
            vec![
                ("LEAGUEKIT_WEBHOOK_URLS", "http://127.0.0.1:9/h"),
                (
                    "LEAGUEKIT_WEBHOOK_SECRET",
                    "whsec_x0zJ8RClIQ4nSnE3cAdnIWEmzZhbRgpx-H1lP0eUmuM=",
                ),
            ],
            "whsec_$(openssl rand -base64 32)",
        ),
        (
            // A 16-byte key: the spec wants 24 to 64.
            &with_log,
            vec![
                ("LEAGUEKIT_WEBHOOK_URLS", "http://127.0.0.1:9/h"),
                ("LEAGUEKIT_WEBHOOK_SECRET", "whsec_AAAAAAAAAAAAAAAAAAAAAA=="),
            ],
            "16 bytes once base64-decoded",
        ),
        (
            &with_log,
            vec![
                ("LEAGUEKIT_WEBHOOK_URLS", "ftp://x"),
                ("LEAGUEKIT_WEBHOOK_SECRET", SECRET),
            ],
            "not an http",
        ),
        (
            &with_log,
            vec![
                ("LEAGUEKIT_WEBHOOK_URLS", "http://127.0.0.1:9/h"),
                ("LEAGUEKIT_WEBHOOK_SECRET", SECRET),
                ("LEAGUEKIT_WEBHOOK_EVENTS", "player.placed,player.exploded"),
            ],
            "player.exploded",
        ),
        (
            &with_log,
            vec![
                ("LEAGUEKIT_WEBHOOK_URLS", "http://127.0.0.1:9/h"),
                ("LEAGUEKIT_WEBHOOK_SECRET", SECRET),
                ("LEAGUEKIT_WEBHOOK_FROM", "yesterday"),
            ],
            "neither \"now\"",
        ),
        (
            &with_log,
            vec![
                ("LEAGUEKIT_WEBHOOK_URLS", "http://127.0.0.1:9/h"),
                ("LEAGUEKIT_WEBHOOK_SECRET", SECRET),
                ("LEAGUEKIT_WEBHOOK_DEAD_MAX", "0"),
            ],
            "LEAGUEKIT_WEBHOOK_DEAD_MAX",
        ),
        (
            &with_log,
            vec![
                ("LEAGUEKIT_WEBHOOK_URLS", "http://127.0.0.1:9/h"),
                ("LEAGUEKIT_WEBHOOK_SECRET", SECRET),
                ("LEAGUEKIT_WEBHOOK_DEAD_KEEP", "forever"),
            ],
            "LEAGUEKIT_WEBHOOK_DEAD_KEEP",
        ),
        (
            &without_log,
            vec![
                ("LEAGUEKIT_WEBHOOK_URLS", "http://127.0.0.1:9/h"),
                ("LEAGUEKIT_WEBHOOK_SECRET", SECRET),
            ],
            "add an [events] section",
        ),
    ];
    for (config, env, says) in cases {
        let start = Start {
            env: env.iter().map(|(k, v)| (*k, (*v).to_owned())).collect(),
            ..Start::new(config.path())
        };
        let (code, err) = start.refused();
        assert_eq!(code, Some(2), "{env:?}: {err}");
        assert!(err.contains(says), "{env:?}: {err}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rollovers_events_are_delivered_on_a_cluster() {
    let receiver = Receiver::start().await;
    let config = season("hook_cluster", true);
    let served = Start {
        redis: common::cluster::cluster_url(),
        args: vec![],
        ..start(&config, &receiver, &[])
    }
    .spawn();
    let http = reqwest::Client::new();
    join(&http, &[&served], 0, 5).await;
    for i in 0..5 {
        let (s, v) = call(
            &http,
            &served,
            Method::POST,
            &format!("/v1/players/p{i}/scores"),
            SERVER,
            Some(json!({"value": 10 + i})),
        )
        .await;
        assert_eq!(s, StatusCode::OK, "{v}");
    }
    let (s, v) = call(
        &http,
        &served,
        Method::POST,
        "/v1/clock",
        ADMIN,
        Some(json!({"advance": "1d", "reason": "QA: close the day"})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    receiver
        .wait(Duration::from_secs(60), "the rollover's events", |h| {
            let kinds: Vec<&str> = h.iter().map(|h| h.kind.as_str()).collect();
            let outcomes = kinds
                .iter()
                .filter(|k| matches!(**k, "player.promoted" | "player.stayed" | "player.demoted"))
                .count();
            kinds.contains(&"bracket.closed")
                && kinds.contains(&"period.closed")
                && kinds.contains(&"reward.granted")
                && outcomes == 5
        })
        .await;
    let hits = receiver.hits();
    check_posts(&hits);
    assert_eq!(receiver.acked().len(), receiver.acked_ids().len());
    assert_eq!(placed(&hits).len(), 5);
}
