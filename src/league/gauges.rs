//! The gauges of [`crate::metrics`], set from the store: players per tier, and whether
//! the store refuses writes.

use crate::error::Error;
use crate::store::Store;

use super::League;

impl<S: Store> League<S> {
    /// Sets `leaguekit_players{tier}` from the current period's join counters (one
    /// store read). The scheduler calls it after every run and `leaguekit serve` at
    /// every scrape; a game server that embeds the library without either may call it
    /// on its own timer. A store failure leaves the gauges as they were and is returned.
    pub async fn refresh_players_gauge(&self) -> Result<(), Error> {
        for t in self.counts(None).await? {
            crate::metrics::set_players(&t.tier, t.players);
        }
        Ok(())
    }

    /// Asks the store whether it refuses writes now (one store call, see
    /// [`crate::store::LeagueStore::write_refusal`]), sets
    /// `leaguekit_store_refuses_writes` to 1 or 0, and returns why it refuses them, if
    /// it does. `/healthz` and every scrape of `leaguekit serve` call it; a game server
    /// that embeds the library may call it on its own timer. A store failure leaves
    /// the gauge as it was and is returned.
    pub async fn refresh_write_state(&self) -> Result<Option<String>, Error> {
        let refusal = self.store().write_refusal().await?;
        crate::metrics::set_store_refuses_writes(refusal.is_some());
        Ok(refusal)
    }
}
