//! Rewards: pending until claimed; a claim with an id answers a repeat as the first
//! time.

use tracing::instrument;

use crate::error::Error;
use crate::league::League;
use crate::store::{Claim, Store};

use super::RewardGrant;

impl<S: Store> League<S> {
    /// The player's rewards not yet claimed.
    #[instrument(skip(self), err(level = "debug"))]
    pub async fn rewards(&self, player: &str) -> Result<Vec<RewardGrant>, Error> {
        crate::league::validate_player(player)?;
        Ok(self
            .store()
            .rewards(&self.keys().player(player))
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
        crate::league::validate_player(player)?;
        if let Some(id) = request_id {
            crate::league::validate_request_id(id)?;
        }
        self.check_layout().await?;
        let now = self.now().await?;
        let current = self.period_at(Some(now)).map(|p| p.id).unwrap_or(0);
        let claim = Claim::new(request_id)
            .in_period(current)
            .ttl_secs(self.season().retention.player_ttl.as_secs().max(1));
        Ok(self
            .store()
            .claim_rewards(&self.keys().player(player), &claim)
            .await?
            .into_iter()
            .map(|(source, grant)| RewardGrant { source, grant })
            .collect())
    }
}
