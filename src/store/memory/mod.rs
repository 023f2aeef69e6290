//! The embedded in-process store: the same atomic operations as Redis, in memory.
//!
//! Used by tests, the designer's simulator and single-process deployments. Each
//! operation runs inside one critical section, which gives it the same atomicity a
//! Lua script has on Redis. Data is keyed by the same key strings Redis would use, so
//! the two stores cannot disagree about which player lives where.
//!
//! Owns: the in-memory data and its locking. Must not: decide league rules; every
//! behaviour here mirrors the Redis store's and is held to it by the conformance suite.

use std::sync::{Arc, Mutex, MutexGuard};

use chrono::{DateTime, Utc};

use crate::clock::{Clock, SystemClock};
use crate::error::StoreError;
use crate::store::TierJoins;
use crate::store::keys::{BracketKeys, PlayerKeys};
mod adjust;
mod audit;
mod bans;
mod clock;
mod correction;
mod delivery;
mod events;
mod league;
mod ranking;
mod rollover;

use crate::store::{BlockedBracket, BlockedGrant, Now, PlayerState};

/// Hash maps keyed by ids that callers choose: foldhash is several times faster than
/// SipHash here and still seeds each map randomly against collision attacks.
type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// An in-process [`Store`](crate::Store). Cheap to clone; clones share data.
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
    /// season key → its record's fields (`shape`, `ladder`).
    season_fields: HashMap<String, HashMap<String, String>>,
    /// season key → grants that failed, by (source, player).
    blocked: HashMap<String, std::collections::BTreeMap<(String, String), BlockedGrant>>,
    stuck: HashMap<String, std::collections::BTreeMap<String, BlockedBracket>>,
    /// season key → the audit log, ordered by (time, entry) as Redis's sorted set.
    audit: HashMap<String, std::collections::BTreeSet<(i64, String)>>,
    /// player id key ([`PlayerKeys::id`]) → ban record: kept apart from the player's
    /// other records, which expire (Redis: a bucket hash without expiry).
    bans: HashMap<String, String>,
    /// season key → the index of bans, player → record.
    ban_index: HashMap<String, std::collections::BTreeMap<String, String>>,
    periods: HashMap<String, PeriodData>,
    brackets: HashMap<String, BracketData>,
    players: HashMap<String, PlayerData>,
    /// log key → the event log ([`crate::store::EventStore`]).
    logs: HashMap<String, events::LogData>,
    /// Webhook delivery's leases, cursors and dead letters.
    hooks: delivery::HookData,
}

#[derive(Debug, Default)]
struct PeriodData {
    joins: HashMap<String, TierJoins>,
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
    /// request key → (packed, rank if asked for, expires at).
    requests: HashMap<String, (u64, Option<u64>, DateTime<Utc>)>,
    outcomes: HashMap<String, String>,
    /// player → the rate limit's theoretical arrival time (`Rate::admit`).
    rates: HashMap<String, u64>,
    /// (owner, expires at in unix milliseconds).
    lease: Option<(String, i64)>,
    expire_at: Option<i64>,
    /// The bracket's re-settlement, once it has one.
    correction: Option<Box<correction::CorrectionData>>,
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
    /// The player's corrections: `r:<source>` revoked rewards, `t:<source>` tier
    /// credit decisions. They live with the rewards.
    fixes: std::collections::BTreeMap<String, String>,
    /// When the player's state and profile expire (unix seconds), as their records'
    /// deadlines on Redis would.
    expire_at: Option<i64>,
    /// When the player's rewards and claim answers expire: on Redis they are keys of
    /// their own, whose expiry grants and claims raise without touching the state's.
    rewards_expire_at: Option<i64>,
}

impl PlayerData {
    /// Whether nothing of the player is left.
    fn expired(&self, now: i64) -> bool {
        !self.state_live(now) && !self.rewards_live(now)
    }

    /// Whether the state and profile are there (written, and not past their expiry).
    fn state_live(&self, now: i64) -> bool {
        self.expire_at.is_some_and(|e| e > now)
    }

    /// Whether the rewards and claim answers are there.
    fn rewards_live(&self, now: i64) -> bool {
        self.rewards_expire_at.is_some_and(|e| e > now)
    }

    /// Forgets the parts past their expiry, as Redis would have deleted them.
    fn drop_expired(&mut self, now: i64) {
        if !self.state_live(now) {
            self.state = None;
            self.profile.clear();
            self.profile_version = 0;
            self.expire_at = None;
        }
        if !self.rewards_live(now) {
            self.rewards.clear();
            self.claims.clear();
            self.fixes.clear();
            self.rewards_expire_at = None;
        }
    }

    /// Keeps the state and profile at least `ttl_secs` from `now` (like Redis
    /// `EXPIRE` NX, then GT).
    fn keep_at_least(&mut self, now: i64, ttl_secs: u64) {
        self.expire_at = Some(raised(self.expire_at, now, ttl_secs));
    }

    /// Keeps the rewards and claim answers at least `ttl_secs` from `now`.
    fn keep_rewards_at_least(&mut self, now: i64, ttl_secs: u64) {
        self.rewards_expire_at = Some(raised(self.rewards_expire_at, now, ttl_secs));
    }
}

/// `at`, raised to `ttl_secs` from `now` where it was earlier (or unset).
fn raised(at: Option<i64>, now: i64, ttl_secs: u64) -> i64 {
    let until = now.saturating_add(i64::try_from(ttl_secs).unwrap_or(i64::MAX));
    at.map_or(until, |e| e.max(until))
}

/// The period of a reward source `period/tier/bracket`.
fn source_period(source: &str) -> Option<u64> {
    source.split('/').next()?.parse().ok()
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
            if p.rewards_live(now) {
                rewards += p.rewards.len() as u64;
                claims += p.claims.len() as u64;
            }
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
        now.at(self.clock.now().timestamp_millis())
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
        let id = keys.id();
        let fresh = match data.players.get(&id) {
            Some(p) => p.expired(now),
            None => true,
        };
        if fresh {
            data.players.insert(id.clone(), PlayerData::default());
        }
        match data.players.get_mut(&id) {
            Some(p) => {
                p.drop_expired(now);
                p
            }
            None => unreachable!("inserted above"),
        }
    }

    /// The player's data if it exists and has not expired.
    fn live_player<'a>(data: &'a Data, keys: &PlayerKeys, now: i64) -> Option<&'a PlayerData> {
        data.players.get(&keys.id()).filter(|p| !p.expired(now))
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
