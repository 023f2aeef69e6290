//! Bans: an operator keeps a player out of the league, for a while or until lifted.
//!
//! A ban is written in steps, each one atomic and idempotent on one hash slot, in
//! this order:
//!
//! 1. the ban record in the player's slot ([`crate::store::keys::PlayerKeys::ban`]):
//!    the **authoritative** state. Every join reads it with the player's snapshot
//!    and is refused while it holds;
//! 2. the season's index of bans (for listing; [`Operator::bans`] checks each entry
//!    against the record);
//! 3. for each period a join could still place the player in (the league clock's
//!    period, the one before and the one after, and the player's latest placement): in
//!    the period's slot, the player's placement if any, else a marker that `join`
//!    refuses, so a join that read the snapshot before step 1 cannot place them;
//! 4. for each placement found: in the bracket's slot, a marker that the board entry
//!    refuses, and the player's entry removed from the board (unless the bracket is
//!    closed), so a join between steps 3 and 4 cannot put them back.
//!
//! Markers are hints checked against the record: a board entry refused by a marker
//! whose ban has ended or been lifted deletes that marker (only if unchanged) and is
//! tried again. Lifting a ban deletes the record first, then the index entry and the
//! markers; an interrupted lift is completed by running it again.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::Operator;
use super::audit::{Actor, check_text};
use crate::context::{from_millis, millis, validate_player};
use crate::error::{Error, InputError, StoreError};
use crate::season::calendar::Period;
use crate::store::{BracketBan, PeriodBan, PlayerState, Store};

/// A player's ban, as the league keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Ban {
    /// The banned player.
    pub player: String,
    /// Why, as the operator said.
    pub reason: String,
    /// Who banned them.
    pub actor: String,
    /// When, by the league clock.
    pub since: DateTime<Utc>,
    /// When the ban ends by the league clock; `None`: when an operator lifts it.
    pub until: Option<DateTime<Utc>>,
}

impl Ban {
    /// Whether the ban holds at `now`.
    pub fn holds_at(&self, now: DateTime<Utc>) -> bool {
        self.until.is_none_or(|u| u > now)
    }

    /// The marker the ban writes in periods and brackets: `since_ms|until_ms`.
    pub(crate) fn marker(&self) -> String {
        format!(
            "{}|{}",
            millis(self.since),
            self.until
                .map(|u| millis(u).to_string())
                .unwrap_or_default()
        )
    }

    /// The error a refused join or score update of the player gets.
    pub(crate) fn refusal(&self) -> Error {
        InputError::Banned {
            player: self.player.clone(),
            until: self.until,
        }
        .into()
    }

    /// A stored record read back.
    pub(crate) fn parse(text: &str) -> Result<Ban, StoreError> {
        serde_json::from_str(text).map_err(|e| {
            StoreError::Protocol(format!("ban record {text:?} is not leaguekit's: {e}"))
        })
    }
}

/// The ban a stored record (as a player's snapshot carries it) holds at `now`, if any.
pub(crate) fn holding(record: Option<&str>, now: DateTime<Utc>) -> Result<Option<Ban>, StoreError> {
    match record {
        None => Ok(None),
        Some(text) => Ok(Some(Ban::parse(text)?).filter(|b| b.holds_at(now))),
    }
}

impl<S: Store> Operator<S> {
    /// Bans `player` until `until` (by the league clock; `None`: until lifted): their
    /// joins and score updates are refused with [`InputError::Banned`], they leave the
    /// board of every open bracket they are on at once (the others' ranks close up;
    /// the bracket's place is not given to anyone else), and so take no outcome,
    /// promotion or reward at its close. Banning a banned player replaces the ban.
    ///
    /// Refused, writing nothing: an unknown player ([`InputError::UnknownPlayer`]), an
    /// `until` not after now ([`InputError::BanInPast`]), an empty reason.
    pub async fn ban(
        &self,
        actor: &Actor,
        player: &str,
        reason: &str,
        until: Option<DateTime<Utc>>,
    ) -> Result<Ban, Error> {
        validate_player(player)?;
        check_text("reason", reason)?;
        let now = self.ctx.now().await?;
        if let Some(u) = until
            && u <= now
        {
            return Err(InputError::BanInPast { until: u, now }.into());
        }
        let store = self.ctx.store();
        let pkeys = self.ctx.keys().player(player);
        let Some(state) = store.player_state(&pkeys).await? else {
            return Err(InputError::UnknownPlayer {
                player: player.to_owned(),
            }
            .into());
        };
        let ban = Ban {
            player: player.to_owned(),
            reason: reason.to_owned(),
            actor: actor.name().to_owned(),
            since: from_millis(millis(now)),
            until: until.map(|u| from_millis(millis(u))),
        };
        let record = serde_json::to_string(&ban)
            .map_err(|e| InputError::Other(format!("cannot encode the ban: {e}")))?;
        store.set_ban(&pkeys, &record).await?;
        store
            .index_ban(&self.ctx.keys().season(), player, Some(&record))
            .await?;
        let marker = ban.marker();
        let mut removed = Vec::new();
        // The league clock again, after the record is written: a join that read the
        // player's snapshot before it stamped its time before this.
        let now = self.ctx.now().await?;
        for period in self.periods_open_to(now, &state) {
            let pkeys = self.ctx.keys().period(period.id);
            let ttl = self.ctx.ttl_secs(period.id);
            if let PeriodBan::Placed(tier, bracket) =
                store.ban_period(&pkeys, player, &marker, ttl).await?
            {
                let bkeys = self.ctx.keys().bracket(period.id, &tier, bracket);
                if store.ban_bracket(&bkeys, player, &marker, ttl).await? == BracketBan::Removed {
                    let (tier, cohort) = crate::season::split_group(&tier);
                    removed.push(serde_json::json!({
                        "period": period.id, "tier": tier, "cohort": cohort, "bracket": bracket,
                    }));
                }
            }
        }
        self.record(
            actor,
            "ban",
            Some(player),
            Some(reason),
            serde_json::json!({ "until": ban.until, "removed_from": removed }),
        )
        .await?;
        Ok(ban)
    }

    /// Lifts `player`'s ban (ended or not): they may join again. In a period they were
    /// placed in, joining again puts them back on the same bracket's board as a player
    /// who has not scored yet (the score they had is gone). Returns the ban lifted,
    /// `None` if there was none (the markers are cleared all the same).
    pub async fn unban(
        &self,
        actor: &Actor,
        player: &str,
        reason: Option<&str>,
    ) -> Result<Option<Ban>, Error> {
        validate_player(player)?;
        if let Some(r) = reason {
            check_text("reason", r)?;
        }
        let store = self.ctx.store();
        let pkeys = self.ctx.keys().player(player);
        let ban = store
            .ban(&pkeys)
            .await?
            .map(|t| Ban::parse(&t))
            .transpose()?;
        let state = store.player_state(&pkeys).await?;
        if ban.is_none() && state.is_none() {
            return Err(InputError::UnknownPlayer {
                player: player.to_owned(),
            }
            .into());
        }
        store.clear_ban(&pkeys).await?;
        store
            .index_ban(&self.ctx.keys().season(), player, None)
            .await?;
        let now = self.ctx.now().await?;
        if let Some(state) = &state {
            for period in self.periods_open_to(now, state) {
                let pkeys = self.ctx.keys().period(period.id);
                store.unmark_ban(&pkeys, None, player, None).await?;
                if let Some((tier, bracket)) = store.placement(&pkeys, player).await? {
                    let bkeys = self.ctx.keys().bracket(period.id, &tier, bracket);
                    store.unmark_ban(&pkeys, Some(&bkeys), player, None).await?;
                }
            }
        }
        self.record(
            actor,
            "unban",
            Some(player),
            reason,
            serde_json::json!({ "lifted": ban.as_ref().map(|b| serde_json::json!({
                "since": b.since, "until": b.until, "reason": b.reason, "actor": b.actor,
            })) }),
        )
        .await?;
        Ok(ban)
    }

    /// The player's ban, if one holds now by the league clock.
    pub async fn ban_of(&self, player: &str) -> Result<Option<Ban>, Error> {
        validate_player(player)?;
        let now = self.ctx.now().await?;
        let record = self
            .ctx
            .store()
            .ban(&self.ctx.keys().player(player))
            .await?;
        Ok(holding(record.as_deref(), now)?)
    }

    /// The bans that hold now, by player: the season's index, each entry checked
    /// against the player's own record (which decides).
    pub async fn bans(&self) -> Result<Vec<Ban>, Error> {
        let now = self.ctx.now().await?;
        let store = self.ctx.store();
        let mut out = Vec::new();
        for (player, _) in store.ban_index(&self.ctx.keys().season()).await? {
            let record = store.ban(&self.ctx.keys().player(&player)).await?;
            if let Some(ban) = holding(record.as_deref(), now)? {
                out.push(ban);
            }
        }
        Ok(out)
    }

    /// The periods a join could place the player in, or has placed them in with a
    /// bracket still open: the league clock's period, the ones before and after it
    /// (a late event of the period just ended, a join stamped ahead by the allowed
    /// skew), and the player's latest placement.
    fn periods_open_to(&self, now: DateTime<Utc>, state: &PlayerState) -> Vec<Period> {
        let mut ids = vec![state.period];
        if let Ok(current) = self.ctx.period_at(Some(now)) {
            ids.extend([current.id.saturating_sub(1), current.id, current.id + 1]);
        }
        ids.sort_unstable();
        ids.dedup();
        ids.into_iter()
            .filter(|&id| id >= 1)
            .filter_map(|id| self.ctx.period(id).ok())
            .collect()
    }
}
