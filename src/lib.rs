//! leaguekit: a tiered, bracketed league engine for game servers.
//!
//! Players sit in a ladder of tiers. Each period a player who plays is placed in a
//! bracket (a fixed-size sub-board of their tier), competes there, and when the period
//! closes the top of each bracket is promoted, the bottom demoted and the best ranks
//! rewarded. A season is described in TOML ([`Season`]); the engine ([`League`]) runs on
//! any [`Store`]: [`RedisStore`] for production, [`MemoryStore`] for tests, simulations
//! and single-process use. Both pass one conformance suite.
#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub, rust_2018_idioms)]

pub mod clock;
pub mod context;
pub mod error;
pub mod league;
pub mod metrics;
pub mod ranking;
pub mod rollover;
pub mod season;
#[cfg(feature = "server")]
pub mod server;
pub mod sim;
pub mod store;

pub use clock::{Clock, ManualClock, SystemClock};
pub use error::{ConfigError, Error, InputError, StoreError};
pub use league::{CohortCount, JoinItem, JoinOptions, League, Placement, PlayerView, TierCount};
pub use ranking::{
    BatchItem, Profile, Standing, Standings, Submission, SubmitOptions, TierTop, TopEntry,
};
pub use rollover::scheduler::{Scheduler, SchedulerOptions};
pub use rollover::{RolloverOptions, RolloverReport};
pub use season::Season;
pub use season::calendar::{Calendar, Period, PeriodId};
pub use store::Store;
pub use store::memory::MemoryStore;
pub use store::redis::connection::{ConnectError, RedisConnection, RedisUrl, UrlError};
pub use store::redis::{RedisOptions, RedisStore};

mod compat;
mod gather;
#[doc(hidden)]
pub use compat::{
    calendar, chart, config, connection, engine, keys, memory, outcome, redis_store, scheduler,
    score,
};

/// The README's examples, compiled and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
