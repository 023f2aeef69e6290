//! Placements on Redis: joins (`join.lua`, its calls in `joins.rs`), board
//! entries (`enter.lua`), players' league state (`record_state.lua`), and `TIME`.

use ::redis::{ScriptInvocation, Value};

use super::joins::{join_invocation, parse_assignment, parse_join, placement_command, tally};
use super::reply::*;
use super::scripts::SCRIPTS;
use super::{MAX_WINDOW_SECS, RedisStore, Retry};
use crate::error::StoreError;
use crate::store::keys::{PeriodKeys, PlayerKeys};
use crate::store::*;

impl LeagueStore for RedisStore {
    fn gathers_joins(&self) -> bool {
        self.options.gather_joins
    }

    fn gathers_submits(&self) -> bool {
        self.options.gather_submits
    }

    async fn write_refusal(&self) -> Result<Option<String>, StoreError> {
        self.probe_writes().await
    }

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
        let inv = join_invocation(period, &[request]);
        // A join is idempotent: a repeated join returns the first placement.
        let reply = self.invoke("join", Retry::Idempotent, &inv).await?;
        parse_join(reply, 1)?
            .pop()
            .ok_or_else(|| protocol("join: no reply for the join"))?
    }

    async fn placement(
        &self,
        period: &PeriodKeys,
        player: &str,
    ) -> Result<Option<(String, u32)>, StoreError> {
        let cmd = placement_command(period, player);
        let reply = self.command("placement", Retry::Idempotent, &cmd).await?;
        parse_assignment(reply)
    }

    async fn enter_entry(&self, entry: &BoardEntry<'_>) -> Result<Entered, StoreError> {
        let inv = enter_invocation(&[entry]);
        let reply = self.invoke("enter", Retry::Idempotent, &inv).await?;
        parse_enter(reply, 1)?
            .pop()
            .ok_or_else(|| protocol("enter: no reply for the entry"))?
    }

    async fn joined(&self, period: &PeriodKeys) -> Result<Vec<(String, TierJoins)>, StoreError> {
        let mut cmd = ::redis::cmd("HGETALL");
        cmd.arg(&period.joins);
        let reply = self.command("joined", Retry::Idempotent, &cmd).await?;
        tally(pairs(reply, "join counters")?)
    }

    async fn joined_many(
        &self,
        periods: &[PeriodKeys],
    ) -> Result<Vec<Vec<(String, TierJoins)>>, StoreError> {
        // Each period is a slot of its own: concurrent single reads, which one
        // multiplexed connection sends together and a cluster routes by slot.
        futures::future::try_join_all(periods.iter().map(|p| self.joined(p))).await
    }

    async fn player_state(
        &self,
        player_keys: &PlayerKeys,
    ) -> Result<Option<PlayerState>, StoreError> {
        Ok(self.player_snapshot(player_keys).await?.state)
    }

    async fn player_snapshot(
        &self,
        player_keys: &PlayerKeys,
    ) -> Result<PlayerSnapshot, StoreError> {
        // Three reads of one slot in one script (which drops records past their
        // deadline by the server's clock, or the store's): one round trip, on a
        // cluster too.
        let reply = self
            .invoke(
                "player_snapshot",
                Retry::Idempotent,
                &snapshot_invocation(&[player_keys], &self.record_now()),
            )
            .await?;
        one(parse_snapshots(reply, 1)?)
    }

    async fn record_state(
        &self,
        player_keys: &PlayerKeys,
        state: &PlayerState,
        ttl_secs: u64,
        trim_before: u64,
    ) -> Result<(), StoreError> {
        check_state_tier(state)?;
        let inv = record_state_invocation(
            &[&StateWrite::new(player_keys, state, ttl_secs, trim_before)],
            &self.record_now(),
        );
        // Idempotent: writing the same state again is a no-op.
        one(parse_record_states(
            self.invoke("record_state", Retry::Idempotent, &inv).await?,
            1,
        )?)
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

/// The call of enter.lua for entries of one bracket (of one size and TTL): the bracket's
/// keys, then a triple per entry.
pub(super) fn enter_invocation(entries: &[&BoardEntry<'_>]) -> ScriptInvocation<'static> {
    let mut inv = SCRIPTS.enter.prepare_invoke();
    if let Some(first) = entries.first() {
        inv.key(&first.bracket.board)
            .key(&first.bracket.profiles)
            .key(&first.bracket.meta)
            .key(&first.bracket.pages)
            .key(first.bracket.profiles_text());
        match first.placed {
            None => inv.arg(first.size.max(1)),
            Some(p) => inv.key(first.bracket.events()).arg(format!(
                "{}|{}",
                first.size.max(1),
                p.spec.arg()
            )),
        };
        inv.arg(first.ttl_secs.clamp(1, MAX_WINDOW_SECS));
    }
    let logged = entries.first().is_some_and(|e| e.placed.is_some());
    for entry in entries {
        inv.arg(entry.player);
        match entry.profile {
            Some((version, json)) => inv.arg(version).arg(json),
            None => inv.arg("").arg(""),
        };
        if logged {
            let body = entry
                .placed
                .and_then(|p| p.bodies.first())
                .map_or("", String::as_str);
            inv.arg(body);
        }
    }
    inv
}

/// enter.lua's reply: one answer per entry of the call (`n`), in order; a closed
/// bracket is [`StoreError::PeriodClosed`] for each.
pub(super) fn parse_enter(
    reply: Value,
    n: usize,
) -> Result<Vec<Result<Entered, StoreError>>, StoreError> {
    let items = answers(reply, n, "enter reply")?;
    items
        .iter()
        .map(|item| {
            Ok(match text(item, "enter answer")? {
                "ok" => Ok(Entered::Ok),
                "full" => Ok(Entered::Full),
                banned if banned.starts_with("banned|") => {
                    Ok(Entered::Banned(banned[7..].to_owned()))
                }
                "closed" => Err(StoreError::PeriodClosed),
                other => return Err(protocol(format!("unknown enter answer {other:?}"))),
            })
        })
        .collect()
}

/// The call of record_state.lua for writes of one slot group (one write on the single
/// path; see [`RedisStore::bulk_record_states`]). The period, the TTL and the trim are
/// the first write's: the caller sends writes that share them (see
/// [`record_call_key`]). `now` judges the records' deadlines ("": the server's
/// clock; see [`RedisStore::record_now`]).
pub(super) fn record_state_invocation(
    writes: &[&StateWrite<'_>],
    now: &str,
) -> ScriptInvocation<'static> {
    let mut inv = SCRIPTS.record_state.prepare_invoke();
    if let Some(first) = writes.first() {
        inv.arg(first.state.period)
            .arg(first.ttl_secs.clamp(1, MAX_WINDOW_SECS))
            .arg(first.trim_before)
            .arg(now);
    }
    for w in writes {
        inv.key(w.player_keys.state())
            .key(w.player_keys.profile())
            .key(w.player_keys.rewards())
            .key(w.player_keys.claims())
            .arg(&w.player_keys.player)
            .arg(&w.state.tier)
            .arg(w.state.bracket)
            .arg(hints(w));
    }
    inv
}

/// What a record_state.lua call carries once for all its writes, as a key that writes
/// sharing a call have in common: the period, the TTL and the trim (a batch of one
/// period shares them).
pub(super) fn record_call_key(w: &StateWrite<'_>) -> (u64, u64, u64) {
    (w.state.period, w.ttl_secs, w.trim_before)
}

/// record_state.lua's hints of a write: "s" (no live state found), "p" (no live
/// profile found), then the found profile's deadline in decimal, if any.
fn hints(w: &StateWrite<'_>) -> String {
    let mut hints = String::new();
    if w.found_no_state {
        hints.push('s');
    }
    if w.found_no_profile {
        hints.push('p');
    }
    if let Some(d) = w.profile_deadline {
        hints.push_str(&d.to_string());
    }
    hints
}

/// A tier name holds no '|', which separates a state record's placements.
pub(super) fn check_state_tier(state: &PlayerState) -> Result<(), StoreError> {
    if state.tier.contains('|') {
        return Err(protocol(format!(
            "record_state: tier {:?} contains '|', which tier names never do",
            state.tier
        )));
    }
    Ok(())
}

/// record_state.lua's reply: one answer per write of the call.
pub(super) fn parse_record_states(
    reply: Value,
    n: usize,
) -> Result<Vec<Result<(), StoreError>>, StoreError> {
    let items = answers(reply, n, "record_state answers")?;
    Ok(items
        .into_iter()
        .map(|item| match item {
            Value::ServerError(e) => Err(super::failure::backend(e.into())),
            Value::Array(what) => Err(protocol(format!(
                "record_state found data it did not write: {}",
                what.get(1)
                    .map(|v| text(v, "detail"))
                    .transpose()?
                    .unwrap_or("?")
            ))),
            _ => Ok(()),
        })
        .collect())
}

/// `snapshot.lua` for players of one slot group (one on the single path; see
/// [`RedisStore::bulk_snapshots`]). `now` judges the records' deadlines ("": the
/// server's clock; see [`RedisStore::record_now`]).
pub(super) fn snapshot_invocation(players: &[&PlayerKeys], now: &str) -> ScriptInvocation<'static> {
    let mut inv = SCRIPTS.snapshot.prepare_invoke();
    for k in players {
        inv.key(k.state())
            .key(k.profile())
            .key(k.rewards())
            .key(k.ban());
    }
    inv.arg(now);
    for k in players {
        inv.arg(&k.player);
    }
    inv
}

/// `snapshot.lua`'s reply: one flat array holding a snapshot per player of the call
/// (`n`), one after the other (see the script for the form of each).
pub(super) fn parse_snapshots(
    reply: Value,
    n: usize,
) -> Result<Vec<Result<PlayerSnapshot, StoreError>>, StoreError> {
    let mut items = array(reply, "player snapshots")?.into_iter();
    let mut out = Vec::with_capacity(n);
    while let Some(head) = items.next() {
        out.push(match head {
            Value::ServerError(e) => Err(super::failure::backend(e.into())),
            // The number of reward strings, after the state, the profile, the
            // profile's deadline and the ban record.
            Value::Int(rewards) => {
                let count = usize::try_from(rewards)
                    .ok()
                    .filter(|c| c % 2 == 0)
                    .ok_or_else(|| {
                        protocol(format!("player snapshot: {rewards} reward strings"))
                    })?;
                let fields: Vec<Value> = items.by_ref().take(4 + count).collect();
                if fields.len() != 4 + count {
                    return Err(protocol("player snapshot: the reply ends inside an answer"));
                }
                parse_snapshot(fields)
            }
            other => match text(&other, "player snapshot")? {
                "malformed" => {
                    let what = items
                        .next()
                        .ok_or_else(|| protocol("player snapshot: malformed, without a detail"))?;
                    Err(protocol(format!(
                        "player records hold data leaguekit did not write: {}",
                        text(&what, "detail")?
                    )))
                }
                other => {
                    return Err(protocol(format!(
                        "player snapshot: unknown answer {other:?}"
                    )));
                }
            },
        });
    }
    if out.len() != n {
        return Err(protocol(format!(
            "player snapshots: {} answers for {n} players",
            out.len()
        )));
    }
    Ok(out)
}

/// The only answer of a call for one item.
fn one<T>(mut answers: Vec<Result<T, StoreError>>) -> Result<T, StoreError> {
    answers
        .pop()
        .unwrap_or_else(|| Err(protocol("a call for one item got no answer")))
}

/// One player's snapshot: state, profile, profile deadline, ban record, then the rewards' source
/// and value pairs.
fn parse_snapshot(mut fields: Vec<Value>) -> Result<PlayerSnapshot, StoreError> {
    let rewards = Value::Array(fields.split_off(4.min(fields.len())));
    let [state, profile, deadline, ban] = fields.as_slice() else {
        return Err(protocol("player snapshot: fewer than 4 fields"));
    };
    let (state, profile, deadline, ban) = (
        text(state, "state record")?,
        text(profile, "profile record")?,
        text(deadline, "profile deadline")?,
        text(ban, "ban record")?,
    );
    let profile_deadline = match deadline {
        "" => None,
        d => Some(
            d.parse()
                .map_err(|_| protocol(format!("profile deadline {d:?} is not a number")))?,
        ),
    };
    Ok(PlayerSnapshot {
        state: parse_state(state)?,
        profile: parse_profile(profile)?,
        rewards: super::rollover::parse_rewards(rewards)?,
        profile_deadline,
        ban: (!ban.is_empty()).then(|| ban.to_owned()),
    })
}

/// A placement `period:tier:bracket` of a state record.
fn parse_placement(placed: &str) -> Result<(u64, String, u32), StoreError> {
    let bad = || {
        protocol(format!(
            "state placement {placed:?} is not period:tier:bracket"
        ))
    };
    let (period, rest) = placed.split_once(':').ok_or_else(bad)?;
    let (tier, bracket) = rest.rsplit_once(':').ok_or_else(bad)?;
    let period = period.parse::<u64>().map_err(|_| bad())?;
    if tier.is_empty() {
        return Err(bad());
    }
    Ok((
        period,
        tier.to_owned(),
        bracket_number(bracket, "state bracket")?,
    ))
}

/// A player's state from its record without the deadline: `period:tier:bracket`, then
/// `|period:tier:bracket` of the previous placement if any; "" for none.
pub(super) fn parse_state(record: &str) -> Result<Option<PlayerState>, StoreError> {
    if record.is_empty() {
        return Ok(None);
    }
    let mut parts = record.split('|');
    let current = parse_placement(parts.next().unwrap_or(""))?;
    let previous = parts.next().map(parse_placement).transpose()?;
    if parts.next().is_some() {
        return Err(protocol(format!(
            "state record {record:?} has more than two placements"
        )));
    }
    let mut state = PlayerState::new(current.0, current.1, current.2);
    state.previous = previous;
    Ok(Some(state))
}

/// A profile's fields (sorted) and version from its record without the deadline:
/// `version|json`; "" for none.
pub(super) fn parse_profile(record: &str) -> Result<(Vec<(String, String)>, u64), StoreError> {
    if record.is_empty() {
        return Ok((Vec::new(), 0));
    }
    let bad = |why: &str| protocol(format!("profile record {record:?}: {why}"));
    let (version, json) = record
        .split_once('|')
        .ok_or_else(|| bad("not version|json"))?;
    let version = version.parse::<u64>().map_err(|_| bad("bad version"))?;
    let fields: std::collections::BTreeMap<String, String> =
        serde_json::from_str(json).map_err(|e| bad(&format!("not a JSON map of strings ({e})")))?;
    Ok((fields.into_iter().collect(), version))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshots_are_read_one_after_the_other_from_one_flat_reply() {
        let reply = Value::Array(vec![
            // A player with a state, a profile and one reward.
            Value::Int(2),
            bulk("3:bronze:7"),
            bulk("4|{\"name\":\"a\"}"),
            bulk("1900000000"),
            bulk("{\"player\":\"p1\"}"),
            bulk("2/bronze/1"),
            bulk("p|gems:100"),
            // A command refused for the second player.
            ::redis::parse_redis_value(b"-WRONGTYPE Operation against a key\r\n")
                .expect("an error reply"),
            // A record leaguekit did not write.
            bulk("malformed"),
            bulk("record of p3 in k: x"),
            // A new player.
            Value::Int(0),
            bulk(""),
            bulk(""),
            bulk(""),
            bulk(""),
        ]);
        let mut answers = parse_snapshots(reply, 4).expect("four answers").into_iter();
        let first = answers.next().expect("first").expect("first parsed");
        assert_eq!(first.state.map(|s| (s.period, s.bracket)), Some((3, 7)));
        assert_eq!(first.profile.1, 4);
        assert_eq!(first.profile_deadline, Some(1_900_000_000));
        assert_eq!(first.rewards.len(), 1);
        assert_eq!(first.ban.as_deref(), Some("{\"player\":\"p1\"}"));
        assert!(matches!(
            answers.next(),
            Some(Err(StoreError::Backend { .. }))
        ));
        assert!(matches!(answers.next(), Some(Err(StoreError::Protocol(_)))));
        let last = answers.next().and_then(Result::ok).expect("new player");
        assert!(last.state.is_none() && last.rewards.is_empty() && last.profile_deadline.is_none());
        assert_eq!(last.ban, None);

        // A reply that ends inside an answer, or holds a different number of answers
        // than players, or an odd number of reward strings, is refused whole.
        let cut = Value::Array(vec![
            Value::Int(2),
            bulk(""),
            bulk(""),
            bulk(""),
            bulk(""),
            bulk("s"),
        ]);
        assert!(parse_snapshots(cut, 1).is_err());
        let one = Value::Array(vec![Value::Int(0), bulk(""), bulk(""), bulk(""), bulk("")]);
        assert!(parse_snapshots(one.clone(), 2).is_err());
        assert_eq!(parse_snapshots(one, 1).map(|a| a.len()).ok(), Some(1));
        let odd = Value::Array(vec![
            Value::Int(1),
            bulk(""),
            bulk(""),
            bulk(""),
            bulk(""),
            bulk("s"),
        ]);
        assert!(parse_snapshots(odd, 1).is_err());
    }
}
