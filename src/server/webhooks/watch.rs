//! What the deliverer looks at: the logs that may hold events a target has not been
//! given yet, found from what was logged, never from "the last closed period".
//!
//! - **The running period and the one before it**, always: joins, scores and
//!   adjustments log into them, and the rollover closes the one before.
//! - **Periods not yet closed**, up to [`UNCLOSED_BACK`] before the running one (a
//!   scheduler that has not caught up yet); older ones are looked at once their close
//!   marks them.
//! - **Marked periods** ([`crate::store::EventStore::mark_periods`]): every write
//!   that logs into an older period marks it first (a rollover's close, however many
//!   periods one run closes; a blocked bracket's retry; a re-settlement), and a
//!   target goes on looking at a marked period until it has delivered every event of
//!   its logs, the period is closed, and the mark's hold has passed; then it records
//!   the period done at that mark (`hook_done.lua`, refused if the period was marked
//!   again meanwhile). A period marked again is looked at again.
//! - **The player buckets' logs** (rewards), every [`BUCKET_SCAN`].
//!
//! A target's **starting point** is the same for every kind of log: with
//! `LEAGUEKIT_WEBHOOK_FROM=now` (the default) the events logged from the moment the
//! target was first seen (by the Redis server's clock, which also stamps the logs'
//! entries), with `start` every event still kept, older periods marked for it when it
//! is first seen. A target not seen for longer than the logs are kept starts anew.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

use super::deliver::{Deliverer, Target};
use crate::store::keys::hook_cursors;
use crate::store::{LogRead, Pos, Store};

/// How often the 16,384 player buckets' logs (rewards) and the dead letters are
/// looked at.
pub(super) const BUCKET_SCAN: Duration = Duration::from_secs(5);
/// How many periods before the running one are looked at while not closed.
pub(super) const UNCLOSED_BACK: u64 = 8;
/// Logs whose heads are read in one pipelined call.
const HEADS_CHUNK: usize = 2048;
/// The most pending (log, target) pairs whose oldest event is read for the lag gauge.
const LAG_SAMPLE: usize = 2048;
/// The most periods marked for a target seen for the first time with `start`.
const BACKFILL_PERIODS: u64 = 10_000;

/// What one look found.
pub(super) struct Look {
    /// (log, target index) pairs with events past the target's cursor.
    pub(super) pending: Vec<(String, usize)>,
    /// Logs looked at.
    pub(super) logs: usize,
    /// Age of the oldest undelivered event found, ms (0 when none).
    pub(super) lag_ms: u64,
}

/// Where a target starts: everything, or from the moment (unix ms) it was first seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartFrom {
    /// Every event still kept (`start`).
    Start,
    /// Events logged from when the target was first seen (`now`).
    Now,
}

impl StartFrom {
    /// The position before the first event a target first seen at `first_ms` gets.
    pub(super) fn cursor(self, first_ms: i64) -> Pos {
        match self {
            StartFrom::Start => Pos::START,
            StartFrom::Now => match u64::try_from(first_ms) {
                Ok(ms) if ms > 0 => Pos {
                    ms: ms - 1,
                    seq: u64::MAX,
                },
                _ => Pos::START,
            },
        }
    }
}

impl<S: Store> Deliverer<S> {
    /// Records this process's targets as seen (when first seen with `start`, marks the
    /// kept periods for them first) and sets where each starts. False if the store
    /// could not be asked: then it is tried again at the next look.
    pub(super) async fn register(&self) -> bool {
        let store = self.league.store();
        let season = self.league.keys().season();
        let Ok(now) = store.now().await else {
            return false;
        };
        let stale = self.cursor_ttl_ms;
        for target in &self.targets {
            if self.config.from == StartFrom::Start {
                let seen = match store.target_seen(&season, &target.tag).await {
                    Ok(s) => s,
                    Err(e) => {
                        tracing::warn!(error = %e, "webhooks: cannot read a target's record");
                        return false;
                    }
                };
                let fresh = seen.is_none_or(|(_, last)| {
                    now.saturating_sub(last) > i64::try_from(stale).unwrap_or(i64::MAX)
                });
                if fresh && !self.backfill().await {
                    return false;
                }
            }
            match store
                .register_target(&season, &target.tag, now, stale)
                .await
            {
                Ok(first) => target.start_at(self.config.from.cursor(first)),
                Err(e) => {
                    tracing::warn!(error = %e, "webhooks: cannot record a target");
                    return false;
                }
            }
        }
        true
    }

    /// Marks the periods up to the running one (at most [`BACKFILL_PERIODS`]), for a
    /// target that starts from every event kept.
    async fn backfill(&self) -> bool {
        let league = &self.league;
        let current = match league.now().await.map(|now| league.period_at(Some(now))) {
            Ok(Ok(p)) => p.id,
            _ => return false,
        };
        let from = current.saturating_sub(BACKFILL_PERIODS - 1).max(1);
        let periods: Vec<u64> = (from..=current).collect();
        match league.context().mark_for_delivery(&periods).await {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!(error = %e, "webhooks: cannot mark the kept periods");
                false
            }
        }
    }

    /// One look: the logs that may hold undelivered events (see the module's docs),
    /// their heads against the targets' cursors, and the periods each target is now
    /// done with, recorded.
    pub(super) async fn look(&self, buckets: bool) -> Look {
        let mut look = Look {
            pending: Vec::new(),
            logs: 0,
            lag_ms: 0,
        };
        let targets: Vec<(usize, &Target)> = self
            .targets
            .iter()
            .enumerate()
            .filter(|(_, t)| t.start().is_some())
            .collect();
        if targets.is_empty() {
            return look;
        }
        let league = &self.league;
        let store = league.store();
        let season = league.keys().season();
        let state = async {
            let now_ms = store.now().await?;
            let current = league
                .period_at(Some(league.now().await.map_err(store_error)?))
                .map_err(|e| store_error(e.into()))?
                .id;
            let closed = store.closed_through(&season).await?;
            let marks = store.period_marks(&season).await?;
            let mut done = Vec::with_capacity(targets.len());
            for (_, t) in &targets {
                done.push(
                    store
                        .periods_done(&season, &t.tag)
                        .await?
                        .into_iter()
                        .collect::<HashMap<u64, i64>>(),
                );
            }
            Ok::<_, crate::error::StoreError>((now_ms, current, closed, marks, done))
        };
        let (now_ms, current, closed, marks, done) = match state.await {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(error = %e, "webhooks: cannot read what to look at");
                return look;
            }
        };

        // The periods to look at, and per marked period the targets not done with it.
        let mut periods: BTreeSet<u64> = BTreeSet::new();
        periods.insert(current);
        if current > 1 {
            periods.insert(current - 1);
        }
        let unclosed_from = (closed + 1)
            .max(current.saturating_sub(UNCLOSED_BACK))
            .max(1);
        periods.extend(unclosed_from..=current);
        let mut open: Vec<(u64, i64, Vec<usize>)> = Vec::new();
        for (period, mark) in marks {
            let undone: Vec<usize> = (0..targets.len())
                .filter(|k| done[*k].get(&period) != Some(&mark))
                .collect();
            if !undone.is_empty() {
                periods.insert(period);
                open.push((period, mark, undone));
            }
        }

        let mut logs: Vec<(String, Option<u64>)> = Vec::new();
        let mut listed: BTreeSet<u64> = BTreeSet::new();
        {
            let mut cache = self.closed_logs.lock().unwrap_or_else(|e| e.into_inner());
            cache.retain(|p, _| periods.contains(p));
        }
        for &period in &periods {
            let cached = self
                .closed_logs
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(&period)
                .cloned();
            let found = match cached {
                Some(l) => l,
                None => match league.events().logs_of_period(period).await {
                    Ok(l) => {
                        // A closed period's brackets are all opened: its list stays.
                        if period <= closed {
                            self.closed_logs
                                .lock()
                                .unwrap_or_else(|e| e.into_inner())
                                .insert(period, l.clone());
                        }
                        l
                    }
                    Err(e) => {
                        tracing::warn!(period, error = %e, "webhooks: cannot list a period's logs");
                        continue;
                    }
                },
            };
            listed.insert(period);
            logs.extend(found.into_iter().map(|l| (l, Some(period))));
        }
        if buckets {
            logs.extend(league.events().bucket_logs().into_iter().map(|l| (l, None)));
        }
        look.logs = logs.len();

        // Heads against cursors; which (period, target) still has events to deliver.
        let tags: Vec<String> = targets.iter().map(|(_, t)| t.tag.clone()).collect();
        let starts: Vec<Pos> = targets
            .iter()
            .map(|(_, t)| t.start().unwrap_or(Pos::START))
            .collect();
        let mut undrained: BTreeMap<u64, Vec<bool>> = BTreeMap::new();
        let mut behind: Vec<(String, usize, Pos)> = Vec::new();
        for chunk in logs.chunks(HEADS_CHUNK) {
            let cursors: Vec<String> = chunk.iter().map(|(l, _)| hook_cursors(l)).collect();
            let pairs: Vec<(&str, &str)> = chunk
                .iter()
                .zip(&cursors)
                .map(|((l, _), c)| (l.as_str(), c.as_str()))
                .collect();
            let heads = store.log_heads(&pairs, &tags).await;
            for ((log, period), head) in chunk.iter().zip(heads) {
                let head = match head {
                    Ok(h) => h,
                    Err(e) => {
                        tracing::warn!(log, error = %e, "webhooks: cannot read a log's head");
                        if let Some(p) = period {
                            listed.remove(p);
                        }
                        continue;
                    }
                };
                for (k, at) in head.cursors.iter().enumerate() {
                    let at = (*at).max(starts[k]);
                    if head.last > at {
                        look.pending.push((log.clone(), targets[k].0));
                        behind.push((log.clone(), k, at));
                        if let Some(p) = period {
                            undrained
                                .entry(*p)
                                .or_insert_with(|| vec![false; targets.len()])[k] = true;
                        }
                    }
                }
            }
        }

        // Marked periods now done: closed, past the mark's hold, every log listed and
        // read, nothing left for the target.
        for (period, mark, undone) in open {
            if period > closed || now_ms <= mark || !listed.contains(&period) {
                continue;
            }
            for k in undone {
                if undrained.get(&period).is_some_and(|u| u[k]) {
                    continue;
                }
                if let Err(e) = store
                    .record_period_done(&season, &tags[k], period, mark, self.cursor_ttl_ms)
                    .await
                {
                    tracing::warn!(period, error = %e, "webhooks: cannot record a period done");
                }
            }
        }
        if buckets {
            let before = now_ms.saturating_sub(i64::try_from(self.cursor_ttl_ms).unwrap_or(0));
            if let Err(e) = store.prune_marks(&season, before, &tags).await {
                tracing::warn!(error = %e, "webhooks: cannot prune the period marks");
            }
        }

        // The lag: the oldest first undelivered event among the pairs behind.
        let reads: Vec<LogRead<'_>> = behind
            .iter()
            .take(LAG_SAMPLE)
            .map(|(log, _, at)| LogRead {
                log,
                after: *at,
                limit: 1,
            })
            .collect();
        let oldest = league
            .events()
            .read(&reads)
            .await
            .into_iter()
            .filter_map(|r| r.ok()?.first().map(|e| e.pos.ms))
            .min();
        if let Some(ms) = oldest {
            look.lag_ms = u64::try_from(now_ms).unwrap_or(0).saturating_sub(ms);
        }
        look
    }
}

fn store_error(e: crate::error::Error) -> crate::error::StoreError {
    match e {
        crate::error::Error::Store(s) => s,
        other => crate::error::StoreError::Protocol(other.to_string()),
    }
}
