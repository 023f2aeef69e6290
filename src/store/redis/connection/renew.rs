//! A Redis Cluster connection that is opened again when it stops answering
//! altogether.
//!
//! redis-rs 1.8's cluster connection can wedge for good. After a MOVED (every
//! resharding causes some) it refreshes its slot map, and while it does, its
//! background task stops polling the requests in flight; if one of them was just
//! granted the read lock of the connection map (or queued for its write lock), the
//! refresh waits for the write lock forever. From then on every request on that
//! connection times out, while the cluster itself is fine. `tests/store/cluster_faults.rs`
//! met it in about one run in three while moving slots under 50 writers (the
//! refresh logged "waiting for the write lock" and nothing after; every request for
//! minutes afterwards "timed out"); valkey-glide fixed the same deadlock in its fork
//! of redis-rs by making that lock synchronous. redis-rs 1.8.1 is the newest stable
//! release, and 2.0.0-rc.2 takes the lock the same way.
//!
//! A wedged connection answers nothing at all, so: when a request has waited
//! `response_timeout` (the bound on any one node's reply) and the connection answered
//! no request at all in that time, a PING goes to every master through it; if none
//! answers within half that time, the connection is opened again and replaces the
//! old one, and the request is abandoned (answered as a timeout: it may have run) and
//! retried, as its operation allows, on the new connection. Requests that notice the
//! same wedge wait for that one check rather than each making their own, and after a
//! reopening that failed none is attempted for `cluster_response_timeout`, so a
//! cluster that is down altogether is not flooded with connection attempts. Requests
//! waiting on one slow or stopped node do not trigger it: the other masters answer
//! the PING. The wedged connection's task cannot be stopped: it stays behind, idle,
//! with its sockets (three per wedge on a three-master cluster).
//!
//! Waiting `response_timeout` (5 s by default) rather than the whole
//! `cluster_response_timeout` (10 s) leaves a request that met a wedge time to be
//! retried within its caller's patience; `tests/store/cluster_faults.rs` saw requests fail
//! after 20 to 30 s of successive wedged attempts before this.
//!
//! **Upstream.** The wedge is the lock-across-await deadlock of redis-rs's cluster
//! connection: redis-rs#882 fixed one instance of it (a request holding the
//! connection map's read lock across an await while a slot refresh waited for the
//! write lock); in 1.8.1 the map's lock (`conn_lock`) is still tokio's async
//! `RwLock`, taken by requests that the refresh waiting for its write lock has stopped
//! polling. redis-rs#2092 (a refresh holding the lock blocks every call) and #1953
//! (open: `get_async_connection` sometimes hangs) are reports about the same lock.
//! valkey-glide's fork removed it by making that lock synchronous (valkey-glide#2643).
//! Minimal reproduction: `tests/store/cluster_faults.rs`, slots moved under 50 writers
//! with this module disabled (about one run in three wedges; the refresh logs
//! "waiting for the write lock" and nothing after).
//!
//! **Removal.** When a redis-rs release takes the connection map's lock without an
//! await (as valkey-glide#2643 did), and
//! tests/store/cluster_faults.rs passes repeatedly with `Renewing` bypassed. No idempotency
//! design removes it: a wedged connection answers nothing, whatever the request.

use std::sync::RwLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::{MultipleNodeRoutingInfo, ResponsePolicy, RoutingInfo};
use redis::{ConnectionInfo, RedisError, TlsCertificates};

use super::{RedisConnection, cluster_builder, millis};
use crate::store::redis::RedisOptions;

/// What it takes to open the same cluster connection again.
pub(crate) struct Recipe {
    pub(crate) nodes: Vec<ConnectionInfo>,
    pub(crate) tls: Option<TlsCertificates>,
    pub(crate) options: RedisOptions,
    /// The connection's own resends (`cluster_retries`, or 0 for the at-most-once one).
    pub(crate) retries: u32,
}

impl Recipe {
    async fn connect(&self) -> redis::RedisResult<ClusterConnection> {
        cluster_builder(&self.nodes, self.tls.as_ref(), &self.options, self.retries)
            .build()?
            .get_async_connection()
            .await
    }
}

/// A cluster connection, replaced when it has stopped answering (see the module).
pub(crate) struct Renewing {
    /// The connection and its generation (how many times it was replaced).
    current: RwLock<(ClusterConnection, u64)>,
    recipe: Recipe,
    /// Times below are milliseconds since `base`.
    base: Instant,
    /// When a request on this connection last got an answer (any reply, errors too).
    answered: AtomicU64,
    /// When the last reopening failed (0: never).
    failed: AtomicU64,
    /// Held while reopening, so that one reopening serves every request that noticed.
    reopening: tokio::sync::Mutex<()>,
}

/// What a request was sent on: when, and which generation of the connection.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ticket {
    sent: u64,
    generation: u64,
}

impl std::fmt::Debug for Renewing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Renewing")
            .field("generation", &self.generation())
            .finish_non_exhaustive()
    }
}

impl Renewing {
    pub(crate) fn new(connection: ClusterConnection, recipe: Recipe) -> Renewing {
        Renewing {
            current: RwLock::new((connection, 0)),
            recipe,
            base: Instant::now(),
            answered: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            reopening: tokio::sync::Mutex::new(()),
        }
    }

    fn now(&self) -> u64 {
        // +1 so that "sent at 0" is still after "never answered".
        millis(self.base.elapsed()).saturating_add(1)
    }

    fn generation(&self) -> u64 {
        match self.current.read() {
            Ok(guard) => guard.1,
            Err(poisoned) => poisoned.into_inner().1,
        }
    }

    /// How long a request waits, with nothing answered on the connection, before the
    /// connection is taken for wedged: the bound on one node's reply.
    pub(crate) fn patience(&self) -> Duration {
        self.recipe
            .options
            .response_timeout
            .max(Duration::from_millis(100))
    }

    /// The connection to send a request on, and its ticket.
    pub(crate) fn connection(&self) -> (RedisConnection, Ticket) {
        let (current, generation) = match self.current.read() {
            Ok(guard) => guard.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        };
        let ticket = Ticket {
            sent: self.now(),
            generation,
        };
        (RedisConnection::Cluster(current), ticket)
    }

    /// Records how a request ended: any answer from a server (a reply or an error
    /// reply) shows the connection alive.
    pub(crate) fn finished<T>(&self, result: &Result<T, RedisError>) {
        if let Err(err) = result
            && (err.is_timeout() || err.is_io_error())
        {
            return;
        }
        self.answered.fetch_max(self.now(), Ordering::Relaxed);
    }

    /// Whether the connection looks wedged to the request of `ticket`: it has waited
    /// [`Renewing::patience`] and nothing was answered in that time.
    pub(crate) fn looks_wedged(&self, ticket: &Ticket) -> bool {
        let now = self.now();
        let patience = millis(self.patience());
        let since = ticket.sent.max(now.saturating_sub(patience));
        now.saturating_sub(ticket.sent) >= patience && self.answered.load(Ordering::Relaxed) < since
    }

    /// Called when the request of `ticket` [looks wedged](Renewing::looks_wedged):
    /// asks every master for a PING through the connection, and if none answers
    /// within half of [`Renewing::patience`], opens the connection again. Answers whether the
    /// request should be abandoned (the connection was, or is being, replaced).
    ///
    /// The PING tells a wedged connection (nothing answers) from requests that all
    /// wait on one stopped or slow node (the other masters answer): replacing the
    /// connection would not help the latter, and would cost a connection timeout.
    /// One caller at a time checks; the others then find the connection answered
    /// or replaced. A reopening that failed is not attempted again within
    /// `cluster_response_timeout`, so a cluster that is down is not flooded; one that
    /// succeeded may be followed by another as soon as the new connection wedges too
    /// (`tests/store/cluster_faults.rs` saw a new connection wedge at its first slot
    /// refresh, again and again, while slots kept moving).
    pub(crate) async fn check(&self, ticket: &Ticket) -> bool {
        let _one_at_a_time = self.reopening.lock().await;
        if self.generation() != ticket.generation {
            return true;
        }
        if !self.looks_wedged(ticket) {
            return false;
        }
        let now = self.now();
        let pause = millis(
            self.recipe
                .options
                .cluster_response_timeout
                .max(self.patience()),
        );
        let failed = self.failed.load(Ordering::Relaxed);
        if failed != 0 && now.saturating_sub(failed) < pause {
            return false;
        }
        let (connection, _) = self.connection();
        let RedisConnection::Cluster(mut con) = connection else {
            return false;
        };
        let ping = con.route_command(
            redis::cmd("PING"),
            RoutingInfo::MultiNode((
                MultipleNodeRoutingInfo::AllMasters,
                Some(ResponsePolicy::OneSucceeded),
            )),
        );
        // Half the patience: a master that is up answers a PING in milliseconds.
        let ping_wait = self.patience() / 2;
        if let Ok(Ok(_)) = tokio::time::timeout(ping_wait, ping).await {
            self.answered.fetch_max(self.now(), Ordering::Relaxed);
            return false;
        }
        tracing::warn!(
            waited = ?self.patience() + ping_wait,
            "the Redis Cluster connection answered nothing, not even a PING to every \
             master; opening a new one"
        );
        crate::metrics::store_retry("reopen cluster connection");
        // Opening may hang too (an unreachable seed): bounded.
        let limit = self.recipe.options.connection_timeout
            + self
                .recipe
                .options
                .cluster_response_timeout
                .max(Duration::from_secs(1));
        match tokio::time::timeout(limit, self.recipe.connect()).await {
            Ok(Ok(connection)) => {
                let generation = ticket.generation + 1;
                match self.current.write() {
                    Ok(mut guard) => *guard = (connection, generation),
                    Err(poisoned) => *poisoned.into_inner() = (connection, generation),
                }
                tracing::warn!(generation, "opened a new Redis Cluster connection");
                return true;
            }
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "could not open a new Redis Cluster connection")
            }
            Err(_) => {
                tracing::warn!("could not open a new Redis Cluster connection within {limit:?}")
            }
        }
        self.failed.store(self.now(), Ordering::Relaxed);
        false
    }
}
