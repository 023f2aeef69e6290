//! The audit log's storage: operator actions, appended once each, read in order.

use std::future::Future;

use crate::error::StoreError;
use crate::store::keys::SeasonKeys;

/// The season's audit log: an ordered record of operator actions (bans, score
/// adjustments, re-settlements, moves of the staging clock).
///
/// An entry is an opaque text (the engine writes JSON) that is unique by itself (it
/// carries its own id), kept with its time: appending the same entry twice (a retry
/// after a lost answer) keeps one. Redis: one sorted set in the season's slot, scored
/// by time.
pub trait AuditStore: Send + Sync + 'static {
    /// Appends `entry` at `at_ms` (unix ms, league clock) unless it is already in the
    /// log, and in the same step drops entries older than `keep_from_ms`. Idempotent.
    fn append_audit(
        &self,
        season: &SeasonKeys,
        at_ms: i64,
        entry: &str,
        keep_from_ms: i64,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Entries at or after `since_ms`, oldest first (equal times by entry text), at most
    /// `limit`: `(at_ms, entry)`.
    fn audit_entries(
        &self,
        season: &SeasonKeys,
        since_ms: i64,
        limit: u64,
    ) -> impl Future<Output = Result<Vec<(i64, String)>, StoreError>> + Send;
}
