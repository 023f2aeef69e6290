//! Redis full, or evicting: the memory policy leaguekit needs, checked at connect, and
//! whether the server refuses writes now because its memory is full.
//!
//! leaguekit keeps state in Redis that nothing else holds: the season's meta (which
//! periods are closed), players' state (their tier), idempotency records, bracket
//! counters. A `maxmemory-policy` that evicts keys deletes them silently once memory
//! is full, and since nearly every leaguekit key has an expiry, `volatile-*` policies
//! are no safer than `allkeys-*`. So [`RedisStore::check_policy`] reads every master's
//! policy at connect and refuses anything but `noeviction`, unless the operator opted
//! in ([`RedisOptions::allow_evicting_policy`](super::RedisOptions::allow_evicting_policy)).
//!
//! Under `noeviction`, a Redis whose used memory is above `maxmemory` refuses writes
//! (an `OOM` error) and answers reads. The read scripts then skip their cache writes
//! (`standings.lua`, `open_page.lua`, `keep_page.lua`), and
//! [`RedisStore::probe_writes`] tells `/healthz` and the metrics.

use redis::Value;
use redis::cluster_routing::{MultipleNodeRoutingInfo, RoutingInfo, SingleNodeRoutingInfo};

use super::RedisStore;
use super::reply::text;
use crate::error::StoreError;
use crate::store::redis::connection::{ConnectError, RedisConnection};

/// The only policy that never deletes a key leaguekit wrote.
const SAFE_POLICY: &str = "noeviction";

/// A script that writes nothing but has a shebang without flags, so Redis 7 treats it
/// as one that may write: it refuses it before running it (OOM) while used memory is
/// above `maxmemory` and the policy cannot free any (`noeviction`), and READONLY on a
/// replica, exactly as it refuses the league's own write scripts. One round trip,
/// nothing written, nothing kept but the script in the script cache.
const WRITE_PROBE: &str = "#!lua\nreturn 1";

impl RedisStore {
    /// Reads the server's `maxmemory-policy` (every master's, on a cluster) and refuses
    /// an evicting one with [`ConnectError::EvictingPolicy`], unless
    /// [`RedisOptions::allow_evicting_policy`](super::RedisOptions::allow_evicting_policy)
    /// is set (then it warns). The policy is read with `CONFIG GET`, or, where a managed
    /// Redis refuses CONFIG, from `INFO memory`; a node where neither answers is let
    /// through with a warning that says so. `target` names a single server in messages.
    pub(super) async fn check_policy(&self, target: &str) -> Result<(), ConnectError> {
        let policies = match self.connection.clone() {
            RedisConnection::Node(mut con) => {
                vec![(target.to_owned(), node_policy(&mut con).await)]
            }
            RedisConnection::Cluster(con) => cluster_policies(con).await,
        };
        for (node, policy) in policies {
            match policy {
                Some(policy) if policy == SAFE_POLICY => {}
                Some(policy) if self.options.allow_evicting_policy => tracing::warn!(
                    node,
                    policy,
                    "Redis evicts keys when its memory is full, and evicting policies are \
                     allowed (--allow-evicting-redis): league data may be lost silently"
                ),
                Some(policy) => {
                    return Err(ConnectError::EvictingPolicy {
                        target: node,
                        policy,
                    });
                }
                None => tracing::warn!(
                    node,
                    "cannot read Redis's maxmemory-policy (CONFIG GET and INFO memory were \
                     both refused); leaguekit needs maxmemory-policy noeviction: check it \
                     on the server"
                ),
            }
        }
        Ok(())
    }

    /// Whether the server refuses writes now, and why: `Some(reason)` while its used
    /// memory is above `maxmemory` under `noeviction` (on a cluster, any master's), or
    /// while it is a read-only replica; `None` while it takes writes. Reads keep working
    /// either way. One round trip (to every master on a cluster) that writes nothing
    /// (see [`WRITE_PROBE`]).
    pub(super) async fn probe_writes(&self) -> Result<Option<String>, StoreError> {
        let connection = match &self.renewing {
            Some((renewing, _)) => renewing.connection().0,
            None => self.pick(&self.connection),
        };
        let mut probe = redis::cmd("EVAL");
        probe.arg(WRITE_PROBE).arg(0);
        let answers = match connection {
            RedisConnection::Node(mut con) => {
                let answer = match probe.query_async::<Value>(&mut con).await {
                    Ok(value) => value,
                    Err(e) => match e.try_into() {
                        Ok(server) => Value::ServerError(server),
                        Err(e) => return Err(super::failure::backend(e)),
                    },
                };
                vec![(None, answer)]
            }
            RedisConnection::Cluster(mut con) => {
                let all = con
                    .route_command(
                        probe,
                        RoutingInfo::MultiNode((MultipleNodeRoutingInfo::AllMasters, None)),
                    )
                    .await?;
                by_node(all)
                    .into_iter()
                    .map(|(node, answer)| (Some(node), answer))
                    .collect()
            }
        };
        let mut full = Vec::new();
        let mut read_only = Vec::new();
        for (node, answer) in answers {
            match answer {
                Value::ServerError(e) if e.code() == "OOM" => full.push(node),
                Value::ServerError(e) if e.code() == "READONLY" => read_only.push(node),
                Value::ServerError(e) => return Err(super::failure::backend(e.into())),
                _ => {}
            }
        }
        let which = |nodes: &[Option<String>]| match nodes {
            [None] => "Redis".to_owned(),
            nodes => format!(
                "Redis Cluster master(s) {}",
                nodes
                    .iter()
                    .map(|n| n.as_deref().unwrap_or("?"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        if !full.is_empty() {
            return Ok(Some(format!(
                "{} refuses writes: its used memory is above maxmemory (maxmemory-policy \
                 noeviction), so scores, joins and rollovers fail while reads keep working; \
                 raise maxmemory or free memory (shorter retention, fewer players per node)",
                which(&full)
            )));
        }
        if !read_only.is_empty() {
            return Ok(Some(format!(
                "{} refuses writes: it is a read-only replica; point leaguekit at the primary",
                which(&read_only)
            )));
        }
        Ok(None)
    }
}

/// One server's policy: CONFIG GET, else INFO memory, else none.
async fn node_policy(con: &mut impl redis::aio::ConnectionLike) -> Option<String> {
    let config = redis::cmd("CONFIG")
        .arg("GET")
        .arg("maxmemory-policy")
        .query_async::<Value>(con)
        .await;
    if let Some(policy) = config.ok().as_ref().and_then(policy_of_config) {
        return Some(policy);
    }
    let info = redis::cmd("INFO")
        .arg("memory")
        .query_async::<Value>(con)
        .await;
    info.ok().as_ref().and_then(policy_of_info)
}

/// Every master's policy, by address: CONFIG GET on all of them, then INFO memory on
/// those that refused it. A cluster that answers neither leaves every policy unknown.
async fn cluster_policies(
    mut con: redis::cluster_async::ClusterConnection,
) -> Vec<(String, Option<String>)> {
    let mut config = redis::cmd("CONFIG");
    config.arg("GET").arg("maxmemory-policy");
    let all = RoutingInfo::MultiNode((MultipleNodeRoutingInfo::AllMasters, None));
    let answers = match con.route_command(config, all).await {
        Ok(answers) => by_node(answers),
        Err(e) => {
            tracing::debug!(error = %e, "CONFIG GET maxmemory-policy failed on the cluster");
            return vec![("every master of the Redis Cluster".to_owned(), None)];
        }
    };
    let mut policies = Vec::with_capacity(answers.len());
    for (node, answer) in answers {
        let mut policy = policy_of_config(&answer);
        if policy.is_none()
            && let Some((host, port)) = node.rsplit_once(':')
            && let Ok(port) = port.parse()
        {
            let route = RoutingInfo::SingleNode(SingleNodeRoutingInfo::ByAddress {
                host: host.to_owned(),
                port,
            });
            let mut info = redis::cmd("INFO");
            info.arg("memory");
            policy = con
                .route_command(info, route)
                .await
                .ok()
                .as_ref()
                .and_then(policy_of_info);
        }
        policies.push((node, policy));
    }
    policies
}

/// The `(address, answer)` pairs of a command routed to every master without a
/// response policy (redis-rs answers a map of them).
fn by_node(answers: Value) -> Vec<(String, Value)> {
    match answers {
        Value::Map(pairs) => pairs
            .into_iter()
            .map(|(node, answer)| {
                let node = text(&node, "node").unwrap_or("?").to_owned();
                (node, answer)
            })
            .collect(),
        other => vec![("?".to_owned(), other)],
    }
}

/// The policy in a `CONFIG GET maxmemory-policy` answer: a name and a value, as an
/// array (RESP2) or a map (RESP3). None for an error or an empty answer (a proxy that
/// hides CONFIG).
fn policy_of_config(answer: &Value) -> Option<String> {
    let value = match answer {
        Value::Array(items) if items.len() == 2 => &items[1],
        Value::Map(pairs) if pairs.len() == 1 => &pairs[0].1,
        _ => return None,
    };
    text(value, "maxmemory-policy")
        .ok()
        .map(|p| p.trim().to_ascii_lowercase())
}

/// The `maxmemory_policy` field of an `INFO memory` answer.
fn policy_of_info(answer: &Value) -> Option<String> {
    text(answer, "INFO memory")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("maxmemory_policy:"))
        .map(|p| p.trim().to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_are_read_from_config_and_info() {
        let bulk = |s: &str| Value::BulkString(s.as_bytes().to_vec());
        let resp2 = Value::Array(vec![bulk("maxmemory-policy"), bulk("allkeys-lru")]);
        assert_eq!(policy_of_config(&resp2).as_deref(), Some("allkeys-lru"));
        let resp3 = Value::Map(vec![(bulk("maxmemory-policy"), bulk("noeviction"))]);
        assert_eq!(policy_of_config(&resp3).as_deref(), Some("noeviction"));
        // A proxy that hides CONFIG answers an empty list.
        assert_eq!(policy_of_config(&Value::Array(vec![])), None);
        let info = bulk("# Memory\r\nused_memory:1\r\nmaxmemory_policy:volatile-lru\r\n");
        assert_eq!(policy_of_info(&info).as_deref(), Some("volatile-lru"));
        assert_eq!(policy_of_info(&bulk("# Memory\r\nused_memory:1\r\n")), None);
    }
}
