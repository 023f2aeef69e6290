//! The bulk path of placements on Redis: the joins, board entries, snapshots and
//! state writes of many players, each batch pipelined per hash-slot group (one
//! pipeline on one server; on a cluster, the groups run concurrently, see
//! [`RedisStore::pipelined`]). The scripts and replies are the single operations'
//! (`league.rs`), so a batch behaves exactly as its items one by one.

use ::redis::ScriptInvocation;

use super::league::*;
use super::scripts::SCRIPTS;
use super::{RedisStore, Retry};
use crate::error::StoreError;
use crate::store::keys::{PeriodKeys, PlayerKeys, hash_tag};
use crate::store::*;

impl RedisStore {
    pub(super) async fn bulk_join(
        &self,
        period: &PeriodKeys,
        requests: &[JoinRequest<'_>],
    ) -> Vec<Result<Joined, StoreError>> {
        if requests.is_empty() {
            return Vec::new();
        }
        let calls: Vec<ScriptInvocation<'_>> = requests
            .iter()
            .map(|r| join_invocation(period, r))
            .collect();
        let tags = vec![hash_tag(&period.base); calls.len()];
        // Joins are idempotent: a resent join answers the first placement.
        self.pipelined("join_many", &SCRIPTS.join, &calls, &tags, |_| {
            Retry::Idempotent
        })
        .await
        .into_iter()
        .map(|reply| reply.and_then(|r| parse_join(r?)))
        .collect()
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

    pub(super) async fn bulk_enter(
        &self,
        entries: &[BoardEntry<'_>],
    ) -> Vec<Result<Entered, StoreError>> {
        if entries.is_empty() {
            return Vec::new();
        }
        let calls: Vec<ScriptInvocation<'_>> = entries.iter().map(enter_invocation).collect();
        let tags: Vec<&str> = entries.iter().map(|e| hash_tag(&e.bracket.board)).collect();
        self.pipelined("enter_many", &SCRIPTS.enter, &calls, &tags, |_| {
            Retry::Idempotent
        })
        .await
        .into_iter()
        .map(|reply| reply.and_then(|r| parse_enter(r?)))
        .collect()
    }

    pub(super) async fn bulk_snapshots(
        &self,
        players: &[&PlayerKeys],
    ) -> Vec<Result<PlayerSnapshot, StoreError>> {
        if players.is_empty() {
            return Vec::new();
        }
        let calls: Vec<ScriptInvocation<'_>> =
            players.iter().map(|k| snapshot_invocation(k)).collect();
        let tags: Vec<&str> = players.iter().map(|k| hash_tag(&k.base)).collect();
        self.pipelined("player_snapshots", &SCRIPTS.snapshot, &calls, &tags, |_| {
            Retry::Idempotent
        })
        .await
        .into_iter()
        .map(|reply| reply.and_then(|r| parse_snapshot(r?)))
        .collect()
    }

    pub(super) async fn bulk_record_states(
        &self,
        writes: &[StateWrite<'_>],
    ) -> Vec<Result<(), StoreError>> {
        if writes.is_empty() {
            return Vec::new();
        }
        // A write the record format cannot hold is refused alone, as record_state
        // refuses it; the others are sent.
        let sendable: Vec<usize> = (0..writes.len())
            .filter(|&i| check_state_tier(writes[i].state).is_ok())
            .collect();
        let calls: Vec<ScriptInvocation<'_>> = sendable
            .iter()
            .map(|&i| record_state_invocation(&writes[i]))
            .collect();
        let tags: Vec<&str> = sendable
            .iter()
            .map(|&i| hash_tag(&writes[i].player_keys.base))
            .collect();
        // Idempotent: writing the same state again is a no-op.
        let mut replies = self
            .pipelined(
                "record_states",
                &SCRIPTS.record_state,
                &calls,
                &tags,
                |_| Retry::Idempotent,
            )
            .await
            .into_iter();
        writes
            .iter()
            .map(|w| {
                check_state_tier(w.state)?;
                let reply = replies.next().ok_or_else(|| {
                    StoreError::Protocol("record_states: a write got no reply".into())
                })???;
                parse_record_state(reply)
            })
            .collect()
    }
}
