//! The test harness shared by the integration tests: a real Redis, never a mock.
//!
//! `redis_url()` uses `LEAGUEKIT_TEST_REDIS_URL` when set (`scripts/test` sets it to
//! a server it started); otherwise it starts one `redis-server` for this test binary
//! on a free loopback port. Likewise `cluster::cluster_url()` (a three-master Redis
//! Cluster, `LEAGUEKIT_TEST_CLUSTER_URL`) and `tls::tls_target()` (a TLS-only server
//! with an ACL user, `LEAGUEKIT_TEST_TLS_URL` and `LEAGUEKIT_TEST_TLS_CA`). Redis
//! tests never skip: without a server they panic and say how to get one. Tests share
//! the servers, so each one builds its keys under `unique_prefix()` and never sees
//! another test's data. Every server a test starts is stopped when the test process
//! exits, however it exits (see `RedisServer::launch`).
#![allow(dead_code, unreachable_pub)]

pub mod cluster;
pub mod snapshot;
pub mod tls;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How to get a server, for every failure to find or start one.
const HOW_TO_GET_REDIS: &str = "the Redis tests need a real redis-server: install redis-server \
     (apt-get install redis-server) or run scripts/test, which installs and starts one \
     (or set LEAGUEKIT_TEST_REDIS_URL=redis://HOST:PORT/ to use a running server)";

/// The URL of the Redis server the tests use (started on first use if needed).
pub fn redis_url() -> String {
    if let Ok(url) = std::env::var("LEAGUEKIT_TEST_REDIS_URL")
        && !url.trim().is_empty()
    {
        return url;
    }
    static SHARED: OnceLock<String> = OnceLock::new();
    SHARED
        .get_or_init(|| {
            let server = RedisServer::start(&[]);
            let url = server.url();
            // The shared server lives as long as the test process: statics are never
            // dropped, so its watchdog (see `RedisServer::start`) stops it when the
            // process exits, however it exits.
            std::mem::forget(server);
            url
        })
        .clone()
}

/// The `redis-server` binary: `LEAGUEKIT_TEST_REDIS_BIN`, else `redis-server` on PATH.
/// Panics with instructions when there is none.
pub fn redis_bin() -> String {
    if let Ok(bin) = std::env::var("LEAGUEKIT_TEST_REDIS_BIN")
        && !bin.trim().is_empty()
    {
        return bin;
    }
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("redis-server"))
            .find(|candidate| candidate.is_file())
    });
    match found {
        Some(path) => path.to_string_lossy().into_owned(),
        None => panic!("redis-server not found on PATH; {HOW_TO_GET_REDIS}"),
    }
}

/// A redis-server started by a test, stopped when dropped or when the test process
/// exits (a watchdog shell kills it once the process is gone).
pub struct RedisServer {
    /// The loopback port it listens on (the TLS port of a TLS-only server).
    pub port: u16,
    /// Its working directory (cluster config, certificates; persistence is off).
    pub dir: PathBuf,
    /// Whether `SHUTDOWN` can be sent over plain TCP (not for a TLS-only server).
    plain: bool,
    watchdog: Child,
}

impl RedisServer {
    /// Starts a server on a free loopback port with `extra` arguments (such as
    /// `["--cluster-enabled", "yes"]`) and waits until it answers PING.
    pub fn start(extra: &[&str]) -> RedisServer {
        Self::start_with_env(extra, &[])
    }

    /// Starts a server: for each attempt, `pick_port` gives a port (a fixed one, to
    /// restart a server where it was), a fresh directory is made and `prepare`d
    /// (certificates, or the files of a server being restarted), `args(port, dir)` are
    /// passed to redis-server, and the server is ready when `ready(port)`. `plain` says
    /// whether `SHUTDOWN` can be sent over plain TCP when it is dropped.
    ///
    /// The server runs under a watchdog shell that polls this test process and kills
    /// the server (and removes its directory) once the process is gone, however it
    /// ended, or when the watchdog gets SIGTERM (`Drop`).
    pub fn launch(
        tag: &str,
        pick_port: impl Fn() -> u16,
        prepare: impl Fn(&Path),
        args: impl Fn(u16, &Path) -> Vec<String>,
        ready: impl Fn(u16) -> bool,
        plain: bool,
    ) -> RedisServer {
        Self::launch_with_env(tag, pick_port, prepare, args, ready, plain, &[])
    }

    /// Starts a server as [`RedisServer::start`] does, with `env` set in its
    /// environment (e.g. `LD_PRELOAD` of a clock shim).
    pub fn start_with_env(extra: &[&str], env: &[(String, String)]) -> RedisServer {
        let cluster = extra.contains(&"--cluster-enabled");
        let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        Self::launch_with_env(
            "redis",
            if cluster {
                free_cluster_port
            } else {
                free_port
            },
            |_| {},
            |port, dir| {
                let mut args = base_args(dir);
                args.splice(0..0, ["--port".to_owned(), port.to_string()]);
                args.extend(extra.iter().cloned());
                args
            },
            ping,
            true,
            env,
        )
    }

    /// [`RedisServer::launch`] with `env` set in the server's environment.
    pub fn launch_with_env(
        tag: &str,
        pick_port: impl Fn() -> u16,
        prepare: impl Fn(&Path),
        args: impl Fn(u16, &Path) -> Vec<String>,
        ready: impl Fn(u16) -> bool,
        plain: bool,
        env: &[(String, String)],
    ) -> RedisServer {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let bin = redis_bin();
        let mut last_error = String::new();
        // The port is free when we look, but another process may take it before the
        // server binds it; try a few.
        for _ in 0..5 {
            let port = pick_port();
            let dir = std::env::temp_dir().join(format!(
                "leaguekit-test-{tag}-{}-{}-{port}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ));
            if let Err(e) = std::fs::create_dir_all(&dir) {
                panic!("cannot create {}: {e}", dir.display());
            }
            prepare(&dir);
            // sh $0=bin $1=test pid $2=dir, then redis-server's arguments.
            let script = r#"
                bin=$0; parent=$1; dir=$2; shift 2
                "$bin" "$@" &
                R=$!
                trap 'kill "$R" 2>/dev/null' TERM
                while kill -0 "$parent" 2>/dev/null && kill -0 "$R" 2>/dev/null; do
                    sleep 0.2
                done
                kill "$R" 2>/dev/null
                wait "$R" 2>/dev/null
                rm -rf "$dir"
            "#;
            let mut cmd = Command::new("sh");
            cmd.envs(env.iter().map(|(k, v)| (k, v)))
                .arg("-c")
                .arg(script)
                .arg(&bin)
                .arg(std::process::id().to_string())
                .arg(&dir)
                .args(args(port, &dir))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            let mut watchdog = match cmd.spawn() {
                Ok(child) => child,
                Err(e) => panic!("cannot run sh to start {bin}: {e}; {HOW_TO_GET_REDIS}"),
            };
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                if ready(port) {
                    return RedisServer {
                        port,
                        dir,
                        plain,
                        watchdog,
                    };
                }
                // The watchdog exits as soon as the server does (e.g. port taken).
                if let Ok(Some(_)) = watchdog.try_wait() {
                    last_error = format!("{bin} exited at start on port {port}");
                    break;
                }
                if Instant::now() > deadline {
                    terminate(&mut watchdog);
                    last_error = format!("{bin} was not ready on port {port} in 10 s");
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        panic!("could not start redis-server: {last_error}; {HOW_TO_GET_REDIS}");
    }

    /// `redis://127.0.0.1:PORT/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}

/// The arguments every test server gets: loopback only, no persistence, its own dir.
pub fn base_args(dir: &Path) -> Vec<String> {
    [
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        &dir.to_string_lossy(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// SIGTERM to a watchdog (its trap stops the server), then waits for it. Not
/// `Child::kill`: SIGKILL would leave the server running with nobody watching it.
fn terminate(watchdog: &mut Child) {
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(watchdog.id().to_string())
        .status();
    let _ = watchdog.wait();
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        if self.plain {
            // Ask the server to stop; the watchdog then cleans up and exits.
            let _ = command(self.port, &["SHUTDOWN", "NOSAVE"]);
        }
        terminate(&mut self.watchdog);
    }
}

/// Whether something accepts TCP connections on the loopback `port`.
pub fn listening(port: u16) -> bool {
    TcpStream::connect_timeout(
        &std::net::SocketAddr::from(([127, 0, 0, 1], port)),
        Duration::from_millis(200),
    )
    .is_ok()
}

/// A port nobody listens on right now.
pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0")
        .unwrap_or_else(|e| panic!("cannot bind a loopback port: {e}"));
    listener
        .local_addr()
        .unwrap_or_else(|e| panic!("cannot read the bound port: {e}"))
        .port()
}

/// A port for a cluster node: free, and so is its cluster bus port (port + 10000),
/// which must also stay below 65536 (redis-server refuses to start otherwise).
pub fn free_cluster_port() -> u16 {
    for _ in 0..100 {
        let port = free_port();
        if port <= 55535 && TcpListener::bind(("127.0.0.1", port + 10000)).is_ok() {
            return port;
        }
    }
    panic!("found no free loopback port whose cluster bus port (+10000) is free too");
}

fn ping(port: u16) -> bool {
    matches!(command(port, &["PING"]), Ok(reply) if reply.starts_with("+PONG"))
}

/// Sends one command over a fresh connection and returns the reply's text: a status,
/// error or integer line, or the contents of a bulk string. Enough for set-up commands
/// (PING, CLUSTER ADDSLOTS, CLUSTER INFO, CLIENT PAUSE, SHUTDOWN); tests use redis-rs.
pub fn command(port: u16, args: &[&str]) -> std::io::Result<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut out = format!("*{}\r\n", args.len());
    for arg in args {
        out.push_str(&format!("${}\r\n{arg}\r\n", arg.len()));
    }
    stream.write_all(out.as_bytes())?;
    let line = read_line(&mut stream)?;
    if let Some(len) = line.strip_prefix('$') {
        let len: i64 = len.trim_end().parse().unwrap_or(-1);
        if len < 0 {
            return Ok(String::new());
        }
        let mut body = vec![0u8; len as usize + 2];
        stream.read_exact(&mut body)?;
        body.truncate(len as usize);
        return Ok(String::from_utf8_lossy(&body).into_owned());
    }
    Ok(line)
}

fn read_line(stream: &mut TcpStream) -> std::io::Result<String> {
    let mut reply = Vec::new();
    let mut byte = [0u8; 1];
    while !reply.ends_with(b"\r\n") {
        if stream.read(&mut byte)? == 0 {
            break;
        }
        reply.push(byte[0]);
    }
    Ok(String::from_utf8_lossy(&reply).into_owned())
}

/// A key prefix no other test (or run) uses: tag, process id, a counter and the time.
/// Only letters, digits, `-` and `_`, so it is a valid `key_prefix`.
pub fn unique_prefix(tag: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    // Keep the prefix within the 64 bytes a key_prefix may have.
    let tag: String = tag
        .chars()
        .take(24)
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        "lkt_{tag}_{}_{}_{nanos}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// A [`leaguekit::RedisStore`] on the test server with default options.
pub async fn redis_store() -> leaguekit::RedisStore {
    let url = redis_url();
    match leaguekit::RedisStore::connect(&url, leaguekit::RedisOptions::default()).await {
        Ok(store) => store,
        Err(e) => panic!("cannot connect to the test Redis at {url}: {e}; {HOW_TO_GET_REDIS}"),
    }
}

/// A [`leaguekit::RedisStore`] on the test Redis Cluster (three masters).
pub async fn cluster_store() -> leaguekit::RedisStore {
    let url = cluster::cluster_url();
    match leaguekit::RedisStore::connect(&url, leaguekit::RedisOptions::default()).await {
        Ok(store) => store,
        Err(e) => panic!("cannot connect to the test cluster at {url}: {e}; {HOW_TO_GET_REDIS}"),
    }
}

/// A [`leaguekit::RedisStore`] on the TLS test server, logged in as its ACL user.
pub async fn tls_store() -> leaguekit::RedisStore {
    let target = tls::tls_target();
    let options = leaguekit::RedisOptions::default().with_ca_file(&target.ca);
    match leaguekit::RedisStore::connect(&target.url(), options).await {
        Ok(store) => store,
        Err(e) => panic!(
            "cannot connect to the TLS test server at {}: {e}; {HOW_TO_GET_REDIS}",
            target.anonymous_url()
        ),
    }
}
