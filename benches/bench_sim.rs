//! How fast the designer's simulator runs a large population, and what it costs over
//! a bare in-memory league doing the same amount of work in the same run.
//!
//! ```text
//! cargo bench --bench bench_sim              # 1,000,000 x 52, then 100,000 x 10
//! cargo bench --bench bench_sim -- PLAYERS PERIODS
//! ```
//!
//! For each size it runs `leaguekit simulate`'s path (the fast path on the embedded
//! store, every core) and the bare league, and prints their times, the ratio and the
//! simulator's peak memory. The full engine path (every event through `League` on a
//! `MemoryStore`, the reference the fast path is tested against) is timed at 100,000
//! x 10 for comparison.
//!
//! The baseline is a minimal league in plain hash maps: the same number of players,
//! periods and score updates, brackets by join order, and a sort per bracket at the
//! close, but none of the engine's guarantees (exact packing, time tiebreaks, input
//! validation, idempotency, recorded outcomes, rewards, expiries), no population to
//! draw and one thread.
//!
//! Peak memory is the process's resident high-water mark (`VmHWM`), reset before each
//! measured run through `/proc/self/clear_refs` (Linux).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use leaguekit::sim::{SimOptions, SimReport, simulate, simulate_fast};
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

/// Resets the resident high-water mark; false where the kernel does not allow it.
fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// The resident high-water mark in MiB, if the kernel reports it.
fn peak_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn updates(report: &SimReport) -> Vec<u64> {
    // About two matches per playing player (1..=3, uniform).
    report.periods.iter().map(|p| p.playing * 2).collect()
}

fn measure(season: &Season, players: u64, periods: u64) -> Result<(), Box<dyn std::error::Error>> {
    let mut options = SimOptions::from_season(season);
    options.players = players;
    options.periods = periods;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let exact = reset_peak();
    let t = Instant::now();
    let report = simulate_fast(season, &options, 0, |_, _| {})?;
    let fast = t.elapsed().as_secs_f64();
    let peak = peak_mib();
    let joins: u64 = report
        .periods
        .iter()
        .map(|p| p.players.values().sum::<u64>())
        .sum();
    let per_period = updates(&report);
    let events: u64 = per_period.iter().sum();
    drop(report);
    reset_peak();
    let t = Instant::now();
    let checksum = baseline(
        players,
        periods,
        &per_period,
        season.tiers.len(),
        u64::from(season.brackets.size),
    );
    let bare = t.elapsed().as_secs_f64();
    let bare_peak = peak_mib();
    println!("{players} players x {periods} periods (placements {joins}, score updates ~{events})");
    println!(
        "  leaguekit simulate (fast path, {threads} threads): {fast:.2} s, peak memory {}",
        peak.map_or("unknown".to_owned(), |m| format!(
            "{m:.0} MiB{}",
            if exact { "" } else { " (process peak)" }
        ))
    );
    println!(
        "  bare hash-map league, same work: {bare:.2} s, peak memory {} (checksum {checksum})",
        bare_peak.map_or("unknown".to_owned(), |m| format!("{m:.0} MiB"))
    );
    println!("  ratio to the bare league: x{:.2}", fast / bare.max(1e-9));
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let season = Season::load("config/season.toml")?;
    let args: Vec<u64> = std::env::args()
        .filter(|a| a != "--bench")
        .skip(1)
        .filter_map(|s| s.parse().ok())
        .collect();
    if let [players, periods] = args[..] {
        return measure(&season, players, periods);
    }
    // The million first, so its peak memory is not the leftovers of another run.
    measure(&season, 1_000_000, 52)?;
    measure(&season, 100_000, 10)?;
    // The full engine path, for comparison.
    let mut options = SimOptions::from_season(&season);
    options.players = 100_000;
    options.periods = 10;
    let clock = ManualClock::new(season.schedule.start);
    let store = MemoryStore::with_clock(Arc::new(clock.clone()));
    let t = Instant::now();
    simulate(season.clone(), store, clock, &options, |_, _| {}).await?;
    println!(
        "  full engine path (League on MemoryStore, 1 thread): {:.2} s",
        t.elapsed().as_secs_f64()
    );
    Ok(())
}
