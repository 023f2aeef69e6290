//! What every part of a league shares: the season, the store, the key builder and
//! the league clock ([`Context`]), with the rules that need nothing else: input
//! checks, periods and tiers by name, key lifetimes, and the check of the store's key
//! layout that every write runs first.
//!
//! Owns: the season, the store, the keys, the [`LeagueClock`] and the layout check's
//! once-per-process state. Must not: place players, update boards or close periods
//! (those are the parts' own: [`crate::league::Placements`], [`crate::ranking::Boards`],
//! [`crate::rollover::Rollover`]), nor name any of their types.

pub mod clock;

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, Timelike, Utc};
use tokio::sync::OnceCell;

pub use clock::LeagueClock;

use crate::clock::Clock;
use crate::error::{Error, InputError, StoreError, TimeRefusal};
use crate::season::Season;
use crate::season::calendar::{Period, PeriodId};
use crate::store::keys::{BracketKeys, Keys, LAYOUT};
use crate::store::{Now, Store, TimeCheck};

/// How long a period marked by [`Context::mark_for_delivery`] stays looked at after
/// the mark, at the least (2 min): longer than the write that follows the mark takes,
/// so that delivery cannot find the period's logs done before the write logged into
/// them. A close is covered beyond this: a period is done only once closed.
pub const MARK_HOLD_MS: i64 = 120_000;

/// The season, the store, the key builder and the league clock of one league, shared
/// by its parts (each holds it in an [`Arc`]).
#[derive(Debug)]
pub struct Context<S: Store> {
    season: Arc<Season>,
    store: S,
    keys: Keys,
    clock: LeagueClock,
    /// The season's profile fields, sorted: the order of a profile's JSON.
    profile_order: Vec<String>,
    /// Set once the store's key layout was found to be this version's.
    layout: OnceCell<()>,
}

/// A bracket a player is placed in, with its keys built once.
#[derive(Debug)]
pub struct Placed {
    tier: String,
    bracket: u32,
    keys: BracketKeys,
}

impl Placed {
    /// The bracket `bracket` of board group `tier` (a tier, or `tier@cohort`), whose
    /// keys are `keys`.
    pub(crate) fn new(tier: &str, bracket: u32, keys: BracketKeys) -> Self {
        Placed {
            tier: tier.to_owned(),
            bracket,
            keys,
        }
    }

    /// The board group: a tier, or a cohort's boards of it (`tier@cohort`).
    pub fn tier(&self) -> &str {
        &self.tier
    }

    /// The bracket, 1-based within its board group.
    pub fn bracket(&self) -> u32 {
        self.bracket
    }

    /// The bracket's keys.
    pub fn keys(&self) -> &BracketKeys {
        &self.keys
    }
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

impl<S: Store> Context<S> {
    /// The context of a league of `season` on `store`, whose league clock is `clock`
    /// when `injected`, else the store's.
    pub(crate) fn new(season: Season, store: S, clock: Arc<dyn Clock>, injected: bool) -> Self {
        let keys = Keys::of(&season);
        let mut profile_order = season.profiles.fields.clone();
        profile_order.sort();
        let travel = season.clock.travel.then(|| keys.season());
        let clock = LeagueClock::new(clock, injected, season.clock.max_skew, travel);
        Context {
            profile_order,
            season: Arc::new(season),
            store,
            keys,
            clock,
            layout: OnceCell::new(),
        }
    }

    /// The season.
    pub fn season(&self) -> &Season {
        &self.season
    }

    /// How the event logs keep what is appended (the season's `[events]`), or `None`
    /// when the season keeps no log: then no write appends an event.
    pub fn log_spec(&self) -> Option<crate::store::LogSpec> {
        self.season.events.map(|e| crate::store::LogSpec {
            keep_secs: e.keep_secs(),
            cap: e.max_per_log,
        })
    }

    /// Before a write that may log events into `periods` when they are neither the
    /// running period nor the one before it (a rollover's close, a blocked bracket's
    /// retry, a re-settlement): marks them so that webhook delivery looks at their
    /// logs until it has delivered what the write logs
    /// ([`crate::store::EventStore::mark_periods`]), for [`MARK_HOLD_MS`] of the
    /// store's clock from now. Nothing for a season without an event log.
    pub async fn mark_for_delivery(&self, periods: &[u64]) -> Result<(), StoreError> {
        if self.log_spec().is_none() || periods.is_empty() {
            return Ok(());
        }
        let now = self.store.now().await?;
        self.store
            .mark_periods(
                &self.keys.season(),
                periods,
                now.saturating_add(MARK_HOLD_MS),
            )
            .await
    }

    /// The store.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The key builder.
    pub fn keys(&self) -> &Keys {
        &self.keys
    }

    /// The league clock.
    pub fn league_clock(&self) -> &LeagueClock {
        &self.clock
    }

    /// This process's clock (see [`LeagueClock::local`]).
    pub fn clock(&self) -> &Arc<dyn Clock> {
        self.clock.local()
    }

    /// The season's profile fields, sorted: the order of a profile's JSON.
    pub(crate) fn profile_order(&self) -> &[String] {
        &self.profile_order
    }

    /// The league clock's current time ([`LeagueClock::now`] on this store).
    pub async fn now(&self) -> Result<DateTime<Utc>, Error> {
        self.clock.now(&self.store).await
    }

    /// See [`LeagueClock::clock_contradicted`].
    pub(crate) fn clock_contradicted(&self, stamped: bool, e: &Error) -> bool {
        self.clock.clock_contradicted(stamped, e)
    }

    /// The clock argument of store operations.
    pub(crate) fn now_arg(&self) -> Now {
        self.clock.now_arg()
    }

    /// The allowed skew.
    pub fn skew(&self) -> chrono::TimeDelta {
        self.clock.skew()
    }

    /// When a period stops accepting events and may be closed: its end plus the skew.
    pub fn closes_at(&self, period: &Period) -> DateTime<Utc> {
        self.clock.closes_at(period)
    }

    /// The store's time check of an event at `at` in `period`.
    pub(crate) fn time_check(&self, period: &Period, at: DateTime<Utc>) -> TimeCheck {
        self.clock.time_check(period, at)
    }

    /// The season's reserved late seats in `period` (`None`: the season has none).
    pub(crate) fn late_join(&self, period: &Period) -> Option<crate::store::LateJoin> {
        self.season().brackets.late.map(|l| crate::store::LateJoin {
            early_cap: l.early_cap,
            from_ms: l.late_from(
                period.start.timestamp_millis(),
                period.end.timestamp_millis(),
            ),
        })
    }

    /// See [`LeagueClock::time_error`].
    pub(crate) fn time_error(&self, why: TimeRefusal, period: &Period, at: DateTime<Utc>) -> Error {
        self.clock.time_error(why, period, at)
    }

    /// See [`LeagueClock::check_time`].
    pub(crate) fn check_time(
        &self,
        period: &Period,
        at: DateTime<Utc>,
        now: DateTime<Utc>,
        maybe_retry: bool,
    ) -> Result<(), Error> {
        self.clock.check_time(period, at, now, maybe_retry)
    }

    /// The period containing `at` (default: this process's clock; see
    /// [`crate::League::now`] for the league clock).
    pub fn period_at(&self, at: Option<DateTime<Utc>>) -> Result<Period, InputError> {
        let at = normalize_time(at.unwrap_or_else(|| self.clock.estimate()));
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

    /// Checks, once per process, that the store's data of this season is in the key
    /// layout this version writes ([`crate::store::keys::LAYOUT`]), and records the
    /// layout in the season's meta the first time. Data of 0.2.0's layout (a season
    /// record without a layout, or its per-period assignment hash) is refused with
    /// [`crate::StoreError::OldLayout`], and nothing is written. Every operation that
    /// writes a player's records or closes periods runs it first.
    pub(crate) async fn check_layout(&self) -> Result<(), Error> {
        self.layout
            .get_or_try_init(|| async {
                let keys = self.keys.season();
                let store = &self.store;
                let season = format!("{}:{}", self.season.key_prefix, self.season.name);
                let old = |found: String| -> Error {
                    crate::StoreError::OldLayout {
                        season: season.clone(),
                        found,
                    }
                    .into()
                };
                match store.season_field(&keys, "layout").await? {
                    Some(v) if v == LAYOUT => return self.check_staging(true).await,
                    Some(v) => {
                        return Err(crate::StoreError::Protocol(format!(
                            "the season's meta records key layout {v:?} and this version \
                             writes layout {LAYOUT:?}: run the leaguekit version that wrote it"
                        ))
                        .into());
                    }
                    None => {}
                }
                if store.closed_through(&keys).await? > 0 {
                    return Err(old(
                        "the season's meta has closed periods and no layout".into()
                    ));
                }
                for field in ["shape", "ladder"] {
                    if store.season_field(&keys, field).await?.is_some() {
                        return Err(old(format!(
                            "the season's meta has a {field} and no layout"
                        )));
                    }
                }
                // 0.2.0 kept each period's placements in one `assign` hash: look for it
                // in the running period and the ones whose data is still kept.
                let running = self
                    .season()
                    .calendar
                    .period_at(self.clock.estimate())
                    .map_or(1, |p| p.id);
                let back = u64::from(self.season.retention.periods).min(8) + 1;
                let legacy: Vec<String> = (running.saturating_sub(back).max(1)..=running)
                    .map(|p| self.keys.period(p).legacy_assign())
                    .collect();
                if store.any_exists(&legacy).await? {
                    return Err(old(format!(
                        "a period's placements are one hash ({})",
                        legacy.join(" or ")
                    )));
                }
                self.check_staging(false).await?;
                store
                    .set_season_field(&keys, "layout", LAYOUT, true)
                    .await?;
                Ok(())
            })
            .await?;
        Ok(())
    }

    /// Whether the league in the store is a staging league (`[clock] travel = true`)
    /// as the season file says: recorded with the layout when the league is created
    /// (the season meta's `staging`, `1` or `0`); a league from before that record
    /// counts as staging if its clock was ever moved. Refused with
    /// [`InputError::StagingMismatch`] otherwise: a staging file never acts on a
    /// production league's data, nor the reverse. `existing`: the league's layout was
    /// recorded before.
    async fn check_staging(&self, existing: bool) -> Result<(), Error> {
        let keys = self.keys.season();
        let travel = self.season.clock.travel;
        let recorded = match self.store.season_field(&keys, "staging").await? {
            Some(v) => v,
            None => {
                let staging = if existing {
                    self.store.clock_offset(&keys).await? != 0
                } else {
                    travel
                };
                let value = if staging { "1" } else { "0" };
                self.store
                    .set_season_field(&keys, "staging", value, true)
                    .await?;
                // Another process may have recorded it first: its record stands.
                self.store
                    .season_field(&keys, "staging")
                    .await?
                    .unwrap_or_else(|| value.to_owned())
            }
        };
        if (recorded == "1") == travel {
            return Ok(());
        }
        Err(InputError::StagingMismatch {
            season: format!("{}:{}", self.season.key_prefix, self.season.name),
            league_staging: recorded == "1",
        }
        .into())
    }

    /// How long a closed period's keys live, in seconds: until `retention.periods`
    /// periods after it ends by the calendar, and at least that span from now. The
    /// "from now" part matters when old periods are closed late (catch-up after
    /// downtime, or a season replayed with past times): their data stays readable and
    /// their outcomes still give returning players their next tier. A relative TTL
    /// also keeps the engine's clock and the Redis server's clock out of each other's
    /// way.
    ///
    /// And at least the idempotency window: an update's retry is answered from its
    /// record for the whole window, even after the close, so the period's placements
    /// and boards must outlive it (a season may keep fewer periods than its window
    /// spans, e.g. hourly periods kept for 2 with a 24 h window).
    pub(crate) fn ttl_secs(&self, period: PeriodId) -> u64 {
        let keep = u64::from(self.season.retention.periods);
        let calendar = self.season.calendar.period(period + keep);
        let own_end = self.season.calendar.period(period).map(|p| p.end);
        let window = self.season.scoring.idempotency_window.as_secs();
        match (calendar, own_end) {
            (Some(later), Some(end)) => {
                let span = later.end - end;
                let until = later.end - self.clock.local().now();
                u64::try_from(span.max(until).num_seconds())
                    .unwrap_or(0)
                    .max(window)
                    .max(1)
            }
            // Beyond the calendar's horizon: keep for ten years.
            _ => 10 * 366 * 24 * 3600,
        }
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

    pub(crate) fn tick(&self, period: &Period, at: DateTime<Utc>) -> Result<u64, InputError> {
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

    /// The cached form of a profile read from the store: `(version, JSON)`, or `None`
    /// for no profile (or a season without profile fields).
    pub(crate) fn profile_json_of(
        &self,
        fields: &[(String, String)],
        version: u64,
    ) -> Option<(u64, String)> {
        if self.season.profiles.fields.is_empty() || fields.is_empty() {
            return None;
        }
        let map: BTreeMap<&str, &str> = fields
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        Some((
            version,
            crate::store::profile_json(&self.profile_order, &map),
        ))
    }
}

/// The same error again, for every item of a batch that failed as a whole.
pub(crate) fn copy_error(e: &Error) -> Error {
    match e {
        Error::Store(s) => Error::Store(s.clone()),
        Error::Input(i) => Error::Input(i.clone()),
        other => Error::Input(crate::error::InputError::Other(other.to_string())),
    }
}
