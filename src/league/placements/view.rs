//! Reading the league: a player's placement, rank and score; players and brackets per
//! tier.

use serde::Serialize;
use tracing::instrument;

use crate::error::Error;
use crate::season::calendar::PeriodId;
use crate::store::Store;

use super::Placements;
use crate::context::validate_player;

/// A player's position in a period.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PlayerView {
    /// The player.
    pub player: String,
    /// The period.
    pub period: PeriodId,
    /// The tier they are placed in, or would join next.
    pub tier: String,
    /// Their cohort, if placed in one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cohort: Option<String>,
    /// Their bracket, if placed.
    pub bracket: Option<u32>,
    /// Their 1-based rank, if placed.
    pub rank: Option<u64>,
    /// Their score, if placed.
    pub score: Option<u64>,
}

/// Players and brackets of one tier in a period.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct TierCount {
    /// The tier.
    pub tier: String,
    /// Players placed.
    pub players: u64,
    /// Brackets opened (in all cohorts).
    pub brackets: u64,
    /// Per cohort, in label order (absent in a season without cohorts); players
    /// placed without a cohort are under `cohort: null`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cohorts: Vec<CohortCount>,
}

/// Players and brackets of one cohort of a tier.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct CohortCount {
    /// The cohort (`None`: players placed without one).
    pub cohort: Option<String>,
    /// Players placed.
    pub players: u64,
    /// Brackets opened.
    pub brackets: u64,
}

impl<S: Store> Placements<S> {
    /// The player's tier, bracket, rank and score in a period (default: current).
    #[instrument(skip(self), err(level = "debug"))]
    pub async fn player(
        &self,
        player: &str,
        period: Option<PeriodId>,
    ) -> Result<PlayerView, Error> {
        validate_player(player)?;
        let period = self.ctx.resolve_period(period).await?;
        let placed = self
            .ctx
            .store()
            .placement(&self.ctx.keys().period(period.id), player)
            .await?;
        let Some((tier, bracket)) = placed else {
            let state = self
                .ctx
                .store()
                .player_state(&self.ctx.keys().player(player))
                .await?;
            let tier = self
                .next_tier(player, state.as_ref(), period.id, None)
                .await?;
            return Ok(PlayerView {
                player: player.to_owned(),
                period: period.id,
                tier,
                cohort: None,
                bracket: None,
                rank: None,
                score: None,
            });
        };
        let entry = self
            .ctx
            .store()
            .entry(&self.ctx.keys().bracket(period.id, &tier, bracket), player)
            .await?;
        let (rank, score) = match entry {
            Some((rank, packed)) => (
                Some(rank + 1),
                Some(self.ctx.season().packing.unpack(packed).0),
            ),
            None => (None, None),
        };
        let (tier_name, cohort) = crate::season::split_group(&tier);
        Ok(PlayerView {
            player: player.to_owned(),
            period: period.id,
            tier: tier_name.to_owned(),
            cohort: cohort.map(str::to_owned),
            bracket: Some(bracket),
            rank,
            score,
        })
    }

    /// Players and brackets per tier in a period (default: current), every tier listed,
    /// with a breakdown per cohort in a season with cohorts.
    #[instrument(skip(self), err(level = "debug"))]
    pub async fn counts(&self, period: Option<PeriodId>) -> Result<Vec<TierCount>, Error> {
        let period = self.ctx.resolve_period(period).await?;
        let joined = self
            .ctx
            .store()
            .joined(&self.ctx.keys().period(period.id))
            .await?;
        let mut counts: Vec<TierCount> = self
            .ctx
            .season()
            .tiers
            .iter()
            .map(|t| TierCount {
                tier: t.name.clone(),
                players: 0,
                brackets: 0,
                cohorts: Vec::new(),
            })
            .collect();
        let caps = self.ctx.season().caps();
        for (group, joins) in joined {
            let players = joins.counted();
            let Some((i, _)) = self.ctx.season().tier_by_any_name(&group) else {
                continue;
            };
            let (_, cohort) = crate::season::split_group(&group);
            let c = &mut counts[i];
            c.players += players;
            c.brackets += joins.brackets(caps);
            if self.ctx.season().cohorts.is_some() {
                c.cohorts.push(CohortCount {
                    cohort: cohort.map(str::to_owned),
                    players,
                    brackets: joins.brackets(caps),
                });
            }
        }
        for c in &mut counts {
            c.cohorts.sort_by(|a, b| a.cohort.cmp(&b.cohort));
        }
        Ok(counts)
    }
}
