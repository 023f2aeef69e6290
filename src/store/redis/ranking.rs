//! Boards on Redis: score updates (`update.lua`, with the idempotency record in the
//! same script), pages (kept and built by [`super::pages`]) and around-me reads,
//! cached profiles (`set_profile.lua`, `cache_profile.lua`).

use ::redis::{ScriptInvocation, Value};

use super::reply::*;
use super::scripts::SCRIPTS;
use super::{
    MAX_WINDOW_ENTRIES, MAX_WINDOW_SECS, RedisStore, Retry, attempt_token, now_arg, time_refusal,
};
use crate::error::StoreError;
use crate::season::packing::{EXACT_LIMIT, Packing};
use crate::store::keys::{BracketKeys, PlayerKeys, hash_tag};
use crate::store::*;

/// Builds the `update.lua` invocation of one update.
///
/// The arguments are prepared so that Lua's doubles stay exact without changing any
/// outcome: the value is clamped to ±2^53 (every value beyond takes the score out of
/// range either way), the tick to the last tick of the period (as `Packing::apply`
/// does), and invalid packing parameters, which the in-memory store refuses every
/// update for, are sent as a `max_score` of -1.
fn update_invocation<'s>(
    keys: &BracketKeys,
    update: &Update<'_>,
    token: &str,
) -> ScriptInvocation<'s> {
    let valid = update.span >= 2 && Packing::new(update.max_score, update.span - 1).is_ok();
    let limit = EXACT_LIMIT as i64;
    let mut inv = SCRIPTS.update.prepare_invoke();
    inv.key(&keys.board).key(&keys.meta).key(&keys.pages);
    let window = match &update.request {
        Some((key, window)) => {
            inv.key(key);
            (*window).min(MAX_WINDOW_SECS)
        }
        None => 0,
    };
    let time = &update.time;
    inv.arg(update.player)
        .arg(update.mode.as_str())
        .arg(update.value.clamp(-limit, limit).to_string())
        .arg(if valid {
            update.tick.min(update.span - 2)
        } else {
            0
        })
        .arg(if valid {
            update.max_score.to_string()
        } else {
            "-1".to_owned()
        })
        .arg(update.span)
        .arg(window)
        .arg(token)
        .arg(now_arg(time.now))
        .arg(time.at_ms)
        .arg(time.start_ms)
        .arg(time.closes_ms)
        .arg(time.skew_ms);
    inv
}

/// The reply of `update.lua`, given this call's attempt token.
fn update_reply(v: Value, token: &str) -> Result<UpdateReply, StoreError> {
    let items = array(v, "update reply")?;
    let status = items
        .first()
        .ok_or_else(|| protocol("empty update reply"))
        .and_then(|s| text(s, "update status"))?;
    let number = |i: usize, what: &str| -> Result<u64, StoreError> {
        items
            .get(i)
            .ok_or_else(|| protocol(format!("update reply without {what}")))
            .and_then(|v| uint(v, what))
    };
    let (status, packed, rank) = match status {
        "applied" => (
            UpdateStatus::Applied,
            number(1, "packed")?,
            number(2, "rank")?,
        ),
        "duplicate" => {
            let first = items
                .get(3)
                .map(|v| text(v, "attempt token"))
                .transpose()?
                .unwrap_or("");
            // Our own earlier attempt, applied before its reply was lost: this call
            // applied the update, so it answers as the first attempt would have.
            let status = if first == token {
                UpdateStatus::Applied
            } else {
                UpdateStatus::Duplicate
            };
            (status, number(1, "packed")?, number(2, "rank")?)
        }
        "out_of_range" => {
            let current = number(1, "packed")?;
            (UpdateStatus::OutOfRange { current }, current, 0)
        }
        "closed" => (UpdateStatus::Closed, 0, 0),
        "not_placed" => (UpdateStatus::NotPlaced, 0, 0),
        "not_yet" | "future" => match time_refusal(&items)? {
            Some(why) => (UpdateStatus::Refused(why), 0, 0),
            None => return Err(protocol("bad time refusal")),
        },
        "malformed" => {
            let what = items
                .get(1)
                .map(|v| text(v, "detail"))
                .transpose()?
                .unwrap_or("?");
            return Err(protocol(format!(
                "update found data it did not write: {what}"
            )));
        }
        other => return Err(protocol(format!("unknown update status {other:?}"))),
    };
    Ok(UpdateReply {
        status,
        packed,
        rank,
    })
}

impl RankingStore for RedisStore {
    async fn update(
        &self,
        bracket: &BracketKeys,
        update: &Update<'_>,
    ) -> Result<UpdateReply, StoreError> {
        let token = attempt_token();
        let inv = update_invocation(bracket, update, &token);
        // With a request id, a second run finds the first one's record (and our
        // token in it); without one, it would apply the update twice.
        let retry = if update.request.is_some() {
            Retry::Idempotent
        } else {
            Retry::NotExecuted
        };
        let reply = self.invoke_write("update", retry, &inv).await?;
        update_reply(reply, &token)
    }

    async fn update_many(
        &self,
        updates: &[(&BracketKeys, Update<'_>)],
    ) -> Vec<Result<UpdateReply, StoreError>> {
        if updates.is_empty() {
            return Vec::new();
        }
        // One token per update: two updates of one batch may share a request id, and
        // the second must still see the first as a different request.
        let base = attempt_token();
        let tokens: Vec<String> = (0..updates.len())
            .map(|i| format!("{base}.{i:x}"))
            .collect();
        let invocations: Vec<ScriptInvocation<'_>> = updates
            .iter()
            .zip(&tokens)
            .map(|((keys, update), token)| update_invocation(keys, update, token))
            .collect();
        let tags: Vec<&str> = updates.iter().map(|(k, _)| hash_tag(&k.board)).collect();
        // A pipeline may be sent again only if every update in it has a request id.
        let retry = |group: &[usize]| {
            if group.iter().all(|&i| updates[i].1.request.is_some()) {
                Retry::Idempotent
            } else {
                Retry::NotExecuted
            }
        };
        self.pipelined("update_many", &SCRIPTS.update, &invocations, &tags, retry)
            .await
            .into_iter()
            .zip(&tokens)
            .map(|(reply, token)| reply.and_then(|reply| update_reply(reply?, token)))
            .collect()
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
        fields: &[(String, String)],
        order: &[String],
        max_bytes: usize,
        ttl_secs: u64,
    ) -> Result<ProfileWrite, StoreError> {
        let mut inv = SCRIPTS.set_profile.prepare_invoke();
        inv.key(player_keys.profile())
            .arg(&player_keys.player)
            .arg(max_bytes)
            .arg(ttl_secs.clamp(1, MAX_WINDOW_SECS))
            .arg(order.len());
        for name in order {
            inv.arg(name);
        }
        for (k, v) in fields {
            inv.arg(k).arg(v);
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
