//! The scheduler: wakes up at period boundaries and runs the rollover.
//!
//! Boundaries come from the season's [`crate::Calendar`] (chrono-tz, DST-correct);
//! tokio-cron-scheduler is used only to wake up, with one-shot jobs at the computed
//! instant. Its own time-zone jobs are not used: they fix the UTC offset when the job
//! is created and so drift by an hour across a DST change.
//!
//! Correctness never depends on a wake-up firing: every run closes *every* ended period
//! not yet closed (so boundaries missed while all processes were down are caught up at
//! start), a failed run is retried at the next tick instead of being dropped, and a
//! periodic safety tick covers lost wake-ups and clock jumps. Any number of processes
//! may run a scheduler; the rollover's bracket leases share the work between them and
//! its idempotent steps keep rewards exactly-once.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use futures::future::BoxFuture;
use tokio::sync::Mutex;
use tokio_cron_scheduler::{Job, JobScheduler, JobSchedulerError};
use tracing::{error, info, warn};

use crate::context::clock::TRAVEL_REFRESH;
use crate::rollover::RolloverReport;

/// Options of a [`Scheduler`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SchedulerOptions {
    /// How often to check for ended periods besides the boundary wake-ups.
    pub safety_tick: Duration,
    /// How long after a boundary to wake (lets late events of the period arrive).
    pub grace: Duration,
}

impl Default for SchedulerOptions {
    fn default() -> Self {
        Self {
            safety_tick: Duration::from_secs(60),
            grace: Duration::from_secs(1),
        }
    }
}

impl SchedulerOptions {
    /// Sets the safety tick.
    pub fn safety_tick(mut self, every: Duration) -> Self {
        self.safety_tick = every;
        self
    }

    /// Sets the grace after a boundary.
    pub fn grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }
}

/// A scheduler error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SchedulerError {
    /// tokio-cron-scheduler failed.
    #[error("scheduler: {0}")]
    Jobs(#[from] JobSchedulerError),
    /// The catch-up rollover at start failed.
    #[error("catch-up rollover failed: {0}")]
    Rollover(#[from] crate::Error),
}

/// Runs rollovers at period boundaries in the background. Dropping it does not stop
/// it; call [`Scheduler::shutdown`].
pub struct Scheduler {
    jobs: JobScheduler,
}

impl std::fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scheduler").finish_non_exhaustive()
    }
}

/// What a [`Scheduler`] runs: a league's rollover and its clock. [`crate::League`]
/// is one; the scheduler needs nothing else of it.
pub trait Scheduled: Send + Sync + 'static {
    /// Closes every period that may be closed by the league clock (the rollover with
    /// default options, [`crate::League::rollover`]).
    fn roll_over(&self) -> BoxFuture<'_, Result<RolloverReport, crate::Error>>;

    /// The league clock's now.
    fn league_now(&self) -> BoxFuture<'_, Result<DateTime<Utc>, crate::Error>>;

    /// When the next period to become closable may close, seen at `now`: the end of
    /// the period that contained `now - max_skew`, plus the skew.
    fn next_close(&self, now: DateTime<Utc>) -> DateTime<Utc>;

    /// Runs after each rollover: refreshes what is reported of the league (the
    /// players-per-tier gauge).
    fn after_rollover(&self) -> BoxFuture<'_, ()>;

    /// Whether the league clock is a staging clock that operators move
    /// (`[clock] travel = true`): then the scheduler looks at the clock every
    /// [`TRAVEL_REFRESH`] instead of sleeping until the next boundary.
    fn travels(&self) -> bool {
        false
    }
}

/// Shared by the jobs of one scheduler: one rollover at a time per process.
struct Runner<L: Scheduled> {
    league: Arc<L>,
    running: Mutex<()>,
}

impl<L: Scheduled> Runner<L> {
    async fn run(&self, why: &'static str) -> Result<RolloverReport, crate::Error> {
        let _one = self.running.lock().await;
        let report = on_own_thread(self.league.clone()).await?;
        self.league.after_rollover().await;
        for p in &report.closed {
            info!(
                why,
                period = p.period,
                brackets = p.brackets,
                players = p.totals.players,
                promoted = p.totals.promoted,
                demoted = p.totals.demoted,
                rewards = p.totals.rewards,
                "period closed"
            );
        }
        Ok(report)
    }

    /// Time until the current period may close (its end plus `[clock] max_skew`, by
    /// the league clock) plus grace, and that instant by the league clock. With a
    /// staging clock, at most [`TRAVEL_REFRESH`]: an operator may move the clock
    /// past the boundary at any moment.
    async fn until_next_boundary(&self, grace: Duration) -> (Duration, Option<DateTime<Utc>>) {
        // Without the league clock (store down), wake at the safety tick's pace.
        let now = match self.league.league_now().await {
            Ok(now) => now,
            Err(_) if self.league.travels() => return (TRAVEL_REFRESH, None),
            Err(_) => return (Duration::from_secs(60), None),
        };
        let next = self.league.next_close(now);
        let wait = (next - now).to_std().unwrap_or_default() + grace;
        if self.league.travels() {
            return (wait.min(TRAVEL_REFRESH), Some(next));
        }
        (wait, Some(next))
    }

    /// Whether a wake-up planned for `next` should run a rollover: always on a clock
    /// that is not moved by hand; with a staging clock, once the league clock has
    /// reached `next` (the wake-ups in between only look at the clock).
    async fn due(&self, next: Option<DateTime<Utc>>) -> bool {
        if !self.league.travels() {
            return true;
        }
        match (next, self.league.league_now().await) {
            (Some(next), Ok(now)) => now >= next,
            _ => true,
        }
    }
}

fn schedule_next<L: Scheduled>(
    runner: Arc<Runner<L>>,
    jobs: JobScheduler,
    grace: Duration,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
    Box::pin(async move {
        let (wait, next) = runner.until_next_boundary(grace).await;
        let (r, j) = (runner.clone(), jobs.clone());
        let job = Job::new_one_shot_async(wait, move |_id, _lock| {
            let (r, j) = (r.clone(), j.clone());
            Box::pin(async move {
                if r.due(next).await
                    && let Err(e) = r.run("boundary").await
                {
                    error!(error = %e, "rollover at boundary failed; the safety tick retries it");
                }
                schedule_next(r, j, grace).await;
            })
        });
        match job {
            Ok(job) => {
                if let Err(e) = jobs.add(job).await {
                    warn!(error = %e, "cannot schedule the next boundary; relying on the safety tick");
                }
            }
            Err(e) => {
                warn!(error = %e, "cannot schedule the next boundary; relying on the safety tick")
            }
        }
    })
}

impl Scheduler {
    /// Catches up every ended period now, then keeps closing periods as they end.
    pub async fn start<L: Scheduled>(
        league: Arc<L>,
        options: SchedulerOptions,
    ) -> Result<(Scheduler, RolloverReport), SchedulerError> {
        let runner = Arc::new(Runner {
            league,
            running: Mutex::new(()),
        });
        let caught_up = runner.run("start").await?;
        let jobs = JobScheduler::new().await?;
        let r = runner.clone();
        jobs.add(Job::new_repeated_async(
            options.safety_tick,
            move |_id, _lock| {
                let r = r.clone();
                Box::pin(async move {
                    if let Err(e) = r.run("safety tick").await {
                        error!(error = %e, "rollover failed; retrying at the next tick");
                    }
                })
            },
        )?)
        .await?;
        schedule_next(runner, jobs.clone(), options.grace).await;
        jobs.start().await?;
        Ok((Scheduler { jobs }, caught_up))
    }

    /// Stops the scheduler. A rollover in progress is abandoned where it stands; the
    /// next run (in any process) finishes it.
    pub async fn shutdown(mut self) -> Result<(), SchedulerError> {
        self.jobs.shutdown().await?;
        Ok(())
    }
}

/// Runs a rollover on a thread of its own when the runtime has worker threads, the
/// way `leaguekit rollover` (and the benchmark) runs it from `main`.
///
/// Why: a rollover closes 32 brackets at a time inside one task, and each close is a
/// few round trips whose replies the connection's tasks deliver. In a task spawned on
/// the workers it shares them with those connection tasks, and every reply became a
/// hand-off between the two workers: `bench_rollover` at 1,000,000 players, 2 cores,
/// measured 4.24 and 3.64 s (the client's CPU 3.7 and 3.1 s) in a spawned task against
/// 2.74 and 2.33 s (2.0 and 1.6 s) from `main`, and 3.03 and 2.30 s (1.9 and 1.5 s) on a
/// blocking-pool thread driving it with `Handle::block_on`. On a current-thread
/// runtime there are no workers to share, and `Handle::block_on` could not drive the
/// I/O from another thread: the rollover runs in place.
async fn on_own_thread<L: Scheduled>(league: Arc<L>) -> Result<RolloverReport, crate::Error> {
    use tokio::runtime::{Handle, RuntimeFlavor};
    let handle = Handle::current();
    if handle.runtime_flavor() != RuntimeFlavor::MultiThread {
        return league.roll_over().await;
    }
    let run = tokio::task::spawn_blocking(move || {
        handle.block_on(async move { league.roll_over().await })
    });
    match run.await {
        Ok(report) => report,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        // Only a runtime shutting down cancels a blocking task: the rollover may have
        // closed some brackets; the next run finishes it.
        Err(e) => Err(crate::error::StoreError::Unknown {
            op: "rollover",
            source: crate::error::ErrorSource::new(std::io::Error::new(
                std::io::ErrorKind::Interrupted,
                format!("the runtime shut down during the rollover: {e}"),
            )),
            at: None,
        }
        .into()),
    }
}
