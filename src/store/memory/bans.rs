//! Bans in memory: the records beside the players' data, the markers in the period's
//! and the bracket's meta, as on Redis.

use super::MemoryStore;
use crate::error::StoreError;
use crate::store::keys::{BracketKeys, PeriodKeys, PlayerKeys, SeasonKeys};
use crate::store::{BanStore, BracketBan, PeriodBan, ban_field};

impl BanStore for MemoryStore {
    async fn set_ban(&self, player_keys: &PlayerKeys, record: &str) -> Result<(), StoreError> {
        self.data().bans.insert(player_keys.id(), record.to_owned());
        Ok(())
    }

    async fn ban(&self, player_keys: &PlayerKeys) -> Result<Option<String>, StoreError> {
        Ok(self.data().bans.get(&player_keys.id()).cloned())
    }

    async fn clear_ban(&self, player_keys: &PlayerKeys) -> Result<(), StoreError> {
        self.data().bans.remove(&player_keys.id());
        Ok(())
    }

    async fn index_ban(
        &self,
        season: &SeasonKeys,
        player: &str,
        record: Option<&str>,
    ) -> Result<(), StoreError> {
        let mut data = self.data();
        let index = data.ban_index.entry(season.base.clone()).or_default();
        match record {
            Some(r) => {
                index.insert(player.to_owned(), r.to_owned());
            }
            None => {
                index.remove(player);
            }
        }
        Ok(())
    }

    async fn ban_index(&self, season: &SeasonKeys) -> Result<Vec<(String, String)>, StoreError> {
        Ok(self
            .data()
            .ban_index
            .get(&season.base)
            .map(|i| i.iter().map(|(p, r)| (p.clone(), r.clone())).collect())
            .unwrap_or_default())
    }

    async fn ban_period(
        &self,
        period: &PeriodKeys,
        player: &str,
        marker: &str,
        _ttl_secs: u64,
    ) -> Result<PeriodBan, StoreError> {
        let mut data = self.data();
        let p = data.periods.entry(period.base.clone()).or_default();
        if let Some((tier, bracket)) = p.assign.get(player) {
            return Ok(PeriodBan::Placed(tier.clone(), *bracket));
        }
        if p.meta.contains_key("closing") {
            return Ok(PeriodBan::Closing);
        }
        p.meta.insert(ban_field(player), marker.to_owned());
        Ok(PeriodBan::Marked)
    }

    async fn ban_bracket(
        &self,
        bracket: &BracketKeys,
        player: &str,
        marker: &str,
        _ttl_secs: u64,
    ) -> Result<BracketBan, StoreError> {
        let mut data = self.data();
        let b = Self::bracket(&mut data, bracket);
        if b.meta.contains_key("closed") {
            return Ok(BracketBan::Closed);
        }
        b.meta.insert(ban_field(player), marker.to_owned());
        Ok(if b.take(player) {
            BracketBan::Removed
        } else {
            BracketBan::Marked
        })
    }

    async fn unmark_ban(
        &self,
        period: &PeriodKeys,
        bracket: Option<&BracketKeys>,
        player: &str,
        marker: Option<&str>,
    ) -> Result<(), StoreError> {
        let mut data = self.data();
        let meta = match bracket {
            Some(b) => data.brackets.get_mut(&b.base).map(|b| &mut b.meta),
            None => data.periods.get_mut(&period.base).map(|p| &mut p.meta),
        };
        let field = ban_field(player);
        if let Some(meta) = meta
            && marker.is_none_or(|m| meta.get(&field).is_some_and(|v| v == m))
        {
            meta.remove(&field);
        }
        Ok(())
    }
}
