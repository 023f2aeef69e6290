//! How fast the designer's simulator runs a large population, and what the engine
//! costs over a bare in-memory league doing the same amount of work in the same run.
//!
//! ```text
//! cargo run --release --example bench_sim [PLAYERS] [PERIODS]
//! ```
//!
//! The baseline is a minimal league in plain hash maps: the same number of players,
//! periods and score updates, brackets by join order, and a sort per bracket at the
//! close, but none of the engine's guarantees (exact packing, time tiebreaks, input
//! validation, idempotency, recorded outcomes, rewards) and no store abstraction.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use leaguekit::sim::{SimOptions, simulate};
use leaguekit::{ManualClock, MemoryStore, Season};

/// The bare league: returns a checksum so the work cannot be optimised away.
fn baseline(
    players: u64,
    periods: u64,
    updates_per_period: &[u64],
    tiers: usize,
    size: u64,
) -> u64 {
    let mut tier_of: Vec<usize> = vec![0; players as usize];
    let mut seed = 42u64;
    let mut next = move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        seed >> 33
    };
    let mut checksum = 0u64;
    for p in 0..periods as usize {
        let mut counters = vec![0u64; tiers];
        let mut placed: HashMap<u64, (usize, u64)> = HashMap::new();
        let mut scores: HashMap<u64, i64> = HashMap::new();
        for _ in 0..updates_per_period.get(p).copied().unwrap_or(0) {
            let player = next() % players;
            let tier = tier_of[player as usize];
            placed.entry(player).or_insert_with(|| {
                counters[tier] += 1;
                (tier, counters[tier].div_ceil(size))
            });
            *scores.entry(player).or_insert(0) += (next() % 200) as i64;
        }
        let mut brackets: HashMap<(usize, u64), Vec<(i64, u64)>> = HashMap::new();
        for (player, (tier, bracket)) in &placed {
            brackets
                .entry((*tier, *bracket))
                .or_default()
                .push((scores[player], *player));
        }
        for ((tier, _), mut board) in brackets {
            board.sort_unstable_by(|a, b| b.cmp(a));
            let promote = (board.len() / 5).min(20);
            for (_, player) in board.iter().take(promote) {
                if tier + 1 < tiers {
                    tier_of[*player as usize] = tier + 1;
                }
            }
            checksum = checksum.wrapping_add(board.len() as u64);
        }
    }
    checksum
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let players: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    let periods: u64 = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let season = Season::load("config/season.toml")?;
    let mut options = SimOptions::from_season(&season);
    options.players = players;
    options.periods = periods;
    let tiers = season.tiers.len();
    let size = u64::from(season.brackets.size);
    let clock = ManualClock::new(season.schedule.start);
    let store = MemoryStore::with_clock(Arc::new(clock.clone()));
    let t = Instant::now();
    let report = simulate(season, store, clock, &options, |_, _| {}).await?;
    let engine = t.elapsed();
    let joins: u64 = report.periods.iter().map(|p| p.playing).sum();
    // About two matches per playing player (1..=3, uniform).
    let updates: Vec<u64> = report.periods.iter().map(|p| p.playing * 2).collect();
    let events: u64 = updates.iter().sum();
    let t = Instant::now();
    let checksum = baseline(players, periods, &updates, tiers, size);
    let bare = t.elapsed();
    println!("simulate: {players} players x {periods} periods on the embedded store");
    println!("  placements {joins}, score updates ~{events}, rollovers {periods}");
    println!(
        "  leaguekit: {:.2} s ({:.0} updates/s)",
        engine.as_secs_f64(),
        events as f64 / engine.as_secs_f64()
    );
    println!(
        "  bare hash-map league, same work: {:.2} s (checksum {checksum})",
        bare.as_secs_f64()
    );
    println!(
        "  ratio: x{:.1}",
        engine.as_secs_f64() / bare.as_secs_f64().max(1e-9)
    );
    Ok(())
}
