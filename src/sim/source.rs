//! Where a run's events come from: the [`Source`] trait both run paths read, one
//! player and one period at a time, so that the full engine path and the fast path see
//! exactly the same events in exactly the same order.
//!
//! Owns: the shape of a player's activity in a period and its canonical order.
//! Must not: know which path reads it, or decide anything the league decides.

use crate::season::Season;
use crate::season::calendar::PeriodId;
use crate::season::packing::ScoreMode;

/// One score update: milliseconds after its period's start, and the value submitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Event {
    pub(crate) at: i64,
    pub(crate) value: i64,
}

/// What a player does in a period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Activity {
    /// Nothing.
    Absent,
    /// Joins (explicit-join seasons only) at this offset, and never scores.
    Idle { at: i64 },
    /// Submits the events written to the buffer, which are in canonical order: by
    /// time, then in the order they were drawn (or read from the file).
    Scored,
}

/// A run's players and their activity. Player `i`'s id sorts before player `i + 1`'s
/// in byte order (the league's tie order on equal score and time), so both paths may
/// break ties by index.
pub(crate) trait Source: Sync {
    /// Number of players.
    fn players(&self) -> usize;
    /// Player `i`'s id.
    fn player_id(&self, i: usize) -> String;
    /// The first period of the run.
    fn first_period(&self) -> PeriodId;
    /// How many consecutive periods the run covers.
    fn periods(&self) -> u64;
    /// Called once before period `k` (0-based in the run) is read.
    fn prepare(&mut self, k: usize);
    /// Player `i`'s activity in period `k`; `quit` is the player's own state, which a
    /// synthetic population updates. Events go to `out` (cleared first).
    fn activity(&self, i: usize, k: usize, quit: &mut bool, out: &mut Vec<Event>) -> Activity;
}

/// Whether the league refuses `value` before placing anyone (the checks of
/// `League::submit` that need no score: a value no score could ever take).
pub(crate) fn hopeless(season: &Season, value: i64) -> bool {
    let max = season.packing.max_score();
    match season.scoring.mode {
        ScoreMode::Increment => value.unsigned_abs() > max,
        _ => value < 0 || value as u64 > max,
    }
}
