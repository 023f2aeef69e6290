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
    /// The season file does not fit the league's live data: a tier with players in it
    /// is gone, or something that shapes running periods (bracket size, time
    /// resolution, schedule) changed. Nothing was written.
    #[error("the season file does not fit the live league: {message}")]
    LiveMismatch {
        /// What differs, and what to do.
        message: String,
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
    Score(#[from] ScoreRangeError),
    /// An event time before the first period of the season.
    #[error("time {at} is before the season starts ({start}); send a time at or after the start")]
    BeforeSeason {
        /// The event's time.
        at: DateTime<Utc>,
        /// The season's start.
        start: DateTime<Utc>,
    },
    /// An event time after the season's calendar ends (see `leaguekit check`).
    #[error(
        "time {at} is after the season's calendar ends ({ends}); send a time within the \
         season, or start a new season"
    )]
    OutsideCalendar {
        /// The event's time.
        at: DateTime<Utc>,
        /// The end of the calendar's last period.
        ends: DateTime<Utc>,
    },
    /// An update for a period that has been closed.
    #[error(
        "period {period} is closed; updates with a time in it are refused (send the current time)"
    )]
    PeriodClosed {
        /// The closed period.
        period: u64,
    },
    /// An event time further ahead of the league clock than `[clock] max_skew` allows.
    #[error(
        "time {at} is in the future: {ahead_ms} ms ahead of the league clock ({now}), and at \
         most {max_skew_ms} ms is allowed ([clock] max_skew); check this server's clock \
         (NTP) or send the current time"
    )]
    FutureTime {
        /// The event's time.
        at: DateTime<Utc>,
        /// The league clock when the event was refused.
        now: DateTime<Utc>,
        /// How far ahead the event was, in milliseconds.
        ahead_ms: u64,
        /// The allowed skew, in milliseconds.
        max_skew_ms: u64,
    },
    /// The event's period has not started by the league clock (the sender's clock is
    /// a little fast). Nothing was written; retry after `retry_after_ms`.
    #[error(
        "period {period} has not started by the league clock: it starts at {starts}, in \
         {retry_after_ms} ms; retry after that (this server's clock runs ahead of the league's)"
    )]
    NotStarted {
        /// The period the event's time falls in.
        period: u64,
        /// When it starts.
        starts: DateTime<Utc>,
        /// How long until it starts, in milliseconds.
        retry_after_ms: u64,
    },
    /// The player's previous period has ended but is not closed yet (it accepts late
    /// events until `[clock] max_skew` after its end), and their tier for the new
    /// period depends on its outcome. Nothing was written; retry after `retry_after_ms`.
    #[error(
        "player {player:?} cannot be placed yet: their previous period {period} closes at \
         {closes} by the league clock (in {retry_after_ms} ms) and decides their tier; retry \
         after that"
    )]
    StillClosing {
        /// The player.
        player: String,
        /// The previous period.
        period: u64,
        /// When it closes.
        closes: DateTime<Utc>,
        /// How long until then, in milliseconds.
        retry_after_ms: u64,
    },
    /// The player is already placed in a later period, whose tier was decided without
    /// this earlier one: an event of the earlier period (late, within the allowed skew)
    /// can no longer place them there, or the next tier would no longer follow from
    /// their last outcome. Nothing was written.
    #[error(
        "player {player:?} is already placed in period {later}, so a late event of period          {period} cannot place them there any more (their tier in period {later} was \
         decided without it); send the event with a time in period {later}, or drop it"
    )]
    PlacedLater {
        /// The player.
        player: String,
        /// The event's (earlier) period.
        period: u64,
        /// The later period the player is placed in.
        later: u64,
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
    /// A cohort label the season does not declare.
    #[error("unknown cohort {cohort:?}: {known}; pass a declared label, or none")]
    UnknownCohort {
        /// The label given (truncated).
        cohort: String,
        /// What the season's cohorts are.
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
    /// An update beyond one of the season's `[limits]`; nothing was written.
    #[error("update refused by {rule}: {}; nothing was written{}", limit.why(*got),
        retry_after_ms.map(|ms| format!("; send it again in {ms} ms")).unwrap_or_default())]
    LimitExceeded {
        /// Which limit.
        limit: Limit,
        /// The setting, as written in the season file.
        rule: String,
        /// The |value| or the score the update would have given (0 for the rate).
        got: i128,
        /// For the rate: how long until the player's next update is allowed.
        retry_after_ms: Option<u64>,
    },
    /// An operator's change for a player not placed in the running period.
    #[error(
        "player {player:?} is not placed in the running period {period}; only a score of \
         the running period can be changed (check the player id)"
    )]
    NotPlaced {
        /// The player.
        player: String,
        /// The running period.
        period: u64,
    },
    /// Anything else, with its own explanation.
    #[error("{0}")]
    Other(String),
}

/// A plausibility limit of the season's `[limits]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Limit {
    /// `max_value`: the largest |value| of one update.
    MaxValue,
    /// `rate`: the most updates a player may send in a window.
    Rate,
    /// `max_period_score`: the largest score a player may reach in one period.
    MaxPeriodScore,
}

impl Limit {
    /// The limit's key in `[limits]`, also its metrics label.
    pub fn as_str(self) -> &'static str {
        match self {
            Limit::MaxValue => "max_value",
            Limit::Rate => "rate",
            Limit::MaxPeriodScore => "max_period_score",
        }
    }

    fn why(self, got: i128) -> String {
        match self {
            Limit::MaxValue => format!("|value| {got} is larger"),
            Limit::MaxPeriodScore => format!("the score would become {got} this period"),
            Limit::Rate => "the player sent more updates than that".to_owned(),
        }
    }
}

/// Why an update was refused by the score rules.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ScoreRangeError {
    /// The resulting score would fall outside `0..=max_score`.
    #[error(
        "score would become {result}, outside 0..={max} (current {current}, value {value}); \
         send a value that keeps the score in range"
    )]
    OutOfRange {
        /// The score before the update.
        current: u64,
        /// The submitted value.
        value: i64,
        /// The score the update would have produced.
        result: i128,
        /// The season's `max_score`.
        max: u64,
    },
}

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

impl Error {
    /// How long to wait before the same call may succeed, when the refusal was only a
    /// matter of time (a period not started yet, a previous period still closing).
    pub fn retry_after(&self) -> Option<std::time::Duration> {
        match self {
            Error::Input(InputError::NotStarted { retry_after_ms, .. })
            | Error::Input(InputError::StillClosing { retry_after_ms, .. })
            | Error::Input(InputError::LimitExceeded {
                retry_after_ms: Some(retry_after_ms),
                ..
            }) => Some(std::time::Duration::from_millis(*retry_after_ms)),
            Error::Store(StoreError::Unreachable { retry_after, .. }) => Some(*retry_after),
            _ => None,
        }
    }

    /// True when a write may or may not have been applied (see [`StoreError::Unknown`]).
    pub fn is_unknown(&self) -> bool {
        matches!(self, Error::Store(StoreError::Unknown { .. }))
    }

    /// True when the request never reached the store and nothing was written (see
    /// [`StoreError::Unreachable`]).
    pub fn is_unreachable(&self) -> bool {
        matches!(self, Error::Store(StoreError::Unreachable { .. }))
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

/// Shorthand for results in this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

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

#[cfg(test)]
mod tests {
    use super::*;

    /// A backend's error stays reachable as its own type, through `source()` and
    /// `downcast_ref`, and one failure can be cloned to every call it ended.
    #[test]
    fn the_source_is_the_backends_own_error() {
        let e = StoreError::Unknown {
            op: "update",
            source: ErrorSource::new(std::io::Error::other("reset")),
            at: None,
        };
        let copy = e.clone();
        let source = std::error::Error::source(&copy).expect("a source");
        assert!(
            source.downcast_ref::<std::io::Error>().is_some(),
            "{source:?}"
        );
        let StoreError::Unknown { source, .. } = e else {
            unreachable!()
        };
        assert_eq!(
            source
                .downcast_ref::<std::io::Error>()
                .map(|e| e.to_string()),
            Some("reset".to_owned())
        );
    }

    #[test]
    fn an_unknown_outcome_says_what_may_be_resent() {
        let timeout = || ErrorSource::new(std::io::Error::from(std::io::ErrorKind::TimedOut));
        let update = StoreError::Unknown {
            op: "update",
            source: timeout(),
            at: None,
        };
        assert!(
            update.to_string().contains("only with the same request id"),
            "{update}"
        );
        let claim = StoreError::Unknown {
            op: "claim_rewards",
            source: timeout(),
            at: None,
        };
        assert!(
            claim.to_string().contains("only with the same claim id"),
            "{claim}"
        );
        let grant = StoreError::Unknown {
            op: "grant",
            source: timeout(),
            at: None,
        };
        let text = grant.to_string();
        assert!(
            text.contains("running it again") && text.contains("rollover"),
            "{text}"
        );
        assert!(!text.contains("request id"), "{text}");
    }
}
