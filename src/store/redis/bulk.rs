//! The bulk path of placements on Redis: the joins, board entries, snapshots and
//! state writes of many players, each batch pipelined per hash-slot group (one
//! pipeline on one server; on a cluster, the groups run concurrently, see
//! [`RedisStore::pipelined`]). The scripts and replies are the single operations'
//! (`league.rs`), so a batch behaves exactly as its items one by one; `join.lua` and
//! `enter.lua` take many players a call (a period's joins, a bracket's entries), which
//! the single operations send one at a time.

use std::collections::HashMap;

use ::redis::ScriptInvocation;

use super::joins::*;
use super::league::*;
use super::pipeline::Answer;
use super::scripts::SCRIPTS;
use super::{RedisStore, Retry};
use crate::error::StoreError;
use crate::store::keys::{PeriodKeys, PlayerKeys, hash_tag};
use crate::store::*;

/// Players of one bracket entered by one enter.lua call on the bulk path: enough to
/// take a batch's players of a bracket (100 by default) in one call, few enough to keep
/// the call's arguments and its time on the server small.
const ENTER_AT_ONCE: usize = 128;

/// Players read by one snapshot.lua call on the bulk path (four keys and one argument
/// a player).
const SNAPSHOTS_AT_ONCE: usize = 64;

/// Players recorded by one record_state.lua call on the bulk path (four keys and four
/// arguments a player).
const STATES_AT_ONCE: usize = 64;

/// Joins of one period placed by one join.lua call on the bulk path (its keys and
/// arguments grow with it: 1 key and 3 arguments a join).
const JOIN_AT_ONCE: usize = 128;

impl RedisStore {
    /// Joins of one period, [`JOIN_AT_ONCE`] to a join.lua call, so the clock, the
    /// closing mark and each tier's counter are touched once per call.
    pub(super) async fn bulk_join(
        &self,
        period: &PeriodKeys,
        requests: &[JoinRequest<'_>],
    ) -> Vec<Result<Joined, StoreError>> {
        if requests.is_empty() {
            return Vec::new();
        }
        // Calls of consecutive joins that share the clock, the TTL, the period's time
        // bounds and the bracket size (a call carries them once; a league's batch
        // always shares them). A join past a full bracket goes alone, as join.lua
        // requires (see [`shares_call`]).
        let mut chunks: Vec<Vec<&JoinRequest<'_>>> = Vec::new();
        for r in requests {
            match chunks.last_mut() {
                Some(c) if c.len() < JOIN_AT_ONCE && shares_call(c[0], r) => c.push(r),
                _ => chunks.push(vec![r]),
            }
        }
        let calls: Vec<ScriptInvocation<'_>> =
            chunks.iter().map(|c| join_invocation(period, c)).collect();
        let tags = vec![hash_tag(&period.base); calls.len()];
        // Joins are idempotent: a resent join answers the first placement.
        let answers = self
            .pipelined("join_many", &SCRIPTS.join, &calls, &tags, |_| {
                Retry::Idempotent
            })
            .await;
        let mut results = Vec::with_capacity(requests.len());
        for (chunk, answer) in chunks.iter().zip(answers) {
            match answer.and_then(|reply| parse_join(reply?, chunk.len())) {
                Ok(each) => results.extend(each),
                Err(e) => results.extend(chunk.iter().map(|_| Err(e.clone()))),
            }
        }
        results
    }

    pub(super) async fn bulk_placements(
        &self,
        period: &PeriodKeys,
        players: &[&str],
    ) -> Vec<Result<Option<(String, u32)>, StoreError>> {
        if players.is_empty() {
            return Vec::new();
        }
        let tags = vec![hash_tag(&period.base); players.len()];
        self.pipelined_commands("placements", &tags, 1, |i, pipe| {
            pipe.add_command(placement_command(period, players[i]));
        })
        .await
        .into_iter()
        .map(|replies| {
            let reply = replies?
                .pop()
                .ok_or_else(|| StoreError::Protocol("placements: a read got no reply".into()))?;
            parse_assignment(reply)
        })
        .collect()
    }

    /// Board entries, one enter.lua call per bracket (at most [`ENTER_AT_ONCE`]
    /// players each), so a batch's players of one bracket cost one call, not one each.
    pub(super) async fn bulk_enter(
        &self,
        entries: &[BoardEntry<'_>],
    ) -> Vec<Result<Entered, StoreError>> {
        if entries.is_empty() {
            return Vec::new();
        }
        // Calls: the entries of one bracket (of one size and TTL, which a bracket's
        // entries always share), in the order the brackets first appear.
        let mut index: HashMap<(&str, u32, u64), usize> = HashMap::new();
        let mut calls: Vec<Vec<usize>> = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            let key = (e.bracket.board.as_str(), e.size, e.ttl_secs);
            let c = match index.get(&key) {
                Some(&c) if calls[c].len() < ENTER_AT_ONCE => c,
                _ => {
                    calls.push(Vec::new());
                    index.insert(key, calls.len() - 1);
                    calls.len() - 1
                }
            };
            calls[c].push(i);
        }
        let invocations: Vec<ScriptInvocation<'_>> = calls
            .iter()
            .map(|call| {
                let of_call: Vec<&BoardEntry<'_>> = call.iter().map(|&i| &entries[i]).collect();
                enter_invocation(&of_call)
            })
            .collect();
        let tags: Vec<&str> = calls
            .iter()
            .map(|call| hash_tag(&entries[call[0]].bracket.board))
            .collect();
        let answers = self
            .pipelined("enter_many", &SCRIPTS.enter, &invocations, &tags, |_| {
                Retry::Idempotent
            })
            .await;
        spread(
            entries.len(),
            calls.into_iter().zip(answers).collect(),
            |reply, items| parse_enter(reply??, items.len()),
            "enter_many",
        )
    }

    /// Snapshots, [`SNAPSHOTS_AT_ONCE`] players to a snapshot.lua call (of one slot
    /// on a cluster, see [`RedisStore::pipelined_items`]).
    pub(super) async fn bulk_snapshots(
        &self,
        players: &[&PlayerKeys],
    ) -> Vec<Result<PlayerSnapshot, StoreError>> {
        if players.is_empty() {
            return Vec::new();
        }
        let tags: Vec<&str> = players.iter().map(|k| hash_tag(&k.base)).collect();
        let now = self.record_now();
        let answered = self
            .pipelined_items(
                "player_snapshots",
                &SCRIPTS.snapshot,
                &tags,
                SNAPSHOTS_AT_ONCE,
                |items| {
                    let of_call: Vec<&PlayerKeys> = items.iter().map(|&i| players[i]).collect();
                    snapshot_invocation(&of_call, &now)
                },
                |_| Retry::Idempotent,
            )
            .await;
        spread(
            players.len(),
            answered,
            |reply, items| parse_snapshots(reply??, items.len()),
            "player_snapshots",
        )
    }

    /// State records, [`STATES_AT_ONCE`] players to a record_state.lua call (of one
    /// slot on a cluster, see [`RedisStore::pipelined_items`]), the writes that share
    /// a call's period, TTL and trim ([`record_call_key`]: a batch of one period
    /// shares them) together, the groups concurrently.
    pub(super) async fn bulk_record_states(
        &self,
        writes: &[StateWrite<'_>],
    ) -> Vec<Result<(), StoreError>> {
        if writes.is_empty() {
            return Vec::new();
        }
        // A write the record format cannot hold is refused alone, as record_state
        // refuses it; the others are sent.
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut index: HashMap<(u64, u64, u64), usize> = HashMap::new();
        for (i, w) in writes.iter().enumerate() {
            if check_state_tier(w.state).is_err() {
                continue;
            }
            let g = *index.entry(record_call_key(w)).or_insert_with(|| {
                groups.push(Vec::new());
                groups.len() - 1
            });
            groups[g].push(i);
        }
        let now = self.record_now();
        let now = &now;
        let runs = groups.iter().map(|sendable| async move {
            let tags: Vec<&str> = sendable
                .iter()
                .map(|&i| hash_tag(&writes[i].player_keys.base))
                .collect();
            let answered = self
                .pipelined_items(
                    "record_states",
                    &SCRIPTS.record_state,
                    &tags,
                    STATES_AT_ONCE,
                    |items| {
                        let of_call: Vec<&StateWrite<'_>> =
                            items.iter().map(|&k| &writes[sendable[k]]).collect();
                        record_state_invocation(&of_call, now)
                    },
                    // Writing the same state again is a no-op.
                    |_| Retry::Idempotent,
                )
                .await;
            spread(
                sendable.len(),
                answered,
                |reply, items| parse_record_states(reply??, items.len()),
                "record_states",
            )
        });
        let answers = futures::future::join_all(runs).await;
        let mut results: Vec<Option<Result<(), StoreError>>> =
            writes.iter().map(|_| None).collect();
        for (sendable, answers) in groups.iter().zip(answers) {
            for (&i, answer) in sendable.iter().zip(answers) {
                results[i] = Some(answer);
            }
        }
        writes
            .iter()
            .zip(results)
            .map(|(w, r)| {
                check_state_tier(w.state)?;
                r.unwrap_or_else(|| {
                    Err(StoreError::Protocol(
                        "record_states: a write got no reply".into(),
                    ))
                })
            })
            .collect()
    }
}

/// The answers of calls of many items spread back to the items: `parse(reply, items)`
/// answers a call's items (indices into the batch), and a call that failed as a whole
/// fails each of them.
pub(super) fn spread<T>(
    len: usize,
    answered: Vec<(Vec<usize>, Answer)>,
    parse: impl Fn(Answer, &[usize]) -> Result<Vec<Result<T, StoreError>>, StoreError>,
    op: &str,
) -> Vec<Result<T, StoreError>> {
    let mut results: Vec<Option<Result<T, StoreError>>> = (0..len).map(|_| None).collect();
    for (items, answer) in answered {
        match parse(answer, &items) {
            Ok(each) => {
                for (&i, result) in items.iter().zip(each) {
                    results[i] = Some(result);
                }
            }
            Err(e) => {
                for &i in &items {
                    results[i] = Some(Err(e.clone()));
                }
            }
        }
    }
    results
        .into_iter()
        .map(|r| {
            r.unwrap_or_else(|| Err(StoreError::Protocol(format!("{op}: an item got no reply"))))
        })
        .collect()
}
