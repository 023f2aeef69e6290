//! The season file: parsing and validation of the designer's TOML.
//!
//! `config/season.toml` is a commented example of every key. Required: `name`,
//! `key_prefix`, `[schedule]` (`timezone`, `period`, `start`), `[scoring]` `max_score`,
//! and at least one `[[tiers]]` table (`name`, `promote`, `demote`, optional `rewards`).
//! Optional, with defaults: `[brackets]` (size 100, join `on_first_score`), the rest of
//! `[scoring]` (mode `increment`, time_resolution `1s`, idempotency_window `24h`),
//! `[profiles]` (no fields, 512 bytes), `[idle]` (policy `stay`), `[retention]`
//! (4 periods, player data 180 days), `[clock]` (max_skew 5 s) and `[simulation]`
//! ([`SimulationConfig::default`]).
//!
//! Parsing is in two steps: serde reads the file into raw structs that deny unknown keys
//! and keep the byte span of every value whose meaning is checked afterwards; the checks
//! then build the public types. Every error is [`ConfigError::Invalid`] with the 1-based
//! `line:col` of the offending key or value, what is wrong, and how to fix it. The last
//! check packs `max_score` with the longest period of the calendar ([`Packing::new`]) and
//! refuses a season whose scores could not be stored exactly, naming the largest
//! `max_score` that would fit.

pub mod calendar;
pub mod packing;

use std::fmt;
use std::ops::Range;
use std::path::Path;
use std::time::Duration;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde::Deserialize;
use toml::Spanned;

use crate::error::ConfigError;
use crate::season::calendar::{Calendar, CalendarError, parse_cron, parse_zone};
use crate::season::packing::{Packing, ScoreMode};
use crate::store::keys::Keys;

/// A validated season.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Season {
    /// The season's name (`[A-Za-z0-9_-]`, 1-64 bytes); part of every key.
    pub name: String,
    /// Every Redis key starts with this.
    pub key_prefix: String,
    /// When periods start and end.
    pub schedule: Schedule,
    /// Bracket rules.
    pub brackets: Brackets,
    /// Scoring rules.
    pub scoring: Scoring,
    /// Cached profile fields.
    pub profiles: Profiles,
    /// The ladder, lowest first.
    pub tiers: Vec<Tier>,
    /// What happens to players who do not play.
    pub idle: Idle,
    /// How long closed periods and players' data stay.
    pub retention: Retention,
    /// How the league treats the clocks of the processes that write to it.
    pub clock: ClockRules,
    /// The period calendar built from `schedule`.
    pub calendar: Calendar,
    /// The exact packing for `scoring` and the calendar's longest period.
    pub packing: Packing,
    /// Parameters for the population simulator (`[simulation]`, optional).
    pub simulation: SimulationConfig,
}

/// `[schedule]`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Schedule {
    /// IANA zone in which boundaries are computed.
    pub timezone: Tz,
    /// How periods repeat.
    pub period: PeriodRule,
    /// The first period starts here.
    pub start: DateTime<Utc>,
}

/// How periods repeat.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PeriodRule {
    /// Every day at the start's local time of day.
    Daily,
    /// Every week at the start's local weekday and time of day.
    Weekly,
    /// Boundaries at each occurrence of a cron expression (in the season's zone).
    Cron(String),
}

/// How players are placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum JoinPolicy {
    /// A player's first score in a period joins them.
    OnFirstScore,
    /// Only an explicit join places a player.
    Explicit,
}

/// `[brackets]`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Brackets {
    /// Players per bracket.
    pub size: u32,
    /// How players are placed.
    pub join: JoinPolicy,
}

/// The tiebreak granularity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Resolution {
    /// One second.
    Second,
    /// One millisecond.
    Millisecond,
}

impl Resolution {
    /// Milliseconds per tick.
    pub fn millis(self) -> u64 {
        match self {
            Resolution::Second => 1000,
            Resolution::Millisecond => 1,
        }
    }
}

/// `[scoring]`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Scoring {
    /// How values change scores.
    pub mode: ScoreMode,
    /// The highest score.
    pub max_score: u64,
    /// Tiebreak granularity.
    pub time_resolution: Resolution,
    /// How long a request id is remembered.
    pub idempotency_window: Duration,
}

/// `[profiles]`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Profiles {
    /// Field names that may be set and are returned with standings.
    pub fields: Vec<String>,
    /// Largest encoded profile (JSON bytes).
    pub max_bytes: usize,
}

/// How many players of a bracket move: a count or a percentage (rounded down).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Quota {
    /// A fixed number of players.
    Count(u32),
    /// A percentage (0..=100) of the bracket's actual players, rounded down.
    Percent(u32),
}

impl Quota {
    /// How many of `players` this quota takes.
    pub fn of(self, players: u64) -> u64 {
        match self {
            Quota::Count(n) => u64::from(n).min(players),
            Quota::Percent(p) => players * u64::from(p) / 100,
        }
    }
}

/// One reward rule: ranks `first..=last` get `grant`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Reward {
    /// First rank (1-based), inclusive.
    pub first: u32,
    /// Last rank, inclusive.
    pub last: u32,
    /// Opaque grant string the game interprets.
    pub grant: String,
}

/// `[[tiers]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Tier {
    /// The tier's name (`[A-Za-z0-9_-]`), unique.
    pub name: String,
    /// How many are promoted from each bracket.
    pub promote: Quota,
    /// How many are demoted from each bracket.
    pub demote: Quota,
    /// Rewards by rank.
    pub rewards: Vec<Reward>,
}

/// What happens to idle players and players who skip periods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum IdlePolicy {
    /// They keep their tier.
    Stay,
    /// They drop one tier (per idle or skipped period).
    DropOneTier,
}

/// `[idle]`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Idle {
    /// The policy.
    pub policy: IdlePolicy,
}

/// `[retention]`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Retention {
    /// Closed periods stay readable this many periods after they close.
    pub periods: u32,
    /// A player's own records (league state, profile, rewards, claims) are deleted this
    /// long after the end of the last period they were placed in; every placement
    /// starts the count again. A player who comes back later starts as a new player.
    pub player_ttl: Duration,
}

/// `[clock]`: the league's one clock and how far game servers' clocks may stray.
///
/// Whether a period has started or ended is decided by one clock that every process
/// shares: Redis's own clock (`TIME`) on Redis, the store's clock in the embedded store
/// (or the clock a league was built with, see `League::with_clock`). Event times come
/// from game servers, whose clocks disagree by seconds, so:
///
/// - an event time more than `max_skew` ahead of the league clock is refused;
/// - an event for a period that has not started by the league clock is refused as
///   "too early" (retry after the boundary), so a fast clock never closes anything;
/// - a period accepts events until `max_skew` after its end by the league clock (a
///   slow clock's last events still count) and is closed from then on, whether or not
///   the rollover has run yet.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClockRules {
    /// How far an event time may be ahead of the league clock, and how long after its
    /// end a period still accepts events (default 5 s, at most 10 min).
    pub max_skew: Duration,
}

/// `[simulation]`: parameters for the designer's population simulator.
///
/// Only stored and range-checked here; the simulator gives them meaning.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SimulationConfig {
    /// Players in the simulated population (1..=10 000 000).
    pub players: u64,
    /// Periods to simulate (1..=10 000).
    pub periods: u32,
    /// Seed of the random generator, so runs are reproducible.
    pub seed: u64,
    /// Spread of player skill (a standard deviation, >= 0).
    pub skill_spread: f64,
    /// Share of players who play in a given period (0..=1).
    pub active_share: f64,
    /// Share of players who quit for good after a period (0..=1).
    pub quit_rate: f64,
    /// Share of idle players who come back in a period (0..=1).
    pub return_rate: f64,
}

impl Default for SimulationConfig {
    fn default() -> Self {
        SimulationConfig {
            players: 1000,
            periods: 10,
            seed: 42,
            skill_spread: 1.0,
            active_share: 0.7,
            quit_rate: 0.05,
            return_rate: 0.2,
        }
    }
}

impl Default for Idle {
    fn default() -> Self {
        Idle {
            policy: IdlePolicy::Stay,
        }
    }
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            periods: 4,
            player_ttl: Duration::from_secs(180 * 86_400),
        }
    }
}

impl Default for ClockRules {
    fn default() -> Self {
        ClockRules {
            max_skew: Duration::from_secs(5),
        }
    }
}

impl Default for Profiles {
    fn default() -> Self {
        Profiles {
            fields: Vec::new(),
            max_bytes: 512,
        }
    }
}

impl Default for Brackets {
    fn default() -> Self {
        Brackets {
            size: 100,
            join: JoinPolicy::OnFirstScore,
        }
    }
}

impl PeriodRule {
    /// How the rule is written in the season file: `daily`, `weekly` or the cron text.
    pub fn as_str(&self) -> &str {
        match self {
            PeriodRule::Daily => "daily",
            PeriodRule::Weekly => "weekly",
            PeriodRule::Cron(expr) => expr,
        }
    }
}

impl JoinPolicy {
    /// The name used in the season file.
    pub fn as_str(self) -> &'static str {
        match self {
            JoinPolicy::OnFirstScore => "on_first_score",
            JoinPolicy::Explicit => "explicit",
        }
    }
}

impl IdlePolicy {
    /// The name used in the season file.
    pub fn as_str(self) -> &'static str {
        match self {
            IdlePolicy::Stay => "stay",
            IdlePolicy::DropOneTier => "drop_one_tier",
        }
    }
}

impl Resolution {
    /// The name used in the season file (`1s` or `1ms`).
    pub fn as_str(self) -> &'static str {
        match self {
            Resolution::Second => "1s",
            Resolution::Millisecond => "1ms",
        }
    }
}

impl Quota {
    /// Whether this quota moves nobody.
    pub fn is_zero(self) -> bool {
        matches!(self, Quota::Count(0) | Quota::Percent(0))
    }
}

impl fmt::Display for Quota {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Quota::Count(n) => write!(f, "{n}"),
            Quota::Percent(p) => write!(f, "\"{p}%\""),
        }
    }
}

impl Season {
    /// Loads and validates a season file.
    pub fn load(path: impl AsRef<Path>) -> Result<Season, ConfigError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Season::from_toml(&text, &path.display().to_string())
    }

    /// Parses and validates a season from TOML text; `file` names it in errors.
    ///
    /// The first problem found is returned as [`ConfigError::Invalid`] with the 1-based
    /// line and column of the offending value (or key), what is wrong and how to fix it.
    pub fn from_toml(text: &str, file: &str) -> Result<Season, ConfigError> {
        let src = Src { text, file };
        let raw: RawSeason = toml::from_str(text).map_err(|e| src.toml_error(&e))?;

        let name = src.ident(&raw.name, "name", 64, NAME_CHARS, "")?;
        let key_prefix = src.ident(&raw.key_prefix, "key_prefix", 64, NAME_CHARS, ".")?;

        let schedule = src.schedule(&raw.schedule)?;
        let calendar = Calendar::build(&schedule).map_err(|e| match e {
            CalendarError::Period(m) => {
                src.at(raw.schedule.period.span(), format!("schedule.period: {m}"))
            }
            CalendarError::Start(m) => {
                src.at(raw.schedule.start.span(), format!("schedule.start {m}"))
            }
        })?;

        let brackets = match &raw.brackets {
            Some(b) => src.brackets(b)?,
            None => Brackets::default(),
        };
        let scoring = src.scoring(raw.scoring.get_ref())?;
        let packing = src.packing(&raw.scoring, &scoring, &calendar)?;
        let profiles = match &raw.profiles {
            Some(p) => src.profiles(p)?,
            None => Profiles::default(),
        };
        let tiers = src.tiers(&raw.tiers, &brackets)?;
        let idle = match raw.idle.as_ref().and_then(|i| i.policy.as_ref()) {
            Some(p) => Idle {
                policy: match p.get_ref().as_str() {
                    "stay" => IdlePolicy::Stay,
                    "drop_one_tier" => IdlePolicy::DropOneTier,
                    other => {
                        return Err(src.at(
                            p.span(),
                            format!(
                                "idle.policy = {other:?} is not a policy; \
                                 use \"stay\" or \"drop_one_tier\""
                            ),
                        ));
                    }
                },
            },
            None => Idle::default(),
        };
        let mut retention = Retention::default();
        if let Some(r) = &raw.retention {
            if let Some(p) = &r.periods {
                retention.periods = src.int_in(p, "retention.periods", 1, 520)? as u32;
            }
            if let Some(t) = &r.player_ttl {
                retention.player_ttl = parse_duration(t.get_ref(), MIN_PLAYER_TTL, MAX_PLAYER_TTL)
                    .map_err(|m| src.at(t.span(), format!("retention.player_ttl: {m}")))?;
            }
        }
        let mut clock = ClockRules::default();
        if let Some(c) = &raw.clock
            && let Some(s) = &c.max_skew
        {
            clock.max_skew = parse_duration(s.get_ref(), Duration::ZERO, MAX_SKEW)
                .map_err(|m| src.at(s.span(), format!("clock.max_skew: {m}")))?;
        }
        let simulation = match &raw.simulation {
            Some(s) => src.simulation(s)?,
            None => SimulationConfig::default(),
        };

        Ok(Season {
            name,
            key_prefix,
            schedule,
            brackets,
            scoring,
            profiles,
            tiers,
            idle,
            retention,
            clock,
            calendar,
            packing,
            simulation,
        })
    }

    /// The key builder for this season.
    pub fn keys(&self) -> Keys {
        Keys::new(&self.key_prefix, &self.name)
    }

    /// The tier with this name and its index (0 = lowest).
    pub fn tier(&self, name: &str) -> Option<(usize, &Tier)> {
        self.tiers.iter().enumerate().find(|(_, t)| t.name == name)
    }
}

// ---------------------------------------------------------------------------------
// The file as written. Every table denies unknown keys; values whose meaning is checked
// here (not by serde) keep their span so errors can point at them.
// ---------------------------------------------------------------------------------

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSeason {
    name: Spanned<String>,
    key_prefix: Spanned<String>,
    schedule: RawSchedule,
    brackets: Option<RawBrackets>,
    scoring: Spanned<RawScoring>,
    profiles: Option<RawProfiles>,
    tiers: Spanned<Vec<Spanned<RawTier>>>,
    idle: Option<RawIdle>,
    retention: Option<RawRetention>,
    clock: Option<RawClock>,
    simulation: Option<RawSimulation>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSchedule {
    timezone: Spanned<String>,
    period: Spanned<String>,
    /// A TOML offset date-time or an RFC 3339 string.
    start: Spanned<toml::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBrackets {
    size: Option<Spanned<i64>>,
    join: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScoring {
    mode: Option<Spanned<String>>,
    max_score: Spanned<i64>,
    time_resolution: Option<Spanned<String>>,
    idempotency_window: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProfiles {
    fields: Option<Spanned<Vec<Spanned<String>>>>,
    max_bytes: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTier {
    name: Spanned<String>,
    /// An integer count or a `"N%"` string; checked by hand for a clear message.
    promote: Spanned<toml::Value>,
    demote: Spanned<toml::Value>,
    rewards: Option<Vec<Spanned<RawReward>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReward {
    ranks: Spanned<String>,
    grant: Spanned<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawIdle {
    policy: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRetention {
    periods: Option<Spanned<i64>>,
    player_ttl: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawClock {
    max_skew: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSimulation {
    players: Option<Spanned<i64>>,
    periods: Option<Spanned<i64>>,
    seed: Option<Spanned<i64>>,
    skill_spread: Option<Spanned<f64>>,
    active_share: Option<Spanned<f64>>,
    quit_rate: Option<Spanned<f64>>,
    return_rate: Option<Spanned<f64>>,
}

/// Characters allowed in season and tier names (key_prefix also allows `.`).
const NAME_CHARS: &str = "A-Z, a-z, 0-9, '_' and '-'";

/// Longest idempotency window: request ids are kept this long at most.
const MAX_WINDOW: Duration = Duration::from_secs(30 * 86_400);

/// Bounds of `clock.max_skew`: clocks that disagree by more than minutes are broken,
/// and a period that stays open that long after its end delays every rollover.
const MAX_SKEW: Duration = Duration::from_secs(600);

/// Bounds of `retention.player_ttl`.
const MIN_PLAYER_TTL: Duration = Duration::from_secs(86_400);
const MAX_PLAYER_TTL: Duration = Duration::from_secs(3650 * 86_400);

/// The text being parsed, for turning byte spans into `file:line:col` errors.
struct Src<'a> {
    text: &'a str,
    file: &'a str,
}

impl Src<'_> {
    /// An error at the start of `span`.
    fn at(&self, span: Range<usize>, message: impl Into<String>) -> ConfigError {
        let (line, col) = line_col(self.text, span.start);
        ConfigError::Invalid {
            file: self.file.to_owned(),
            line,
            col,
            message: message.into(),
        }
    }

    /// A `toml` syntax or shape error, reworded for designers with a hint how to fix it.
    fn toml_error(&self, e: &toml::de::Error) -> ConfigError {
        let span = e.span().unwrap_or(0..0);
        let raw = e.message().trim_end_matches('.').to_owned();
        let message = if let Some(rest) = raw.strip_prefix("unknown field") {
            format!("unknown key{rest}; remove it or correct its spelling")
        } else if let Some(rest) = raw.strip_prefix("missing field") {
            format!(
                "missing key{rest} in this table; add it (config/season.toml shows every key \
                 with an example)"
            )
        } else if raw.starts_with("invalid type") || raw.starts_with("invalid value") {
            let worded = raw
                .replace("expected i64", "expected an integer")
                .replace("expected f64", "expected a number")
                .replace("expected a sequence", "expected an array")
                .replace("expected struct", "expected a table")
                .replace("expected a map", "expected a table");
            format!("{worded}; change the value to that type")
        } else if raw.starts_with("duplicate key") {
            format!("{raw}; a key may appear only once in a table, remove the repeated one")
        } else {
            format!("{raw}; fix the TOML syntax here (see https://toml.io)")
        };
        self.at(span, message)
    }

    /// A name of 1..=`max` characters from `[A-Za-z0-9_-]` plus `extra`.
    fn ident(
        &self,
        v: &Spanned<String>,
        key: &str,
        max: usize,
        allowed: &str,
        extra: &str,
    ) -> Result<String, ConfigError> {
        let s = v.get_ref();
        let rule = if extra.is_empty() {
            format!("use 1-{max} characters from {allowed}")
        } else {
            format!("use 1-{max} characters from {allowed} and {extra:?}")
        };
        let ok = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-' || extra.contains(c);
        if s.is_empty() {
            return Err(self.at(v.span(), format!("{key} is empty; {rule}")));
        }
        if s.chars().count() > max {
            return Err(self.at(
                v.span(),
                format!(
                    "{key} {s:?} is {} characters long; {rule}",
                    s.chars().count()
                ),
            ));
        }
        if let Some(bad) = s.chars().find(|c| !ok(*c)) {
            return Err(self.at(
                v.span(),
                format!("{key} {s:?} contains {bad:?}, which is not allowed; {rule}"),
            ));
        }
        Ok(s.clone())
    }

    /// An integer in `lo..=hi`.
    fn int_in(&self, v: &Spanned<i64>, key: &str, lo: i64, hi: i64) -> Result<i64, ConfigError> {
        let n = *v.get_ref();
        if (lo..=hi).contains(&n) {
            Ok(n)
        } else {
            Err(self.at(
                v.span(),
                format!("{key} = {n} is out of range; use a whole number from {lo} to {hi}"),
            ))
        }
    }

    /// A finite number in `lo..=hi`.
    fn float_in(&self, v: &Spanned<f64>, key: &str, lo: f64, hi: f64) -> Result<f64, ConfigError> {
        let x = *v.get_ref();
        if x.is_finite() && (lo..=hi).contains(&x) {
            Ok(x)
        } else {
            let range = if hi.is_finite() {
                format!("from {lo} to {hi}")
            } else {
                format!("of at least {lo}")
            };
            Err(self.at(
                v.span(),
                format!("{key} = {x} is out of range; use a number {range}"),
            ))
        }
    }

    fn schedule(&self, raw: &RawSchedule) -> Result<Schedule, ConfigError> {
        let timezone = parse_zone(raw.timezone.get_ref().trim())
            .map_err(|m| self.at(raw.timezone.span(), format!("schedule.timezone: {m}")))?;
        let text = raw.period.get_ref().trim();
        let period = match text {
            "daily" => PeriodRule::Daily,
            "weekly" => PeriodRule::Weekly,
            expr => {
                parse_cron(expr).map_err(|m| {
                    self.at(
                        raw.period.span(),
                        format!(
                            "schedule.period {expr:?} is neither \"daily\", \"weekly\" nor a \
                             valid cron expression: {m}; write \"daily\", \"weekly\" or a cron \
                             expression such as \"0 0 * * MON\""
                        ),
                    )
                })?;
                PeriodRule::Cron(expr.to_owned())
            }
        };
        let start = self.start(&raw.start)?;
        Ok(Schedule {
            timezone,
            period,
            start,
        })
    }

    fn start(&self, v: &Spanned<toml::Value>) -> Result<DateTime<Utc>, ConfigError> {
        const HOW: &str = "write an RFC 3339 date-time with a UTC offset, such as \
                           2026-01-05T00:00:00Z or 2026-01-05T00:00:00+01:00";
        let text = match v.get_ref() {
            toml::Value::Datetime(dt) => {
                let missing = match (dt.date, dt.time, dt.offset) {
                    (None, _, _) => Some("a date"),
                    (_, None, _) => Some("a time of day"),
                    (_, _, None) => Some("a UTC offset"),
                    _ => None,
                };
                if let Some(missing) = missing {
                    return Err(self.at(
                        v.span(),
                        format!(
                            "schedule.start = {dt} has no {missing}, so it names no single \
                             instant; {HOW}"
                        ),
                    ));
                }
                dt.to_string()
            }
            toml::Value::String(s) => s.trim().to_owned(),
            other => {
                return Err(self.at(
                    v.span(),
                    format!(
                        "schedule.start must be a date-time, not a {}; {HOW}",
                        other.type_str()
                    ),
                ));
            }
        };
        DateTime::parse_from_rfc3339(&text)
            .map(|t| t.with_timezone(&Utc))
            .map_err(|e| {
                self.at(
                    v.span(),
                    format!("schedule.start {text:?} is not an RFC 3339 date-time ({e}); {HOW}"),
                )
            })
    }

    fn brackets(&self, raw: &RawBrackets) -> Result<Brackets, ConfigError> {
        let mut b = Brackets::default();
        if let Some(size) = &raw.size {
            b.size = self.int_in(size, "brackets.size", 1, 10_000)? as u32;
        }
        if let Some(join) = &raw.join {
            b.join = match join.get_ref().as_str() {
                "on_first_score" => JoinPolicy::OnFirstScore,
                "explicit" => JoinPolicy::Explicit,
                other => {
                    return Err(self.at(
                        join.span(),
                        format!(
                            "brackets.join = {other:?} is not a join policy; \
                             use \"on_first_score\" or \"explicit\""
                        ),
                    ));
                }
            };
        }
        Ok(b)
    }

    fn scoring(&self, raw: &RawScoring) -> Result<Scoring, ConfigError> {
        let mode = match &raw.mode {
            None => ScoreMode::Increment,
            Some(m) => match m.get_ref().as_str() {
                "increment" => ScoreMode::Increment,
                "best" => ScoreMode::Best,
                "set" => ScoreMode::Set,
                other => {
                    return Err(self.at(
                        m.span(),
                        format!(
                            "scoring.mode = {other:?} is not a mode; \
                             use \"increment\", \"best\" or \"set\""
                        ),
                    ));
                }
            },
        };
        let max_score = self.int_in(&raw.max_score, "scoring.max_score", 1, i64::MAX)? as u64;
        let time_resolution = match &raw.time_resolution {
            None => Resolution::Second,
            Some(r) => match r.get_ref().as_str() {
                "1s" => Resolution::Second,
                "1ms" => Resolution::Millisecond,
                other => {
                    return Err(self.at(
                        r.span(),
                        format!(
                            "scoring.time_resolution = {other:?} is not supported; \
                             use \"1s\" or \"1ms\""
                        ),
                    ));
                }
            },
        };
        let idempotency_window = match &raw.idempotency_window {
            None => Duration::from_secs(86_400),
            Some(w) => parse_window(w.get_ref())
                .map_err(|m| self.at(w.span(), format!("scoring.idempotency_window: {m}")))?,
        };
        Ok(Scoring {
            mode,
            max_score,
            time_resolution,
            idempotency_window,
        })
    }

    /// The exact packing for the season, or an error naming the largest max_score.
    fn packing(
        &self,
        raw: &Spanned<RawScoring>,
        scoring: &Scoring,
        calendar: &Calendar,
    ) -> Result<Packing, ConfigError> {
        let period_ms = calendar.max_period_millis();
        let res = scoring.time_resolution;
        let ticks = period_ms.div_ceil(res.millis());
        Packing::new(scoring.max_score, ticks).map_err(|e| {
            let schedule = calendar.schedule();
            let coarser = match res {
                Resolution::Millisecond => {
                    let at_1s = Packing::largest_max_score(period_ms.div_ceil(1000)).unwrap_or(0);
                    format!(", use time_resolution = \"1s\" (which allows up to {at_1s})")
                }
                Resolution::Second => String::new(),
            };
            self.at(
                raw.get_ref().max_score.span(),
                format!(
                    "scoring.max_score = {max} cannot be stored exactly: a {rule} period in {zone} \
                     lasts up to {len} ({ticks} ticks of {res}), and score × {span} + time must \
                     stay within 2^53 (the largest integer a Redis score holds exactly). \
                     The largest max_score allowed is {largest}; lower max_score to at most \
                     {largest}{coarser}, or use a shorter period",
                    max = scoring.max_score,
                    rule = schedule.period.as_str(),
                    zone = schedule.timezone.name(),
                    len = fmt_millis(period_ms),
                    res = res.as_str(),
                    span = ticks.saturating_add(1),
                    largest = e.largest,
                ),
            )
        })
    }

    fn profiles(&self, raw: &RawProfiles) -> Result<Profiles, ConfigError> {
        let mut p = Profiles::default();
        if let Some(fields) = &raw.fields {
            let mut seen: Vec<&Spanned<String>> = Vec::new();
            for f in fields.get_ref() {
                if seen.len() == 16 {
                    return Err(self.at(
                        f.span(),
                        "profiles.fields has more than 16 fields; keep at most 16 (they are \
                         copied into every bracket a player joins)",
                    ));
                }
                let name = f.get_ref();
                let valid = !name.is_empty()
                    && name.len() <= 32
                    && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                if !valid {
                    return Err(self.at(
                        f.span(),
                        format!(
                            "profile field {name:?} is not a valid name; \
                             use 1-32 characters from A-Z, a-z, 0-9 and '_'"
                        ),
                    ));
                }
                if let Some(first) = seen.iter().find(|s| s.get_ref() == name) {
                    let (line, _) = line_col(self.text, first.span().start);
                    return Err(self.at(
                        f.span(),
                        format!(
                            "profile field {name:?} is listed twice (first on line {line}); \
                             remove the repetition"
                        ),
                    ));
                }
                seen.push(f);
            }
            p.fields = seen.iter().map(|s| s.get_ref().clone()).collect();
        }
        if let Some(max) = &raw.max_bytes {
            p.max_bytes = self.int_in(max, "profiles.max_bytes", 1, 65_536)? as usize;
        }
        Ok(p)
    }

    fn tiers(
        &self,
        raw: &Spanned<Vec<Spanned<RawTier>>>,
        brackets: &Brackets,
    ) -> Result<Vec<Tier>, ConfigError> {
        let list = raw.get_ref();
        if list.is_empty() {
            return Err(self.at(
                raw.span(),
                "the season has no tiers; add at least one [[tiers]] table \
                 (lowest first, each with name, promote and demote)",
            ));
        }
        let size = brackets.size;
        let mut tiers: Vec<Tier> = Vec::with_capacity(list.len());
        let mut names: Vec<(&str, Range<usize>)> = Vec::new();
        for (i, t) in list.iter().enumerate() {
            let t = t.get_ref();
            let name = self.ident(&t.name, "tier name", 64, NAME_CHARS, "")?;
            if let Some((_, first)) = names.iter().find(|(n, _)| *n == name.as_str()) {
                let (line, _) = line_col(self.text, first.start);
                return Err(self.at(
                    t.name.span(),
                    format!(
                        "tier name {name:?} is used twice (first on line {line}); \
                         give every tier its own name"
                    ),
                ));
            }
            names.push((t.name.get_ref(), t.name.span()));

            let promote = self.quota(&t.promote, "promote", &name, size)?;
            let demote = self.quota(&t.demote, "demote", &name, size)?;
            if i + 1 == list.len() && !promote.is_zero() {
                return Err(self.at(
                    t.promote.span(),
                    format!(
                        "tier {name:?} is the top tier, so nobody can be promoted from it \
                         (promote = {promote}); set promote = 0, or add a tier after it \
                         (tiers are listed lowest first)"
                    ),
                ));
            }
            if i == 0 && !demote.is_zero() {
                return Err(self.at(
                    t.demote.span(),
                    format!(
                        "tier {name:?} is the bottom tier, so nobody can be demoted from it \
                         (demote = {demote}); set demote = 0, or add a tier before it \
                         (tiers are listed lowest first)"
                    ),
                ));
            }
            let (up, down) = (promote.of(u64::from(size)), demote.of(u64::from(size)));
            if up + down > u64::from(size) {
                return Err(self.at(
                    t.demote.span(),
                    format!(
                        "in tier {name:?}, promote ({up} of a full bracket) and demote ({down}) \
                         add up to more than brackets.size ({size}), so some players would be \
                         both promoted and demoted; lower promote or demote"
                    ),
                ));
            }

            let mut rewards: Vec<Reward> = Vec::new();
            let mut spans: Vec<Range<usize>> = Vec::new();
            for r in t.rewards.iter().flatten() {
                let r = r.get_ref();
                let (first, last) = self.ranks(&r.ranks, &name, size)?;
                if let Some((prev, span)) = rewards
                    .iter()
                    .zip(&spans)
                    .find(|(p, _)| first <= p.last && p.first <= last)
                {
                    let (line, _) = line_col(self.text, span.start);
                    return Err(self.at(
                        r.ranks.span(),
                        format!(
                            "in tier {name:?}, ranks {:?} overlap ranks \"{}\" (line {line}); \
                             a rank earns one reward, so make the ranges disjoint",
                            r.ranks.get_ref(),
                            fmt_ranks(prev.first, prev.last),
                        ),
                    ));
                }
                let grant = r.grant.get_ref();
                if grant.trim().is_empty() {
                    return Err(self.at(
                        r.grant.span(),
                        format!(
                            "in tier {name:?}, the reward for ranks {:?} has an empty grant; \
                             write what the game should give, e.g. \"gems:100\"",
                            r.ranks.get_ref()
                        ),
                    ));
                }
                rewards.push(Reward {
                    first,
                    last,
                    grant: grant.clone(),
                });
                spans.push(r.ranks.span());
            }
            tiers.push(Tier {
                name,
                promote,
                demote,
                rewards,
            });
        }
        Ok(tiers)
    }

    /// `promote` / `demote`: a non-negative count (at most the bracket size) or `"N%"`.
    fn quota(
        &self,
        v: &Spanned<toml::Value>,
        key: &str,
        tier: &str,
        size: u32,
    ) -> Result<Quota, ConfigError> {
        let how =
            format!("write a count such as {key} = 10 or a percentage such as {key} = \"20%\"");
        let err = |what: String| self.at(v.span(), format!("in tier {tier:?}, {what}; {how}"));
        match v.get_ref() {
            toml::Value::Integer(n) => {
                if *n < 0 {
                    return Err(err(format!("{key} = {n} is negative")));
                }
                if *n > i64::from(size) {
                    return Err(err(format!(
                        "{key} = {n} is more than brackets.size ({size})"
                    )));
                }
                Ok(Quota::Count(*n as u32))
            }
            toml::Value::String(s) => {
                let digits = s.trim().strip_suffix('%').map(str::trim);
                match digits.map(|d| (d, d.parse::<u32>())) {
                    Some((d, Ok(p))) if p <= 100 && d.chars().all(|c| c.is_ascii_digit()) => {
                        Ok(Quota::Percent(p))
                    }
                    Some((_, Ok(p))) if p > 100 => {
                        Err(err(format!("{key} = {s:?} is more than 100%")))
                    }
                    _ => Err(err(format!(
                        "{key} = {s:?} is not a whole percentage from \"0%\" to \"100%\""
                    ))),
                }
            }
            toml::Value::Float(x) => Err(err(format!(
                "{key} = {x} is a fraction; a percentage is written as a string"
            ))),
            other => Err(err(format!("{key} is a {}", other.type_str()))),
        }
    }

    /// `"N"` or `"N-M"` with `1 <= N <= M <= size`.
    fn ranks(&self, v: &Spanned<String>, tier: &str, size: u32) -> Result<(u32, u32), ConfigError> {
        let s = v.get_ref().trim();
        let num = |t: &str| -> Option<u32> {
            let t = t.trim();
            if t.is_empty() || !t.chars().all(|c| c.is_ascii_digit()) {
                return None;
            }
            t.parse().ok()
        };
        let parsed = match s.split_once('-') {
            Some((a, b)) => num(a).zip(num(b)),
            None => num(s).map(|n| (n, n)),
        };
        let how = "write ranks as \"N\" or \"N-M\" with 1 <= N <= M, e.g. \"1\" or \"2-10\"";
        match parsed {
            Some((first, last)) if first >= 1 && first <= last => {
                if last > size {
                    return Err(self.at(
                        v.span(),
                        format!(
                            "in tier {tier:?}, ranks {s:?} go past the bracket size ({size}), \
                             so rank {last} can never be reached; use ranks from 1 to {size}"
                        ),
                    ));
                }
                Ok((first, last))
            }
            _ => Err(self.at(
                v.span(),
                format!("in tier {tier:?}, ranks {s:?} is not a rank range; {how}"),
            )),
        }
    }

    fn simulation(&self, raw: &RawSimulation) -> Result<SimulationConfig, ConfigError> {
        let mut s = SimulationConfig::default();
        if let Some(v) = &raw.players {
            s.players = self.int_in(v, "simulation.players", 1, 10_000_000)? as u64;
        }
        if let Some(v) = &raw.periods {
            s.periods = self.int_in(v, "simulation.periods", 1, 10_000)? as u32;
        }
        if let Some(v) = &raw.seed {
            s.seed = self.int_in(v, "simulation.seed", 0, i64::MAX)? as u64;
        }
        if let Some(v) = &raw.skill_spread {
            s.skill_spread = self.float_in(v, "simulation.skill_spread", 0.0, f64::INFINITY)?;
        }
        if let Some(v) = &raw.active_share {
            s.active_share = self.float_in(v, "simulation.active_share", 0.0, 1.0)?;
        }
        if let Some(v) = &raw.quit_rate {
            s.quit_rate = self.float_in(v, "simulation.quit_rate", 0.0, 1.0)?;
        }
        if let Some(v) = &raw.return_rate {
            s.return_rate = self.float_in(v, "simulation.return_rate", 0.0, 1.0)?;
        }
        Ok(s)
    }
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = text.get(..offset).unwrap_or("");
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// A duration such as `30s`, `15m`, `24h` or `7d`, greater than zero and at most 30 days.
fn parse_window(text: &str) -> Result<Duration, String> {
    let how = "write a whole number followed by s, m, h or d (e.g. \"30s\", \"15m\", \"24h\", \
               \"7d\"), between 1s and 30d";
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let unit_secs = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(format!("{text:?} is not a duration; {how}")),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("{text:?} is not a duration; {how}"))?;
    let d = n
        .checked_mul(unit_secs)
        .map(Duration::from_secs)
        .unwrap_or(Duration::MAX);
    if d.is_zero() {
        return Err(format!(
            "{text:?} is zero, so no retry would be recognised; {how}"
        ));
    }
    if d > MAX_WINDOW {
        return Err(format!("{text:?} is longer than 30 days; {how}"));
    }
    Ok(d)
}

/// A duration such as `0s`, `500ms`, `5s`, `15m`, `24h` or `180d`, within `min..=max`.
fn parse_duration(text: &str, min: Duration, max: Duration) -> Result<Duration, String> {
    let how = format!(
        "write a whole number followed by ms, s, m, h or d (e.g. \"5s\", \"15m\", \"180d\"), \
         from {} to {}",
        fmt_duration(min),
        fmt_duration(max)
    );
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let unit_ms: u64 = match unit {
        "ms" => 1,
        "s" => 1000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => return Err(format!("{text:?} is not a duration; {how}")),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("{text:?} is not a duration; {how}"))?;
    let d = n
        .checked_mul(unit_ms)
        .map(Duration::from_millis)
        .unwrap_or(Duration::MAX);
    if d < min || d > max {
        return Err(format!("{text:?} is out of range; {how}"));
    }
    Ok(d)
}

/// `5s`, `10m`, `180d`: the largest whole unit.
fn fmt_duration(d: Duration) -> String {
    let ms = d.as_millis();
    for (unit, size) in [
        ("d", 86_400_000),
        ("h", 3_600_000),
        ("m", 60_000),
        ("s", 1000),
    ] {
        if ms >= size && ms.is_multiple_of(size) {
            return format!("{}{unit}", ms / size);
        }
    }
    format!("{ms}ms")
}

/// `"N"` or `"N-M"`.
fn fmt_ranks(first: u32, last: u32) -> String {
    if first == last {
        first.to_string()
    } else {
        format!("{first}-{last}")
    }
}

/// A length such as `169 h` or `24 h 30 min`.
fn fmt_millis(ms: u64) -> String {
    let (h, rest) = (ms / 3_600_000, ms % 3_600_000);
    let (m, rest) = (rest / 60_000, rest % 60_000);
    let (s, milli) = (rest / 1000, rest % 1000);
    let mut out = format!("{h} h");
    if m > 0 {
        out.push_str(&format!(" {m} min"));
    }
    if s > 0 || milli > 0 {
        if milli > 0 {
            out.push_str(&format!(" {s}.{milli:03} s"));
        } else {
            out.push_str(&format!(" {s} s"));
        }
    }
    out
}
