//! League events: what happened, as the JSON that webhooks, streams and clients see.
//!
//! An event is built here (pure: no I/O), appended by the write that causes it (see
//! [`crate::store::EventStore`]) without its id, and given its id when read: the
//! name of its log and its position there (`p45/bronze/b3@1767225600000-0`), unique
//! within the league and the same on every read, so a consumer deduplicates by it.
//!
//! ```json
//! {"id": "p45/bronze/b3@1767225600000-0", "type": "player.promoted",
//!  "season": "weekly-ladder", "period": 45, "at": 1767225600000,
//!  "player": "ana", "tier": "bronze", "bracket": 3,
//!  "data": {"rank": 2, "score": 310, "next_tier": "silver"}}
//! ```
//!
//! `at` is the league clock (unix ms) when the change was made; `data` depends on the
//! type ([`Kind`]). Consumers must accept types and fields they do not know.
//!
//! Owns: the event types, their JSON and ids, and the cursor of a player's stream
//! ([`cursor`]). Must not: touch a store.

pub mod cursor;
mod log;

pub use log::{EventLog, Logged, PlayerPage};

use serde_json::{Map, Value, json};

use crate::store::keys::log_label;
use crate::store::{LogEntry, Pos};

/// An event's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Kind {
    /// A player was put on a bracket's board (their join of a period).
    Placed,
    /// A score update passed the player (opt-in: `[events] overtaken = true`).
    Overtaken,
    /// A bracket closed (its outcomes are recorded).
    BracketClosed,
    /// A player of a closed bracket goes up a tier.
    Promoted,
    /// A player of a closed bracket goes down a tier.
    Demoted,
    /// A player of a closed bracket keeps their tier.
    Stayed,
    /// A reward was granted to a player.
    RewardGranted,
    /// A player claimed their pending rewards.
    RewardClaimed,
    /// A period closed (every bracket of it).
    PeriodClosed,
    /// An operator changed a player's score.
    ScoreAdjusted,
    /// An operator re-settled a closed bracket, changing a player's outcome.
    PlayerResettled,
}

impl Kind {
    /// Every type, in the order the docs list them.
    pub const ALL: [Kind; 11] = [
        Kind::Placed,
        Kind::Overtaken,
        Kind::BracketClosed,
        Kind::Promoted,
        Kind::Demoted,
        Kind::Stayed,
        Kind::RewardGranted,
        Kind::RewardClaimed,
        Kind::PeriodClosed,
        Kind::ScoreAdjusted,
        Kind::PlayerResettled,
    ];

    /// The type's name in the JSON (`player.promoted`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Placed => "player.placed",
            Kind::Overtaken => "player.overtaken",
            Kind::BracketClosed => "bracket.closed",
            Kind::Promoted => "player.promoted",
            Kind::Demoted => "player.demoted",
            Kind::Stayed => "player.stayed",
            Kind::RewardGranted => "reward.granted",
            Kind::RewardClaimed => "reward.claimed",
            Kind::PeriodClosed => "period.closed",
            Kind::ScoreAdjusted => "score.adjusted",
            Kind::PlayerResettled => "player.resettled",
        }
    }

    /// The type named `name`, if any.
    pub fn parse(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// An event before it is logged.
#[derive(Debug, Clone, PartialEq)]
pub struct Event<'a> {
    /// Its type.
    pub kind: Kind,
    /// The season's name.
    pub season: &'a str,
    /// The period it belongs to.
    pub period: u64,
    /// When, unix ms by the league clock.
    pub at: i64,
    /// The player it is about, if one.
    pub player: Option<&'a str>,
    /// The tier and bracket it is about, if one.
    pub bracket: Option<(&'a str, u32)>,
    /// The type's own fields (an object).
    pub data: Value,
}

impl<'a> Event<'a> {
    /// An event of `kind` in `season`'s `period` at `at`, about nobody in particular
    /// and with no data yet.
    pub fn new(kind: Kind, season: &'a str, period: u64, at: i64) -> Self {
        Event {
            kind,
            season,
            period,
            at,
            player: None,
            bracket: None,
            data: Value::Object(Map::new()),
        }
    }

    /// The same, about `player`.
    pub fn player(mut self, player: &'a str) -> Self {
        self.player = Some(player);
        self
    }

    /// The same, about bracket `bracket` of `tier`.
    pub fn bracket(mut self, tier: &'a str, bracket: u32) -> Self {
        self.bracket = Some((tier, bracket));
        self
    }

    /// The same, with `data`.
    pub fn data(mut self, data: Value) -> Self {
        self.data = data;
        self
    }

    /// The JSON the log keeps: the event without its id (which the log gives it),
    /// its fields in a fixed order, `type` first and `data` last.
    pub fn body(&self) -> String {
        let mut out = self.head();
        out.push_str(&self.data.to_string());
        out.push('}');
        out
    }

    /// The body up to and with `"data":`, for a store that writes the data itself (a
    /// claim's rewards are known only inside the claim's atomic step): the body is
    /// the head, the data object, and `}`.
    pub fn head(&self) -> String {
        let (before, after) = self.around_player();
        let player = self.player.map_or_else(
            || "null".to_owned(),
            |p| Value::String(p.to_owned()).to_string(),
        );
        format!("{before}{player}{after}")
    }

    /// The head ([`Event::head`]) split around the player's id, for a store that
    /// writes whom the event is about itself (an update finds whom it passed only
    /// inside its atomic step): the head is the first part, the id as a JSON string,
    /// and the second part.
    pub fn around_player(&self) -> (String, String) {
        let text = |s: &str| Value::String(s.to_owned()).to_string();
        let or_null = |s: Option<String>| s.unwrap_or_else(|| "null".to_owned());
        (
            format!(
                "{{\"type\":{},\"season\":{},\"period\":{},\"at\":{},\"player\":",
                text(self.kind.name()),
                text(self.season),
                self.period,
                self.at,
            ),
            format!(
                ",\"tier\":{},\"bracket\":{},\"data\":",
                or_null(self.bracket.map(|b| text(b.0))),
                or_null(self.bracket.map(|b| b.1.to_string())),
            ),
        )
    }
}

/// The id of the entry at `pos` of the log whose key is `log`.
pub fn event_id(log: &str, pos: Pos) -> String {
    format!("{}@{pos}", log_label(log))
}

/// The event JSON of an entry read from the log whose key is `log`: its body with its
/// id first. The body is a JSON object the engine wrote; one that is not (a key
/// written by something else) is wrapped as `{"id", "type": "unknown", "raw"}`.
pub fn with_id(log: &str, entry: &LogEntry) -> String {
    let id = Value::String(event_id(log, entry.pos)).to_string();
    match entry.body.strip_prefix('{') {
        Some(rest) if rest.trim_start().starts_with('"') => format!("{{\"id\":{id},{rest}"),
        _ => json!({"id": event_id(log, entry.pos), "type": "unknown", "raw": entry.body})
            .to_string(),
    }
}

/// The type of a logged body (`"player.placed"`), read without parsing the whole
/// body: the engine writes `type` first.
pub fn kind_of(body: &str) -> Option<&str> {
    let rest = body.strip_prefix("{\"type\":\"")?;
    rest.split_once('"').map(|(kind, _)| kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_name_their_type_first_and_read_back_with_their_id() {
        let e = Event::new(Kind::Promoted, "weekly", 45, 1_767_225_600_000)
            .player("ana")
            .bracket("bronze", 3)
            .data(json!({"rank": 2, "score": 310, "next_tier": "silver"}));
        let body = e.body();
        assert_eq!(kind_of(&body), Some("player.promoted"));
        let entry = LogEntry {
            pos: Pos { ms: 5, seq: 1 },
            body,
        };
        let log = "lk:{weekly/p45/bronze/b3}:events";
        let v: Value = serde_json::from_str(&with_id(log, &entry)).unwrap();
        assert_eq!(v["id"], "p45/bronze/b3@5-1");
        assert_eq!(v["type"], "player.promoted");
        assert_eq!(v["tier"], "bronze");
        assert_eq!(v["bracket"], 3);
        assert_eq!(v["data"]["next_tier"], "silver");
        let period = Event::new(Kind::PeriodClosed, "weekly", 45, 0).body();
        let v: Value = serde_json::from_str(&period).unwrap();
        assert!(v["player"].is_null() && v["tier"].is_null() && v["bracket"].is_null());
    }

    #[test]
    fn a_foreign_entry_reads_as_unknown() {
        let entry = LogEntry {
            pos: Pos::START,
            body: "hello".into(),
        };
        let v: Value = serde_json::from_str(&with_id("k:{s/p1}:events", &entry)).unwrap();
        assert_eq!(v["type"], "unknown");
        assert_eq!(v["raw"], "hello");
        assert_eq!(v["id"], "p1@0-0");
    }

    #[test]
    fn every_kind_parses_from_its_name() {
        for k in Kind::ALL {
            assert_eq!(Kind::parse(k.name()), Some(k));
        }
        assert_eq!(Kind::parse("player.exploded"), None);
    }
}
