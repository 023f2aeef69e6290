//! The event log's storage: logs that the writes themselves append to, read by
//! position.
//!
//! Events are appended by the write that causes them, in the same atomic step (on
//! Redis, the same script), never by a second call: a join that places a player logs
//! `player.placed` only when it placed them, a rollover step logs its outcomes only
//! when it records them, so a retried or re-run step logs nothing twice. Each script
//! works on one hash slot, so each slot's unit has its own log: a bracket's, a
//! period's, a player bucket's (see [`crate::store::keys`]). A log is a Redis stream
//! (`XADD … MAXLEN ~ cap`, living `keep` past its last event); the embedded store
//! keeps the same in memory.
//!
//! Positions ([`Pos`]) are the stream's entry ids, `ms-seq`, increasing within one
//! log and meaningless across logs; a reader keeps one per log it follows.

use std::fmt;
use std::future::Future;
use std::str::FromStr;

use crate::error::StoreError;
use crate::store::keys::SeasonKeys;

/// A position in one log: after an entry, or [`Pos::START`] before the first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Pos {
    /// Milliseconds part of the entry id (the server's clock when it was appended).
    pub ms: u64,
    /// Sequence within the millisecond.
    pub seq: u64,
}

impl Pos {
    /// Before every entry.
    pub const START: Pos = Pos { ms: 0, seq: 0 };

    /// The position right before `self`: a reader there reads `self` next.
    pub fn before(self) -> Pos {
        match self.seq {
            0 => Pos {
                ms: self.ms.saturating_sub(1),
                seq: if self.ms == 0 { 0 } else { u64::MAX },
            },
            seq => Pos {
                ms: self.ms,
                seq: seq - 1,
            },
        }
    }
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.ms, self.seq)
    }
}

impl FromStr for Pos {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || {
            format!("{s:?} is not a log position (write \"<ms>-<seq>\", e.g. \"1767225600000-0\")")
        };
        let (ms, seq) = s.split_once('-').ok_or_else(bad)?;
        let num = |t: &str| {
            if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            t.parse::<u64>().map_err(|_| bad())
        };
        Ok(Pos {
            ms: num(ms)?,
            seq: num(seq)?,
        })
    }
}

/// How a log keeps what is appended to it: the season's `[events]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LogSpec {
    /// Seconds a log lives after its last event.
    pub keep_secs: u64,
    /// The most events a log keeps (Redis trims whole stream nodes, so a log may keep
    /// up to one node, about a hundred events, more).
    pub cap: u32,
}

impl LogSpec {
    /// The spec as the scripts take it: `"keep cap"`.
    pub fn arg(&self) -> String {
        format!("{} {}", self.keep_secs, self.cap)
    }
}

/// Events to append with a write, if (and only if) the write happens: each body is an
/// event's JSON without its id (a reader adds it, see [`crate::events`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Appends<'a> {
    /// How the log keeps them.
    pub spec: LogSpec,
    /// The events' bodies, in order.
    pub bodies: &'a [String],
}

/// The `player.overtaken` events a score update logs, if the season asks for them
/// (`[events] overtaken = true`): one per player the update moves its player past, in
/// the bracket's log ([`crate::store::keys::BracketKeys::events`]), appended only when
/// the update applies. Each body is [`Overtakes::body`]: the store fills in who was
/// passed and their new rank.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Overtakes {
    /// How the log keeps them.
    pub spec: LogSpec,
    /// The body up to the passed player's id (`{"type":"player.overtaken",…,"player":`).
    pub head: String,
    /// The body from after the passed player's id up to their rank
    /// (`,"tier":…,"bracket":…,"data":{"by":…,"rank":`).
    pub tail: String,
}

impl Overtakes {
    /// The event of `passed`, now at `rank` (1-based): `head`, the id as a JSON string
    /// (escaped as serde_json does; `update.lua`'s `json_text` writes the same bytes),
    /// `tail`, the rank and `}}`.
    pub fn body(&self, passed: &str, rank: u64) -> String {
        let id = serde_json::Value::String(passed.to_owned()).to_string();
        format!("{}{id}{}{rank}}}}}", self.head, self.tail)
    }
}

/// One event read from a log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEntry {
    /// Its position in its log.
    pub pos: Pos,
    /// Its body as appended.
    pub body: String,
}

/// One read of a log: up to `limit` entries after `after`.
#[derive(Debug, Clone, Copy)]
pub struct LogRead<'a> {
    /// The log's key ([`crate::store::keys`]: `BracketKeys::events` and the like).
    pub log: &'a str,
    /// Read entries after this position.
    pub after: Pos,
    /// At most this many.
    pub limit: usize,
}

/// Reading the event logs. Appending is part of the writes that cause events
/// ([`Appends`] arguments of [`crate::store::LeagueStore::enter`],
/// [`crate::store::RolloverStore::finish_with_outcomes`] and the others).
pub trait EventStore: Send + Sync + 'static {
    /// For each read, in order: the entries after its position, oldest first. A log
    /// that does not exist (never written, or expired) reads as empty. On Redis the
    /// reads go out pipelined (grouped by slot on a cluster).
    fn read_logs(
        &self,
        reads: &[LogRead<'_>],
    ) -> impl Future<Output = Vec<Result<Vec<LogEntry>, StoreError>>> + Send;

    /// Whether events right after `after` (a position a reader held: an entry it
    /// read) may have been trimmed from `log` by its cap (`[events] max_per_log`)
    /// before the reader got them: `Some(first)`, the log's first entry now, when it is
    /// past the position right after `after` (a log is trimmed from its head, so then
    /// `after` and what followed it are gone); `None` when nothing was lost, and for an
    /// empty or absent log. One read (Redis: `XRANGE - + COUNT 1`).
    fn log_gap(
        &self,
        log: &str,
        after: Pos,
    ) -> impl Future<Output = Result<Option<Pos>, StoreError>> + Send;

    /// Marks `periods` as periods whose logs may receive events until `until_ms`
    /// (unix ms, the store's clock: [`crate::store::LeagueStore::now`]), so that
    /// webhook delivery looks at their logs until it has delivered everything in them
    /// ([`crate::store::DeliveryStore::period_marks`]). Written *before* a write that
    /// may log into a period other than the running one and the one before it (a
    /// rollover's close, a blocked bracket's retry, a re-settlement): a mark that
    /// comes too early only costs a look, one that came after the write could miss
    /// it. Each period keeps the larger of its mark and `until_ms`. Idempotent.
    fn mark_periods(
        &self,
        season: &SeasonKeys,
        periods: &[u64],
        until_ms: i64,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_print_parse_and_order() {
        let p: Pos = "1767225600000-3".parse().unwrap();
        assert_eq!(
            p,
            Pos {
                ms: 1_767_225_600_000,
                seq: 3
            }
        );
        assert_eq!(p.to_string(), "1767225600000-3");
        assert!(Pos { ms: 5, seq: 0 } > Pos { ms: 4, seq: 9 });
        for bad in ["", "1", "-1", "1-", "a-1", "1-+2", "1-2-3", " 1-2"] {
            assert!(bad.parse::<Pos>().is_err(), "{bad:?}");
        }
    }
}
