//! The embedded in-process store: the same atomic operations as Redis, in memory.
//!
//! Used by tests, the designer's simulator and single-process deployments. Each
//! operation runs inside one critical section, which gives it the same atomicity a
//! Lua script has on Redis. Data is keyed by the same key strings Redis would use, so
//! the two stores cannot disagree about which player lives where.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

use chrono::{DateTime, Utc};

use crate::clock::{Clock, SystemClock};
use crate::error::StoreError;
use crate::keys::{BracketKeys, PeriodKeys, PlayerKeys};
use crate::score::Packing;
use crate::store::{Joined, Page, PlayerState, RawEntry, Store, Update, UpdateReply, UpdateStatus};

/// An in-process [`Store`]. Cheap to clone; clones share data.
#[derive(Debug, Clone)]
pub struct MemoryStore {
    inner: Arc<Mutex<Data>>,
    clock: Arc<dyn Clock>,
}

impl Default for MemoryStore {
    fn default() -> Self {
        Self::new()
    }
}

#[derive(Debug, Default)]
struct Data {
    periods: HashMap<String, PeriodData>,
    brackets: HashMap<String, BracketData>,
    players: HashMap<String, PlayerData>,
}

#[derive(Debug, Default)]
struct PeriodData {
    joins: HashMap<String, u64>,
    assign: HashMap<String, (String, u32)>,
    meta: HashMap<String, String>,
}

#[derive(Debug, Default)]
struct BracketData {
    /// player → packed score.
    scores: HashMap<String, u64>,
    /// (minus packed, player): iteration order is the ranking.
    order: BTreeSet<(i64, String)>,
    profiles: HashMap<String, String>,
    meta: HashMap<String, String>,
    /// request key → (packed, rank, expires at).
    requests: HashMap<String, (u64, u64, DateTime<Utc>)>,
}

#[derive(Debug, Default)]
struct PlayerData {
    profile: Vec<(String, String)>,
    state: Option<PlayerState>,
}

impl BracketData {
    fn rank(&self, player: &str, packed: u64) -> u64 {
        let key = (-(packed as i64), player.to_owned());
        self.order.range(..key).count() as u64
    }

    fn put(&mut self, player: &str, packed: u64) {
        if let Some(old) = self.scores.insert(player.to_owned(), packed) {
            self.order.remove(&(-(old as i64), player.to_owned()));
        }
        self.order.insert((-(packed as i64), player.to_owned()));
    }

    fn page(&self, offset: u64, limit: u64) -> Page {
        let entries = self
            .order
            .iter()
            .skip(offset as usize)
            .take(limit as usize)
            .map(|(neg, player)| RawEntry {
                player: player.clone(),
                packed: (-*neg) as u64,
                profile: self.profiles.get(player).cloned(),
            })
            .collect();
        Page {
            total: self.order.len() as u64,
            offset,
            entries,
        }
    }

    fn update(&mut self, update: &Update<'_>, now: DateTime<Utc>) -> UpdateReply {
        if self.meta.contains_key("closed") {
            return UpdateReply {
                status: UpdateStatus::Closed,
                packed: 0,
                rank: 0,
            };
        }
        if let Some((key, _)) = &update.request
            && let Some((packed, rank, expires)) = self.requests.get(key)
            && *expires > now
        {
            return UpdateReply {
                status: UpdateStatus::Duplicate,
                packed: *packed,
                rank: *rank,
            };
        }
        let current = self.scores.get(update.player).copied();
        // The store trusts the engine's validated season limits.
        let packing = match Packing::new(update.max_score, update.span.saturating_sub(1)) {
            Ok(p) => p,
            Err(_) => {
                return UpdateReply {
                    status: UpdateStatus::OutOfRange {
                        current: current.unwrap_or(0),
                    },
                    packed: current.unwrap_or(0),
                    rank: 0,
                };
            }
        };
        match packing.apply(update.mode, current, update.value, update.tick) {
            Ok(packed) => {
                self.put(update.player, packed);
                let rank = self.rank(update.player, packed);
                if let Some((key, window)) = &update.request {
                    self.requests.retain(|_, (_, _, exp)| *exp > now);
                    let expires = now + chrono::Duration::seconds(*window as i64);
                    self.requests.insert(key.clone(), (packed, rank, expires));
                }
                UpdateReply {
                    status: UpdateStatus::Applied,
                    packed,
                    rank,
                }
            }
            Err(_) => UpdateReply {
                status: UpdateStatus::OutOfRange {
                    current: current.unwrap_or(0),
                },
                packed: current.unwrap_or(0),
                rank: 0,
            },
        }
    }
}

impl MemoryStore {
    /// An empty store using the system clock for idempotency windows.
    pub fn new() -> Self {
        Self::with_clock(Arc::new(SystemClock))
    }

    /// An empty store whose idempotency windows follow `clock`.
    pub fn with_clock(clock: Arc<dyn Clock>) -> Self {
        Self {
            inner: Arc::new(Mutex::new(Data::default())),
            clock,
        }
    }

    fn data(&self) -> MutexGuard<'_, Data> {
        // Every critical section leaves the data consistent before it can panic, so a
        // poisoned lock still guards valid data.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Store for MemoryStore {
    async fn join(
        &self,
        period: &PeriodKeys,
        player: &str,
        tier: &str,
        size: u32,
    ) -> Result<Joined, StoreError> {
        let mut data = self.data();
        let p = data.periods.entry(period.base.clone()).or_default();
        if p.meta.contains_key("closing") {
            return Err(StoreError::PeriodClosed);
        }
        if let Some((tier, bracket)) = p.assign.get(player) {
            return Ok(Joined {
                tier: tier.clone(),
                bracket: *bracket,
                new: false,
            });
        }
        let n = p.joins.entry(tier.to_owned()).or_insert(0);
        *n += 1;
        let size = u64::from(size.max(1));
        let bracket = u32::try_from(n.div_ceil(size)).unwrap_or(u32::MAX);
        p.assign
            .insert(player.to_owned(), (tier.to_owned(), bracket));
        Ok(Joined {
            tier: tier.to_owned(),
            bracket,
            new: true,
        })
    }

    async fn placement(
        &self,
        period: &PeriodKeys,
        player: &str,
    ) -> Result<Option<(String, u32)>, StoreError> {
        let data = self.data();
        Ok(data
            .periods
            .get(&period.base)
            .and_then(|p| p.assign.get(player).cloned()))
    }

    async fn enter(
        &self,
        bracket: &BracketKeys,
        player: &str,
        profile: Option<&str>,
    ) -> Result<(), StoreError> {
        let mut data = self.data();
        let b = data.brackets.entry(bracket.base.clone()).or_default();
        if !b.scores.contains_key(player) {
            b.put(player, 0);
        }
        if let Some(json) = profile {
            b.profiles.insert(player.to_owned(), json.to_owned());
        }
        Ok(())
    }

    async fn update(
        &self,
        bracket: &BracketKeys,
        update: &Update<'_>,
    ) -> Result<UpdateReply, StoreError> {
        let now = self.clock.now();
        let mut data = self.data();
        let b = data.brackets.entry(bracket.base.clone()).or_default();
        Ok(b.update(update, now))
    }

    async fn update_many(
        &self,
        updates: &[(BracketKeys, Update<'_>)],
    ) -> Result<Vec<UpdateReply>, StoreError> {
        let now = self.clock.now();
        let mut data = self.data();
        Ok(updates
            .iter()
            .map(|(keys, u)| {
                data.brackets
                    .entry(keys.base.clone())
                    .or_default()
                    .update(u, now)
            })
            .collect())
    }

    async fn standings(
        &self,
        bracket: &BracketKeys,
        offset: u64,
        limit: u64,
    ) -> Result<Page, StoreError> {
        let data = self.data();
        Ok(match data.brackets.get(&bracket.base) {
            Some(b) => b.page(offset, limit),
            None => Page {
                total: 0,
                offset,
                entries: Vec::new(),
            },
        })
    }

    async fn around(
        &self,
        bracket: &BracketKeys,
        player: &str,
        before: u64,
        after: u64,
    ) -> Result<Option<Page>, StoreError> {
        let data = self.data();
        let Some(b) = data.brackets.get(&bracket.base) else {
            return Ok(None);
        };
        let Some(packed) = b.scores.get(player) else {
            return Ok(None);
        };
        let rank = b.rank(player, *packed);
        let start = rank.saturating_sub(before);
        Ok(Some(b.page(start, rank - start + after.saturating_add(1))))
    }

    async fn entry(
        &self,
        bracket: &BracketKeys,
        player: &str,
    ) -> Result<Option<(u64, u64)>, StoreError> {
        let data = self.data();
        Ok(data.brackets.get(&bracket.base).and_then(|b| {
            b.scores
                .get(player)
                .map(|packed| (b.rank(player, *packed), *packed))
        }))
    }

    async fn joined(&self, period: &PeriodKeys) -> Result<Vec<(String, u64)>, StoreError> {
        let data = self.data();
        let mut out: Vec<(String, u64)> = data
            .periods
            .get(&period.base)
            .map(|p| p.joins.iter().map(|(t, n)| (t.clone(), *n)).collect())
            .unwrap_or_default();
        out.sort();
        Ok(out)
    }

    async fn set_profile(
        &self,
        player_keys: &PlayerKeys,
        fields: &[(String, String)],
        cache: Option<(&BracketKeys, &str, &str)>,
    ) -> Result<(), StoreError> {
        let mut data = self.data();
        let p = data.players.entry(player_keys.base.clone()).or_default();
        for (k, v) in fields {
            match p.profile.iter_mut().find(|(f, _)| f == k) {
                Some(slot) => slot.1 = v.clone(),
                None => p.profile.push((k.clone(), v.clone())),
            }
        }
        if let Some((bracket, player, json)) = cache
            && let Some(b) = data.brackets.get_mut(&bracket.base)
            && b.scores.contains_key(player)
        {
            b.profiles.insert(player.to_owned(), json.to_owned());
        }
        Ok(())
    }

    async fn profile(&self, player_keys: &PlayerKeys) -> Result<Vec<(String, String)>, StoreError> {
        let data = self.data();
        let mut fields = data
            .players
            .get(&player_keys.base)
            .map(|p| p.profile.clone())
            .unwrap_or_default();
        fields.sort();
        Ok(fields)
    }

    async fn player_state(
        &self,
        player_keys: &PlayerKeys,
    ) -> Result<Option<PlayerState>, StoreError> {
        let data = self.data();
        Ok(data
            .players
            .get(&player_keys.base)
            .and_then(|p| p.state.clone()))
    }

    async fn record_state(
        &self,
        player_keys: &PlayerKeys,
        state: &PlayerState,
    ) -> Result<(), StoreError> {
        let mut data = self.data();
        let p = data.players.entry(player_keys.base.clone()).or_default();
        if p.state.as_ref().is_none_or(|s| s.period < state.period) {
            p.state = Some(state.clone());
        }
        Ok(())
    }
}
