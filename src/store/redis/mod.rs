//! The Redis backend of [`Store`]: one Lua script or command per operation.
//!
//! Every operation that reads and writes runs as a Lua script from `lua/`, so it is
//! atomic on the server; every script touches the keys of one group of
//! [`crate::store::keys`] only, declared in `KEYS`, so it would run unchanged on one Redis
//! Cluster slot. Scripts are sent with EVALSHA and loaded on demand.
//!
//! Two things about redis-rs 1.x shape this module (see [`RedisOptions`]):
//!
//! - async connections time out a response after 500 ms by default, which a large
//!   pipeline or a slow network easily exceeds, so the timeouts are set explicitly;
//! - the [`ConnectionManager`] (one server) reconnects after a dropped connection but
//!   fails the command that was in flight, while the cluster connection resends it
//!   (see [`RedisStore`] for how that is kept from applying an update twice).
//!   [`RedisStore`] retries such a command itself, but only when running it twice is
//!   harmless: reads, joins, entries, profile and state writes, every rollover step
//!   (each one is idempotent), updates that carry a request id (whose idempotency
//!   record makes the second run a no-op) and reward claims that carry a claim id
//!   (likewise). An update without a request id is never retried after a failure that
//!   may have come after it ran, because the first attempt may have been applied
//!   before the connection failed; nor is a claim without a claim id, whose retry
//!   would answer "nothing" after the first attempt claimed everything.
//!
//! Scores: a board stores minus the packed score (see [`crate::season::packing`]), so ZRANGE
//! lists the best first and equal scores tie by player id in ascending byte order,
//! as the in-memory store does. Packed values stay at or below 2^53 and are exact as
//! doubles; the scripts never let Lua format a number with `%.14g`, and every score
//! read back is checked to be an integer in range before it is trusted.

pub mod connection;

use std::collections::hash_map::RandomState;
use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::path::PathBuf;
use std::sync::LazyLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{ErrorKind, RedisError, RedisResult, Script, ScriptInvocation, ServerErrorKind, Value};

use crate::error::{StoreError, TimeRefusal};
use crate::season::packing::{EXACT_LIMIT, Packing};
use crate::store::keys::{BracketKeys, PeriodKeys, PlayerKeys, SeasonKeys};
use crate::store::{
    BlockedGrant, BracketClaim, Claim, CloseCheck, Entered, Grant, JoinRequest, Joined, Now, Page,
    PlayerState, ProfileWrite, RawEntry, Store, Update, UpdateReply, UpdateStatus,
};
use connection::RedisConnection;

/// The scripts, hashed once per process (`Script::new` computes the SHA1).
struct Scripts {
    join: Script,
    enter: Script,
    update: Script,
    standings: Script,
    around: Script,
    entry: Script,
    cache_profile: Script,
    record_state: Script,
    raise_mark: Script,
    begin_close: Script,
    finish_period: Script,
    claim_bracket: Script,
    freeze: Script,
    record_outcomes: Script,
    finish_bracket: Script,
    claim_rewards: Script,
    set_profile: Script,
    grant: Script,
}

static SCRIPTS: LazyLock<Scripts> = LazyLock::new(|| Scripts {
    join: Script::new(include_str!("lua/join.lua")),
    enter: Script::new(include_str!("lua/enter.lua")),
    update: Script::new(include_str!("lua/update.lua")),
    standings: Script::new(include_str!("lua/standings.lua")),
    around: Script::new(include_str!("lua/around.lua")),
    entry: Script::new(include_str!("lua/entry.lua")),
    cache_profile: Script::new(include_str!("lua/cache_profile.lua")),
    record_state: Script::new(include_str!("lua/record_state.lua")),
    raise_mark: Script::new(include_str!("lua/raise_mark.lua")),
    begin_close: Script::new(include_str!("lua/begin_close.lua")),
    finish_period: Script::new(include_str!("lua/finish_period.lua")),
    claim_bracket: Script::new(include_str!("lua/claim_bracket.lua")),
    freeze: Script::new(include_str!("lua/freeze.lua")),
    record_outcomes: Script::new(include_str!("lua/record_outcomes.lua")),
    finish_bracket: Script::new(include_str!("lua/finish_bracket.lua")),
    claim_rewards: Script::new(include_str!("lua/claim_rewards.lua")),
    set_profile: Script::new(include_str!("lua/set_profile.lua")),
    grant: Script::new(include_str!("lua/grant.lua")),
});

/// Longest idempotency window sent to Redis (100 years, in seconds). Redis refuses an
/// expiry whose milliseconds overflow; any longer window means "forever" in practice.
const MAX_WINDOW_SECS: u64 = 100 * 366 * 24 * 3600;

/// Largest `before`/`after` sent to `around.lua`. A zset holds fewer than 2^32
/// members, so clamping changes no result and keeps Lua's arithmetic exact.
const MAX_WINDOW_ENTRIES: u64 = u32::MAX as u64;

/// Connection settings of a [`RedisStore`].
///
/// The defaults suit a game server talking to Redis in the same data centre. Every
/// field is public; the `with_*` methods set one each:
///
/// ```
/// use std::time::Duration;
/// use leaguekit::RedisOptions;
///
/// let options = RedisOptions::default()
///     .with_response_timeout(Duration::from_secs(2))
///     .with_command_attempts(2);
/// assert_eq!(options.response_timeout, Duration::from_secs(2));
/// ```
///
/// A managed Redis behind TLS with a private CA and mutual TLS, and a cluster:
///
/// ```no_run
/// # use std::time::Duration;
/// # use leaguekit::{RedisOptions, RedisStore};
/// # async fn f() -> Result<(), leaguekit::StoreError> {
/// let options = RedisOptions::default()
///     .with_ca_file("/etc/leaguekit/redis-ca.pem")
///     .with_client_cert("/etc/leaguekit/client.pem", "/etc/leaguekit/client.key")
///     .with_cluster_response_timeout(Duration::from_secs(5));
/// let store = RedisStore::connect(
///     "rediss+cluster://app:secret@10.0.0.1:6379,10.0.0.2:6379",
///     options,
/// )
/// .await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RedisOptions {
    /// How long to wait for the reply to one command or one pipeline (default 5 s).
    ///
    /// redis-rs 1.x defaults to 500 ms, which a pipeline of a few thousand updates
    /// or a slow network link can exceed; a reply that times out is reported as an
    /// error even if the server went on to execute the command. There is always a
    /// limit, so a stalled server gives an error rather than a hang.
    pub response_timeout: Duration,
    /// How long one attempt to open a connection may take (default 5 s).
    pub connection_timeout: Duration,
    /// How many times an unreachable server is tried again: by
    /// [`RedisStore::connect`], for each node, before it reports
    /// [`crate::store::redis::connection::ConnectError::Unreachable`], and, on one server, by the
    /// connection manager after a dropped connection before it fails the waiting
    /// commands (default 6: with the default delays, an unreachable server is reported
    /// after about 6 s, and a Redis restart of a few seconds is ridden out). A wrong
    /// password or a failed TLS handshake is never tried again: it fails at once.
    pub reconnect_retries: usize,
    /// The first delay between reconnection attempts; it doubles after each attempt,
    /// with jitter (default 100 ms).
    pub reconnect_min_delay: Duration,
    /// The longest delay between reconnection attempts (default 5 s).
    pub reconnect_max_delay: Duration,
    /// How many times an operation that is safe to repeat is attempted when the
    /// connection fails or the reply times out (default 3; 1 disables retries).
    pub command_attempts: u32,
    /// The delay before the first command retry; it doubles after each one
    /// (default 50 ms).
    pub retry_delay: Duration,
    /// A PEM file of CA certificates to trust for `rediss://` in addition to the
    /// system's roots (default none). The system's roots are read as OpenSSL reads
    /// them, so `SSL_CERT_FILE` and `SSL_CERT_DIR` also work, which is how the
    /// command line trusts a private CA.
    pub ca_file: Option<PathBuf>,
    /// A PEM client certificate (chain) for mutual TLS (default none; needs
    /// [`RedisOptions::client_key`]).
    pub client_cert: Option<PathBuf>,
    /// The PEM private key of [`RedisOptions::client_cert`].
    pub client_key: Option<PathBuf>,
    /// Redis Cluster only: how long one request may take in all, redirections
    /// (MOVED, ASK) and resends included (default 10 s). Each node's reply is also
    /// bounded by [`RedisOptions::response_timeout`].
    ///
    /// redis-rs's cluster connection has no timeout at all by default, so a stalled
    /// node would hang a request; and when only a per-reply timeout is set it uses
    /// that for the whole request, which leaves a resend after a slow reply no time.
    /// 10 s is two default reply timeouts.
    pub cluster_response_timeout: Duration,
    /// Redis Cluster only: how many times the cluster connection resends a request
    /// after a redirection, a dropped connection, a timeout, TRYAGAIN or CLUSTERDOWN
    /// (default 5).
    ///
    /// redis-rs's default is 16 with waits starting at 1.28 s, which keeps a caller
    /// waiting for minutes; 5 follows the redirections of a resharding (each costs one)
    /// and a reconnection, and gives up within about a second of waiting. A failover
    /// takes the cluster's `cluster-node-timeout` (15 s by default) and is better
    /// reported than waited out. Only operations that are safe to repeat use this
    /// connection; the others go through one that never resends (see [`RedisStore`]).
    pub cluster_retries: u32,
    /// Redis Cluster only: the shortest wait before a resend (default 100 ms); the
    /// wait grows with each resend, up to [`RedisOptions::reconnect_max_delay`].
    /// redis-rs's default is 1.28 s, long for a slot that moved a moment ago.
    pub cluster_min_retry_wait: Duration,
}

impl Default for RedisOptions {
    fn default() -> Self {
        Self {
            response_timeout: Duration::from_secs(5),
            connection_timeout: Duration::from_secs(5),
            reconnect_retries: 6,
            reconnect_min_delay: Duration::from_millis(100),
            reconnect_max_delay: Duration::from_secs(5),
            command_attempts: 3,
            retry_delay: Duration::from_millis(50),
            ca_file: None,
            client_cert: None,
            client_key: None,
            cluster_response_timeout: Duration::from_secs(10),
            cluster_retries: 5,
            cluster_min_retry_wait: Duration::from_millis(100),
        }
    }
}

impl RedisOptions {
    /// Sets [`RedisOptions::response_timeout`].
    pub fn with_response_timeout(mut self, timeout: Duration) -> Self {
        self.response_timeout = timeout;
        self
    }

    /// Sets [`RedisOptions::connection_timeout`].
    pub fn with_connection_timeout(mut self, timeout: Duration) -> Self {
        self.connection_timeout = timeout;
        self
    }

    /// Sets [`RedisOptions::reconnect_retries`].
    pub fn with_reconnect_retries(mut self, retries: usize) -> Self {
        self.reconnect_retries = retries;
        self
    }

    /// Sets [`RedisOptions::reconnect_min_delay`] and [`RedisOptions::reconnect_max_delay`].
    pub fn with_reconnect_delay(mut self, min: Duration, max: Duration) -> Self {
        self.reconnect_min_delay = min;
        self.reconnect_max_delay = max.max(min);
        self
    }

    /// Sets [`RedisOptions::command_attempts`] (at least 1).
    pub fn with_command_attempts(mut self, attempts: u32) -> Self {
        self.command_attempts = attempts.max(1);
        self
    }

    /// Sets [`RedisOptions::retry_delay`].
    pub fn with_retry_delay(mut self, delay: Duration) -> Self {
        self.retry_delay = delay;
        self
    }

    /// Sets [`RedisOptions::ca_file`].
    pub fn with_ca_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.ca_file = Some(path.into());
        self
    }

    /// Sets [`RedisOptions::client_cert`] and [`RedisOptions::client_key`].
    pub fn with_client_cert(mut self, cert: impl Into<PathBuf>, key: impl Into<PathBuf>) -> Self {
        self.client_cert = Some(cert.into());
        self.client_key = Some(key.into());
        self
    }

    /// Sets [`RedisOptions::cluster_response_timeout`].
    pub fn with_cluster_response_timeout(mut self, timeout: Duration) -> Self {
        self.cluster_response_timeout = timeout;
        self
    }

    /// Sets [`RedisOptions::cluster_retries`].
    pub fn with_cluster_retries(mut self, retries: u32) -> Self {
        self.cluster_retries = retries;
        self
    }

    /// Sets [`RedisOptions::cluster_min_retry_wait`].
    pub fn with_cluster_min_retry_wait(mut self, wait: Duration) -> Self {
        self.cluster_min_retry_wait = wait;
        self
    }

    /// The connection manager configuration these options describe.
    pub(crate) fn manager_config(&self) -> ConnectionManagerConfig {
        ConnectionManagerConfig::new()
            // Replace redis-rs's 500 ms default: it is per reply, and one reply may be
            // a whole pipeline of updates.
            .set_response_timeout(Some(self.response_timeout))
            .set_connection_timeout(Some(self.connection_timeout))
            // Reconnection backoff: min_delay * 2^n with jitter, capped, so a Redis
            // restart is ridden out without hammering it.
            .set_number_of_retries(self.reconnect_retries)
            .set_exponent_base(2.0)
            .set_min_delay(self.reconnect_min_delay)
            .set_max_delay(self.reconnect_max_delay.max(self.reconnect_min_delay))
    }
}

/// When a failed command may be sent again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Retry {
    /// The operation is idempotent: retry after any connection failure or timeout.
    Idempotent,
    /// Running it twice could apply it twice: retry only on errors that prove the
    /// server did not run it (loading, busy, try again).
    NotExecuted,
}

/// A [`Store`] on Redis: one server, or a Redis Cluster (every script touches one
/// slot).
///
/// Cheap to clone: clones share the connections. On one server that is one
/// multiplexed connection, which the [`ConnectionManager`] re-establishes after a
/// failure and which never resends a command by itself. On a cluster there are two:
/// redis-rs's cluster connection resends a command after a redirection, a dropped
/// connection or a timeout, which is right for operations that are safe to repeat
/// but could apply an update without a request id twice; so those (see `Retry`) go
/// through a second cluster connection that never resends, and the store retries
/// them only after errors that prove the server did not run them.
#[derive(Debug, Clone)]
pub struct RedisStore {
    connection: RedisConnection,
    at_most_once: RedisConnection,
    options: RedisOptions,
}

impl RedisStore {
    /// Connects to `url` and checks the connection. The forms (see
    /// [`crate::store::redis::connection::RedisUrl`]):
    ///
    /// - `redis://[user:password@]host[:port][/db]`, `rediss://...` for TLS;
    /// - `redis+cluster://[user:password@]host:port,host:port,...`,
    ///   `rediss+cluster://...` for a Redis Cluster over TLS;
    /// - `unix:///path/to/redis.sock`.
    ///
    /// Fails with [`StoreError::Connect`] if the URL or the TLS files are unusable, the
    /// server refuses the credentials or the TLS handshake (at once), or no node
    /// answers within the options' connection timeout and reconnection retries.
    pub async fn connect(url: &str, options: RedisOptions) -> Result<RedisStore, StoreError> {
        let opened = connection::open(url, &options, true).await?;
        Ok(RedisStore {
            connection: opened.connection,
            at_most_once: opened.at_most_once,
            options,
        })
    }

    /// Wraps an existing connection manager to one server (its own timeouts and
    /// reconnection settings apply; `options` only sets the command retries).
    pub fn from_manager(manager: ConnectionManager, options: RedisOptions) -> RedisStore {
        let connection = RedisConnection::Node(manager);
        RedisStore {
            at_most_once: connection.clone(),
            connection,
            options,
        }
    }

    /// The options this store was created with.
    pub fn options(&self) -> &RedisOptions {
        &self.options
    }

    /// Runs `attempt` on a connection, retrying as `retry` allows, with exponential
    /// backoff between attempts.
    async fn run<T, F, Fut>(&self, op: &'static str, retry: Retry, mut attempt: F) -> RedisResult<T>
    where
        F: FnMut(RedisConnection) -> Fut,
        Fut: Future<Output = RedisResult<T>>,
    {
        let attempts = self.options.command_attempts.max(1);
        let mut delay = self.options.retry_delay;
        let connection = match retry {
            Retry::Idempotent => &self.connection,
            Retry::NotExecuted => &self.at_most_once,
        };
        let mut n = 1;
        loop {
            match attempt(connection.clone()).await {
                Ok(value) => return Ok(value),
                Err(err) if n < attempts && retryable(&err, retry) => {
                    tracing::warn!(op, attempt = n, error = %err, "redis command failed; retrying");
                    tokio::time::sleep(delay).await;
                    delay = delay.saturating_mul(2);
                    n += 1;
                }
                Err(err) => return Err(err),
            }
        }
    }

    /// Runs one script invocation that writes: a failure after the script may have
    /// run is [`StoreError::Unknown`] (see [`may_have_run`]).
    async fn invoke_write(
        &self,
        op: &'static str,
        retry: Retry,
        invocation: &ScriptInvocation<'_>,
    ) -> Result<Value, StoreError> {
        self.run(op, retry, |mut con| async move {
            invocation.invoke_async::<Value>(&mut con).await
        })
        .await
        .map_err(|e| write_error(op, e))
    }

    /// Runs one script invocation (EVALSHA, loading the script on NOSCRIPT).
    async fn invoke(
        &self,
        op: &'static str,
        retry: Retry,
        invocation: &ScriptInvocation<'_>,
    ) -> Result<Value, StoreError> {
        Ok(self
            .run(op, retry, |mut con| async move {
                invocation.invoke_async::<Value>(&mut con).await
            })
            .await?)
    }

    /// Runs one plain command.
    async fn command(
        &self,
        op: &'static str,
        retry: Retry,
        cmd: &redis::Cmd,
    ) -> Result<Value, StoreError> {
        Ok(self
            .run(op, retry, |mut con| async move {
                cmd.query_async::<Value>(&mut con).await
            })
            .await?)
    }
}

/// Whether `err` allows another attempt under `retry`.
fn retryable(err: &RedisError, retry: Retry) -> bool {
    // The server refused the command before running it: loading, busy, a slot that
    // moved or is moving (MOVED, ASK: the cluster connection has refreshed its map by
    // the next attempt), a multi-key command mid-migration (TRYAGAIN), a cluster or
    // master that is down, a write that reached a demoted master (READONLY); or the
    // cluster connection had no connection to send it on.
    let not_run = matches!(
        err.kind(),
        ErrorKind::Server(
            ServerErrorKind::BusyLoading
                | ServerErrorKind::TryAgain
                | ServerErrorKind::Moved
                | ServerErrorKind::Ask
                | ServerErrorKind::ClusterDown
                | ServerErrorKind::MasterDown
                | ServerErrorKind::ReadOnly
        ) | ErrorKind::ClusterConnectionNotFound
    ) || err.code() == Some("BUSY");
    match retry {
        Retry::NotExecuted => not_run,
        Retry::Idempotent => {
            not_run || err.is_io_error() || err.is_timeout() || err.is_connection_dropped()
        }
    }
}

/// Whether a command that failed with `err` may have been executed by the server: the
/// request may have been sent before the connection failed or the reply timed out. A
/// refused connection, or an error reply, proves it was not (our scripts check before
/// they write).
fn may_have_run(err: &RedisError) -> bool {
    (err.is_io_error() && !err.is_connection_refusal()) || err.kind() == ErrorKind::Parse
}

/// The error of a write that failed: "unknown" when it may have been applied.
fn write_error(op: &'static str, err: RedisError) -> StoreError {
    if may_have_run(&err) {
        StoreError::Unknown { op, source: err }
    } else {
        StoreError::Redis(err)
    }
}

/// The league clock argument of a script: empty means "read TIME".
fn now_arg(now: Now) -> String {
    match now {
        Now::At(ms) => ms.to_string(),
        _ => String::new(),
    }
}

/// A `{"not_yet", wait}` or `{"future", ahead, now}` reply item list, if it is one.
fn time_refusal(items: &[Value]) -> Result<Option<TimeRefusal>, StoreError> {
    let number = |i: usize, what: &str| -> Result<u64, StoreError> {
        items
            .get(i)
            .ok_or_else(|| protocol(format!("reply without {what}")))
            .and_then(|v| uint(v, what))
    };
    match items.first().map(|s| text(s, "status")).transpose()? {
        Some("not_yet") => Ok(Some(TimeRefusal::NotYet {
            wait_ms: number(1, "wait")?,
        })),
        Some("future") => Ok(Some(TimeRefusal::Future {
            ahead_ms: number(1, "ahead")?,
            now_ms: i64::try_from(number(2, "now")?).unwrap_or(i64::MAX),
        })),
        _ => Ok(None),
    }
}

/// A token that tells this call's own earlier attempt apart from another request
/// with the same id: unique per process run (random seed, pid, time) and per call.
fn attempt_token() -> String {
    static SEED: LazyLock<u64> = LazyLock::new(|| {
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u32(std::process::id());
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        hasher.write_u128(nanos);
        hasher.finish()
    });
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!("{:016x}.{:x}", *SEED, NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Builds the `update.lua` invocation of one update.
///
/// The arguments are prepared so that Lua's doubles stay exact without changing any
/// outcome: the value is clamped to ±2^53 (every value beyond takes the score out of
/// range either way), the tick to the last tick of the period (as `Packing::apply`
/// does), and invalid packing parameters, which the in-memory store refuses every
/// update for, are sent as a `max_score` of -1.
fn update_invocation<'s>(
    keys: &BracketKeys,
    update: &Update<'_>,
    token: &str,
) -> ScriptInvocation<'s> {
    let valid = update.span >= 2 && Packing::new(update.max_score, update.span - 1).is_ok();
    let limit = EXACT_LIMIT as i64;
    let mut inv = SCRIPTS.update.prepare_invoke();
    inv.key(&keys.board).key(&keys.meta);
    let window = match &update.request {
        Some((key, window)) => {
            inv.key(key);
            (*window).min(MAX_WINDOW_SECS)
        }
        None => 0,
    };
    let time = &update.time;
    inv.arg(update.player)
        .arg(update.mode.as_str())
        .arg(update.value.clamp(-limit, limit).to_string())
        .arg(if valid {
            update.tick.min(update.span - 2)
        } else {
            0
        })
        .arg(if valid {
            update.max_score.to_string()
        } else {
            "-1".to_owned()
        })
        .arg(update.span)
        .arg(window)
        .arg(token)
        .arg(now_arg(time.now))
        .arg(time.at_ms)
        .arg(time.start_ms)
        .arg(time.closes_ms)
        .arg(time.skew_ms);
    inv
}

// ---------------------------------------------------------------------------------
// Reply parsing. Nothing Redis returns is unwrapped: a reply of an unexpected shape
// becomes StoreError::Protocol with what was expected and what came.

fn protocol(what: impl Into<String>) -> StoreError {
    StoreError::Protocol(what.into())
}

/// A nil reply; also RESP3's `false`, which a Lua `false` becomes for RESP3 clients.
fn is_nil(v: &Value) -> bool {
    matches!(v, Value::Nil | Value::Boolean(false))
}

fn text<'v>(v: &'v Value, what: &str) -> Result<&'v str, StoreError> {
    match v {
        Value::BulkString(bytes) => {
            std::str::from_utf8(bytes).map_err(|_| protocol(format!("{what} is not UTF-8: {v:?}")))
        }
        Value::SimpleString(s) => Ok(s),
        Value::VerbatimString { text, .. } => Ok(text),
        other => Err(protocol(format!(
            "expected {what} as a string, got {other:?}"
        ))),
    }
}

fn uint(v: &Value, what: &str) -> Result<u64, StoreError> {
    match v {
        Value::Int(i) => {
            u64::try_from(*i).map_err(|_| protocol(format!("{what} is negative: {i}")))
        }
        other => {
            let s = text(other, what)?;
            s.parse::<u64>()
                .map_err(|_| protocol(format!("{what} is not an unsigned integer: {s:?}")))
        }
    }
}

fn bracket_number(s: &str, what: &str) -> Result<u32, StoreError> {
    s.parse::<u32>()
        .map_err(|_| protocol(format!("{what} is not a bracket number: {s:?}")))
}

/// The packed value of a raw board score (minus the packed value). Scores arrive as
/// strings such as `-123` or `-1.2e+17` (or as doubles over RESP3); anything that is
/// not minus an integer in `0..=2^53` was not written by leaguekit.
fn packed_from_score(v: &Value, what: &str) -> Result<u64, StoreError> {
    let score = match v {
        Value::Double(d) => *d,
        Value::Int(i) => *i as f64,
        other => {
            let s = text(other, what)?;
            s.parse::<f64>()
                .map_err(|_| protocol(format!("{what} is not a number: {s:?}")))?
        }
    };
    // `-0` and `0` both mean the never-scored value 0.
    let packed = if score == 0.0 { 0.0 } else { -score };
    if !packed.is_finite() || packed.fract() != 0.0 || packed < 0.0 || packed > EXACT_LIMIT as f64 {
        return Err(protocol(format!(
            "{what} {score} is not minus a packed score (an integer in 0..=2^53)"
        )));
    }
    // Exact: an integer in 0..=2^53 converts without rounding.
    Ok(packed as u64)
}

fn array(v: Value, what: &str) -> Result<Vec<Value>, StoreError> {
    match v {
        Value::Array(items) => Ok(items),
        other => Err(protocol(format!(
            "expected {what} as an array, got {other:?}"
        ))),
    }
}

/// Field-value pairs from HGETALL: a flat array (RESP2) or a map (RESP3).
fn pairs(v: Value, what: &str) -> Result<Vec<(String, String)>, StoreError> {
    let raw: Vec<(Value, Value)> = match v {
        Value::Map(map) => map,
        Value::Array(items) => {
            if items.len() % 2 != 0 {
                return Err(protocol(format!(
                    "{what}: odd number of items in a hash reply"
                )));
            }
            let mut it = items.into_iter();
            let mut out = Vec::new();
            while let (Some(k), Some(v)) = (it.next(), it.next()) {
                out.push((k, v));
            }
            out
        }
        Value::Nil => Vec::new(),
        other => {
            return Err(protocol(format!(
                "expected {what} as a hash, got {other:?}"
            )));
        }
    };
    raw.iter()
        .map(|(k, v)| Ok((text(k, what)?.to_owned(), text(v, what)?.to_owned())))
        .collect()
}

/// A `{total, first rank, (player, score, profile)*}` reply of standings/around.lua.
fn page(v: Value, what: &str) -> Result<Page, StoreError> {
    let items = array(v, what)?;
    if items.len() < 2 || (items.len() - 2) % 3 != 0 {
        return Err(protocol(format!(
            "{what}: expected a count, an offset and triples, got {} items",
            items.len()
        )));
    }
    let total = uint(&items[0], "board size")?;
    let offset = uint(&items[1], "first rank")?;
    let entries = items[2..]
        .chunks_exact(3)
        .map(|entry| {
            let player = text(&entry[0], "player id")?.to_owned();
            let packed = packed_from_score(&entry[1], "board score")?;
            let profile = if is_nil(&entry[2]) {
                None
            } else {
                Some(cached_profile(text(&entry[2], "cached profile")?)?.to_owned())
            };
            Ok(RawEntry {
                player,
                packed,
                profile,
            })
        })
        .collect::<Result<Vec<_>, StoreError>>()?;
    Ok(Page {
        total,
        offset,
        entries,
    })
}

/// The JSON of a cached profile `"version json"`.
fn cached_profile(cached: &str) -> Result<&str, StoreError> {
    match cached.split_once(' ') {
        Some((version, json)) if version.bytes().all(|b| b.is_ascii_digit()) => Ok(json),
        _ => Err(protocol(format!(
            "cached profile {cached:?} is not \"version json\""
        ))),
    }
}

/// A claim answer as `claim_rewards.lua` stores it: a JSON list of strings, source
/// and grant alternating (cjson's encoding, which escapes every string).
fn stored_claim(json: &str) -> Result<Vec<(String, String)>, StoreError> {
    let flat: Vec<String> = serde_json::from_str(json).map_err(|e| {
        protocol(format!(
            "stored claim {json:?} is not a JSON list of strings: {e}"
        ))
    })?;
    if !flat.len().is_multiple_of(2) {
        return Err(protocol(format!(
            "stored claim {json:?} has an odd number of items"
        )));
    }
    let mut it = flat.into_iter();
    let mut out = Vec::new();
    while let (Some(source), Some(grant)) = (it.next(), it.next()) {
        out.push((source, grant));
    }
    Ok(out)
}

/// The reply of `update.lua`, given this call's attempt token.
fn update_reply(v: Value, token: &str) -> Result<UpdateReply, StoreError> {
    let items = array(v, "update reply")?;
    let status = items
        .first()
        .ok_or_else(|| protocol("empty update reply"))
        .and_then(|s| text(s, "update status"))?;
    let number = |i: usize, what: &str| -> Result<u64, StoreError> {
        items
            .get(i)
            .ok_or_else(|| protocol(format!("update reply without {what}")))
            .and_then(|v| uint(v, what))
    };
    let (status, packed, rank) = match status {
        "applied" => (
            UpdateStatus::Applied,
            number(1, "packed")?,
            number(2, "rank")?,
        ),
        "duplicate" => {
            let first = items
                .get(3)
                .map(|v| text(v, "attempt token"))
                .transpose()?
                .unwrap_or("");
            // Our own earlier attempt, applied before its reply was lost: this call
            // applied the update, so it answers as the first attempt would have.
            let status = if first == token {
                UpdateStatus::Applied
            } else {
                UpdateStatus::Duplicate
            };
            (status, number(1, "packed")?, number(2, "rank")?)
        }
        "out_of_range" => {
            let current = number(1, "packed")?;
            (UpdateStatus::OutOfRange { current }, current, 0)
        }
        "closed" => (UpdateStatus::Closed, 0, 0),
        "not_placed" => (UpdateStatus::NotPlaced, 0, 0),
        "not_yet" | "future" => match time_refusal(&items)? {
            Some(why) => (UpdateStatus::Refused(why), 0, 0),
            None => return Err(protocol("bad time refusal")),
        },
        "malformed" => {
            let what = items
                .get(1)
                .map(|v| text(v, "detail"))
                .transpose()?
                .unwrap_or("?");
            return Err(protocol(format!(
                "update found data it did not write: {what}"
            )));
        }
        other => return Err(protocol(format!("unknown update status {other:?}"))),
    };
    Ok(UpdateReply {
        status,
        packed,
        rank,
    })
}

impl Store for RedisStore {
    async fn now(&self) -> Result<i64, StoreError> {
        let reply = self
            .command("time", Retry::Idempotent, &redis::cmd("TIME"))
            .await?;
        match array(reply, "TIME reply")?.as_slice() {
            [secs, micros] => {
                let secs = i64::try_from(uint(secs, "seconds")?)
                    .map_err(|_| protocol("TIME seconds out of range"))?;
                let micros = i64::try_from(uint(micros, "microseconds")?)
                    .map_err(|_| protocol("TIME microseconds out of range"))?;
                Ok(secs.saturating_mul(1000).saturating_add(micros / 1000))
            }
            other => Err(protocol(format!("TIME: {} items", other.len()))),
        }
    }

    async fn join(
        &self,
        period: &PeriodKeys,
        request: &JoinRequest<'_>,
    ) -> Result<Joined, StoreError> {
        // Keys in the order join.lua declares them.
        let time = &request.time;
        let mut inv = SCRIPTS.join.prepare_invoke();
        inv.key(&period.assign)
            .key(&period.joins)
            .key(&period.meta)
            .arg(request.player)
            .arg(request.tier)
            .arg(request.size.max(1))
            .arg(now_arg(time.now))
            .arg(time.at_ms)
            .arg(time.start_ms)
            .arg(time.closes_ms)
            .arg(time.skew_ms)
            .arg(
                request
                    .replace_full
                    .map(|b| b.to_string())
                    .unwrap_or_default(),
            )
            .arg(request.ttl_secs.clamp(1, MAX_WINDOW_SECS));
        // A join is idempotent: a repeated join returns the first placement.
        let items = array(
            self.invoke("join", Retry::Idempotent, &inv).await?,
            "join reply",
        )?;
        if let Some(why) = time_refusal(&items)? {
            return Err(StoreError::Time(why));
        }
        let status = items
            .first()
            .ok_or_else(|| protocol("empty join reply"))
            .and_then(|s| text(s, "join status"))?;
        let placed = |new: bool| -> Result<Joined, StoreError> {
            let tier = items
                .get(1)
                .ok_or_else(|| protocol("join reply without tier"))
                .and_then(|v| text(v, "tier"))?;
            let bracket = items
                .get(2)
                .ok_or_else(|| protocol("join reply without bracket"))
                .and_then(|v| text(v, "bracket"))
                .and_then(|s| bracket_number(s, "bracket"))?;
            Ok(Joined {
                tier: tier.to_owned(),
                bracket,
                new,
            })
        };
        match status {
            "new" => placed(true),
            "existing" => placed(false),
            "closed" => Err(StoreError::PeriodClosed),
            "malformed" => Err(protocol(format!(
                "join found data it did not write: {}",
                items
                    .get(1)
                    .map(|v| text(v, "detail"))
                    .transpose()?
                    .unwrap_or("?")
            ))),
            other => Err(protocol(format!("unknown join status {other:?}"))),
        }
    }

    async fn placement(
        &self,
        period: &PeriodKeys,
        player: &str,
    ) -> Result<Option<(String, u32)>, StoreError> {
        let mut cmd = redis::cmd("HGET");
        cmd.arg(&period.assign).arg(player);
        let reply = self.command("placement", Retry::Idempotent, &cmd).await?;
        if is_nil(&reply) {
            return Ok(None);
        }
        let placed = text(&reply, "assignment")?;
        // Tier names never contain ':', so the bracket follows the last one.
        let (tier, bracket) = placed
            .rsplit_once(':')
            .ok_or_else(|| protocol(format!("assignment {placed:?} is not tier:bracket")))?;
        Ok(Some((
            tier.to_owned(),
            bracket_number(bracket, "assigned bracket")?,
        )))
    }

    async fn enter(
        &self,
        bracket: &BracketKeys,
        player: &str,
        size: u32,
        profile: Option<(u64, &str)>,
        ttl_secs: u64,
    ) -> Result<Entered, StoreError> {
        let mut inv = SCRIPTS.enter.prepare_invoke();
        inv.key(&bracket.board)
            .key(&bracket.profiles)
            .key(&bracket.meta)
            .arg(player)
            .arg(size.max(1))
            .arg(ttl_secs.clamp(1, MAX_WINDOW_SECS));
        if let Some((version, json)) = profile {
            inv.arg(version).arg(json);
        }
        let reply = self.invoke("enter", Retry::Idempotent, &inv).await?;
        match text(&reply, "enter reply")? {
            "ok" => Ok(Entered::Ok),
            "full" => Ok(Entered::Full),
            "closed" => Err(StoreError::PeriodClosed),
            other => Err(protocol(format!("unknown enter reply {other:?}"))),
        }
    }

    async fn update(
        &self,
        bracket: &BracketKeys,
        update: &Update<'_>,
    ) -> Result<UpdateReply, StoreError> {
        let token = attempt_token();
        let inv = update_invocation(bracket, update, &token);
        // With a request id, a second run finds the first one's record (and our
        // token in it); without one, it would apply the update twice.
        let retry = if update.request.is_some() {
            Retry::Idempotent
        } else {
            Retry::NotExecuted
        };
        let reply = self.invoke_write("update", retry, &inv).await?;
        update_reply(reply, &token)
    }

    async fn update_many(
        &self,
        updates: &[(&BracketKeys, Update<'_>)],
    ) -> Result<Vec<UpdateReply>, StoreError> {
        if updates.is_empty() {
            return Ok(Vec::new());
        }
        // One token per update: two updates of one batch may share a request id, and
        // the second must still see the first as a different request.
        let base = attempt_token();
        let tokens: Vec<String> = (0..updates.len())
            .map(|i| format!("{base}.{i:x}"))
            .collect();
        let invocations: Vec<ScriptInvocation<'_>> = updates
            .iter()
            .zip(&tokens)
            .map(|((keys, update), token)| update_invocation(keys, update, token))
            .collect();
        let mut pipe = redis::pipe();
        // EVALSHA in a pipeline is not reloaded on NOSCRIPT, so the pipeline loads the
        // script first (a cheap no-op when cached); the server runs it before the
        // calls that follow on the same connection.
        pipe.load_script(&SCRIPTS.update).ignore();
        for inv in &invocations {
            pipe.invoke_script(inv);
        }
        // Per-command errors come back in place instead of failing the whole batch.
        pipe.ignore_errors();
        let retry = if updates.iter().all(|(_, u)| u.request.is_some()) {
            Retry::Idempotent
        } else {
            Retry::NotExecuted
        };
        let pipe = &pipe;
        let replies = self
            .run("update_many", retry, |mut con| async move {
                pipe.query_async::<Vec<Value>>(&mut con).await
            })
            .await
            .map_err(|e| write_error("update_many", e))?;
        if replies.len() != updates.len() {
            return Err(protocol(format!(
                "pipeline of {} updates answered {} replies",
                updates.len(),
                replies.len()
            )));
        }
        replies
            .into_iter()
            .zip(&tokens)
            .map(|(reply, token)| match reply {
                Value::ServerError(err) => Err(StoreError::Redis(err.into())),
                reply => update_reply(reply, token),
            })
            .collect()
    }

    async fn standings(
        &self,
        bracket: &BracketKeys,
        offset: u64,
        limit: u64,
    ) -> Result<Page, StoreError> {
        // Redis ranks are signed 64-bit; no board comes near the clamp.
        let top = i64::MAX as u64;
        let first = offset.min(top);
        let last = offset.saturating_add(limit.saturating_sub(1)).min(top);
        let mut inv = SCRIPTS.standings.prepare_invoke();
        inv.key(&bracket.board)
            .key(&bracket.profiles)
            .arg(first)
            .arg(last)
            .arg(if limit == 0 { "0" } else { "1" });
        let reply = self.invoke("standings", Retry::Idempotent, &inv).await?;
        let mut page = page(reply, "standings reply")?;
        page.offset = offset;
        Ok(page)
    }

    async fn around(
        &self,
        bracket: &BracketKeys,
        player: &str,
        before: u64,
        after: u64,
    ) -> Result<Option<Page>, StoreError> {
        let mut inv = SCRIPTS.around.prepare_invoke();
        inv.key(&bracket.board)
            .key(&bracket.profiles)
            .arg(player)
            .arg(before.min(MAX_WINDOW_ENTRIES))
            .arg(after.min(MAX_WINDOW_ENTRIES));
        let reply = self.invoke("around", Retry::Idempotent, &inv).await?;
        if is_nil(&reply) {
            return Ok(None);
        }
        page(reply, "around reply").map(Some)
    }

    async fn entry(
        &self,
        bracket: &BracketKeys,
        player: &str,
    ) -> Result<Option<(u64, u64)>, StoreError> {
        let mut inv = SCRIPTS.entry.prepare_invoke();
        inv.key(&bracket.board).arg(player);
        let reply = self.invoke("entry", Retry::Idempotent, &inv).await?;
        if is_nil(&reply) {
            return Ok(None);
        }
        match array(reply, "entry reply")?.as_slice() {
            [rank, score] => Ok(Some((
                uint(rank, "rank")?,
                packed_from_score(score, "board score")?,
            ))),
            other => Err(protocol(format!(
                "entry reply: expected rank and score, got {} items",
                other.len()
            ))),
        }
    }

    async fn joined(&self, period: &PeriodKeys) -> Result<Vec<(String, u64)>, StoreError> {
        let mut cmd = redis::cmd("HGETALL");
        cmd.arg(&period.joins);
        let reply = self.command("joined", Retry::Idempotent, &cmd).await?;
        let mut out = pairs(reply, "join counters")?
            .into_iter()
            .map(|(tier, n)| {
                let n = n
                    .parse::<u64>()
                    .map_err(|_| protocol(format!("join counter of {tier:?} is {n:?}")))?;
                Ok((tier, n))
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        out.sort();
        Ok(out)
    }

    async fn joined_many(
        &self,
        periods: &[PeriodKeys],
    ) -> Result<Vec<Vec<(String, u64)>>, StoreError> {
        // Each period is a slot of its own: concurrent single reads, which one
        // multiplexed connection sends together and a cluster routes by slot.
        futures::future::try_join_all(periods.iter().map(|p| self.joined(p))).await
    }

    async fn set_profile(
        &self,
        player_keys: &PlayerKeys,
        fields: &[(String, String)],
        order: &[String],
        max_bytes: usize,
        ttl_secs: u64,
    ) -> Result<ProfileWrite, StoreError> {
        let mut inv = SCRIPTS.set_profile.prepare_invoke();
        inv.key(player_keys.profile())
            .arg(max_bytes)
            .arg(ttl_secs.clamp(1, MAX_WINDOW_SECS))
            .arg(order.len());
        for name in order {
            inv.arg(name);
        }
        for (k, v) in fields {
            inv.arg(k).arg(v);
        }
        // Setting the same fields again is harmless, so a retry is safe (the version
        // may move by two, which only orders the cached copies).
        let items = array(
            self.invoke("set_profile", Retry::Idempotent, &inv).await?,
            "set_profile reply",
        )?;
        match items.as_slice() {
            [status, version, json] if text(status, "status")? == "ok" => {
                Ok(ProfileWrite::Written {
                    version: uint(version, "profile version")?,
                    json: text(json, "profile")?.to_owned(),
                })
            }
            [status, bytes] if text(status, "status")? == "too_large" => {
                Ok(ProfileWrite::TooLarge {
                    bytes: usize::try_from(uint(bytes, "profile size")?).unwrap_or(usize::MAX),
                })
            }
            other => Err(protocol(format!("set_profile: {other:?}"))),
        }
    }

    async fn cache_profile(
        &self,
        bracket: &BracketKeys,
        player: &str,
        version: u64,
        json: &str,
    ) -> Result<(), StoreError> {
        // The cached copy lives in the bracket's slot, so it is a second step: a
        // script, so that a player who left the board does not reappear in its cache.
        let mut inv = SCRIPTS.cache_profile.prepare_invoke();
        inv.key(&bracket.board)
            .key(&bracket.profiles)
            .arg(player)
            .arg(version)
            .arg(json);
        self.invoke("cache_profile", Retry::Idempotent, &inv)
            .await?;
        Ok(())
    }

    async fn profile(
        &self,
        player_keys: &PlayerKeys,
    ) -> Result<(Vec<(String, String)>, u64), StoreError> {
        let mut cmd = redis::cmd("HGETALL");
        cmd.arg(player_keys.profile());
        let reply = self.command("profile", Retry::Idempotent, &cmd).await?;
        let mut version = 0;
        let mut fields = Vec::new();
        for (k, v) in pairs(reply, "profile")? {
            if k == "#v" {
                version = v
                    .parse()
                    .map_err(|_| protocol(format!("profile version {v:?}")))?;
            } else {
                fields.push((k, v));
            }
        }
        fields.sort();
        Ok((fields, version))
    }

    async fn player_state(
        &self,
        player_keys: &PlayerKeys,
    ) -> Result<Option<PlayerState>, StoreError> {
        let mut cmd = redis::cmd("HMGET");
        cmd.arg(player_keys.state())
            .arg("period")
            .arg("tier")
            .arg("bracket")
            .arg("prev_period")
            .arg("prev_tier")
            .arg("prev_bracket");
        let reply = self
            .command("player_state", Retry::Idempotent, &cmd)
            .await?;
        let placement =
            |p: &Value, t: &Value, b: &Value| -> Result<(u64, String, u32), StoreError> {
                Ok((
                    uint(p, "state period")?,
                    text(t, "state tier")?.to_owned(),
                    bracket_number(text(b, "state bracket")?, "state bracket")?,
                ))
            };
        match array(reply, "player state")?.as_slice() {
            [period, ..] if is_nil(period) => Ok(None),
            [period, tier, bracket, pp, pt, pb] => {
                let (period, tier, bracket) = placement(period, tier, bracket)?;
                let mut state = PlayerState::new(period, tier, bracket);
                if !is_nil(pp) {
                    state.previous = Some(placement(pp, pt, pb)?);
                }
                Ok(Some(state))
            }
            other => Err(protocol(format!(
                "player state: expected 6 fields, got {}",
                other.len()
            ))),
        }
    }

    async fn record_state(
        &self,
        player_keys: &PlayerKeys,
        state: &PlayerState,
        ttl_secs: u64,
        trim_before: u64,
    ) -> Result<(), StoreError> {
        let mut inv = SCRIPTS.record_state.prepare_invoke();
        inv.key(player_keys.state())
            .key(player_keys.profile())
            .key(player_keys.rewards())
            .key(player_keys.claims())
            .arg(state.period)
            .arg(&state.tier)
            .arg(state.bracket)
            .arg(ttl_secs.clamp(1, MAX_WINDOW_SECS))
            .arg(trim_before);
        // Idempotent: writing the same state again is a no-op.
        let reply = self.invoke("record_state", Retry::Idempotent, &inv).await?;
        match reply {
            Value::Array(items) => Err(protocol(format!(
                "record_state found data it did not write: {}",
                items
                    .get(1)
                    .map(|v| text(v, "detail"))
                    .transpose()?
                    .unwrap_or("?")
            ))),
            _ => Ok(()),
        }
    }

    async fn closed_through(&self, season: &SeasonKeys) -> Result<u64, StoreError> {
        let mut cmd = redis::cmd("HGET");
        cmd.arg(&season.meta).arg("closed_through");
        let reply = self
            .command("closed_through", Retry::Idempotent, &cmd)
            .await?;
        if is_nil(&reply) {
            return Ok(0);
        }
        uint(&reply, "closed_through")
    }

    async fn set_closed_through(&self, season: &SeasonKeys, period: u64) -> Result<(), StoreError> {
        let mut inv = SCRIPTS.raise_mark.prepare_invoke();
        inv.key(&season.meta).arg(period);
        self.invoke("set_closed_through", Retry::Idempotent, &inv)
            .await?;
        Ok(())
    }

    async fn begin_close(
        &self,
        period: &PeriodKeys,
        check: CloseCheck,
    ) -> Result<(Option<String>, Vec<(String, u64)>), StoreError> {
        let mut inv = SCRIPTS.begin_close.prepare_invoke();
        inv.key(&period.meta)
            .key(&period.joins)
            .arg(now_arg(check.now))
            .arg(check.closes_ms);
        let items = array(
            self.invoke("begin_close", Retry::Idempotent, &inv).await?,
            "begin_close reply",
        )?;
        if let Some(why) = time_refusal(&items)? {
            return Err(StoreError::Time(why));
        }
        let [status, summary, joins @ ..] = items.as_slice() else {
            return Err(protocol("short begin_close reply"));
        };
        if text(status, "begin_close status")? != "ok" {
            return Err(protocol(format!("begin_close status {status:?}")));
        }
        let summary = if is_nil(summary) {
            None
        } else {
            Some(text(summary, "period summary")?.to_owned())
        };
        if joins.len() % 2 != 0 {
            return Err(protocol("begin_close: odd number of join counter items"));
        }
        let mut counts = joins
            .chunks_exact(2)
            .map(|kv| {
                let tier = text(&kv[0], "tier")?.to_owned();
                let n = uint(&kv[1], "join counter")?;
                Ok((tier, n))
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        counts.sort();
        Ok((summary, counts))
    }

    async fn period_summary(&self, period: &PeriodKeys) -> Result<Option<String>, StoreError> {
        let mut cmd = redis::cmd("HGET");
        cmd.arg(&period.meta).arg("closed");
        let reply = self
            .command("period_summary", Retry::Idempotent, &cmd)
            .await?;
        if is_nil(&reply) {
            return Ok(None);
        }
        Ok(Some(text(&reply, "period summary")?.to_owned()))
    }

    async fn finish_period(
        &self,
        period: &PeriodKeys,
        summary: &str,
        ttl_secs: u64,
    ) -> Result<(), StoreError> {
        let mut inv = SCRIPTS.finish_period.prepare_invoke();
        inv.key(&period.meta)
            .key(&period.joins)
            .key(&period.assign)
            .arg(summary)
            .arg(ttl_secs.clamp(1, MAX_WINDOW_SECS));
        self.invoke("finish_period", Retry::Idempotent, &inv)
            .await?;
        Ok(())
    }

    async fn claim_bracket(
        &self,
        bracket: &BracketKeys,
        owner: &str,
        lease_ms: u64,
        check: CloseCheck,
    ) -> Result<BracketClaim, StoreError> {
        let mut inv = SCRIPTS.claim_bracket.prepare_invoke();
        inv.key(&bracket.meta)
            .key(&bracket.lease)
            .arg(owner)
            .arg(lease_ms.max(1))
            .arg(now_arg(check.now))
            .arg(check.closes_ms);
        // Renewing one's own lease is harmless, so a retry is safe.
        let items = array(
            self.invoke("claim_bracket", Retry::Idempotent, &inv)
                .await?,
            "claim_bracket reply",
        )?;
        if let Some(why) = time_refusal(&items)? {
            return Err(StoreError::Time(why));
        }
        match items.as_slice() {
            [status, tally] if text(status, "claim status")? == "done" => {
                Ok(BracketClaim::Done(text(tally, "bracket tally")?.to_owned()))
            }
            [status] => match text(status, "claim status")? {
                "mine" => Ok(BracketClaim::Mine),
                "busy" => Ok(BracketClaim::Busy),
                other => Err(protocol(format!("unknown claim status {other:?}"))),
            },
            other => Err(protocol(format!("claim_bracket: {} items", other.len()))),
        }
    }

    async fn freeze(
        &self,
        bracket: &BracketKeys,
        check: CloseCheck,
    ) -> Result<Vec<(String, u64)>, StoreError> {
        let mut inv = SCRIPTS.freeze.prepare_invoke();
        inv.key(&bracket.board)
            .key(&bracket.meta)
            .arg(now_arg(check.now))
            .arg(check.closes_ms);
        let items = array(
            self.invoke("freeze", Retry::Idempotent, &inv).await?,
            "freeze reply",
        )?;
        if let Some(why) = time_refusal(&items)? {
            return Err(StoreError::Time(why));
        }
        let board = match items.as_slice() {
            [status, board] if text(status, "freeze status")? == "ok" => {
                array(board.clone(), "frozen board")?
            }
            other => return Err(protocol(format!("freeze: {} items", other.len()))),
        };
        if board.len() % 2 != 0 {
            return Err(protocol("freeze: odd number of board items"));
        }
        board
            .chunks_exact(2)
            .map(|e| {
                Ok((
                    text(&e[0], "player id")?.to_owned(),
                    packed_from_score(&e[1], "board score")?,
                ))
            })
            .collect()
    }

    async fn record_outcomes(
        &self,
        bracket: &BracketKeys,
        outcomes: &[(String, String)],
        ttl_secs: u64,
    ) -> Result<(), StoreError> {
        let mut inv = SCRIPTS.record_outcomes.prepare_invoke();
        inv.key(&bracket.board)
            .key(&bracket.profiles)
            .key(&bracket.meta)
            .key(&bracket.outcomes)
            .arg(ttl_secs.clamp(1, MAX_WINDOW_SECS));
        for (player, outcome) in outcomes {
            inv.arg(player).arg(outcome);
        }
        self.invoke("record_outcomes", Retry::Idempotent, &inv)
            .await?;
        Ok(())
    }

    async fn grant(
        &self,
        grants: &[Grant],
        ttl_secs: u64,
    ) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        if grants.is_empty() {
            return Ok(Vec::new());
        }
        let ttl = ttl_secs.clamp(1, MAX_WINDOW_SECS);
        let invocations: Vec<ScriptInvocation<'_>> = grants
            .iter()
            .map(|(keys, source, grant)| {
                let mut inv = SCRIPTS.grant.prepare_invoke();
                inv.key(keys.rewards()).arg(source).arg(grant).arg(ttl);
                inv
            })
            .collect();
        let mut pipe = redis::pipe();
        pipe.load_script(&SCRIPTS.grant).ignore();
        for inv in &invocations {
            pipe.invoke_script(inv);
        }
        // One player's bad data must not fail the others' grants: errors come back in
        // place, one per grant.
        pipe.ignore_errors();
        let pipe = &pipe;
        // Each grant is written at most once (HSETNX), so the whole pipeline may be
        // sent again.
        let replies = self
            .run("grant", Retry::Idempotent, |mut con| async move {
                pipe.query_async::<Vec<Value>>(&mut con).await
            })
            .await?;
        if replies.len() != grants.len() {
            return Err(protocol(format!(
                "pipeline of {} grants answered {} replies",
                grants.len(),
                replies.len()
            )));
        }
        Ok(replies
            .into_iter()
            .map(|reply| match reply {
                Value::ServerError(err) => Err(StoreError::Redis(err.into())),
                _ => Ok(()),
            })
            .collect())
    }

    async fn block_grants(
        &self,
        season: &SeasonKeys,
        blocked: &[BlockedGrant],
    ) -> Result<(), StoreError> {
        if blocked.is_empty() {
            return Ok(());
        }
        let mut cmd = redis::cmd("HSET");
        cmd.arg(&season.blocked);
        for b in blocked {
            let value = serde_json::json!({"grant": b.grant, "error": b.error}).to_string();
            cmd.arg(format!("{}|{}", b.source, b.player)).arg(value);
        }
        self.command("block_grants", Retry::Idempotent, &cmd)
            .await?;
        Ok(())
    }

    async fn blocked_grants(&self, season: &SeasonKeys) -> Result<Vec<BlockedGrant>, StoreError> {
        let mut cmd = redis::cmd("HGETALL");
        cmd.arg(&season.blocked);
        let reply = self
            .command("blocked_grants", Retry::Idempotent, &cmd)
            .await?;
        let mut out = pairs(reply, "blocked grants")?
            .into_iter()
            .map(|(field, value)| {
                // Sources never contain '|'; player ids may.
                let (source, player) = field
                    .split_once('|')
                    .ok_or_else(|| protocol(format!("blocked grant field {field:?}")))?;
                let v: serde_json::Value = serde_json::from_str(&value)
                    .map_err(|e| protocol(format!("blocked grant {value:?}: {e}")))?;
                Ok(BlockedGrant {
                    player: player.to_owned(),
                    source: source.to_owned(),
                    grant: v["grant"].as_str().unwrap_or_default().to_owned(),
                    error: v["error"].as_str().unwrap_or_default().to_owned(),
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        out.sort_by(|a, b| (&a.source, &a.player).cmp(&(&b.source, &b.player)));
        Ok(out)
    }

    async fn unblock_grant(
        &self,
        season: &SeasonKeys,
        source: &str,
        player: &str,
    ) -> Result<(), StoreError> {
        let mut cmd = redis::cmd("HDEL");
        cmd.arg(&season.blocked).arg(format!("{source}|{player}"));
        self.command("unblock_grant", Retry::Idempotent, &cmd)
            .await?;
        Ok(())
    }

    async fn finish_bracket(&self, bracket: &BracketKeys, tally: &str) -> Result<(), StoreError> {
        let mut inv = SCRIPTS.finish_bracket.prepare_invoke();
        inv.key(&bracket.meta).key(&bracket.lease).arg(tally);
        self.invoke("finish_bracket", Retry::Idempotent, &inv)
            .await?;
        Ok(())
    }

    async fn outcome(
        &self,
        bracket: &BracketKeys,
        player: &str,
    ) -> Result<Option<String>, StoreError> {
        let mut cmd = redis::cmd("HGET");
        cmd.arg(&bracket.outcomes).arg(player);
        let reply = self.command("outcome", Retry::Idempotent, &cmd).await?;
        if is_nil(&reply) {
            return Ok(None);
        }
        Ok(Some(text(&reply, "outcome")?.to_owned()))
    }

    async fn outcomes(&self, bracket: &BracketKeys) -> Result<Vec<(String, String)>, StoreError> {
        let mut cmd = redis::cmd("HGETALL");
        cmd.arg(&bracket.outcomes);
        let reply = self.command("outcomes", Retry::Idempotent, &cmd).await?;
        pairs(reply, "outcomes")
    }

    async fn rewards(&self, player_keys: &PlayerKeys) -> Result<Vec<(String, String)>, StoreError> {
        let mut cmd = redis::cmd("HGETALL");
        cmd.arg(player_keys.rewards());
        let reply = self.command("rewards", Retry::Idempotent, &cmd).await?;
        let mut pending: Vec<(String, String)> = pairs(reply, "rewards")?
            .into_iter()
            .filter_map(|(source, value)| value.strip_prefix("p|").map(|g| (source, g.to_owned())))
            .collect();
        pending.sort();
        Ok(pending)
    }

    async fn claim_rewards(
        &self,
        player_keys: &PlayerKeys,
        claim: &Claim<'_>,
    ) -> Result<Vec<(String, String)>, StoreError> {
        let mut inv = SCRIPTS.claim_rewards.prepare_invoke();
        // A flag, then the id: an empty claim id is an id like any other.
        inv.key(player_keys.rewards())
            .key(player_keys.claims())
            .arg(if claim.claim_id.is_some() { "1" } else { "0" })
            .arg(claim.claim_id.unwrap_or(""))
            .arg(claim.period)
            .arg(claim.ttl_secs.clamp(1, MAX_WINDOW_SECS));
        // With a claim id a second run returns the stored answer; without one it
        // would answer "nothing" after the first run claimed, so it is not retried.
        let retry = if claim.claim_id.is_some() {
            Retry::Idempotent
        } else {
            Retry::NotExecuted
        };
        let reply = self.invoke_write("claim_rewards", retry, &inv).await?;
        let mut claimed = match reply {
            // A new claim: the flat list itself.
            Value::Array(items) => {
                if items.len() % 2 != 0 {
                    return Err(protocol("claim: odd number of items"));
                }
                items
                    .chunks_exact(2)
                    .map(|kv| {
                        Ok((
                            text(&kv[0], "reward source")?.to_owned(),
                            text(&kv[1], "grant")?.to_owned(),
                        ))
                    })
                    .collect::<Result<Vec<_>, StoreError>>()?
            }
            // A repeated claim id: the answer stored by the first claim.
            stored => stored_claim(text(&stored, "stored claim")?)?,
        };
        claimed.sort();
        Ok(claimed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_parse_exactly_or_not_at_all() {
        let s = |x: &str| Value::BulkString(x.as_bytes().to_vec());
        assert_eq!(packed_from_score(&s("0"), "t").ok(), Some(0));
        assert_eq!(packed_from_score(&s("-0"), "t").ok(), Some(0));
        assert_eq!(
            packed_from_score(&s("-9007199254740991"), "t").ok(),
            Some(9_007_199_254_740_991)
        );
        assert_eq!(
            packed_from_score(&s("-1.2345678901234e+14"), "t").ok(),
            Some(123_456_789_012_340)
        );
        assert_eq!(packed_from_score(&Value::Double(-42.0), "t").ok(), Some(42));
        for bad in ["1", "-1.5", "inf", "-inf", "nan", "-1e17", "x", ""] {
            assert!(packed_from_score(&s(bad), "t").is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn only_safe_errors_are_retried() {
        let io: RedisError = std::io::Error::new(std::io::ErrorKind::TimedOut, "t").into();
        assert!(retryable(&io, Retry::Idempotent));
        assert!(!retryable(&io, Retry::NotExecuted));
        let loading: RedisError = (ErrorKind::Server(ServerErrorKind::BusyLoading), "l").into();
        assert!(retryable(&loading, Retry::NotExecuted));
        let other: RedisError = (ErrorKind::Client, "c").into();
        assert!(!retryable(&other, Retry::Idempotent));
        // Cluster answers that prove the command did not run.
        for kind in [
            ServerErrorKind::Moved,
            ServerErrorKind::Ask,
            ServerErrorKind::ClusterDown,
            ServerErrorKind::TryAgain,
            ServerErrorKind::ReadOnly,
        ] {
            let err: RedisError = (ErrorKind::Server(kind), "c").into();
            assert!(retryable(&err, Retry::NotExecuted), "{kind:?}");
            assert!(retryable(&err, Retry::Idempotent), "{kind:?}");
        }
        // A script error or CROSSSLOT is final.
        let cross: RedisError = (ErrorKind::Server(ServerErrorKind::CrossSlot), "c").into();
        assert!(!retryable(&cross, Retry::Idempotent));
    }

    /// Redis Cluster only checks the keys a script declares; a key a script touches
    /// without declaring it could live on another node. So every `redis.call` in
    /// every script must name its key as `KEYS[n]` (or a local bound to one).
    #[test]
    fn scripts_touch_only_declared_keys() {
        let sources = [
            ("join", include_str!("lua/join.lua")),
            ("enter", include_str!("lua/enter.lua")),
            ("update", include_str!("lua/update.lua")),
            ("standings", include_str!("lua/standings.lua")),
            ("around", include_str!("lua/around.lua")),
            ("entry", include_str!("lua/entry.lua")),
            ("cache_profile", include_str!("lua/cache_profile.lua")),
            ("record_state", include_str!("lua/record_state.lua")),
            ("raise_mark", include_str!("lua/raise_mark.lua")),
            ("begin_close", include_str!("lua/begin_close.lua")),
            ("finish_period", include_str!("lua/finish_period.lua")),
            ("claim_bracket", include_str!("lua/claim_bracket.lua")),
            ("freeze", include_str!("lua/freeze.lua")),
            ("record_outcomes", include_str!("lua/record_outcomes.lua")),
            ("finish_bracket", include_str!("lua/finish_bracket.lua")),
            ("claim_rewards", include_str!("lua/claim_rewards.lua")),
            ("set_profile", include_str!("lua/set_profile.lua")),
            ("grant", include_str!("lua/grant.lua")),
        ];
        // The list above must name every script the store runs.
        let listed: Vec<&str> = sources.iter().map(|(name, _)| *name).collect();
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/store/redis/lua");
        let mut on_disk: Vec<String> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("cannot list {dir}: {e}"))
            .filter_map(|entry| entry.ok())
            .filter_map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                name.strip_suffix(".lua").map(str::to_owned)
            })
            .collect();
        on_disk.sort();
        let mut sorted = listed.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, on_disk, "every script in lua/ must be checked here");
        for (name, source) in sources {
            let code: Vec<&str> = source
                .lines()
                .map(|l| l.split("--").next().unwrap_or(""))
                .collect();
            let aliases: Vec<&str> = code
                .iter()
                .filter_map(|l| l.trim().strip_prefix("local "))
                .filter_map(|l| l.split_once('='))
                .filter(|(_, rhs)| rhs.trim().starts_with("KEYS["))
                .map(|(lhs, _)| lhs.trim())
                .collect();
            let mut calls = 0;
            for line in &code {
                for call in line.split("redis.call(").skip(1) {
                    calls += 1;
                    let mut args = call.splitn(3, ',');
                    let command = args.next().unwrap_or("").trim();
                    // TIME is the only command our scripts run without a key.
                    if command.trim_end_matches(')') == "'TIME'" {
                        continue;
                    }
                    let key = args.next().unwrap_or("").trim().trim_end_matches(')');
                    assert!(
                        key.starts_with("KEYS[") || aliases.contains(&key),
                        "{name}.lua: {command} on {key:?}, which is not a declared key"
                    );
                }
            }
            assert!(calls > 0, "{name}.lua makes no calls?");
        }
    }

    #[test]
    fn stored_claims_parse_exactly_or_not_at_all() {
        // cjson escapes '/' as '\/' and control bytes as \u00XX.
        let json = r#"["1\/gold\/1","a\"b\u0000c","2\/gold\/1",""]"#;
        assert_eq!(
            stored_claim(json).ok(),
            Some(vec![
                ("1/gold/1".to_owned(), "a\"b\0c".to_owned()),
                ("2/gold/1".to_owned(), String::new()),
            ])
        );
        assert_eq!(stored_claim("[]").ok(), Some(Vec::new()));
        for bad in ["{}", "[\"odd\"]", "[1,2]", "nope", ""] {
            assert!(
                matches!(stored_claim(bad), Err(StoreError::Protocol(_))),
                "{bad} accepted"
            );
        }
    }

    /// A write that failed after it may have reached the server is "unknown"; one that
    /// provably did not (the connection was refused, or the server answered with an
    /// error before running it) is not.
    #[test]
    fn writes_that_may_have_run_are_unknown() {
        let reset: RedisError =
            std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset").into();
        let timeout: RedisError =
            std::io::Error::new(std::io::ErrorKind::TimedOut, "timed out").into();
        let refused: RedisError =
            std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused").into();
        let loading: RedisError = (ErrorKind::Server(ServerErrorKind::BusyLoading), "l").into();
        assert!(may_have_run(&reset) && may_have_run(&timeout));
        assert!(!may_have_run(&refused) && !may_have_run(&loading));
        assert!(matches!(
            write_error("update", reset),
            StoreError::Unknown { op: "update", .. }
        ));
        assert!(matches!(
            write_error("update", refused),
            StoreError::Redis(_)
        ));
    }

    #[test]
    fn tokens_are_unique() {
        let a = attempt_token();
        let b = attempt_token();
        assert_ne!(a, b);
        assert!(!a.contains(':'));
    }
}
