//! A Redis Cluster connection that is opened again when it stops answering
//! altogether.
//!
//! redis-rs 1.8's cluster connection can wedge for good. After a MOVED (every
//! resharding causes some) it refreshes its slot map, and while it does, its
//! background task stops polling the requests in flight; if one of them was just
//! granted the read lock of the connection map (or queued for its write lock), the
//! refresh waits for the write lock forever. From then on every request on that
//! connection times out, while the cluster itself is fine. `tests/cluster_faults.rs`
//! met it in about one run in three while moving slots under 50 writers (the
//! refresh logged "waiting for the write lock" and nothing after; every request for
//! minutes afterwards "timed out"); valkey-glide fixed the same deadlock in its fork
//! of redis-rs by making that lock synchronous. redis-rs 1.8.1 is the newest release.
//!
//! A wedged connection answers nothing at all, so: when a request times out and no
//! request on the same connection was answered since it was sent, a new cluster
//! connection is opened in the background (one at a time, at most once per
//! `response_timeout`) and replaces the old one for the requests that follow. A slow
//! or stopped node does not trigger it as long as requests to the other nodes are
//! answered; if every node is down, a reopening is attempted now and then and fails
//! like the requests do. The wedged connection's task cannot be stopped: it stays
//! behind, idle, with its sockets (three per wedge on a three-master cluster).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use redis::cluster_async::ClusterConnection;
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
    current: RwLock<ClusterConnection>,
    recipe: Recipe,
    /// Times below are milliseconds since `base`.
    base: Instant,
    /// When a request on this connection last got an answer (any reply, errors too).
    answered: AtomicU64,
    /// When the last reopening ended (0: never).
    renewed: AtomicU64,
    renewing: AtomicBool,
}

impl std::fmt::Debug for Renewing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Renewing")
            .field("renewing", &self.renewing.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl Renewing {
    pub(crate) fn new(connection: ClusterConnection, recipe: Recipe) -> Arc<Renewing> {
        Arc::new(Renewing {
            current: RwLock::new(connection),
            recipe,
            base: Instant::now(),
            answered: AtomicU64::new(0),
            renewed: AtomicU64::new(0),
            renewing: AtomicBool::new(false),
        })
    }

    fn now(&self) -> u64 {
        // +1 so that "sent at 0" is still after "never answered".
        millis(self.base.elapsed()).saturating_add(1)
    }

    /// The connection to send a request on, and when it was handed out.
    pub(crate) fn connection(&self) -> (RedisConnection, u64) {
        let current = match self.current.read() {
            Ok(guard) => guard.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        };
        (RedisConnection::Cluster(current), self.now())
    }

    /// Records how a request sent at `sent` ended; a timeout with no answer to any
    /// request since then opens the connection again.
    pub(crate) fn finished<T>(self: &Arc<Self>, result: &Result<T, RedisError>, sent: u64) {
        let err = match result {
            Ok(_) => {
                self.answered.fetch_max(self.now(), Ordering::Relaxed);
                return;
            }
            Err(err) => err,
        };
        if !err.is_timeout() {
            if !err.is_io_error() {
                // The server answered (MOVED, TRYAGAIN, a script error...).
                self.answered.fetch_max(self.now(), Ordering::Relaxed);
            }
            return;
        }
        let now = self.now();
        let pause = millis(self.recipe.options.response_timeout);
        if self.answered.load(Ordering::Relaxed) >= sent
            || now.saturating_sub(self.renewed.load(Ordering::Relaxed)) < pause
            || self.renewing.swap(true, Ordering::AcqRel)
        {
            return;
        }
        tracing::warn!(
            error = %err,
            "the Redis Cluster connection answered nothing since the request was sent; \
             opening a new one"
        );
        crate::metrics::store_retry("reopen cluster connection");
        let this = Arc::clone(self);
        tokio::spawn(async move {
            // Opening may hang too (an unreachable seed): bounded.
            let limit = this.recipe.options.connection_timeout
                + this
                    .recipe
                    .options
                    .cluster_response_timeout
                    .max(Duration::from_secs(1));
            match tokio::time::timeout(limit, this.recipe.connect()).await {
                Ok(Ok(connection)) => {
                    match this.current.write() {
                        Ok(mut guard) => *guard = connection,
                        Err(poisoned) => *poisoned.into_inner() = connection,
                    }
                    tracing::warn!("opened a new Redis Cluster connection");
                }
                Ok(Err(e)) => {
                    tracing::warn!(error = %e, "could not open a new Redis Cluster connection")
                }
                Err(_) => {
                    tracing::warn!("could not open a new Redis Cluster connection within {limit:?}")
                }
            }
            this.renewed.store(this.now(), Ordering::Relaxed);
            this.renewing.store(false, Ordering::Release);
        });
    }
}
