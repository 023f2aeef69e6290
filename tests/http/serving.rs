//! Starts `leaguekit serve` (the real binary) on a free loopback port against the test
//! Redis, with a season whose first period holds the real "now" (the league clock is
//! Redis's), and stops it with a signal. Shared by `tests/http/http.rs` and
//! `tests/http/browser.rs`.
#![allow(dead_code, unreachable_pub)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use chrono::{DateTime, SecondsFormat, Utc};

use super::common;

/// A `server` token of the test servers.
pub const SERVER: &str = "server-token-for-tests-0001";
/// A `viewer` token of the test servers.
pub const VIEWER: &str = "viewer-token-for-tests-0001";
/// An `admin` token, named `ops`: a test server has it with
/// `admin_tokens: Some(ADMIN_ENTRY)` (none by default).
pub const ADMIN: &str = "admin-token-for-tests-0001";
/// The `LEAGUEKIT_ADMIN_TOKENS` entry of [`ADMIN`].
pub const ADMIN_ENTRY: &str = "ops:admin-token-for-tests-0001";

/// An RFC 3339 time in whole seconds.
pub fn rfc(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Now, in whole seconds.
pub fn now() -> DateTime<Utc> {
    let n = Utc::now();
    n - chrono::Duration::nanoseconds(i64::from(n.timestamp_subsec_nanos()))
}

/// The example season with daily periods whose first one ends at `first_end`, its own
/// key prefix, `[clock] max_skew` and `extra` appended (a `[server]` section, say).
pub fn season(
    tag: &str,
    first_end: DateTime<Utc>,
    max_skew: &str,
    extra: &str,
) -> tempfile::NamedTempFile {
    let start = first_end - chrono::Duration::days(1);
    let text = std::fs::read_to_string("config/season.toml")
        .expect("config/season.toml")
        .replacen(
            "key_prefix = \"lk\"",
            &format!("key_prefix = \"{}\"", common::unique_prefix(tag)),
            1,
        )
        .replacen("period = \"weekly\"", "period = \"daily\"", 1)
        .replacen(
            "start = 2026-01-05T00:00:00Z",
            &format!("start = {}", rfc(start)),
            1,
        )
        .replacen(
            "max_skew = \"5s\"",
            &format!("max_skew = \"{max_skew}\""),
            1,
        );
    assert!(
        !text.contains("key_prefix = \"lk\"")
            && !text.contains("period = \"weekly\"")
            && text.contains(&format!("max_skew = \"{max_skew}\"")),
        "the example season's prefix, period or skew moved"
    );
    let mut file = tempfile::NamedTempFile::new().expect("temp");
    file.write_all(text.as_bytes()).expect("write");
    file.write_all(extra.as_bytes()).expect("write");
    file
}

/// A season whose first period ends in 12 hours.
pub fn open_season(tag: &str) -> tempfile::NamedTempFile {
    season(tag, now() + chrono::Duration::hours(12), "1s", "")
}

/// A running `leaguekit serve`.
pub struct Served {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// Everything it printed on stderr so far.
    stderr: Arc<Mutex<Vec<String>>>,
}

/// How to start a server.
pub struct Start<'a> {
    pub config: &'a Path,
    pub redis: String,
    pub server_tokens: Option<&'a str>,
    pub viewer_tokens: Option<&'a str>,
    pub admin_tokens: Option<&'a str>,
    /// `LEAGUEKIT_PLAYER_TOKEN_SECRET` (none by default: player tokens off).
    pub player_secret: Option<&'a str>,
    pub args: Vec<&'a str>,
    pub log: &'a str,
    /// More environment variables (`LEAGUEKIT_WEBHOOK_*`, say).
    pub env: Vec<(&'a str, String)>,
}

impl<'a> Start<'a> {
    pub fn new(config: &'a Path) -> Self {
        Start {
            config,
            redis: common::redis_url(),
            server_tokens: Some(SERVER),
            viewer_tokens: Some(VIEWER),
            admin_tokens: None,
            player_secret: None,
            args: vec!["--no-scheduler"],
            log: "warn",
            env: Vec::new(),
        }
    }

    fn command(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_leaguekit"));
        c.arg("--config")
            .arg(self.config)
            .arg("--redis")
            .arg(&self.redis)
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(&self.args)
            .env_remove("LEAGUEKIT_SERVER_TOKENS")
            .env_remove("LEAGUEKIT_VIEWER_TOKENS")
            .env_remove("LEAGUEKIT_ADMIN_TOKENS")
            .env_remove("LEAGUEKIT_PLAYER_TOKEN_SECRET")
            .env_remove("LEAGUEKIT_PLAYER_TOKEN_MAX_TTL")
            .env_remove("LEAGUEKIT_STREAMS_MAX")
            .env_remove("LEAGUEKIT_STREAMS_PER_TOKEN")
            .env_remove("LEAGUEKIT_WEBHOOK_FROM")
            .env_remove("LEAGUEKIT_WEBHOOK_DEAD_MAX")
            .env_remove("LEAGUEKIT_WEBHOOK_DEAD_KEEP")
            .env_remove("LEAGUEKIT_CONFIG")
            .env_remove("LEAGUEKIT_REDIS")
            .env_remove("LEAGUEKIT_WEBHOOK_URLS")
            .env_remove("LEAGUEKIT_WEBHOOK_SECRET")
            .env_remove("LEAGUEKIT_WEBHOOK_EVENTS")
            .env_remove("LEAGUEKIT_WEBHOOK_ATTEMPTS")
            .env_remove("LEAGUEKIT_WEBHOOK_BACKOFF_MS")
            .env_remove("LEAGUEKIT_WEBHOOK_TIMEOUT_MS")
            .env("LEAGUEKIT_LOG", self.log)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if let Some(t) = self.server_tokens {
            c.env("LEAGUEKIT_SERVER_TOKENS", t);
        }
        if let Some(t) = self.viewer_tokens {
            c.env("LEAGUEKIT_VIEWER_TOKENS", t);
        }
        if let Some(t) = self.admin_tokens {
            c.env("LEAGUEKIT_ADMIN_TOKENS", t);
        }
        if let Some(s) = self.player_secret {
            c.env("LEAGUEKIT_PLAYER_TOKEN_SECRET", s);
        }
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c
    }

    /// Runs it and waits until it listens.
    pub fn spawn(&self) -> Served {
        let mut child = self.command().spawn().expect("spawn leaguekit serve");
        let stderr = child.stderr.take().expect("stderr");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = mpsc::channel();
        let keep = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("on http://").nth(1) {
                    let addr = rest.split_whitespace().next().unwrap_or("").to_owned();
                    let _ = tx.send(addr);
                }
                keep.lock().expect("lines").push(line);
            }
        });
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(addr) = rx.recv_timeout(Duration::from_millis(50)) {
                return Served {
                    child,
                    base: format!("http://{addr}"),
                    stderr: lines,
                };
            }
            if let Ok(Some(status)) = child.try_wait() {
                std::thread::sleep(Duration::from_millis(100));
                panic!(
                    "leaguekit serve exited at start ({status}): {}",
                    lines.lock().expect("lines").join("\n")
                );
            }
            assert!(
                Instant::now() < deadline,
                "leaguekit serve did not start in 60 s"
            );
        }
    }

    /// Runs it expecting it to refuse to start: its exit code and stderr.
    pub fn refused(&self) -> (Option<i32>, String) {
        let out = self.command().output().expect("run leaguekit serve");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

impl Served {
    /// Starts a server for `config` with the test tokens and no scheduler.
    pub fn start(config: &Path) -> Served {
        Start::new(config).spawn()
    }

    /// `base` + `path`.
    /// The text of `/metrics`, read with `token`.
    pub async fn metrics(&self, http: &reqwest::Client, token: &str) -> String {
        http.get(self.url("/metrics"))
            .bearer_auth(token)
            .send()
            .await
            .expect("metrics")
            .text()
            .await
            .expect("metrics text")
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends SIGTERM.
    pub fn terminate(&self) {
        let ok = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(ok.success(), "kill -TERM failed");
    }

    /// Waits for the process to exit, at most `limit`.
    pub fn wait(&mut self, limit: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + limit;
        loop {
            if let Ok(Some(s)) = self.child.try_wait() {
                return Some(s);
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// What it printed on stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().expect("lines").join("\n")
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A call with a bearer `token` and an optional JSON body: its status and its JSON
/// body (the text as a JSON string when it is not JSON).
pub async fn call(
    http: &reqwest::Client,
    served: &Served,
    method: reqwest::Method,
    path: &str,
    token: &str,
    body: Option<serde_json::Value>,
) -> (reqwest::StatusCode, serde_json::Value) {
    let mut r = http.request(method, served.url(path)).bearer_auth(token);
    if let Some(b) = body {
        r = r.json(&b);
    }
    let resp = r.send().await.expect("send");
    let status = resp.status();
    let text = resp.text().await.expect("body");
    (
        status,
        serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text)),
    )
}
