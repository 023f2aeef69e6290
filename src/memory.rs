//! The embedded in-process store: the same atomic operations as Redis, in memory.
//!
//! Used by tests, the designer's simulator and single-process deployments. Each
//! operation runs inside one critical section, which gives it the same atomicity a
//! Lua script has on Redis. Data is keyed by the same key strings Redis would use, so
//! the two stores cannot disagree about which player lives where.

use std::sync::{Arc, Mutex, MutexGuard};

use chrono::{DateTime, Utc};

use crate::clock::{Clock, SystemClock};
use crate::error::StoreError;
use crate::keys::{BracketKeys, PeriodKeys, PlayerKeys, SeasonKeys};
use crate::score::Packing;
use crate::store::{
    BracketClaim, Joined, Page, PlayerState, RawEntry, Store, Update, UpdateReply, UpdateStatus,
};

/// Hash maps keyed by ids that callers choose: foldhash is several times faster than
/// SipHash here and still seeds each map randomly against collision attacks.
type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

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
    /// season key → last closed period.
    seasons: HashMap<String, u64>,
    periods: HashMap<String, PeriodData>,
    brackets: HashMap<String, BracketData>,
    players: HashMap<String, PlayerData>,
}

#[derive(Debug, Default)]
struct PeriodData {
    joins: HashMap<String, u64>,
    assign: HashMap<String, (String, u32)>,
    meta: HashMap<String, String>,
    expire_at: Option<i64>,
}

#[derive(Debug, Default)]
struct BracketData {
    /// player → packed score.
    scores: HashMap<Arc<str>, u64>,
    /// (minus packed, player), sorted: the ranking. A sorted vector rather than a
    /// tree: boards are bracket-sized, so binary search plus a short memmove beats
    /// tree nodes, and a rank is a binary search. Shares the ids of `scores`, so
    /// moving an entry allocates nothing.
    order: Vec<(i64, Arc<str>)>,
    profiles: HashMap<String, String>,
    meta: HashMap<String, String>,
    /// request key → (packed, rank, expires at).
    requests: HashMap<String, (u64, u64, DateTime<Utc>)>,
    outcomes: HashMap<String, String>,
    /// (owner, expires at in unix milliseconds).
    lease: Option<(String, i64)>,
    expire_at: Option<i64>,
}

#[derive(Debug, Default)]
struct PlayerData {
    profile: Vec<(String, String)>,
    state: Option<PlayerState>,
    /// source → (claimed, grant).
    rewards: std::collections::BTreeMap<String, (bool, String)>,
    /// claim id → what that claim returned.
    claims: HashMap<String, Vec<(String, String)>>,
}

impl BracketData {
    /// Where `(packed, player)` sits (or would sit) in `order`.
    fn position(&self, player: &str, packed: u64) -> usize {
        let neg = -(packed as i64);
        self.order
            .partition_point(|(n, p)| (*n, &**p) < (neg, player))
    }

    fn rank(&self, player: &str, packed: u64) -> u64 {
        self.position(player, packed) as u64
    }

    fn put(&mut self, player: &str, packed: u64) {
        let id = match self.scores.get_key_value(player) {
            Some((id, old)) => {
                let id = id.clone();
                let at = self.position(player, *old);
                self.order.remove(at);
                id
            }
            None => Arc::from(player),
        };
        let at = self.position(player, packed);
        self.order.insert(at, (-(packed as i64), id.clone()));
        self.scores.insert(id, packed);
    }

    fn page(&self, offset: u64, limit: u64) -> Page {
        let entries = self
            .order
            .iter()
            .skip(offset as usize)
            .take(limit as usize)
            .map(|(neg, player)| RawEntry {
                player: player.to_string(),
                packed: (-*neg) as u64,
                profile: self.profiles.get(&**player).cloned(),
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

    /// The bracket's data, created on first use; the key is cloned only then.
    fn bracket<'a>(data: &'a mut Data, keys: &BracketKeys) -> &'a mut BracketData {
        if !data.brackets.contains_key(&keys.base) {
            data.brackets
                .insert(keys.base.clone(), BracketData::default());
        }
        match data.brackets.get_mut(&keys.base) {
            Some(b) => b,
            None => unreachable!("inserted above"),
        }
    }

    /// The player's data, created on first use; the key is cloned only then.
    fn player<'a>(data: &'a mut Data, keys: &PlayerKeys) -> &'a mut PlayerData {
        if !data.players.contains_key(&keys.base) {
            data.players
                .insert(keys.base.clone(), PlayerData::default());
        }
        match data.players.get_mut(&keys.base) {
            Some(p) => p,
            None => unreachable!("inserted above"),
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
        if !data.periods.contains_key(&period.base) {
            data.periods
                .insert(period.base.clone(), PeriodData::default());
        }
        let Some(p) = data.periods.get_mut(&period.base) else {
            return Err(StoreError::Protocol("period vanished".into()));
        };
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
        let b = Self::bracket(&mut data, bracket);
        if b.meta.contains_key("closed") {
            return Err(StoreError::PeriodClosed);
        }
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
        Ok(Self::bracket(&mut data, bracket).update(update, now))
    }

    async fn update_many(
        &self,
        updates: &[(&BracketKeys, Update<'_>)],
    ) -> Result<Vec<UpdateReply>, StoreError> {
        let now = self.clock.now();
        let mut data = self.data();
        Ok(updates
            .iter()
            .map(|(keys, u)| Self::bracket(&mut data, keys).update(u, now))
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
        let p = Self::player(&mut data, player_keys);
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
        let p = Self::player(&mut data, player_keys);
        match &p.state {
            None => p.state = Some(PlayerState::new(state.period, &state.tier, state.bracket)),
            Some(old) if old.period < state.period => {
                let mut new = PlayerState::new(state.period, &state.tier, state.bracket);
                new.previous = Some((old.period, old.tier.clone(), old.bracket));
                p.state = Some(new);
            }
            Some(_) => {}
        }
        Ok(())
    }

    async fn closed_through(&self, season: &SeasonKeys) -> Result<u64, StoreError> {
        Ok(self.data().seasons.get(&season.base).copied().unwrap_or(0))
    }

    async fn set_closed_through(&self, season: &SeasonKeys, period: u64) -> Result<(), StoreError> {
        let mut data = self.data();
        let mark = data.seasons.entry(season.base.clone()).or_insert(0);
        *mark = (*mark).max(period);
        Ok(())
    }

    async fn begin_close(
        &self,
        period: &PeriodKeys,
    ) -> Result<(Option<String>, Vec<(String, u64)>), StoreError> {
        let mut data = self.data();
        let p = data.periods.entry(period.base.clone()).or_default();
        p.meta.insert("closing".into(), "1".into());
        let mut joins: Vec<(String, u64)> = p.joins.iter().map(|(t, n)| (t.clone(), *n)).collect();
        joins.sort();
        Ok((p.meta.get("closed").cloned(), joins))
    }

    async fn period_summary(&self, period: &PeriodKeys) -> Result<Option<String>, StoreError> {
        Ok(self
            .data()
            .periods
            .get(&period.base)
            .and_then(|p| p.meta.get("closed").cloned()))
    }

    async fn finish_period(
        &self,
        period: &PeriodKeys,
        summary: &str,
        ttl_secs: u64,
    ) -> Result<(), StoreError> {
        let now = self.clock.now().timestamp();
        let expire_at = now.saturating_add(i64::try_from(ttl_secs).unwrap_or(i64::MAX));
        let mut data = self.data();
        let p = data.periods.entry(period.base.clone()).or_default();
        p.meta
            .entry("closed".into())
            .or_insert_with(|| summary.to_owned());
        p.expire_at = Some(expire_at);
        // Redis expires closed periods by TTL; here they are dropped when a later
        // period closes, which is when their retention can first run out.
        data.periods
            .retain(|_, p| p.expire_at.is_none_or(|e| e > now));
        data.brackets
            .retain(|_, b| b.expire_at.is_none_or(|e| e > now));
        Ok(())
    }

    async fn claim_bracket(
        &self,
        bracket: &BracketKeys,
        owner: &str,
        lease_ms: u64,
    ) -> Result<BracketClaim, StoreError> {
        let now = self.clock.now().timestamp_millis();
        let mut data = self.data();
        let b = data.brackets.entry(bracket.base.clone()).or_default();
        if let Some(tally) = b.meta.get("done") {
            return Ok(BracketClaim::Done(tally.clone()));
        }
        match &b.lease {
            Some((holder, until)) if holder != owner && *until > now => Ok(BracketClaim::Busy),
            _ => {
                let until = now.saturating_add(i64::try_from(lease_ms).unwrap_or(i64::MAX));
                b.lease = Some((owner.to_owned(), until));
                Ok(BracketClaim::Mine)
            }
        }
    }

    async fn freeze(&self, bracket: &BracketKeys) -> Result<Vec<(String, u64)>, StoreError> {
        let mut data = self.data();
        let b = data.brackets.entry(bracket.base.clone()).or_default();
        b.meta.insert("closed".into(), "1".into());
        Ok(b.order
            .iter()
            .map(|(neg, player)| (player.to_string(), (-*neg) as u64))
            .collect())
    }

    async fn record_outcomes(
        &self,
        bracket: &BracketKeys,
        outcomes: &[(String, String)],
        ttl_secs: u64,
    ) -> Result<(), StoreError> {
        let now = self.clock.now().timestamp();
        let expire_at = now.saturating_add(i64::try_from(ttl_secs).unwrap_or(i64::MAX));
        let mut data = self.data();
        let b = data.brackets.entry(bracket.base.clone()).or_default();
        if !b.meta.contains_key("recorded") {
            b.outcomes = outcomes.iter().cloned().collect();
            b.meta.insert("recorded".into(), "1".into());
        }
        b.expire_at = Some(expire_at);
        Ok(())
    }

    async fn grant(&self, grants: &[(PlayerKeys, String, String)]) -> Result<(), StoreError> {
        let mut data = self.data();
        for (keys, source, grant) in grants {
            data.players
                .entry(keys.base.clone())
                .or_default()
                .rewards
                .entry(source.clone())
                .or_insert_with(|| (false, grant.clone()));
        }
        Ok(())
    }

    async fn finish_bracket(&self, bracket: &BracketKeys, tally: &str) -> Result<(), StoreError> {
        let mut data = self.data();
        let b = data.brackets.entry(bracket.base.clone()).or_default();
        b.meta
            .entry("done".into())
            .or_insert_with(|| tally.to_owned());
        b.lease = None;
        Ok(())
    }

    async fn outcome(
        &self,
        bracket: &BracketKeys,
        player: &str,
    ) -> Result<Option<String>, StoreError> {
        Ok(self
            .data()
            .brackets
            .get(&bracket.base)
            .and_then(|b| b.outcomes.get(player).cloned()))
    }

    async fn outcomes(&self, bracket: &BracketKeys) -> Result<Vec<(String, String)>, StoreError> {
        Ok(self
            .data()
            .brackets
            .get(&bracket.base)
            .map(|b| {
                b.outcomes
                    .iter()
                    .map(|(p, o)| (p.clone(), o.clone()))
                    .collect()
            })
            .unwrap_or_default())
    }

    async fn rewards(&self, player_keys: &PlayerKeys) -> Result<Vec<(String, String)>, StoreError> {
        Ok(self
            .data()
            .players
            .get(&player_keys.base)
            .map(|p| {
                p.rewards
                    .iter()
                    .filter(|(_, (claimed, _))| !claimed)
                    .map(|(s, (_, g))| (s.clone(), g.clone()))
                    .collect()
            })
            .unwrap_or_default())
    }

    async fn claim_rewards(
        &self,
        player_keys: &PlayerKeys,
        claim_id: Option<&str>,
    ) -> Result<Vec<(String, String)>, StoreError> {
        let mut data = self.data();
        let p = Self::player(&mut data, player_keys);
        if let Some(id) = claim_id
            && let Some(answer) = p.claims.get(id)
        {
            return Ok(answer.clone());
        }
        let mut claimed = Vec::new();
        for (source, (done, grant)) in p.rewards.iter_mut() {
            if !*done {
                *done = true;
                claimed.push((source.clone(), grant.clone()));
            }
        }
        if let Some(id) = claim_id {
            p.claims.insert(id.to_owned(), claimed.clone());
        }
        Ok(claimed)
    }
}
