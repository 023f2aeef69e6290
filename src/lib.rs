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

pub mod calendar;
pub mod chart;
pub mod clock;
pub mod config;
pub mod connection;
pub mod engine;
pub mod error;
pub mod keys;
pub mod memory;
pub mod outcome;
pub mod redis_store;
pub mod rollover;
pub mod scheduler;
pub mod score;
pub mod sim;
pub mod store;

pub use calendar::{Calendar, Period, PeriodId};
pub use clock::{Clock, ManualClock, SystemClock};
pub use config::Season;
pub use connection::{ConnectError, RedisConnection, RedisUrl, UrlError};
pub use engine::League;
pub use error::{ConfigError, Error, InputError, StoreError};
pub use memory::MemoryStore;
pub use redis_store::{RedisOptions, RedisStore};
pub use rollover::{RolloverOptions, RolloverReport};
pub use scheduler::{Scheduler, SchedulerOptions};
pub use store::Store;

/// The README's examples, compiled and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
