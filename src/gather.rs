//! Group commit: concurrent requests gathered into batches.
//!
//! Each request is queued as a job; a few turns (permits) are handed out, and whoever
//! gets a turn while their own job is still queued takes the whole queue and runs it
//! as one batch. A request alone waits for nobody (its batch is itself), so nothing
//! is added to an idle caller's latency; under load a request waits for at most the
//! batch before its own, and the batches grow with the load. Databases do this for
//! their logs; leaguekit does it for Redis round trips and script calls, whose cost
//! is mostly per call: concurrent joins and concurrent score updates, both gathered by
//! the league's batching layer (`league/batching.rs`).
//!
//! This module only decides who runs which batch; running it and answering each job
//! (a oneshot channel in the job, typically) is the caller's.

use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// A queue of jobs and the turns to run them.
pub(crate) struct Gather<J> {
    queue: Mutex<Queue<J>>,
    turns: Arc<Semaphore>,
}

struct Queue<J> {
    jobs: Vec<J>,
    /// The number the next job gets, and how many have been taken into batches:
    /// job `n` is in a batch once `taken > n`.
    pushed: u64,
    taken: u64,
}

/// What a caller does after [`Gather::enter`].
pub(crate) enum Turn<J> {
    /// Run this batch (which holds the caller's own job) and answer every job in it,
    /// holding the permit until it has run: it is what keeps the number of batches in
    /// flight bounded. (`None` only if the turns were closed, which nothing does.)
    Lead(Option<OwnedSemaphorePermit>, Vec<J>),
    /// Another turn took the caller's job into its batch: wait for the answer.
    Taken,
}

impl<J> Gather<J> {
    /// A queue whose batches run at most `in_flight` at once. Two is the useful
    /// number for a remote store: one batch in the store while the next gathers and
    /// is sent, so the server never waits for the client between two batches.
    pub(crate) fn new(in_flight: usize) -> Self {
        Gather {
            queue: Mutex::new(Queue {
                jobs: Vec::new(),
                pushed: 0,
                taken: 0,
            }),
            turns: Arc::new(Semaphore::new(in_flight.max(1))),
        }
    }

    /// Queues `job` and waits for a turn. While it waited, another turn may have
    /// taken the job into a batch: then the caller only waits for its answer, and
    /// leaves its turn to a job still queued (which takes everything queued by then:
    /// the fewer, larger batches are what saves the store's time).
    pub(crate) async fn enter(&self, job: J) -> Turn<J> {
        let number = {
            let mut queue = lock(&self.queue);
            queue.jobs.push(job);
            queue.pushed += 1;
            queue.pushed - 1
        };
        let permit = self.turns.clone().acquire_owned().await.ok();
        let mut queue = lock(&self.queue);
        if queue.taken > number {
            return Turn::Taken;
        }
        queue.taken = queue.pushed;
        Turn::Lead(permit, std::mem::take(&mut queue.jobs))
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Jobs queued while a batch runs are taken together by the next turn, each job is
    /// in exactly one batch, and a job alone is its own batch at once.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_job_is_in_one_batch_and_waiting_jobs_share_one() {
        let gather = Arc::new(Gather::<usize>::new(1));
        // Alone: led at once.
        match gather.enter(7).await {
            Turn::Lead(Some(_), batch) => assert_eq!(batch, vec![7]),
            _ => panic!("a job alone leads its own batch"),
        }
        // Hold the only turn, queue 20 jobs behind it, then release it.
        let held = match gather.enter(0).await {
            Turn::Lead(permit, batch) => {
                assert_eq!(batch, vec![0]);
                permit
            }
            Turn::Taken => panic!("taken"),
        };
        let tasks: Vec<_> = (1..=20)
            .map(|i| {
                let gather = gather.clone();
                tokio::spawn(async move {
                    match gather.enter(i).await {
                        Turn::Lead(_, batch) => batch,
                        Turn::Taken => Vec::new(),
                    }
                })
            })
            .collect();
        // Every job is queued before the turn comes back: 7 and 0 above, then the 20
        // (21 let the last of them queue after the release, a batch of its own).
        while lock(&gather.queue).pushed < 22 {
            tokio::task::yield_now().await;
        }
        drop(held);
        let mut batches = Vec::new();
        for t in tasks {
            let batch = t.await.expect("task");
            if !batch.is_empty() {
                batches.push(batch);
            }
        }
        assert_eq!(
            batches.len(),
            1,
            "one turn took every waiting job: {batches:?}"
        );
        let mut all: Vec<usize> = batches.concat();
        all.sort_unstable();
        assert_eq!(all, (1..=20).collect::<Vec<_>>());
    }
}
