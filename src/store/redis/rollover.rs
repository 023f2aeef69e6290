//! Closing on Redis: the period's and brackets' markers, leases and outcomes, the
//! season's progress mark, grants (pipelined, one result each), blocked grants,
//! rewards and claims.

use ::redis::Value;

use super::bracket_scripts::{Claimed, Claiming, Finishing};
use super::reply::*;
use super::scripts::SCRIPTS;
use super::{MAX_WINDOW_SECS, RedisStore, Retry, now_arg, time_refusal};
use crate::error::StoreError;
use crate::store::keys::{BracketKeys, LAYOUT, PeriodKeys, PlayerKeys, SeasonKeys, hash_tag};
use crate::store::*;

/// Grants a grant.lua call takes at most: a bracket's on one server, in one call.
const GRANTS_AT_ONCE: usize = 128;

impl RolloverStore for RedisStore {
    async fn closed_through(&self, season: &SeasonKeys) -> Result<u64, StoreError> {
        let mut cmd = ::redis::cmd("HGET");
        cmd.arg(&season.meta).arg("closed_through");
        let reply = self
            .command("closed_through", Retry::Idempotent, &cmd)
            .await?;
        if is_nil(&reply) {
            return Ok(0);
        }
        uint(&reply, "closed_through")
    }

    async fn set_closed_through(&self, season: &SeasonKeys, period: u64) -> Result<(), StoreError> {
        let mut inv = SCRIPTS.raise_mark.prepare_invoke();
        inv.key(&season.meta).arg(period).arg(LAYOUT);
        self.invoke("set_closed_through", Retry::Idempotent, &inv)
            .await?;
        Ok(())
    }

    async fn begin_close(
        &self,
        period: &PeriodKeys,
        check: CloseCheck,
    ) -> Result<ClosingPeriod, StoreError> {
        let mut inv = SCRIPTS.begin_close.prepare_invoke();
        inv.key(&period.meta)
            .key(&period.joins)
            .arg(now_arg(check.now))
            .arg(check.closes_ms)
            .arg(check.keep_secs);
        let items = array(
            self.invoke("begin_close", Retry::Idempotent, &inv).await?,
            "begin_close reply",
        )?;
        if let Some(why) = time_refusal(&items)? {
            return Err(StoreError::Time(why));
        }
        let [status, summary, joins @ ..] = items.as_slice() else {
            return Err(protocol("short begin_close reply"));
        };
        if text(status, "begin_close status")? != "ok" {
            return Err(protocol(format!("begin_close status {status:?}")));
        }
        let summary = if is_nil(summary) {
            None
        } else {
            Some(text(summary, "period summary")?.to_owned())
        };
        if joins.len() % 2 != 0 {
            return Err(protocol("begin_close: odd number of join counter items"));
        }
        let fields = joins
            .chunks_exact(2)
            .map(|kv| {
                let field = text(&kv[0], "join counter")?.to_owned();
                let n = text(&kv[1], "join counter")?.to_owned();
                Ok((field, n))
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        Ok((summary, super::joins::tally(fields)?))
    }

    async fn period_summary(&self, period: &PeriodKeys) -> Result<Option<String>, StoreError> {
        let mut cmd = ::redis::cmd("HGET");
        cmd.arg(&period.meta).arg("closed");
        let reply = self
            .command("period_summary", Retry::Idempotent, &cmd)
            .await?;
        if is_nil(&reply) {
            return Ok(None);
        }
        Ok(Some(text(&reply, "period summary")?.to_owned()))
    }

    async fn season_field(
        &self,
        season: &SeasonKeys,
        field: &str,
    ) -> Result<Option<String>, StoreError> {
        let mut cmd = ::redis::cmd("HGET");
        cmd.arg(&season.meta).arg(format!("season:{field}"));
        let reply = self
            .command("season_field", Retry::Idempotent, &cmd)
            .await?;
        if is_nil(&reply) {
            return Ok(None);
        }
        text(&reply, "season field").map(|s| Some(s.to_owned()))
    }

    async fn set_season_field(
        &self,
        season: &SeasonKeys,
        field: &str,
        value: &str,
        keep: bool,
    ) -> Result<(), StoreError> {
        let mut inv = SCRIPTS.season_field.prepare_invoke();
        inv.key(&season.meta)
            .arg(format!("season:{field}"))
            .arg(value)
            .arg(if keep { "1" } else { "0" })
            .arg(LAYOUT);
        self.invoke("set_season_field", Retry::Idempotent, &inv)
            .await?;
        Ok(())
    }

    async fn save_tops(
        &self,
        period: &PeriodKeys,
        tops: &[(String, String)],
    ) -> Result<(), StoreError> {
        if tops.is_empty() {
            return Ok(());
        }
        // Fields of the period's meta hash, which expires with the period.
        let mut cmd = ::redis::cmd("HSET");
        cmd.arg(&period.meta);
        for (tier, json) in tops {
            cmd.arg(format!("top:{tier}")).arg(json);
        }
        self.command("save_tops", Retry::Idempotent, &cmd).await?;
        Ok(())
    }

    async fn saved_top(
        &self,
        period: &PeriodKeys,
        tier: &str,
    ) -> Result<Option<String>, StoreError> {
        let mut cmd = ::redis::cmd("HGET");
        cmd.arg(&period.meta).arg(format!("top:{tier}"));
        let reply = self.command("saved_top", Retry::Idempotent, &cmd).await?;
        if is_nil(&reply) {
            return Ok(None);
        }
        text(&reply, "saved top").map(|s| Some(s.to_owned()))
    }

    async fn any_exists(&self, keys: &[String]) -> Result<bool, StoreError> {
        // One EXISTS per key: on a cluster the keys live in different slots.
        let found = futures::future::try_join_all(keys.iter().map(|key| async move {
            let mut cmd = ::redis::cmd("EXISTS");
            cmd.arg(key);
            let reply = self.command("exists", Retry::Idempotent, &cmd).await?;
            uint(&reply, "EXISTS reply")
        }))
        .await?;
        Ok(found.iter().any(|n| *n > 0))
    }

    async fn finish_period_logged(
        &self,
        period: &PeriodKeys,
        summary: &str,
        ttl_secs: u64,
        events: Option<Appends<'_>>,
    ) -> Result<(), StoreError> {
        let mut inv = SCRIPTS.finish_period.prepare_invoke();
        inv.key(&period.meta).key(&period.joins);
        // Every assign bucket (16,384 keys of the period's slot, most of them small):
        // one call per closed period.
        for bucket in period.assign_buckets() {
            inv.key(bucket);
        }
        inv.arg(summary).arg(ttl_secs.clamp(1, MAX_WINDOW_SECS));
        if let Some(events) = events {
            inv.key(period.events()).arg(events.spec.arg());
            for body in events.bodies {
                inv.arg(body);
            }
        }
        self.invoke("finish_period", Retry::Idempotent, &inv)
            .await?;
        self.drop_expired(period, ttl_secs).await
    }

    async fn claim_bracket(
        &self,
        bracket: &BracketKeys,
        owner: &str,
        lease_ms: u64,
        check: CloseCheck,
    ) -> Result<BracketClaim, StoreError> {
        match self
            .claim(bracket, owner, lease_ms, check, Claiming::Claim)
            .await?
        {
            Claimed::Done(tally) => Ok(BracketClaim::Done(tally)),
            Claimed::Busy => Ok(BracketClaim::Busy),
            Claimed::Mine(None) => Ok(BracketClaim::Mine),
            Claimed::Mine(Some(_)) | Claimed::Frozen(_) => Err(protocol(
                "claim_bracket: a board where only a claim was asked",
            )),
        }
    }

    async fn freeze(
        &self,
        bracket: &BracketKeys,
        check: CloseCheck,
    ) -> Result<Vec<(String, u64)>, StoreError> {
        match self.claim(bracket, "", 1, check, Claiming::Freeze).await? {
            Claimed::Frozen(board) => Ok(board),
            _ => Err(protocol("freeze: no \"ok\" and a board")),
        }
    }

    async fn claim_and_freeze(
        &self,
        bracket: &BracketKeys,
        owner: &str,
        lease_ms: u64,
        check: CloseCheck,
    ) -> Result<FrozenClaim, StoreError> {
        match self
            .claim(bracket, owner, lease_ms, check, Claiming::Both)
            .await?
        {
            Claimed::Done(tally) => Ok(FrozenClaim::Done(tally)),
            Claimed::Busy => Ok(FrozenClaim::Busy),
            Claimed::Mine(Some(board)) => Ok(FrozenClaim::Mine(board)),
            Claimed::Mine(None) | Claimed::Frozen(_) => {
                Err(protocol("claim_and_freeze: a claim without its board"))
            }
        }
    }

    async fn record_outcomes(
        &self,
        bracket: &BracketKeys,
        outcomes: &[(&str, &str)],
        ttl_secs: u64,
    ) -> Result<(), StoreError> {
        self.finish(bracket, Finishing::Record { outcomes, ttl_secs })
            .await
    }

    async fn grant_logged(
        &self,
        grants: &[Grant],
        ttl_secs: u64,
        events: Option<Appends<'_>>,
    ) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        if grants.is_empty() {
            return Ok(Vec::new());
        }
        let ttl = ttl_secs.clamp(1, MAX_WINDOW_SECS);
        let reward_keys: Vec<String> = grants.iter().map(|(keys, _, _)| keys.rewards()).collect();
        let tags: Vec<&str> = reward_keys.iter().map(|k| hash_tag(k)).collect();
        // Each grant is written at most once (HSETNX), so any call may be sent again.
        let mut answered = self
            .pipelined_items(
                "grant",
                &SCRIPTS.grant,
                &tags,
                GRANTS_AT_ONCE,
                |items| {
                    let mut inv = SCRIPTS.grant.prepare_invoke();
                    match events {
                        None => inv.arg(ttl),
                        Some(e) => inv.arg(format!("{ttl}|{}", e.spec.arg())),
                    };
                    for &i in items {
                        let (keys, source, grant) = &grants[i];
                        inv.key(&reward_keys[i]).arg(source).arg(grant);
                        if let Some(e) = events {
                            let body = e.bodies.get(i).map_or("", String::as_str);
                            inv.key(keys.events()).arg(body);
                        }
                    }
                    inv
                },
                |_| Retry::Idempotent,
            )
            .await;
        // One player's bad data must not fail the others' grants: a grant's own error
        // comes back in its place. A pipeline that failed as a whole (the connection,
        // not the data) fails the step, which the rollover runs again: its grants are
        // not blocked.
        if let Some(at) = answered.iter().position(|(_, answer)| answer.is_err())
            && let (_, Err(e)) = answered.swap_remove(at)
        {
            return Err(e);
        }
        Ok(super::bulk::spread(
            grants.len(),
            answered,
            |reply, items| parse_grants(reply??, items.len()),
            "grant",
        ))
    }

    async fn block_grants(
        &self,
        season: &SeasonKeys,
        blocked: &[BlockedGrant],
    ) -> Result<(), StoreError> {
        if blocked.is_empty() {
            return Ok(());
        }
        let mut cmd = ::redis::cmd("HSET");
        cmd.arg(&season.blocked);
        for b in blocked {
            let value = serde_json::json!({"grant": b.grant, "error": b.error}).to_string();
            cmd.arg(format!("{}|{}", b.source, b.player)).arg(value);
        }
        self.command("block_grants", Retry::Idempotent, &cmd)
            .await?;
        Ok(())
    }

    async fn blocked_grants(&self, season: &SeasonKeys) -> Result<Vec<BlockedGrant>, StoreError> {
        let mut cmd = ::redis::cmd("HGETALL");
        cmd.arg(&season.blocked);
        let reply = self
            .command("blocked_grants", Retry::Idempotent, &cmd)
            .await?;
        let mut out = pairs(reply, "blocked grants")?
            .into_iter()
            .map(|(field, value)| {
                // Sources never contain '|'; player ids may.
                let (source, player) = field
                    .split_once('|')
                    .ok_or_else(|| protocol(format!("blocked grant field {field:?}")))?;
                let v: serde_json::Value = serde_json::from_str(&value)
                    .map_err(|e| protocol(format!("blocked grant {value:?}: {e}")))?;
                Ok(BlockedGrant {
                    player: player.to_owned(),
                    source: source.to_owned(),
                    grant: v["grant"].as_str().unwrap_or_default().to_owned(),
                    error: v["error"].as_str().unwrap_or_default().to_owned(),
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        out.sort_by(|a, b| (&a.source, &a.player).cmp(&(&b.source, &b.player)));
        Ok(out)
    }

    async fn block_bracket(
        &self,
        season: &SeasonKeys,
        blocked: &BlockedBracket,
    ) -> Result<(), StoreError> {
        let value = serde_json::json!({"key": blocked.key, "error": blocked.error}).to_string();
        let mut cmd = ::redis::cmd("HSET");
        cmd.arg(&season.stuck).arg(&blocked.source).arg(value);
        self.command("block_bracket", Retry::Idempotent, &cmd)
            .await?;
        Ok(())
    }

    async fn blocked_brackets(
        &self,
        season: &SeasonKeys,
    ) -> Result<Vec<BlockedBracket>, StoreError> {
        let mut cmd = ::redis::cmd("HGETALL");
        cmd.arg(&season.stuck);
        let reply = self
            .command("blocked_brackets", Retry::Idempotent, &cmd)
            .await?;
        let mut out = pairs(reply, "blocked brackets")?
            .into_iter()
            .map(|(source, value)| {
                let v: serde_json::Value = serde_json::from_str(&value)
                    .map_err(|e| protocol(format!("blocked bracket {value:?}: {e}")))?;
                Ok(BlockedBracket::new(
                    source,
                    v["key"].as_str().unwrap_or_default(),
                    v["error"].as_str().unwrap_or_default(),
                ))
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        out.sort_by(|a, b| a.source.cmp(&b.source));
        Ok(out)
    }

    async fn unblock_bracket(&self, season: &SeasonKeys, source: &str) -> Result<(), StoreError> {
        let mut cmd = ::redis::cmd("HDEL");
        cmd.arg(&season.stuck).arg(source);
        self.command("unblock_bracket", Retry::Idempotent, &cmd)
            .await?;
        Ok(())
    }

    async fn unblock_grant(
        &self,
        season: &SeasonKeys,
        source: &str,
        player: &str,
    ) -> Result<(), StoreError> {
        let mut cmd = ::redis::cmd("HDEL");
        cmd.arg(&season.blocked).arg(format!("{source}|{player}"));
        self.command("unblock_grant", Retry::Idempotent, &cmd)
            .await?;
        Ok(())
    }

    async fn finish_bracket(&self, bracket: &BracketKeys, tally: &str) -> Result<(), StoreError> {
        self.finish(bracket, Finishing::Finish { tally }).await
    }

    async fn finish_with_outcomes(
        &self,
        bracket: &BracketKeys,
        outcomes: &[(&str, &str)],
        ttl_secs: u64,
        tally: &str,
        events: Option<Appends<'_>>,
    ) -> Result<(), StoreError> {
        self.finish(
            bracket,
            Finishing::Both {
                outcomes,
                ttl_secs,
                tally,
                events,
            },
        )
        .await
    }

    async fn outcome(
        &self,
        bracket: &BracketKeys,
        player: &str,
    ) -> Result<Option<String>, StoreError> {
        let mut inv = SCRIPTS.outcome.prepare_invoke();
        inv.key(&bracket.outcomes)
            .arg(super::outcomes::needle(player));
        let reply = self.invoke("outcome", Retry::Idempotent, &inv).await?;
        if is_nil(&reply) {
            return Ok(None);
        }
        let escaped = text(&reply, "outcome")?;
        super::outcomes::unescape(escaped)
            .map(Some)
            .ok_or_else(|| protocol(format!("malformed outcome {escaped:?} of {player}")))
    }

    async fn outcomes(&self, bracket: &BracketKeys) -> Result<Vec<(String, String)>, StoreError> {
        let mut cmd = ::redis::cmd("GET");
        cmd.arg(&bracket.outcomes);
        let reply = self.command("outcomes", Retry::Idempotent, &cmd).await?;
        if is_nil(&reply) {
            return Ok(Vec::new());
        }
        super::outcomes::decode(text(&reply, "outcomes")?)
    }

    async fn rewards(&self, player_keys: &PlayerKeys) -> Result<Vec<(String, String)>, StoreError> {
        let mut cmd = ::redis::cmd("HGETALL");
        cmd.arg(player_keys.rewards());
        let reply = self.command("rewards", Retry::Idempotent, &cmd).await?;
        parse_rewards(reply)
    }

    async fn claim_rewards(
        &self,
        player_keys: &PlayerKeys,
        claim: &Claim<'_>,
    ) -> Result<Vec<(String, String)>, StoreError> {
        let mut inv = SCRIPTS.claim_rewards.prepare_invoke();
        // A flag, then the id: an empty claim id is an id like any other.
        inv.key(player_keys.rewards())
            .key(player_keys.claims())
            .arg(if claim.claim_id.is_some() { "1" } else { "0" })
            .arg(claim.claim_id.unwrap_or(""))
            .arg(claim.period)
            .arg(claim.ttl_secs.clamp(1, MAX_WINDOW_SECS));
        if let Some((spec, head)) = claim.logged {
            inv.key(player_keys.events()).arg(spec.arg()).arg(head);
        }
        // With a claim id a second run returns the stored answer; without one it
        // would answer "nothing" after the first run claimed, so it is not retried.
        let retry = if claim.claim_id.is_some() {
            Retry::Idempotent
        } else {
            Retry::NotExecuted
        };
        let reply = self.invoke_write("claim_rewards", retry, &inv).await?;
        let mut claimed = match reply {
            // A new claim: the flat list itself.
            Value::Array(items) => {
                if items.len() % 2 != 0 {
                    return Err(protocol("claim: odd number of items"));
                }
                items
                    .chunks_exact(2)
                    .map(|kv| {
                        Ok((
                            text(&kv[0], "reward source")?.to_owned(),
                            text(&kv[1], "grant")?.to_owned(),
                        ))
                    })
                    .collect::<Result<Vec<_>, StoreError>>()?
            }
            // A repeated claim id: the answer stored by the first claim.
            stored => stored_claim(text(&stored, "stored claim")?)?,
        };
        claimed.sort();
        Ok(claimed)
    }
}

/// The pending rewards (`p|grant`; `c|` marks a claimed one), sorted.
pub(super) fn parse_rewards(reply: Value) -> Result<Vec<(String, String)>, StoreError> {
    let mut pending: Vec<(String, String)> = pairs(reply, "rewards")?
        .into_iter()
        .filter_map(|(source, value)| value.strip_prefix("p|").map(|g| (source, g.to_owned())))
        .collect();
    pending.sort();
    Ok(pending)
}

/// grant.lua's answers, one per grant of the call: granted now or before, or the
/// server's refusal of that grant.
fn parse_grants(reply: Value, n: usize) -> Result<Vec<Result<(), StoreError>>, StoreError> {
    let items = answers(reply, n, "grant answers")?;
    items
        .into_iter()
        .map(|item| match item {
            Value::Int(_) => Ok(Ok(())),
            Value::Array(refusal) => match refusal.as_slice() {
                [status, error] if text(status, "grant status")? == "refused" => {
                    Ok(Err(super::updates::refused(text(error, "grant error")?)))
                }
                _ => Err(protocol("grant: an answer neither a count nor a refusal")),
            },
            other => Err(protocol(format!("grant: unexpected answer {other:?}"))),
        })
        .collect()
}
