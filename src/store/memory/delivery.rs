//! Webhook delivery's leases, cursors and dead letters in memory, with the Redis
//! implementation's rules (a lease expires after its time to live; a cursor moves
//! only forward and only for the lease's holder).

use std::collections::{BTreeMap, HashMap};

use super::MemoryStore;
use crate::error::StoreError;
use crate::store::keys::{SeasonKeys, hook_dead, hook_done, hook_marks, hook_targets};
use crate::store::{DeadBounds, DeadLetter, DeliveryStore, LogHead, Pos, url_tag};

/// Everything of webhook delivery.
#[derive(Debug, Default)]
pub(super) struct HookData {
    /// lease key → (owner, expires at unix ms).
    leases: HashMap<String, (String, i64)>,
    /// cursor hash key → (target → position, expires at unix ms).
    cursors: HashMap<String, (HashMap<String, Pos>, i64)>,
    /// dead-letter hash key → letter key → record.
    dead: HashMap<String, BTreeMap<String, String>>,
    /// period-marks hash key → period → mark.
    pub(super) marks: HashMap<String, BTreeMap<u64, i64>>,
    /// done hash key → (period → mark, expires at unix ms).
    done: HashMap<String, (BTreeMap<u64, i64>, i64)>,
    /// targets hash key → target → (first seen, last seen).
    targets: HashMap<String, HashMap<String, (i64, i64)>>,
}

impl HookData {
    /// Marks `periods` until `until_ms` in the hash `key`, keeping larger marks.
    pub(super) fn mark(&mut self, key: &str, periods: &[u64], until_ms: i64) {
        let marks = self.marks.entry(key.to_owned()).or_default();
        for p in periods {
            let at = marks.entry(*p).or_insert(until_ms);
            *at = (*at).max(until_ms);
        }
    }
}

impl DeliveryStore for MemoryStore {
    async fn take_lease(&self, lease: &str, owner: &str, ttl_ms: u64) -> Result<bool, StoreError> {
        let now = self.clock.now().timestamp_millis();
        let mut data = self.data();
        let until = now.saturating_add(i64::try_from(ttl_ms).unwrap_or(i64::MAX));
        match data.hooks.leases.get_mut(lease) {
            Some((held, at)) if *at > now && held != owner => Ok(false),
            Some(entry) => {
                *entry = (owner.to_owned(), until);
                Ok(true)
            }
            None => {
                data.hooks
                    .leases
                    .insert(lease.to_owned(), (owner.to_owned(), until));
                Ok(true)
            }
        }
    }

    async fn drop_lease(&self, lease: &str, owner: &str) -> Result<(), StoreError> {
        let mut data = self.data();
        if data
            .hooks
            .leases
            .get(lease)
            .is_some_and(|(o, _)| o == owner)
        {
            data.hooks.leases.remove(lease);
        }
        Ok(())
    }

    async fn log_heads(
        &self,
        logs: &[(&str, &str)],
        targets: &[String],
    ) -> Vec<Result<LogHead, StoreError>> {
        let now = self.clock.now().timestamp_millis();
        let data = self.data();
        logs.iter()
            .map(|(log, cursors)| {
                let last = self.log_last(&data, log, now);
                let held = data.hooks.cursors.get(*cursors).filter(|(_, at)| *at > now);
                let cursors = targets
                    .iter()
                    .map(|t| {
                        held.and_then(|(m, _)| m.get(t).copied())
                            .unwrap_or(Pos::START)
                    })
                    .collect();
                Ok(LogHead { last, cursors })
            })
            .collect()
    }

    async fn advance_cursor(
        &self,
        lease: &str,
        owner: &str,
        cursors: &str,
        target: &str,
        to: Pos,
        ttl_ms: u64,
    ) -> Result<bool, StoreError> {
        let now = self.clock.now().timestamp_millis();
        let mut data = self.data();
        let holds = data
            .hooks
            .leases
            .get(lease)
            .is_some_and(|(o, at)| o == owner && *at > now);
        if !holds {
            return Ok(false);
        }
        let entry = data.hooks.cursors.entry(cursors.to_owned()).or_default();
        if entry.1 <= now {
            entry.0.clear();
        }
        let at = entry.0.entry(target.to_owned()).or_default();
        if to > *at {
            *at = to;
        }
        entry.1 = now.saturating_add(i64::try_from(ttl_ms).unwrap_or(i64::MAX));
        Ok(true)
    }

    async fn period_marks(&self, season: &SeasonKeys) -> Result<Vec<(u64, i64)>, StoreError> {
        let data = self.data();
        Ok(data
            .hooks
            .marks
            .get(&hook_marks(season))
            .map(|m| m.iter().map(|(p, at)| (*p, *at)).collect())
            .unwrap_or_default())
    }

    async fn periods_done(
        &self,
        season: &SeasonKeys,
        target: &str,
    ) -> Result<Vec<(u64, i64)>, StoreError> {
        let now = self.clock.now().timestamp_millis();
        let data = self.data();
        Ok(data
            .hooks
            .done
            .get(&hook_done(season, target))
            .filter(|(_, at)| *at > now)
            .map(|(m, _)| m.iter().map(|(p, at)| (*p, *at)).collect())
            .unwrap_or_default())
    }

    async fn record_period_done(
        &self,
        season: &SeasonKeys,
        target: &str,
        period: u64,
        mark: i64,
        ttl_ms: u64,
    ) -> Result<bool, StoreError> {
        let now = self.clock.now().timestamp_millis();
        let mut data = self.data();
        let current = data
            .hooks
            .marks
            .get(&hook_marks(season))
            .and_then(|m| m.get(&period).copied());
        if current != Some(mark) {
            return Ok(false);
        }
        let entry = data
            .hooks
            .done
            .entry(hook_done(season, target))
            .or_default();
        if entry.1 <= now {
            entry.0.clear();
        }
        entry.0.insert(period, mark);
        entry.1 = now.saturating_add(i64::try_from(ttl_ms).unwrap_or(i64::MAX));
        Ok(true)
    }

    async fn prune_marks(
        &self,
        season: &SeasonKeys,
        before_ms: i64,
        targets: &[String],
    ) -> Result<(), StoreError> {
        let mut data = self.data();
        let Some(marks) = data.hooks.marks.get_mut(&hook_marks(season)) else {
            return Ok(());
        };
        let old: Vec<u64> = marks
            .iter()
            .filter(|(_, at)| **at < before_ms)
            .map(|(p, _)| *p)
            .collect();
        for p in &old {
            marks.remove(p);
        }
        for t in targets {
            if let Some((done, _)) = data.hooks.done.get_mut(&hook_done(season, t)) {
                for p in &old {
                    done.remove(p);
                }
            }
        }
        Ok(())
    }

    async fn target_seen(
        &self,
        season: &SeasonKeys,
        target: &str,
    ) -> Result<Option<(i64, i64)>, StoreError> {
        let data = self.data();
        Ok(data
            .hooks
            .targets
            .get(&hook_targets(season))
            .and_then(|m| m.get(target).copied()))
    }

    async fn register_target(
        &self,
        season: &SeasonKeys,
        target: &str,
        now_ms: i64,
        stale_ms: u64,
    ) -> Result<i64, StoreError> {
        let mut data = self.data();
        let seen = data.hooks.targets.entry(hook_targets(season)).or_default();
        let stale = i64::try_from(stale_ms).unwrap_or(i64::MAX);
        let first = match seen.get(target) {
            Some((first, last)) if now_ms.saturating_sub(*last) <= stale => *first,
            _ => now_ms,
        };
        seen.insert(target.to_owned(), (first, now_ms));
        Ok(first)
    }

    async fn put_dead(
        &self,
        season: &SeasonKeys,
        letter: &DeadLetter,
        bounds: DeadBounds,
    ) -> Result<u64, StoreError> {
        let mut data = self.data();
        let all = data.hooks.dead.entry(hook_dead(season)).or_default();
        all.insert(letter.key(), letter.to_json());
        let tag = url_tag(&letter.url);
        let mut mine: Vec<(i64, String)> = all
            .iter()
            .filter_map(|(k, r)| {
                let l = DeadLetter::from_json(r)?;
                (url_tag(&l.url) == tag).then(|| (l.at_ms, k.clone()))
            })
            .collect();
        mine.sort();
        let mut dropped = 0;
        let mut kept = Vec::new();
        for (at, key) in mine {
            if at < bounds.before_ms {
                all.remove(&key);
            } else {
                kept.push(key);
            }
        }
        let over = (kept.len() as u64).saturating_sub(bounds.max_per_url);
        for key in kept
            .into_iter()
            .take(usize::try_from(over).unwrap_or(usize::MAX))
        {
            all.remove(&key);
            dropped += 1;
        }
        Ok(dropped)
    }

    async fn dead_letters(
        &self,
        season: &SeasonKeys,
        after: Option<(i64, &str)>,
        limit: usize,
    ) -> Result<Vec<DeadLetter>, StoreError> {
        let data = self.data();
        let mut all: Vec<DeadLetter> = data
            .hooks
            .dead
            .get(&hook_dead(season))
            .map(|m| {
                m.values()
                    .filter_map(|r| DeadLetter::from_json(r))
                    .collect()
            })
            .unwrap_or_default();
        all.sort_by_key(|l| (l.at_ms, l.key()));
        Ok(all
            .into_iter()
            .filter(|l| after.is_none_or(|(ms, key)| (l.at_ms, l.key().as_str()) > (ms, key)))
            .take(limit)
            .collect())
    }

    async fn dead_of(&self, season: &SeasonKeys, id: &str) -> Result<Vec<DeadLetter>, StoreError> {
        let data = self.data();
        let mut out: Vec<DeadLetter> = data
            .hooks
            .dead
            .get(&hook_dead(season))
            .map(|m| {
                m.values()
                    .filter_map(|r| DeadLetter::from_json(r))
                    .filter(|l| l.id == id)
                    .collect()
            })
            .unwrap_or_default();
        out.sort_by_key(|l| (l.at_ms, l.key()));
        Ok(out)
    }

    async fn marked_dead(
        &self,
        season: &SeasonKeys,
        limit: usize,
    ) -> Result<Vec<DeadLetter>, StoreError> {
        let data = self.data();
        Ok(data
            .hooks
            .dead
            .get(&hook_dead(season))
            .map(|m| {
                m.values()
                    .filter_map(|r| DeadLetter::from_json(r))
                    .filter(|l| l.replay)
                    .take(limit)
                    .collect()
            })
            .unwrap_or_default())
    }

    async fn remove_dead(
        &self,
        season: &SeasonKeys,
        letter: &DeadLetter,
        record: &str,
    ) -> Result<(), StoreError> {
        let mut data = self.data();
        let key = letter.key();
        if let Some(m) = data.hooks.dead.get_mut(&hook_dead(season))
            && m.get(&key).is_some_and(|r| r == record)
        {
            m.remove(&key);
        }
        Ok(())
    }

    async fn prune_dead(
        &self,
        season: &SeasonKeys,
        before_ms: i64,
        _targets: &[String],
    ) -> Result<u64, StoreError> {
        let mut data = self.data();
        let Some(m) = data.hooks.dead.get_mut(&hook_dead(season)) else {
            return Ok(0);
        };
        let old: Vec<String> = m
            .iter()
            .filter(|(_, r)| DeadLetter::from_json(r).is_some_and(|l| l.at_ms < before_ms))
            .map(|(k, _)| k.clone())
            .take(1000)
            .collect();
        for k in &old {
            m.remove(k);
        }
        Ok(old.len() as u64)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use chrono::{DateTime, Utc};

    use super::*;
    use crate::ManualClock;
    use crate::store::keys::Keys;

    #[tokio::test]
    async fn leases_expire_and_cursors_move_forward_for_their_holder_only() {
        let clock = ManualClock::new(DateTime::<Utc>::from_timestamp(1_767_225_600, 0).unwrap());
        let store = MemoryStore::with_clock(Arc::new(clock.clone()));
        let (lease, cursors) = ("l", "c");
        assert!(store.take_lease(lease, "a", 1000).await.unwrap());
        assert!(!store.take_lease(lease, "b", 1000).await.unwrap());
        assert!(store.take_lease(lease, "a", 1000).await.unwrap());
        let at = |ms| Pos { ms, seq: 0 };
        assert!(
            !store
                .advance_cursor(lease, "b", cursors, "t", at(5), 10_000)
                .await
                .unwrap()
        );
        assert!(
            store
                .advance_cursor(lease, "a", cursors, "t", at(5), 10_000)
                .await
                .unwrap()
        );
        // Never back.
        assert!(
            store
                .advance_cursor(lease, "a", cursors, "t", at(3), 10_000)
                .await
                .unwrap()
        );
        let heads = store
            .log_heads(&[("log", cursors)], &["t".into(), "u".into()])
            .await;
        assert_eq!(
            heads[0].as_ref().unwrap(),
            &LogHead {
                last: Pos::START,
                cursors: vec![at(5), Pos::START]
            }
        );
        // A lease not renewed expires; another takes it and the old holder is refused.
        clock.advance(chrono::Duration::milliseconds(1001));
        assert!(store.take_lease(lease, "b", 1000).await.unwrap());
        assert!(
            !store
                .advance_cursor(lease, "a", cursors, "t", at(9), 10_000)
                .await
                .unwrap()
        );
        store.drop_lease(lease, "a").await.unwrap();
        assert!(!store.take_lease(lease, "a", 1000).await.unwrap());
        store.drop_lease(lease, "b").await.unwrap();
        assert!(store.take_lease(lease, "a", 1000).await.unwrap());

        // Dead letters: replaced by key, removed only as read.
        let season = Keys::new("lk", "s").season();
        let letter = DeadLetter {
            id: "p1@1-0".into(),
            url: "http://x/".into(),
            event: "{}".into(),
            attempts: 8,
            error: "HTTP 500".into(),
            at_ms: 1,
            replay: false,
        };
        store
            .put_dead(&season, &letter, DeadBounds::NONE)
            .await
            .unwrap();
        let marked = DeadLetter {
            replay: true,
            ..letter.clone()
        };
        store
            .put_dead(&season, &marked, DeadBounds::NONE)
            .await
            .unwrap();
        assert_eq!(
            store.dead_letters(&season, None, 10).await.unwrap(),
            std::slice::from_ref(&marked)
        );
        store
            .remove_dead(&season, &letter, &letter.to_json())
            .await
            .unwrap();
        assert_eq!(
            store.dead_letters(&season, None, 10).await.unwrap().len(),
            1
        );
        store
            .remove_dead(&season, &marked, &marked.to_json())
            .await
            .unwrap();
        assert!(
            store
                .dead_letters(&season, None, 10)
                .await
                .unwrap()
                .is_empty()
        );
    }
}
