//! What a synthetic simulation runs: [`SimOptions`], its defaults from the season's
//! `[simulation]` section, and their checks.
//!
//! Owns: the options and their ranges. Must not: draw anything (that is
//! `population.rs`) or run anything.

use serde::Serialize;

use crate::error::InputError;
use crate::season::{Arrival, Season};

/// What to simulate. Defaults come from the season's `[simulation]` section.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct SimOptions {
    /// Synthetic players.
    pub players: u64,
    /// Periods to run, from the season's first.
    pub periods: u64,
    /// Seed of the generator: same seed, same report.
    pub seed: u64,
    /// Standard deviation of player skill (a normal distribution around 0).
    pub skill_spread: f64,
    /// Chance that a player who has not quit plays in a period.
    pub active_share: f64,
    /// Chance that a player quits after a period.
    pub quit_rate: f64,
    /// Chance per period that a player who quit comes back.
    pub return_rate: f64,
    /// Most matches a player plays in a period (each one is one score update).
    pub matches: u32,
    /// When players start their period's play.
    pub arrival: Arrival,
}

/// Most synthetic players: their ids (`sim-0000000`) are 7 digits, so that id order
/// is index order.
pub const MAX_PLAYERS: u64 = 10_000_000;
/// Most periods a simulation runs.
pub const MAX_PERIODS: u64 = 520;

impl SimOptions {
    /// The options of a season's `[simulation]` section.
    pub fn from_season(season: &Season) -> SimOptions {
        let s = &season.simulation;
        SimOptions {
            players: s.players,
            periods: u64::from(s.periods),
            seed: s.seed,
            skill_spread: s.skill_spread,
            active_share: s.active_share,
            quit_rate: s.quit_rate,
            return_rate: s.return_rate,
            matches: 3,
            arrival: s.arrival,
        }
    }

    /// Checks every option's range; the error names the option and its range.
    pub fn check(&self) -> Result<(), InputError> {
        let share = |v: f64, name: &str| {
            if (0.0..=1.0).contains(&v) {
                Ok(())
            } else {
                Err(InputError::Other(format!(
                    "{name} must be within 0..=1, got {v}"
                )))
            }
        };
        share(self.active_share, "active_share")?;
        share(self.quit_rate, "quit_rate")?;
        share(self.return_rate, "return_rate")?;
        if !(self.skill_spread >= 0.0 && self.skill_spread.is_finite()) {
            return Err(InputError::Other(format!(
                "skill_spread must be a finite number >= 0, got {}",
                self.skill_spread
            )));
        }
        if self.players == 0 || self.players > MAX_PLAYERS {
            return Err(InputError::Other(format!(
                "players must be within 1..={MAX_PLAYERS}, got {}",
                self.players
            )));
        }
        if self.periods == 0 || self.periods > MAX_PERIODS {
            return Err(InputError::Other(format!(
                "periods must be within 1..={MAX_PERIODS}, got {}",
                self.periods
            )));
        }
        if self.matches == 0 || self.matches > 50 {
            return Err(InputError::Other(format!(
                "matches must be within 1..=50, got {}",
                self.matches
            )));
        }
        Ok(())
    }
}
