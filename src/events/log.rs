//! Reading a league's events: one bracket's, one player's (across their logs), or
//! every log of a period (for webhook delivery).

use std::sync::Arc;

use crate::context::Context;
use crate::error::{Error, StoreError};
use crate::store::keys::PLAYER_BUCKETS;
use crate::store::{LogEntry, LogRead, Pos, Store};

use super::cursor::{PeriodCursor, PlayerCursor};
use super::{kind_of, with_id};

/// One event as read: its JSON (id included) and where a reader is after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Logged {
    /// The event's type (`player.placed`).
    pub kind: String,
    /// The event JSON, id first.
    pub json: String,
    /// The position after this event, to resume from: for a bracket, its log's
    /// position; for a player, their cursor ([`PlayerCursor`]) in text form.
    pub cursor: String,
}

/// A page of a player's events, and where the reader is after all of them (past the
/// bucket's other players' events too, which are read and skipped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlayerPage {
    /// The player's events, oldest first (by the time their logs wrote them).
    pub events: Vec<Logged>,
    /// The cursor after everything read.
    pub cursor: PlayerCursor,
}

/// Reads the event logs of one league.
#[derive(Debug)]
pub struct EventLog<S: Store> {
    ctx: Arc<Context<S>>,
}

impl<S: Store> EventLog<S> {
    /// The event logs of the league whose parts share `ctx`.
    pub fn new(ctx: Arc<Context<S>>) -> Self {
        EventLog { ctx }
    }

    /// Whether the season keeps an event log (`[events]`).
    pub fn enabled(&self) -> bool {
        self.ctx.log_spec().is_some()
    }

    /// Up to `limit` events of bracket `bracket` of `tier` in `period`, after `after`.
    pub async fn bracket(
        &self,
        period: u64,
        tier: &str,
        bracket: u32,
        after: Pos,
        limit: usize,
    ) -> Result<Vec<Logged>, Error> {
        let log = self.ctx.keys().bracket(period, tier, bracket).events();
        let entries = self.read_one(&log, after, limit).await?;
        Ok(entries
            .iter()
            .map(|e| Logged {
                kind: kind_of(&e.body).unwrap_or("unknown").to_owned(),
                json: with_id(&log, e),
                cursor: e.pos.to_string(),
            })
            .collect())
    }

    /// Up to about `limit` events of `player` after `cursor`: theirs (placed,
    /// overtaken, outcome, corrections, rewards) and the closes of their latest two
    /// placements' brackets and periods; not the other players'.
    pub async fn player(
        &self,
        player: &str,
        cursor: &PlayerCursor,
        limit: usize,
    ) -> Result<PlayerPage, Error> {
        let keys = self.ctx.keys();
        let pkeys = keys.player(player);
        let state = self.ctx.store().player_state(&pkeys).await?;
        let mut placements: Vec<(u64, String, u32)> = Vec::new();
        if let Some(s) = &state {
            placements.push((s.period, s.tier.clone(), s.bracket));
            if let Some(p) = &s.previous {
                placements.push(p.clone());
            }
        }
        let mut cursor = cursor.clone();
        let periods: Vec<u64> = placements.iter().map(|p| p.0).collect();
        // A cursor from before the player's latest placements keeps its periods until
        // they leave the latest two.
        let mut follow: Vec<u64> = cursor.periods.iter().map(|p| p.period).collect();
        follow.extend(&periods);
        cursor.follow(&follow);
        placements.retain(|p| cursor.periods.iter().any(|c| c.period == p.0));

        // The logs: the bucket's, then per placement its bracket's and its period's.
        let bucket_log = pkeys.events();
        let mut logs: Vec<(String, Pos)> = vec![(bucket_log.clone(), cursor.bucket)];
        for (period, tier, bracket) in &placements {
            let at = cursor.period(*period);
            logs.push((keys.bracket(*period, tier, *bracket).events(), at.bracket));
            logs.push((keys.period(*period).events(), at.period_log));
        }
        let reads: Vec<LogRead<'_>> = logs
            .iter()
            .map(|(log, after)| LogRead {
                log,
                after: *after,
                limit,
            })
            .collect();
        let mut read = Vec::new();
        for (i, entries) in self
            .ctx
            .store()
            .read_logs(&reads)
            .await
            .into_iter()
            .enumerate()
        {
            for e in entries? {
                read.push((i, e));
            }
        }
        // In the order the logs wrote them (their times, then the log), each event's
        // cursor the positions of everything before it.
        read.sort_by_key(|(i, e)| (e.pos, *i));
        let mut events = Vec::new();
        for (i, e) in read {
            if i == 0 {
                cursor.bucket = e.pos;
            } else {
                let (period, _, _) = &placements[(i - 1) / 2];
                let mut at: PeriodCursor = cursor.period(*period);
                if (i - 1) % 2 == 0 {
                    at.bracket = e.pos;
                } else {
                    at.period_log = e.pos;
                }
                cursor.set(at);
            }
            let json = with_id(&logs[i].0, &e);
            // The logs hold the bracket's and bucket's other players' events too.
            if !is_for(&json, player) {
                continue;
            }
            events.push(Logged {
                kind: kind_of(&e.body).unwrap_or("unknown").to_owned(),
                json,
                cursor: cursor.to_string(),
            });
        }
        Ok(PlayerPage { events, cursor })
    }

    /// Every log that period `period`'s events can be in: its brackets' (from its join
    /// counters), its own, and every player bucket's (whose rewards events are of
    /// any period). A period nobody joined has only its own and the buckets'.
    pub async fn logs_of_period(&self, period: u64) -> Result<Vec<String>, Error> {
        let keys = self.ctx.keys();
        let joins = self.ctx.store().joined(&keys.period(period)).await?;
        let caps = self.ctx.season().caps();
        let mut logs = vec![keys.period(period).events()];
        for (tier, j) in joins {
            for b in 1..=j.brackets(caps) {
                let b = u32::try_from(b).map_err(|_| {
                    StoreError::Protocol(format!("tier {tier}'s counter opens {b} brackets"))
                })?;
                logs.push(keys.bracket(period, &tier, b).events());
            }
        }
        Ok(logs)
    }

    /// Every player bucket's log (their reward events).
    pub fn bucket_logs(&self) -> Vec<String> {
        let keys = self.ctx.keys();
        (0..PLAYER_BUCKETS).map(|b| keys.bucket_events(b)).collect()
    }

    /// Up to `limit` entries of each log after its position, as stored (ids are
    /// [`super::event_id`] of the log and the entry's position).
    pub async fn read(&self, reads: &[LogRead<'_>]) -> Vec<Result<Vec<LogEntry>, Error>> {
        self.ctx
            .store()
            .read_logs(reads)
            .await
            .into_iter()
            .map(|r| r.map_err(Error::from))
            .collect()
    }

    async fn read_one(&self, log: &str, after: Pos, limit: usize) -> Result<Vec<LogEntry>, Error> {
        let read = [LogRead { log, after, limit }];
        let mut out = self.ctx.store().read_logs(&read).await;
        Ok(out.pop().unwrap_or_else(|| Ok(Vec::new()))?)
    }
}

/// Whether an event JSON belongs in `player`'s stream: it is about them, or about
/// nobody in particular (their bracket's or period's close).
fn is_for(json: &str, player: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(json)
        .ok()
        .and_then(|v| match v.get("player") {
            None | Some(serde_json::Value::Null) => Some(true),
            Some(p) => p.as_str().map(|p| p == player),
        })
        .unwrap_or(false)
}
