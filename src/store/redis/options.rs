//! Connection settings of a [`RedisStore`](super::RedisStore): timeouts, reconnection
//! and retries, TLS files, the cluster connection's limits, and the standings page
//! cache.

use std::path::PathBuf;
use std::time::Duration;

use redis::aio::ConnectionManagerConfig;

/// Connection settings of a [`RedisStore`](crate::RedisStore).
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
    /// How many times an unreachable server is tried again by
    /// [`RedisStore::connect`](crate::RedisStore::connect), for each node, before it reports
    /// [`crate::store::redis::connection::ConnectError::Unreachable`] (default 6: with the
    /// default delays, an unreachable server is reported after about 6 s). A wrong
    /// password or a failed TLS handshake is never tried again: it fails at once.
    ///
    /// Once connected to one server, a store does not make calls wait for
    /// reconnections: after Redis refused a connection, calls are answered at once
    /// with [`StoreError::Unreachable`](crate::StoreError::Unreachable) (not sent,
    /// nothing written) until the next check of the server, which comes after
    /// [`RedisOptions::reconnect_min_delay`], doubling up to
    /// [`RedisOptions::reconnect_max_delay`]. (A connection opened with
    /// [`RedisConnection::open`](crate::store::redis::connection::RedisConnection::open)
    /// still retries its reconnections this many times.)
    pub reconnect_retries: usize,
    /// The first delay between reconnection attempts, and between checks of a server
    /// that refused; it doubles after each attempt (default 100 ms).
    pub reconnect_min_delay: Duration,
    /// The longest delay between reconnection attempts, and between checks of a
    /// server that refused (default 5 s).
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
    ///
    /// It is also how long leaguekit keeps retrying a command that met a slot being
    /// moved (MOVED, ASK, TRYAGAIN: it did not run), so that a resharding is waited
    /// out rather than reported.
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
    /// connection; the others go through one that never resends (see [`RedisStore`](crate::RedisStore)).
    pub cluster_retries: u32,
    /// Redis Cluster only: the shortest wait before a resend (default 100 ms); the
    /// wait grows with each resend, up to [`RedisOptions::reconnect_max_delay`].
    /// redis-rs's default is 1.28 s, long for a slot that moved a moment ago.
    pub cluster_min_retry_wait: Duration,
    /// How long a built standings page is kept in Redis at most (default 30 s;
    /// zero turns the page cache off).
    ///
    /// A kept page is one `HGET`; a page that is not kept is built in the client from
    /// one `MULTI` (about 40 µs of Redis for 100 entries with profiles, where a
    /// script build costs 80 or more) and then kept. A kept page is never stale:
    /// every score update, board entry and profile change deletes its bracket's kept
    /// pages in the same atomic step, a write during a build keeps the build from
    /// being kept, and kept pages never outlive their board. This only bounds the
    /// memory they take: about 8 KB for a page of 100 with small profiles, for each
    /// bracket read within this time and not written since.
    ///
    /// The bracket's cached profiles are also kept as one string for as long, so
    /// that the build after a score update (which drops the pages, not the
    /// profiles) decodes half the items: about 5 KB more for a bracket of 100 read
    /// within this time, deleted by every change to its profiles. Zero keeps
    /// neither.
    pub page_cache: Duration,
    /// One server only: how many multiplexed connections the store opens and
    /// spreads its calls over, round robin (default 2, at least 1).
    ///
    /// Each connection has one task that reads and parses every reply it carries,
    /// so with a single connection that task, on one core, limits how fast large
    /// replies (standings pages of 100 with profiles) arrive. Calls that must stay
    /// in order are one pipeline, which always goes on one connection. On a
    /// cluster, redis-rs keeps one connection per node and this is not used.
    pub connections: usize,
    /// Whether concurrent single joins are gathered into batches of the bulk path
    /// (default true).
    ///
    /// A single join costs Redis about 35 µs in four script calls, mostly fixed per
    /// call; gathered, concurrent joins share the calls (see `League::join_many`). A
    /// join alone waits for nobody; under load a join may wait for the batch before
    /// its own. Off, every join makes its own calls.
    pub gather_joins: bool,
    /// Whether concurrent single score updates are gathered into one `update.lua`
    /// call (default true). The league gathers them (read through
    /// [`LeagueStore::gathers_submits`](crate::store::LeagueStore::gathers_submits))
    /// and sends each batch as `update_many`.
    ///
    /// About a fifth of an update's cost to Redis is per call (reading and
    /// dispatching the request, entering the script, writing the reply); gathered,
    /// concurrent updates share one call, on one server one call for any brackets,
    /// on a cluster one per slot. An update alone waits for nobody; under load it
    /// may wait for the batch before its own. A batch is retried after a failure
    /// that may have come after it ran only if every update in it carries a request
    /// id, as a lone update is. Off, every update is a call of its own.
    pub gather_submits: bool,
    /// Whether [`RedisStore::connect`](crate::RedisStore::connect) accepts a server
    /// whose `maxmemory-policy` evicts keys (default false: it refuses with
    /// [`ConnectError::EvictingPolicy`](crate::ConnectError::EvictingPolicy)).
    ///
    /// An evicting policy (`allkeys-*`, and `volatile-*` too, since nearly every
    /// leaguekit key has an expiry) lets Redis delete keys silently when memory is
    /// full: a season's meta (closed periods read as pending), players' state
    /// (returning players start again in the first tier), idempotency records and
    /// bracket counters. Set `maxmemory-policy noeviction` instead; opt in only where
    /// losing league data is acceptable (a throwaway test server). The command line's
    /// `--allow-evicting-redis` (`LEAGUEKIT_ALLOW_EVICTING_REDIS`) sets it.
    pub allow_evicting_policy: bool,
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
            page_cache: Duration::from_secs(30),
            connections: 2,
            gather_joins: true,
            gather_submits: true,
            allow_evicting_policy: false,
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

    /// Sets [`RedisOptions::page_cache`] (zero turns the page cache off).
    pub fn with_page_cache(mut self, keep: Duration) -> Self {
        self.page_cache = keep;
        self
    }

    /// Sets [`RedisOptions::connections`] (at least 1).
    pub fn with_connections(mut self, connections: usize) -> Self {
        self.connections = connections.max(1);
        self
    }

    /// Sets [`RedisOptions::gather_joins`].
    pub fn with_gather_joins(mut self, gather: bool) -> Self {
        self.gather_joins = gather;
        self
    }

    /// Sets [`RedisOptions::gather_submits`].
    pub fn with_gather_submits(mut self, gather: bool) -> Self {
        self.gather_submits = gather;
        self
    }

    /// Sets [`RedisOptions::allow_evicting_policy`].
    pub fn with_allow_evicting_policy(mut self, allow: bool) -> Self {
        self.allow_evicting_policy = allow;
        self
    }

    /// The connection manager configuration these options describe. A store's
    /// managers (`for_store`) make one attempt per reconnection: the store's outage
    /// gate spaces the attempts, so that no call waits for a series of them.
    pub(crate) fn manager_config(&self, for_store: bool) -> ConnectionManagerConfig {
        let retries = if for_store { 0 } else { self.reconnect_retries };
        ConnectionManagerConfig::new()
            // Replace redis-rs's 500 ms default: it is per reply, and one reply may be
            // a whole pipeline of updates.
            .set_response_timeout(Some(self.response_timeout))
            .set_connection_timeout(Some(self.connection_timeout))
            // Reconnection backoff: min_delay * 2^n with jitter, capped, so a Redis
            // restart is ridden out without hammering it.
            .set_number_of_retries(retries)
            .set_exponent_base(2.0)
            .set_min_delay(self.reconnect_min_delay)
            .set_max_delay(self.reconnect_max_delay.max(self.reconnect_min_delay))
    }
}
