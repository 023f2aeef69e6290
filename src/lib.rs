//! leaguekit: a tiered, bracketed league engine for game servers.
//!
//! Players sit in a ladder of tiers. Each period a player who plays is placed in a
//! bracket (a fixed-size sub-board of their tier), competes there, and when the period
//! closes the top of each bracket is promoted, the bottom demoted and the best ranks
//! rewarded. A season is described in TOML ([`Season`]); the engine ([`League`]) runs on
//! any [`Store`]: [`RedisStore`] for production, [`MemoryStore`] for tests, simulations
//! and single-process use. Both pass one conformance suite.
//!
//! # Features
//!
//! - `redis`: [`RedisStore`] and connecting to Redis (one server, Redis Cluster, TLS).
//! - `server`: `leaguekit serve`'s HTTP API ([`server`]); implies `redis`.
//! - `sim`: the designer's simulator and tuner ([`sim`]), with their charts.
//! - `cli`: the `leaguekit` binary; implies the three others.
//!
//! All four are on by default. A game server that embeds the library takes its store
//! alone, without the tools' dependencies (clap, plotters, rayon, axum, ...):
//!
//! ```toml
//! leaguekit = { version = "0.3", default-features = false, features = ["redis"] }
//! ```
//!
//! The memory store and the [`Scheduler`] are always there.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub, rust_2018_idioms)]

pub mod clock;
pub mod context;
pub mod error;
pub mod events;
pub mod league;
pub mod metrics;
pub mod operator;
pub mod ranking;
pub mod rollover;
pub mod season;
#[cfg(feature = "server")]
#[cfg_attr(docsrs, doc(cfg(feature = "server")))]
pub mod server;
#[cfg(feature = "sim")]
#[cfg_attr(docsrs, doc(cfg(feature = "sim")))]
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
#[cfg(feature = "redis")]
pub use store::redis::connection::{ConnectError, RedisConnection, RedisUrl, UrlError};
#[cfg(feature = "redis")]
pub use store::redis::{RedisOptions, RedisStore};

mod gather;

/// The README's examples, compiled and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The embedding guide's examples (docs/embedding.md), compiled and run as doctests.
#[doc = include_str!("../docs/embedding.md")]
#[cfg(doctest)]
pub struct EmbeddingGuideDoctests;

/// The Redis guide's examples (docs/redis.md), compiled as doctests.
#[doc = include_str!("../docs/redis.md")]
#[cfg(doctest)]
pub struct RedisGuideDoctests;
