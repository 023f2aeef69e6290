//! Rewards: pending until claimed; a claim with an id answers a repeat as the first
//! time.

use crate::events::{Event, Kind};
use tracing::instrument;

use super::Rollover;
use crate::context::{validate_player, validate_request_id};
use crate::error::Error;
use crate::store::{Claim, Store};

use super::RewardGrant;

impl<S: Store> Rollover<S> {
    /// The player's rewards not yet claimed.
    #[instrument(skip(self), err(level = "debug"))]
    pub async fn rewards(&self, player: &str) -> Result<Vec<RewardGrant>, Error> {
        validate_player(player)?;
        Ok(self
            .ctx
            .store()
            .rewards(&self.ctx.keys().player(player))
            .await?
            .into_iter()
            .map(|(source, grant)| RewardGrant { source, grant })
            .collect())
    }

    /// Claims every pending reward of the player. With a `request_id`, a repeated
    /// claim returns the same grants and grants nothing new; without one, a repeated
    /// claim returns only what became pending since.
    #[instrument(skip(self), err(level = "debug"))]
    pub async fn claim(
        &self,
        player: &str,
        request_id: Option<&str>,
    ) -> Result<Vec<RewardGrant>, Error> {
        validate_player(player)?;
        if let Some(id) = request_id {
            validate_request_id(id)?;
        }
        self.ctx.check_layout().await?;
        let now = self.ctx.now().await?;
        let current = self.ctx.period_at(Some(now)).map(|p| p.id).unwrap_or(0);
        let head = self.ctx.log_spec().map(|_| {
            Event::new(
                Kind::RewardClaimed,
                &self.ctx.season().name,
                current,
                now.timestamp_millis(),
            )
            .player(player)
            .head()
        });
        let claim = Claim::new(request_id)
            .in_period(current)
            .ttl_secs(self.ctx.season().retention.player_ttl.as_secs().max(1))
            .logged(self.ctx.log_spec().zip(head.as_deref()));
        Ok(self
            .ctx
            .store()
            .claim_rewards(&self.ctx.keys().player(player), &claim)
            .await?
            .into_iter()
            .map(|(source, grant)| RewardGrant { source, grant })
            .collect())
    }
}
