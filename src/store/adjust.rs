//! Operators' adjustments of a score: one atomic step on the player's bracket.

use std::future::Future;

use crate::error::{StoreError, TimeRefusal};
use crate::season::packing::Adjustment;
use crate::store::keys::BracketKeys;
use crate::store::{LogSpec, TimeCheck};

/// An exact change of one player's score on their bracket's board (see
/// [`Packing::adjust`](crate::season::packing::Packing::adjust), the rule both stores
/// implement).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Adjust<'a> {
    /// The player.
    pub player: &'a str,
    /// The change.
    pub change: Adjustment,
    /// The season's maximum score.
    pub max_score: u64,
    /// The packing multiplier `T`.
    pub span: u64,
    /// The adjustment's tick in the period (the time a never-scored entry takes).
    pub tick: u64,
    /// The period's time rules, with the adjustment's time as the event's.
    pub time: TimeCheck,
    /// The `score.adjusted` event to log in the bracket's log when the adjustment
    /// applies (none: the season keeps no log): the log's spec and the event's head,
    /// up to its `"data":` ([`crate::events::Event::head`]); the store writes the
    /// data ([`adjusted_body`]).
    pub logged: Option<(LogSpec, String)>,
}

impl<'a> Adjust<'a> {
    /// An adjustment of `player`'s score by `change`, in a season packed with
    /// `max_score` and `span`, at `tick` of a period whose rules are `time`.
    pub fn new(
        player: &'a str,
        change: Adjustment,
        (max_score, span): (u64, u64),
        tick: u64,
        time: TimeCheck,
    ) -> Self {
        Adjust {
            player,
            change,
            max_score,
            span,
            tick,
            time,
            logged: None,
        }
    }

    /// The same, logging `score.adjusted` with `head` in a log kept as `spec`.
    pub fn logged(mut self, spec: LogSpec, head: String) -> Self {
        self.logged = Some((spec, head));
        self
    }
}

/// The `score.adjusted` event of an adjustment from score `before` to `after`, given
/// its head: `head{"before":…,"after":…}}` (`adjust.lua` writes the same bytes).
pub fn adjusted_body(head: &str, before: u64, after: u64) -> String {
    format!("{head}{{\"before\":{before},\"after\":{after}}}}}")
}

/// What the store did with an adjustment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Adjusted {
    /// Applied: the packed score before and after.
    Done {
        /// The packed value before.
        before: u64,
        /// The packed value after.
        after: u64,
    },
    /// The result would leave `0..=max_score`; nothing changed.
    OutOfRange {
        /// The packed value now.
        current: u64,
    },
    /// The player is not on the board; nothing changed.
    NotPlaced,
    /// The bracket is closed, or its period no longer accepts events; nothing changed.
    Closed,
    /// The period has not started by the store's clock; nothing changed.
    Refused(TimeRefusal),
}

/// Adjustments of scores.
pub trait AdjustStore: Send + Sync + 'static {
    /// Applies `adjust` on the board of `bracket` in one atomic step, with the time
    /// and closed checks of an update. Idempotent: a resend of the same call (after a
    /// lost answer) is answered as the first and changes nothing again.
    fn adjust(
        &self,
        bracket: &BracketKeys,
        adjust: &Adjust<'_>,
    ) -> impl Future<Output = Result<Adjusted, StoreError>> + Send;
}
