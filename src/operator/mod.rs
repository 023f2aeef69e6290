//! The operator's side of a league: [`Operator`], what the people who run a league do
//! to it by hand, each action appended to the audit log ([`audit`]).
//!
//! Reached through [`crate::League::operator`]; the CLI's operator commands and the
//! HTTP admin routes call it.
//!
//! Owns: operator actions and the audit log they write. Must not: change how the
//! league runs without them (placements, updates and rollovers are the other parts'),
//! or build key strings itself.

mod adjust;
pub mod audit;
pub mod bans;
mod clock;
pub mod resettle;

use std::sync::Arc;

pub use adjust::{AdjustOutcome, Adjustment};
pub use audit::{Actor, AuditEntry, AuditQuery};
pub use bans::Ban;
pub use clock::ClockView;
pub use resettle::{PlayerCorrection, ResettleReport};

use crate::context::Context;
use crate::store::Store;

/// A league's operator tools. Every action names the [`Actor`] who took it and is
/// appended to the audit log.
#[derive(Debug)]
pub struct Operator<S: Store> {
    ctx: Arc<Context<S>>,
}

impl<S: Store> Operator<S> {
    pub(crate) fn new(ctx: Arc<Context<S>>) -> Self {
        Operator { ctx }
    }
}
