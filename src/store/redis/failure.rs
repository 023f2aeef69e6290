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

/// `err` as a failure of the call ([`StoreError::Backend`]), classified. An error
/// raised inside one of leaguekit's scripts is told in the league's words
/// ([`ScriptFailure`]), never as Redis's text with the script's hash and line; the
/// Redis error stays its source.
pub(crate) fn backend(err: RedisError) -> StoreError {
    let (kind, code, hint) = (kind(&err), err.code().map(str::to_owned), hint(&err));
    let source = if in_script(&err) {
        ErrorSource::new(ScriptFailure(err))
    } else {
        ErrorSource::new(err)
    };
    StoreError::Backend {
        backend: "redis",
        kind,
        code,
        hint,
        source,
    }
}

/// Whether `err` was raised inside a script (Redis names `@user_script` then).
fn in_script(err: &RedisError) -> bool {
    err.detail().is_some_and(|d| d.contains("user_script"))
        || err.to_string().contains("user_script")
}

/// An error raised inside one of leaguekit's scripts, told without the script's hash
/// and line; its source is Redis's error.
#[derive(Debug)]
pub(crate) struct ScriptFailure(RedisError);

impl std::fmt::Display for ScriptFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.code() {
            Some("WRONGTYPE") => f.write_str(
                "a key of this league holds another type of value than leaguekit writes \
                 there (something else wrote it)",
            ),
            Some(code) => write!(f, "a leaguekit script was refused by Redis ({code})"),
            None => f.write_str("a leaguekit script failed on Redis"),
        }
    }
}

impl std::error::Error for ScriptFailure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
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
        Some("WRONGTYPE") => {
            return "; find it: `leaguekit rollover` names a bracket's foreign key, and \
                    `redis-cli --scan --pattern '<key_prefix>:*'` with TYPE lists the others; \
                    delete or rename it (leaguekit writes it again)";
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

    /// An error raised inside a script reaches a user without the script's hash and
    /// line, in the league's words, with what to do; Redis's error stays its source.
    #[test]
    fn script_errors_are_told_in_the_leagues_words() {
        let reply = redis::parse_redis_value(
            b"-WRONGTYPE Operation against a key holding the wrong kind of value script: \
              2130959c0f, on @user_script:13.\r\n",
        );
        let Ok(redis::Value::ServerError(wrong)) = reply else {
            panic!("not a server error: {reply:?}");
        };
        let e = backend(wrong.into());
        let text = e.to_string();
        assert!(
            !text.contains("user_script") && !text.contains("2130959c"),
            "{text}"
        );
        assert!(
            text.contains("another type of value") && text.contains("delete or rename"),
            "{text}"
        );
        assert_eq!(code(&e), Some("WRONGTYPE"));
        let mut source = std::error::Error::source(&e);
        let mut reached = false;
        while let Some(s) = source {
            reached |= s.downcast_ref::<RedisError>().is_some();
            source = s.source();
        }
        assert!(reached, "the chain reaches Redis's error: {e:?}");
    }
}
