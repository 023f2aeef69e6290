//! Concurrent single placements gathered into batches of the bulk path.
//!
//! A single join on Redis runs four scripts of about 35 µs of server time in all, most
//! of it fixed per call (entering a script, reading the clock, each call's commands
//! on the period's and the bracket's keys), while the bulk path ([`super::bulk`])
//! shares those among a batch's players. When many tasks join at once (a game
//! server's request handlers), each waiting join is put in a queue, and whoever's turn
//! comes takes the whole queue and places it as one batch with
//! [`Placements::place_many`]: group commit, as databases do for their logs. A join
//! alone waits for nobody (its batch is itself), so nothing is added to an idle
//! league's latency; under load a join waits for at most the batch before its own.
//!
//! A batch behaves as its joins one by one (that is the bulk path's contract, which
//! the conformance suite holds both stores to). A join whose batch is dropped before
//! it answered (its leader's caller gave up) places itself on the single path:
//! every step of a placement is idempotent, so whatever the dropped batch did is
//! completed, never repeated.
//!
//! Only stores that ask for it gather ([`crate::store::LeagueStore::gathers_joins`]):
//! the embedded store has no round trips to share.

use chrono::{DateTime, Utc};
use tokio::sync::oneshot;

use super::Placements;
use super::bulk::{PlaceResult, PlaceWant};
use crate::gather::{Gather, Turn};
use crate::season::calendar::Period;
use crate::store::Store;

/// Batches in flight at once: one in the store while the next gathers and is sent,
/// so the server never waits for the client between two batches.
const BATCHES_IN_FLIGHT: usize = 2;

/// One waiting placement.
struct Job {
    player: String,
    period: Period,
    at: DateTime<Utc>,
    now: DateTime<Utc>,
    cohort: Option<String>,
    answer: oneshot::Sender<PlaceResult>,
}

/// A league's queue of waiting placements.
pub(crate) struct Gathered(Gather<Job>);

impl std::fmt::Debug for Gathered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Gathered")
    }
}

impl Default for Gathered {
    fn default() -> Self {
        Gathered(Gather::new(BATCHES_IN_FLIGHT))
    }
}

impl<S: Store> Placements<S> {
    /// Places the player (or finds their placement) in `period`, as
    /// [`Placements::place_one`] does, gathered with concurrent placements into one batch
    /// of the bulk path where the store asks for it.
    pub(crate) async fn place(
        &self,
        player: &str,
        period: &Period,
        at: DateTime<Utc>,
        now: DateTime<Utc>,
        cohort: Option<&str>,
    ) -> PlaceResult {
        // The futures of the paths not taken by every join (a store that does not
        // gather, the batch a leader runs, a dropped batch) are boxed: inline, they
        // made every join's future kilobytes larger, and it is moved on each call.
        if !self.ctx.store().gathers_joins() {
            // place_one looks in the cache itself.
            return Box::pin(self.place_one(player, period, at, now, cohort)).await;
        }
        if let Some(hit) = self.cached(player, period.id) {
            return Ok((hit, None));
        }
        let (answer, answered) = oneshot::channel();
        let job = Job {
            player: player.to_owned(),
            period: *period,
            at,
            now,
            cohort: cohort.map(str::to_owned),
            answer,
        };
        if let Turn::Lead(_turn, batch) = self.gathered.0.enter(job).await {
            Box::pin(self.place_batch(batch)).await;
        }
        match answered.await {
            Ok(result) => result,
            // The batch holding this join was dropped before answering it.
            Err(_) => Box::pin(self.place_one(player, period, at, now, cohort)).await,
        }
    }

    /// Places a gathered batch and answers each of its joins.
    async fn place_batch(&self, batch: Vec<Job>) {
        // The batch's clock is the latest its joins read: each was checked against its
        // own, and the store checks the time rules again by the clock it is given.
        let Some(now) = batch.iter().map(|j| j.now).max() else {
            return;
        };
        let wants: Vec<PlaceWant<'_>> = batch
            .iter()
            .map(|j| PlaceWant::new(&j.player, j.period, j.at, j.cohort.as_deref()))
            .collect();
        let results = self.place_many(&wants, now).await;
        drop(wants);
        for (job, result) in batch.into_iter().zip(results) {
            // A join whose caller gave up is not waiting for its answer.
            let _ = job.answer.send(result);
        }
    }
}
