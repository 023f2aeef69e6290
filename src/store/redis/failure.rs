//! How a Redis error becomes a [`StoreError`]: whether the request was sent
//! ([`StoreError::Unreachable`] when provably not), what kind of failure it is, and
//! what to do about it. The store's error type is backend-neutral; the Redis
//! knowledge of its errors (codes, redis-rs's error kinds, the options and URL forms
//! a hint names) lives here.

use std::time::Duration;

use redis::RedisError;

use crate::error::{BackendFailure, ErrorSource, StoreError, UNREACHABLE_WAIT};

/// A refused connection proves the request was never sent: it is
/// [`StoreError::Unreachable`]; anything else is [`StoreError::Backend`]. Every path
/// of the Redis store converts through here (or through [`unreachable`] with a better
/// wait), so none can report a refusal as a failure that might have written something.
impl From<RedisError> for StoreError {
    fn from(err: RedisError) -> StoreError {
        if err.is_connection_refusal() {
            unreachable(&err, UNREACHABLE_WAIT)
        } else {
            backend(err)
        }
    }
}

/// `err` as a failure of the call ([`StoreError::Backend`]), classified.
pub(crate) fn backend(err: RedisError) -> StoreError {
    StoreError::Backend {
        backend: "redis",
        kind: kind(&err),
        code: err.code().map(str::to_owned),
        hint: hint(&err),
        source: ErrorSource::new(err),
    }
}

/// The answer for a request that was never sent because of `err` (see
/// [`StoreError::Unreachable`]), to be tried again after `retry_after`.
pub(crate) fn unreachable(err: &RedisError, retry_after: Duration) -> StoreError {
    StoreError::Unreachable {
        reason: format!("{err}{}", hint(err)),
        retry_after,
    }
}

/// The answer for the write `op` that failed with `err` after it may have run.
pub(crate) fn unknown(op: &'static str, err: RedisError) -> StoreError {
    StoreError::Unknown {
        op,
        source: ErrorSource::new(err),
        at: None,
    }
}

/// The error code Redis answered, when `e` is a failure with one.
pub(crate) fn code(e: &StoreError) -> Option<&str> {
    match e {
        StoreError::Backend { code, .. } => code.as_deref(),
        _ => None,
    }
}

/// What kind of failure `err` is, for callers of the store.
fn kind(err: &RedisError) -> BackendFailure {
    if err.code() == Some("OOM") {
        BackendFailure::Full
    } else if err.is_timeout() {
        BackendFailure::Timeout
    } else if err.is_io_error() || err.is_connection_refusal() || err.is_connection_dropped() {
        BackendFailure::Connection
    } else if err.code().is_some() {
        BackendFailure::Refused
    } else {
        BackendFailure::Other
    }
}

/// What to do about a Redis error, when there is something to do.
fn hint(e: &RedisError) -> &'static str {
    match e.code() {
        Some("MOVED" | "ASK") => {
            return "; a Redis Cluster slot moved: on redis+cluster:// the operation may be \
                    retried (with a request id leaguekit retries it for you); a redis:// URL \
                    that names a cluster node should be redis+cluster://";
        }
        Some("CLUSTERDOWN" | "MASTERDOWN") => {
            return "; the Redis Cluster is down or failing over: retry in a few seconds, \
                    and check CLUSTER INFO";
        }
        Some("OOM") => {
            return "; Redis's memory is full (used memory above maxmemory, under \
                    maxmemory-policy noeviction) and it refuses writes: nothing was written, \
                    reads keep working; raise maxmemory or free memory, then retry";
        }
        Some("NOPERM") => {
            return "; the Redis ACL user lacks a permission leaguekit needs: grant it \
                    +@read +@write +@scripting +ping +info";
        }
        _ => {}
    }
    if e.is_io_error() || e.is_connection_refusal() || e.is_connection_dropped() {
        "; check that Redis is reachable (--redis or LEAGUEKIT_REDIS)"
    } else if e.is_timeout() {
        "; Redis did not answer in time: check its load, or raise RedisOptions::response_timeout"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The neutral error keeps what callers act on, and the chain reaches the
    /// redis-rs error.
    #[test]
    fn redis_errors_are_classified_here() {
        let timeout: RedisError =
            std::io::Error::new(std::io::ErrorKind::TimedOut, "timed out").into();
        let e = StoreError::from(timeout);
        assert!(
            matches!(&e, StoreError::Backend { kind: BackendFailure::Timeout, backend: "redis", hint, .. } if hint.contains("reachable")),
            "{e:?}"
        );
        assert!(e.to_string().starts_with("redis: "), "{e}");
        let source = std::error::Error::source(&e).expect("a source");
        assert!(source.downcast_ref::<RedisError>().is_some(), "{source:?}");
        let refused: RedisError =
            std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused").into();
        assert!(matches!(
            StoreError::from(refused),
            StoreError::Unreachable { retry_after, .. } if retry_after == UNREACHABLE_WAIT
        ));
        let reply = redis::parse_redis_value(b"-OOM command not allowed when used memory\r\n");
        let Ok(redis::Value::ServerError(oom)) = reply else {
            panic!("not a server error: {reply:?}");
        };
        let e = backend(oom.into());
        assert!(
            matches!(
                &e,
                StoreError::Backend {
                    kind: BackendFailure::Full,
                    ..
                }
            ),
            "{e:?}"
        );
        assert_eq!(code(&e), Some("OOM"));
    }
}
