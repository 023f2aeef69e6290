//! Placements on Redis: the period's counters and assignments (`join.lua`), board
//! entries (`enter.lua`), players' league state (`record_state.lua`), and `TIME`.

use ::redis::{ScriptInvocation, Value};

use super::reply::*;
use super::scripts::SCRIPTS;
use super::{MAX_WINDOW_SECS, RedisStore, Retry, now_arg, time_refusal};
use crate::error::StoreError;
use crate::store::keys::{BracketKeys, PeriodKeys, PlayerKeys};
use crate::store::*;

impl LeagueStore for RedisStore {
    async fn now(&self) -> Result<i64, StoreError> {
        let reply = self
            .command("time", Retry::Idempotent, &::redis::cmd("TIME"))
            .await?;
        match array(reply, "TIME reply")?.as_slice() {
            [secs, micros] => {
                let secs = i64::try_from(uint(secs, "seconds")?)
                    .map_err(|_| protocol("TIME seconds out of range"))?;
                let micros = i64::try_from(uint(micros, "microseconds")?)
                    .map_err(|_| protocol("TIME microseconds out of range"))?;
                Ok(secs.saturating_mul(1000).saturating_add(micros / 1000))
            }
            other => Err(protocol(format!("TIME: {} items", other.len()))),
        }
    }

    async fn join(
        &self,
        period: &PeriodKeys,
        request: &JoinRequest<'_>,
    ) -> Result<Joined, StoreError> {
        let inv = join_invocation(period, request);
        // A join is idempotent: a repeated join returns the first placement.
        parse_join(self.invoke("join", Retry::Idempotent, &inv).await?)
    }

    async fn placement(
        &self,
        period: &PeriodKeys,
        player: &str,
    ) -> Result<Option<(String, u32)>, StoreError> {
        let cmd = placement_command(period, player);
        let reply = self.command("placement", Retry::Idempotent, &cmd).await?;
        parse_placement(reply)
    }

    async fn enter(
        &self,
        bracket: &BracketKeys,
        player: &str,
        size: u32,
        profile: Option<(u64, &str)>,
        ttl_secs: u64,
    ) -> Result<Entered, StoreError> {
        let inv = enter_invocation(&BoardEntry {
            bracket,
            player,
            size,
            profile,
            ttl_secs,
        });
        parse_enter(self.invoke("enter", Retry::Idempotent, &inv).await?)
    }

    async fn joined(&self, period: &PeriodKeys) -> Result<Vec<(String, u64)>, StoreError> {
        let mut cmd = ::redis::cmd("HGETALL");
        cmd.arg(&period.joins);
        let reply = self.command("joined", Retry::Idempotent, &cmd).await?;
        let mut out = pairs(reply, "join counters")?
            .into_iter()
            .map(|(tier, n)| {
                let n = n
                    .parse::<u64>()
                    .map_err(|_| protocol(format!("join counter of {tier:?} is {n:?}")))?;
                Ok((tier, n))
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        out.sort();
        Ok(out)
    }

    async fn joined_many(
        &self,
        periods: &[PeriodKeys],
    ) -> Result<Vec<Vec<(String, u64)>>, StoreError> {
        // Each period is a slot of its own: concurrent single reads, which one
        // multiplexed connection sends together and a cluster routes by slot.
        futures::future::try_join_all(periods.iter().map(|p| self.joined(p))).await
    }

    async fn player_state(
        &self,
        player_keys: &PlayerKeys,
    ) -> Result<Option<PlayerState>, StoreError> {
        let reply = self
            .command(
                "player_state",
                Retry::Idempotent,
                &state_command(player_keys),
            )
            .await?;
        parse_state(reply)
    }

    async fn player_snapshot(
        &self,
        player_keys: &PlayerKeys,
    ) -> Result<PlayerSnapshot, StoreError> {
        // Three reads of one slot: one pipeline, one round trip, on a cluster too.
        let mut pipe = ::redis::pipe();
        add_snapshot_reads(&mut pipe, player_keys);
        let pipe = &pipe;
        let replies = self
            .run("player_snapshot", Retry::Idempotent, |mut con| async move {
                pipe.query_async::<Vec<Value>>(&mut con).await
            })
            .await?;
        parse_snapshot(replies)
    }

    async fn record_state(
        &self,
        player_keys: &PlayerKeys,
        state: &PlayerState,
        ttl_secs: u64,
        trim_before: u64,
    ) -> Result<(), StoreError> {
        let inv = record_state_invocation(&StateWrite {
            player_keys,
            state,
            ttl_secs,
            trim_before,
        });
        // Idempotent: writing the same state again is a no-op.
        parse_record_state(self.invoke("record_state", Retry::Idempotent, &inv).await?)
    }

    async fn join_many(
        &self,
        period: &PeriodKeys,
        requests: &[JoinRequest<'_>],
    ) -> Vec<Result<Joined, StoreError>> {
        self.bulk_join(period, requests).await
    }

    async fn placements(
        &self,
        period: &PeriodKeys,
        players: &[&str],
    ) -> Vec<Result<Option<(String, u32)>, StoreError>> {
        self.bulk_placements(period, players).await
    }

    async fn enter_many(&self, entries: &[BoardEntry<'_>]) -> Vec<Result<Entered, StoreError>> {
        self.bulk_enter(entries).await
    }

    async fn player_snapshots(
        &self,
        players: &[&PlayerKeys],
    ) -> Vec<Result<PlayerSnapshot, StoreError>> {
        self.bulk_snapshots(players).await
    }

    async fn record_states(&self, writes: &[StateWrite<'_>]) -> Vec<Result<(), StoreError>> {
        self.bulk_record_states(writes).await
    }
}

/// The call of join.lua for one join.
pub(super) fn join_invocation(
    period: &PeriodKeys,
    request: &JoinRequest<'_>,
) -> ScriptInvocation<'static> {
    // Keys in the order join.lua declares them.
    let time = &request.time;
    let mut inv = SCRIPTS.join.prepare_invoke();
    inv.key(&period.assign)
        .key(&period.joins)
        .key(&period.meta)
        .arg(request.player)
        .arg(request.tier)
        .arg(request.size.max(1))
        .arg(now_arg(time.now))
        .arg(time.at_ms)
        .arg(time.start_ms)
        .arg(time.closes_ms)
        .arg(time.skew_ms)
        .arg(
            request
                .replace_full
                .map(|b| b.to_string())
                .unwrap_or_default(),
        )
        .arg(request.ttl_secs.clamp(1, MAX_WINDOW_SECS));
    inv
}

/// join.lua's reply.
pub(super) fn parse_join(reply: Value) -> Result<Joined, StoreError> {
    let items = array(reply, "join reply")?;
    if let Some(why) = time_refusal(&items)? {
        return Err(StoreError::Time(why));
    }
    let status = items
        .first()
        .ok_or_else(|| protocol("empty join reply"))
        .and_then(|s| text(s, "join status"))?;
    let placed = |new: bool| -> Result<Joined, StoreError> {
        let tier = items
            .get(1)
            .ok_or_else(|| protocol("join reply without tier"))
            .and_then(|v| text(v, "tier"))?;
        let bracket = items
            .get(2)
            .ok_or_else(|| protocol("join reply without bracket"))
            .and_then(|v| text(v, "bracket"))
            .and_then(|s| bracket_number(s, "bracket"))?;
        Ok(Joined {
            tier: tier.to_owned(),
            bracket,
            new,
        })
    };
    match status {
        "new" => placed(true),
        "existing" => placed(false),
        "closed" => Err(StoreError::PeriodClosed),
        "malformed" => Err(protocol(format!(
            "join found data it did not write: {}",
            items
                .get(1)
                .map(|v| text(v, "detail"))
                .transpose()?
                .unwrap_or("?")
        ))),
        other => Err(protocol(format!("unknown join status {other:?}"))),
    }
}

/// The HGET of a player's assignment.
pub(super) fn placement_command(period: &PeriodKeys, player: &str) -> ::redis::Cmd {
    let mut cmd = ::redis::cmd("HGET");
    cmd.arg(&period.assign).arg(player);
    cmd
}

/// An assignment, `tier:bracket`, or nil.
pub(super) fn parse_placement(reply: Value) -> Result<Option<(String, u32)>, StoreError> {
    if is_nil(&reply) {
        return Ok(None);
    }
    let placed = text(&reply, "assignment")?;
    // Tier names never contain ':', so the bracket follows the last one.
    let (tier, bracket) = placed
        .rsplit_once(':')
        .ok_or_else(|| protocol(format!("assignment {placed:?} is not tier:bracket")))?;
    Ok(Some((
        tier.to_owned(),
        bracket_number(bracket, "assigned bracket")?,
    )))
}

/// The call of enter.lua for one entry.
pub(super) fn enter_invocation(entry: &BoardEntry<'_>) -> ScriptInvocation<'static> {
    let mut inv = SCRIPTS.enter.prepare_invoke();
    inv.key(&entry.bracket.board)
        .key(&entry.bracket.profiles)
        .key(&entry.bracket.meta)
        .arg(entry.player)
        .arg(entry.size.max(1))
        .arg(entry.ttl_secs.clamp(1, MAX_WINDOW_SECS));
    if let Some((version, json)) = entry.profile {
        inv.arg(version).arg(json);
    }
    inv
}

/// enter.lua's reply.
pub(super) fn parse_enter(reply: Value) -> Result<Entered, StoreError> {
    match text(&reply, "enter reply")? {
        "ok" => Ok(Entered::Ok),
        "full" => Ok(Entered::Full),
        "closed" => Err(StoreError::PeriodClosed),
        other => Err(protocol(format!("unknown enter reply {other:?}"))),
    }
}

/// The three reads of a player snapshot (one slot), in `parse_snapshot`'s order.
pub(super) fn add_snapshot_reads(pipe: &mut ::redis::Pipeline, player_keys: &PlayerKeys) {
    pipe.add_command(state_command(player_keys));
    pipe.cmd("HGETALL").arg(player_keys.profile());
    pipe.cmd("HGETALL").arg(player_keys.rewards());
}

/// The replies of `add_snapshot_reads`.
pub(super) fn parse_snapshot(replies: Vec<Value>) -> Result<PlayerSnapshot, StoreError> {
    let [state, profile, rewards]: [Value; 3] = replies.try_into().map_err(|r: Vec<Value>| {
        protocol(format!("player snapshot: {} replies to 3 reads", r.len()))
    })?;
    Ok(PlayerSnapshot {
        state: parse_state(state)?,
        profile: super::ranking::parse_profile(profile)?,
        rewards: super::rollover::parse_rewards(rewards)?,
    })
}

/// The call of record_state.lua for one write.
pub(super) fn record_state_invocation(w: &StateWrite<'_>) -> ScriptInvocation<'static> {
    let mut inv = SCRIPTS.record_state.prepare_invoke();
    inv.key(w.player_keys.state())
        .key(w.player_keys.profile())
        .key(w.player_keys.rewards())
        .key(w.player_keys.claims())
        .arg(w.state.period)
        .arg(&w.state.tier)
        .arg(w.state.bracket)
        .arg(w.ttl_secs.clamp(1, MAX_WINDOW_SECS))
        .arg(w.trim_before);
    inv
}

/// record_state.lua's reply.
pub(super) fn parse_record_state(reply: Value) -> Result<(), StoreError> {
    match reply {
        Value::Array(items) => Err(protocol(format!(
            "record_state found data it did not write: {}",
            items
                .get(1)
                .map(|v| text(v, "detail"))
                .transpose()?
                .unwrap_or("?")
        ))),
        _ => Ok(()),
    }
}

/// The state fields of a player, in `parse_state`'s order.
fn state_command(player_keys: &PlayerKeys) -> ::redis::Cmd {
    let mut cmd = ::redis::cmd("HMGET");
    cmd.arg(player_keys.state())
        .arg("period")
        .arg("tier")
        .arg("bracket")
        .arg("prev_period")
        .arg("prev_tier")
        .arg("prev_bracket");
    cmd
}

/// A player's state from `state_command`'s reply.
fn parse_state(reply: Value) -> Result<Option<PlayerState>, StoreError> {
    let placement = |p: &Value, t: &Value, b: &Value| -> Result<(u64, String, u32), StoreError> {
        Ok((
            uint(p, "state period")?,
            text(t, "state tier")?.to_owned(),
            bracket_number(text(b, "state bracket")?, "state bracket")?,
        ))
    };
    match array(reply, "player state")?.as_slice() {
        [period, ..] if is_nil(period) => Ok(None),
        [period, tier, bracket, pp, pt, pb] => {
            let (period, tier, bracket) = placement(period, tier, bracket)?;
            let mut state = PlayerState::new(period, tier, bracket);
            if !is_nil(pp) {
                state.previous = Some(placement(pp, pt, pb)?);
            }
            Ok(Some(state))
        }
        other => Err(protocol(format!(
            "player state: expected 6 fields, got {}",
            other.len()
        ))),
    }
}
