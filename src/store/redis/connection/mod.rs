//! How leaguekit reaches Redis: URLs, TLS, and the connection that commands run on.
//!
//! This module owns everything between a URL string and a connection that can run
//! commands, scripts and pipelines; [`crate::store::redis`] only decides what to send
//! and when a failed command may be sent again.
//!
//! - [`RedisUrl`] reads the URL forms (`redis://`, `rediss://`, `redis+cluster://`,
//!   `rediss+cluster://`, and unix sockets): redis-rs parses each node's URL, leaguekit
//!   adds the cluster seed lists, the credentials' handling and its own checks; a bad
//!   URL is a [`UrlError`] that says what is wrong and never repeats the password.
//! - TLS uses redis-rs's rustls backend. The trusted roots are the system's (read by
//!   `rustls-native-certs`, which honours `SSL_CERT_FILE` and `SSL_CERT_DIR` as
//!   OpenSSL does) plus an optional CA file for a private CA; a client certificate
//!   and key give mutual TLS. A rustls crypto provider (ring) is installed once, before
//!   the first connection, because redis-rs 1.x brings none of its own.
//! - [`RedisConnection`] is a single node's [`ConnectionManager`] or a Redis Cluster
//!   [`ClusterConnection`], behind redis-rs's own [`redis::aio::ConnectionLike`], so
//!   script invocations, commands and pipelines run on either unchanged.
//!
//! Workarounds of redis-rs 1.8.1, each with its upstream reference, reproduction and
//! the condition for removing it in its module: `Renewing` (`renew.rs`, a cluster
//! connection that wedges), `Routed` (`asking.rs`, ASK on a connection that never
//! resends), the TLS classification by rustls's wording (`errors.rs`), and this one:
//!
//! - Connecting first checks each node with one plain connection and `INFO server`,
//!   so that a wrong password, a refused certificate, a server in the wrong mode or
//!   older than Redis 7.0 is a [`ConnectError`] on the first answer rather than after
//!   the connection manager's reconnection loop; only an unreachable server is tried
//!   again. Upstream: `ConnectionManager::new_with_config` opens its first connection
//!   with `get_conn.retry(exponential_backoff)` (`aio/connection_manager.rs`,
//!   `new_connection`), which retries every error, a refused password included, for
//!   the whole backoff; redis-rs#1717 (open, "Fix ConnectionManager retry behavior")
//!   is the upstream work on that loop. Reproduction: a manager with
//!   `set_number_of_retries(6)` and a wrong password answers `WRONGPASS` only after
//!   the six waits. Removal: when the manager's first connection fails at once on an
//!   error that is not a connection failure; the version check (`ServerVersion`)
//!   would then move to the first command.

mod asking;
mod errors;
mod renew;
mod tls;
mod url;

pub(crate) use asking::{AskTarget, Routed};
pub use errors::*;
pub(crate) use renew::{Renewing, Ticket};
pub use tls::install_crypto_provider;
use tls::*;
pub use url::*;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::stream::{FuturesUnordered, StreamExt};
use redis::aio::{ConnectionLike, ConnectionManager};
use redis::cluster::ClusterClientBuilder;
use redis::cluster_async::ClusterConnection;
use redis::{
    AsyncConnectionConfig, Cmd, ConnectionInfo, Pipeline, RedisError, RedisFuture, TlsCertificates,
    Value,
};

use crate::store::redis::RedisOptions;

/// The port a URL without one means (Redis's own default).
pub const DEFAULT_PORT: u16 = 6379;

// ---------------------------------------------------------------------------------
// The connection

/// A connection to one Redis server or to a Redis Cluster.
///
/// Cheap to clone: clones share the underlying multiplexed connection(s). It
/// implements redis-rs's [`ConnectionLike`], so [`redis::ScriptInvocation::invoke_async`],
/// [`redis::Cmd::query_async`] and [`redis::Pipeline::query_async`] work on it; on a
/// cluster, commands are routed by their keys' slot, and an EVALSHA that meets
/// NOSCRIPT (after a failover or resharding moved the slot to a node whose script
/// cache is empty) is answered by `invoke_async`'s SCRIPT LOAD, which redis-rs sends to
/// every primary, and a second EVALSHA.
#[derive(Clone)]
#[non_exhaustive]
pub enum RedisConnection {
    /// One server, through redis-rs's reconnecting [`ConnectionManager`].
    Node(ConnectionManager),
    /// A Redis Cluster, through redis-rs's [`ClusterConnection`], which follows
    /// MOVED and ASK redirections and refreshes its slot map.
    Cluster(ClusterConnection),
}

impl fmt::Debug for RedisConnection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RedisConnection::Node(manager) => f.debug_tuple("Node").field(manager).finish(),
            RedisConnection::Cluster(_) => f.debug_tuple("Cluster").finish_non_exhaustive(),
        }
    }
}

impl ConnectionLike for RedisConnection {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            RedisConnection::Node(con) => con.req_packed_command(cmd),
            RedisConnection::Cluster(con) => con.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            RedisConnection::Node(con) => con.req_packed_commands(pipeline, offset, count),
            RedisConnection::Cluster(con) => con.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            RedisConnection::Node(con) => con.get_db(),
            RedisConnection::Cluster(con) => con.get_db(),
        }
    }
}

impl RedisConnection {
    /// Connects to `url` (see [`RedisUrl`] for the forms) with `options`' timeouts,
    /// retries, TLS files and cluster settings.
    ///
    /// Each node is first checked with one connection and `INFO server`: a wrong
    /// password ([`ConnectError::Auth`]), a failed TLS handshake ([`ConnectError::Tls`]),
    /// a server in the wrong mode ([`ConnectError::Refused`]) or older than Redis 7.0
    /// ([`ConnectError::Version`]) fails on the first answer;
    /// an unreachable node is tried `reconnect_retries` more times, with the
    /// reconnection backoff, before [`ConnectError::Unreachable`]. One reachable seed
    /// is enough for a cluster.
    ///
    /// On a cluster, this connection lets redis-rs resend a command after a dropped
    /// connection or a timeout (`cluster_retries`), which is right for commands that
    /// are safe to repeat; [`crate::RedisStore`] sends the others on a second cluster
    /// connection that never resends.
    pub async fn open(url: &str, options: &RedisOptions) -> Result<RedisConnection, ConnectError> {
        Ok(open(url, options, false).await?.connection)
    }
}

/// What [`open`] gives [`crate::RedisStore`].
pub(crate) struct Opened {
    /// For commands that are safe to repeat.
    pub(crate) connection: RedisConnection,
    /// For commands that must not run twice: on a cluster, a connection whose client
    /// never resends a command itself (its `retries` is 0); on one server the same as
    /// `connection`, since a [`ConnectionManager`] never resends either.
    pub(crate) at_most_once: RedisConnection,
    /// On a cluster, both connections again, each opened anew if it wedges (see
    /// [`Renewing`]): `(connection, at_most_once)`.
    pub(crate) renewing: Option<(Arc<Renewing>, Arc<Renewing>)>,
    /// On one server, the [`RedisOptions::connections`] connections that calls are
    /// spread over (the first is `connection`); on a cluster, empty.
    pub(crate) pool: Vec<RedisConnection>,
}

/// Connects; with `at_most_once` (for [`crate::RedisStore`]), a cluster also gets its
/// non-resending connection and one server its pool of [`RedisOptions::connections`].
pub(crate) async fn open(
    url: &str,
    options: &RedisOptions,
    at_most_once: bool,
) -> Result<Opened, ConnectError> {
    let url = RedisUrl::parse(url)?;
    install_crypto_provider();
    let tls = if url.scheme().is_tls() {
        Some(tls_certificates(options)?)
    } else {
        if options.ca_file.is_some() || options.client_cert.is_some() {
            return Err(ConnectError::Options(format!(
                "RedisOptions has a CA file or client certificate, but the URL is {}:// \
                 (no TLS); use rediss:// (or rediss+cluster://) to connect over TLS",
                url.scheme()
            )));
        }
        None
    };
    let began = Instant::now();
    let fail = |err: RedisError| connect_error(&url, url.target(), err, 1, began.elapsed());
    let infos = url.node_infos();
    check_nodes(&url, &infos, tls.as_ref(), options, began).await?;
    if url.scheme().is_cluster() {
        let nodes: Vec<ConnectionInfo> = infos.into_iter().map(|(_, info)| info).collect();
        let recipe = |retries| renew::Recipe {
            nodes: nodes.clone(),
            tls: tls.clone(),
            options: options.clone(),
            retries,
        };
        let connection = cluster_builder(&nodes, tls.as_ref(), options, options.cluster_retries)
            .build()
            .map_err(fail)?
            .get_async_connection()
            .await
            .map_err(fail)?;
        if !at_most_once {
            return Ok(Opened {
                connection: RedisConnection::Cluster(connection.clone()),
                at_most_once: RedisConnection::Cluster(connection),
                renewing: None,
                pool: Vec::new(),
            });
        }
        // `retries(0)`: the client hands every error back instead of resending;
        // RedisStore retries what is provably not executed (MOVED, ASK, TRYAGAIN,
        // CLUSTERDOWN, LOADING) itself.
        let once = cluster_builder(&nodes, tls.as_ref(), options, 0)
            .build()
            .map_err(fail)?
            .get_async_connection()
            .await
            .map_err(fail)?;
        let renewing = (
            Arc::new(Renewing::new(
                connection.clone(),
                recipe(options.cluster_retries),
            )),
            Arc::new(Renewing::new(once.clone(), recipe(0))),
        );
        Ok(Opened {
            connection: RedisConnection::Cluster(connection),
            at_most_once: RedisConnection::Cluster(once),
            renewing: Some(renewing),
            pool: Vec::new(),
        })
    } else {
        let client = node_client(&infos[0].1, tls.as_ref()).map_err(fail)?;
        let count = if at_most_once {
            options.connections.max(1)
        } else {
            1
        };
        let managers = futures::future::try_join_all((0..count).map(|_| {
            ConnectionManager::new_with_config(client.clone(), options.manager_config(at_most_once))
        }))
        .await
        .map_err(fail)?;
        let pool: Vec<RedisConnection> = managers.into_iter().map(RedisConnection::Node).collect();
        let Some(connection) = pool.first().cloned() else {
            return Err(ConnectError::Options("no connection was opened".to_owned()));
        };
        Ok(Opened {
            at_most_once: connection.clone(),
            connection,
            renewing: None,
            pool,
        })
    }
}

/// A redis-rs client for one node, with the TLS material when the URL asks for TLS.
pub(super) fn node_client(
    info: &ConnectionInfo,
    tls: Option<&TlsCertificates>,
) -> redis::RedisResult<redis::Client> {
    match tls {
        Some(certs) => redis::Client::build_with_tls(info.clone(), certs.clone()),
        None => redis::Client::open(info.clone()),
    }
}

/// The cluster client builder for `options`, resending failed commands up to
/// `retries` times.
pub(super) fn cluster_builder(
    nodes: &[ConnectionInfo],
    tls: Option<&TlsCertificates>,
    options: &RedisOptions,
    retries: u32,
) -> ClusterClientBuilder {
    let min_wait = millis(options.cluster_min_retry_wait).max(1);
    let mut builder = ClusterClientBuilder::new(nodes.to_vec())
        .connection_timeout(options.connection_timeout)
        // Each node's reply; without it a stalled node hangs the request.
        .response_timeout(options.response_timeout)
        // The whole request, redirections and resends included. redis-rs otherwise
        // uses the per-reply timeout for both, which leaves a resend no time at all.
        .overall_response_timeout(Some(
            options
                .cluster_response_timeout
                .max(options.response_timeout),
        ))
        .retries(retries)
        .min_retry_wait(min_wait)
        .max_retry_wait(millis(options.reconnect_max_delay).max(min_wait + 1));
    if let Some(certs) = tls {
        builder = builder.certs(certs.clone());
    }
    builder
}

pub(super) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// One connection attempt and `INFO server`: the server's version, if it says one.
pub(super) async fn probe_once(
    client: &redis::Client,
    options: &RedisOptions,
) -> Result<Option<ServerVersion>, RedisError> {
    let config = AsyncConnectionConfig::new()
        .set_connection_timeout(Some(options.connection_timeout))
        .set_response_timeout(Some(options.response_timeout));
    let mut con = client
        .get_multiplexed_async_connection_with_config(&config)
        .await?;
    // INFO answers only a live, logged-in connection, as PING would, and says the
    // server's version: one round trip for both.
    let info: String = redis::cmd("INFO")
        .arg("server")
        .query_async(&mut con)
        .await?;
    Ok(ServerVersion::from_info(&info))
}

/// A server's `redis_version` (Valkey reports the Redis version it matches there).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct ServerVersion(pub(crate) u32, pub(crate) u32, pub(crate) u32);

impl ServerVersion {
    /// The oldest server leaguekit runs on: `update.lua` checks and writes a request
    /// id in one `SET ... NX GET`, which Redis accepts from 7.0.
    pub(crate) const OLDEST: ServerVersion = ServerVersion(7, 0, 0);

    /// The version in an `INFO server` answer, if it has one leaguekit can read.
    pub(crate) fn from_info(info: &str) -> Option<ServerVersion> {
        let v = info
            .lines()
            .find_map(|l| l.strip_prefix("redis_version:"))?
            .trim();
        let mut parts = v.split('.').map(|p| p.parse::<u32>().ok());
        let major = parts.next()??;
        let minor = parts.next().flatten().unwrap_or(0);
        let patch = parts.next().flatten().unwrap_or(0);
        Some(ServerVersion(major, minor, patch))
    }
}

impl std::fmt::Display for ServerVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

/// Whether a failed connection attempt may succeed soon: a refused connection (a
/// Redis restarting) or a name that did not resolve yet. Not a timeout: another
/// attempt costs another `connection_timeout`, and a host that drops packets, or a
/// TLS handshake with a plaintext port, will not answer the next one either. Not a
/// connection the server reset or closed while it was being set up: that is a TLS
/// port refusing plaintext, or a proxy without a backend, neither of which a second
/// attempt a moment later changes.
pub(super) fn worth_retrying(err: &RedisError) -> bool {
    classify(err) == Failure::Unreachable
        && !err.is_timeout()
        && (err.is_connection_refusal() || !err.is_connection_dropped())
}

/// Checks one node: attempts until it answers, a definite failure, or the retries
/// run out. Returns the attempts made and the last error.
pub(super) async fn check_node(
    client: redis::Client,
    options: &RedisOptions,
) -> Result<Option<ServerVersion>, (RedisError, u32)> {
    let attempts = u32::try_from(options.reconnect_retries)
        .unwrap_or(u32::MAX)
        .saturating_add(1);
    let mut delay = options.reconnect_min_delay;
    let mut n = 1;
    loop {
        match probe_once(&client, options).await {
            Ok(version) => return Ok(version),
            Err(err) if n < attempts && worth_retrying(&err) => {
                tracing::debug!(attempt = n, error = %err, "redis not reachable yet; retrying");
                tokio::time::sleep(delay).await;
                delay = delay
                    .saturating_mul(2)
                    .min(options.reconnect_max_delay.max(options.reconnect_min_delay));
                n += 1;
            }
            Err(err) => return Err((err, n)),
        }
    }
}

type NodeCheck<'a> = Pin<
    Box<
        dyn Future<Output = (String, Result<Option<ServerVersion>, (RedisError, u32)>)> + Send + 'a,
    >,
>;

/// Checks the nodes concurrently. The first node that answers ends the check
/// (one reachable seed is enough); a definite failure (credentials, TLS, a server in
/// the wrong mode) ends it at once, since every node shares the configuration; when
/// every node is unreachable, the error names the last one to give up.
pub(super) async fn check_nodes(
    url: &RedisUrl,
    infos: &[(String, ConnectionInfo)],
    tls: Option<&TlsCertificates>,
    options: &RedisOptions,
    began: Instant,
) -> Result<(), ConnectError> {
    let mut checks: FuturesUnordered<NodeCheck<'_>> = FuturesUnordered::new();
    for (target, info) in infos {
        let client = node_client(info, tls)
            .map_err(|e| connect_error(url, target.clone(), e, 0, began.elapsed()))?;
        let target = target.clone();
        checks.push(Box::pin(async move {
            let result = check_node(client, options).await;
            (target, result)
        }));
    }
    let mut last = None;
    while let Some((target, result)) = checks.next().await {
        match result {
            // A server that does not say its version is let through: the scripts'
            // own errors will say what it lacks.
            Ok(Some(version)) if version < ServerVersion::OLDEST => {
                return Err(ConnectError::Version {
                    target,
                    version: version.to_string(),
                });
            }
            Ok(_) => return Ok(()),
            Err((err, attempts)) => {
                if classify(&err) != Failure::Unreachable {
                    return Err(connect_error(url, target, err, attempts, began.elapsed()));
                }
                last = Some((target, err, attempts));
            }
        }
    }
    match last {
        Some((target, err, attempts)) => {
            let target = if infos.len() > 1 {
                format!(
                    "{} (none answered; the last to fail was {target})",
                    url.target()
                )
            } else {
                target
            };
            Err(connect_error(url, target, err, attempts, began.elapsed()))
        }
        None => Err(ConnectError::Url(UrlError::MissingHost)),
    }
}

#[cfg(test)]
mod tests {
    use super::ServerVersion;

    #[test]
    fn server_versions_are_read_from_info() {
        let info = "# Server\r\nredis_version:7.0.15\r\nredis_git_sha1:00000000\r\n";
        assert_eq!(
            ServerVersion::from_info(info),
            Some(ServerVersion(7, 0, 15))
        );
        // Valkey reports the Redis version it matches as redis_version.
        let valkey = "redis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:8.0.1\r\n";
        assert_eq!(
            ServerVersion::from_info(valkey),
            Some(ServerVersion(7, 2, 4))
        );
        let old = ServerVersion::from_info("redis_version:6.2.14\r\n").expect("6.2");
        assert!(old < ServerVersion::OLDEST);
        assert_eq!(old.to_string(), "6.2.14");
        assert!(ServerVersion(7, 0, 0) >= ServerVersion::OLDEST);
        assert!(ServerVersion(10, 0, 0) > ServerVersion::OLDEST);
        assert_eq!(
            ServerVersion::from_info("redis_version:8\r\n"),
            Some(ServerVersion(8, 0, 0))
        );
        assert_eq!(ServerVersion::from_info("redis_version:x.y\r\n"), None);
        assert_eq!(ServerVersion::from_info("# Server\r\n"), None);
    }
}
