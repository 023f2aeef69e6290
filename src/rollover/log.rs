//! The record of closed periods: a player's last outcome, and a period's outcome log
//! read from a cursor (`leaguekit export`), resumable without loss or repeat.

use serde::Serialize;
use tracing::instrument;

use super::Rollover;
use super::outcome::Outcome;
use super::outcome::{self, LastOutcome};
use crate::context::validate_player;
use crate::error::{Error, InputError};
use crate::season::calendar::PeriodId;
use crate::store::Store;

/// One line of a period's outcome log ([`crate::League::outcomes`], `leaguekit export`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct OutcomeRecord {
    /// The period.
    pub period: PeriodId,
    /// The tier.
    pub tier: String,
    /// The cohort (absent without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cohort: Option<String>,
    /// The bracket (within the tier's cohort).
    pub bracket: u32,
    /// Final rank.
    pub rank: u64,
    /// The player.
    pub player: String,
    /// Final score.
    pub score: u64,
    /// Promoted, stayed or demoted.
    pub outcome: outcome::Movement,
    /// The tier after the period.
    pub next_tier: String,
    /// The reward, if any.
    pub reward: Option<String>,
    /// Whether a re-settlement changed this outcome after the close (the record then
    /// shows the corrected outcome; `leaguekit resettle`).
    pub corrected: bool,
    /// Why it was corrected: the reason of the re-settlement that last changed it.
    pub reason: Option<String>,
    /// Where to resume reading after this record.
    pub cursor: String,
}

impl<S: Store> Rollover<S> {
    /// The player's most recent closed period, if any.
    #[instrument(skip(self), err(level = "debug"))]
    pub async fn last_outcome(&self, player: &str) -> Result<Option<LastOutcome>, Error> {
        validate_player(player)?;
        let Some(state) = self
            .ctx
            .store()
            .player_state(&self.ctx.keys().player(player))
            .await?
        else {
            return Ok(None);
        };
        let now = self.ctx.now().await?;
        let current = self.ctx.period_at(Some(now)).map(|p| p.id).unwrap_or(0);
        let candidates = [
            Some((state.period, state.tier.clone(), state.bracket)),
            state.previous.clone(),
        ];
        for (period, tier, bracket) in candidates.into_iter().flatten() {
            if period >= current {
                continue;
            }
            let bk = self.ctx.keys().bracket(period, &tier, bracket);
            if let Some(o) = self
                .ctx
                .store()
                .outcome(&bk, player)
                .await?
                .and_then(|s| outcome::decode(player, &s))
            {
                let (tier_name, cohort) = crate::season::split_group(&tier);
                return Ok(Some(LastOutcome {
                    period,
                    tier: tier_name.to_owned(),
                    cohort: cohort.map(str::to_owned),
                    bracket,
                    rank: o.rank,
                    score: o.score,
                    outcome: o.outcome,
                    next_tier: o.next_tier,
                    reward: o.reward,
                }));
            }
        }
        Ok(None)
    }

    /// A closed period's outcomes in a fixed order (tier from lowest, bracket, rank),
    /// from `cursor` (exclusive; `None` for the start), at most `limit`. A consumer that
    /// stores the cursor of the last record it handled resumes without loss or repeat.
    #[instrument(skip(self), err(level = "debug"))]
    pub async fn outcomes(
        &self,
        period: PeriodId,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<Vec<OutcomeRecord>, Error> {
        let record = self.ctx.period(period)?;
        let pkeys = self.ctx.keys().period(period);
        // A period is closed once the season's mark passed it (an empty period is
        // closed by the mark alone) or its summary is written.
        let through = self
            .ctx
            .store()
            .closed_through(&self.ctx.keys().season())
            .await?;
        if through < period && self.ctx.store().period_summary(&pkeys).await?.is_none() {
            let now = self.ctx.now().await?;
            let closes = self.ctx.closes_at(&record);
            return Err(InputError::Other(if closes > now {
                format!(
                    "period {period} is not closed: it is still running and takes events \
                     until {closes} (league clock; now {now}); export it once the first \
                     rollover after that closed it"
                )
            } else {
                format!(
                    "period {period} ended and is not closed yet: run `leaguekit rollover` (or \
                     wait for the scheduler), then export it"
                )
            })
            .into());
        }
        let after = match cursor {
            Some(c) => Some(parse_cursor(c)?),
            None => None,
        };
        let joins = self.ctx.store().joined(&pkeys).await?;
        let mut out = Vec::new();
        for (i, group, b) in self.brackets_of(&joins) {
            let (tier, cohort) = crate::season::split_group(&group);
            let cohort = cohort.map(str::to_owned);
            if let Some((ci, cc, cb, _)) = &after
                && (i, &cohort, b) < (*ci, cc, *cb)
            {
                continue;
            }
            let bk = self.ctx.keys().bracket(period, &group, b);
            // The outcomes and, for a re-settled bracket, the marks of its corrected
            // players, in one read of the bracket's slot.
            let record = self.ctx.store().correction(&bk).await?;
            let why = |player: &str| -> Option<String> {
                let (_, v) = record.marks.iter().find(|(p, _)| p == player)?;
                let v = usize::try_from(*v).ok()?.checked_sub(1)?;
                Some(record.versions.get(v)?.reason.clone())
            };
            let mut rows: Vec<Outcome> = record
                .outcomes
                .iter()
                .filter_map(|(p, s)| outcome::decode(p, s))
                .collect();
            rows.sort_by_key(|o| o.rank);
            for o in rows {
                let position = (i, cohort.clone(), b, o.rank);
                if let Some(after) = &after
                    && position <= *after
                {
                    continue;
                }
                if out.len() >= limit {
                    return Ok(out);
                }
                let reason = why(&o.player);
                out.push(OutcomeRecord {
                    corrected: reason.is_some(),
                    reason,
                    period,
                    tier: tier.to_owned(),
                    cohort: cohort.clone(),
                    bracket: b,
                    rank: o.rank,
                    cursor: cursor_of(&position),
                    player: o.player,
                    score: o.score,
                    outcome: o.outcome,
                    next_tier: o.next_tier,
                    reward: o.reward,
                });
            }
        }
        Ok(out)
    }
}

/// Where a record sits in the log's order: tier index, cohort (none first), bracket,
/// rank.
type Position = (usize, Option<String>, u32, u64);

/// `tier.bracket.rank`, with `.cohort` after it for a cohort's brackets.
fn cursor_of(p: &Position) -> String {
    match &p.1 {
        None => format!("{}.{}.{}", p.0, p.2, p.3),
        Some(c) => format!("{}.{}.{}.{c}", p.0, p.2, p.3),
    }
}

fn parse_cursor(c: &str) -> Result<Position, InputError> {
    let bad = || {
        InputError::Other(format!(
            "invalid cursor {c:?}; pass a cursor from a previous record"
        ))
    };
    let mut it = c.splitn(4, '.');
    let i = it.next().and_then(|s| s.parse().ok()).ok_or_else(bad)?;
    let b = it.next().and_then(|s| s.parse().ok()).ok_or_else(bad)?;
    let r = it.next().and_then(|s| s.parse().ok()).ok_or_else(bad)?;
    let cohort = it.next().map(str::to_owned);
    if cohort.as_deref().is_some_and(str::is_empty) {
        return Err(bad());
    }
    Ok((i, cohort, b, r))
}
