//! One batching layer: concurrent single joins and concurrent single score updates,
//! each gathered into one batch of its bulk path (group commit, as databases do for
//! their logs; the queue itself is [`crate::gather`]).
//!
//! - Joins ([`JoinQueue`], kept by [`Placements`]): a single join on Redis runs four
//!   scripts of about 35 µs of server time in all, most of it fixed per call, while
//!   the bulk path ([`Placements::place_many`]) shares those among a batch's players.
//! - Score updates ([`SubmitQueue`], kept by the [`League`](super::League)): about a
//!   fifth of an update's cost to Redis is per call (reading and dispatching the
//!   request, entering `update.lua`, writing the reply); a batch goes through the
//!   route of [`crate::League::submit_many`], whose updates the store sends as few
//!   `update.lua` calls (`RankingStore::update_many`).
//!
//! A request alone waits for nobody (its batch is itself), so nothing is added to an
//! idle league's latency; under load a request waits for at most the batch before
//! its own. A batch behaves as its requests one by one (that is the bulk paths'
//! contract, which the conformance suite holds both stores to).
//!
//! When a batch ends before answering: a join whose batch was dropped (its leader's
//! caller gave up) places itself on the single path, since every step of a placement
//! is idempotent. An update is not: so a batch of updates runs in a task of its own,
//! to its end, answering every update in it even if the caller that led it stops
//! waiting. Its retry after a failure that may have come after the call ran is what
//! its updates allow together: the store sends a call again only if every update in
//! it carries a request id; otherwise each answers [`StoreError::Unknown`], as a lone
//! update would.
//!
//! Only stores that ask for it gather ([`crate::store::LeagueStore::gathers_joins`],
//! [`crate::store::LeagueStore::gathers_submits`]: on Redis the options
//! `gather_joins` and `gather_submits`, both on by default); the embedded store has
//! no round trips to share.
//!
//! Owns: the queues and who runs which batch. Must not: decide anything a single
//! join or update would decide differently (the batch runs the parts' own bulk paths).

use std::sync::Arc;

use chrono::{DateTime, Utc};
use tokio::sync::oneshot;

use super::placements::{PlaceResult, PlaceWant, Placements};
use super::submit;
use crate::context::normalize_time;
use crate::error::{Error, StoreError};
use crate::gather::{Gather, Turn};
use crate::ranking::{BatchItem, Boards, Submission, SubmitOptions};
use crate::season::calendar::Period;
use crate::store::Store;

/// Batches in flight at once: one in the store while the next gathers and is sent,
/// so the server never waits for the client between two batches.
const BATCHES_IN_FLIGHT: usize = 2;

/// One waiting placement.
struct JoinJob {
    player: String,
    period: Period,
    at: DateTime<Utc>,
    now: DateTime<Utc>,
    cohort: Option<String>,
    answer: oneshot::Sender<PlaceResult>,
}

/// A league's queue of waiting placements.
pub(crate) struct JoinQueue(Gather<JoinJob>);

impl std::fmt::Debug for JoinQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JoinQueue")
    }
}

impl Default for JoinQueue {
    fn default() -> Self {
        JoinQueue(Gather::new(BATCHES_IN_FLIGHT))
    }
}

impl JoinQueue {
    /// Places the player (or finds their placement) in `period`, as
    /// [`Placements::place_one`] does, gathered with concurrent placements into one
    /// batch of the bulk path.
    pub(crate) async fn place<S: Store>(
        &self,
        places: &Placements<S>,
        player: &str,
        period: &Period,
        at: DateTime<Utc>,
        now: DateTime<Utc>,
        cohort: Option<&str>,
    ) -> PlaceResult {
        if let Some(hit) = places.cached(player, period.id) {
            return Ok((hit, None));
        }
        let (answer, answered) = oneshot::channel();
        let job = JoinJob {
            player: player.to_owned(),
            period: *period,
            at,
            now,
            cohort: cohort.map(str::to_owned),
            answer,
        };
        // The futures of the paths not taken by every join (the batch a leader runs,
        // a dropped batch) are boxed: inline, they made every join's future kilobytes
        // larger, and it is moved on each call.
        if let Turn::Lead(_turn, batch) = self.0.enter(job).await {
            Box::pin(place_batch(places, batch)).await;
        }
        match answered.await {
            Ok(result) => result,
            // The batch holding this join was dropped before answering it.
            Err(_) => Box::pin(places.place_one(player, period, at, now, cohort)).await,
        }
    }
}

/// Places a gathered batch and answers each of its joins.
async fn place_batch<S: Store>(places: &Placements<S>, batch: Vec<JoinJob>) {
    // The batch's clock is the latest its joins read: each was checked against its
    // own, and the store checks the time rules again by the clock it is given.
    let Some(now) = batch.iter().map(|j| j.now).max() else {
        return;
    };
    let wants: Vec<PlaceWant<'_>> = batch
        .iter()
        .map(|j| PlaceWant::new(&j.player, j.period, j.at, j.cohort.as_deref()))
        .collect();
    let results = places.place_many(&wants, now).await;
    drop(wants);
    for (job, result) in batch.into_iter().zip(results) {
        // A join whose caller gave up is not waiting for its answer.
        let _ = job.answer.send(result);
    }
}

/// One waiting score update, owned (its caller may go away while its batch runs).
struct SubmitJob {
    item: BatchItem,
    answer: oneshot::Sender<Result<Submission, Error>>,
}

/// A league's queue of waiting score updates.
pub(crate) struct SubmitQueue(Gather<SubmitJob>);

impl std::fmt::Debug for SubmitQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SubmitQueue")
    }
}

impl Default for SubmitQueue {
    fn default() -> Self {
        SubmitQueue(Gather::new(BATCHES_IN_FLIGHT))
    }
}

impl SubmitQueue {
    /// Submits one update, as [`crate::League::submit`] does, gathered with concurrent
    /// ones into one batch of [`crate::League::submit_many`].
    pub(crate) async fn submit<S: Store>(
        &self,
        places: &Arc<Placements<S>>,
        boards: &Arc<Boards<S>>,
        player: &str,
        value: i64,
        options: SubmitOptions,
    ) -> Result<Submission, Error> {
        let at = options.at.map(normalize_time);
        let (answer, answered) = oneshot::channel();
        let job = SubmitJob {
            item: BatchItem::new(player, value).with_options(options),
            answer,
        };
        if let Turn::Lead(turn, batch) = self.0.enter(job).await {
            // The batch runs in a task of its own, so that it runs to its end and
            // answers every update in it even if this caller stops waiting: an update
            // sent and then abandoned mid-call would otherwise leave its batch-mates
            // without an answer.
            let (places, boards) = (places.clone(), boards.clone());
            tokio::spawn(async move {
                let _turn = turn;
                let (items, answers): (Vec<BatchItem>, Vec<_>) =
                    batch.into_iter().map(|j| (j.item, j.answer)).unzip();
                let results = submit::submit_many(&places, &boards, &items).await;
                for (answer, result) in answers.into_iter().zip(results) {
                    // An update whose caller gave up is not waiting for its answer.
                    let _ = answer.send(result);
                }
            });
        }
        answered.await.unwrap_or_else(|_| {
            // The batch's task ended without answering: it panicked, perhaps after
            // the update was sent.
            Err(StoreError::Unknown {
                op: "update",
                source: crate::error::ErrorSource::new(std::io::Error::other(
                    "the batch of gathered updates holding this update stopped before answering",
                )),
                at,
            }
            .into())
        })
    }
}
