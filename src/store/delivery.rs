//! Webhook delivery's storage: per log a lease and the cursors of its targets, and the
//! season's dead letters.
//!
//! A deliverer works on one event log at a time: it holds the log's **lease** (a key
//! in the log's own slot, an owner id with a time to live, renewed while it delivers),
//! and advances, per target (one webhook URL), a **cursor**: the position of the last
//! event that target is done with (delivered, skipped by its filter, or given up on
//! and recorded as a dead letter). A cursor only moves forward, and only for the
//! lease's owner, in one atomic step (on Redis a script), so a deliverer that lost its
//! lease (paused past its time to live) cannot move another's progress back.
//!
//! **Dead letters** are the season's, in the season's slot: a hash (field = the
//! letter's key, event id and target; value = the letter as JSON), an index by time
//! (for pages and expiry), one per URL (for its cap) and the set of letters marked
//! for replay (so a deliverer reads only those). An operator marks letters for
//! replay; a deliverer sends the marked ones again and removes each once delivered.

use std::future::Future;

use crate::error::StoreError;
use crate::store::Pos;
use crate::store::keys::SeasonKeys;

/// A log's delivery state at a glance: its last position and its targets' cursors.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LogHead {
    /// The position of its last event ([`Pos::START`] for an empty or absent log).
    pub last: Pos,
    /// Per target asked for, in order: its cursor ([`Pos::START`] if none yet).
    pub cursors: Vec<Pos>,
}

/// An event that could not be delivered to one target, kept for an operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadLetter {
    /// The event's id (`Leaguekit-Event-Id`).
    pub id: String,
    /// The target's URL.
    pub url: String,
    /// The event JSON, exactly as it was sent.
    pub event: String,
    /// Attempts made, replays included.
    pub attempts: u32,
    /// The last attempt's failure.
    pub error: String,
    /// When the letter was recorded or last failed, unix ms.
    pub at_ms: i64,
    /// Marked for replay by an operator, not yet delivered.
    pub replay: bool,
}

impl DeadLetter {
    /// The letter's field in the season's dead-letter hash: the event id and a hash of
    /// the URL, so one event dead for two targets makes two letters.
    pub fn key(&self) -> String {
        format!("{} {}", self.id, url_tag(&self.url))
    }

    /// Whether the letter records events trimmed from their log before delivery (see
    /// `leaguekit_webhook_trimmed_total`): there is nothing to replay.
    pub fn is_trimmed(&self) -> bool {
        self.attempts == 0 && self.error.starts_with("trimmed:")
    }

    /// The letter as stored (JSON).
    pub fn to_json(&self) -> String {
        serde_json::json!({
            "id": self.id,
            "url": self.url,
            "event": self.event,
            "attempts": self.attempts,
            "error": self.error,
            "at_ms": self.at_ms,
            "replay": self.replay,
        })
        .to_string()
    }

    /// A letter as stored; `None` for a record that is not one.
    pub fn from_json(text: &str) -> Option<DeadLetter> {
        let v: serde_json::Value = serde_json::from_str(text).ok()?;
        Some(DeadLetter {
            id: v.get("id")?.as_str()?.to_owned(),
            url: v.get("url")?.as_str()?.to_owned(),
            event: v.get("event")?.as_str()?.to_owned(),
            attempts: u32::try_from(v.get("attempts")?.as_u64()?).ok()?,
            error: v.get("error")?.as_str()?.to_owned(),
            at_ms: v.get("at_ms")?.as_i64()?,
            replay: v.get("replay")?.as_bool()?,
        })
    }
}

/// How many dead letters are kept: at most `max_per_url` per URL (the oldest go),
/// none recorded before `before_ms` (unix ms).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeadBounds {
    /// The most letters kept per URL.
    pub max_per_url: u64,
    /// Letters recorded before this (unix ms) go.
    pub before_ms: i64,
}

impl DeadBounds {
    /// No bound (tests).
    pub const NONE: DeadBounds = DeadBounds {
        max_per_url: u64::MAX,
        before_ms: i64::MIN,
    };
}

/// A short stable name of a target URL (16 hex digits of FNV-1a 64 of its bytes): the
/// cursor's field, so a URL's progress is its own and survives a restart, and a URL
/// added later starts from the logs' beginning.
pub fn url_tag(url: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in url.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// Leases, cursors and dead letters of webhook delivery (see the module's docs). Keys
/// are given as built by [`crate::store::keys`]: a lease and a cursor hash share their
/// log's slot.
pub trait DeliveryStore: Send + Sync + 'static {
    /// Takes the lease `lease` for `owner` for `ttl_ms`, or renews it if `owner` holds
    /// it: true if `owner` holds it now.
    fn take_lease(
        &self,
        lease: &str,
        owner: &str,
        ttl_ms: u64,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Gives the lease up if `owner` holds it.
    fn drop_lease(
        &self,
        lease: &str,
        owner: &str,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// For each `(log, cursors)` pair: the log's last position and the cursors of
    /// `targets` in the cursor hash. On Redis pipelined, grouped by slot.
    fn log_heads(
        &self,
        logs: &[(&str, &str)],
        targets: &[String],
    ) -> impl Future<Output = Vec<Result<LogHead, StoreError>>> + Send;

    /// Moves `target`'s cursor in hash `cursors` to `to` if `owner` holds `lease` and
    /// `to` is past the cursor, and keeps the hash `ttl_ms` more. False if `owner`
    /// does not hold the lease (nothing written); true otherwise (also when the
    /// cursor was already at or past `to`).
    fn advance_cursor(
        &self,
        lease: &str,
        owner: &str,
        cursors: &str,
        target: &str,
        to: Pos,
        ttl_ms: u64,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// The periods marked by [`crate::store::EventStore::mark_periods`], with their
    /// marks (unix ms), by period.
    fn period_marks(
        &self,
        season: &SeasonKeys,
    ) -> impl Future<Output = Result<Vec<(u64, i64)>, StoreError>> + Send;

    /// The periods `target` is done with, each with the mark it was done at, by period.
    fn periods_done(
        &self,
        season: &SeasonKeys,
        target: &str,
    ) -> impl Future<Output = Result<Vec<(u64, i64)>, StoreError>> + Send;

    /// Records that `target` is done with `period` as of its mark `mark`, if the
    /// period's mark is still `mark` (a write that marked it again since keeps it
    /// looked at); the target's record lives `ttl_ms` more. True if recorded.
    fn record_period_done(
        &self,
        season: &SeasonKeys,
        target: &str,
        period: u64,
        mark: i64,
        ttl_ms: u64,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Removes the marks below `before_ms`, and those periods from `targets`' records.
    fn prune_marks(
        &self,
        season: &SeasonKeys,
        before_ms: i64,
        targets: &[String],
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// When `target` was first and last seen by [`DeliveryStore::register_target`]
    /// (unix ms), if ever.
    fn target_seen(
        &self,
        season: &SeasonKeys,
        target: &str,
    ) -> impl Future<Output = Result<Option<(i64, i64)>, StoreError>> + Send;

    /// Records that `target` is delivered to at `now_ms` and answers when it was first
    /// seen: `now_ms` if never, or if it was last seen more than `stale_ms` before
    /// (its progress has expired since: it starts anew).
    fn register_target(
        &self,
        season: &SeasonKeys,
        target: &str,
        now_ms: i64,
        stale_ms: u64,
    ) -> impl Future<Output = Result<i64, StoreError>> + Send;

    /// Records (or replaces) a dead letter, marked for replay or not as it says, and
    /// keeps `bounds`: this letter's URL's letters recorded before
    /// `bounds.before_ms` go, then its oldest beyond `bounds.max_per_url`. Answers
    /// how many went for the cap (expired ones are not counted).
    fn put_dead(
        &self,
        season: &SeasonKeys,
        letter: &DeadLetter,
        bounds: DeadBounds,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// Up to `limit` dead letters in the order they were recorded ([`DeadLetter::at_ms`],
    /// then [`DeadLetter::key`]), after `after` (the last one of a page before).
    fn dead_letters(
        &self,
        season: &SeasonKeys,
        after: Option<(i64, &str)>,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<DeadLetter>, StoreError>> + Send;

    /// The dead letters of event `id` (one per URL it failed at), in the order they
    /// were recorded.
    fn dead_of(
        &self,
        season: &SeasonKeys,
        id: &str,
    ) -> impl Future<Output = Result<Vec<DeadLetter>, StoreError>> + Send;

    /// Up to `limit` of the letters marked for replay, in no order.
    fn marked_dead(
        &self,
        season: &SeasonKeys,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<DeadLetter>, StoreError>> + Send;

    /// Removes `letter` if its record is still `record` (so a letter marked for replay
    /// again meanwhile stays). Idempotent.
    fn remove_dead(
        &self,
        season: &SeasonKeys,
        letter: &DeadLetter,
        record: &str,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Removes the letters recorded before `before_ms`, of any URL (up to a thousand a
    /// call); `targets` are the URL tags whose per-URL index is cleaned too. Answers
    /// how many went.
    fn prune_dead(
        &self,
        season: &SeasonKeys,
        before_ms: i64,
        targets: &[String],
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_round_trip_and_keys_differ_by_url() {
        let a = DeadLetter {
            id: "p1/bronze/b1@1-0".into(),
            url: "http://a/".into(),
            event: "{\"id\":\"x\"}".into(),
            attempts: 3,
            error: "HTTP 500".into(),
            at_ms: 5,
            replay: false,
        };
        assert_eq!(DeadLetter::from_json(&a.to_json()), Some(a.clone()));
        let b = DeadLetter {
            url: "http://b/".into(),
            ..a.clone()
        };
        assert_ne!(a.key(), b.key());
        assert_eq!(url_tag("http://a/").len(), 16);
        assert!(DeadLetter::from_json("{}").is_none());
    }
}
