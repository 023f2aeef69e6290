//! The staging clock's storage: the offset a season with `[clock] travel = true` adds
//! to the store's clock, kept in the season's slot.

use std::future::Future;

use crate::error::StoreError;
use crate::store::keys::SeasonKeys;

/// The staging clock's offset: milliseconds added to the store's clock (or the clock a
/// league was built with) to make the league clock, for a season that declares
/// `[clock] travel = true`. It starts at 0 and only grows. Redis: the field
/// `clock_offset` of the season's meta hash.
pub trait ClockStore: Send + Sync + 'static {
    /// The offset, unix milliseconds; 0 when it was never moved.
    fn clock_offset(
        &self,
        season: &SeasonKeys,
    ) -> impl Future<Output = Result<i64, StoreError>> + Send;

    /// Moves the offset from `from` to `to` in one step, if it is `from` and `to` is
    /// larger; answers the offset after the step (`to` when it moved). Idempotent: once
    /// it is `to`, asking again changes nothing and answers `to`. It never decreases:
    /// when the offset is neither `from` nor `to` (another move came first), or `to` is
    /// not larger than `from`, nothing is written and the current offset is answered.
    fn move_clock(
        &self,
        season: &SeasonKeys,
        from: i64,
        to: i64,
    ) -> impl Future<Output = Result<i64, StoreError>> + Send;
}
