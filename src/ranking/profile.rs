//! Player profiles: set atomically with the size check on the player's records, and
//! cached beside the board of their current bracket with a version.

use std::collections::BTreeMap;

use tracing::instrument;

use crate::error::{Error, InputError, StoreError};
use crate::store::{ProfileWrite, Store};

use crate::league::*;

impl<S: Store> League<S> {
    /// Sets profile fields of a player (only the season's fields, within max_bytes),
    /// and refreshes the copy cached in their current bracket.
    ///
    /// The merge, the size check and the write are one atomic step on the player's
    /// records, so concurrent edits cannot together exceed `max_bytes`; the cached copy
    /// carries the profile's version, so concurrent edits settle on the newest.
    #[instrument(skip(self, fields), err(level = "debug"))]
    pub async fn set_profile(
        &self,
        player: &str,
        fields: &[(String, String)],
    ) -> Result<BTreeMap<String, String>, Error> {
        validate_player(player)?;
        let allowed = &self.season.profiles.fields;
        for (name, _) in fields {
            if !allowed.iter().any(|f| f == name) {
                return Err(InputError::UnknownProfileField {
                    field: truncate(name),
                    known: allowed.join(", "),
                }
                .into());
            }
        }
        let max = self.season.profiles.max_bytes;
        // A value alone can show the profile is too large before anything is written.
        let alone: BTreeMap<&str, &str> = fields
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let least = crate::store::profile_json(&self.profile_order, &alone).len();
        if least > max {
            return Err(InputError::ProfileTooLarge { bytes: least, max }.into());
        }
        self.check_layout().await?;
        let now = self.now().await?;
        let period = self.period_at(Some(now)).ok();
        let ttl = match &period {
            Some(p) => self.player_ttl_secs(p, now),
            None => self.season.retention.player_ttl.as_secs().max(1),
        };
        let pkeys = self.keys.player(player);
        // The profile write and the placement read at once: the placement does not
        // depend on the profile, and one round trip fewer is most of the cost. (A join
        // racing this reads the profile itself, so the cache below may only be late.)
        let period_keys = period.as_ref().map(|p| self.period_keys(p.id));
        let placement = async {
            match &period_keys {
                Some(keys) => self.store.placement(keys, player).await,
                None => Ok(None),
            }
        };
        let (written, placement) = futures::join!(
            self.store
                .set_profile(&pkeys, fields, &self.profile_order, max, ttl),
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
            let placed = self.placed(period.id, &tier, bracket);
            self.store
                .cache_profile(&placed.keys, player, version, &json)
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
            .store
            .profile(&self.keys.player(player))
            .await?
            .0
            .into_iter()
            .collect())
    }

    /// The cached form of a profile read from the store: `(version, JSON)`, or `None`
    /// for no profile (or a season without profile fields).
    pub(crate) fn profile_json_of(
        &self,
        fields: &[(String, String)],
        version: u64,
    ) -> Option<(u64, String)> {
        if self.season.profiles.fields.is_empty() || fields.is_empty() {
            return None;
        }
        let map: BTreeMap<&str, &str> = fields
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        Some((
            version,
            crate::store::profile_json(&self.profile_order, &map),
        ))
    }
}
