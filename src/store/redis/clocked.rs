//! Record expiry by a clock given to the store ([`RedisStore::with_clock`]), for
//! leagues whose league clock is injected (the designer's simulator, replays, tests).
//!
//! Redis judges a record's deadline by its own `TIME` and expires keys by its own
//! clock. A league clock that runs weeks ahead in seconds (a simulated season) then
//! never sees a player's records or a closed period's outcomes expire, while the
//! embedded store, which judges them by its clock, does: the two stores would place
//! returning players in different tiers. With a clock given, this store judges the
//! deadlines of players' records by that clock (passed to the scripts instead of
//! `TIME`), and drops the closed periods and brackets whose retention ran out by it
//! when a period is finished, as the embedded store does. Key TTLs still run on the
//! server's clock: they only free memory later.
//!
//! Owns: the clock's "now" for the scripts, and the closed periods and brackets this
//! store finished, until their retention runs out. Must not: decide how long
//! anything is kept (the league passes the TTLs).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::clock::Clock;
use crate::error::StoreError;
use crate::store::keys::{BracketKeys, PeriodKeys};

use super::{RedisStore, Retry};

/// A store's clock and what it finished, by the clock.
#[derive(Debug)]
pub(super) struct Clocked {
    clock: Arc<dyn Clock>,
    /// Closed periods and brackets by their common part, and when their retention
    /// runs out (unix seconds by `clock`).
    kept: Mutex<HashMap<String, (Finished, i64)>>,
}

/// A closed period or bracket; its keys are made only when it is deleted (a period
/// has one per assign bucket).
#[derive(Debug)]
enum Finished {
    Period(PeriodKeys),
    Bracket(BracketKeys),
}

impl Finished {
    /// Every key of it (one slot: they share its hash tag).
    fn keys(&self) -> Vec<String> {
        match self {
            Finished::Period(p) => {
                let mut keys = vec![p.meta.clone(), p.joins.clone()];
                keys.extend(p.assign_buckets());
                keys
            }
            Finished::Bracket(b) => vec![
                b.meta.clone(),
                b.lease.clone(),
                b.board.clone(),
                b.profiles.clone(),
                b.outcomes.clone(),
                b.pages.clone(),
                b.profiles_text(),
            ],
        }
    }
}

impl Clocked {
    fn now(&self) -> i64 {
        self.clock.now().timestamp()
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Finished, i64)>> {
        // Every critical section leaves the map whole, so a poisoned lock still
        // guards a valid map.
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Remembers `base` until `ttl_secs` from now by the clock (replacing an earlier
    /// deadline, as the embedded store's `expire_at` is replaced).
    fn keep(&self, base: &str, finished: impl FnOnce() -> Finished, ttl_secs: u64) {
        let until = self
            .now()
            .saturating_add(i64::try_from(ttl_secs).unwrap_or(i64::MAX));
        let mut kept = self.kept();
        match kept.get_mut(base) {
            Some(entry) => entry.1 = until,
            None => {
                kept.insert(base.to_owned(), (finished(), until));
            }
        }
    }

    /// Takes out what ran out of retention by now.
    fn due(&self) -> Vec<Finished> {
        let now = self.now();
        let mut kept = self.kept();
        let due: Vec<String> = kept
            .iter()
            .filter(|(_, (_, until))| *until <= now)
            .map(|(base, _)| base.clone())
            .collect();
        due.into_iter()
            .filter_map(|base| kept.remove(&base).map(|(finished, _)| finished))
            .collect()
    }
}

impl RedisStore {
    /// This store with `clock` as the clock of record expiry: the deadlines of
    /// players' records (`retention.player_ttl`) are judged by it instead of the
    /// server's `TIME`, and each finished period drops the closed periods and brackets
    /// this store finished whose retention (`retention.periods`) ran out by it, as a
    /// [`crate::MemoryStore`] with that clock does. Give it the league clock of a
    /// league built with [`crate::League::with_clock`] (a simulation, a replay, a
    /// test), so that both stores give the same answers; only that process's league
    /// may use the keys (its finished periods are remembered in this process). Key
    /// TTLs, and so the windows of request ids, still run on the server's clock.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clocked = Some(Arc::new(Clocked {
            clock,
            kept: Mutex::default(),
        }));
        self
    }

    /// The "now" argument of the scripts that judge records' deadlines: the given
    /// clock's unix seconds, or "" for the server's `TIME`.
    pub(super) fn record_now(&self) -> String {
        self.clocked
            .as_ref()
            .map_or_else(String::new, |c| c.now().to_string())
    }

    /// With a clock, remembers a closed bracket until its retention runs out.
    pub(super) fn keep_bracket(&self, bracket: &BracketKeys, ttl_secs: u64) {
        if let Some(c) = &self.clocked {
            c.keep(
                &bracket.base,
                || Finished::Bracket(bracket.clone()),
                ttl_secs,
            );
        }
    }

    /// With a clock, remembers a finished period until its retention runs out, then
    /// deletes every remembered period and bracket whose retention ran out (the
    /// embedded store drops them at the same point).
    pub(super) async fn drop_expired(
        &self,
        period: &PeriodKeys,
        ttl_secs: u64,
    ) -> Result<(), StoreError> {
        let Some(c) = &self.clocked else {
            return Ok(());
        };
        c.keep(&period.base, || Finished::Period(period.clone()), ttl_secs);
        // Each is one slot (one hash tag): one DEL each, sent together.
        let due = c.due();
        futures::future::try_join_all(due.iter().map(|finished| async move {
            let mut cmd = ::redis::cmd("DEL");
            cmd.arg(finished.keys());
            self.command("drop_expired", Retry::Idempotent, &cmd).await
        }))
        .await?;
        Ok(())
    }
}
