//! The engine: validates input, works out periods and tiers, and drives a [`Store`].
//!
//! [`League`] is what a game server embeds. Every operation runs in a `tracing` span.
//! The engine never writes before its input is validated, so bad input writes nothing.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use serde::Serialize;
use tracing::instrument;

use crate::calendar::{Period, PeriodId};
use crate::clock::{Clock, SystemClock};
use crate::config::{JoinPolicy, Season};
use crate::error::{Error, InputError, StoreError};
use crate::keys::{BracketKeys, Keys, PeriodKeys, PlayerKeys};
use crate::store::{PlayerState, RawEntry, Store, Update, UpdateReply, UpdateStatus};

/// Largest page a standings read returns.
pub const MAX_PAGE: u64 = 1000;
/// Largest placement cache before it is cleared (one entry per active player).
const CACHE_LIMIT: usize = 1 << 20;

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
#[derive(Debug)]
pub struct League<S: Store> {
    season: Arc<Season>,
    store: S,
    clock: Arc<dyn Clock>,
    keys: Keys,
    /// player → their placement in a period. A placement never changes once made, so
    /// a hit here saves a round trip (and the key building) on every later update.
    cache: Mutex<FastMap<String, (PeriodId, Arc<Placed>)>>,
    /// One shared [`Placed`] per bracket, so cached players of a bracket share keys.
    brackets: Mutex<FastMap<(PeriodId, usize, u32), Arc<Placed>>>,
    /// The keys of the latest period used, built once per period.
    period_keys: Mutex<Option<(PeriodId, Arc<PeriodKeys>)>>,
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

impl<S: Store> League<S> {
    /// A league for `season` on `store`, using the system clock.
    pub fn new(season: Season, store: S) -> Self {
        Self::with_clock(season, store, Arc::new(SystemClock))
    }

    /// A league whose "now" comes from `clock`.
    pub fn with_clock(season: Season, store: S, clock: Arc<dyn Clock>) -> Self {
        let keys = season.keys();
        Self {
            season: Arc::new(season),
            store,
            clock,
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

    /// The clock.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// The key builder.
    pub fn keys(&self) -> &Keys {
        &self.keys
    }

    /// The period containing `at` (default now).
    pub fn period_at(&self, at: Option<DateTime<Utc>>) -> Result<Period, InputError> {
        let at = at.unwrap_or_else(|| self.clock.now());
        match self.season.calendar.period_at(at) {
            Some(p) => Ok(p),
            None if at < self.season.schedule.start => Err(InputError::BeforeSeason {
                at,
                start: self.season.schedule.start,
            }),
            None => Err(InputError::OutsideCalendar { at }),
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
    async fn next_tier(
        &self,
        player: &str,
        state: Option<&PlayerState>,
        period: PeriodId,
        close: bool,
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
        let last = if close {
            self.outcome_in(s.period, &s.tier, s.bracket, player)
                .await?
        } else {
            self.peek_outcome(s.period, index, &s.tier, s.bracket, player)
                .await?
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
        Ok(self.tier_name(crate::outcome::after_skipped(&self.season, base, skipped)))
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

    /// Places `player` in a bracket of their tier for the period of `at` (default now).
    /// Joining again returns the same bracket.
    #[instrument(skip(self), err(level = "debug"))]
    pub async fn join(&self, player: &str, at: Option<DateTime<Utc>>) -> Result<Placement, Error> {
        validate_player(player)?;
        let period = self.period_at(at)?;
        let placed = self.place(player, &period).await?;
        Ok(Placement {
            player: player.to_owned(),
            period: period.id,
            tier: placed.tier.clone(),
            bracket: placed.bracket,
        })
    }

    async fn place(&self, player: &str, period: &Period) -> Result<Arc<Placed>, Error> {
        if let Some(hit) = self.cached(player, period.id) {
            return Ok(hit);
        }
        let pkeys = self.keys.player(player);
        let state = self.store.player_state(&pkeys).await?;
        let tier = self
            .next_tier(player, state.as_ref(), period.id, true)
            .await?;
        let joined = self
            .store
            .join(
                &self.period_keys(period.id),
                player,
                &tier,
                self.season.brackets.size,
            )
            .await
            .map_err(|e| closed_as_input(e, period.id))?;
        let placed = self.placed(period.id, &joined.tier, joined.bracket);
        let profile = self.profile_json(&pkeys).await?;
        // Entering the board and recording state are idempotent, so a join that was
        // interrupted between its steps is completed by the next join or score.
        self.store
            .enter(&placed.keys, player, profile.as_deref())
            .await
            .map_err(|e| closed_as_input(e, period.id))?;
        self.store
            .record_state(
                &pkeys,
                &PlayerState::new(period.id, joined.tier.clone(), joined.bracket),
            )
            .await?;
        Ok(self.remember(player, period.id, &joined.tier, joined.bracket))
    }

    /// Where `player` is in the period, placing them if the season joins on first score.
    async fn placement_for_update(
        &self,
        player: &str,
        period: &Period,
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
            JoinPolicy::OnFirstScore => self.place(player, period).await,
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
        tick: u64,
        request_id: Option<&str>,
        bkeys: &BracketKeys,
    ) -> Update<'a> {
        let window = self.season.scoring.idempotency_window.as_secs().max(1);
        Update {
            player,
            mode: self.season.scoring.mode,
            value,
            tick,
            max_score: self.season.packing.max_score(),
            span: self.season.packing.span(),
            request: request_id.map(|id| (bkeys.request(id), window)),
        }
    }

    fn submission(
        &self,
        player: &str,
        period: PeriodId,
        placed: &Placed,
        reply: UpdateReply,
        value: i64,
    ) -> Result<Submission, Error> {
        let applied = match reply.status {
            UpdateStatus::Applied => true,
            UpdateStatus::Duplicate => false,
            UpdateStatus::Closed => return Err(InputError::PeriodClosed { period }.into()),
            UpdateStatus::OutOfRange { current } => {
                let (cur, _) = self.season.packing.unpack(current);
                let result = match self.season.scoring.mode {
                    crate::score::ScoreMode::Increment => cur as i128 + value as i128,
                    _ => value as i128,
                };
                return Err(
                    InputError::Score(crate::score::ScoreRangeError::OutOfRange {
                        current: cur,
                        value,
                        result,
                        max: self.season.packing.max_score(),
                    })
                    .into(),
                );
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
    ) -> Result<(Period, u64), Error> {
        validate_player(player)?;
        if let Some(id) = &options.request_id {
            validate_request_id(id)?;
        }
        let max = self.season.packing.max_score();
        let mode = self.season.scoring.mode;
        // Values that can never be valid are refused before the player is placed, so
        // such an update does not even create a placement.
        let hopeless = match mode {
            crate::score::ScoreMode::Increment => value.unsigned_abs() > max,
            _ => value < 0 || value as u64 > max,
        };
        if hopeless {
            return Err(
                InputError::Score(crate::score::ScoreRangeError::OutOfRange {
                    current: 0,
                    value,
                    result: value as i128,
                    max,
                })
                .into(),
            );
        }
        let at = options.at.unwrap_or_else(|| self.clock.now());
        let period = self.period_at(Some(at))?;
        let tick = self.tick(&period, at)?;
        Ok((period, tick))
    }

    /// Submits a score value for `player` (a delta, a best or a new value by the
    /// season's mode). Refused updates write nothing.
    #[instrument(skip(self, options), fields(request_id = options.request_id.as_deref()), err(level = "debug"))]
    pub async fn submit(
        &self,
        player: &str,
        value: i64,
        options: SubmitOptions,
    ) -> Result<Submission, Error> {
        let (period, tick) = self.precheck(player, value, &options)?;
        let placed = self.placement_for_update(player, &period).await?;
        let update = self.update(
            player,
            value,
            tick,
            options.request_id.as_deref(),
            &placed.keys,
        );
        let reply = self.store.update(&placed.keys, &update).await?;
        self.submission(player, period.id, &placed, reply, value)
    }

    /// Submits many updates; the updates themselves go to the store in one pipelined
    /// round trip (placements of players not seen before cost their own round trips).
    /// Each item gets its own result, in order.
    #[instrument(skip(self, items), fields(items = items.len()))]
    pub async fn submit_many(
        &self,
        items: &[BatchItem],
    ) -> Result<Vec<Result<Submission, Error>>, Error> {
        let mut results: Vec<Option<Result<Submission, Error>>> = Vec::with_capacity(items.len());
        let mut pending = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let prepared = match self.precheck(&item.player, item.value, &item.options) {
                Ok((period, tick)) => self
                    .placement_for_update(&item.player, &period)
                    .await
                    .map(|placed| (period, tick, placed)),
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
            .map(|(i, (_, tick, placed))| {
                let item = &items[*i];
                let update = self.update(
                    &item.player,
                    item.value,
                    *tick,
                    item.options.request_id.as_deref(),
                    &placed.keys,
                );
                (&placed.keys, update)
            })
            .collect();
        let replies = self.store.update_many(&batch).await?;
        if replies.len() != pending.len() {
            return Err(StoreError::Protocol(format!(
                "{} replies to {} updates",
                replies.len(),
                pending.len()
            ))
            .into());
        }
        for ((i, (period, _, placed)), reply) in pending.into_iter().zip(replies) {
            let item = &items[i];
            results[i] = Some(self.submission(&item.player, period.id, &placed, reply, item.value));
        }
        Ok(results
            .into_iter()
            .map(|r| {
                r.unwrap_or_else(
                    || Err(InputError::Other("internal: missing result".into()).into()),
                )
            })
            .collect())
    }

    fn resolve_period(&self, period: Option<PeriodId>) -> Result<Period, InputError> {
        match period {
            Some(id) => self.period(id),
            None => self.period_at(None),
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
        let period = self.resolve_period(period)?;
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
        let period = self.resolve_period(period)?;
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
        let period = self.resolve_period(period)?;
        let placed = self
            .store
            .placement(&self.keys.period(period.id), player)
            .await?;
        let Some((tier, bracket)) = placed else {
            let state = self.store.player_state(&self.keys.player(player)).await?;
            let tier = self
                .next_tier(player, state.as_ref(), period.id, false)
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
        let period = self.resolve_period(period)?;
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
        let pkeys = self.keys.player(player);
        let mut merged: BTreeMap<String, String> =
            self.store.profile(&pkeys).await?.into_iter().collect();
        for (k, v) in fields {
            merged.insert(k.clone(), v.clone());
        }
        let json = serde_json::to_string(&merged)
            .map_err(|e| InputError::Other(format!("profile cannot be encoded: {e}")))?;
        if json.len() > self.season.profiles.max_bytes {
            return Err(InputError::ProfileTooLarge {
                bytes: json.len(),
                max: self.season.profiles.max_bytes,
            }
            .into());
        }
        let placement = match self.period_at(None) {
            Ok(period) => self
                .store
                .placement(&self.keys.period(period.id), player)
                .await?
                .map(|(tier, bracket)| self.keys.bracket(period.id, &tier, bracket)),
            Err(_) => None,
        };
        let cache = placement.as_ref().map(|b| (b, player, json.as_str()));
        self.store.set_profile(&pkeys, fields, cache).await?;
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
            .into_iter()
            .collect())
    }

    async fn profile_json(&self, pkeys: &PlayerKeys) -> Result<Option<String>, Error> {
        if self.season.profiles.fields.is_empty() {
            return Ok(None);
        }
        let fields = self.store.profile(pkeys).await?;
        if fields.is_empty() {
            return Ok(None);
        }
        let map: BTreeMap<String, String> = fields.into_iter().collect();
        Ok(serde_json::to_string(&map).ok())
    }
}

fn closed_as_input(e: StoreError, period: PeriodId) -> Error {
    match e {
        StoreError::PeriodClosed => InputError::PeriodClosed { period }.into(),
        other => other.into(),
    }
}
