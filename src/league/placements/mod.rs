//! [`Placements`]: where players are. Joins (`join.rs`), bulk joins (`bulk.rs`), the
//! tier a player joins next, players' views and counts (`view.rs`), and the caches that
//! spare a round trip on every update once a player is placed. Concurrent single
//! joins are gathered into bulk batches by [`super::batching`].
//!
//! Owns: the placement cache (player → bracket), the bracket-keys cache, the current
//! period's keys and the queue of gathered single joins. Must not: update a board
//! (that is [`crate::ranking::Boards`]) or decide an outcome (it asks
//! [`Rollover`] for a previous bracket's, which may close it on the spot).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};

use crate::context::{Context, Placed};
use crate::events::{Event, Kind};
use crate::rollover::Rollover;
use crate::season::calendar::{Period, PeriodId};
use crate::store::Store;
use crate::store::keys::PeriodKeys;

mod bulk;
mod join;
mod view;

pub use bulk::JoinItem;
pub(crate) use bulk::{PlaceResult, PlaceWant};
pub(crate) use join::Welcome;
pub use join::{JoinOptions, Placement};
pub use view::{CohortCount, PlayerView, TierCount};

use super::batching::JoinQueue;

/// Largest placement cache before it is cleared (one entry per active player).
const CACHE_LIMIT: usize = 1 << 20;

/// The caches' maps: foldhash is fast and seeds each map randomly.
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Players' placements in brackets: joins, single and in bulk, and what this process
/// remembers of them.
#[derive(Debug)]
pub struct Placements<S: Store> {
    ctx: Arc<Context<S>>,
    /// Asked for a returning player's last outcome (closing their bracket on the spot
    /// when the rollover has not reached it yet).
    rollover: Arc<Rollover<S>>,
    /// player → their placement in a period. A placement never changes once made, so
    /// a hit here saves a round trip (and the key building) on every later update.
    cache: Mutex<FastMap<String, (PeriodId, Arc<Placed>)>>,
    /// One shared [`Placed`] per bracket, so cached players of a bracket share keys.
    brackets: Mutex<FastMap<(PeriodId, usize, u32), Arc<Placed>>>,
    /// The keys of the latest period used, built once per period.
    period_keys: Mutex<Option<(PeriodId, Arc<PeriodKeys>)>>,
    /// Concurrent single joins waiting to be placed as one batch.
    joins: JoinQueue,
}

impl<S: Store> Placements<S> {
    /// The placements of the league of `ctx`, asking `rollover` for outcomes.
    pub(crate) fn new(ctx: Arc<Context<S>>, rollover: Arc<Rollover<S>>) -> Self {
        Placements {
            ctx,
            rollover,
            cache: Mutex::new(FastMap::default()),
            brackets: Mutex::new(FastMap::default()),
            period_keys: Mutex::new(None),
            joins: JoinQueue::default(),
        }
    }

    /// The league's context.
    pub(crate) fn ctx(&self) -> &Context<S> {
        &self.ctx
    }

    /// Places the player (or finds their placement) in `period`, as
    /// [`Placements::place_one`] does, gathered with concurrent placements into one
    /// batch of the bulk path where the store asks for it (see [`super::batching`]).
    pub(crate) async fn place(
        &self,
        player: &str,
        period: &Period,
        at: DateTime<Utc>,
        now: DateTime<Utc>,
        cohort: Option<&str>,
    ) -> PlaceResult {
        // Boxed: see `JoinQueue::place`.
        if !self.ctx.store().gathers_joins() {
            // place_one looks in the cache itself.
            return Box::pin(self.place_one(player, period, at, now, cohort)).await;
        }
        self.joins
            .place(self, player, period, at, now, cohort)
            .await
    }

    /// The player's placement in `period`, if this process remembers it.
    pub(crate) fn cached(&self, player: &str, period: PeriodId) -> Option<Arc<Placed>> {
        let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        match cache.get(player) {
            Some((p, placed)) if *p == period => Some(placed.clone()),
            _ => None,
        }
    }

    /// The `player.placed` events of `(player, tier, bracket)` joins of `period` at
    /// `at`; none when the season keeps no event log.
    pub(crate) fn placed_events<'p>(
        &self,
        period: PeriodId,
        at: DateTime<Utc>,
        joins: impl Iterator<Item = (&'p str, &'p str, u32)>,
    ) -> Vec<String> {
        if self.ctx.log_spec().is_none() {
            return Vec::new();
        }
        let season = self.ctx.season().name.as_str();
        joins
            .map(|(player, tier, bracket)| {
                Event::new(Kind::Placed, season, period, at.timestamp_millis())
                    .player(player)
                    .bracket(tier, bracket)
                    .body()
            })
            .collect()
    }

    /// The bracket's keys, built once per bracket and shared.
    pub(crate) fn placed(&self, period: PeriodId, tier: &str, bracket: u32) -> Arc<Placed> {
        // Keyed by tier index so a lookup allocates nothing; an unknown tier name
        // (from data of an older season file) gets an index past the season's.
        let index = self
            .ctx
            .season()
            .tier_by_any_name(tier)
            .map_or(self.ctx.season().tiers.len(), |(i, _)| i);
        let mut brackets = self.brackets.lock().unwrap_or_else(|e| e.into_inner());
        if brackets.len() >= CACHE_LIMIT {
            brackets.clear();
        }
        if let Some(hit) = brackets.get(&(period, index, bracket))
            && hit.tier() == tier
        {
            return hit.clone();
        }
        let placed = Arc::new(Placed::new(
            tier,
            bracket,
            self.ctx.keys().bracket(period, tier, bracket),
        ));
        brackets.insert((period, index, bracket), placed.clone());
        placed
    }

    /// The keys of a period, built once per period.
    pub(crate) fn period_keys(&self, period: PeriodId) -> Arc<PeriodKeys> {
        let mut slot = self.period_keys.lock().unwrap_or_else(|e| e.into_inner());
        match &*slot {
            Some((p, keys)) if *p == period => keys.clone(),
            _ => {
                let keys = Arc::new(self.ctx.keys().period(period));
                *slot = Some((period, keys.clone()));
                keys
            }
        }
    }

    /// Remembers the player's placement in `period` (and returns it).
    pub(crate) fn remember(
        &self,
        player: &str,
        period: PeriodId,
        tier: &str,
        bracket: u32,
    ) -> Arc<Placed> {
        let placed = self.placed(period, tier, bracket);
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= CACHE_LIMIT {
            cache.clear();
        }
        cache.insert(player.to_owned(), (period, placed.clone()));
        placed
    }

    /// Forgets the player's placement (the store lost it).
    pub(crate) fn forget(&self, player: &str) {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        cache.remove(player);
    }
}
