//! The designer's simulator: runs a season on a synthetic population, or replays
//! real history, and reports what the ladder does to the players; a tuner searches
//! promotion and demotion counts for the ladder a designer asks for.
//!
//! Two paths run the same season rules and give the same report byte for byte:
//!
//! - the **full engine path** ([`simulate`], [`replay`]): every join, update and
//!   rollover goes through [`crate::League`] on a store (the embedded store, or Redis
//!   for a load test); it is the reference;
//! - the **fast path** ([`simulate_fast`], [`replay_fast`]): the same rules (the
//!   season's packing and tie order, [`crate::rollover::outcome`]'s rule, the idle
//!   policy, rewards and the embedded store's expiries) on compact arrays, on every
//!   core. `leaguekit simulate` uses it on the embedded store. The differential tests
//!   in `tests/cli/sim.rs` run both on small populations and compare the reports.
//!
//! Deterministic: every draw comes from a seeded stream per player and period, reports
//! use ordered maps and integer sums, and no wall-clock time enters a report, so one
//! seed gives one byte-identical report on either path, on either store, with any
//! number of threads.
//!
//! Files: `options.rs` (what to simulate), `population.rs` (the synthetic players),
//! `replay.rs` (real history), `source.rs` (what both paths read), `engine.rs` (the
//! full engine path), `fast.rs` and `model.rs` (the fast path and the store expiries
//! it mirrors), `report.rs` and `tables.rs` (the report), [`tune`] (the tuner),
//! [`chart`] (the charts).
//!
//! Must not: change a league rule. The fast path takes every rule from the season,
//! packing and outcome modules, and the engine path from [`crate::League`].

pub mod chart;
mod engine;
mod fairness;
mod fast;
mod model;
mod options;
mod population;
mod replay;
mod report;
mod source;
mod tables;
pub mod tune;

pub use crate::season::Arrival;
pub use fairness::{Fairness, FairnessFigures, Rate, TierFairness};
pub use options::{MAX_PERIODS, MAX_PLAYERS, SimOptions};
pub use replay::{History, Replay, ReplayError, ReplayInfo};
pub use report::{PeriodFigures, SimReport, TierReach, TierStuck};
pub use tables::headline as fairness_headline;

use crate::clock::ManualClock;
use crate::error::{Error, InputError};
use crate::season::{Season, Zones};
use crate::store::Store;

use population::Synthetic;
use source::Source;

/// A pool of `threads` threads (0: one per core).
fn pool(threads: usize) -> Result<rayon::ThreadPool, Error> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| {
            InputError::Other(format!(
                "cannot start {threads} simulation threads: {e}; pass fewer with --threads"
            ))
            .into()
        })
}

fn check_tiers(season: &Season) -> Result<(), Error> {
    if season.tiers.len() >= usize::from(report::NONE) {
        return Err(InputError::Other("the simulator handles at most 254 tiers".into()).into());
    }
    Ok(())
}

/// The season under today's rule (brackets filled to `size` in arrival order without
/// reserved late seats; quotas of the bracket's headcount, `zones = "players"`,
/// without `min_players`), when its own rule differs from it: run it on the same
/// population and put its fairness beside the season's ([`SimReport::beside_today`]).
pub fn today_rule(season: &Season) -> Option<Season> {
    let mut today = season.clone();
    let mut differs = today.brackets.late.take().is_some();
    today.brackets.zones = Zones::Players;
    today.brackets.min_players = 0;
    for tier in &mut today.tiers {
        differs |= tier.zones != Zones::Players || tier.min_players != 0;
        tier.zones = Zones::Players;
        tier.min_players = 0;
    }
    differs.then_some(today)
}

fn tier_names(season: &Season) -> Vec<String> {
    season.tiers.iter().map(|t| t.name.clone()).collect()
}

/// Runs a season on `store` with a synthetic population, through the full engine
/// ([`crate::League`] with `clock` as its league clock; give a
/// [`crate::MemoryStore`] the same clock, and a [`crate::RedisStore`] too, with
/// [`crate::RedisStore::with_clock`], or Redis keeps expired records by its own clock).
/// `progress` is called after each period with `(periods done, periods total)`.
pub async fn simulate<S: Store>(
    season: Season,
    store: S,
    clock: ManualClock,
    options: &SimOptions,
    mut progress: impl FnMut(u64, u64),
) -> Result<SimReport, Error> {
    options.check()?;
    check_tiers(&season)?;
    let mut source = Synthetic::new(&season, options);
    let (name, tiers) = (season.name.clone(), tier_names(&season));
    let size = u64::from(season.brackets.size.max(1));
    let run = engine::run(season, store, clock, &mut source, &mut progress).await?;
    let periods = options.periods as usize;
    Ok(report::summarize(
        name,
        Some(options.clone()),
        None,
        tiers,
        run,
        periods,
        size,
    ))
}

/// The same as [`simulate`] on the embedded store, on the fast path with `threads`
/// threads (0: one per core). The report is byte-identical to [`simulate`]'s on a
/// [`crate::MemoryStore`] sharing the league clock, whatever `threads` is.
pub fn simulate_fast(
    season: &Season,
    options: &SimOptions,
    threads: usize,
    mut progress: impl FnMut(u64, u64),
) -> Result<SimReport, Error> {
    options.check()?;
    check_tiers(season)?;
    let pool = pool(threads)?;
    let size = u64::from(season.brackets.size.max(1));
    let mut source = pool.install(|| Synthetic::new(season, options));
    let run = fast::run(season, &mut source, &pool, &mut progress)?;
    let periods = options.periods as usize;
    Ok(pool.install(|| {
        report::summarize(
            season.name.clone(),
            Some(options.clone()),
            None,
            tier_names(season),
            run,
            periods,
            size,
        )
    }))
}

/// Replays real history (bound to `season` with [`History::bind`]) through the full
/// engine on `store`, with `clock` as the league clock.
pub async fn replay<S: Store>(
    season: Season,
    store: S,
    clock: ManualClock,
    mut history: Replay,
    mut progress: impl FnMut(u64, u64),
) -> Result<SimReport, Error> {
    check_tiers(&season)?;
    let (name, tiers) = (season.name.clone(), tier_names(&season));
    let size = u64::from(season.brackets.size.max(1));
    let periods = history.periods() as usize;
    let run = engine::run(season, store, clock, &mut history, &mut progress).await?;
    Ok(report::summarize(
        name,
        None,
        Some(history.info().clone()),
        tiers,
        run,
        periods,
        size,
    ))
}

/// [`replay`] on the fast path with `threads` threads (0: one per core).
pub fn replay_fast(
    season: &Season,
    mut history: Replay,
    threads: usize,
    mut progress: impl FnMut(u64, u64),
) -> Result<SimReport, Error> {
    check_tiers(season)?;
    let pool = pool(threads)?;
    let size = u64::from(season.brackets.size.max(1));
    let periods = history.periods() as usize;
    let run = fast::run(season, &mut history, &pool, &mut progress)?;
    Ok(pool.install(|| {
        report::summarize(
            season.name.clone(),
            None,
            Some(history.info().clone()),
            tier_names(season),
            run,
            periods,
            size,
        )
    }))
}
