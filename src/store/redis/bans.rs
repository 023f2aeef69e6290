//! Bans on Redis: the record in the player's ban bucket, the season's index hash, and
//! the markers written by `ban_period.lua` and `ban_bracket.lua`.

use ::redis::Value;

use super::reply::{array, bracket_number, is_nil, protocol, text};
use super::scripts::SCRIPTS;
use super::{MAX_WINDOW_SECS, RedisStore, Retry, write_error};
use crate::error::StoreError;
use crate::store::keys::{BracketKeys, PeriodKeys, PlayerKeys, SeasonKeys};
use crate::store::{BanStore, BracketBan, PeriodBan};

impl RedisStore {
    /// Runs one plain command that writes (idempotent: HSET, HDEL of a given value).
    async fn write_command(&self, op: &'static str, cmd: &::redis::Cmd) -> Result<(), StoreError> {
        self.run(op, Retry::Idempotent, |mut con| async move {
            cmd.query_async::<Value>(&mut con).await
        })
        .await
        .map_err(|e| write_error(op, e, self.outage.retry_after()))?;
        Ok(())
    }
}

impl BanStore for RedisStore {
    async fn set_ban(&self, player_keys: &PlayerKeys, record: &str) -> Result<(), StoreError> {
        let mut cmd = ::redis::cmd("HSET");
        cmd.arg(player_keys.ban())
            .arg(&player_keys.player)
            .arg(record);
        self.write_command("set_ban", &cmd).await
    }

    async fn ban(&self, player_keys: &PlayerKeys) -> Result<Option<String>, StoreError> {
        let mut cmd = ::redis::cmd("HGET");
        cmd.arg(player_keys.ban()).arg(&player_keys.player);
        let reply = self.command("ban", Retry::Idempotent, &cmd).await?;
        if is_nil(&reply) {
            return Ok(None);
        }
        Ok(Some(text(&reply, "ban record")?.to_owned()))
    }

    async fn clear_ban(&self, player_keys: &PlayerKeys) -> Result<(), StoreError> {
        let mut cmd = ::redis::cmd("HDEL");
        cmd.arg(player_keys.ban()).arg(&player_keys.player);
        self.write_command("clear_ban", &cmd).await
    }

    async fn index_ban(
        &self,
        season: &SeasonKeys,
        player: &str,
        record: Option<&str>,
    ) -> Result<(), StoreError> {
        let cmd = match record {
            Some(r) => {
                let mut cmd = ::redis::cmd("HSET");
                cmd.arg(&season.bans).arg(player).arg(r);
                cmd
            }
            None => {
                let mut cmd = ::redis::cmd("HDEL");
                cmd.arg(&season.bans).arg(player);
                cmd
            }
        };
        self.write_command("index_ban", &cmd).await
    }

    async fn ban_index(&self, season: &SeasonKeys) -> Result<Vec<(String, String)>, StoreError> {
        let mut cmd = ::redis::cmd("HGETALL");
        cmd.arg(&season.bans);
        let reply = self.command("ban_index", Retry::Idempotent, &cmd).await?;
        // RESP2 answers field, value, ...; RESP3 a map.
        let mut flat = Vec::new();
        match reply {
            Value::Map(pairs) => {
                for (k, v) in pairs {
                    flat.push(k);
                    flat.push(v);
                }
            }
            other => flat = array(other, "ban index")?,
        }
        let mut out = Vec::with_capacity(flat.len() / 2);
        let mut it = flat.iter();
        while let (Some(player), Some(record)) = (it.next(), it.next()) {
            out.push((
                text(player, "banned player")?.to_owned(),
                text(record, "ban record")?.to_owned(),
            ));
        }
        out.sort();
        Ok(out)
    }

    async fn ban_period(
        &self,
        period: &PeriodKeys,
        player: &str,
        marker: &str,
        ttl_secs: u64,
    ) -> Result<PeriodBan, StoreError> {
        let mut inv = SCRIPTS.ban_period.prepare_invoke();
        inv.key(&period.meta)
            .key(period.assign(player))
            .arg(player)
            .arg(marker)
            .arg(ttl_secs.clamp(1, MAX_WINDOW_SECS));
        let reply = self
            .invoke_write("ban_period", Retry::Idempotent, &inv)
            .await?;
        match text(&reply, "ban_period reply")? {
            "marked" => Ok(PeriodBan::Marked),
            "closing" => Ok(PeriodBan::Closing),
            other => {
                let placed = other
                    .strip_prefix("placed:")
                    .and_then(|p| p.rsplit_once(':'))
                    .ok_or_else(|| protocol(format!("ban_period reply {other:?}")))?;
                Ok(PeriodBan::Placed(
                    placed.0.to_owned(),
                    bracket_number(placed.1, "assigned bracket")?,
                ))
            }
        }
    }

    async fn ban_bracket(
        &self,
        bracket: &BracketKeys,
        player: &str,
        marker: &str,
        ttl_secs: u64,
    ) -> Result<BracketBan, StoreError> {
        let mut inv = SCRIPTS.ban_bracket.prepare_invoke();
        inv.key(&bracket.board)
            .key(&bracket.meta)
            .key(&bracket.pages)
            .arg(player)
            .arg(marker)
            .arg(ttl_secs.clamp(1, MAX_WINDOW_SECS));
        let reply = self
            .invoke_write("ban_bracket", Retry::Idempotent, &inv)
            .await?;
        match text(&reply, "ban_bracket reply")? {
            "removed" => Ok(BracketBan::Removed),
            "marked" => Ok(BracketBan::Marked),
            "closed" => Ok(BracketBan::Closed),
            other => Err(protocol(format!("ban_bracket reply {other:?}"))),
        }
    }

    async fn unmark_ban(
        &self,
        period: &PeriodKeys,
        bracket: Option<&BracketKeys>,
        player: &str,
        marker: Option<&str>,
    ) -> Result<(), StoreError> {
        let mut inv = SCRIPTS.unmark_ban.prepare_invoke();
        inv.key(bracket.map_or(&period.meta, |b| &b.meta))
            .arg(player)
            .arg(marker.unwrap_or(""));
        self.invoke_write("unmark_ban", Retry::Idempotent, &inv)
            .await?;
        Ok(())
    }
}

/// join.lua's `{"banned", until}` answer as the store's refusal.
pub(super) fn join_banned(items: &[Value]) -> Result<StoreError, StoreError> {
    let until = items
        .get(1)
        .map(|v| text(v, "ban end"))
        .transpose()?
        .unwrap_or("");
    let until_ms = match until {
        "" => None,
        u => Some(
            u.parse::<i64>()
                .map_err(|_| protocol(format!("ban end {u:?} is not a number")))?,
        ),
    };
    Ok(StoreError::Banned { until_ms })
}
