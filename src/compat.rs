//! The public paths of 0.1, kept for the game servers that import them. Before 0.2
//! the modules were flat (`engine`, `config`, `redis_store`, ...); they now follow the
//! design (`league`, `ranking`, `rollover`, `season`, `store`; see CHANGELOG.md).
//! Each old item here is a deprecated alias of the moved one (a deprecated module or
//! `pub use` would not warn), so old code compiles and is told the new path. This
//! module owns no behaviour: add nothing here but aliases.

/// Moved in 0.2: [`League`](crate::League) and its types are in [`league`](crate::league); score updates, standings and their options in [`ranking`](crate::ranking).
#[doc(hidden)]
pub mod engine {
    /// Moved: use `leaguekit::league::League<S>`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::league::League<S>")]
    pub type League<S> = crate::league::League<S>;
    /// Moved: use `leaguekit::league::Placement`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::league::Placement")]
    pub type Placement = crate::league::Placement;
    /// Moved: use `leaguekit::league::PlayerView`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::league::PlayerView")]
    pub type PlayerView = crate::league::PlayerView;
    /// Moved: use `leaguekit::league::TierCount`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::league::TierCount")]
    pub type TierCount = crate::league::TierCount;
    /// Moved: use `leaguekit::ranking::BatchItem`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::ranking::BatchItem")]
    pub type BatchItem = crate::ranking::BatchItem;
    /// Moved: use `leaguekit::ranking::Standing`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::ranking::Standing")]
    pub type Standing = crate::ranking::Standing;
    /// Moved: use `leaguekit::ranking::Standings`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::ranking::Standings")]
    pub type Standings = crate::ranking::Standings;
    /// Moved: use `leaguekit::ranking::Submission`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::ranking::Submission")]
    pub type Submission = crate::ranking::Submission;
    /// Moved: use `leaguekit::ranking::SubmitOptions`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::ranking::SubmitOptions")]
    pub type SubmitOptions = crate::ranking::SubmitOptions;
    /// Moved: use `leaguekit::ranking::MAX_PAGE`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::ranking::MAX_PAGE")]
    pub const MAX_PAGE: u64 = crate::ranking::MAX_PAGE;
    /// Moved: use `leaguekit::league::validate_player`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::league::validate_player")]
    pub fn validate_player(id: &str) -> Result<(), crate::InputError> {
        crate::league::validate_player(id)
    }
}

/// Moved in 0.2: the season file's types are in [`season`](crate::season).
#[doc(hidden)]
pub mod config {
    /// Moved: use `leaguekit::season::Brackets`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::season::Brackets")]
    pub type Brackets = crate::season::Brackets;
    /// Moved: use `leaguekit::season::ClockRules`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::season::ClockRules")]
    pub type ClockRules = crate::season::ClockRules;
    /// Moved: use `leaguekit::season::Idle`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::season::Idle")]
    pub type Idle = crate::season::Idle;
    /// Moved: use `leaguekit::season::IdlePolicy`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::season::IdlePolicy")]
    pub type IdlePolicy = crate::season::IdlePolicy;
    /// Moved: use `leaguekit::season::JoinPolicy`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::season::JoinPolicy")]
    pub type JoinPolicy = crate::season::JoinPolicy;
    /// Moved: use `leaguekit::season::Profiles`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::season::Profiles")]
    pub type Profiles = crate::season::Profiles;
    /// Moved: use `leaguekit::season::Quota`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::season::Quota")]
    pub type Quota = crate::season::Quota;
    /// Moved: use `leaguekit::season::Resolution`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::season::Resolution")]
    pub type Resolution = crate::season::Resolution;
    /// Moved: use `leaguekit::season::Retention`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::season::Retention")]
    pub type Retention = crate::season::Retention;
    /// Moved: use `leaguekit::season::Reward`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::season::Reward")]
    pub type Reward = crate::season::Reward;
    /// Moved: use `leaguekit::season::Scoring`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::season::Scoring")]
    pub type Scoring = crate::season::Scoring;
    /// Moved: use `leaguekit::season::Season`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::season::Season")]
    pub type Season = crate::season::Season;
    /// Moved: use `leaguekit::season::SimulationConfig`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::season::SimulationConfig")]
    pub type SimulationConfig = crate::season::SimulationConfig;
    /// Moved: use `leaguekit::season::Tier`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::season::Tier")]
    pub type Tier = crate::season::Tier;
    /// Moved: use `leaguekit::season::calendar::Schedule`.
    #[deprecated(
        since = "0.2.0",
        note = "moved to leaguekit::season::calendar::Schedule"
    )]
    pub type Schedule = crate::season::calendar::Schedule;
    /// Moved: use `leaguekit::season::calendar::PeriodRule`.
    #[deprecated(
        since = "0.2.0",
        note = "moved to leaguekit::season::calendar::PeriodRule"
    )]
    pub type PeriodRule = crate::season::calendar::PeriodRule;
}

/// Moved in 0.2: the calendar is [`season::calendar`](crate::season::calendar).
#[doc(hidden)]
pub mod calendar {
    /// Moved: use `leaguekit::season::calendar::Calendar`.
    #[deprecated(
        since = "0.2.0",
        note = "moved to leaguekit::season::calendar::Calendar"
    )]
    pub type Calendar = crate::season::calendar::Calendar;
    /// Moved: use `leaguekit::season::calendar::Period`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::season::calendar::Period")]
    pub type Period = crate::season::calendar::Period;
    /// Moved: use `leaguekit::season::calendar::PeriodId`.
    #[deprecated(
        since = "0.2.0",
        note = "moved to leaguekit::season::calendar::PeriodId"
    )]
    pub type PeriodId = crate::season::calendar::PeriodId;
    /// Moved: use `leaguekit::season::calendar::MAX_CRON_PERIODS`.
    #[deprecated(
        since = "0.2.0",
        note = "moved to leaguekit::season::calendar::MAX_CRON_PERIODS"
    )]
    pub const MAX_CRON_PERIODS: u64 = crate::season::calendar::MAX_CRON_PERIODS;
}

/// Moved in 0.2: the exact score packing is [`season::packing`](crate::season::packing).
#[doc(hidden)]
pub mod score {
    /// Moved: use `leaguekit::season::packing::Packing`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::season::packing::Packing")]
    pub type Packing = crate::season::packing::Packing;
    /// Moved: use `leaguekit::season::packing::PackingError`.
    #[deprecated(
        since = "0.2.0",
        note = "moved to leaguekit::season::packing::PackingError"
    )]
    pub type PackingError = crate::season::packing::PackingError;
    /// Moved: use `leaguekit::season::packing::ScoreMode`.
    #[deprecated(
        since = "0.2.0",
        note = "moved to leaguekit::season::packing::ScoreMode"
    )]
    pub type ScoreMode = crate::season::packing::ScoreMode;
    /// Moved: use `leaguekit::season::packing::ScoreRangeError`.
    #[deprecated(
        since = "0.2.0",
        note = "moved to leaguekit::season::packing::ScoreRangeError"
    )]
    pub type ScoreRangeError = crate::season::packing::ScoreRangeError;
    /// Moved: use `leaguekit::season::packing::EXACT_LIMIT`.
    #[deprecated(
        since = "0.2.0",
        note = "moved to leaguekit::season::packing::EXACT_LIMIT"
    )]
    pub const EXACT_LIMIT: u64 = crate::season::packing::EXACT_LIMIT;
}

/// Moved in 0.2: key names are [`store::keys`](crate::store::keys).
#[doc(hidden)]
pub mod keys {
    /// Moved: use `leaguekit::store::keys::BracketKeys`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::store::keys::BracketKeys")]
    pub type BracketKeys = crate::store::keys::BracketKeys;
    /// Moved: use `leaguekit::store::keys::Keys`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::store::keys::Keys")]
    pub type Keys = crate::store::keys::Keys;
    /// Moved: use `leaguekit::store::keys::PeriodKeys`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::store::keys::PeriodKeys")]
    pub type PeriodKeys = crate::store::keys::PeriodKeys;
    /// Moved: use `leaguekit::store::keys::PlayerKeys`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::store::keys::PlayerKeys")]
    pub type PlayerKeys = crate::store::keys::PlayerKeys;
    /// Moved: use `leaguekit::store::keys::SeasonKeys`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::store::keys::SeasonKeys")]
    pub type SeasonKeys = crate::store::keys::SeasonKeys;
    /// Moved: use `leaguekit::store::keys::escape`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::store::keys::escape")]
    pub fn escape(id: &str) -> String {
        crate::store::keys::escape(id)
    }
    /// Moved: use `leaguekit::store::keys::hash_tag`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::store::keys::hash_tag")]
    pub fn hash_tag(key: &str) -> &str {
        crate::store::keys::hash_tag(key)
    }
}

/// Moved in 0.2: the outcome rule is [`rollover::outcome`](crate::rollover::outcome).
#[doc(hidden)]
pub mod outcome {
    /// Moved: use `leaguekit::rollover::outcome::Movement`.
    #[deprecated(
        since = "0.2.0",
        note = "moved to leaguekit::rollover::outcome::Movement"
    )]
    pub type Movement = crate::rollover::outcome::Movement;
    /// Moved: use `leaguekit::rollover::outcome::Outcome`.
    #[deprecated(
        since = "0.2.0",
        note = "moved to leaguekit::rollover::outcome::Outcome"
    )]
    pub type Outcome = crate::rollover::outcome::Outcome;
    /// Moved: use `leaguekit::rollover::outcome::Tally`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::rollover::outcome::Tally")]
    pub type Tally = crate::rollover::outcome::Tally;
    /// Moved: use `leaguekit::rollover::outcome::bracket_outcomes`.
    #[deprecated(
        since = "0.2.0",
        note = "moved to leaguekit::rollover::outcome::bracket_outcomes"
    )]
    pub fn bracket_outcomes(
        season: &crate::Season,
        tier: usize,
        board: &[(String, u64)],
    ) -> Vec<crate::rollover::outcome::Outcome> {
        crate::rollover::outcome::bracket_outcomes(season, tier, board)
    }
    /// Moved: use `leaguekit::rollover::outcome::after_skipped`.
    #[deprecated(
        since = "0.2.0",
        note = "moved to leaguekit::rollover::outcome::after_skipped"
    )]
    pub fn after_skipped(season: &crate::Season, tier: usize, skipped: u64) -> usize {
        crate::rollover::outcome::after_skipped(season, tier, skipped)
    }
    /// Moved: use `leaguekit::rollover::outcome::encode`.
    #[deprecated(
        since = "0.2.0",
        note = "moved to leaguekit::rollover::outcome::encode"
    )]
    pub fn encode(o: &crate::rollover::outcome::Outcome) -> String {
        crate::rollover::outcome::encode(o)
    }
    /// Moved: use `leaguekit::rollover::outcome::decode`.
    #[deprecated(
        since = "0.2.0",
        note = "moved to leaguekit::rollover::outcome::decode"
    )]
    pub fn decode(player: &str, s: &str) -> Option<crate::rollover::outcome::Outcome> {
        crate::rollover::outcome::decode(player, s)
    }
}

/// Moved in 0.2: the scheduler is [`rollover::scheduler`](crate::rollover::scheduler).
#[doc(hidden)]
pub mod scheduler {
    /// Moved: use `leaguekit::rollover::scheduler::Scheduler`.
    #[deprecated(
        since = "0.2.0",
        note = "moved to leaguekit::rollover::scheduler::Scheduler"
    )]
    pub type Scheduler = crate::rollover::scheduler::Scheduler;
    /// Moved: use `leaguekit::rollover::scheduler::SchedulerError`.
    #[deprecated(
        since = "0.2.0",
        note = "moved to leaguekit::rollover::scheduler::SchedulerError"
    )]
    pub type SchedulerError = crate::rollover::scheduler::SchedulerError;
    /// Moved: use `leaguekit::rollover::scheduler::SchedulerOptions`.
    #[deprecated(
        since = "0.2.0",
        note = "moved to leaguekit::rollover::scheduler::SchedulerOptions"
    )]
    pub type SchedulerOptions = crate::rollover::scheduler::SchedulerOptions;
}

/// Moved in 0.2: the embedded store is [`store::memory`](crate::store::memory).
#[doc(hidden)]
pub mod memory {
    /// Moved: use `leaguekit::store::memory::Footprint`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::store::memory::Footprint")]
    pub type Footprint = crate::store::memory::Footprint;
    /// Moved: use `leaguekit::store::memory::MemoryStore`.
    #[deprecated(
        since = "0.2.0",
        note = "moved to leaguekit::store::memory::MemoryStore"
    )]
    pub type MemoryStore = crate::store::memory::MemoryStore;
}

/// Moved in 0.2: the Redis store is [`store::redis`](crate::store::redis).
#[doc(hidden)]
pub mod redis_store {
    /// Moved: use `leaguekit::store::redis::RedisOptions`.
    #[deprecated(
        since = "0.2.0",
        note = "moved to leaguekit::store::redis::RedisOptions"
    )]
    pub type RedisOptions = crate::store::redis::RedisOptions;
    /// Moved: use `leaguekit::store::redis::RedisStore`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::store::redis::RedisStore")]
    pub type RedisStore = crate::store::redis::RedisStore;
}

/// Moved in 0.2: connecting to Redis is [`store::redis::connection`](crate::store::redis::connection).
#[doc(hidden)]
pub mod connection {
    /// Moved: use `leaguekit::store::redis::connection::ConnectError`.
    #[deprecated(
        since = "0.2.0",
        note = "moved to leaguekit::store::redis::connection::ConnectError"
    )]
    pub type ConnectError = crate::store::redis::connection::ConnectError;
    /// Moved: use `leaguekit::store::redis::connection::NodeAddr`.
    #[deprecated(
        since = "0.2.0",
        note = "moved to leaguekit::store::redis::connection::NodeAddr"
    )]
    pub type NodeAddr = crate::store::redis::connection::NodeAddr;
    /// Moved: use `leaguekit::store::redis::connection::RedisConnection`.
    #[deprecated(
        since = "0.2.0",
        note = "moved to leaguekit::store::redis::connection::RedisConnection"
    )]
    pub type RedisConnection = crate::store::redis::connection::RedisConnection;
    /// Moved: use `leaguekit::store::redis::connection::RedisUrl`.
    #[deprecated(
        since = "0.2.0",
        note = "moved to leaguekit::store::redis::connection::RedisUrl"
    )]
    pub type RedisUrl = crate::store::redis::connection::RedisUrl;
    /// Moved: use `leaguekit::store::redis::connection::Scheme`.
    #[deprecated(
        since = "0.2.0",
        note = "moved to leaguekit::store::redis::connection::Scheme"
    )]
    pub type Scheme = crate::store::redis::connection::Scheme;
    /// Moved: use `leaguekit::store::redis::connection::UrlError`.
    #[deprecated(
        since = "0.2.0",
        note = "moved to leaguekit::store::redis::connection::UrlError"
    )]
    pub type UrlError = crate::store::redis::connection::UrlError;
    /// Moved: use `leaguekit::store::redis::connection::DEFAULT_PORT`.
    #[deprecated(
        since = "0.2.0",
        note = "moved to leaguekit::store::redis::connection::DEFAULT_PORT"
    )]
    pub const DEFAULT_PORT: u16 = crate::store::redis::connection::DEFAULT_PORT;
    /// Moved: use `leaguekit::store::redis::connection::install_crypto_provider`.
    #[deprecated(
        since = "0.2.0",
        note = "moved to leaguekit::store::redis::connection::install_crypto_provider"
    )]
    pub fn install_crypto_provider() {
        crate::store::redis::connection::install_crypto_provider()
    }
}

/// Moved in 0.2: the simulator's charts are [`sim::chart`](crate::sim::chart).
#[doc(hidden)]
pub mod chart {
    /// Moved: use `leaguekit::sim::chart::ChartError`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::sim::chart::ChartError")]
    pub type ChartError = crate::sim::chart::ChartError;
    /// Moved: use `leaguekit::sim::chart::write_charts`.
    #[deprecated(since = "0.2.0", note = "moved to leaguekit::sim::chart::write_charts")]
    pub fn write_charts(
        report: &crate::sim::SimReport,
        dir: &std::path::Path,
    ) -> Result<(), crate::sim::chart::ChartError> {
        crate::sim::chart::write_charts(report, dir)
    }
    /// Moved: use `leaguekit::sim::chart::write_comparison`.
    #[deprecated(
        since = "0.2.0",
        note = "moved to leaguekit::sim::chart::write_comparison"
    )]
    pub fn write_comparison(
        a: &crate::sim::SimReport,
        b: &crate::sim::SimReport,
        dir: &std::path::Path,
    ) -> Result<(), crate::sim::chart::ChartError> {
        crate::sim::chart::write_comparison(a, b, dir)
    }
}
