//! The values store operations take and give: join and update requests,
//! their replies, pages, claims. Plain data, no I/O.

use crate::store::TimeCheck;
use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

pub use crate::error::TimeRefusal;
use crate::season::packing::ScoreMode;
pub use crate::season::seats::TierJoins;
use crate::store::keys::PlayerKeys;

/// A join as the store sees it (already validated by the engine).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct JoinRequest<'a> {
    /// The player.
    pub player: &'a str,
    /// The tier to place them in, unless already placed.
    pub tier: &'a str,
    /// Bracket size.
    pub size: u32,
    /// The join's time rules.
    pub time: TimeCheck,
    /// A bracket the player was assigned to but found full (possible only after the
    /// store lost data under running game servers): assign them anew, past it.
    pub replace_full: Option<u32>,
    /// With `replace_full`: brackets after the full one to skip as well, since their
    /// boards are likely full too (the league doubles it at each bracket found full,
    /// so a tier that lost its counters while many boards survived is passed in a few
    /// steps; a skipped bracket that survived partly filled stays so).
    pub skip: u32,
    /// Seconds the period's keys live at least (so keys of a period the rollover never
    /// reaches still expire).
    pub ttl_secs: u64,
    /// Reserved late seats of the season, for this period (`None`: none).
    pub late: Option<LateJoin>,
}

/// The late-seat rule of one period ([`crate::season::seats`]): brackets fill to
/// `early_cap` until `from_ms` by the league clock, then late joiners top them up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LateJoin {
    /// Players a bracket takes before the late point.
    pub early_cap: u32,
    /// The period's first late millisecond (unix ms, league clock).
    pub from_ms: i64,
}

impl<'a> JoinRequest<'a> {
    /// A join of `player` into `tier` with brackets of `size`, under `time`'s rules.
    pub fn new(player: &'a str, tier: &'a str, size: u32, time: TimeCheck) -> Self {
        JoinRequest {
            player,
            tier,
            size,
            time,
            replace_full: None,
            skip: 0,
            ttl_secs: 86_400,
            late: None,
        }
    }

    /// Holds seats back for late joiners (see [`LateJoin`]).
    pub fn late_seats(mut self, late: LateJoin) -> Self {
        self.late = Some(late);
        self
    }

    /// Assigns the player anew past `bracket`, which was found full.
    pub fn replacing_full(mut self, bracket: u32) -> Self {
        self.replace_full = Some(bracket);
        self
    }

    /// Sets how long the period's keys live at least.
    pub fn ttl_secs(mut self, secs: u64) -> Self {
        self.ttl_secs = secs;
        self
    }
}

/// One board entry of [`LeagueStore::enter_many`](crate::store::LeagueStore::enter_many):
/// the arguments of [`LeagueStore::enter`](crate::store::LeagueStore::enter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct BoardEntry<'a> {
    /// The bracket.
    pub bracket: &'a crate::store::keys::BracketKeys,
    /// The player.
    pub player: &'a str,
    /// Bracket size.
    pub size: u32,
    /// The profile to cache: version and JSON.
    pub profile: Option<(u64, &'a str)>,
    /// Seconds the board's keys live at least.
    pub ttl_secs: u64,
    /// With a season's `[events]`: the `player.placed` event (one body), appended to
    /// the bracket's log only if this entry puts the player on the board.
    pub placed: Option<crate::store::Appends<'a>>,
}

impl<'a> BoardEntry<'a> {
    /// An entry of `player` on `bracket` (of `size`), its keys living `ttl_secs`.
    pub fn new(
        bracket: &'a crate::store::keys::BracketKeys,
        player: &'a str,
        size: u32,
        ttl_secs: u64,
    ) -> Self {
        BoardEntry {
            bracket,
            player,
            size,
            profile: None,
            ttl_secs,
            placed: None,
        }
    }

    /// With the event that placing the player appends.
    pub fn placed(mut self, placed: Option<crate::store::Appends<'a>>) -> Self {
        self.placed = placed;
        self
    }

    /// With a profile to cache.
    pub fn profile(mut self, profile: Option<(u64, &'a str)>) -> Self {
        self.profile = profile;
        self
    }
}

/// One state write of [`LeagueStore::record_states`](crate::store::LeagueStore::record_states):
/// the arguments of [`LeagueStore::record_state`](crate::store::LeagueStore::record_state).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct StateWrite<'a> {
    /// The player's keys.
    pub player_keys: &'a crate::store::keys::PlayerKeys,
    /// Their placement.
    pub state: &'a PlayerState,
    /// Seconds the player's keys live from now.
    pub ttl_secs: u64,
    /// Claimed rewards and claim answers before this period are trimmed.
    pub trim_before: u64,
    /// The writer's read of the player's records (a snapshot) found no live state. A
    /// hint, right or wrong: the Redis store then creates the state without reading
    /// it first, and reads it as usual when it finds one after all.
    pub found_no_state: bool,
    /// The writer's read found no live profile. A hint: the Redis store then leaves
    /// the profile alone, since a profile set after that read carries a deadline of
    /// its own, by the placement's rule (the end of the running period plus
    /// `player_ttl`).
    pub found_no_profile: bool,
    /// The writer's read found a live profile whose record lives until this time
    /// (unix seconds by the store's clock, [`PlayerSnapshot::profile_deadline`]). A
    /// hint: the Redis store then leaves a profile that already lives about as long as
    /// the placement (to within a minute) alone, without reading it (a profile's
    /// deadline is only ever raised by `set_profile`), which saves three commands of a
    /// placement that follows a `set_profile` of the same period.
    pub profile_deadline: Option<u64>,
}

impl<'a> StateWrite<'a> {
    /// A write of `state` for the player of `player_keys`.
    pub fn new(
        player_keys: &'a crate::store::keys::PlayerKeys,
        state: &'a PlayerState,
        ttl_secs: u64,
        trim_before: u64,
    ) -> Self {
        StateWrite {
            player_keys,
            state,
            ttl_secs,
            trim_before,
            found_no_state: false,
            found_no_profile: false,
            profile_deadline: None,
        }
    }

    /// What the writer's read of the player found: a live state, a live profile (see
    /// [`StateWrite::found_no_state`]). Without it a store assumes both may exist.
    pub fn found(mut self, state: bool, profile: bool) -> Self {
        self.found_no_state = !state;
        self.found_no_profile = !profile;
        self
    }

    /// When the profile the writer's read found lapses (see
    /// [`StateWrite::profile_deadline`]).
    pub fn profile_lives_until(mut self, deadline: Option<u64>) -> Self {
        self.profile_deadline = deadline;
        self
    }
}

/// What [`LeagueStore::enter`](crate::store::LeagueStore::enter) did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Entered {
    /// The player is on the board (now or already).
    Ok,
    /// The board already holds `size` other players; the player was not added.
    Full,
    /// The bracket holds a ban marker of the player (see
    /// [`BanStore`](crate::store::BanStore)), given here: the player was not added.
    Banned(String),
}

/// Where a join put a player.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Joined {
    /// The tier name the player is placed in for this period.
    pub tier: String,
    /// The bracket number, from 1.
    pub bracket: u32,
    /// True if this call placed the player; false if they were already placed.
    pub new: bool,
}

/// One score update, as the store sees it (already validated by the engine).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Update<'a> {
    /// The player.
    pub player: &'a str,
    /// How the value changes the score.
    pub mode: ScoreMode,
    /// The submitted value.
    pub value: i64,
    /// The event's tick within its period.
    pub tick: u64,
    /// The season's maximum score.
    pub max_score: u64,
    /// The packing multiplier `T` (see [`crate::season::packing`]).
    pub span: u64,
    /// The idempotency key and how long it lives, if the update carries a request id.
    /// The key names the player and the request id: the same id sent for two players
    /// (a match id for every participant) is two requests.
    pub request: Option<(String, u64)>,
    /// The event's time rules.
    pub time: TimeCheck,
    /// Whether the reply carries the rank after the update (it costs the store a scan
    /// of the board on Redis).
    pub rank: bool,
    /// The season's plausibility limits (none: the update skips them).
    pub limits: crate::season::limits::Limits,
    /// The `player.overtaken` events to log if the update passes players (none: the
    /// season does not log them, and the update costs nothing more).
    pub overtakes: Option<crate::store::Overtakes>,
}

/// What the store did with an update.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UpdateStatus {
    /// The update was applied.
    Applied,
    /// The request id was seen before; the reply is the first one's, nothing changed.
    Duplicate,
    /// The score would leave `0..=max_score`; nothing changed.
    OutOfRange {
        /// The packed value before the update (0 if not on the board).
        current: u64,
    },
    /// The bracket is closed, or its period no longer accepts events by the store's
    /// clock; nothing changed.
    Closed,
    /// The player is not on this bracket's board (the store lost data, or a stale
    /// placement); nothing changed. The engine places the player again.
    NotPlaced,
    /// The event is too early or in the future by the store's clock; nothing changed.
    Refused(TimeRefusal),
    /// The update is beyond one of the season's limits; nothing changed (the
    /// idempotency record was not written either).
    Limited {
        /// Which limit.
        limit: crate::season::limits::Limit,
        /// For the rate: milliseconds until the player's next update is allowed.
        retry_after_ms: u64,
    },
}

/// The store's reply to an update.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UpdateReply {
    /// What happened.
    pub status: UpdateStatus,
    /// The packed value after the update (the first answer's, for a duplicate; the
    /// current one, for an update refused as out of range or by a limit).
    pub packed: u64,
    /// 0-based rank after the update (the first answer's, for a duplicate): `None`
    /// when the update did not ask for it, or for a duplicate whose first answer had
    /// none, and for every status but `Applied` and `Duplicate`.
    pub rank: Option<u64>,
}

/// A cached profile's JSON text as a store returned it: a text of its own, or a part
/// of one that the other profiles of the same page share.
///
/// A page of 100 entries read in one piece (a kept page on Redis) is one text; giving
/// each profile a range of it, not a copy, saves a page a hundred allocations and
/// frees (a fifth of a kept page's client instructions under callgrind). The price: a
/// profile kept after its page is dropped keeps the page's text (a few kilobytes)
/// alive with it.
#[derive(Clone)]
pub struct StoredText {
    text: Arc<String>,
    /// The part of `text` that is this one's.
    start: usize,
    end: usize,
}

impl StoredText {
    /// A text of its own.
    pub fn new(json: impl Into<String>) -> StoredText {
        let text = Arc::new(json.into());
        let end = text.len();
        StoredText {
            text,
            start: 0,
            end,
        }
    }

    /// The bytes `range` of `text`, sharing `text`; `None` when `range` is not a
    /// part of it (out of bounds, or not on char boundaries).
    #[cfg_attr(not(feature = "redis"), allow(dead_code))] // pages read from Redis
    pub(crate) fn part(text: &Arc<String>, range: Range<usize>) -> Option<StoredText> {
        text.get(range.clone())?;
        Some(StoredText {
            text: text.clone(),
            start: range.start,
            end: range.end,
        })
    }

    /// `json`, a part of `text`, sharing `text` rather than copying; a `json` that is
    /// not a part of `text` is copied.
    #[cfg_attr(not(feature = "redis"), allow(dead_code))] // pages read from Redis
    pub(crate) fn within(text: &Arc<String>, json: &str) -> StoredText {
        // Where `json` starts in `text`, if it is a part of it.
        (json.as_ptr() as usize)
            .checked_sub(text.as_ptr() as usize)
            .and_then(|start| StoredText::part(text, start..start.checked_add(json.len())?))
            .unwrap_or_else(|| StoredText::new(json))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        // Always a part of `text` (`new` and `within` made it so).
        self.text.get(self.start..self.end).unwrap_or_default()
    }
}

impl fmt::Debug for StoredText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

/// Equal when the texts are.
impl PartialEq for StoredText {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for StoredText {}

/// A bracket entry as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RawEntry {
    /// The player id.
    pub player: String,
    /// The packed score.
    pub packed: u64,
    /// The cached profile (a JSON object), if any, as the store holds it.
    pub profile: Option<StoredText>,
}

/// A slice of a bracket's standings.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Page {
    /// Players on the board.
    pub total: u64,
    /// 0-based rank of the first entry.
    pub offset: u64,
    /// The entries, best first.
    pub entries: Vec<RawEntry>,
}

/// A player's league state: where they were last placed, and the placement before.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PlayerState {
    /// The last period the player joined.
    pub period: u64,
    /// Their tier in that period.
    pub tier: String,
    /// Their bracket in that period.
    pub bracket: u32,
    /// The placement before that one: `(period, tier, bracket)`. Kept so a player who
    /// has joined the current period can still be shown their last closed period.
    pub previous: Option<(u64, String, u32)>,
}

impl PlayerState {
    /// A state with no previous placement.
    pub fn new(period: u64, tier: impl Into<String>, bracket: u32) -> Self {
        Self {
            period,
            tier: tier.into(),
            bracket,
            previous: None,
        }
    }
}

/// What [`RolloverStore::begin_close`](crate::store::RolloverStore::begin_close) finds: the period's summary if it is already closed,
/// and its join counters per tier (or cohort).
pub type ClosingPeriod = (Option<String>, Vec<(String, TierJoins)>);

/// What [`RankingStore::set_profile`](crate::store::RankingStore::set_profile) did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProfileWrite {
    /// Written: the new version and the whole profile as JSON.
    Written {
        /// Increases with every write.
        version: u64,
        /// The merged profile.
        json: String,
    },
    /// The merged profile would be `bytes` long; nothing was written.
    TooLarge {
        /// Encoded size of the merged profile.
        bytes: usize,
    },
}

/// A reward claim as the store sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Claim<'a> {
    /// Makes the claim idempotent: a repeat returns the first answer.
    pub claim_id: Option<&'a str>,
    /// The current period, recorded with a claim answer (see
    /// [`LeagueStore::record_state`](crate::store::LeagueStore::record_state), which trims old answers).
    pub period: u64,
    /// Seconds the player's reward keys live at least.
    pub ttl_secs: u64,
    /// With a season's `[events]`: the log's spec and the `reward.claimed` event's
    /// head ([`crate::events::Event::head`]); the store appends the event, its data
    /// `{"rewards": [{"source", "grant"}, ...]}` in source order, to the player
    /// bucket's log in the claim's step, only when the claim claims something now.
    pub logged: Option<(crate::store::LogSpec, &'a str)>,
}

impl<'a> Claim<'a> {
    /// A claim, idempotent with `claim_id`, in period 1, keeping the keys a day.
    pub fn new(claim_id: Option<&'a str>) -> Self {
        Claim {
            claim_id,
            period: 1,
            ttl_secs: 86_400,
            logged: None,
        }
    }

    /// Logs the claim (see [`Claim::logged`]).
    pub fn logged(mut self, logged: Option<(crate::store::LogSpec, &'a str)>) -> Self {
        self.logged = logged;
        self
    }

    /// Sets the current period.
    pub fn in_period(mut self, period: u64) -> Self {
        self.period = period;
        self
    }

    /// Sets how long the keys live at least.
    pub fn ttl_secs(mut self, secs: u64) -> Self {
        self.ttl_secs = secs;
        self
    }
}

/// Whether a bracket still needs closing, as seen by one rollover process.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BracketClaim {
    /// The bracket is closed and its rewards granted; its tally is attached.
    Done(String),
    /// This process holds the lease and should close it.
    Mine,
    /// Another process holds the lease; come back later.
    Busy,
}

/// A bracket claimed and, when it is this process's to close, frozen
/// ([`crate::store::RolloverStore::claim_and_freeze`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FrozenClaim {
    /// The bracket is closed and its rewards granted; its tally is attached.
    Done(String),
    /// This process holds the lease and has frozen the bracket: its whole board, best
    /// first, as `(player, packed)`.
    Mine(Vec<(String, u64)>),
    /// Another process holds the lease; come back later.
    Busy,
}

/// A reward whose grant failed (for example, the player's rewards key holds data
/// leaguekit did not write). The rest of its period is closed; every rollover retries it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct BlockedGrant {
    /// The player.
    pub player: String,
    /// Where the reward was earned: `period/tier/bracket`.
    pub source: String,
    /// The grant.
    pub grant: String,
    /// Why the grant failed.
    pub error: String,
}

/// One reward to grant: `(player's keys, source, grant)`.
pub type Grant = (PlayerKeys, String, String);

/// A profile as JSON: the fields of `order` (the season's, sorted) that are set, in
/// that order, encoded exactly as serde_json encodes a map of strings. The Redis store
/// computes the same bytes in Lua to check `max_bytes` atomically.
pub fn profile_json(order: &[String], fields: &BTreeMap<&str, &str>) -> String {
    let mut map = serde_json::Map::new();
    for name in order {
        if let Some(v) = fields.get(name.as_str()) {
            map.insert(name.clone(), serde_json::Value::String((*v).to_owned()));
        }
    }
    serde_json::Value::Object(map).to_string()
}

/// What a placement reads of a player, in one round trip
/// ([`LeagueStore::player_snapshot`](crate::store::LeagueStore::player_snapshot)).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PlayerSnapshot {
    /// Their league state.
    pub state: Option<PlayerState>,
    /// Their profile fields (sorted) and its version.
    pub profile: (Vec<(String, String)>, u64),
    /// Their pending rewards: `(source, grant)`, sorted.
    pub rewards: Vec<(String, String)>,
    /// When their profile record lapses, in unix seconds by the store's clock; `None`
    /// without a live profile, or from a store whose state writes take no such hint
    /// (the embedded store). A hint for [`StateWrite::profile_lives_until`].
    pub profile_deadline: Option<u64>,
    /// Their ban record (JSON), if one is stored, ended or not.
    pub ban: Option<String>,
}
