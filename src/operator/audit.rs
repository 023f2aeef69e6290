//! The audit log: every operator action, in order, with who took it, when, what and
//! why. Kept in the store ([`crate::store::AuditStore`]) for the season's retention.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::Operator;
use crate::context::{from_millis, millis};
use crate::error::{Error, InputError, StoreError};
use crate::store::Store;

/// The longest actor name and reason, in characters.
pub const MAX_TEXT: usize = 500;

/// Who took an operator action: an HTTP admin token's name, or `cli:<user>` for the
/// command line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Actor(String);

impl Actor {
    /// An actor named `name`: 1 to 500 characters, no control characters.
    pub fn new(name: impl Into<String>) -> Result<Actor, InputError> {
        let name = name.into();
        check_text("actor", &name)?;
        Ok(Actor(name))
    }

    /// The command line's user: `cli:$USER` (`cli:unknown` when the environment does
    /// not say).
    pub fn cli() -> Actor {
        let user = std::env::var("USER")
            .or_else(|_| std::env::var("USERNAME"))
            .ok()
            .filter(|u| check_text("actor", u).is_ok())
            .unwrap_or_else(|| "unknown".to_owned());
        Actor(format!("cli:{user}"))
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Actor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Checks a free text an operator gives (a reason, an actor's name): 1 to
/// [`MAX_TEXT`] characters, no control characters.
pub fn check_text(what: &str, text: &str) -> Result<(), InputError> {
    let n = text.chars().count();
    if text.trim().is_empty() {
        return Err(InputError::Other(format!(
            "the {what} is empty; say who or why in a few words"
        )));
    }
    if n > MAX_TEXT {
        return Err(InputError::Other(format!(
            "the {what} has {n} characters; use at most {MAX_TEXT}"
        )));
    }
    if let Some(c) = text.chars().find(|c| c.is_control()) {
        return Err(InputError::Other(format!(
            "the {what} contains the control character {c:?}; use printable text"
        )));
    }
    Ok(())
}

/// One operator action, as the audit log keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AuditEntry {
    /// Unique id of the entry.
    pub id: String,
    /// When, by the league clock.
    pub at: DateTime<Utc>,
    /// Who: an admin token's name, or `cli:<user>`.
    pub actor: String,
    /// What: `ban`, `unban`, `adjust`, `resettle`, `clock`.
    pub action: String,
    /// The player acted on, if one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub player: Option<String>,
    /// Why, as the operator said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The action's particulars (for example the score before and after).
    #[serde(default)]
    pub details: serde_json::Value,
    /// When it was recorded, by the real clock (the store's): beside `at` on a staging
    /// league, whose clock runs ahead. The log keeps and expires its entries by this
    /// time (`[audit] keep`), never by the league clock.
    /// (Set when read from the log, never stored in the entry's text.)
    #[serde(skip_deserializing, skip_serializing_if = "Option::is_none")]
    pub recorded_at: Option<DateTime<Utc>>,
}

/// Which entries [`Operator::audit`] reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuditQuery {
    /// Only entries about this player.
    pub player: Option<String>,
    /// Only entries recorded at or after this time, by the real clock
    /// ([`AuditEntry::recorded_at`]; the league clock's on a production league).
    pub since: Option<DateTime<Utc>>,
    /// At most this many entries (default and maximum [`MAX_AUDIT`]).
    pub limit: Option<u64>,
}

impl AuditQuery {
    /// Entries about `player`.
    pub fn player(mut self, player: impl Into<String>) -> Self {
        self.player = Some(player.into());
        self
    }

    /// Entries at or after `since`.
    pub fn since(mut self, since: DateTime<Utc>) -> Self {
        self.since = Some(since);
        self
    }

    /// At most `limit` entries.
    pub fn limit(mut self, limit: u64) -> Self {
        self.limit = Some(limit);
        self
    }
}

/// The most entries one read of the audit log returns.
pub const MAX_AUDIT: u64 = 1000;

impl<S: Store> Operator<S> {
    /// The audit log, oldest first: the entries the query selects.
    pub async fn audit(&self, query: &AuditQuery) -> Result<Vec<AuditEntry>, Error> {
        let limit = query.limit.unwrap_or(MAX_AUDIT);
        if limit == 0 || limit > MAX_AUDIT {
            return Err(InputError::BadLimit {
                limit,
                max: MAX_AUDIT,
            }
            .into());
        }
        let since = query.since.map_or(i64::MIN, millis);
        let season = self.ctx.keys().season();
        let mut out = Vec::new();
        let mut from = since;
        // A player's entries are picked from the whole log, a page at a time.
        loop {
            let page = self
                .ctx
                .store()
                .audit_entries(&season, from, MAX_AUDIT)
                .await?;
            let n = page.len() as u64;
            let mut last = from;
            for (at, text) in page {
                last = at;
                let mut entry: AuditEntry = serde_json::from_str(&text).map_err(|e| {
                    StoreError::Protocol(format!("audit entry {text:?} is not leaguekit's: {e}"))
                })?;
                entry.recorded_at = Some(from_millis(at));
                if query.player.is_none() || entry.player == query.player {
                    out.push(entry);
                    if out.len() as u64 == limit {
                        return Ok(out);
                    }
                }
            }
            if n < MAX_AUDIT || query.player.is_none() {
                return Ok(out);
            }
            // Entries at `last` may continue beyond the page: read from `last` again
            // and skip those already seen.
            if last == from {
                return Ok(out);
            }
            out.retain(|e| e.recorded_at.is_some_and(|r| millis(r) < last));
            from = last;
        }
    }

    /// Appends an action to the audit log and returns its entry. Called after the
    /// action took effect: an action whose write failed is not logged, and a logged
    /// action happened.
    pub(crate) async fn record(
        &self,
        actor: &Actor,
        action: &str,
        player: Option<&str>,
        reason: Option<&str>,
        details: serde_json::Value,
    ) -> Result<AuditEntry, Error> {
        let at = self.ctx.now().await?;
        let entry = AuditEntry {
            id: format!(
                "{}-{}",
                millis(at),
                crate::rollover::owner_id().replace('-', "")
            ),
            at: from_millis(millis(at)),
            actor: actor.name().to_owned(),
            action: action.to_owned(),
            player: player.map(str::to_owned),
            reason: reason.map(str::to_owned),
            details,
            recorded_at: None,
        };
        let text = serde_json::to_string(&entry)
            .map_err(|e| InputError::Other(format!("cannot encode the audit entry: {e}")))?;
        let real = self.append_text(&text).await?;
        Ok(AuditEntry {
            recorded_at: Some(from_millis(real)),
            ..entry
        })
    }

    /// Appends an entry's text to the log at the real clock's now (the store's, never
    /// the staging clock's), dropping the entries older than `[audit] keep` by that
    /// clock; answers the time it was recorded at (unix ms). An entry appended again
    /// keeps its first time.
    pub(crate) async fn append_text(&self, text: &str) -> Result<i64, Error> {
        let real = self.ctx.store().now().await?;
        let keep = self.ctx.season().audit.keep;
        let keep_from = real.saturating_sub(i64::try_from(keep.as_millis()).unwrap_or(i64::MAX));
        self.ctx
            .store()
            .append_audit(&self.ctx.keys().season(), real, text, keep_from)
            .await?;
        Ok(real)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::{League, ManualClock, MemoryStore, Season};

    fn league() -> (League<MemoryStore>, ManualClock) {
        let clock = ManualClock::new(
            DateTime::parse_from_rfc3339("2026-01-05T12:00:00Z")
                .expect("time")
                .with_timezone(&Utc),
        );
        let season = Season::load(std::path::Path::new("config/season.toml")).expect("season");
        let store = MemoryStore::with_clock(Arc::new(clock.clone()));
        (
            League::with_clock(season, store, Arc::new(clock.clone())),
            clock,
        )
    }

    #[tokio::test]
    async fn entries_by_player_time_and_limit() {
        let (league, clock) = league();
        let op = league.operator();
        let who = Actor::new("alice").expect("actor");
        for (player, reason) in [("p1", "first"), ("p2", "second"), ("p1", "third")] {
            op.record(
                &who,
                "ban",
                Some(player),
                Some(reason),
                serde_json::json!({}),
            )
            .await
            .expect("record");
            clock.advance(chrono::Duration::seconds(1));
        }
        let all = op.audit(&AuditQuery::default()).await.expect("all");
        let reasons: Vec<_> = all.iter().filter_map(|e| e.reason.as_deref()).collect();
        assert_eq!(reasons, ["first", "second", "third"]);
        assert!(all.iter().all(|e| e.actor == "alice" && e.action == "ban"));
        let p1 = op
            .audit(&AuditQuery::default().player("p1"))
            .await
            .expect("p1");
        assert_eq!(p1.len(), 2);
        let since = op
            .audit(&AuditQuery::default().since(all[1].at))
            .await
            .expect("since");
        assert_eq!(since.len(), 2);
        let one = op
            .audit(&AuditQuery::default().limit(1))
            .await
            .expect("one");
        assert_eq!(one[0].id, all[0].id);
        assert!(matches!(
            op.audit(&AuditQuery::default().limit(0)).await,
            Err(Error::Input(InputError::BadLimit { .. }))
        ));
    }

    #[test]
    fn actors_and_reasons_are_checked() {
        assert!(Actor::new("").is_err());
        assert!(Actor::new("a\u{7}b").is_err());
        assert!(check_text("reason", &"x".repeat(MAX_TEXT + 1)).is_err());
        assert!(check_text("reason", "cheating, see ticket 12").is_ok());
        assert!(Actor::cli().name().starts_with("cli:"));
    }
}
