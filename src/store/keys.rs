//! Every Redis key leaguekit uses is built here, and nowhere else.
//!
//! Keys are grouped by the unit that one Lua script works on, and each group shares a
//! hash tag (the part in `{}`), so that every script touches a single Redis Cluster
//! slot:
//!
//! | group | tag | keys |
//! |---|---|---|
//! | season | `{season}` | `meta` (hash: rollover progress), `blocked` (hash: grants that failed) |
//! | period | `{season/pN}` | `joins` (hash tier → players joined), `assign` (hash player → `tier:bracket`), `meta` |
//! | bracket | `{season/pN/tier/bB}` | `board` (zset), `prof` (hash), `meta` (hash), `out` (hash: outcomes), `lease`, `rq:<player>:<id>` (idempotency) |
//! | player | `{season/u/<player>}` | `profile` (hash), `state` (hash), `rewards` (hash), `claims` (hash) |
//!
//! Player and request ids are escaped (`%XX` for `%`, `{`, `}`, `:`, `/`, space and
//! non-printable bytes) before they enter a key, so no id can move a key to another
//! slot or collide with another player's key.

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
            base,
        }
    }

    /// Keys of one period.
    pub fn period(&self, period: u64) -> PeriodKeys {
        let base = format!("{}:{{{}/p{}}}", self.prefix, self.season, period);
        PeriodKeys {
            joins: format!("{base}:joins"),
            assign: format!("{base}:assign"),
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
        BracketKeys {
            board: format!("{base}:board"),
            profiles: format!("{base}:prof"),
            meta: format!("{base}:meta"),
            outcomes: format!("{base}:out"),
            lease: format!("{base}:lease"),
            base,
        }
    }

    /// Keys of one player.
    pub fn player(&self, player: &str) -> PlayerKeys {
        PlayerKeys {
            base: format!("{}:{{{}/u/{}}}", self.prefix, self.season, escape(player)),
        }
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
}

/// The keys of one period (one hash slot).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct PeriodKeys {
    /// The common part, hash tag included.
    pub base: String,
    /// Hash: tier name → players joined so far (the bracket counter).
    pub joins: String,
    /// Hash: player id → `tier:bracket`.
    pub assign: String,
    /// Hash: period-level markers (closing, closed).
    pub meta: String,
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
    /// Hash: bracket markers (`closed`, `recorded`, `done`).
    pub meta: String,
    /// Hash: player id → encoded outcome, once the bracket is closed.
    pub outcomes: String,
    /// String: the rollover lease (which process is closing the bracket).
    pub lease: String,
}

impl BracketKeys {
    /// The idempotency key of one player's request id in this bracket. Both ids are
    /// escaped (`:` included), so `(player, request id)` pairs never share a key.
    pub fn request(&self, player: &str, request_id: &str) -> String {
        format!("{}:rq:{}:{}", self.base, escape(player), escape(request_id))
    }
}

/// The keys of one player (one hash slot). Built on every join, so only the common
/// part is stored; the keys themselves are made when a Redis command needs them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct PlayerKeys {
    /// The common part, hash tag included.
    pub base: String,
}

impl PlayerKeys {
    /// Hash: profile field → value.
    pub fn profile(&self) -> String {
        format!("{}:profile", self.base)
    }

    /// Hash: the player's league state (last placement, tier).
    pub fn state(&self) -> String {
        format!("{}:state", self.base)
    }

    /// Hash: `period/tier/bracket` → `p|grant` (pending) or `c|grant` (claimed).
    pub fn rewards(&self) -> String {
        format!("{}:rewards", self.base)
    }

    /// Hash: claim request id → the grants that claim returned (JSON).
    pub fn claims(&self) -> String {
        format!("{}:claims", self.base)
    }
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
            assert!(hash_tag(&p.profile()).ends_with(&escape(id)));
            assert!(!escape(id).contains(['{', '}', ':', ' ', '/']));
            let b = k.bracket(1, "gold", 2);
            assert_eq!(hash_tag(&b.request(id, id)), hash_tag(&b.board));
        }
        assert_ne!(escape("%7D"), escape("}"));
    }

    #[test]
    fn request_keys_are_per_player() {
        let b = Keys::new("lk", "s").bracket(1, "gold", 2);
        assert_ne!(b.request("ana", "m1"), b.request("bo", "m1"));
        // A ':' in either id cannot make two pairs meet.
        assert_ne!(b.request("a:b", "c"), b.request("a", "b:c"));
    }
}
