//! The embedded store's boards: score updates (the same rule as `update.lua`),
//! pages, cached profiles; [`RankingStore`] in one critical section each.

use chrono::{DateTime, Utc};

use std::sync::Arc;

use super::{BracketData, MemoryStore};
use crate::error::StoreError;
use crate::season::limits::Limit;
use crate::season::packing::Packing;
use crate::store::keys::{BracketKeys, PlayerKeys};
use crate::store::*;

impl BracketData {
    /// Where `(packed, player)` sits (or would sit) in `order`.
    pub(super) fn position(&self, player: &str, packed: u64) -> usize {
        let neg = -(packed as i64);
        self.order
            .partition_point(|(n, p)| (*n, &**p) < (neg, player))
    }

    pub(super) fn rank(&self, player: &str, packed: u64) -> u64 {
        self.position(player, packed) as u64
    }

    pub(super) fn put(&mut self, player: &str, packed: u64) {
        let id = match self.scores.get_key_value(player) {
            Some((id, old)) => {
                let id = id.clone();
                let at = self.position(player, *old);
                self.order.remove(at);
                id
            }
            None => Arc::from(player),
        };
        let at = self.position(player, packed);
        self.order.insert(at, (-(packed as i64), id.clone()));
        self.scores.insert(id, packed);
    }

    /// Removes the player from the board (the others' ranks close up); whether they
    /// were on it.
    pub(super) fn take(&mut self, player: &str) -> bool {
        let Some(packed) = self.scores.remove(player) else {
            return false;
        };
        let at = self.position(player, packed);
        self.order.remove(at);
        true
    }

    pub(super) fn page(&self, offset: u64, limit: u64) -> Page {
        let entries = self
            .order
            .iter()
            .skip(offset as usize)
            .take(limit as usize)
            .map(|(neg, player)| RawEntry {
                player: player.to_string(),
                packed: (-*neg) as u64,
                profile: self
                    .profiles
                    .get(&**player)
                    .map(|(_, json)| StoredText::new(json.as_str())),
            })
            .collect();
        Page {
            total: self.order.len() as u64,
            offset,
            entries,
        }
    }

    /// Applies `update` as `update.lua` does; the `player.overtaken` bodies it logs
    /// (when it asks for them and applies, moving its player past others) are pushed
    /// on `logged`.
    pub(super) fn update(
        &mut self,
        update: &Update<'_>,
        now: DateTime<Utc>,
        logged: &mut Vec<String>,
    ) -> UpdateReply {
        let refused = |status| UpdateReply {
            status,
            packed: 0,
            rank: None,
        };
        // The idempotency record first: a retry is answered as the first time was,
        // even once the period has closed.
        if let Some((key, _)) = &update.request
            && let Some((packed, rank, expires)) = self.requests.get(key)
            && *expires > now
        {
            return UpdateReply {
                status: UpdateStatus::Duplicate,
                packed: *packed,
                rank: *rank,
            };
        }
        let now_ms = update.time.now.at(now.timestamp_millis());
        match update.time.judge(now_ms) {
            Ok(()) => {}
            Err(Judgement::Refused(why)) => return refused(UpdateStatus::Refused(why)),
            Err(Judgement::Closed) => return refused(UpdateStatus::Closed),
        }
        if self.meta.contains_key("closed") {
            return refused(UpdateStatus::Closed);
        }
        let Some(current) = self.scores.get(update.player).copied() else {
            // Only a join puts a player on a board: an update for a player who is not
            // there comes from a stale placement (or a store that lost its data).
            return refused(UpdateStatus::NotPlaced);
        };
        // The store trusts the engine's validated season limits.
        let packing = match Packing::new(update.max_score, update.span.saturating_sub(1)) {
            Ok(p) => p,
            Err(_) => {
                return UpdateReply {
                    status: UpdateStatus::OutOfRange { current },
                    packed: current,
                    rank: None,
                };
            }
        };
        let packed = match packing.apply(update.mode, Some(current), update.value, update.tick) {
            Ok(packed) => packed,
            Err(_) => {
                return UpdateReply {
                    status: UpdateStatus::OutOfRange { current },
                    packed: current,
                    rank: None,
                };
            }
        };
        // The season's limits, in update.lua's order, after the score rules.
        let mut tat = None;
        if !update.limits.is_empty() {
            match self.limited(update, packing.unpack(packed).0, now_ms) {
                Ok(t) => tat = t,
                Err(status) => {
                    return UpdateReply {
                        status,
                        packed: current,
                        rank: None,
                    };
                }
            }
        }
        // The player's place before, when they move up and passed players are told.
        let was = update
            .overtakes
            .as_ref()
            .filter(|_| packed > current)
            .map(|o| (o, self.position(update.player, current)));
        self.put(update.player, packed);
        let rank = update.rank.then(|| self.rank(update.player, packed));
        if let Some((o, was)) = was {
            // The players now between the new place and the old one were passed; one
            // who never scored (packed 0) is not told.
            let place = self.position(update.player, packed);
            for (i, (neg, passed)) in self.order.iter().enumerate().take(was + 1).skip(place + 1) {
                if *neg != 0 {
                    logged.push(o.body(passed, i as u64 + 1));
                }
            }
        }
        if let Some((key, window)) = &update.request {
            self.requests.retain(|_, (_, _, exp)| *exp > now);
            let expires = now + chrono::Duration::seconds(*window as i64);
            self.requests.insert(key.clone(), (packed, rank, expires));
        }
        if let Some(t) = tat {
            self.rates.insert(update.player.to_owned(), t);
        }
        UpdateReply {
            status: UpdateStatus::Applied,
            packed,
            rank,
        }
    }

    /// The limits' verdict on an update that would give `score`: `Ok` with the rate's
    /// new arrival time to store (if the season has a rate), or the refusal.
    fn limited(
        &self,
        update: &Update<'_>,
        score: u64,
        now_ms: i64,
    ) -> Result<Option<u64>, UpdateStatus> {
        let limits = &update.limits;
        let hit = |limit, retry_after_ms| UpdateStatus::Limited {
            limit,
            retry_after_ms,
        };
        if !limits.value_allowed(update.value) {
            return Err(hit(Limit::MaxValue, 0));
        }
        if !limits.score_allowed(score) {
            return Err(hit(Limit::MaxPeriodScore, 0));
        }
        let Some(rate) = limits.rate else {
            return Ok(None);
        };
        let elapsed = u64::try_from(now_ms - update.time.start_ms).unwrap_or(0);
        rate.admit(self.rates.get(update.player).copied(), elapsed)
            .map(Some)
            .map_err(|wait| hit(Limit::Rate, wait))
    }
}

impl MemoryStore {
    /// Appends an update's `player.overtaken` bodies to its bracket's log.
    fn log_overtakes(
        &self,
        data: &mut super::Data,
        bracket: &BracketKeys,
        update: &Update<'_>,
        bodies: &[String],
    ) {
        if let Some(o) = &update.overtakes
            && !bodies.is_empty()
        {
            let appends = Appends {
                spec: o.spec,
                bodies,
            };
            self.append_events(data, &bracket.events(), &appends);
        }
    }
}

impl RankingStore for MemoryStore {
    async fn update(
        &self,
        bracket: &BracketKeys,
        update: &Update<'_>,
    ) -> Result<UpdateReply, StoreError> {
        let now = self.clock.now();
        let mut data = self.data();
        let mut logged = Vec::new();
        let reply = Self::bracket(&mut data, bracket).update(update, now, &mut logged);
        self.log_overtakes(&mut data, bracket, update, &logged);
        Ok(reply)
    }

    async fn update_many(
        &self,
        updates: &[(&BracketKeys, Update<'_>)],
    ) -> Vec<Result<UpdateReply, StoreError>> {
        let now = self.clock.now();
        let mut data = self.data();
        let mut logged = Vec::new();
        updates
            .iter()
            .map(|(keys, u)| {
                logged.clear();
                let reply = Self::bracket(&mut data, keys).update(u, now, &mut logged);
                self.log_overtakes(&mut data, keys, u, &logged);
                Ok(reply)
            })
            .collect()
    }

    async fn standings(
        &self,
        bracket: &BracketKeys,
        offset: u64,
        limit: u64,
    ) -> Result<Page, StoreError> {
        let data = self.data();
        Ok(match data.brackets.get(&bracket.base) {
            Some(b) => b.page(offset, limit),
            None => Page {
                total: 0,
                offset,
                entries: Vec::new(),
            },
        })
    }

    async fn standings_many(
        &self,
        reads: &[(&BracketKeys, u64, u64)],
    ) -> Vec<Result<Page, StoreError>> {
        let mut pages = Vec::with_capacity(reads.len());
        for (bracket, offset, limit) in reads {
            pages.push(self.standings(bracket, *offset, *limit).await);
        }
        pages
    }

    async fn around(
        &self,
        bracket: &BracketKeys,
        player: &str,
        before: u64,
        after: u64,
    ) -> Result<Option<Page>, StoreError> {
        let data = self.data();
        let Some(b) = data.brackets.get(&bracket.base) else {
            return Ok(None);
        };
        let Some(packed) = b.scores.get(player) else {
            return Ok(None);
        };
        let rank = b.rank(player, *packed);
        let start = rank.saturating_sub(before);
        Ok(Some(b.page(start, rank - start + after.saturating_add(1))))
    }

    async fn entry(
        &self,
        bracket: &BracketKeys,
        player: &str,
    ) -> Result<Option<(u64, u64)>, StoreError> {
        let data = self.data();
        Ok(data.brackets.get(&bracket.base).and_then(|b| {
            b.scores
                .get(player)
                .map(|packed| (b.rank(player, *packed), *packed))
        }))
    }

    async fn set_profile(
        &self,
        player_keys: &PlayerKeys,
        change: &ProfileChange,
        order: &[String],
        max_bytes: usize,
        ttl_secs: u64,
    ) -> Result<ProfileWrite, StoreError> {
        let now = self.clock.now().timestamp();
        let mut data = self.data();
        let p = Self::player(&mut data, player_keys, now);
        let mut next: Vec<(String, String)> = if change.replace {
            Vec::new()
        } else {
            p.profile.clone()
        };
        for (k, v) in &change.fields {
            match (v, next.iter_mut().position(|(f, _)| f == k)) {
                (Some(v), Some(i)) => next[i].1 = v.clone(),
                (Some(v), None) => next.push((k.clone(), v.clone())),
                (None, Some(i)) => {
                    next.remove(i);
                }
                (None, None) => {}
            }
        }
        let merged: std::collections::BTreeMap<&str, &str> =
            next.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let json = crate::store::profile_json(order, &merged);
        if json.len() > max_bytes {
            return Ok(ProfileWrite::TooLarge { bytes: json.len() });
        }
        p.profile = next;
        p.profile_version += 1;
        p.keep_at_least(now, ttl_secs);
        Ok(ProfileWrite::Written {
            version: p.profile_version,
            json,
        })
    }

    async fn cache_profile(
        &self,
        bracket: &BracketKeys,
        player: &str,
        version: u64,
        json: &str,
    ) -> Result<(), StoreError> {
        let mut data = self.data();
        if let Some(b) = data.brackets.get_mut(&bracket.base)
            && b.scores.contains_key(player)
            && b.profiles.get(player).is_none_or(|(v, _)| *v < version)
        {
            b.profiles
                .insert(player.to_owned(), (version, json.to_owned()));
        }
        Ok(())
    }

    async fn profile(
        &self,
        player_keys: &PlayerKeys,
    ) -> Result<(Vec<(String, String)>, u64), StoreError> {
        let now = self.clock.now().timestamp();
        let data = self.data();
        let Some(p) = Self::live_player(&data, player_keys, now).filter(|p| p.state_live(now))
        else {
            return Ok((Vec::new(), 0));
        };
        let mut fields = p.profile.clone();
        fields.sort();
        Ok((fields, p.profile_version))
    }
}
