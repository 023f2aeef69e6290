//! [`InputError`]: bad input from a caller, or a state of the league that refuses it;
//! nothing was written. With the score rules' [`ScoreRangeError`] and the season's
//! [`Limit`]s.

use chrono::{DateTime, Utc};

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
    /// The player is banned from the league: their joins and score updates are
    /// refused until the ban ends or an operator lifts it. Nothing was written.
    #[error(
        "player {player:?} is banned {}; an operator can lift the ban with `leaguekit unban` \
         (or POST /v1/players/{{player}}/unban)",
        match until { Some(t) => format!("until {}", t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)), None => "with no end".to_owned() }
    )]
    Banned {
        /// The player.
        player: String,
        /// When the ban ends, by the league clock; `None` if it does not.
        until: Option<DateTime<Utc>>,
    },
    /// An operator action named a player the league has no record of (never joined, or
    /// their records have expired). Nothing was written.
    #[error(
        "player {player:?} is unknown to the league (never joined, or their records have expired); check the id"
    )]
    UnknownPlayer {
        /// The player.
        player: String,
    },
    /// A ban whose end is not after now by the league clock. Nothing was written.
    #[error(
        "the ban's end {until} is not after now ({now}, league clock); give a later time, or none for a ban without end"
    )]
    BanInPast {
        /// The end asked for.
        until: DateTime<Utc>,
        /// The league clock's now.
        now: DateTime<Utc>,
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
    /// A move of the staging clock in a season that has none.
    #[error(
        "season {season:?} has no staging clock, so the league clock cannot be moved; \
         on a staging league only, add `travel = true` under `[clock]` in the season file \
         and restart its processes"
    )]
    NoStagingClock {
        /// The season's name.
        season: String,
    },
    /// A season file whose `[clock] travel` differs from what the league in the store
    /// was created as: a staging file against a production league, or the reverse.
    #[error(
        "{season}: the league in the store was created as a {league} league and this season \
         file is a {file} one ([clock] travel = {travel}): a staging league and a production \
         league never act on each other's data; give the staging league its own key_prefix \
         or name, or use the season file the league was created with",
        league = if *league_staging { "staging" } else { "production" },
        file = if *league_staging { "production" } else { "staging" },
        travel = !*league_staging
    )]
    StagingMismatch {
        /// `key_prefix:name` of the season.
        season: String,
        /// Whether the league in the store is a staging league.
        league_staging: bool,
    },
    /// A move of the staging clock past its bound.
    #[error(
        "the league clock cannot be moved to {to}: a move may take it at most {max_days} \
         days ahead of the real clock{end}; move it less far"
    )]
    ClockTooFar {
        /// The time asked for.
        to: chrono::DateTime<chrono::Utc>,
        /// The bound, in days ahead of the store's clock.
        max_days: u64,
        /// `", and not past the season's last period (ending ...)"`, or empty.
        end: String,
    },
    /// A move of the staging clock that is not forward: time only moves forward.
    #[error(
        "the league clock only moves forward: it is {now} and {to} is not later; \
         advance by a positive duration or set a later time"
    )]
    ClockNotForward {
        /// The league clock when the move was asked.
        now: chrono::DateTime<chrono::Utc>,
        /// The time asked for.
        to: chrono::DateTime<chrono::Utc>,
    },
    /// A bracket the period does not have (or whose records the retention dropped).
    #[error(
        "period {period} has no bracket {bracket} of tier {tier:?} ({brackets} there, or its records have expired); pass a bracket from `leaguekit export --period {period}`"
    )]
    UnknownBracket {
        /// The period.
        period: u64,
        /// The tier (a cohort's boards: `tier@cohort`).
        tier: String,
        /// The bracket given.
        bracket: u32,
        /// Brackets of that tier in the period (0 also when its records have expired).
        brackets: u64,
    },
    /// A re-settlement of a bracket that has not closed yet.
    #[error(
        "bracket {bracket} of tier {tier:?} in period {period} is not closed yet; wait for its period to close (`leaguekit rollover`), then re-settle it"
    )]
    BracketNotClosed {
        /// The period.
        period: u64,
        /// The tier.
        tier: String,
        /// The bracket.
        bracket: u32,
    },
    /// A re-settlement that names no player to exclude.
    #[error("a re-settlement needs at least one player to exclude; pass --exclude PLAYER")]
    NoExclusions,
    /// A re-settlement excluding a player who was not on the bracket's closed board.
    #[error(
        "player {player:?} was not on the closed board of bracket {bracket} of tier {tier:?} in period {period}; exclude only players of that bracket (see `leaguekit export --period {period}`)"
    )]
    NotInBracket {
        /// The player given.
        player: String,
        /// The period.
        period: u64,
        /// The tier.
        tier: String,
        /// The bracket.
        bracket: u32,
    },
    /// A re-settlement whose exclusions (with those of earlier ones) would leave
    /// nobody in the bracket.
    #[error(
        "excluding these players would leave nobody in the bracket ({players} players, exclusions accumulate); exclude fewer"
    )]
    ExcludesEveryone {
        /// Players on the closed board.
        players: u64,
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
