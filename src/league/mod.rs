//! The league: [`League`], the facade a game server embeds, and what the design calls
//! the league module: joins into 100-player brackets by the period's HINCRBY counter
//! (`join.rs`), the league clock and its time rules (`time.rs`), and players' state
//! and placements (`view.rs`).
//!
//! [`League`] validates input, works out periods and tiers, and drives a [`Store`];
//! score updates and reads are in [`crate::ranking`], closing periods in
//! [`crate::rollover`] (both are `impl League` blocks there). Every operation runs in
//! a `tracing` span, and nothing is written before its input is validated, so bad
//! input writes nothing.
//!
//! Owns: input checks, placement decisions (which tier, which period), the time rules.
//! Must not: build a key string itself (keys come from [`crate::store::keys`]), talk
//! to Redis (only through the [`Store`] traits), or compute outcomes (that is
//! [`crate::rollover::outcome`]'s pure rule).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, Timelike, Utc};

use crate::clock::{Clock, SystemClock};
use crate::error::{Error, InputError};
use crate::season::Season;
use crate::season::calendar::{Period, PeriodId};
use crate::store::keys::{BracketKeys, Keys, PeriodKeys};
mod bulk;
mod gather;
mod gauges;
mod join;
mod time;
mod view;

pub use bulk::JoinItem;
pub(crate) use bulk::{PlaceWant, copy_error};
pub(crate) use join::Welcome;
pub use join::{JoinOptions, Placement};
pub use view::{CohortCount, PlayerView, TierCount};

use crate::store::Store;

/// Largest placement cache before it is cleared (one entry per active player).
const CACHE_LIMIT: usize = 1 << 20;
/// How often the offset between this process's clock and the store's is measured
/// again. Clocks drift by well under a millisecond a minute.
const OFFSET_REFRESH: Duration = Duration::from_secs(30);

/// A league: one season on one store.
///
/// # The league clock
///
/// Whether a period has started, has ended or may be closed is decided by one clock
/// that every process shares: the store's ([`LeagueStore::now`](crate::store::LeagueStore::now): Redis's `TIME`, read inside
/// the script that decides; the embedded store's clock). A league built with
/// [`League::new`] uses it, and stamps events that carry no time with its own clock
/// corrected by the measured offset to the store's. A league built with
/// [`League::with_clock`] uses the given clock instead, on either store: for tests,
/// simulations and replays in which every process uses that same clock. See the
/// `[clock]` section of the season ([`crate::season::ClockRules`]) for the rules.
#[derive(Debug)]
pub struct League<S: Store> {
    pub(crate) season: Arc<Season>,
    pub(crate) store: S,
    pub(crate) clock: Arc<dyn Clock>,
    /// True when `clock` is the league clock (built with [`League::with_clock`]).
    pub(crate) injected: bool,
    /// The store's clock minus this process's, in milliseconds, and when measured.
    pub(crate) offset: Mutex<(i64, Option<Instant>)>,
    pub(crate) keys: Keys,
    /// player → their placement in a period. A placement never changes once made, so
    /// a hit here saves a round trip (and the key building) on every later update.
    pub(crate) cache: Mutex<FastMap<String, (PeriodId, Arc<Placed>)>>,
    /// One shared [`Placed`] per bracket, so cached players of a bracket share keys.
    pub(crate) brackets: Mutex<FastMap<(PeriodId, usize, u32), Arc<Placed>>>,
    /// The keys of the latest period used, built once per period.
    pub(crate) period_keys: Mutex<Option<(PeriodId, Arc<PeriodKeys>)>>,
    /// The season's profile fields, sorted: the order of a profile's JSON.
    pub(crate) profile_order: Vec<String>,
    /// State that the modules extending [`League`] keep per league (the ranking's
    /// cached tier-wide lists), by name and type, so that the league needs none of
    /// their types. See [`League::extension`].
    pub(crate) extensions: Mutex<FastMap<&'static str, Arc<dyn std::any::Any + Send + Sync>>>,
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

pub(crate) fn truncate(s: &str) -> String {
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

pub(crate) fn millis(at: DateTime<Utc>) -> i64 {
    at.timestamp_millis()
}

pub(crate) fn from_millis(ms: i64) -> DateTime<Utc> {
    DateTime::<Utc>::from_timestamp_millis(ms).unwrap_or(DateTime::<Utc>::MIN_UTC)
}

pub(crate) fn duration_ms(d: chrono::TimeDelta) -> u64 {
    u64::try_from(d.num_milliseconds()).unwrap_or(0)
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

    pub(crate) fn build(season: Season, store: S, clock: Arc<dyn Clock>, injected: bool) -> Self {
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
            extensions: Mutex::new(FastMap::default()),
        }
    }

    /// The per-league state `T` named `name`, made on first use.
    pub(crate) fn extension<T: Default + Send + Sync + 'static>(
        &self,
        name: &'static str,
    ) -> Arc<T> {
        let mut map = self
            .extensions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(found) = map.get(name).and_then(|a| a.clone().downcast::<T>().ok()) {
            return found;
        }
        let made = Arc::new(T::default());
        map.insert(name, made.clone());
        made
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

    pub(crate) fn tier_names(&self) -> String {
        self.season
            .tiers
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// A cohort label the season declares (or none).
    pub(crate) fn validate_cohort(&self, cohort: Option<&str>) -> Result<(), InputError> {
        let Some(label) = cohort else {
            return Ok(());
        };
        let known = match &self.season.cohorts {
            None => {
                Err("this season declares no cohorts (add [cohorts] to the season file)".to_owned())
            }
            Some(c) => c.check(label),
        };
        known.map_err(|known| InputError::UnknownCohort {
            cohort: truncate(label),
            known,
        })
    }

    /// A player's cohort for a new placement: the one given, else the one of their
    /// last placement while the season still declares it.
    pub(crate) fn cohort_for(
        &self,
        given: Option<&str>,
        last_group: Option<&str>,
    ) -> Option<String> {
        if let Some(c) = given {
            return Some(c.to_owned());
        }
        let (_, last) = crate::season::split_group(last_group?);
        let last = last?;
        self.validate_cohort(Some(last)).ok()?;
        Some(last.to_owned())
    }

    /// A tier name, or a cohort's boards of a tier (`tier@cohort`, see
    /// [`crate::season::board_group`]), that reads may name.
    pub(crate) fn check_tier(&self, tier: &str) -> Result<(), InputError> {
        let (_, cohort) = crate::season::split_group(tier);
        self.validate_cohort(cohort)?;
        // A renamed tier's old name still reads the periods played under it.
        match self.season.tier_by_any_name(tier) {
            Some(_) => Ok(()),
            None => Err(InputError::UnknownTier {
                tier: truncate(tier),
                known: self.tier_names(),
            }),
        }
    }

    pub(crate) fn tier_name(&self, index: usize) -> String {
        self.season
            .tiers
            .get(index)
            .or(self.season.tiers.first())
            .map(|t| t.name.clone())
            .unwrap_or_default()
    }

    pub(crate) fn cached(&self, player: &str, period: PeriodId) -> Option<Arc<Placed>> {
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
            .tier_by_any_name(tier)
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
    pub(crate) fn period_keys(&self, period: PeriodId) -> Arc<PeriodKeys> {
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

    pub(crate) fn forget(&self, player: &str) {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        cache.remove(player);
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
}
