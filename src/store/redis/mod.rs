//! The Redis backend of [`Store`](crate::Store): one Lua script or command per operation, one file
//! per concern (`league.rs`, `ranking.rs`, `rollover.rs`) beside the `lua/` scripts they
//! run; connecting in [`connection`], reply parsing in `reply.rs`.
//!
//! Owns: what is sent to Redis and when a failed command may be sent again. Must not:
//! decide league rules (it executes the step it is asked for) or build keys other
//! than through [`crate::store::keys`].
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

mod adjust;
mod audit;
mod bans;
mod bracket_scripts;
mod bulk;
mod clock;
mod clocked;
pub mod connection;
mod correction;
mod delivery;
mod events;
mod failure;
mod joins;
mod league;
mod maxmemory;
mod options;
mod outage;
mod outcomes;
mod pages;
mod pipeline;
mod ranking;
mod reply;
mod rollover;
mod scripts;
mod updates;

pub use options::RedisOptions;
use reply::{protocol, text, uint};

use std::collections::hash_map::RandomState;
use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use redis::aio::ConnectionManager;
use redis::{ErrorKind, RedisError, RedisResult, ScriptInvocation, ServerErrorKind, Value};

use crate::error::{StoreError, TimeRefusal};
use crate::store::Now;
use connection::{RedisConnection, Renewing, Routed};

/// Longest idempotency window sent to Redis (100 years, in seconds). Redis refuses an
/// expiry whose milliseconds overflow; any longer window means "forever" in practice.
const MAX_WINDOW_SECS: u64 = 100 * 366 * 24 * 3600;

/// Largest `before`/`after` sent to `around.lua`. A zset holds fewer than 2^32
/// members, so clamping changes no result and keeps Lua's arithmetic exact.
const MAX_WINDOW_ENTRIES: u64 = u32::MAX as u64;

/// When a failed command may be sent again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Retry {
    /// The operation is idempotent: retry after any connection failure or timeout.
    Idempotent,
    /// Running it twice could apply it twice: retry only on errors that prove the
    /// server did not run it (loading, busy, try again).
    NotExecuted,
}

/// A [`Store`](crate::Store) on Redis: one server, or a Redis Cluster (every script touches one
/// slot).
///
/// Cheap to clone: clones share the connections. On one server that is a small pool
/// of multiplexed connections ([`RedisOptions::connections`], calls spread round
/// robin, a pipeline on one), each a [`ConnectionManager`] that re-establishes it after
/// a failure and never resends a command by itself. On a cluster there are two:
/// redis-rs's cluster connection resends a command after a redirection, a dropped
/// connection or a timeout, which is right for operations that are safe to repeat
/// but could apply an update without a request id twice; so those (see `Retry`) go
/// through a second cluster connection that never resends, and the store retries
/// them only after errors that prove the server did not run them.
#[derive(Debug, Clone)]
pub struct RedisStore {
    connection: RedisConnection,
    at_most_once: RedisConnection,
    /// On a cluster, the current `(connection, at_most_once)`: each is opened anew
    /// if it stops answering altogether (see [`connection::Renewing`]), and `run`
    /// takes them from here.
    renewing: Option<(Arc<Renewing>, Arc<Renewing>)>,
    /// On one server, the connections calls are spread over (see
    /// [`RedisOptions::connections`]) and the index of the next one; empty on a
    /// cluster and for [`RedisStore::from_manager`].
    pool: Arc<[RedisConnection]>,
    next: Arc<AtomicUsize>,
    /// Set once the server refused a script whose keys span slots (CROSSSLOT): a
    /// sharding proxy behind a single address. From then on the bulk path's calls
    /// keep to one slot each, as on a cluster (see [`RedisStore::pipelined_items`]).
    slot_bound: Arc<AtomicBool>,
    /// Brackets whose profiles' string this store kept lately (see [`pages`]).
    text_hints: Arc<pages::TextHints>,
    /// On one server, whether Redis refused lately, so that calls are answered at
    /// once without being sent (see [`outage`]).
    outage: Arc<outage::Outage>,
    /// The clock of record expiry, when one was given ([`RedisStore::with_clock`]).
    clocked: Option<Arc<clocked::Clocked>>,
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
    /// server refuses the credentials or the TLS handshake (at once), the server is
    /// older than Redis 7.0 (`INFO server`; at once), its `maxmemory-policy` evicts
    /// keys ([`connection::ConnectError::EvictingPolicy`], on any master of a cluster;
    /// unless [`RedisOptions::allow_evicting_policy`]), or no node answers within the
    /// options' connection timeout and reconnection retries.
    pub async fn connect(url: &str, options: RedisOptions) -> Result<RedisStore, StoreError> {
        let opened = connection::open(url, &options, true).await?;
        let store = RedisStore {
            connection: opened.connection,
            at_most_once: opened.at_most_once,
            renewing: opened.renewing,
            pool: opened.pool.into(),
            next: Arc::new(AtomicUsize::new(0)),
            slot_bound: Arc::new(AtomicBool::new(false)),
            text_hints: Arc::default(),
            outage: Arc::new(outage_gate(&options)),
            clocked: None,
            options,
        };
        // The URL parsed above; its target names a single server in the error.
        let target = connection::RedisUrl::parse(url)
            .map(|u| u.target())
            .unwrap_or_default();
        store.check_policy(&target).await?;
        Ok(store)
    }

    /// Wraps an existing connection manager to one server (its own timeouts and
    /// reconnection settings apply; `options` only sets the command retries and the
    /// delays between checks of a server that refused). A manager that retries its
    /// reconnections itself makes a call during an outage wait for them all. The
    /// server's `maxmemory-policy` is not checked: that is the caller's to do.
    pub fn from_manager(manager: ConnectionManager, options: RedisOptions) -> RedisStore {
        let connection = RedisConnection::Node(manager);
        RedisStore {
            at_most_once: connection.clone(),
            connection,
            renewing: None,
            pool: Arc::new([]),
            next: Arc::new(AtomicUsize::new(0)),
            slot_bound: Arc::new(AtomicBool::new(false)),
            text_hints: Arc::default(),
            outage: Arc::new(outage_gate(&options)),
            clocked: None,
            options,
        }
    }

    /// [`RedisOptions::page_cache`] in milliseconds, as standings.lua takes it: at
    /// most a day (a longer keep would only hold memory longer; PEXPIRE refuses
    /// values near 2^63).
    fn page_cache_ms(&self) -> u64 {
        u64::try_from(self.options.page_cache.as_millis())
            .unwrap_or(u64::MAX)
            .min(86_400_000)
    }

    /// The options this store was created with.
    pub fn options(&self) -> &RedisOptions {
        &self.options
    }

    /// The connection for the next call on one server: the pool's next, round robin
    /// (`fallback` when there is no pool).
    fn pick(&self, fallback: &RedisConnection) -> RedisConnection {
        match self.pool.len() {
            0 | 1 => fallback.clone(),
            n => self.pool[self.next.fetch_add(1, Ordering::Relaxed) % n].clone(),
        }
    }

    /// Runs `attempt` on a connection, retrying as `retry` allows, with exponential
    /// backoff between attempts.
    ///
    /// `command_attempts` bounds the attempts, except while a Redis Cluster slot is
    /// being moved (MOVED, ASK, TRYAGAIN, which prove the command did not run): a
    /// multi-key script in a slot that is half moved gets TRYAGAIN until its keys have
    /// moved, so such a command is tried again, the wait capped at [`MIGRATION_WAIT`],
    /// until the slot has been reported moving for `cluster_response_timeout`.
    /// After an ASK the next attempt goes to the node ASK named, preceded by ASKING
    /// (see [`connection::Routed`]): the connection that never resends does not
    /// follow ASK itself. Without these, a resharding failed updates that were safe
    /// to retry (tests/store/cluster_faults.rs).
    ///
    /// On a cluster, an attempt that waits [`Renewing::patience`] while its connection
    /// answers nothing at all is abandoned as timed out, and the connection is opened
    /// again before the next attempt (see [`connection::Renewing`]).
    ///
    /// On one server, each attempt first passes the outage gate (see [`outage`]): while
    /// Redis refuses connections it is not sent and the call ends at once with a
    /// refusal. When an earlier attempt may have run, that attempt's error is the
    /// call's, whatever the later ones met: a write is then "unknown", never "not sent".
    async fn run<T, F, Fut>(&self, op: &'static str, retry: Retry, mut attempt: F) -> RedisResult<T>
    where
        F: FnMut(connection::Routed) -> Fut,
        Fut: Future<Output = RedisResult<T>>,
    {
        let attempts = self.options.command_attempts.max(1);
        let mut delay = self.options.retry_delay;
        let (connection, renewing) = match retry {
            Retry::Idempotent => (&self.connection, self.renewing.as_ref().map(|r| &r.0)),
            Retry::NotExecuted => (&self.at_most_once, self.renewing.as_ref().map(|r| &r.1)),
        };
        let mut moving_since: Option<Instant> = None;
        let mut asking: Option<connection::AskTarget> = None;
        let mut ambiguous: Option<RedisError> = None;
        let mut n = 1;
        loop {
            if renewing.is_none()
                && self.outage.is_down()
                && let Err(err) = self.admit().await
            {
                return Err(crate::metrics::store_failed(op, ambiguous.unwrap_or(err)));
            }
            let result = match renewing {
                Some(r) => {
                    let (con, ticket) = r.connection();
                    let result =
                        watched(r, &ticket, attempt(Routed::new(con, asking.clone()))).await;
                    r.finished(&result);
                    if let Err(err) = &result
                        && err.is_timeout()
                        && r.looks_wedged(&ticket)
                    {
                        r.check(&ticket).await;
                    }
                    result
                }
                None => attempt(Routed::new(self.pick(connection), None)).await,
            };
            let err = match result {
                Ok(value) => return Ok(value),
                Err(err) => err,
            };
            if renewing.is_none() {
                self.outage.observe(&err);
            }
            if ambiguous.is_none() && may_have_run(&err) {
                ambiguous = Some(err.clone());
            }
            // The window counts how long the slot has been reported moving without a
            // break: an attempt lost to a timeout in between (a wedged connection)
            // counts against `command_attempts` instead, and a later answer that the
            // slot is moving starts a new window.
            let moving = slot_moving(&err);
            if moving {
                moving_since.get_or_insert_with(Instant::now);
            } else {
                moving_since = None;
            }
            let patient = moving
                && moving_since
                    .is_some_and(|t| t.elapsed() < self.options.cluster_response_timeout);
            if !(retryable(&err, retry) && (n < attempts || patient)) {
                return Err(crate::metrics::store_failed(op, ambiguous.unwrap_or(err)));
            }
            tracing::warn!(op, attempt = n, error = %err, "redis command failed; retrying");
            crate::metrics::store_retry(op);
            // ASK names where the command goes next; TRYAGAIN (from that node, for a
            // script whose keys are half moved) keeps it going there; anything else
            // goes back to the slot's owner as the connection knows it.
            asking = match connection::AskTarget::of(&err) {
                Some(target) => Some(target),
                None if is_try_again(&err) => asking,
                None => None,
            };
            let wait = if asking.is_some() && !is_try_again(&err) {
                // The redirection is the retry: no reason to wait.
                Duration::ZERO
            } else if moving {
                delay.min(MIGRATION_WAIT)
            } else {
                delay
            };
            tokio::time::sleep(wait).await;
            delay = delay.saturating_mul(2);
            n += 1;
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
        .map_err(|e| write_error(op, e, self.outage.retry_after()))
    }

    /// Runs one script invocation (EVALSHA, loading the script on NOSCRIPT).
    async fn invoke(
        &self,
        op: &'static str,
        retry: Retry,
        invocation: &ScriptInvocation<'_>,
    ) -> Result<Value, StoreError> {
        self.run(op, retry, |mut con| async move {
            invocation.invoke_async::<Value>(&mut con).await
        })
        .await
        .map_err(|e| self.store_error(e))
    }

    /// Runs one plain command.
    async fn command(
        &self,
        op: &'static str,
        retry: Retry,
        cmd: &redis::Cmd,
    ) -> Result<Value, StoreError> {
        self.run(op, retry, |mut con| async move {
            cmd.query_async::<Value>(&mut con).await
        })
        .await
        .map_err(|e| self.store_error(e))
    }

    /// The store error of a failed call that does not write ([`write_error`] for
    /// one that does): a request that was not sent is
    /// [`StoreError::Unreachable`], to be tried again when the outage gate next
    /// checks the server.
    fn store_error(&self, err: RedisError) -> StoreError {
        if err.is_connection_refusal() {
            failure::unreachable(&err, self.outage.retry_after())
        } else {
            failure::backend(err)
        }
    }

    /// Passes the outage gate (see [`outage`]): at once while Redis answers; while it
    /// refuses, a refusal without sending anything; when a check is due, a PING on
    /// each connection of the pool (twice: the first may meet a connection the server
    /// closed, and start its reconnection), so that nothing is sent on a connection
    /// that has not answered since the server came back.
    async fn admit(&self) -> RedisResult<()> {
        let probe = match self.outage.admit() {
            outage::Admit::Open => return Ok(()),
            outage::Admit::Closed(err) => return Err(err),
            outage::Admit::Probe(probe) => probe,
        };
        let connections: Vec<RedisConnection> = if self.pool.is_empty() {
            vec![self.connection.clone()]
        } else {
            self.pool.to_vec()
        };
        let checks = connections.into_iter().map(|mut con| async move {
            let ping = redis::cmd("PING");
            match ping.query_async::<()>(&mut con).await {
                Ok(()) => Ok(()),
                Err(_) => ping.query_async::<()>(&mut con).await,
            }
        });
        match futures::future::try_join_all(checks).await {
            Ok(_) => {
                tracing::info!("redis answers again");
                probe.up();
                Ok(())
            }
            Err(err) => {
                tracing::debug!(error = %err, "redis still unreachable");
                Err(probe.down(&err))
            }
        }
    }
}

/// The outage gate for `options`: checks of a server that refused are spaced by the
/// reconnection delays.
fn outage_gate(options: &RedisOptions) -> outage::Outage {
    outage::Outage::new(options.reconnect_min_delay, options.reconnect_max_delay)
}

/// The longest wait between attempts while a slot is being moved.
const MIGRATION_WAIT: Duration = Duration::from_millis(200);

/// Whether `err` says the command met a slot that is moving or just moved (MOVED,
/// ASK, TRYAGAIN): the command did not run, and will once the move is over.
fn slot_moving(err: &RedisError) -> bool {
    matches!(
        err.kind(),
        ErrorKind::Server(
            ServerErrorKind::TryAgain | ServerErrorKind::Moved | ServerErrorKind::Ask
        )
    )
}

/// Whether `err` is TRYAGAIN: a multi-key command met a slot whose keys are half moved.
fn is_try_again(err: &RedisError) -> bool {
    err.kind() == ErrorKind::Server(ServerErrorKind::TryAgain)
}

/// Runs `attempt`, unless its connection looks wedged (see [`Renewing::looks_wedged`])
/// before it ends: then it is abandoned with a timeout error (it may have run), and
/// the connection is opened again.
async fn watched<T>(
    r: &Renewing,
    ticket: &connection::Ticket,
    attempt: impl Future<Output = RedisResult<T>>,
) -> RedisResult<T> {
    let mut attempt = std::pin::pin!(attempt);
    loop {
        tokio::select! {
            result = &mut attempt => return result,
            () = tokio::time::sleep(r.patience()) => {}
        }
        if !r.looks_wedged(ticket) {
            continue;
        }
        // The attempt may still end while the connection is checked.
        tokio::select! {
            result = &mut attempt => return result,
            abandon = r.check(ticket) => if abandon {
                return Err(RedisError::from(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "the Redis Cluster connection answered nothing while this request \
                     waited; it was opened again",
                )));
            }
        }
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

/// The error of a write that failed: "unknown" when it may have been applied,
/// [`StoreError::Unreachable`] (to be tried again after `wait`) when it was not sent.
fn write_error(op: &'static str, err: RedisError, wait: Duration) -> StoreError {
    if may_have_run(&err) {
        failure::unknown(op, err)
    } else if err.is_connection_refusal() {
        failure::unreachable(&err, wait)
    } else {
        failure::backend(err)
    }
}

/// The league clock argument of a script: empty means "read TIME", "+N" "TIME plus N
/// ms" (the staging clock), a number that time (see clock.lua).
fn now_arg(now: Now) -> String {
    match now {
        Now::At(ms) => ms.to_string(),
        Now::Travel(offset) => format!("+{}", offset.max(0)),
        Now::Store => String::new(),
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

#[cfg(test)]
mod tests {
    use super::*;

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
        let wait = Duration::from_millis(300);
        assert!(matches!(
            write_error("update", reset, wait),
            StoreError::Unknown { op: "update", .. }
        ));
        match write_error("update", refused, wait) {
            StoreError::Unreachable { retry_after, .. } => assert_eq!(retry_after, wait),
            other => panic!("a refused write is not sent: {other:?}"),
        }
        assert!(matches!(
            write_error("update", loading, wait),
            StoreError::Backend { .. }
        ));
    }

    /// Only the answers of a slot being moved are retried past `command_attempts`.
    #[test]
    fn slot_moves_are_waited_out() {
        for kind in [
            ServerErrorKind::Moved,
            ServerErrorKind::Ask,
            ServerErrorKind::TryAgain,
        ] {
            let err: RedisError = (ErrorKind::Server(kind), "m").into();
            assert!(slot_moving(&err), "{kind:?}");
        }
        let down: RedisError = (ErrorKind::Server(ServerErrorKind::ClusterDown), "d").into();
        let io: RedisError = std::io::Error::new(std::io::ErrorKind::TimedOut, "t").into();
        assert!(!slot_moving(&down) && !slot_moving(&io));
    }

    #[test]
    fn tokens_are_unique() {
        let a = attempt_token();
        let b = attempt_token();
        assert_ne!(a, b);
        assert!(!a.contains(':'));
    }
}
