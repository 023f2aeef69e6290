//! Re-settlements in memory: a bracket's correction record beside its outcomes, and
//! the players' corrections beside their rewards (see [`CorrectionStore`]).

use std::collections::{BTreeMap, BTreeSet};

use super::{HashMap, MemoryStore};
use crate::error::StoreError;
use crate::store::keys::{BracketKeys, PlayerKeys};
use crate::store::{
    Appends, Begun, CorrectionRecord, CorrectionStart, CorrectionStore, CorrectionVersion,
    Revocation,
};

/// A bracket's correction, as Redis keeps it in the bracket's `fix` hash and `orig`
/// string.
#[derive(Debug, Default)]
pub(super) struct CorrectionData {
    /// The outcomes as the bracket closed.
    original: HashMap<String, String>,
    versions: Vec<CorrectionVersion>,
    applied: u64,
    done: u64,
    marks: BTreeMap<String, u64>,
}

impl CorrectionStore for MemoryStore {
    async fn correction(&self, bracket: &BracketKeys) -> Result<CorrectionRecord, StoreError> {
        let data = self.data();
        let Some(b) = data.brackets.get(&bracket.base) else {
            return Ok(CorrectionRecord::default());
        };
        let pairs = |m: &HashMap<String, String>| -> Vec<(String, String)> {
            m.iter().map(|(p, o)| (p.clone(), o.clone())).collect()
        };
        let mut record = CorrectionRecord {
            closed: b.meta.contains_key("done"),
            outcomes: pairs(&b.outcomes),
            ..CorrectionRecord::default()
        };
        if let Some(c) = &b.correction {
            record.original = Some(pairs(&c.original));
            record.versions = c.versions.clone();
            record.applied = c.applied;
            record.done = c.done;
            record.marks = c.marks.iter().map(|(p, v)| (p.clone(), *v)).collect();
        }
        Ok(record)
    }

    async fn begin_correction(
        &self,
        bracket: &BracketKeys,
        start: &CorrectionStart<'_>,
    ) -> Result<Begun, StoreError> {
        let mut data = self.data();
        let Some(b) = data.brackets.get_mut(&bracket.base) else {
            return Ok(Begun::NotClosed);
        };
        if !b.meta.contains_key("done") {
            return Ok(Begun::NotClosed);
        }
        let excluded: BTreeSet<&str> = b
            .correction
            .iter()
            .flat_map(|c| c.versions.iter().flat_map(|v| v.excluded.iter()))
            .map(String::as_str)
            .collect();
        let fresh: BTreeSet<&str> = start
            .exclude
            .iter()
            .map(String::as_str)
            .filter(|p| !excluded.contains(p))
            .collect();
        let version = b.correction.as_ref().map_or(0, |c| c.versions.len() as u64);
        if fresh.is_empty() {
            return Ok(Begun::Version {
                version,
                created: false,
            });
        }
        if (excluded.len() + fresh.len()) as u64 >= start.players {
            return Ok(Begun::Everyone);
        }
        let fresh: Vec<String> = fresh.into_iter().map(str::to_owned).collect();
        let outcomes = b.outcomes.clone();
        let c = b.correction.get_or_insert_with(|| {
            Box::new(CorrectionData {
                original: outcomes,
                ..CorrectionData::default()
            })
        });
        c.versions.push(CorrectionVersion {
            excluded: fresh,
            at_ms: start.at_ms,
            actor: start.actor.to_owned(),
            reason: start.reason.to_owned(),
        });
        Ok(Begun::Version {
            version: version + 1,
            created: true,
        })
    }

    async fn apply_correction(
        &self,
        bracket: &BracketKeys,
        version: u64,
        outcomes: &[(&str, &str)],
        marks: &[(&str, u64)],
        events: Option<Appends<'_>>,
    ) -> Result<bool, StoreError> {
        if let Some(e) = &events
            && e.bodies.len() != marks.len()
        {
            return Err(StoreError::Protocol(format!(
                "apply_correction: {} events for {} marks",
                e.bodies.len(),
                marks.len()
            )));
        }
        let mut data = self.data();
        let Some(b) = data.brackets.get_mut(&bracket.base) else {
            return Ok(false);
        };
        let Some(c) = b.correction.as_mut() else {
            return Ok(false);
        };
        if c.applied >= version {
            return Ok(false);
        }
        let before = c.applied;
        c.applied = version;
        for (p, v) in marks {
            c.marks.insert((*p).to_owned(), *v);
        }
        b.outcomes = outcomes
            .iter()
            .map(|(p, o)| ((*p).to_owned(), (*o).to_owned()))
            .collect();
        if let Some(events) = events {
            let bodies: Vec<String> = marks
                .iter()
                .zip(events.bodies)
                .filter(|((_, v), _)| *v > before)
                .map(|(_, body)| body.clone())
                .collect();
            let appends = Appends {
                spec: events.spec,
                bodies: &bodies,
            };
            self.append_events(&mut data, &bracket.events(), &appends);
        }
        Ok(true)
    }

    async fn finish_correction(
        &self,
        bracket: &BracketKeys,
        version: u64,
    ) -> Result<(), StoreError> {
        let mut data = self.data();
        if let Some(c) = data
            .brackets
            .get_mut(&bracket.base)
            .and_then(|b| b.correction.as_mut())
        {
            c.done = c.done.max(version);
        }
        Ok(())
    }

    async fn grant_corrected(
        &self,
        player: &PlayerKeys,
        source: &str,
        grant: &str,
        ttl_secs: u64,
    ) -> Result<bool, StoreError> {
        let now = self.clock.now().timestamp();
        let mut data = self.data();
        let p = Self::player(&mut data, player, now);
        if p.fixes.contains_key(&format!("r:{source}")) {
            return Ok(false);
        }
        let granted = !p.rewards.contains_key(source);
        if granted {
            p.rewards
                .insert(source.to_owned(), (false, grant.to_owned()));
        }
        p.keep_rewards_at_least(now, ttl_secs);
        Ok(granted)
    }

    async fn revoke_reward(
        &self,
        player: &PlayerKeys,
        source: &str,
        ttl_secs: u64,
    ) -> Result<Revocation, StoreError> {
        let now = self.clock.now().timestamp();
        let mut data = self.data();
        let p = Self::player(&mut data, player, now);
        let tombstone = format!("r:{source}");
        if let Some(before) = p.fixes.get(&tombstone) {
            return Ok(if before.is_empty() {
                Revocation::Absent
            } else {
                Revocation::Revoked
            });
        }
        let removed = match p.rewards.get(source).cloned() {
            Some((true, _)) => return Ok(Revocation::Claimed),
            Some((false, grant)) => {
                p.rewards.remove(source);
                grant
            }
            None => String::new(),
        };
        let found = if removed.is_empty() {
            Revocation::Absent
        } else {
            Revocation::Revoked
        };
        p.fixes.insert(tombstone, removed);
        p.keep_rewards_at_least(now, ttl_secs);
        Ok(found)
    }

    async fn decide_credit(
        &self,
        player: &PlayerKeys,
        field: &str,
        value: &str,
        ttl_secs: u64,
    ) -> Result<String, StoreError> {
        let now = self.clock.now().timestamp();
        let mut data = self.data();
        let p = Self::player(&mut data, player, now);
        let stored = p
            .fixes
            .entry(field.to_owned())
            .or_insert_with(|| value.to_owned())
            .clone();
        p.keep_rewards_at_least(now, ttl_secs);
        Ok(stored)
    }

    async fn credits(&self, player: &PlayerKeys) -> Result<Vec<(String, String)>, StoreError> {
        let now = self.clock.now().timestamp();
        let data = self.data();
        Ok(Self::live_player(&data, player, now)
            .filter(|p| p.rewards_live(now))
            .map(|p| {
                p.fixes
                    .iter()
                    .filter(|(f, _)| f.starts_with("t:"))
                    .map(|(f, v)| (f.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default())
    }
}
