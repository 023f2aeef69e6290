//! Following an ASK redirection on the connection that never resends.
//!
//! While a Redis Cluster slot is being migrated, its old owner answers ASK for a key it
//! no longer holds: the command did not run, and must be sent to the new owner preceded
//! by `ASKING`. redis-rs's cluster connection does that itself only when it may resend
//! (its `retries` above 0), and the connection leaguekit uses for updates that must not
//! run twice has `retries` 0 (see [`crate::RedisStore`]). Sent again as it was, such an
//! update meets ASK again for as long as the slot's migration lasts, which for a slot
//! holding many keys is seconds. So the store follows the redirection itself:
//! [`Routed`] sends the same commands to the node ASK named, each preceded by `ASKING`,
//! in one pipeline routed to that node by redis-rs's own `route_pipeline`.
//!
//! **Upstream.** In redis-rs 1.8.1 a redirection is a retry: `choose_response`
//! (`cluster_handling/async_connection/request.rs`) follows `RetryMethod::AskRedirect`
//! only while `request.retry < number_of_retries`, and its own unit test
//! `should_redirect_and_retry_on_ask_error_if_retries_remain` asserts that, retries
//! spent, the ASK error goes to the caller. There is no separate redirection limit;
//! redis-rs#1186 and #1222 dealt with the same family (a `retries(0)` connection that
//! never refreshed its topology, because errors were handled only on retries).
//! Minimal reproduction: on a three-master cluster, `CLUSTER SETSLOT s IMPORTING <src>`
//! on the target, `CLUSTER SETSLOT s MIGRATING <dst>` on the owner, `MIGRATE` one key
//! of slot `s`; a `GET` of that key on a `ClusterClientBuilder::new(..).retries(0)`
//! connection fails with `ASK s <dst>` instead of answering (tests/store/cluster_faults.rs
//! moves slots under writers this way).
//!
//! **Removal.** This module goes when redis-rs follows MOVED/ASK outside the retry
//! budget (or with a redirection limit of its own), or when no write needs the
//! non-resending connection. The writes that need it are a score update without a
//! request id and a reward claim without a claim id (`Retry::NotExecuted`); every
//! other write is idempotent. Giving those two an idempotency key of leaguekit's own
//! (the per-call attempt token already sent with each update would serve) would let
//! them use the resending connection, and remove this module, the second cluster
//! connection and its [`super::Renewing`]. The cost is memory and one `SET NX GET` per
//! call: a key per update kept for the season's `idempotency_window` (1 h: 3,600 keys,
//! about 100 bytes each, per update/s, so ~360 MB at 1,000 updates/s), where today
//! only callers that send a request id pay it. The sequential bench measured no
//! throughput cost for the request id itself (12,998/s with one, 12,352/s without,
//! docs/performance.md); the memory is what decides, and it is not taken here: a game
//! server that wants resend-safe updates already sends request ids.

use redis::aio::ConnectionLike;
use redis::cluster_routing::SingleNodeRoutingInfo;
use redis::{Cmd, Pipeline, RedisError, RedisFuture, Value};

use super::RedisConnection;

/// A node named by an ASK redirection (`host:port` as the server wrote it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AskTarget {
    host: String,
    port: u16,
}

impl AskTarget {
    /// The node an ASK error names, if `err` is one and names a usable address.
    pub(crate) fn of(err: &RedisError) -> Option<AskTarget> {
        if err.kind() != redis::ErrorKind::Server(redis::ServerErrorKind::Ask) {
            return None;
        }
        let (addr, _slot) = err.redirect_node()?;
        let (host, port) = addr.rsplit_once(':')?;
        let host = host.trim_start_matches('[').trim_end_matches(']');
        Some(AskTarget {
            host: host.to_string(),
            port: port.parse().ok()?,
        })
    }
}

/// A connection for one attempt: the store's connection, or, after an ASK, the same
/// cluster connection routed to the node that ASK named.
pub(crate) struct Routed {
    connection: RedisConnection,
    asking: Option<AskTarget>,
}

impl Routed {
    pub(crate) fn new(connection: RedisConnection, asking: Option<AskTarget>) -> Routed {
        // Only a cluster answers ASK; on one server there is nowhere else to go.
        let asking = asking.filter(|_| matches!(connection, RedisConnection::Cluster(_)));
        Routed { connection, asking }
    }

    /// `commands` each preceded by ASKING, sent to `target`; answers the commands'
    /// own replies (every second one).
    async fn ask<'a>(
        &mut self,
        target: &AskTarget,
        commands: impl Iterator<Item = &'a Cmd>,
    ) -> Result<Vec<Value>, RedisError> {
        let RedisConnection::Cluster(con) = &mut self.connection else {
            return Err(redis::RedisError::from((
                redis::ErrorKind::Client,
                "ASK redirection outside a Redis Cluster",
            )));
        };
        let mut pipe = redis::pipe();
        let mut n = 0;
        for cmd in commands {
            pipe.cmd("ASKING");
            pipe.add_command(cmd.clone());
            n += 1;
        }
        let route = SingleNodeRoutingInfo::ByAddress {
            host: target.host.clone(),
            port: target.port,
        };
        let replies = con.route_pipeline(pipe, 0, 2 * n, route).await?;
        if replies.len() != 2 * n {
            return Err(RedisError::from((
                redis::ErrorKind::Client,
                "an ASKING pipeline answered the wrong number of replies",
            )));
        }
        Ok(replies.into_iter().skip(1).step_by(2).collect())
    }
}

impl ConnectionLike for Routed {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self.asking.clone() {
            None => self.connection.req_packed_command(cmd),
            Some(target) => Box::pin(async move {
                let mut replies = self.ask(&target, std::iter::once(cmd)).await?;
                replies.pop().ok_or_else(|| {
                    RedisError::from((redis::ErrorKind::Client, "an ASKING command got no reply"))
                })
            }),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self.asking.clone() {
            // A transaction's replies are not one per command: sent as it is.
            Some(target) if !pipeline.is_transaction() => Box::pin(async move {
                let replies = self.ask(&target, pipeline.cmd_iter()).await?;
                Ok(replies.into_iter().skip(offset).take(count).collect())
            }),
            _ => self.connection.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        self.connection.get_db()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_target_of_an_ask_error() {
        let ask = RedisError::from((
            redis::ErrorKind::Server(redis::ServerErrorKind::Ask),
            "An error was signalled by the server",
            "5800 127.0.0.1:40897".to_string(),
        ));
        assert_eq!(
            AskTarget::of(&ask),
            Some(AskTarget {
                host: "127.0.0.1".into(),
                port: 40897
            })
        );
        let moved = RedisError::from((
            redis::ErrorKind::Server(redis::ServerErrorKind::Moved),
            "An error was signalled by the server",
            "5800 127.0.0.1:40897".to_string(),
        ));
        assert_eq!(AskTarget::of(&moved), None, "MOVED is redis-rs's to follow");
        let garbled = RedisError::from((
            redis::ErrorKind::Server(redis::ServerErrorKind::Ask),
            "An error was signalled by the server",
            "5800 nowhere".to_string(),
        ));
        assert_eq!(AskTarget::of(&garbled), None);
    }
}
