//! The staging clock with real processes on a real Redis: `leaguekit serve` (with its
//! scheduler) and `leaguekit run` (a second scheduler) keep running while an operator
//! moves the league clock, once with `leaguekit clock advance` and once with
//! `POST /v1/clock`; both periods close, each once, and game servers' scores land in
//! the period of the moved clock. A season without `travel` refuses a move and writes
//! nothing.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::common;
use super::serving::{SERVER, VIEWER, now, season};

const ADMIN: &str = "admin-token-for-tests-0001";

/// A child process that is killed when dropped, with its stderr collected.
struct Proc {
    child: Child,
    stderr: Arc<Mutex<Vec<String>>>,
}

impl Proc {
    fn stderr(&self) -> String {
        self.stderr.lock().expect("lines").join("\n")
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn leaguekit(config: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_leaguekit"));
    c.arg("--config")
        .arg(config)
        .arg("--redis")
        .arg(common::redis_url())
        .env_remove("LEAGUEKIT_CONFIG")
        .env_remove("LEAGUEKIT_REDIS")
        .env("LEAGUEKIT_SERVER_TOKENS", SERVER)
        .env("LEAGUEKIT_VIEWER_TOKENS", VIEWER)
        .env("LEAGUEKIT_ADMIN_TOKENS", format!("qa:{ADMIN}"))
        .env("LEAGUEKIT_LOG", "info")
        .env("USER", "qa-team");
    c
}

/// Starts `leaguekit ARGS` and waits until a line of its stderr contains `ready`:
/// the process and the text after "on http://" on that line (serve's address).
fn spawn(config: &Path, args: &[&str], ready: &'static str) -> (Proc, String) {
    let mut child = leaguekit(config)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn leaguekit");
    let stderr = child.stderr.take().expect("stderr");
    let lines = Arc::new(Mutex::new(Vec::new()));
    let keep = lines.clone();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.contains(ready) {
                let addr = line.split("on http://").nth(1).unwrap_or("");
                let _ = tx.send(addr.split_whitespace().next().unwrap_or("").to_owned());
            }
            keep.lock().expect("lines").push(line);
        }
    });
    let proc = Proc {
        child,
        stderr: lines,
    };
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(addr) => (proc, addr),
        Err(_) => panic!("leaguekit {args:?} did not start: {}", proc.stderr()),
    }
}

/// Runs `leaguekit ARGS` to its end: exit code, stdout, stderr.
fn run(config: &Path, args: &[&str]) -> (i32, String, String) {
    let out = leaguekit(config)
        .args(args)
        .output()
        .expect("run leaguekit");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The example season (daily periods, the first ending in 12 hours) with `travel`.
fn staging_season(tag: &str, travel: bool) -> tempfile::NamedTempFile {
    let file = season(tag, now() + chrono::Duration::hours(12), "1s", "");
    let text = std::fs::read_to_string(file.path()).expect("season");
    let text = text.replacen(
        "max_skew = \"1s\"",
        &format!("max_skew = \"1s\"\ntravel = {travel}"),
        1,
    );
    std::fs::write(file.path(), text).expect("write season");
    file
}

struct Api {
    http: reqwest::Client,
    base: String,
}

impl Api {
    async fn call(
        &self,
        method: &str,
        path: &str,
        token: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let url = format!("{}{path}", self.base);
        let req = match method {
            "GET" => self.http.get(url),
            _ => self.http.post(url),
        }
        .bearer_auth(token);
        let req = match body {
            Some(b) => req.json(&b),
            None => req,
        };
        let resp = req.send().await.expect("request");
        let status = resp.status();
        (status, resp.json().await.unwrap_or(Value::Null))
    }

    async fn ok(&self, method: &str, path: &str, token: &str, body: Option<Value>) -> Value {
        let (status, v) = self.call(method, path, token, body).await;
        assert_eq!(status, StatusCode::OK, "{method} {path}: {v}");
        v
    }

    /// Waits until `GET /v1/periods` says `closed_through` is at least `period`.
    async fn closed_through(&self, period: u64) -> Value {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let p = self.ok("GET", "/v1/periods", VIEWER, None).await;
            if p["closed_through"].as_u64() >= Some(period) {
                return p;
            }
            assert!(
                Instant::now() < deadline,
                "the schedulers did not close period {period}: {p}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

#[tokio::test]
async fn two_periods_close_once_each_through_clock_advance() {
    let file = staging_season("staging", true);
    let config = file.path();
    // `check` says it loudly.
    let (code, _, err) = run(config, &["check"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("STAGING CLOCK"), "{err}");

    let (serve, addr) = spawn(config, &["serve", "--listen", "127.0.0.1:0"], "on http://");
    let (runner, _) = spawn(config, &["run"], "scheduler running");
    for p in [&serve, &runner] {
        assert!(p.stderr().contains("STAGING CLOCK"), "{}", p.stderr());
    }
    let api = Api {
        http: reqwest::Client::new(),
        base: format!("http://{addr}"),
    };
    let s = api.ok("GET", "/v1/season", VIEWER, None).await;
    assert_eq!(
        (s["travel"].as_bool(), s["clock_offset_ms"].as_i64()),
        (Some(true), Some(0))
    );

    // A game server plays period 1.
    let sub = api
        .ok(
            "POST",
            "/v1/players/ana/scores",
            SERVER,
            Some(json!({"value": 10})),
        )
        .await;
    assert_eq!(sub["period"].as_u64(), Some(1), "{sub}");

    // Period 1 ends in 12 hours; a day later by the moved clock, the schedulers close it.
    let (code, out, err) = run(
        config,
        &["clock", "advance", "1d", "--reason", "QA: next day"],
    );
    assert_eq!(code, 0, "{err}");
    let moved: Value = serde_json::from_str(out.trim()).expect("clock JSON");
    assert_eq!(moved["offset_ms"].as_i64(), Some(86_400_000), "{moved}");
    let periods = api.closed_through(1).await;
    assert_eq!(periods["current"]["id"].as_u64(), Some(2), "{periods}");

    // The game server's next score is in period 2, where ana was promoted to silver.
    let sub = api
        .ok(
            "POST",
            "/v1/players/ana/scores",
            SERVER,
            Some(json!({"value": 5})),
        )
        .await;
    assert_eq!(
        (sub["period"].as_u64(), sub["tier"].as_str()),
        (Some(2), Some("silver")),
        "{sub}"
    );

    // Only admin tokens move the clock.
    let (status, _) = api
        .call("POST", "/v1/clock", SERVER, Some(json!({"advance": "1d"})))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let moved = api
        .ok(
            "POST",
            "/v1/clock",
            ADMIN,
            Some(json!({"advance": "1d", "reason": "QA: day 3"})),
        )
        .await;
    assert_eq!(moved["offset_ms"].as_i64(), Some(2 * 86_400_000), "{moved}");
    let periods = api.closed_through(2).await;
    assert_eq!(periods["current"]["id"].as_u64(), Some(3), "{periods}");
    // Let both schedulers look again: nothing is closed twice.
    tokio::time::sleep(Duration::from_secs(3)).await;

    // Each period closed once: one report each, with ana's one bracket, and each reward
    // granted once.
    let periods = api.ok("GET", "/v1/periods?limit=10", VIEWER, None).await;
    let closed: Vec<(u64, u64)> = periods["closed"]
        .as_array()
        .expect("closed")
        .iter()
        .map(|r| {
            (
                r["period"].as_u64().unwrap_or(0),
                r["players"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    let mut ids: Vec<u64> = closed.iter().map(|c| c.0).collect();
    ids.sort_unstable();
    assert_eq!(ids, [1, 2], "{periods}");
    assert!(closed.iter().all(|c| c.1 == 1), "{periods}");
    let rewards = api.ok("GET", "/v1/players/ana/rewards", SERVER, None).await;
    assert_eq!(
        rewards["rewards"],
        json!([
            {"source": "1/bronze/1", "grant": "gems:100"},
            {"source": "2/silver/1", "grant": "gems:200"},
        ]),
        "{rewards}"
    );
    // The audit log has both moves, by who made them.
    let (code, out, err) = run(config, &["clock", "show"]);
    assert_eq!(code, 0, "{err}");
    let shown: Value = serde_json::from_str(out.trim()).expect("clock JSON");
    assert_eq!(
        (shown["travel"].as_bool(), shown["offset_ms"].as_i64()),
        (Some(true), Some(2 * 86_400_000))
    );
    let clock = api.ok("GET", "/v1/clock", ADMIN, None).await;
    assert_eq!(clock["offset_ms"].as_i64(), Some(2 * 86_400_000));
    let closes = |p: &Proc| p.stderr().matches("period closed").count();
    assert!(
        closes(&serve) + closes(&runner) >= 2,
        "{}\n{}",
        serve.stderr(),
        runner.stderr()
    );
}

#[tokio::test]
async fn a_season_without_travel_refuses_to_move_and_writes_nothing() {
    let file = staging_season("notravel", false);
    let config = file.path();
    let (code, _, err) = run(config, &["clock", "advance", "1h"]);
    assert_ne!(code, 0);
    assert!(err.contains("travel = true"), "{err}");
    let (code, out, err) = run(config, &["clock", "set", "2100-01-01T00:00:00Z"]);
    assert_ne!(code, 0, "{out}");
    assert!(err.contains("no staging clock"), "{err}");
    let (code, out, err) = run(config, &["clock", "show"]);
    assert_eq!(code, 0, "{err}");
    let shown: Value = serde_json::from_str(out.trim()).expect("clock JSON");
    assert_eq!(
        (shown["travel"].as_bool(), shown["offset_ms"].as_i64()),
        (Some(false), Some(0))
    );

    let (serve, addr) = spawn(
        config,
        &["serve", "--listen", "127.0.0.1:0", "--no-scheduler"],
        "on http://",
    );
    assert!(!serve.stderr().contains("STAGING CLOCK"));
    let api = Api {
        http: reqwest::Client::new(),
        base: format!("http://{addr}"),
    };
    let (status, body) = api
        .call("POST", "/v1/clock", ADMIN, Some(json!({"advance": "1h"})))
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::CONFLICT, Some("no_staging_clock")),
        "{body}"
    );
    // Nothing was written: the season's meta holds no offset, and the audit log is empty.
    let season = std::fs::read_to_string(config).expect("season");
    let prefix = season
        .lines()
        .find_map(|l| l.strip_prefix("key_prefix = \""))
        .and_then(|l| l.split('"').next())
        .expect("key_prefix")
        .to_owned();
    let client = redis::Client::open(common::redis_url()).expect("redis");
    let mut con = client
        .get_multiplexed_async_connection()
        .await
        .expect("connect");
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{prefix}:*"))
        .query_async(&mut con)
        .await
        .expect("KEYS");
    for key in &keys {
        let kind: String = redis::cmd("TYPE")
            .arg(key)
            .query_async(&mut con)
            .await
            .expect("TYPE");
        if kind == "hash" {
            let offset: Option<String> = redis::cmd("HGET")
                .arg(key)
                .arg("clock_offset")
                .query_async(&mut con)
                .await
                .expect("HGET");
            assert_eq!(offset, None, "{key}");
        }
        assert!(
            !key.ends_with(":audit"),
            "an audit entry was written: {keys:?}"
        );
    }
}

#[tokio::test]
async fn a_staging_file_never_acts_on_a_production_league_nor_the_reverse() {
    // Production plays, with a season file that has no staging clock.
    let prod = staging_season("isolate", false);
    let text = std::fs::read_to_string(prod.path()).expect("season");
    let staging = tempfile::NamedTempFile::new().expect("temp");
    std::fs::write(
        staging.path(),
        text.replacen("travel = false", "travel = true", 1),
    )
    .expect("write");
    let (_serve, addr) = spawn(
        prod.path(),
        &["serve", "--listen", "127.0.0.1:0", "--no-scheduler"],
        "on http://",
    );
    let api = Api {
        http: reqwest::Client::new(),
        base: format!("http://{addr}"),
    };
    let body = Some(json!({"value": 10}));
    api.ok("POST", "/v1/players/ana/scores", SERVER, body).await;

    // A copy of its file with [clock] travel = true (same prefix and name) is refused
    // by every command that would act, and by serve, naming both kinds.
    for args in [
        &["clock", "advance", "2d"][..],
        &["clock", "set", "2100-01-01T00:00:00Z"],
        &["rollover"],
        &["serve", "--listen", "127.0.0.1:0", "--no-scheduler"],
    ] {
        let (code, out, err) = run(staging.path(), args);
        assert_ne!(code, 0, "{args:?}: {out}");
        assert!(
            err.contains("created as a production league") && err.contains("staging one"),
            "{args:?}: {err}"
        );
        if args[0] == "serve" {
            assert_eq!(code, 2, "{err}");
        }
    }
    // Production goes on untouched: no offset, scores taken.
    let clock = api.ok("GET", "/v1/clock", ADMIN, None).await;
    assert_eq!(clock["offset_ms"].as_i64(), Some(0), "{clock}");
    let body = Some(json!({"value": 5}));
    api.ok("POST", "/v1/players/ana/scores", SERVER, body).await;

    // The reverse: a staging league refuses the production file.
    let st = staging_season("isolate_rev", true);
    let (code, _, err) = run(st.path(), &["clock", "advance", "1h"]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(st.path()).expect("season");
    let as_prod = tempfile::NamedTempFile::new().expect("temp");
    std::fs::write(
        as_prod.path(),
        text.replacen("travel = true", "travel = false", 1),
    )
    .expect("write");
    let (code, _, err) = run(as_prod.path(), &["rollover"]);
    assert_ne!(code, 0);
    assert!(err.contains("created as a staging league"), "{err}");

    // The staging clock moves at most 400 days ahead of the real clock.
    for args in [
        &["clock", "advance", "401d"][..],
        &["clock", "set", "9999-12-31T23:59:59Z"],
    ] {
        let (code, _, err) = run(st.path(), args);
        assert_ne!(code, 0, "{args:?}");
        assert!(err.contains("at most 400 days"), "{args:?}: {err}");
    }
    let (code, out, err) = run(st.path(), &["clock", "show"]);
    assert_eq!(code, 0, "{err}");
    let shown: Value = serde_json::from_str(out.trim()).expect("clock JSON");
    assert_eq!(shown["offset_ms"].as_i64(), Some(3_600_000), "{shown}");

    // The audit log keeps its own time: a move past the players' 180 days keeps the
    // earlier entries, each with the league time beside the real one.
    let (code, _, err) = run(st.path(), &["clock", "advance", "200d"]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = run(st.path(), &["audit"]);
    assert_eq!(code, 0, "{err}");
    let audit: Value = serde_json::from_str(out.trim()).expect("audit JSON");
    let entries = audit["entries"].as_array().expect("entries");
    assert_eq!(entries.len(), 2, "{audit}");
    let time = |v: &Value| {
        chrono::DateTime::parse_from_rfc3339(v.as_str().expect("a time")).expect("RFC 3339")
    };
    // In whole hours, rounded: the two times are read a millisecond or so apart.
    let ahead = |e: &Value| {
        ((time(&e["at"]) - time(&e["recorded_at"])).num_milliseconds() as f64 / 3_600_000.0).round()
            as i64
    };
    assert_eq!(ahead(&entries[0]), 1, "{audit}");
    assert!(
        (200 * 24..=200 * 24 + 1).contains(&ahead(&entries[1])),
        "{audit}"
    );
}
