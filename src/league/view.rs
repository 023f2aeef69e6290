//! Reading the league: a player's placement, rank and score; players and brackets per
//! tier.

use std::collections::HashMap;

use serde::Serialize;
use tracing::instrument;

use crate::error::Error;
use crate::season::calendar::PeriodId;
use crate::store::Store;

use super::*;

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
    /// Brackets opened.
    pub brackets: u64,
}

impl<S: Store> League<S> {
    /// The player's tier, bracket, rank and score in a period (default: current).
    #[instrument(skip(self), err(level = "debug"))]
    pub async fn player(
        &self,
        player: &str,
        period: Option<PeriodId>,
    ) -> Result<PlayerView, Error> {
        validate_player(player)?;
        let period = self.resolve_period(period).await?;
        let placed = self
            .store
            .placement(&self.keys.period(period.id), player)
            .await?;
        let Some((tier, bracket)) = placed else {
            let state = self.store.player_state(&self.keys.player(player)).await?;
            let tier = self
                .next_tier(player, state.as_ref(), period.id, None)
                .await?;
            return Ok(PlayerView {
                player: player.to_owned(),
                period: period.id,
                tier,
                bracket: None,
                rank: None,
                score: None,
            });
        };
        let entry = self
            .store
            .entry(&self.keys.bracket(period.id, &tier, bracket), player)
            .await?;
        let (rank, score) = match entry {
            Some((rank, packed)) => (Some(rank + 1), Some(self.season.packing.unpack(packed).0)),
            None => (None, None),
        };
        Ok(PlayerView {
            player: player.to_owned(),
            period: period.id,
            tier,
            bracket: Some(bracket),
            rank,
            score,
        })
    }

    /// Players and brackets per tier in a period (default: current), every tier listed.
    #[instrument(skip(self), err(level = "debug"))]
    pub async fn counts(&self, period: Option<PeriodId>) -> Result<Vec<TierCount>, Error> {
        let period = self.resolve_period(period).await?;
        let joined: HashMap<String, u64> = self
            .store
            .joined(&self.keys.period(period.id))
            .await?
            .into_iter()
            .collect();
        let size = u64::from(self.season.brackets.size);
        Ok(self
            .season
            .tiers
            .iter()
            .map(|t| {
                let players = joined.get(&t.name).copied().unwrap_or(0);
                TierCount {
                    tier: t.name.clone(),
                    players,
                    brackets: players.div_ceil(size),
                }
            })
            .collect())
    }
}
