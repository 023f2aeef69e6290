//! The engine: validates input, works out periods and tiers, and drives a [`Store`].
//!
//! [`League`] is what a game server embeds. Every operation runs in a `tracing` span.
//! The engine never writes before its input is validated, so bad input writes nothing.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, Timelike, Utc};
use serde::Serialize;
use tracing::instrument;

use crate::clock::{Clock, SystemClock};
use crate::error::{Error, InputError, StoreError, TimeRefusal};
use crate::season::calendar::{Period, PeriodId};
use crate::season::{JoinPolicy, Season};
use crate::store::keys::{BracketKeys, Keys, PeriodKeys, PlayerKeys};
use crate::store::{
    Entered, JoinRequest, Now, PlayerState, ProfileWrite, RawEntry, Store, TimeCheck, Update,
    UpdateReply, UpdateStatus,
};

/// Largest page a standings read returns.
pub const MAX_PAGE: u64 = 1000;
/// Largest placement cache before it is cleared (one entry per active player).
const CACHE_LIMIT: usize = 1 << 20;
/// How often the offset between this process's clock and the store's is measured
/// again. Clocks drift by well under a millisecond a minute.
const OFFSET_REFRESH: Duration = Duration::from_secs(30);

/// Where a player is placed for a period.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Placement {
    /// The player.
    pub player: String,
    /// The period id.
    pub period: PeriodId,
    /// The tier name.
    pub tier: String,
    /// The bracket number, from 1.
    pub bracket: u32,
}

/// The answer to a score update.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Submission {
    /// The player.
    pub player: String,
    /// The period the update's time fell in.
    pub period: PeriodId,
    /// The player's tier.
    pub tier: String,
    /// The player's bracket.
    pub bracket: u32,
    /// The score after the update (for a repeated request id: after the first one).
    pub score: u64,
    /// 1-based rank after the update (for a repeated request id: the first answer's).
    pub rank: u64,
    /// False when the request id had been seen: nothing changed.
    pub applied: bool,
}

/// One row of standings.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Standing {
    /// 1-based rank.
    pub rank: u64,
    /// The player.
    pub player: String,
    /// The exact score.
    pub score: u64,
    /// The cached profile fields (an empty object when none are set).
    pub profile: serde_json::Value,
}

/// A page of one bracket's standings.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Standings {
    /// The period.
    pub period: PeriodId,
    /// The tier.
    pub tier: String,
    /// The bracket.
    pub bracket: u32,
    /// Players in the bracket.
    pub players: u64,
    /// The requested entries, best first.
    pub entries: Vec<Standing>,
}

/// A player's position in a period.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PlayerView {
    /// The player.
    pub player: String,
    /// The period.
    pub period: PeriodId,
    /// The tier they are placed in, or would join next.
    pub tier: String,
    /// Their bracket, if placed.
    pub bracket: Option<u32>,
    /// Their 1-based rank, if placed.
    pub rank: Option<u64>,
    /// Their score, if placed.
    pub score: Option<u64>,
}

/// Players and brackets of one tier in a period.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct TierCount {
    /// The tier.
    pub tier: String,
    /// Players placed.
    pub players: u64,
    /// Brackets opened.
    pub brackets: u64,
}

/// Options of [`League::submit`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SubmitOptions {
    /// Makes the update idempotent within the season's window. Retries must send the
    /// same id *and* the same `at`: the id is remembered in the bracket of `at`'s period.
    pub request_id: Option<String>,
    /// The event's time; defaults to the clock's now.
    pub at: Option<DateTime<Utc>>,
}

impl SubmitOptions {
    /// Sets the request id.
    pub fn request_id(mut self, id: impl Into<String>) -> Self {
        self.request_id = Some(id.into());
        self
    }

    /// Sets the event time.
    pub fn at(mut self, at: DateTime<Utc>) -> Self {
        self.at = Some(at);
        self
    }
}

/// One entry of [`League::submit_many`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct BatchItem {
    /// The player.
    pub player: String,
    /// The value.
    pub value: i64,
    /// Options.
    pub options: SubmitOptions,
}

impl BatchItem {
    /// An item with default options.
    pub fn new(player: impl Into<String>, value: i64) -> Self {
        Self {
            player: player.into(),
            value,
            options: SubmitOptions::default(),
        }
    }

    /// With these options.
    pub fn with_options(mut self, options: SubmitOptions) -> Self {
        self.options = options;
        self
    }
}

/// A league: one season on one store.
///
/// # The league clock
///
/// Whether a period has started, has ended or may be closed is decided by one clock
/// that every process shares: the store's ([`Store::now`]: Redis's `TIME`, read inside
/// the script that decides; the embedded store's clock). A league built with
/// [`League::new`] uses it, and stamps events that carry no time with its own clock
/// corrected by the measured offset to the store's. A league built with
/// [`League::with_clock`] uses the given clock instead, on either store: for tests,
/// simulations and replays in which every process uses that same clock. See the
/// `[clock]` section of the season ([`crate::season::ClockRules`]) for the rules.
#[derive(Debug)]
pub struct League<S: Store> {
    season: Arc<Season>,
    store: S,
    clock: Arc<dyn Clock>,
    /// True when `clock` is the league clock (built with [`League::with_clock`]).
    injected: bool,
    /// The store's clock minus this process's, in milliseconds, and when measured.
    offset: Mutex<(i64, Option<Instant>)>,
    keys: Keys,
    /// player → their placement in a period. A placement never changes once made, so
    /// a hit here saves a round trip (and the key building) on every later update.
    cache: Mutex<FastMap<String, (PeriodId, Arc<Placed>)>>,
    /// One shared [`Placed`] per bracket, so cached players of a bracket share keys.
    brackets: Mutex<FastMap<(PeriodId, usize, u32), Arc<Placed>>>,
    /// The keys of the latest period used, built once per period.
    period_keys: Mutex<Option<(PeriodId, Arc<PeriodKeys>)>>,
    /// The season's profile fields, sorted: the order of a profile's JSON.
    profile_order: Vec<String>,
}

/// The caches' maps: foldhash is fast and seeds each map randomly.
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// A bracket a player is placed in, with its keys built once.
#[derive(Debug)]
pub(crate) struct Placed {
    pub(crate) tier: String,
    pub(crate) bracket: u32,
    pub(crate) keys: BracketKeys,
}

/// Checks a player id: 1-64 bytes of UTF-8, no control characters.
pub fn validate_player(id: &str) -> Result<(), InputError> {
    let why = if id.is_empty() {
        Some("it is empty")
    } else if id.len() > 64 {
        Some("it is longer than 64 bytes")
    } else if id.chars().any(char::is_control) {
        Some("it contains a control character")
    } else {
        None
    };
    match why {
        Some(why) => Err(InputError::PlayerId {
            id: truncate(id),
            why,
        }),
        None => Ok(()),
    }
}

pub(crate) fn validate_request_id(id: &str) -> Result<(), InputError> {
    let why = if id.is_empty() {
        Some("it is empty")
    } else if id.len() > 128 {
        Some("it is longer than 128 bytes")
    } else if id.chars().any(char::is_control) {
        Some("it contains a control character")
    } else {
        None
    };
    match why {
        Some(why) => Err(InputError::RequestId {
            id: truncate(id),
            why,
        }),
        None => Ok(()),
    }
}

fn truncate(s: &str) -> String {
    s.chars().take(80).collect()
}

/// A time as the league reads it: a leap second (`23:59:60.x`, which chrono keeps as a
/// nanosecond count of a second or more) is the last instant of the second before it,
/// so it stays in the period of that second and orders before the next one.
pub(crate) fn normalize_time(at: DateTime<Utc>) -> DateTime<Utc> {
    if at.nanosecond() >= 1_000_000_000 {
        at.with_nanosecond(999_999_999).unwrap_or(at)
    } else {
        at
    }
}

fn millis(at: DateTime<Utc>) -> i64 {
    at.timestamp_millis()
}

fn from_millis(ms: i64) -> DateTime<Utc> {
    DateTime::<Utc>::from_timestamp_millis(ms).unwrap_or(DateTime::<Utc>::MIN_UTC)
}

fn duration_ms(d: chrono::TimeDelta) -> u64 {
    u64::try_from(d.num_milliseconds()).unwrap_or(0)
}

/// A profile as JSON: the fields of `order` (the season's, sorted) that are set, in
/// that order, encoded exactly as serde_json encodes a map of strings. The Redis store
/// computes the same bytes in Lua to check `max_bytes` atomically.
pub(crate) fn profile_json(order: &[String], fields: &BTreeMap<&str, &str>) -> String {
    let mut map = serde_json::Map::new();
    for name in order {
        if let Some(v) = fields.get(name.as_str()) {
            map.insert(name.clone(), serde_json::Value::String((*v).to_owned()));
        }
    }
    serde_json::Value::Object(map).to_string()
}

impl<S: Store> League<S> {
    /// A league for `season` on `store`, deciding time by the store's clock.
    pub fn new(season: Season, store: S) -> Self {
        Self::build(season, store, Arc::new(SystemClock), false)
    }

    /// A league whose league clock is `clock`, on either store, instead of the store's
    /// own: every time-dependent decision (period started, ended, closable; event too
    /// far ahead) uses it. Only for tests, simulations and replays in which every
    /// process of the league uses this same clock: two processes with different
    /// injected clocks would disagree about the league.
    pub fn with_clock(season: Season, store: S, clock: Arc<dyn Clock>) -> Self {
        Self::build(season, store, clock, true)
    }

    fn build(season: Season, store: S, clock: Arc<dyn Clock>, injected: bool) -> Self {
        let keys = Keys::of(&season);
        let mut profile_order = season.profiles.fields.clone();
        profile_order.sort();
        Self {
            profile_order,
            season: Arc::new(season),
            store,
            clock,
            injected,
            offset: Mutex::new((0, None)),
            keys,
            cache: Mutex::new(FastMap::default()),
            brackets: Mutex::new(FastMap::default()),
            period_keys: Mutex::new(None),
        }
    }

    /// The season.
    pub fn season(&self) -> &Season {
        &self.season
    }

    /// The store.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// This process's clock: the league clock when built with [`League::with_clock`];
    /// otherwise the local clock, which [`League::now`] corrects to the store's.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// Whether the league clock is a clock given to [`League::with_clock`].
    pub fn has_injected_clock(&self) -> bool {
        self.injected
    }

    /// The league clock's current time (see the type's docs): the injected clock, or
    /// the store's clock (asked directly when that is free, otherwise this process's
    /// clock corrected by an offset to the store's measured every 30 s).
    pub async fn now(&self) -> Result<DateTime<Utc>, Error> {
        if self.injected {
            return Ok(self.clock.now());
        }
        if self.store.now_is_free() {
            return Ok(from_millis(self.store.now().await?));
        }
        {
            let o = self.offset.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(at) = o.1
                && at.elapsed() < OFFSET_REFRESH
            {
                return Ok(self.clock.now() + chrono::TimeDelta::milliseconds(o.0));
            }
        }
        let sent = Instant::now();
        let local = self.clock.now();
        let remote = self.store.now().await?;
        // The store read its clock about half a round trip after we read ours.
        let half = chrono::TimeDelta::from_std(sent.elapsed() / 2).unwrap_or_default();
        let offset = remote - millis(local + half);
        *self.offset.lock().unwrap_or_else(|e| e.into_inner()) = (offset, Some(Instant::now()));
        Ok(self.clock.now() + chrono::TimeDelta::milliseconds(offset))
    }

    /// The clock argument of store operations.
    pub(crate) fn now_arg(&self) -> Now {
        if self.injected {
            Now::At(millis(self.clock.now()))
        } else {
            Now::Store
        }
    }

    /// The allowed skew.
    pub(crate) fn skew(&self) -> chrono::TimeDelta {
        chrono::TimeDelta::from_std(self.season.clock.max_skew).unwrap_or_default()
    }

    /// When a period stops accepting events and may be closed: its end plus the skew.
    pub fn closes_at(&self, period: &Period) -> DateTime<Utc> {
        period.end + self.skew()
    }

    fn time_check(&self, period: &Period, at: DateTime<Utc>) -> TimeCheck {
        TimeCheck {
            now: self.now_arg(),
            at_ms: millis(at),
            start_ms: millis(period.start),
            closes_ms: millis(self.closes_at(period)),
            skew_ms: self.season.clock.max_skew.as_millis() as i64,
        }
    }

    /// The error for a store's time refusal of an event at `at` in `period`.
    fn time_error(&self, why: TimeRefusal, period: &Period, at: DateTime<Utc>) -> Error {
        match why {
            TimeRefusal::Future { ahead_ms, now_ms } => InputError::FutureTime {
                at,
                now: from_millis(now_ms),
                ahead_ms,
                max_skew_ms: self.season.clock.max_skew.as_millis() as u64,
            }
            .into(),
            TimeRefusal::NotYet { wait_ms } => InputError::NotStarted {
                period: period.id,
                starts: period.start,
                retry_after_ms: wait_ms.max(1),
            }
            .into(),
        }
    }

    /// Checks an event's time against the league clock before anything is written:
    /// not in the future beyond the skew, in a period that has started, and (unless it
    /// may be a retry, which the store answers from its idempotency record) in a period
    /// that still accepts events.
    fn check_time(
        &self,
        period: &Period,
        at: DateTime<Utc>,
        now: DateTime<Utc>,
        maybe_retry: bool,
    ) -> Result<(), Error> {
        if at > now + self.skew() {
            return Err(InputError::FutureTime {
                at,
                now,
                ahead_ms: duration_ms(at - now),
                max_skew_ms: self.season.clock.max_skew.as_millis() as u64,
            }
            .into());
        }
        if now < period.start {
            return Err(InputError::NotStarted {
                period: period.id,
                starts: period.start,
                retry_after_ms: duration_ms(period.start - now).max(1),
            }
            .into());
        }
        if now >= self.closes_at(period) && !maybe_retry {
            return Err(InputError::PeriodClosed { period: period.id }.into());
        }
        Ok(())
    }

    /// Seconds a player's records live after a placement in `period`: until
    /// `retention.player_ttl` after the period's end.
    pub(crate) fn player_ttl_secs(&self, period: &Period, now: DateTime<Utc>) -> u64 {
        let until_end = u64::try_from((period.end - now).num_seconds()).unwrap_or(0);
        self.season
            .retention
            .player_ttl
            .as_secs()
            .saturating_add(until_end)
            .max(1)
    }

    /// The key builder.
    pub fn keys(&self) -> &Keys {
        &self.keys
    }

    /// The period containing `at` (default: this process's clock; see
    /// [`League::now`] for the league clock).
    pub fn period_at(&self, at: Option<DateTime<Utc>>) -> Result<Period, InputError> {
        let at = normalize_time(at.unwrap_or_else(|| self.clock.now()));
        match self.season.calendar.period_at(at) {
            Some(p) => Ok(p),
            None if at < self.season.schedule.start => Err(InputError::BeforeSeason {
                at,
                start: self.season.schedule.start,
            }),
            None => Err(InputError::OutsideCalendar {
                at,
                ends: self.season.calendar.last_period().end,
            }),
        }
    }

    /// The period with id `id`.
    pub fn period(&self, id: PeriodId) -> Result<Period, InputError> {
        self.season
            .calendar
            .period(id)
            .ok_or(InputError::UnknownPeriod { period: id })
    }

    fn tick(&self, period: &Period, at: DateTime<Utc>) -> Result<u64, InputError> {
        let millis = (at - period.start).num_milliseconds();
        let tick =
            u64::try_from(millis).unwrap_or(0) / self.season.scoring.time_resolution.millis();
        if tick >= self.season.packing.ticks() {
            return Err(InputError::Other(format!(
                "period {} is longer than the season's validated longest period; \
                 report this with the season file",
                period.id
            )));
        }
        Ok(tick)
    }

    fn tier_names(&self) -> String {
        self.season
            .tiers
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn check_tier(&self, tier: &str) -> Result<(), InputError> {
        match self.season.tier(tier) {
            Some(_) => Ok(()),
            None => Err(InputError::UnknownTier {
                tier: truncate(tier),
                known: self.tier_names(),
            }),
        }
    }

    fn tier_name(&self, index: usize) -> String {
        self.season
            .tiers
            .get(index)
            .or(self.season.tiers.first())
            .map(|t| t.name.clone())
            .unwrap_or_default()
    }

    /// The tier a player joins in `period`: the lowest for a new player; otherwise
    /// the next tier of their last outcome (computed on the spot if the rollover has
    /// not reached their bracket yet), then the idle policy for each period skipped.
    /// With `close`, an unclosed previous bracket is closed on the spot (refused with
    /// [`InputError::StillClosing`] until its period may close by the league clock).
    async fn next_tier(
        &self,
        player: &str,
        state: Option<&PlayerState>,
        period: PeriodId,
        close: Option<DateTime<Utc>>,
    ) -> Result<String, Error> {
        let Some(s) = state else {
            return Ok(self.tier_name(0));
        };
        let Some((index, _)) = self.season.tier(&s.tier) else {
            // The tier was removed from the season: start again at the bottom.
            return Ok(self.tier_name(0));
        };
        if s.period >= period {
            return Ok(s.tier.clone());
        }
        let last = match close {
            Some(now) => {
                self.outcome_in(s.period, &s.tier, s.bracket, player, now)
                    .await?
            }
            None => {
                self.peek_outcome(s.period, index, &s.tier, s.bracket, player)
                    .await?
            }
        };
        let (base, skipped) = match last {
            Some(o) => (
                self.season.tier(&o.next_tier).map_or(index, |(i, _)| i),
                period - s.period - 1,
            ),
            // Never reached the board (or its record has expired): the period counts
            // as skipped.
            None => (index, period - s.period),
        };
        Ok(self.tier_name(crate::rollover::outcome::after_skipped(
            &self.season,
            base,
            skipped,
        )))
    }

    fn cached(&self, player: &str, period: PeriodId) -> Option<Arc<Placed>> {
        let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        match cache.get(player) {
            Some((p, placed)) if *p == period => Some(placed.clone()),
            _ => None,
        }
    }

    /// The bracket's keys, built once per bracket and shared.
    pub(crate) fn placed(&self, period: PeriodId, tier: &str, bracket: u32) -> Arc<Placed> {
        // Keyed by tier index so a lookup allocates nothing; an unknown tier name
        // (from data of an older season file) gets an index past the season's.
        let index = self
            .season
            .tier(tier)
            .map_or(self.season.tiers.len(), |(i, _)| i);
        let mut brackets = self.brackets.lock().unwrap_or_else(|e| e.into_inner());
        if brackets.len() >= CACHE_LIMIT {
            brackets.clear();
        }
        if let Some(hit) = brackets.get(&(period, index, bracket))
            && hit.tier == tier
        {
            return hit.clone();
        }
        let placed = Arc::new(Placed {
            tier: tier.to_owned(),
            bracket,
            keys: self.keys.bracket(period, tier, bracket),
        });
        brackets.insert((period, index, bracket), placed.clone());
        placed
    }

    /// The keys of a period, built once per period.
    fn period_keys(&self, period: PeriodId) -> Arc<PeriodKeys> {
        let mut slot = self.period_keys.lock().unwrap_or_else(|e| e.into_inner());
        match &*slot {
            Some((p, keys)) if *p == period => keys.clone(),
            _ => {
                let keys = Arc::new(self.keys.period(period));
                *slot = Some((period, keys.clone()));
                keys
            }
        }
    }

    fn remember(&self, player: &str, period: PeriodId, tier: &str, bracket: u32) -> Arc<Placed> {
        let placed = self.placed(period, tier, bracket);
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= CACHE_LIMIT {
            cache.clear();
        }
        cache.insert(player.to_owned(), (period, placed.clone()));
        placed
    }

    fn forget(&self, player: &str) {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        cache.remove(player);
    }

    /// Places `player` in a bracket of their tier for the period of `at` (default now).
    /// Joining again returns the same bracket.
    #[instrument(skip(self), err(level = "debug"))]
    pub async fn join(&self, player: &str, at: Option<DateTime<Utc>>) -> Result<Placement, Error> {
        validate_player(player)?;
        let now = self.now().await?;
        let at = normalize_time(at.unwrap_or(now));
        let period = self.period_at(Some(at))?;
        self.check_time(&period, at, now, false)?;
        let placed = self.place(player, &period, at, now).await?;
        Ok(Placement {
            player: player.to_owned(),
            period: period.id,
            tier: placed.tier.clone(),
            bracket: placed.bracket,
        })
    }

    /// The error of a refused join.
    fn join_error(&self, e: StoreError, period: &Period, at: DateTime<Utc>) -> Error {
        match e {
            StoreError::PeriodClosed => InputError::PeriodClosed { period: period.id }.into(),
            StoreError::Time(why) => self.time_error(why, period, at),
            other => other.into(),
        }
    }

    async fn place(
        &self,
        player: &str,
        period: &Period,
        at: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<Arc<Placed>, Error> {
        if let Some(hit) = self.cached(player, period.id) {
            return Ok(hit);
        }
        let pkeys = self.keys.player(player);
        let state = self.store.player_state(&pkeys).await?;
        let tier = self
            .next_tier(player, state.as_ref(), period.id, Some(now))
            .await?;
        let size = self.season.brackets.size;
        let ttl = self.ttl_secs(period.id);
        let mut replace_full = None;
        // A bracket is found full only after the store lost data under running game
        // servers (its counter restarted while its board survived); each pass moves
        // the player past a full bracket, so a few passes always suffice.
        for _ in 0..8 {
            let request = JoinRequest {
                player,
                tier: &tier,
                size,
                time: self.time_check(period, at),
                replace_full,
                ttl_secs: ttl,
            };
            let joined = self
                .store
                .join(&self.period_keys(period.id), &request)
                .await
                .map_err(|e| self.join_error(e, period, at))?;
            let placed = self.placed(period.id, &joined.tier, joined.bracket);
            let profile = self.profile_json(&pkeys).await?;
            let entered = self
                .store
                .enter(
                    &placed.keys,
                    player,
                    size,
                    profile.as_ref().map(|(v, json)| (*v, json.as_str())),
                    ttl,
                )
                .await
                .map_err(|e| self.join_error(e, period, at))?;
            match entered {
                Entered::Ok => {}
                _ => {
                    tracing::warn!(
                        player,
                        period = period.id,
                        tier = %joined.tier,
                        bracket = joined.bracket,
                        "bracket found full (the store lost data?); placing the player anew"
                    );
                    replace_full = Some(joined.bracket);
                    continue;
                }
            }
            // Entering the board and recording state are idempotent, so a join that
            // was interrupted between its steps is completed by the next join or score.
            self.store
                .record_state(
                    &pkeys,
                    &PlayerState::new(period.id, joined.tier.clone(), joined.bracket),
                    self.player_ttl_secs(period, now),
                    // Rewards of periods closed longer ago than the retention can never
                    // be granted again: their claimed entries (and old claim answers)
                    // go.
                    period
                        .id
                        .saturating_sub(u64::from(self.season.retention.periods) + 1),
                )
                .await?;
            return Ok(self.remember(player, period.id, &joined.tier, joined.bracket));
        }
        Err(StoreError::Protocol(format!(
            "could not place {player:?} in period {}: every bracket tried was full; the \
             join counters disagree with the boards",
            period.id
        ))
        .into())
    }

    /// Where `player` is in the period, placing them if the season joins on first score.
    async fn placement_for_update(
        &self,
        player: &str,
        period: &Period,
        at: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<Arc<Placed>, Error> {
        if let Some(hit) = self.cached(player, period.id) {
            return Ok(hit);
        }
        if let Some((tier, bracket)) = self
            .store
            .placement(&self.period_keys(period.id), player)
            .await?
        {
            return Ok(self.remember(player, period.id, &tier, bracket));
        }
        match self.season.brackets.join {
            JoinPolicy::OnFirstScore => {
                // A first score is a join: it must pass the join's time rules even when
                // it carries a request id.
                self.check_time(period, at, now, false)?;
                self.place(player, period, at, now).await
            }
            JoinPolicy::Explicit => Err(InputError::NotJoined {
                player: player.to_owned(),
                period: period.id,
            }
            .into()),
        }
    }

    fn update<'a>(
        &self,
        player: &'a str,
        value: i64,
        item: &Prepared,
        request_id: Option<&str>,
        bkeys: &BracketKeys,
    ) -> Update<'a> {
        let window = self.season.scoring.idempotency_window.as_secs().max(1);
        Update {
            player,
            mode: self.season.scoring.mode,
            value,
            tick: item.tick,
            max_score: self.season.packing.max_score(),
            span: self.season.packing.span(),
            request: request_id.map(|id| (bkeys.request(player, id), window)),
            time: self.time_check(&item.period, item.at),
        }
    }

    fn submission(
        &self,
        player: &str,
        item: &Prepared,
        placed: &Placed,
        reply: UpdateReply,
        value: i64,
    ) -> Result<Submission, Error> {
        let period = item.period.id;
        let applied = match reply.status {
            UpdateStatus::Applied => true,
            UpdateStatus::Duplicate => false,
            UpdateStatus::Closed => return Err(InputError::PeriodClosed { period }.into()),
            UpdateStatus::Refused(why) => return Err(self.time_error(why, &item.period, item.at)),
            UpdateStatus::NotPlaced => {
                return Err(StoreError::Protocol(format!(
                    "{player:?} is still not on the board of {} after being placed again",
                    placed.keys.base
                ))
                .into());
            }
            UpdateStatus::OutOfRange { current } => {
                let (cur, _) = self.season.packing.unpack(current);
                let result = match self.season.scoring.mode {
                    crate::season::packing::ScoreMode::Increment => cur as i128 + value as i128,
                    _ => value as i128,
                };
                return Err(InputError::Score(
                    crate::season::packing::ScoreRangeError::OutOfRange {
                        current: cur,
                        value,
                        result,
                        max: self.season.packing.max_score(),
                    },
                )
                .into());
            }
        };
        let (score, _) = self.season.packing.unpack(reply.packed);
        Ok(Submission {
            player: player.to_owned(),
            period,
            tier: placed.tier.clone(),
            bracket: placed.bracket,
            score,
            rank: reply.rank + 1,
            applied,
        })
    }

    /// Checks what can be checked before any write: ids, value range, time.
    fn precheck(
        &self,
        player: &str,
        value: i64,
        options: &SubmitOptions,
        now: DateTime<Utc>,
    ) -> Result<Prepared, Error> {
        validate_player(player)?;
        if let Some(id) = &options.request_id {
            validate_request_id(id)?;
        }
        let max = self.season.packing.max_score();
        let mode = self.season.scoring.mode;
        // Values that can never be valid are refused before the player is placed, so
        // such an update does not even create a placement.
        let hopeless = match mode {
            crate::season::packing::ScoreMode::Increment => value.unsigned_abs() > max,
            _ => value < 0 || value as u64 > max,
        };
        if hopeless {
            return Err(
                InputError::Score(crate::season::packing::ScoreRangeError::OutOfRange {
                    current: 0,
                    value,
                    result: value as i128,
                    max,
                })
                .into(),
            );
        }
        let at = normalize_time(options.at.unwrap_or(now));
        let period = self.period_at(Some(at))?;
        // An update with a request id may be the retry of one that was applied: the
        // store answers it from its idempotency record even once the period closed.
        self.check_time(&period, at, now, options.request_id.is_some())?;
        let tick = self.tick(&period, at)?;
        Ok(Prepared { period, tick, at })
    }

    /// Submits a score value for `player` (a delta, a best or a new value by the
    /// season's mode). Refused updates write nothing.
    ///
    /// When the store fails after the update may have been applied, the error is
    /// [`StoreError::Unknown`]: resend only an update that carries a request id.
    #[instrument(skip(self, options), fields(request_id = options.request_id.as_deref()), err(level = "debug"))]
    pub async fn submit(
        &self,
        player: &str,
        value: i64,
        options: SubmitOptions,
    ) -> Result<Submission, Error> {
        let now = self.now().await?;
        let item = self.precheck(player, value, &options, now)?;
        let request_id = options.request_id.as_deref();
        let mut placed = self
            .placement_for_update(player, &item.period, item.at, now)
            .await?;
        let mut reply = self
            .store
            .update(
                &placed.keys,
                &self.update(player, value, &item, request_id, &placed.keys),
            )
            .await?;
        if reply.status == UpdateStatus::NotPlaced {
            // The placement this process remembered (or the store had) is not on the
            // board: the store lost data. Place the player again, once.
            placed = self.replace(player, &item, now).await?;
            reply = self
                .store
                .update(
                    &placed.keys,
                    &self.update(player, value, &item, request_id, &placed.keys),
                )
                .await?;
        }
        self.submission(player, &item, &placed, reply, value)
    }

    /// Forgets the player's placement and places them again (after an update found
    /// them missing from the board they were placed on).
    async fn replace(
        &self,
        player: &str,
        item: &Prepared,
        now: DateTime<Utc>,
    ) -> Result<Arc<Placed>, Error> {
        self.forget(player);
        tracing::warn!(
            player,
            period = item.period.id,
            "player missing from their board (the store lost data?); placing them again"
        );
        self.check_time(&item.period, item.at, now, false)?;
        self.place(player, &item.period, item.at, now).await
    }

    /// Submits many updates; the updates themselves go to the store in one pipelined
    /// round trip (placements of players not seen before cost their own round trips).
    ///
    /// Every item gets exactly one result, in order: applied (or a duplicate),
    /// refused with the reason, or [`StoreError::Unknown`] when the store failed after
    /// the item may have been applied. Resend only unknown items with a request id.
    #[instrument(skip(self, items), fields(items = items.len()))]
    pub async fn submit_many(&self, items: &[BatchItem]) -> Vec<Result<Submission, Error>> {
        let now = match self.now().await {
            Ok(now) => now,
            // Without the league clock nothing can be decided (or was written).
            Err(e) => return items.iter().map(|_| Err(copy_error(&e))).collect(),
        };
        let mut results: Vec<Option<Result<Submission, Error>>> = Vec::with_capacity(items.len());
        let mut pending = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let prepared = match self.precheck(&item.player, item.value, &item.options, now) {
                Ok(p) => self
                    .placement_for_update(&item.player, &p.period, p.at, now)
                    .await
                    .map(|placed| (p, placed)),
                Err(e) => Err(e),
            };
            match prepared {
                Ok(p) => {
                    results.push(None);
                    pending.push((i, p));
                }
                Err(e) => results.push(Some(Err(e))),
            }
        }
        let batch: Vec<(&BracketKeys, Update<'_>)> = pending
            .iter()
            .map(|(i, (prepared, placed))| {
                let item = &items[*i];
                let update = self.update(
                    &item.player,
                    item.value,
                    prepared,
                    item.options.request_id.as_deref(),
                    &placed.keys,
                );
                (&placed.keys, update)
            })
            .collect();
        let replies = match self.store.update_many(&batch).await {
            Ok(r) if r.len() == pending.len() => r.into_iter().map(Ok).collect::<Vec<_>>(),
            Ok(r) => {
                let e = StoreError::Protocol(format!(
                    "{} replies to {} updates",
                    r.len(),
                    pending.len()
                ));
                pending.iter().map(|_| Err(e.clone())).collect()
            }
            Err(e) => pending.iter().map(|_| Err(e.clone())).collect(),
        };
        drop(batch);
        for ((i, (prepared, placed)), reply) in pending.into_iter().zip(replies) {
            let item = &items[i];
            let result = match reply {
                Err(e) => Err(e.into()),
                Ok(reply) if reply.status == UpdateStatus::NotPlaced => {
                    self.submit_again(item, &prepared, now).await
                }
                Ok(reply) => self.submission(&item.player, &prepared, &placed, reply, item.value),
            };
            results[i] = Some(result);
        }
        results
            .into_iter()
            .map(|r| {
                r.unwrap_or_else(
                    || Err(InputError::Other("internal: missing result".into()).into()),
                )
            })
            .collect()
    }

    /// One batch item whose player was missing from their board: placed again and
    /// sent on its own.
    async fn submit_again(
        &self,
        item: &BatchItem,
        prepared: &Prepared,
        now: DateTime<Utc>,
    ) -> Result<Submission, Error> {
        let placed = self.replace(&item.player, prepared, now).await?;
        let update = self.update(
            &item.player,
            item.value,
            prepared,
            item.options.request_id.as_deref(),
            &placed.keys,
        );
        let reply = self.store.update(&placed.keys, &update).await?;
        self.submission(&item.player, prepared, &placed, reply, item.value)
    }

    /// The period `period`, or the league clock's current one.
    pub(crate) async fn resolve_period(&self, period: Option<PeriodId>) -> Result<Period, Error> {
        match period {
            Some(id) => Ok(self.period(id)?),
            None => {
                let now = self.now().await?;
                Ok(self.period_at(Some(now))?)
            }
        }
    }

    fn standing(&self, offset: u64, i: usize, e: RawEntry) -> Standing {
        let (score, _) = self.season.packing.unpack(e.packed);
        let profile = e
            .profile
            .and_then(|p| serde_json::from_str(&p).ok())
            .unwrap_or_else(|| serde_json::Value::Object(Default::default()));
        Standing {
            rank: offset + i as u64 + 1,
            player: e.player,
            score,
            profile,
        }
    }

    /// A page of a bracket's standings (best first) with cached profiles, in one
    /// round trip. `period` defaults to the current one.
    #[instrument(skip(self), err(level = "debug"))]
    pub async fn standings(
        &self,
        tier: &str,
        bracket: u32,
        period: Option<PeriodId>,
        offset: u64,
        limit: u64,
    ) -> Result<Standings, Error> {
        self.check_tier(tier)?;
        if bracket == 0 {
            return Err(InputError::BadBracket { bracket }.into());
        }
        if limit == 0 || limit > MAX_PAGE {
            return Err(InputError::BadLimit {
                limit,
                max: MAX_PAGE,
            }
            .into());
        }
        let period = self.resolve_period(period).await?;
        let page = self
            .store
            .standings(&self.keys.bracket(period.id, tier, bracket), offset, limit)
            .await?;
        let offset = page.offset;
        Ok(Standings {
            period: period.id,
            tier: tier.to_owned(),
            bracket,
            players: page.total,
            entries: page
                .entries
                .into_iter()
                .enumerate()
                .map(|(i, e)| self.standing(offset, i, e))
                .collect(),
        })
    }

    /// The entries around `player` in their bracket: up to `radius` above and below.
    /// `None` if the player is not placed in the period.
    #[instrument(skip(self), err(level = "debug"))]
    pub async fn around(
        &self,
        player: &str,
        radius: u64,
        period: Option<PeriodId>,
    ) -> Result<Option<Standings>, Error> {
        validate_player(player)?;
        if radius > MAX_PAGE / 2 {
            return Err(InputError::BadLimit {
                limit: radius,
                max: MAX_PAGE / 2,
            }
            .into());
        }
        let period = self.resolve_period(period).await?;
        let Some((tier, bracket)) = self
            .store
            .placement(&self.keys.period(period.id), player)
            .await?
        else {
            return Ok(None);
        };
        let Some(page) = self
            .store
            .around(
                &self.keys.bracket(period.id, &tier, bracket),
                player,
                radius,
                radius,
            )
            .await?
        else {
            return Ok(None);
        };
        let offset = page.offset;
        Ok(Some(Standings {
            period: period.id,
            tier,
            bracket,
            players: page.total,
            entries: page
                .entries
                .into_iter()
                .enumerate()
                .map(|(i, e)| self.standing(offset, i, e))
                .collect(),
        }))
    }

    /// The player's tier, bracket, rank and score in a period (default: current).
    #[instrument(skip(self), err(level = "debug"))]
    pub async fn player(
        &self,
        player: &str,
        period: Option<PeriodId>,
    ) -> Result<PlayerView, Error> {
        validate_player(player)?;
        let period = self.resolve_period(period).await?;
        let placed = self
            .store
            .placement(&self.keys.period(period.id), player)
            .await?;
        let Some((tier, bracket)) = placed else {
            let state = self.store.player_state(&self.keys.player(player)).await?;
            let tier = self
                .next_tier(player, state.as_ref(), period.id, None)
                .await?;
            return Ok(PlayerView {
                player: player.to_owned(),
                period: period.id,
                tier,
                bracket: None,
                rank: None,
                score: None,
            });
        };
        let entry = self
            .store
            .entry(&self.keys.bracket(period.id, &tier, bracket), player)
            .await?;
        let (rank, score) = match entry {
            Some((rank, packed)) => (Some(rank + 1), Some(self.season.packing.unpack(packed).0)),
            None => (None, None),
        };
        Ok(PlayerView {
            player: player.to_owned(),
            period: period.id,
            tier,
            bracket: Some(bracket),
            rank,
            score,
        })
    }

    /// Players and brackets per tier in a period (default: current), every tier listed.
    #[instrument(skip(self), err(level = "debug"))]
    pub async fn counts(&self, period: Option<PeriodId>) -> Result<Vec<TierCount>, Error> {
        let period = self.resolve_period(period).await?;
        let joined: HashMap<String, u64> = self
            .store
            .joined(&self.keys.period(period.id))
            .await?
            .into_iter()
            .collect();
        let size = u64::from(self.season.brackets.size);
        Ok(self
            .season
            .tiers
            .iter()
            .map(|t| {
                let players = joined.get(&t.name).copied().unwrap_or(0);
                TierCount {
                    tier: t.name.clone(),
                    players,
                    brackets: players.div_ceil(size),
                }
            })
            .collect())
    }

    /// Sets profile fields of a player (only the season's fields, within max_bytes),
    /// and refreshes the copy cached in their current bracket.
    ///
    /// The merge, the size check and the write are one atomic step on the player's
    /// records, so concurrent edits cannot together exceed `max_bytes`; the cached copy
    /// carries the profile's version, so concurrent edits settle on the newest.
    #[instrument(skip(self, fields), err(level = "debug"))]
    pub async fn set_profile(
        &self,
        player: &str,
        fields: &[(String, String)],
    ) -> Result<BTreeMap<String, String>, Error> {
        validate_player(player)?;
        let allowed = &self.season.profiles.fields;
        for (name, _) in fields {
            if !allowed.iter().any(|f| f == name) {
                return Err(InputError::UnknownProfileField {
                    field: truncate(name),
                    known: allowed.join(", "),
                }
                .into());
            }
        }
        let max = self.season.profiles.max_bytes;
        // A value alone can show the profile is too large before anything is written.
        let alone: BTreeMap<&str, &str> = fields
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let least = profile_json(&self.profile_order, &alone).len();
        if least > max {
            return Err(InputError::ProfileTooLarge { bytes: least, max }.into());
        }
        let now = self.now().await?;
        let period = self.period_at(Some(now)).ok();
        let ttl = match &period {
            Some(p) => self.player_ttl_secs(p, now),
            None => self.season.retention.player_ttl.as_secs().max(1),
        };
        let pkeys = self.keys.player(player);
        let written = self
            .store
            .set_profile(&pkeys, fields, &self.profile_order, max, ttl)
            .await?;
        let (version, json) = match written {
            ProfileWrite::Written { version, json } => (version, json),
            ProfileWrite::TooLarge { bytes } => {
                return Err(InputError::ProfileTooLarge { bytes, max }.into());
            }
        };
        if let Some(period) = period
            && let Some((tier, bracket)) = self
                .store
                .placement(&self.period_keys(period.id), player)
                .await?
        {
            let placed = self.placed(period.id, &tier, bracket);
            self.store
                .cache_profile(&placed.keys, player, version, &json)
                .await?;
        }
        let merged: BTreeMap<String, String> = serde_json::from_str(&json)
            .map_err(|e| StoreError::Protocol(format!("profile {json:?} is not JSON: {e}")))?;
        Ok(merged)
    }

    /// The player's profile fields.
    #[instrument(skip(self), err(level = "debug"))]
    pub async fn profile(&self, player: &str) -> Result<BTreeMap<String, String>, Error> {
        validate_player(player)?;
        Ok(self
            .store
            .profile(&self.keys.player(player))
            .await?
            .0
            .into_iter()
            .collect())
    }

    /// The player's profile as cached beside a board: `(version, JSON)`.
    async fn profile_json(&self, pkeys: &PlayerKeys) -> Result<Option<(u64, String)>, Error> {
        if self.season.profiles.fields.is_empty() {
            return Ok(None);
        }
        let (fields, version) = self.store.profile(pkeys).await?;
        if fields.is_empty() {
            return Ok(None);
        }
        let map: BTreeMap<&str, &str> = fields
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        Ok(Some((version, profile_json(&self.profile_order, &map))))
    }
}

/// A batch item that passed the checks: its period, tick and (normalized) time.
#[derive(Debug, Clone)]
struct Prepared {
    period: Period,
    tick: u64,
    at: DateTime<Utc>,
}

/// The same error again, for each item of a batch that one failure answered.
fn copy_error(e: &Error) -> Error {
    match e {
        Error::Store(s) => Error::Store(s.clone()),
        Error::Input(i) => Error::Input(i.clone()),
        other => Error::Input(InputError::Other(other.to_string())),
    }
}
