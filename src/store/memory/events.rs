//! The event logs in memory: one queue per log key, with the Redis stream's rules
//! (positions `ms-seq` from the store's clock, increasing; at most the cap kept; the
//! log gone `keep` after its last event).

use std::collections::VecDeque;

use super::{Data, MemoryStore};
use crate::error::StoreError;
use crate::store::keys::{SeasonKeys, hook_marks};
use crate::store::{Appends, EventStore, LogEntry, LogRead, Pos};

/// One log.
#[derive(Debug, Default)]
pub(super) struct LogData {
    entries: VecDeque<LogEntry>,
    last: Pos,
    /// Unix ms after which the log is gone.
    expire_at: i64,
}

impl LogData {
    /// Whether the log still lives at `now_ms` (unix ms).
    pub(super) fn live(&self, now_ms: i64) -> bool {
        self.expire_at > now_ms
    }
}

impl MemoryStore {
    /// Appends `appends`' bodies to the log `log`, as `events.lua` does: called inside
    /// the critical section of the write that makes them.
    pub(super) fn append_events(&self, data: &mut Data, log: &str, appends: &Appends<'_>) {
        if appends.bodies.is_empty() {
            return;
        }
        let now = self.clock.now().timestamp_millis();
        let entry = data.logs.entry(log.to_owned()).or_default();
        if entry.expire_at <= now {
            *entry = LogData::default();
        }
        for body in appends.bodies {
            let ms = now.max(0) as u64;
            entry.last = if ms > entry.last.ms {
                Pos { ms, seq: 0 }
            } else {
                Pos {
                    ms: entry.last.ms,
                    seq: entry.last.seq + 1,
                }
            };
            entry.entries.push_back(LogEntry {
                pos: entry.last,
                body: body.clone(),
            });
        }
        while entry.entries.len() > appends.spec.cap as usize {
            entry.entries.pop_front();
        }
        entry.expire_at = now.saturating_add(appends.spec.keep_secs as i64 * 1000);
    }

    /// The position of log `log`'s last event ([`Pos::START`] if it is empty or gone).
    pub(super) fn log_last(&self, data: &Data, log: &str, now: i64) -> Pos {
        match data.logs.get(log) {
            Some(l) if l.expire_at > now => l.entries.back().map_or(Pos::START, |e| e.pos),
            _ => Pos::START,
        }
    }
}

impl EventStore for MemoryStore {
    async fn read_logs(&self, reads: &[LogRead<'_>]) -> Vec<Result<Vec<LogEntry>, StoreError>> {
        let now = self.clock.now().timestamp_millis();
        let data = self.data();
        reads
            .iter()
            .map(|r| {
                Ok(match data.logs.get(r.log) {
                    Some(log) if log.live(now) => log
                        .entries
                        .iter()
                        .filter(|e| e.pos > r.after)
                        .take(r.limit)
                        .cloned()
                        .collect(),
                    _ => Vec::new(),
                })
            })
            .collect()
    }

    async fn log_gap(&self, log: &str, after: Pos) -> Result<Option<Pos>, StoreError> {
        let now = self.clock.now().timestamp_millis();
        let data = self.data();
        let Some(l) = data.logs.get(log).filter(|l| l.live(now)) else {
            return Ok(None);
        };
        let Some(first) = l.entries.front().map(|e| e.pos) else {
            return Ok(None);
        };
        // Trimmed from its head: as on Redis, a gap when the first entry is past the
        // position right after `after`.
        Ok((first.before() > after).then_some(first))
    }

    async fn mark_periods(
        &self,
        season: &SeasonKeys,
        periods: &[u64],
        until_ms: i64,
    ) -> Result<(), StoreError> {
        self.data()
            .hooks
            .mark(&hook_marks(season), periods, until_ms);
        Ok(())
    }
}
