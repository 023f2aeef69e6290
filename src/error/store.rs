//! [`StoreError`]: failures of the store itself, backend-neutral, with the backend's
//! own error kept as the source.

use chrono::{DateTime, Utc};

/// A failure of the store itself (not of the caller's input).
///
/// Backend-neutral: a backend (Redis) classifies its own errors into these variants
/// and keeps its error as the [`std::error::Error::source`] (an [`ErrorSource`]).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The store answered an error, or the connection to it failed, before the call
    /// could have been applied. (A refused connection, which proves nothing was sent,
    /// is [`StoreError::Unreachable`]; a failure after a write may have been applied
    /// is [`StoreError::Unknown`].)
    #[error("{backend}: {source}{hint}")]
    Backend {
        /// The backend: `"redis"`.
        backend: &'static str,
        /// What kind of failure it is, for a caller that acts on it.
        kind: BackendFailure,
        /// The error code the store answered, if it answered one (Redis: `OOM`,
        /// `NOPERM`, `NOSCRIPT`, ...).
        code: Option<String>,
        /// What to check or do about it, when the backend knows (empty, or starting
        /// with `"; "`).
        hint: &'static str,
        /// The backend's own error.
        #[source]
        source: ErrorSource,
    },
    /// No connection could be opened: a bad URL or TLS file, refused credentials or
    /// certificates, or an unreachable server. Nothing was written. The backend's own
    /// error (for Redis, `leaguekit::ConnectError`) is reached with
    /// [`ErrorSource::downcast_ref`].
    #[error(transparent)]
    Connect(ErrorSource),
    /// The period is being closed or is closed; nothing was written.
    #[error("period is closed")]
    PeriodClosed,
    /// The period holds a ban marker of the player that has not ended by the store's
    /// clock (`until_ms`, unix ms; `None`: no end): the join was refused, nothing
    /// written.
    #[error("the player is banned")]
    Banned {
        /// When the ban ends, unix ms by the league clock; `None` if it does not.
        until_ms: Option<i64>,
    },
    /// The operation's time is ahead of the store's clock: the event by more than the
    /// allowed skew (`ahead_ms`), or a period has not started or may not be closed yet
    /// (`wait_ms`). Nothing was written.
    #[error("too early by the store's clock: {0:?}")]
    Time(TimeRefusal),
    /// The request never reached the store: the store refused the connection (it is
    /// down or restarting), or refused one a moment ago and the request was not sent.
    /// Nothing was written, so any call (a score update with or without a request id,
    /// a join, a read) may be sent again as it was, after `retry_after`.
    #[error(
        "the store is unreachable and the request was not sent, so nothing was written \
         ({reason}); send it again in {} ms",
        retry_after.as_millis()
    )]
    Unreachable {
        /// What showed the store unreachable, and what to check.
        reason: String,
        /// How long to wait before sending the request again (until the store is
        /// next tried).
        retry_after: std::time::Duration,
    },
    /// The store failed after a write may have been applied: nobody knows whether it
    /// was. A score update or reward claim may be resent only with its request (claim)
    /// id, which makes the resend recognised (an update also with the same event time,
    /// `at`); a join, and every other write (profiles, each rollover step), is
    /// idempotent and may simply be run again.
    #[error(
        "the outcome of {op} is unknown: the store failed after it may have been applied \
         ({source}); {}",
        unknown_advice(op, *at)
    )]
    Unknown {
        /// The operation.
        op: &'static str,
        /// What failed.
        #[source]
        source: ErrorSource,
        /// For a score update: the event time it was stamped with (the caller's `at`,
        /// or the league clock's when it gave none), which a resend must carry.
        at: Option<DateTime<Utc>>,
    },
    /// The store holds data of the season written in leaguekit 0.2's key layout (one
    /// key per player), which this version cannot read. Nothing was written.
    #[error(
        "the store holds season {season:?} in leaguekit 0.2's key layout ({found}), which \
         this version cannot read; finish the season on leaguekit 0.2, or start a new \
         season under a new `name` or `key_prefix` on this version. Nothing was written"
    )]
    OldLayout {
        /// The season (`key_prefix:name`).
        season: String,
        /// What showed the old layout.
        found: String,
    },
    /// A key leaguekit writes holds a value of another type: something else wrote it
    /// (a foreign tool, a key planted by hand). Nothing was written by the step that
    /// found it.
    #[error(
        "key {key} holds a {found}, which leaguekit never writes there (it writes a \
         {expected}): something else wrote it; delete or rename that key (a bracket's \
         close is retried by every rollover)"
    )]
    WrongType {
        /// The key.
        key: String,
        /// The type found (Redis's TYPE).
        found: String,
        /// The type leaguekit writes there.
        expected: String,
    },
    /// The store answered something this version of leaguekit does not understand.
    #[error(
        "unexpected reply from the store: {0}; is another version of leaguekit writing under the same key_prefix?"
    )]
    Protocol(String),
}

/// Why a store refused an operation on the grounds of its clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TimeRefusal {
    /// The event time is this many milliseconds beyond the clock plus the allowed skew.
    Future {
        /// Milliseconds ahead of the store's clock (not of clock + skew).
        ahead_ms: u64,
        /// The store's clock, unix milliseconds.
        now_ms: i64,
    },
    /// The period starts, or may be closed, this many milliseconds from now.
    NotYet {
        /// Milliseconds to wait.
        wait_ms: u64,
    },
}

/// What kind of failure a [`StoreError::Backend`] is, as far as a caller acts on it.
/// The backend decides; its own retries have already run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BackendFailure {
    /// The store did not answer in time.
    Timeout,
    /// The connection failed or was dropped.
    Connection,
    /// The store's memory is full and it refuses writes; reads keep working.
    Full,
    /// The store refused the call with an error of its own (see `code`).
    Refused,
    /// Anything else: a reply the client could not read, a client-side error.
    Other,
}

/// A backend's error inside a [`StoreError`]: shared, so that one failure can answer
/// every call it ended, and seen through [`std::error::Error::source`] as the
/// backend's own error (which [`ErrorSource::downcast_ref`] reaches).
#[derive(Clone)]
pub struct ErrorSource(std::sync::Arc<dyn std::error::Error + Send + Sync>);

impl ErrorSource {
    /// Wraps a backend's error.
    pub fn new(error: impl std::error::Error + Send + Sync + 'static) -> ErrorSource {
        ErrorSource(std::sync::Arc::new(error))
    }

    /// The backend's error as its own type, when it is a `T` (for Redis,
    /// `redis::RedisError`, or `leaguekit::ConnectError` in [`StoreError::Connect`]).
    pub fn downcast_ref<T: std::error::Error + 'static>(&self) -> Option<&T> {
        self.0.downcast_ref()
    }
}

// Not `Error` itself: `StoreError::source()` reaches the wrapped error through this
// `Deref`, so the chain shows (and downcasts to) the backend's error, not a wrapper.
impl std::ops::Deref for ErrorSource {
    type Target = dyn std::error::Error + Send + Sync;

    fn deref(&self) -> &Self::Target {
        &*self.0
    }
}

impl std::fmt::Display for ErrorSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&*self.0, f)
    }
}

impl std::fmt::Debug for ErrorSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&*self.0, f)
    }
}

/// How long a caller told [`StoreError::Unreachable`] waits when the store that
/// refused has no better estimate (the first reconnection delay, rounded up to the
/// second an HTTP `Retry-After` can say).
#[cfg_attr(not(feature = "redis"), allow(dead_code))] // only the Redis store retries and waits
pub(crate) const UNREACHABLE_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

impl StoreError {
    /// This error with the event time of the score update it answers (see
    /// [`StoreError::Unknown`]'s `at`); any other error unchanged.
    pub(crate) fn stamped(self, at: DateTime<Utc>) -> StoreError {
        match self {
            StoreError::Unknown { op, source, .. } => StoreError::Unknown {
                op,
                source,
                at: Some(at),
            },
            other => other,
        }
    }
}

/// What to do after the write `op` had an unknown outcome ([`StoreError::Unknown`]);
/// `at` is a score update's event time, which a resend must repeat.
fn unknown_advice(op: &str, at: Option<DateTime<Utc>>) -> String {
    match (op, at) {
        ("update" | "update_many", Some(at)) => format!(
            "resend it only with the same request id and the same at ({}), which makes a \
             resend safe",
            at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
        ),
        ("update" | "update_many", None) => {
            "resend it only with the same request id and the same at, which makes a resend safe"
                .to_owned()
        }
        ("claim_rewards", _) => {
            "resend it only with the same claim id, which makes a resend safe".to_owned()
        }
        ("join" | "join_many", _) => {
            "a join is idempotent: send it again (a player joins a period once)".to_owned()
        }
        _ => "this step is idempotent: running it again (the same call, or the whole rollover) \
              is safe"
            .to_owned(),
    }
}
