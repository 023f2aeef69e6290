//! Boards on Redis: score updates (calls of `update.lua` built in
//! [`super::updates`]), pages (kept and built by [`super::pages`]) and around-me reads,
//! cached profiles (`set_profile.lua`, `cache_profile.lua`).

use super::reply::*;
use super::scripts::SCRIPTS;
use super::{MAX_WINDOW_ENTRIES, MAX_WINDOW_SECS, RedisStore, Retry};
use crate::error::StoreError;
use crate::store::keys::{BracketKeys, PlayerKeys};
use crate::store::*;

impl RankingStore for RedisStore {
    async fn update(
        &self,
        bracket: &BracketKeys,
        update: &Update<'_>,
    ) -> Result<UpdateReply, StoreError> {
        self.update_alone(bracket, update).await
    }

    async fn update_many(
        &self,
        updates: &[(&BracketKeys, Update<'_>)],
    ) -> Vec<Result<UpdateReply, StoreError>> {
        self.updates("update_many", updates).await
    }

    async fn standings(
        &self,
        bracket: &BracketKeys,
        offset: u64,
        limit: u64,
    ) -> Result<Page, StoreError> {
        self.read_page(bracket, offset, limit).await
    }

    async fn standings_many(
        &self,
        reads: &[(&BracketKeys, u64, u64)],
    ) -> Vec<Result<Page, StoreError>> {
        self.read_pages(reads).await
    }

    async fn around(
        &self,
        bracket: &BracketKeys,
        player: &str,
        before: u64,
        after: u64,
    ) -> Result<Option<Page>, StoreError> {
        let mut inv = SCRIPTS.around.prepare_invoke();
        inv.key(&bracket.board)
            .key(&bracket.profiles)
            .arg(player)
            .arg(before.min(MAX_WINDOW_ENTRIES))
            .arg(after.min(MAX_WINDOW_ENTRIES));
        let reply = self.invoke("around", Retry::Idempotent, &inv).await?;
        if is_nil(&reply) {
            return Ok(None);
        }
        page(reply, "around reply").map(Some)
    }

    async fn entry(
        &self,
        bracket: &BracketKeys,
        player: &str,
    ) -> Result<Option<(u64, u64)>, StoreError> {
        let mut inv = SCRIPTS.entry.prepare_invoke();
        inv.key(&bracket.board).arg(player);
        let reply = self.invoke("entry", Retry::Idempotent, &inv).await?;
        if is_nil(&reply) {
            return Ok(None);
        }
        match array(reply, "entry reply")?.as_slice() {
            [rank, score] => Ok(Some((
                uint(rank, "rank")?,
                packed_from_score(score, "board score")?,
            ))),
            other => Err(protocol(format!(
                "entry reply: expected rank and score, got {} items",
                other.len()
            ))),
        }
    }

    async fn set_profile(
        &self,
        player_keys: &PlayerKeys,
        change: &ProfileChange,
        order: &[String],
        max_bytes: usize,
        ttl_secs: u64,
    ) -> Result<ProfileWrite, StoreError> {
        let mut inv = SCRIPTS.set_profile.prepare_invoke();
        inv.key(player_keys.profile())
            .arg(&player_keys.player)
            .arg(max_bytes)
            .arg(ttl_secs.clamp(1, MAX_WINDOW_SECS))
            .arg(self.record_now())
            .arg(order.len());
        for name in order {
            inv.arg(name);
        }
        inv.arg(if change.replace { "replace" } else { "merge" });
        for (k, v) in &change.fields {
            match v {
                Some(v) => inv.arg("set").arg(k).arg(v),
                None => inv.arg("del").arg(k).arg(""),
            };
        }
        // Setting the same fields again is harmless, so a retry is safe (the version
        // may move by two, which only orders the cached copies).
        let items = array(
            self.invoke("set_profile", Retry::Idempotent, &inv).await?,
            "set_profile reply",
        )?;
        match items.as_slice() {
            [status, version, json] if text(status, "status")? == "ok" => {
                Ok(ProfileWrite::Written {
                    version: uint(version, "profile version")?,
                    json: text(json, "profile")?.to_owned(),
                })
            }
            [status, bytes] if text(status, "status")? == "too_large" => {
                Ok(ProfileWrite::TooLarge {
                    bytes: usize::try_from(uint(bytes, "profile size")?).unwrap_or(usize::MAX),
                })
            }
            [status, what] if text(status, "status")? == "malformed" => Err(protocol(format!(
                "set_profile found data it did not write: {}",
                text(what, "detail")?
            ))),
            other => Err(protocol(format!("set_profile: {other:?}"))),
        }
    }

    async fn cache_profile(
        &self,
        bracket: &BracketKeys,
        player: &str,
        version: u64,
        json: &str,
    ) -> Result<(), StoreError> {
        // The cached copy lives in the bracket's slot, so it is a second step: a
        // script, so that a player who left the board does not reappear in its cache.
        let mut inv = SCRIPTS.cache_profile.prepare_invoke();
        inv.key(&bracket.board)
            .key(&bracket.profiles)
            .key(&bracket.pages)
            .key(bracket.profiles_text())
            .key(&bracket.meta)
            .arg(player)
            .arg(version)
            .arg(json);
        self.invoke("cache_profile", Retry::Idempotent, &inv)
            .await?;
        Ok(())
    }

    async fn profile(
        &self,
        player_keys: &PlayerKeys,
    ) -> Result<(Vec<(String, String)>, u64), StoreError> {
        Ok(self.player_snapshot(player_keys).await?.profile)
    }
}
