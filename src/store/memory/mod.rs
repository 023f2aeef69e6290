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
use crate::season::packing::Packing;
use crate::store::keys::{BracketKeys, PeriodKeys, PlayerKeys, SeasonKeys};
use crate::store::{
    BlockedGrant, BracketClaim, Claim, CloseCheck, Entered, Grant, JoinRequest, Joined, Judgement,
    Now, Page, PlayerState, ProfileWrite, RawEntry, Store, Update, UpdateReply, UpdateStatus,
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
    /// season key → grants that failed, by (source, player).
    blocked: HashMap<String, std::collections::BTreeMap<(String, String), BlockedGrant>>,
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
    /// player → (profile version, profile JSON).
    profiles: HashMap<String, (u64, String)>,
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
    /// Increases with every profile write.
    profile_version: u64,
    state: Option<PlayerState>,
    /// source → (claimed, grant).
    rewards: std::collections::BTreeMap<String, (bool, String)>,
    /// claim id → (period of the claim, what that claim returned).
    claims: HashMap<String, (u64, Vec<(String, String)>)>,
    /// When the player's records expire (unix seconds), as the Redis keys would.
    expire_at: Option<i64>,
}

impl PlayerData {
    fn expired(&self, now: i64) -> bool {
        self.expire_at.is_some_and(|e| e <= now)
    }

    /// Keeps the records at least `ttl_secs` from `now` (like Redis `EXPIRE` NX, then GT).
    fn keep_at_least(&mut self, now: i64, ttl_secs: u64) {
        let until = now.saturating_add(i64::try_from(ttl_secs).unwrap_or(i64::MAX));
        self.expire_at = Some(self.expire_at.map_or(until, |e| e.max(until)));
    }
}

/// The period of a reward source `period/tier/bracket`.
fn source_period(source: &str) -> Option<u64> {
    source.split('/').next()?.parse().ok()
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
                profile: self.profiles.get(&**player).map(|(_, json)| json.clone()),
            })
            .collect();
        Page {
            total: self.order.len() as u64,
            offset,
            entries,
        }
    }

    fn update(&mut self, update: &Update<'_>, now: DateTime<Utc>) -> UpdateReply {
        let refused = |status| UpdateReply {
            status,
            packed: 0,
            rank: 0,
        };
        // The idempotency record first: a retry is answered as the first time was,
        // even once the period has closed.
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
        let now_ms = match update.time.now {
            Now::At(ms) => ms,
            Now::Store => now.timestamp_millis(),
        };
        match update.time.judge(now_ms) {
            Ok(()) => {}
            Err(Judgement::Refused(why)) => return refused(UpdateStatus::Refused(why)),
            Err(Judgement::Closed) => return refused(UpdateStatus::Closed),
        }
        if self.meta.contains_key("closed") {
            return refused(UpdateStatus::Closed);
        }
        let Some(current) = self.scores.get(update.player).copied() else {
            // Only a join puts a player on a board: an update for a player who is not
            // there comes from a stale placement (or a store that lost its data).
            return refused(UpdateStatus::NotPlaced);
        };
        // The store trusts the engine's validated season limits.
        let packing = match Packing::new(update.max_score, update.span.saturating_sub(1)) {
            Ok(p) => p,
            Err(_) => {
                return UpdateReply {
                    status: UpdateStatus::OutOfRange { current },
                    packed: current,
                    rank: 0,
                };
            }
        };
        match packing.apply(update.mode, Some(current), update.value, update.tick) {
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
                status: UpdateStatus::OutOfRange { current },
                packed: current,
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

    /// An empty store whose clock is `clock`: the league clock of leagues built on it
    /// (unless they bring their own), idempotency windows and expiries.
    pub fn with_clock(clock: Arc<dyn Clock>) -> Self {
        Self {
            inner: Arc::new(Mutex::new(Data::default())),
            clock,
        }
    }

    /// What the store holds, for operators and for tests of expiry.
    pub fn footprint(&self) -> Footprint {
        let now = self.clock.now().timestamp();
        let data = self.data();
        let live = data.players.values().filter(|p| !p.expired(now));
        let (mut players, mut rewards, mut claims) = (0, 0, 0);
        for p in live {
            players += 1;
            rewards += p.rewards.len() as u64;
            claims += p.claims.len() as u64;
        }
        Footprint {
            periods: data.periods.len() as u64,
            brackets: data.brackets.len() as u64,
            players,
            rewards,
            claims,
            requests: data
                .brackets
                .values()
                .map(|b| b.requests.len() as u64)
                .sum(),
        }
    }

    fn now_ms(&self, now: Now) -> i64 {
        match now {
            Now::At(ms) => ms,
            Now::Store => self.clock.now().timestamp_millis(),
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

    /// The player's data, created on first use (or anew once expired, as Redis would
    /// have deleted it); the key is cloned only then.
    fn player<'a>(data: &'a mut Data, keys: &PlayerKeys, now: i64) -> &'a mut PlayerData {
        match data.players.get(&keys.base) {
            Some(p) if !p.expired(now) => {}
            Some(_) => {
                data.players.remove(&keys.base);
                data.players
                    .insert(keys.base.clone(), PlayerData::default());
            }
            None => {
                data.players
                    .insert(keys.base.clone(), PlayerData::default());
            }
        }
        match data.players.get_mut(&keys.base) {
            Some(p) => p,
            None => unreachable!("inserted above"),
        }
    }

    /// The player's data if it exists and has not expired.
    fn live_player<'a>(data: &'a Data, keys: &PlayerKeys, now: i64) -> Option<&'a PlayerData> {
        data.players.get(&keys.base).filter(|p| !p.expired(now))
    }

    fn data(&self) -> MutexGuard<'_, Data> {
        // Every critical section leaves the data consistent before it can panic, so a
        // poisoned lock still guards valid data.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Counts of what a [`MemoryStore`] holds (see [`MemoryStore::footprint`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Footprint {
    /// Periods with data.
    pub periods: u64,
    /// Brackets with data.
    pub brackets: u64,
    /// Players whose records have not expired.
    pub players: u64,
    /// Reward entries (pending and claimed) of those players.
    pub rewards: u64,
    /// Remembered claim answers of those players.
    pub claims: u64,
    /// Remembered request ids.
    pub requests: u64,
}

fn time_error(why: crate::store::TimeRefusal) -> StoreError {
    StoreError::Time(why)
}

impl Store for MemoryStore {
    async fn now(&self) -> Result<i64, StoreError> {
        Ok(self.clock.now().timestamp_millis())
    }

    fn now_is_free(&self) -> bool {
        true
    }

    async fn join(
        &self,
        period: &PeriodKeys,
        request: &JoinRequest<'_>,
    ) -> Result<Joined, StoreError> {
        match request.time.judge(self.now_ms(request.time.now)) {
            Ok(()) => {}
            Err(Judgement::Refused(why)) => return Err(time_error(why)),
            Err(Judgement::Closed) => return Err(StoreError::PeriodClosed),
        }
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
        let size = u64::from(request.size.max(1));
        if let Some((tier, bracket)) = p.assign.get(request.player) {
            match request.replace_full {
                Some(full) if full == *bracket => {
                    // The assigned bracket is full: move the counter past it, so this
                    // and every later joiner of the tier lands in a bracket after it.
                    let tier = tier.clone();
                    let n = p.joins.entry(tier).or_insert(0);
                    *n = (*n).max(u64::from(full).saturating_mul(size));
                }
                _ => {
                    return Ok(Joined {
                        tier: tier.clone(),
                        bracket: *bracket,
                        new: false,
                    });
                }
            }
        }
        let tier = match p.assign.get(request.player) {
            // A reassignment keeps the tier the player was placed in.
            Some((tier, _)) => tier.clone(),
            None => request.tier.to_owned(),
        };
        let n = p.joins.entry(tier.clone()).or_insert(0);
        *n += 1;
        let bracket = u32::try_from(n.div_ceil(size)).unwrap_or(u32::MAX);
        p.assign
            .insert(request.player.to_owned(), (tier.clone(), bracket));
        Ok(Joined {
            tier,
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
        size: u32,
        profile: Option<(u64, &str)>,
        _ttl_secs: u64,
    ) -> Result<Entered, StoreError> {
        let mut data = self.data();
        let b = Self::bracket(&mut data, bracket);
        if b.meta.contains_key("closed") {
            return Err(StoreError::PeriodClosed);
        }
        if !b.scores.contains_key(player) {
            if b.scores.len() >= size as usize {
                return Ok(Entered::Full);
            }
            b.put(player, 0);
        }
        if let Some((version, json)) = profile {
            let newer = b.profiles.get(player).is_none_or(|(v, _)| *v < version);
            if newer {
                b.profiles
                    .insert(player.to_owned(), (version, json.to_owned()));
            }
        }
        Ok(Entered::Ok)
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

    async fn joined_many(
        &self,
        periods: &[PeriodKeys],
    ) -> Result<Vec<Vec<(String, u64)>>, StoreError> {
        let mut out = Vec::with_capacity(periods.len());
        for p in periods {
            out.push(self.joined(p).await?);
        }
        Ok(out)
    }

    async fn set_profile(
        &self,
        player_keys: &PlayerKeys,
        fields: &[(String, String)],
        order: &[String],
        max_bytes: usize,
        ttl_secs: u64,
    ) -> Result<ProfileWrite, StoreError> {
        let now = self.clock.now().timestamp();
        let mut data = self.data();
        let p = Self::player(&mut data, player_keys, now);
        let mut merged: std::collections::BTreeMap<&str, &str> = p
            .profile
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        for (k, v) in fields {
            merged.insert(k, v);
        }
        let json = crate::league::profile_json(order, &merged);
        if json.len() > max_bytes {
            return Ok(ProfileWrite::TooLarge { bytes: json.len() });
        }
        for (k, v) in fields {
            match p.profile.iter_mut().find(|(f, _)| f == k) {
                Some(slot) => slot.1 = v.clone(),
                None => p.profile.push((k.clone(), v.clone())),
            }
        }
        p.profile_version += 1;
        p.keep_at_least(now, ttl_secs);
        Ok(ProfileWrite::Written {
            version: p.profile_version,
            json,
        })
    }

    async fn cache_profile(
        &self,
        bracket: &BracketKeys,
        player: &str,
        version: u64,
        json: &str,
    ) -> Result<(), StoreError> {
        let mut data = self.data();
        if let Some(b) = data.brackets.get_mut(&bracket.base)
            && b.scores.contains_key(player)
            && b.profiles.get(player).is_none_or(|(v, _)| *v < version)
        {
            b.profiles
                .insert(player.to_owned(), (version, json.to_owned()));
        }
        Ok(())
    }

    async fn profile(
        &self,
        player_keys: &PlayerKeys,
    ) -> Result<(Vec<(String, String)>, u64), StoreError> {
        let now = self.clock.now().timestamp();
        let data = self.data();
        let Some(p) = Self::live_player(&data, player_keys, now) else {
            return Ok((Vec::new(), 0));
        };
        let mut fields = p.profile.clone();
        fields.sort();
        Ok((fields, p.profile_version))
    }

    async fn player_state(
        &self,
        player_keys: &PlayerKeys,
    ) -> Result<Option<PlayerState>, StoreError> {
        let now = self.clock.now().timestamp();
        let data = self.data();
        Ok(Self::live_player(&data, player_keys, now).and_then(|p| p.state.clone()))
    }

    async fn record_state(
        &self,
        player_keys: &PlayerKeys,
        state: &PlayerState,
        ttl_secs: u64,
        trim_before: u64,
    ) -> Result<(), StoreError> {
        let now = self.clock.now().timestamp();
        let mut data = self.data();
        let p = Self::player(&mut data, player_keys, now);
        // Claimed rewards of periods past retention can never be granted again (the
        // rollover never reopens them), and old claim answers are past any retry.
        p.rewards.retain(|source, (done, _)| {
            !*done || source_period(source).is_some_and(|n| n >= trim_before)
        });
        p.claims.retain(|_, (period, _)| *period >= trim_before);
        match &p.state {
            None => p.state = Some(PlayerState::new(state.period, &state.tier, state.bracket)),
            Some(old) if old.period < state.period => {
                let mut new = PlayerState::new(state.period, &state.tier, state.bracket);
                new.previous = Some((old.period, old.tier.clone(), old.bracket));
                p.state = Some(new);
            }
            Some(_) => {}
        }
        // Every placement starts the player's expiry anew (Redis: EXPIRE on each key).
        p.expire_at = Some(now.saturating_add(i64::try_from(ttl_secs).unwrap_or(i64::MAX)));
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
        check: CloseCheck,
    ) -> Result<(Option<String>, Vec<(String, u64)>), StoreError> {
        check.judge(self.now_ms(check.now)).map_err(time_error)?;
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
        // Redis expires closed periods and idle players by TTL; here they are dropped
        // when a period closes, which is when their retention can first run out.
        data.periods
            .retain(|_, p| p.expire_at.is_none_or(|e| e > now));
        data.brackets
            .retain(|_, b| b.expire_at.is_none_or(|e| e > now));
        data.players.retain(|_, p| !p.expired(now));
        Ok(())
    }

    async fn claim_bracket(
        &self,
        bracket: &BracketKeys,
        owner: &str,
        lease_ms: u64,
        check: CloseCheck,
    ) -> Result<BracketClaim, StoreError> {
        check.judge(self.now_ms(check.now)).map_err(time_error)?;
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

    async fn freeze(
        &self,
        bracket: &BracketKeys,
        check: CloseCheck,
    ) -> Result<Vec<(String, u64)>, StoreError> {
        check.judge(self.now_ms(check.now)).map_err(time_error)?;
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

    async fn grant(
        &self,
        grants: &[Grant],
        ttl_secs: u64,
    ) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        let now = self.clock.now().timestamp();
        let mut data = self.data();
        let mut out = Vec::with_capacity(grants.len());
        for (keys, source, grant) in grants {
            let p = Self::player(&mut data, keys, now);
            p.rewards
                .entry(source.clone())
                .or_insert_with(|| (false, grant.clone()));
            p.keep_at_least(now, ttl_secs);
            out.push(Ok(()));
        }
        Ok(out)
    }

    async fn block_grants(
        &self,
        season: &SeasonKeys,
        blocked: &[BlockedGrant],
    ) -> Result<(), StoreError> {
        let mut data = self.data();
        let set = data.blocked.entry(season.base.clone()).or_default();
        for b in blocked {
            set.insert((b.source.clone(), b.player.clone()), b.clone());
        }
        Ok(())
    }

    async fn blocked_grants(&self, season: &SeasonKeys) -> Result<Vec<BlockedGrant>, StoreError> {
        Ok(self
            .data()
            .blocked
            .get(&season.base)
            .map(|set| set.values().cloned().collect())
            .unwrap_or_default())
    }

    async fn unblock_grant(
        &self,
        season: &SeasonKeys,
        source: &str,
        player: &str,
    ) -> Result<(), StoreError> {
        if let Some(set) = self.data().blocked.get_mut(&season.base) {
            set.remove(&(source.to_owned(), player.to_owned()));
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
        let now = self.clock.now().timestamp();
        let data = self.data();
        Ok(Self::live_player(&data, player_keys, now)
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
        claim: &Claim<'_>,
    ) -> Result<Vec<(String, String)>, StoreError> {
        let now = self.clock.now().timestamp();
        let mut data = self.data();
        let p = Self::player(&mut data, player_keys, now);
        if let Some(id) = claim.claim_id
            && let Some((_, answer)) = p.claims.get(id)
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
        if let Some(id) = claim.claim_id {
            p.claims
                .insert(id.to_owned(), (claim.period, claimed.clone()));
        }
        p.keep_at_least(now, claim.ttl_secs);
        Ok(claimed)
    }
}
