//! Bans' storage: the player's ban record (authoritative), the season's index of bans
//! (for listing), and the markers that keep a banned player off the period's
//! placements and the bracket's board.

use std::future::Future;

use crate::error::StoreError;
use crate::store::keys::{BracketKeys, PeriodKeys, PlayerKeys, SeasonKeys};

/// What [`BanStore::ban_period`] found in the period.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PeriodBan {
    /// The player is placed in the period: `(tier, bracket)`. Nothing was written.
    Placed(String, u32),
    /// The player is not placed: the period's marker is written, and joins of the
    /// player are refused while it is there and not past its end.
    Marked,
    /// The period is closing or closed: no join can place the player any more, so
    /// nothing was written.
    Closing,
}

/// What [`BanStore::ban_bracket`] did on the bracket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BracketBan {
    /// The marker is written and the player was on the board: removed.
    Removed,
    /// The marker is written; the player was not on the board.
    Marked,
    /// The bracket is closed (its standings never change again): nothing written.
    Closed,
}

/// Bans: records and markers. Every method is one atomic, idempotent step on one hash
/// slot.
///
/// A ban's marker is an opaque text (`since_ms|until_ms`, `until_ms` empty for a ban
/// without end) written in the period's meta (field `ban:<player>`) and the bracket's
/// meta (the same field). The join step refuses a player whose period marker is there
/// and not past its end; the board entry step refuses a player whose bracket marker
/// is there, whatever its end (the engine then asks the ban record, which decides).
pub trait BanStore: Send + Sync + 'static {
    /// Writes the player's ban record (an opaque text, JSON) in the player's slot,
    /// replacing any. Idempotent.
    fn set_ban(
        &self,
        player_keys: &PlayerKeys,
        record: &str,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// The player's ban record, if one is stored (ended or not: the engine decides).
    fn ban(
        &self,
        player_keys: &PlayerKeys,
    ) -> impl Future<Output = Result<Option<String>, StoreError>> + Send;

    /// Deletes the player's ban record. Idempotent.
    fn clear_ban(
        &self,
        player_keys: &PlayerKeys,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Sets (`Some(record)`) or deletes (`None`) the player's entry in the season's
    /// index of bans. Idempotent.
    fn index_ban(
        &self,
        season: &SeasonKeys,
        player: &str,
        record: Option<&str>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// The season's index of bans: `(player, record)`, sorted by player.
    fn ban_index(
        &self,
        season: &SeasonKeys,
    ) -> impl Future<Output = Result<Vec<(String, String)>, StoreError>> + Send;

    /// In one step on the period's slot: the player's placement if they are placed,
    /// else (unless the period is closing) the period's ban marker written, the
    /// period's keys living at least `ttl_secs`.
    fn ban_period(
        &self,
        period: &PeriodKeys,
        player: &str,
        marker: &str,
        ttl_secs: u64,
    ) -> impl Future<Output = Result<PeriodBan, StoreError>> + Send;

    /// In one step on the bracket's slot, unless the bracket is closed: the bracket's
    /// ban marker written and the player removed from the board (the others' ranks
    /// close up; the page cache is cleared). The bracket's join count is untouched.
    fn ban_bracket(
        &self,
        bracket: &BracketKeys,
        player: &str,
        marker: &str,
        ttl_secs: u64,
    ) -> impl Future<Output = Result<BracketBan, StoreError>> + Send;

    /// Deletes the player's ban marker of the period (`bracket` `None`) or of the
    /// bracket: only if it equals `marker` when one is given (so a marker of a newer
    /// ban stays), always otherwise. Idempotent.
    fn unmark_ban(
        &self,
        period: &PeriodKeys,
        bracket: Option<&BracketKeys>,
        player: &str,
        marker: Option<&str>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
}

/// The field of a period's or a bracket's meta that holds the player's ban marker.
pub fn ban_field(player: &str) -> String {
    format!("ban:{player}")
}
