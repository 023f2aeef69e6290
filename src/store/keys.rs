//! Every Redis key leaguekit uses is built here, and nowhere else.
//!
//! Keys are grouped by the unit that one Lua script works on, and each group shares a
//! hash tag (the part in `{}`), so that every script touches a single Redis Cluster
//! slot:
//!
//! | group | tag | keys |
//! |---|---|---|
//! | season | `{season}` | `meta` (hash: rollover progress, `layout`, `shape`, `ladder`), `blocked` (hash: grants that failed), `stuck` (hash: brackets that cannot close), `audit` (zset: operator actions), `bans` (hash: player → ban record, an index for listing), `hookdead` (hash: webhook dead letters) with `hookdead:at` (zset: by time), `hookdead:url:<target>` (zset: a URL's, by time), `hookdead:replay` (set: marked for replay) and `hookdead:lease`, `hookmarks` (hash: periods webhook delivery looks at), `hookdone:<target>` (hash: periods a webhook target is done with), `hooktargets` (hash: webhook targets seen) |
//! | period | `{season/pN}` | `joins` (hash tier → players joined; with late seats also `tier:n` and `tier:late`), `assign:<a>` (hash, one of [`ASSIGN_BUCKETS`]: player → `tier:bracket`), `meta` (with `ban:<player>` markers), `events` (stream, with `[events]`) |
//! | bracket | `{season/pN/tier/bB}` | `board` (zset), `prof` (hash), `meta` (hash, with `ban:<player>` markers), `out` (string: outcomes, see `store/redis/outcomes.rs`), `lease`, `page` (hash: built standings pages, short-lived), `proftext` (string: the cached profiles as one string for page builds, short-lived), `rq:<player>:<id>` (idempotency), `events` (stream: the event log, with `[events]`), `events:hook` (hash: webhook cursors) and `events:hooklease:<target>` |
//! | player bucket | `{season/ub/<u>}` | `state` (hash: player → state record), `profile` (hash: player → profile record), `rewards:<player>` (hash), `claims:<player>` (hash), `ban` (hash: player → ban record), `events` (stream: the bucket's players' reward events, with `[events]`) |
//!
//! **Buckets** (key layout [`LAYOUT`]). A player's small records live many players to
//! a key, so that each key stays a compact listpack: a player belongs to player bucket
//! `u = fnv1a32(id) % PLAYER_BUCKETS` ([`bucket_of`], FNV-1a 32-bit over the id's
//! UTF-8 bytes, unescaped), which is their hash tag, so all of a player's keys share
//! one slot; their placement in period N sits in assign bucket
//! `a = fnv1a32(id) % ASSIGN_BUCKETS` inside the period's slot, so `join.lua` still
//! runs on one slot. Both counts are 16,384: at a million players a bucket holds 61
//! records on average and, by the tail of the distribution, fewer than 100 in every
//! bucket, far below Redis's default `hash-max-listpack-entries` of 512. Far beyond
//! a million players, buckets pass 512 entries and Redis turns them into hashtables:
//! still correct, only bigger per record. The counts and the hash are part of the
//! layout (recorded as `layout` in the season's meta) and never change for a season.
//!
//! Player and request ids are escaped (`%XX` for `%`, `{`, `}`, `:`, `/`, space and
//! non-printable bytes) before they enter a key, so no id can move a key to another
//! slot or collide with another player's key. Inside a bucket hash the raw id is the
//! field.

/// The key layout this version writes, recorded as the `layout` field of the season's
/// meta. 0.2.0 wrote one key per player and recorded none; this version refuses its
/// data ([`crate::StoreError::OldLayout`]). Layout "2" (development builds of 0.3.0)
/// kept a bracket's outcomes as a hash of a field per player, "3" as one string
/// (`src/store/redis/outcomes.rs`); a season recorded with another layout is refused
/// with a message naming both.
pub const LAYOUT: &str = "3";

/// Player buckets per season: a player's state, profile, rewards and claims live in
/// bucket [`bucket_of`]`(id) % PLAYER_BUCKETS`. Part of [`LAYOUT`].
pub const PLAYER_BUCKETS: u32 = 16_384;

/// Assign buckets per period: a player's placement in a period lives in the period's
/// bucket [`bucket_of`]`(id) % ASSIGN_BUCKETS`. Part of [`LAYOUT`].
pub const ASSIGN_BUCKETS: u32 = 16_384;

/// FNV-1a, 32-bit, of the id's UTF-8 bytes: the stable hash that picks a player's
/// buckets (never Rust's randomized hasher, so every process and version agrees).
pub fn bucket_of(id: &str) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in id.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// Escapes an id for use inside a key. Injective: `%` itself is escaped.
pub fn escape(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for ch in id.chars() {
        match ch {
            '%' | '{' | '}' | ':' | '/' | ' ' => {
                let mut buf = [0u8; 4];
                for b in ch.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("%{b:02X}"));
                }
            }
            c if c.is_control() => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("%{b:02X}"));
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// The name of an event log within its season, from its key: the part of the hash tag
/// after the season's name (`p45/bronze/b3`, `p45`, `ub/812`). Event ids are made of it
/// and a position, so they are unique within a league.
pub fn log_label(key: &str) -> &str {
    let tag = key
        .split_once('{')
        .and_then(|(_, rest)| rest.split_once('}'))
        .map_or(key, |(tag, _)| tag);
    tag.split_once('/').map_or(tag, |(_, rest)| rest)
}

/// Builds the keys of one season under one prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keys {
    prefix: String,
    season: String,
}

impl Keys {
    /// Keys for `season` under `prefix` (both validated by the season loader).
    pub fn new(prefix: &str, season: &str) -> Self {
        Self {
            prefix: prefix.to_owned(),
            season: season.to_owned(),
        }
    }

    /// The keys of `season` (its `key_prefix` and name).
    pub fn of(season: &crate::season::Season) -> Self {
        Keys::new(&season.key_prefix, &season.name)
    }

    /// The prefix every key starts with.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Keys of the season as a whole.
    pub fn season(&self) -> SeasonKeys {
        let base = format!("{}:{{{}}}", self.prefix, self.season);
        SeasonKeys {
            meta: format!("{base}:meta"),
            blocked: format!("{base}:blocked"),
            stuck: format!("{base}:stuck"),
            audit: format!("{base}:audit"),
            bans: format!("{base}:bans"),
            base,
        }
    }

    /// Keys of one period.
    pub fn period(&self, period: u64) -> PeriodKeys {
        let base = format!("{}:{{{}/p{}}}", self.prefix, self.season, period);
        PeriodKeys {
            joins: format!("{base}:joins"),
            meta: format!("{base}:meta"),
            base,
        }
    }

    /// Keys of one bracket.
    pub fn bracket(&self, period: u64, tier: &str, bracket: u32) -> BracketKeys {
        let base = format!(
            "{}:{{{}/p{}/{}/b{}}}",
            self.prefix, self.season, period, tier, bracket
        );
        // Built on every read and write of a bracket: plain concatenation, which costs
        // a fraction of `format!`'s machinery (perf: 6% of a kept page's client time).
        let with = |suffix: &str| [base.as_str(), suffix].concat();
        BracketKeys {
            board: with(":board"),
            profiles: with(":prof"),
            meta: with(":meta"),
            outcomes: with(":out"),
            lease: with(":lease"),
            pages: with(":page"),
            base,
        }
    }

    /// Keys of one player: those of their bucket, and the player's id in it.
    pub fn player(&self, player: &str) -> PlayerKeys {
        let bucket = bucket_of(player) % PLAYER_BUCKETS;
        PlayerKeys {
            base: format!("{}:{{{}/ub/{}}}", self.prefix, self.season, bucket),
            player: player.to_owned(),
            bucket,
        }
    }

    /// The event log of player bucket `bucket` (below [`PLAYER_BUCKETS`]): the same key
    /// as [`PlayerKeys::events`] of its players.
    pub fn bucket_events(&self, bucket: u32) -> String {
        format!("{}:{{{}/ub/{}}}:events", self.prefix, self.season, bucket)
    }

    /// The player's keys as 0.2.0 named them (`{season/u/<player>}:state` and so on):
    /// only to recognise data of that layout.
    pub fn legacy_player(&self, player: &str) -> String {
        format!(
            "{}:{{{}/u/{}}}:state",
            self.prefix,
            self.season,
            escape(player)
        )
    }
}

/// The keys of the season as a whole (one hash slot).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct SeasonKeys {
    /// The common part, hash tag included.
    pub base: String,
    /// Hash: season-level progress (`closed_through`: the last period closed).
    pub meta: String,
    /// Hash: `source|player` → a grant that failed and is retried by every rollover.
    pub blocked: String,
    /// Hash: `period/tier/bracket` → a bracket that cannot close (a key of the wrong
    /// type at one of its keys), retried by every rollover.
    pub stuck: String,
    /// Sorted set: the audit log of operator actions, each entry (JSON, unique by its
    /// id) scored by its time, unix ms by the league clock.
    pub audit: String,
    /// Hash: player → their ban record (JSON): an index of the season's bans for
    /// listing; the player's own record ([`PlayerKeys::ban`]) decides.
    pub bans: String,
}

/// The keys of one period (one hash slot).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct PeriodKeys {
    /// The common part, hash tag included.
    pub base: String,
    /// Hash: tier name → players joined so far (the bracket counter).
    pub joins: String,
    /// Hash: period-level markers (closing, closed).
    pub meta: String,
}

impl PeriodKeys {
    /// Hash: player id → `tier:bracket`, for the players of assign bucket
    /// [`bucket_of`]`(player) % ASSIGN_BUCKETS`.
    pub fn assign(&self, player: &str) -> String {
        self.assign_bucket(bucket_of(player) % ASSIGN_BUCKETS)
    }

    /// Assign bucket `n` (below [`ASSIGN_BUCKETS`]).
    pub fn assign_bucket(&self, n: u32) -> String {
        format!("{}:assign:{n}", self.base)
    }

    /// Every assign bucket of the period, in order.
    pub fn assign_buckets(&self) -> impl Iterator<Item = String> + '_ {
        (0..ASSIGN_BUCKETS).map(|n| self.assign_bucket(n))
    }

    /// Stream: the period's event log (`period.closed`; see [`crate::store::EventStore`]).
    pub fn events(&self) -> String {
        format!("{}:events", self.base)
    }

    /// The single assignment hash of 0.2.0's layout: only to recognise its data.
    pub fn legacy_assign(&self) -> String {
        format!("{}:assign", self.base)
    }
}

/// The keys of one bracket (one hash slot).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct BracketKeys {
    /// The common part, hash tag included.
    pub base: String,
    /// Sorted set: player id → minus the packed score (so ZRANGE gives best first).
    pub board: String,
    /// Hash: player id → cached profile (JSON).
    pub profiles: String,
    /// Hash: bracket markers (`closed`, `done` with the bracket's tally).
    pub meta: String,
    /// String: every player's encoded outcome, once the bracket is closed (see
    /// `store/redis/outcomes.rs`).
    pub outcomes: String,
    /// String: the rollover lease (which process is closing the bracket).
    pub lease: String,
    /// Hash: `"first:last"` → a built standings page, kept for a short while and
    /// deleted by every write that changes what a page shows (Redis only).
    pub pages: String,
}

impl BracketKeys {
    /// String: the bracket's cached profiles as one string, kept a short while for
    /// standings pages built after a score update, and deleted by every change to
    /// the profile cache (Redis only; see `store/redis/lua/open_page.lua`). A
    /// method, not a field: only page builds and profile writes need it, and the
    /// keys are built on every read and write.
    pub fn profiles_text(&self) -> String {
        [self.base.as_str(), ":proftext"].concat()
    }

    /// Hash: the bracket's correction record once it has been re-settled (`v` the
    /// version, `x:<v>`/`at:<v>`/`by:<v>`/`why:<v>` each version's exclusions, time,
    /// actor and reason, `applied` and `done` marks, `m:<player>` the version that
    /// last corrected a player). A method, like [`BracketKeys::profiles_text`]: only
    /// re-settlements and the outcome log read it.
    pub fn correction(&self) -> String {
        [self.base.as_str(), ":fix"].concat()
    }

    /// String: the bracket's outcomes as it closed (the format of `outcomes`), copied
    /// before the first correction replaces them.
    pub fn original_outcomes(&self) -> String {
        [self.base.as_str(), ":orig"].concat()
    }

    /// Stream: the bracket's event log (placements, overtakes, its close and outcomes,
    /// operators' corrections; see [`crate::store::EventStore`]).
    pub fn events(&self) -> String {
        [self.base.as_str(), ":events"].concat()
    }

    /// Hash: player id → the rate limit's arrival time (`season/limits.rs`), only
    /// for a season with `limits.rate`; it expires a window after its last write.
    pub fn rate(&self) -> String {
        [self.base.as_str(), ":rate"].concat()
    }

    /// The idempotency key of one player's request id in this bracket. Both ids are
    /// escaped (`:` included), so `(player, request id)` pairs never share a key.
    pub fn request(&self, player: &str, request_id: &str) -> String {
        format!("{}:rq:{}:{}", self.base, escape(player), escape(request_id))
    }
}

/// The keys of one player: those of the player's bucket (one hash slot), and the
/// player's id, which is their field in the bucket's hashes. Built on every join, so
/// only the common part is stored; the keys themselves are made when a Redis command
/// needs them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct PlayerKeys {
    /// The bucket's common part, hash tag included.
    pub base: String,
    /// The player's id (unescaped: a field of the bucket's hashes).
    pub player: String,
    /// The player's bucket, below [`PLAYER_BUCKETS`].
    pub bucket: u32,
}

impl PlayerKeys {
    /// Stream: the event log of the bucket's players (their rewards granted and
    /// claimed; see [`crate::store::EventStore`]), shared by the bucket.
    pub fn events(&self) -> String {
        format!("{}:events", self.base)
    }

    /// Hash: player id → profile record `deadline|version|json` of the bucket's players
    /// (see `set_profile.lua`).
    pub fn profile(&self) -> String {
        format!("{}:profile", self.base)
    }

    /// Hash: player id → state record `deadline|period:tier:bracket[|previous]` of the
    /// bucket's players (see `record_state.lua`).
    pub fn state(&self) -> String {
        format!("{}:state", self.base)
    }

    /// Hash: `period/tier/bracket` → `p|grant` (pending) or `c|grant` (claimed); the
    /// player's own key (few players have rewards), in the bucket's slot.
    pub fn rewards(&self) -> String {
        format!("{}:rewards:{}", self.base, escape(&self.player))
    }

    /// Hash: claim request id → the grants that claim returned (JSON); the player's
    /// own key, in the bucket's slot.
    pub fn claims(&self) -> String {
        format!("{}:claims:{}", self.base, escape(&self.player))
    }

    /// Hash: player id → ban record (JSON) of the bucket's banned players. Kept
    /// without expiry: a ban outlives the player's other records until it is lifted.
    pub fn ban(&self) -> String {
        format!("{}:ban", self.base)
    }

    /// Hash: the player's corrections: `r:<source>` a revoked reward, `t:<source>` a
    /// tier credit decision; the player's own key, in the bucket's slot.
    pub fn corrections(&self) -> String {
        format!("{}:fix:{}", self.base, escape(&self.player))
    }

    /// A name unique to the player in the season (for stores that keep players apart).
    pub fn id(&self) -> String {
        format!("{}:u:{}", self.base, escape(&self.player))
    }
}

/// Hash: the webhook cursors of event log `log` (target → position of the last event
/// it is done with), in the log's slot ([`crate::store::DeliveryStore`]).
pub fn hook_cursors(log: &str) -> String {
    [log, ":hook"].concat()
}

/// String: the lease of webhook delivery of event log `log` to the target named
/// `target` (its holder's id, with a time to live), in the log's slot.
pub fn hook_lease(log: &str, target: &str) -> String {
    [log, ":hooklease:", target].concat()
}

/// Hash: the season's webhook dead letters (letter key → letter JSON), in the season's
/// slot.
pub fn hook_dead(season: &SeasonKeys) -> String {
    [season.base.as_str(), ":hookdead"].concat()
}

/// Hash: the periods whose logs webhook delivery must look at until it has delivered
/// them (period → a mark: unix ms, the store's clock, until which writes may still
/// log into them), in the season's slot ([`crate::store::EventStore::mark_periods`]).
pub fn hook_marks(season: &SeasonKeys) -> String {
    [season.base.as_str(), ":hookmarks"].concat()
}

/// Hash: the periods the webhook target named `target` is done with (period → the
/// mark it was done at), in the season's slot.
pub fn hook_done(season: &SeasonKeys, target: &str) -> String {
    [season.base.as_str(), ":hookdone:", target].concat()
}

/// Hash: the webhook targets seen (target → `"<first seen> <last seen>"`, unix ms,
/// the store's clock), in the season's slot.
pub fn hook_targets(season: &SeasonKeys) -> String {
    [season.base.as_str(), ":hooktargets"].concat()
}

/// Sorted set: the season's webhook dead letters by the time they were recorded
/// (letter key, score unix ms), in the season's slot.
pub fn hook_dead_at(season: &SeasonKeys) -> String {
    [season.base.as_str(), ":hookdead:at"].concat()
}

/// Sorted set: the dead letters of the webhook target named `target`, by time, in the
/// season's slot.
pub fn hook_dead_url(season: &SeasonKeys, target: &str) -> String {
    [season.base.as_str(), ":hookdead:url:", target].concat()
}

/// Set: the keys of the dead letters marked for replay, in the season's slot.
pub fn hook_dead_replay(season: &SeasonKeys) -> String {
    [season.base.as_str(), ":hookdead:replay"].concat()
}

/// String: the lease of replaying the season's dead letters, in the season's slot.
pub fn hook_dead_lease(season: &SeasonKeys) -> String {
    [season.base.as_str(), ":hookdead:lease"].concat()
}

/// The Redis Cluster hash tag of a key: the part between the first `{` and the next `}`.
pub fn hash_tag(key: &str) -> &str {
    if let Some(open) = key.find('{')
        && let Some(len) = key[open + 1..].find('}')
        && len > 0
    {
        return &key[open + 1..open + 1 + len];
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_ids_stay_in_their_slot() {
        let k = Keys::new("lk", "s");
        for id in ["a}b", "{x}", "a:b", "a b", "%7D", "}", "u/1", "é{"] {
            let p = k.player(id);
            assert_eq!(hash_tag(&p.profile()), hash_tag(&p.state()));
            assert_eq!(hash_tag(&p.rewards()), hash_tag(&p.state()));
            assert_eq!(hash_tag(&p.claims()), hash_tag(&p.state()));
            assert_eq!(hash_tag(&p.ban()), hash_tag(&p.state()));
            assert!(p.rewards().ends_with(&escape(id)));
            assert!(!escape(id).contains(['{', '}', ':', ' ', '/']));
            let period = k.period(3);
            assert_eq!(hash_tag(&period.assign(id)), hash_tag(&period.joins));
            let b = k.bracket(1, "gold", 2);
            assert_eq!(hash_tag(&b.request(id, id)), hash_tag(&b.board));
        }
        assert_ne!(escape("%7D"), escape("}"));
    }

    #[test]
    fn buckets_are_fnv1a_and_stable() {
        // FNV-1a 32-bit test vectors.
        assert_eq!(bucket_of(""), 0x811c_9dc5);
        assert_eq!(bucket_of("a"), 0xe40c_292c);
        assert_eq!(bucket_of("foobar"), 0xbf9c_f968);
        let k = Keys::new("lk", "s");
        assert_eq!(k.player("a").bucket, 0xe40c_292c % PLAYER_BUCKETS);
        assert_eq!(k.player("a").base, "lk:{s/ub/10540}");
        assert_eq!(k.period(2).assign("a"), "lk:{s/p2}:assign:10540");
        assert_eq!(
            k.period(2).assign_buckets().count(),
            ASSIGN_BUCKETS as usize
        );
    }

    #[test]
    fn buckets_stay_listpack_sized_at_a_million_players() {
        let mut counts = vec![0u32; PLAYER_BUCKETS as usize];
        for i in 0..1_000_000 {
            counts[(bucket_of(&format!("player-{i}")) % PLAYER_BUCKETS) as usize] += 1;
        }
        let most = counts.iter().copied().max().unwrap_or(0);
        assert!(most < 128, "a bucket holds {most} of a million players");
    }

    #[test]
    fn request_keys_are_per_player() {
        let b = Keys::new("lk", "s").bracket(1, "gold", 2);
        assert_ne!(b.request("ana", "m1"), b.request("bo", "m1"));
        // A ':' in either id cannot make two pairs meet.
        assert_ne!(b.request("a:b", "c"), b.request("a", "b:c"));
    }
}
