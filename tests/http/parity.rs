//! The command line and the HTTP API over the same league answer the same JSON: every
//! command of the CLI next to its HTTP counterpart, on one Redis, so that neither door
//! can drift from the other.
//!
//! Writes go through the CLI for players `cli-*` in cohort `xcli` and through HTTP for
//! the mirror players `web-*` in cohort `xweb` (cohorts form their own brackets, so the
//! two sides rank the same); an HTTP answer is compared after renaming `web-`/`xweb`
//! to `cli-`/`xcli`. Reads are made through both doors for the same players and
//! compared as they are.
//!
//! The differences that are part of the contract (docs/http.md, "The command line and
//! HTTP"): the counts are wrapped with their period over HTTP; an update without a
//! rank leaves `rank` out over HTTP (the CLI prints `null`); a batch item over HTTP has
//! no `line`, leaves out what is null, and carries its error as an object.

use crate::common;
use crate::serving;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use serving::{SERVER, Served, now, rfc};

/// One league seen through both doors.
struct Doors {
    config: tempfile::NamedTempFile,
    served: Served,
    http: reqwest::Client,
}

/// What a CLI run printed: its exit code, stdout and stderr.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Doors {
    /// Runs `leaguekit ARGS` against the league, with `stdin`.
    fn run(&self, args: &[&str], stdin: Option<&str>) -> Run {
        use std::io::Write;
        let mut c = Command::new(env!("CARGO_BIN_EXE_leaguekit"));
        c.arg("--config")
            .arg(self.config.path())
            .arg("--redis")
            .arg(common::redis_url())
            .args(args)
            .env_remove("LEAGUEKIT_CONFIG")
            .env_remove("LEAGUEKIT_REDIS")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().expect("spawn leaguekit");
        if let Some(input) = stdin {
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(input.as_bytes())
                .expect("write stdin");
        }
        drop(child.stdin.take());
        let out = child.wait_with_output().expect("wait");
        Run {
            code: out.status.code(),
            stdout: String::from_utf8(out.stdout).expect("utf-8"),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// The one JSON object a successful CLI command printed.
    fn cli(&self, args: &[&str]) -> Value {
        let r = self.run(args, None);
        assert_eq!(r.code, Some(0), "{args:?}: {}", r.stderr);
        assert_eq!(r.stdout.lines().count(), 1, "{args:?}: {}", r.stdout);
        serde_json::from_str(&r.stdout).expect("json")
    }

    /// An HTTP call with the server token: status and body (JSON, or the raw text).
    async fn call(&self, method: Method, path: &str, body: Option<Value>) -> (StatusCode, Value) {
        let mut r = self
            .http
            .request(method, self.served.url(path))
            .bearer_auth(SERVER);
        if let Some(b) = body {
            r = r.json(&b);
        }
        let resp = r.send().await.expect("send");
        let status = resp.status();
        let text = resp.text().await.expect("body");
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    /// A 200 answer's body.
    async fn ok(&self, method: Method, path: &str, body: Option<Value>) -> Value {
        let (status, v) = self.call(method.clone(), path, body).await;
        assert_eq!(status, StatusCode::OK, "{method} {path}: {v}");
        v
    }

    /// A GET's body.
    async fn get(&self, path: &str) -> Value {
        self.ok(Method::GET, path, None).await
    }
}

/// An HTTP answer about the `web-` players in cohort `xweb`, renamed to the CLI's.
fn mirrored(v: &Value) -> Value {
    let text = v
        .to_string()
        .replace("web-", "cli-")
        .replace("xweb", "xcli");
    serde_json::from_str(&text).expect("json")
}

/// `v` without the keys whose value is null (at any depth).
fn without_nulls(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, x)| !x.is_null())
                .map(|(k, x)| (k.clone(), without_nulls(x)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(without_nulls).collect()),
        other => other.clone(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_line_and_http_answer_the_same_json() {
    // Period 1 ends in 25 s and closes 1 s later (max_skew); the CLI's rollover closes
    // it, then period 2 shows the welcome, rewards, claims, exports and frozen tops.
    let end = now() + chrono::Duration::seconds(25);
    let config = serving::season(
        "parity",
        end,
        "1s",
        "\n[cohorts]\nvalues = [\"xcli\", \"xweb\"]\n",
    );
    let served = Served::start(config.path());
    let d = Doors {
        config,
        served,
        http: reqwest::Client::new(),
    };
    let at = rfc(now());
    let post = Method::POST;

    // join, placing (with the welcome) and again (without).
    let c = d.cli(&["join", "cli-ana", "--cohort", "xcli", "--at", &at]);
    let h = d
        .ok(
            post.clone(),
            "/v1/players/web-ana/join",
            Some(json!({"cohort": "xweb", "at": at})),
        )
        .await;
    assert_eq!(mirrored(&h), c);
    assert_eq!(
        (&c["cohort"], &c["pending_rewards"]),
        (&json!("xcli"), &json!([]))
    );
    let c = d.cli(&["join", "cli-ana"]);
    let h = d.ok(post.clone(), "/v1/players/web-ana/join", None).await;
    assert_eq!(mirrored(&h), c);
    assert_eq!(c["pending_rewards"], Value::Null);

    // submit: an update, its duplicate, a first score that places (with a cohort).
    for _ in 0..2 {
        let c = d.cli(&["submit", "cli-ana", "50", "--request-id", "r1", "--at", &at]);
        let h = d
            .ok(
                post.clone(),
                "/v1/players/web-ana/scores",
                Some(json!({"value": 50, "request_id": "r1", "at": at})),
            )
            .await;
        assert_eq!(mirrored(&h), c);
    }
    let c = d.cli(&["submit", "cli-bo", "40", "--cohort", "xcli", "--at", &at]);
    let h = d
        .ok(
            post.clone(),
            "/v1/players/web-bo/scores",
            Some(json!({"value": 40, "cohort": "xweb", "at": at})),
        )
        .await;
    assert_eq!(mirrored(&h), c);
    assert_eq!((&c["cohort"], &c["rank"]), (&json!("xcli"), &json!(2)));
    // Without the rank: `null` on the CLI, left out over HTTP.
    let c = d.cli(&["submit", "cli-bo", "0", "--no-rank", "--at", &at]);
    let h = d
        .ok(
            post.clone(),
            "/v1/players/web-bo/scores",
            Some(json!({"value": 0, "rank": false, "at": at})),
        )
        .await;
    assert_eq!((&c["rank"], h.get("rank")), (&Value::Null, None));
    assert_eq!(without_nulls(&mirrored(&h)), without_nulls(&c));

    // submit --batch and POST /v1/scores:batch: one result per line/item, in order.
    let items = |who: &str, cohort: &str| {
        json!([
            {"player": format!("{who}-cy"), "value": 30, "request_id": "b1", "at": at, "cohort": cohort},
            {"player": format!("{who}-ana"), "value": 5, "at": at},
            {"player": format!("{who}-cy"), "value": 30, "request_id": "b1", "at": at},
            {"player": "", "value": 1},
        ])
    };
    let lines: String = items("cli", "xcli")
        .as_array()
        .expect("items")
        .iter()
        .map(|i| format!("{i}\n"))
        .collect();
    let r = d.run(&["submit", "--batch", "-"], Some(&lines));
    assert_eq!(r.code, Some(2), "a refused line: {}", r.stderr);
    let c: Vec<Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    let h = d
        .ok(post.clone(), "/v1/scores:batch", Some(items("web", "xweb")))
        .await;
    let h = h.as_array().expect("array");
    assert_eq!(c.len(), h.len());
    for (i, (c, h)) in c.iter().zip(h).enumerate() {
        assert_eq!(c["line"], json!(i + 1));
        let mut c = c.clone();
        c.as_object_mut().expect("object").remove("line");
        if c["status"] == "refused" {
            assert_eq!(h["status"], "refused", "{h}");
            assert_eq!(h["error"]["message"], c["error"], "{h}");
        } else {
            assert_eq!(without_nulls(&mirrored(h)), without_nulls(&c), "item {i}");
        }
    }
    assert_eq!(
        c.iter().map(|l| l["status"].clone()).collect::<Vec<_>>(),
        [
            json!("applied"),
            json!("applied"),
            json!("duplicate"),
            json!("refused")
        ]
    );

    // A value that can never fit names the player's real score on both doors.
    let r = d.run(&["submit", "cli-ana", "-2000000000", "--at", &at], None);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("current 55"), "{}", r.stderr);
    let (status, h) = d
        .call(
            post.clone(),
            "/v1/players/web-ana/scores",
            Some(json!({"value": -2_000_000_000i64, "at": at})),
        )
        .await;
    assert_eq!(
        (status, &h["error"]["code"]),
        (StatusCode::BAD_REQUEST, &json!("score_out_of_range"))
    );
    let message = h["error"]["message"].as_str().expect("message");
    assert!(message.contains("current 55"), "{message}");
    assert!(r.stderr.contains(message), "{} / {message}", r.stderr);

    // profile: the CLI's FIELD=VALUE merge is PATCH; GET answers the same.
    let c = d.cli(&["profile", "cli-ana", "name=Ana", "avatar=a.png"]);
    let h = d
        .ok(
            Method::PATCH,
            "/v1/players/web-ana/profile",
            Some(json!({"name": "Ana", "avatar": "a.png"})),
        )
        .await;
    assert_eq!(mirrored(&h), c);
    assert_eq!(d.get("/v1/players/cli-ana/profile").await, c);

    // Reads of the same players and boards, compared as they are.
    for p in ["cli-ana", "web-ana", "cli-bo", "nobody"] {
        let c = d.cli(&["player", p]);
        assert_eq!(d.get(&format!("/v1/players/{p}")).await, c, "{p}");
    }
    assert_eq!(
        d.cli(&["around", "cli-bo", "--radius", "1"]),
        d.get("/v1/players/cli-bo/around?radius=1").await
    );
    for cohort in ["xcli", "xweb"] {
        let c = d.cli(&["standings", "bronze", "1", "--cohort", cohort]);
        let h = d
            .get(&format!("/v1/tiers/bronze/brackets/1?cohort={cohort}"))
            .await;
        assert_eq!(h, c, "{cohort}");
        // The form before the `cohort` query still reads the same boards.
        let old = d
            .get(&format!("/v1/tiers/bronze@{cohort}/brackets/1"))
            .await;
        assert_eq!(old, c, "{cohort}");
    }
    let c = d.cli(&[
        "standings",
        "bronze",
        "1",
        "--cohort",
        "xcli",
        "--limit",
        "2",
    ]);
    assert_eq!(
        d.get("/v1/tiers/bronze/brackets/1?cohort=xcli&limit=2")
            .await,
        c
    );
    // Both cohorts were played the same way, one through each door.
    assert_eq!(
        mirrored(&d.get("/v1/tiers/bronze/brackets/1?cohort=xweb").await),
        d.cli(&["standings", "bronze", "1", "--cohort", "xcli"])
    );
    for (args, path) in [
        (vec!["top", "bronze"], "/v1/tiers/bronze/top"),
        (
            vec!["top", "bronze", "--cohort", "xweb", "--limit", "2"],
            "/v1/tiers/bronze/top?cohort=xweb&limit=2",
        ),
        (vec!["top", "silver"], "/v1/tiers/silver/top"),
    ] {
        assert_eq!(d.get(path).await, d.cli(&args), "{path}");
    }
    for (args, path) in [
        (vec!["counts"], "/v1/counts"),
        (vec!["counts", "--cohort", "xcli"], "/v1/counts?cohort=xcli"),
    ] {
        let h = d.get(path).await;
        assert_eq!(h["tiers"], d.cli(&args), "{path}");
    }

    // Period 1 closes: the CLI's rollover, once it may (its end plus max_skew).
    let closes = end + chrono::Duration::milliseconds(1300);
    let wait = (closes - chrono::Utc::now()).to_std().unwrap_or_default();
    tokio::time::sleep(wait).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let r = d.cli(&["rollover"]);
        if r["closed_through"].as_u64() >= Some(1) {
            break;
        }
        assert!(Instant::now() < deadline, "period 1 did not close: {r}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }

    // The last result and rewards, through both doors.
    for p in ["cli-ana", "web-ana", "cli-cy"] {
        assert_eq!(
            d.get(&format!("/v1/players/{p}")).await,
            d.cli(&["player", p])
        );
        assert_eq!(
            d.get(&format!("/v1/players/{p}/rewards")).await,
            d.cli(&["rewards", p])
        );
    }
    assert_eq!(
        d.get("/v1/tiers/bronze/top?period=1&cohort=xcli").await,
        d.cli(&["top", "bronze", "--period", "1", "--cohort", "xcli"])
    );
    // The placing join of period 2 carries the last result and the rewards waiting.
    let c = d.cli(&["join", "cli-ana"]);
    let h = d.ok(post.clone(), "/v1/players/web-ana/join", None).await;
    assert_eq!(mirrored(&h), c);
    assert_eq!(
        (
            &c["last"]["outcome"],
            &c["last"]["cohort"],
            &c["pending_rewards"][0]["grant"]
        ),
        (&json!("promoted"), &json!("xcli"), &json!("gems:100")),
        "{c}"
    );
    // A claim, and its repeat with the same request id.
    for _ in 0..2 {
        let c = d.cli(&["claim", "cli-ana", "--request-id", "c1"]);
        let h = d
            .ok(
                post.clone(),
                "/v1/players/web-ana/rewards:claim",
                Some(json!({"request_id": "c1"})),
            )
            .await;
        assert_eq!(mirrored(&h), c);
        assert_eq!(c["granted"][0]["grant"], "gems:100", "{c}");
    }
    // The export of period 1: the same lines.
    let r = d.run(&["export", "--period", "1"], None);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let (status, h) = d.call(Method::GET, "/v1/periods/1/export", None).await;
    assert_eq!(status, StatusCode::OK);
    let lines = |text: &str| -> Vec<Value> {
        let mut v: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("json line"))
            .collect();
        v.sort_by_key(|l| l.to_string());
        v
    };
    let h = match h {
        Value::String(text) => lines(&text),
        one => vec![one],
    };
    let c = lines(&r.stdout);
    assert_eq!(c.len(), 6, "{}", r.stdout);
    assert_eq!(h, c);
    assert!(c.iter().all(|l| l["cohort"].is_string()), "{c:?}");
}
