//! Player profiles: set atomically with the size check on the player's records, and
//! cached beside the board of their current bracket with a version.

use std::collections::BTreeMap;

use tracing::instrument;

use crate::error::{Error, InputError, StoreError};
use crate::store::{ProfileChange, ProfileWrite, Store};

use super::Boards;
use crate::context::{truncate, validate_player};

impl<S: Store> Boards<S> {
    /// Sets profile fields of a player (only the season's fields, within max_bytes),
    /// and refreshes the copy cached in their current bracket.
    ///
    /// The merge, the size check and the write are one atomic step on the player's
    /// records, so concurrent edits cannot together exceed `max_bytes`; the cached copy
    /// carries the profile's version, so concurrent edits settle on the newest.
    pub async fn set_profile(
        &self,
        player: &str,
        fields: &[(String, String)],
    ) -> Result<BTreeMap<String, String>, Error> {
        self.change_profile(player, &ProfileChange::merge(fields))
            .await
    }

    /// Applies a change to a player's profile: fields set and removed, merged into the
    /// stored profile or replacing it (see [`ProfileChange`]), in one atomic step with
    /// the size check; refreshes the copy cached in their current bracket.
    #[instrument(skip(self, change), err(level = "debug"))]
    pub async fn change_profile(
        &self,
        player: &str,
        change: &ProfileChange,
    ) -> Result<BTreeMap<String, String>, Error> {
        validate_player(player)?;
        let allowed = &self.ctx.season().profiles.fields;
        for (name, _) in &change.fields {
            if !allowed.iter().any(|f| f == name) {
                return Err(InputError::UnknownProfileField {
                    field: truncate(name),
                    known: allowed.join(", "),
                }
                .into());
            }
        }
        let max = self.ctx.season().profiles.max_bytes;
        // A value alone can show the profile is too large before anything is written.
        let alone: BTreeMap<&str, &str> = change
            .fields
            .iter()
            .filter_map(|(k, v)| Some((k.as_str(), v.as_deref()?)))
            .collect();
        let least = crate::store::profile_json(self.ctx.profile_order(), &alone).len();
        if least > max {
            return Err(InputError::ProfileTooLarge { bytes: least, max }.into());
        }
        self.ctx.check_layout().await?;
        let now = self.ctx.now().await?;
        let period = self.ctx.period_at(Some(now)).ok();
        let ttl = match &period {
            Some(p) => self.ctx.player_ttl_secs(p, now),
            None => self.ctx.season().retention.player_ttl.as_secs().max(1),
        };
        let pkeys = self.ctx.keys().player(player);
        // The profile write and the placement read at once: the placement does not
        // depend on the profile, and one round trip fewer is most of the cost. (A join
        // racing this reads the profile itself, so the cache below may only be late.)
        let period_keys = period.as_ref().map(|p| self.ctx.keys().period(p.id));
        let placement = async {
            match &period_keys {
                Some(keys) => self.ctx.store().placement(keys, player).await,
                None => Ok(None),
            }
        };
        let (written, placement) = futures::join!(
            self.ctx
                .store()
                .set_profile(&pkeys, change, self.ctx.profile_order(), max, ttl),
            placement
        );
        let (version, json) = match written? {
            ProfileWrite::Written { version, json } => (version, json),
            ProfileWrite::TooLarge { bytes } => {
                return Err(InputError::ProfileTooLarge { bytes, max }.into());
            }
        };
        if let Some(period) = period
            && let Some((tier, bracket)) = placement?
        {
            let keys = self.ctx.keys().bracket(period.id, &tier, bracket);
            self.ctx
                .store()
                .cache_profile(&keys, player, version, &json)
                .await?;
        }
        let merged: BTreeMap<String, String> = serde_json::from_str(&json)
            .map_err(|e| StoreError::Protocol(format!("profile {json:?} is not JSON: {e}")))?;
        Ok(merged)
    }

    /// The player's profile fields.
    #[instrument(skip(self), err(level = "debug"))]
    pub async fn profile(&self, player: &str) -> Result<BTreeMap<String, String>, Error> {
        validate_player(player)?;
        Ok(self
            .ctx
            .store()
            .profile(&self.ctx.keys().player(player))
            .await?
            .0
            .into_iter()
            .collect())
    }
}
