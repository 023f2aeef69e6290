//! Corrections of closed brackets: the storage of a re-settlement
//! ([`crate::Operator::resettle`]).
//!
//! Every step is atomic on one hash slot and idempotent:
//! - on the bracket's slot: the correction record (the exclusions so far, one version
//!   each time they grow, with who, when and why), the outcomes as the bracket closed
//!   (copied once, before the first correction), the corrected outcomes (written once
//!   per version, never by an older version after a newer one) and the mark of each
//!   corrected player;
//! - on a player's slot: a corrected grant (once per source, never after it was
//!   revoked), the revocation of a pending reward (only while it is still pending), and
//!   a tier credit decision (written once: the first decision stays).

use std::future::Future;

use crate::error::StoreError;
use crate::store::Appends;
use crate::store::keys::{BracketKeys, PlayerKeys};

/// One growth of a bracket's exclusions.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CorrectionVersion {
    /// The players this version excluded (not excluded before), sorted.
    pub excluded: Vec<String>,
    /// When it was recorded (unix ms, league clock).
    pub at_ms: i64,
    /// Who asked for it.
    pub actor: String,
    /// Why.
    pub reason: String,
}

/// What a bracket's slot holds about its correction.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CorrectionRecord {
    /// Whether the bracket is closed (its outcomes recorded and its rewards granted).
    pub closed: bool,
    /// The outcomes as recorded now `(player, encoded outcome)`, in any order.
    pub outcomes: Vec<(String, String)>,
    /// The outcomes as the bracket closed, once it has been corrected.
    pub original: Option<Vec<(String, String)>>,
    /// The versions, oldest first (version `n` at index `n - 1`).
    pub versions: Vec<CorrectionVersion>,
    /// The last version whose outcomes are recorded (0: none).
    pub applied: u64,
    /// The last version whose every step is done (0: none).
    pub done: u64,
    /// The corrected players, each with the version that last changed their outcome.
    pub marks: Vec<(String, u64)>,
}

impl CorrectionRecord {
    /// The outcomes as the bracket closed.
    pub fn closed_outcomes(&self) -> &[(String, String)] {
        self.original.as_deref().unwrap_or(&self.outcomes)
    }
}

/// A request to grow a bracket's exclusions ([`CorrectionStore::begin_correction`]).
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct CorrectionStart<'a> {
    /// The players to exclude (those already excluded are ignored).
    pub exclude: &'a [String],
    /// Players on the closed board: the exclusions may not reach that many.
    pub players: u64,
    /// When (unix ms, league clock).
    pub at_ms: i64,
    /// Who.
    pub actor: &'a str,
    /// Why.
    pub reason: &'a str,
}

impl<'a> CorrectionStart<'a> {
    /// A request to exclude `exclude` from a bracket of `players` players, at `at_ms`
    /// (unix ms, league clock), by `actor`, for `reason`.
    pub fn new(
        exclude: &'a [String],
        players: u64,
        at_ms: i64,
        actor: &'a str,
        reason: &'a str,
    ) -> Self {
        CorrectionStart {
            exclude,
            players,
            at_ms,
            actor,
            reason,
        }
    }
}

/// What [`CorrectionStore::begin_correction`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Begun {
    /// The bracket is not closed: nothing written.
    NotClosed,
    /// The exclusions would cover every player: nothing written.
    Everyone,
    /// The bracket's current version, and whether this call created it (its exclusions
    /// added a player; `false` when every one was excluded already).
    Version {
        /// The version.
        version: u64,
        /// Whether this call created it.
        created: bool,
    },
}

/// What [`CorrectionStore::revoke_reward`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Revocation {
    /// The reward was pending and is removed (now or by an earlier call).
    Revoked,
    /// The player has claimed it: it stays.
    Claimed,
    /// The player had no such reward to remove (never granted, or expired).
    Absent,
}

/// The storage of re-settlements. See the module's documentation.
pub trait CorrectionStore: Send + Sync + 'static {
    /// The bracket's correction record (read only).
    fn correction(
        &self,
        bracket: &BracketKeys,
    ) -> impl Future<Output = Result<CorrectionRecord, StoreError>> + Send;

    /// Adds `start.exclude` to the bracket's exclusions: a new version when one of them
    /// was not excluded yet, recorded with `start`'s time, actor and reason. Copies the
    /// outcomes as closed first (once). Refused, writing nothing, when the bracket is
    /// not closed or when the exclusions would reach `start.players`. Idempotent.
    fn begin_correction(
        &self,
        bracket: &BracketKeys,
        start: &CorrectionStart<'_>,
    ) -> impl Future<Output = Result<Begun, StoreError>> + Send;

    /// Records the outcomes of `version` (`(player, encoded outcome)`, all of them)
    /// and the marks of the corrected players, unless `version` or a later one is
    /// recorded already (`false` then). The outcomes keep their expiry.
    ///
    /// With `events` (the season keeps a log), their bodies go one for one with
    /// `marks` (each the `player.resettled` event of that player): in the same step,
    /// the bracket's log gets those whose mark is newer than the version recorded
    /// before, the players whose outcome this recording changes.
    fn apply_correction(
        &self,
        bracket: &BracketKeys,
        version: u64,
        outcomes: &[(&str, &str)],
        marks: &[(&str, u64)],
        events: Option<Appends<'_>>,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Marks every step of `version` done (never lowers the mark). Idempotent.
    fn finish_correction(
        &self,
        bracket: &BracketKeys,
        version: u64,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Grants `grant` pending under `source` unless the player has that source
    /// (pending or claimed) or it was revoked from them; keeps the rewards at least
    /// `ttl_secs`. `true` when granted now.
    fn grant_corrected(
        &self,
        player: &PlayerKeys,
        source: &str,
        grant: &str,
        ttl_secs: u64,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Removes the player's reward `source` if it is still pending, remembering the
    /// revocation, also when there was nothing to remove (so neither a repeat nor
    /// [`CorrectionStore::grant_corrected`] gives it back); a claimed reward stays and
    /// nothing is remembered. Idempotent: a repeat answers as the first call did.
    fn revoke_reward(
        &self,
        player: &PlayerKeys,
        source: &str,
        ttl_secs: u64,
    ) -> impl Future<Output = Result<Revocation, StoreError>> + Send;

    /// Records the tier credit decision `field` = `value` unless one is recorded, and
    /// answers the recorded one (the first decision stays). Keeps the player's
    /// corrections at least `ttl_secs`.
    fn decide_credit(
        &self,
        player: &PlayerKeys,
        field: &str,
        value: &str,
        ttl_secs: u64,
    ) -> impl Future<Output = Result<String, StoreError>> + Send;

    /// The player's tier credit decisions `(field, value)`, sorted by field.
    fn credits(
        &self,
        player: &PlayerKeys,
    ) -> impl Future<Output = Result<Vec<(String, String)>, StoreError>> + Send;
}
