//! Typed errors. Every message says what was wrong and how to fix it.

use chrono::{DateTime, Utc};

/// Any error the engine returns.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The season file is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A caller passed something invalid; nothing was written.
    #[error(transparent)]
    Input(#[from] InputError),
    /// The store failed or answered something unexpected.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A season file that cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error(
        "cannot read season file {path}: {source}; check the path (--config or LEAGUEKIT_CONFIG)"
    )]
    Read {
        /// The path that was tried.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid for a season; the message starts with `file:line:col:`.
    #[error("{file}:{line}:{col}: {message}")]
    Invalid {
        /// The file name (or `<string>`).
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        col: usize,
        /// What is wrong and how to fix it.
        message: String,
    },
}

/// Bad input from a caller. Nothing was written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// A player id that is empty, too long, or contains control characters.
    #[error("invalid player id {id:?}: {why}; use 1-64 bytes of UTF-8 without control characters")]
    PlayerId {
        /// The id as given (escaped in the message).
        id: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// A request id that is empty, too long, or contains control characters.
    #[error(
        "invalid request id {id:?}: {why}; use 1-128 bytes of UTF-8 without control characters"
    )]
    RequestId {
        /// The id as given.
        id: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// An update would take the score out of `0..=max_score`.
    #[error(transparent)]
    Score(#[from] crate::score::ScoreRangeError),
    /// An event time before the first period of the season.
    #[error("time {at} is before the season starts ({start}); send a time at or after the start")]
    BeforeSeason {
        /// The event's time.
        at: DateTime<Utc>,
        /// The season's start.
        start: DateTime<Utc>,
    },
    /// An event time the calendar cannot place (beyond the supported range).
    #[error("time {at} is outside the season's calendar; send a time within the season")]
    OutsideCalendar {
        /// The event's time.
        at: DateTime<Utc>,
    },
    /// An update for a period that has been closed.
    #[error(
        "period {period} is closed; updates with a time in it are refused (send the current time)"
    )]
    PeriodClosed {
        /// The closed period.
        period: u64,
    },
    /// The player is not placed in a bracket this period and the season needs an explicit join.
    #[error(
        "player {player:?} has not joined period {period}; call join first (the season uses join = \"explicit\")"
    )]
    NotJoined {
        /// The player.
        player: String,
        /// The period.
        period: u64,
    },
    /// A tier name that the season does not have.
    #[error("unknown tier {tier:?}; the season's tiers are: {known}")]
    UnknownTier {
        /// The name given.
        tier: String,
        /// The tiers that exist, comma separated.
        known: String,
    },
    /// A bracket number of 0 (brackets are numbered from 1).
    #[error("bracket numbers start at 1; got {bracket}")]
    BadBracket {
        /// The number given.
        bracket: u32,
    },
    /// A period id the calendar does not have (ids start at 1).
    #[error("unknown period {period}; period ids start at 1 (see `leaguekit check`)")]
    UnknownPeriod {
        /// The id given.
        period: u64,
    },
    /// A profile field the season does not declare.
    #[error("unknown profile field {field:?}; the season's fields are: {known}")]
    UnknownProfileField {
        /// The field given.
        field: String,
        /// The declared fields.
        known: String,
    },
    /// A profile larger than `profiles.max_bytes`.
    #[error("profile of {bytes} bytes exceeds profiles.max_bytes = {max}; shorten the values")]
    ProfileTooLarge {
        /// Encoded size.
        bytes: usize,
        /// The limit.
        max: usize,
    },
    /// A page limit of zero or above the maximum.
    #[error("limit {limit} is out of range; use 1..={max}")]
    BadLimit {
        /// The limit given.
        limit: u64,
        /// The largest allowed.
        max: u64,
    },
    /// Anything else, with its own explanation.
    #[error("{0}")]
    Other(String),
}

/// A failure of the store itself (not of the caller's input).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// Redis returned an error or the connection failed.
    #[error("redis: {0}{hint}", hint = redis_hint(.0))]
    Redis(#[from] redis::RedisError),
    /// No connection could be opened: a bad URL or TLS file, refused credentials or
    /// certificates, or an unreachable server. Nothing was written.
    #[error(transparent)]
    Connect(#[from] crate::connection::ConnectError),
    /// The period is being closed or is closed; nothing was written.
    #[error("period is closed")]
    PeriodClosed,
    /// The store answered something this version of leaguekit does not understand.
    #[error(
        "unexpected reply from the store: {0}; is another version of leaguekit writing under the same key_prefix?"
    )]
    Protocol(String),
}

/// What to do about a Redis error, when there is something to do.
fn redis_hint(e: &redis::RedisError) -> &'static str {
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

/// Shorthand for results in this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
