//! The season file: parsing and validation of the designer's TOML, its [`calendar`]
//! of periods, and the exact score [`packing`].
//!
//! Pure: this module does no I/O besides [`Season::load`] reading the file it is
//! given, keeps no state, and imports nothing from the league, ranking, rollover or
//! store modules (they depend on it, never the reverse).
//!
//! `config/season.toml` is a commented example of every key. Required: `name`,
//! `key_prefix`, `[schedule]` (`timezone`, `period`, `start`), `[scoring]` `max_score`,
//! and at least one `[[tiers]]` table (`name`, `promote`, `demote`, optional `rewards`).
//! Optional, with defaults: `[brackets]` (size 100, join `on_first_score`, zones
//! `players`, no `min_players`; a tier may set its own zones and min_players), the
//! rest of `[scoring]` (mode `increment`, time_resolution `1s`, idempotency_window
//! `24h`), `[profiles]` (no fields, 512 bytes), `[idle]` (policy `stay`),
//! `[retention]` (4 periods, player data 180 days), `[audit]` (keep 400 days), `[clock]` (max_skew 5 s),
//! `[simulation]` ([`SimulationConfig::default`]), `[tune]` ([`TuneConfig`], read by
//! `leaguekit simulate --tune`) and `[server]` (settings of `leaguekit serve`:
//! [`ServerConfig`]).
//!
//! Parsing is in two steps: serde reads the file into raw structs that deny unknown keys
//! and keep the byte span of every value whose meaning is checked afterwards; the checks
//! then build the public types. Every error is [`ConfigError::Invalid`] with the 1-based
//! `line:col` of the offending key or value, what is wrong, and how to fix it. The last
//! check packs `max_score` with the longest period of the calendar ([`Packing::new`]) and
//! refuses a season whose scores could not be stored exactly, naming the largest
//! `max_score` that would fit.

pub mod calendar;
mod cohorts;
mod duration;
pub mod events;
mod ladder;
pub mod limits;
pub mod packing;
mod parse;
pub mod seats;
mod server;
mod tune;

use std::fmt;
use std::path::Path;
use std::time::Duration;

use crate::error::ConfigError;
use crate::season::calendar::Calendar;
pub use crate::season::calendar::{PeriodRule, Schedule};
use crate::season::packing::{Packing, ScoreMode};
pub use cohorts::{Cohorts, MAX_COHORT_LEN};
pub use server::{MAX_TOKEN_LEN, MIN_TOKEN_LEN, ServerConfig, split_named, validate_token};
pub use tune::{Knob, TuneConfig, rewrite_late_seats, rewrite_quotas};

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
    /// The cohorts joins may carry (`[cohorts]`); `None`: no cohorts.
    pub cohorts: Option<Cohorts>,
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
    /// What the simulator's tuner aims for (`[tune]`, optional).
    pub tune: Option<TuneConfig>,
    /// Settings of `leaguekit serve` (`[server]`, optional).
    pub server: ServerConfig,
    /// Plausibility limits on score updates (`[limits]`, optional: none by default).
    pub limits: limits::Limits,
    /// `[events]`: the league's event log; `None` keeps none.
    pub events: Option<events::Events>,
    /// `[audit]`: how long the operators' audit log keeps an entry.
    pub audit: Audit,
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
    /// Seats held back for late joiners (`early_cap`, `late_after`; none by default).
    pub late: Option<seats::LateSeats>,
    /// The season's default zone rule (`zones`, default [`Zones::Players`]); each
    /// tier's own is [`Tier::zones`].
    pub zones: Zones,
    /// The season's default `min_players` (0: none); each tier's own is
    /// [`Tier::min_players`].
    pub min_players: u32,
}

/// Of what a tier's percentage quotas are taken (`zones`): the promotion and
/// demotion zones of a bracket that never filled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Zones {
    /// Of the bracket's actual players (`"players"`, the default).
    Players,
    /// Of the configured `[brackets] size` (`"size"`), whatever the headcount: "20%"
    /// of brackets of 100 is 20 in a bracket of 3 too (capped by its active players).
    Size,
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
    /// A percentage (0..=100), rounded down: of the bracket's actual players, or of
    /// the bracket size under `zones = "size"` ([`Zones`]).
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
    /// Of what the percentages are taken (`zones`: the tier's own, else `[brackets]`'s).
    pub zones: Zones,
    /// A bracket that closes with fewer active players demotes nobody (`min_players`:
    /// the tier's own, else `[brackets]`'s; 0: no minimum).
    pub min_players: u32,
    /// The tier's name before a rename (`renamed_from`): live data under that name
    /// (placements, outcomes' next tiers, a running period's brackets) belongs to
    /// this tier.
    pub renamed_from: Option<String>,
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

/// `[audit]`: the operators' audit log.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Audit {
    /// How long an entry is kept, by the real clock (the store's, never the staging
    /// clock's): 400 days by default, 1 to 3650 days.
    pub keep: Duration,
}

impl Default for Audit {
    fn default() -> Self {
        Audit {
            keep: Duration::from_secs(400 * 86_400),
        }
    }
}

/// Parses a duration as the season file writes them (`500ms`, `5s`, `15m`, `24h`,
/// `3d`), from 1 ms to 100 years: for tools that take one (`leaguekit clock advance`).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    parse::parse_duration(
        text,
        Duration::from_millis(1),
        Duration::from_secs(36_500 * 86_400),
    )
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
    /// `travel = true`: a staging clock. The league clock is the store's clock plus an
    /// offset kept in the store, which operators move forward (`leaguekit clock`), so
    /// QA plays a season in minutes. Never the default: without it no offset is read
    /// and moving the clock is refused.
    pub travel: bool,
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
    /// When players start their period's play (`arrival`, default `"matches"`).
    pub arrival: Arrival,
}

/// `[simulation] arrival`: when a simulated player starts playing in a period.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Arrival {
    /// Each match at a uniform time of the period; the player joins at the first.
    #[default]
    Matches,
    /// A start uniform over the period; the matches fall between it and the end.
    Uniform,
    /// Most players early: a start at `length * u * u` (`u` uniform), so half the
    /// players start in the first quarter; the matches fall between it and the end.
    Front,
}

impl Arrival {
    /// The name in a season file and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Arrival::Matches => "matches",
            Arrival::Uniform => "uniform",
            Arrival::Front => "front",
        }
    }

    /// The arrival model named `name`.
    pub fn parse(name: &str) -> Option<Arrival> {
        [Arrival::Matches, Arrival::Uniform, Arrival::Front]
            .into_iter()
            .find(|a| a.as_str() == name)
    }
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
            arrival: Arrival::Matches,
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
            travel: false,
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
            late: None,
            zones: Zones::Players,
            min_players: 0,
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

impl Zones {
    /// The name used in the season file.
    pub fn as_str(self) -> &'static str {
        match self {
            Zones::Players => "players",
            Zones::Size => "size",
        }
    }

    /// The headcount a percentage quota is taken of, for a bracket of `players` in
    /// brackets of `size`.
    pub fn base(self, size: u32, players: u64) -> u64 {
        match self {
            Zones::Players => players,
            Zones::Size => u64::from(size),
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

/// The name under which a tier's boards of one cohort live (`tier@cohort`), or the
/// tier's own name without a cohort: what a period's bracket counter, a placement
/// and a bracket's keys are named by.
pub fn board_group(tier: &str, cohort: Option<&str>) -> String {
    match cohort {
        Some(c) => format!("{tier}@{c}"),
        None => tier.to_owned(),
    }
}

/// The tier and cohort of a board group name (see [`board_group`]).
pub fn split_group(name: &str) -> (&str, Option<&str>) {
    match name.split_once('@') {
        Some((tier, cohort)) => (tier, Some(cohort)),
        None => (name, None),
    }
}

impl Season {
    /// The bracket caps of the season's join rule ([`seats`]).
    pub fn caps(&self) -> seats::Caps {
        seats::Caps::new(self.brackets.size, self.brackets.late.map(|l| l.early_cap))
    }

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
        parse::season(text, file)
    }

    /// The tier with this name and its index (0 = lowest).
    pub fn tier(&self, name: &str) -> Option<(usize, &Tier)> {
        self.tiers.iter().enumerate().find(|(_, t)| t.name == name)
    }

    /// The tier that live data named `name` belongs to: the tier of that name, or
    /// the one declared `renamed_from` it. A cohort's board group (`tier@cohort`,
    /// see [`board_group`]) belongs to its tier.
    pub fn tier_by_any_name(&self, name: &str) -> Option<(usize, &Tier)> {
        let (name, _) = split_group(name);
        self.tier(name).or_else(|| {
            self.tiers
                .iter()
                .enumerate()
                .find(|(_, t)| t.renamed_from.as_deref() == Some(name))
        })
    }

    /// The tier index after `skipped` whole periods without playing, from `tier`, by
    /// the `[idle]` policy.
    pub fn tier_after_skipping(&self, tier: usize, skipped: u64) -> usize {
        match self.idle.policy {
            IdlePolicy::DropOneTier => {
                tier.saturating_sub(usize::try_from(skipped).unwrap_or(usize::MAX))
            }
            _ => tier,
        }
    }
}
