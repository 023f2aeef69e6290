//! The embedded store's placements: [`LeagueStore`] in one critical section each.

use super::{MemoryStore, PeriodData, source_period, time_error};
use crate::error::StoreError;
use crate::season::seats::Caps;
use crate::store::keys::{PeriodKeys, PlayerKeys};
use crate::store::*;

/// The end of a ban marker `since_ms|until_ms` (`None`: no end, or unreadable).
fn marker_until(marker: &str) -> Option<i64> {
    marker.rsplit_once('|').and_then(|(_, u)| u.parse().ok())
}

impl LeagueStore for MemoryStore {
    async fn now(&self) -> Result<i64, StoreError> {
        Ok(self.clock.now().timestamp_millis())
    }

    fn now_is_free(&self) -> bool {
        true
    }

    async fn join(
        &self,
        period: &PeriodKeys,
        request: &JoinRequest<'_>,
    ) -> Result<Joined, StoreError> {
        match request.time.judge(self.now_ms(request.time.now)) {
            Ok(()) => {}
            Err(Judgement::Refused(why)) => return Err(time_error(why)),
            Err(Judgement::Closed) => return Err(StoreError::PeriodClosed),
        }
        let mut data = self.data();
        if !data.periods.contains_key(&period.base) {
            data.periods
                .insert(period.base.clone(), PeriodData::default());
        }
        let Some(p) = data.periods.get_mut(&period.base) else {
            return Err(StoreError::Protocol("period vanished".into()));
        };
        if p.meta.contains_key("closing") {
            return Err(StoreError::PeriodClosed);
        }
        let caps = Caps::new(request.size, request.late.map(|l| l.early_cap));
        let now = self.now_ms(request.time.now);
        let late_from = request.late.map(|l| l.from_ms);
        if let Some((tier, bracket)) = p.assign.get(request.player) {
            match request.replace_full {
                Some(full) if full == *bracket => {
                    // The assigned bracket is full: move the counters past it, so this
                    // and every later joiner of the tier lands in a bracket after it.
                    let joins = p.joins.entry(tier.clone()).or_default();
                    if late_from.is_some() && joins.fixed.is_none() && joins.is_late(now, late_from)
                    {
                        joins.fixed = Some(joins.early.div_ceil(caps.early_cap));
                    }
                    joins.pass(u64::from(full) + u64::from(request.skip), caps);
                }
                _ => {
                    return Ok(Joined {
                        tier: tier.clone(),
                        bracket: *bracket,
                        new: false,
                    });
                }
            }
        }
        // A player the ban step found unplaced holds a marker here: refused until the
        // ban's end (as join.lua).
        if let Some(marker) = p.meta.get(&ban_field(request.player)) {
            let until = marker_until(marker);
            if until.is_none_or(|u| u > now) {
                return Err(StoreError::Banned { until_ms: until });
            }
        }
        let tier = match p.assign.get(request.player) {
            // A reassignment keeps the tier the player was placed in.
            Some((tier, _)) => tier.clone(),
            None => request.tier.to_owned(),
        };
        let joins = p.joins.entry(tier.clone()).or_default();
        let late = joins.is_late(now, late_from);
        let bracket = u32::try_from(joins.count(late, caps)).unwrap_or(u32::MAX);
        p.assign
            .insert(request.player.to_owned(), (tier.clone(), bracket));
        Ok(Joined {
            tier,
            bracket,
            new: true,
        })
    }

    async fn placement(
        &self,
        period: &PeriodKeys,
        player: &str,
    ) -> Result<Option<(String, u32)>, StoreError> {
        let data = self.data();
        Ok(data
            .periods
            .get(&period.base)
            .and_then(|p| p.assign.get(player).cloned()))
    }

    async fn enter_entry(&self, entry: &BoardEntry<'_>) -> Result<Entered, StoreError> {
        let (bracket, player) = (entry.bracket, entry.player);
        let mut data = self.data();
        let b = Self::bracket(&mut data, bracket);
        if b.meta.contains_key("closed") {
            return Err(StoreError::PeriodClosed);
        }
        if let Some(marker) = b.meta.get(&ban_field(player)) {
            return Ok(Entered::Banned(marker.clone()));
        }
        let mut placed = false;
        if !b.scores.contains_key(player) {
            if b.scores.len() >= entry.size as usize {
                return Ok(Entered::Full);
            }
            b.put(player, 0);
            placed = true;
        }
        if let Some((version, json)) = entry.profile {
            let newer = b.profiles.get(player).is_none_or(|(v, _)| *v < version);
            if newer {
                b.profiles
                    .insert(player.to_owned(), (version, json.to_owned()));
            }
        }
        if placed && let Some(events) = entry.placed {
            self.append_events(&mut data, &bracket.events(), &events);
        }
        Ok(Entered::Ok)
    }

    async fn joined(&self, period: &PeriodKeys) -> Result<Vec<(String, TierJoins)>, StoreError> {
        let data = self.data();
        let mut out: Vec<(String, TierJoins)> = data
            .periods
            .get(&period.base)
            .map(|p| p.joins.iter().map(|(t, j)| (t.clone(), *j)).collect())
            .unwrap_or_default();
        out.sort();
        Ok(out)
    }

    async fn joined_many(
        &self,
        periods: &[PeriodKeys],
    ) -> Result<Vec<Vec<(String, TierJoins)>>, StoreError> {
        let mut out = Vec::with_capacity(periods.len());
        for p in periods {
            out.push(self.joined(p).await?);
        }
        Ok(out)
    }

    async fn player_state(
        &self,
        player_keys: &PlayerKeys,
    ) -> Result<Option<PlayerState>, StoreError> {
        let now = self.clock.now().timestamp();
        let data = self.data();
        Ok(Self::live_player(&data, player_keys, now)
            .filter(|p| p.state_live(now))
            .and_then(|p| p.state.clone()))
    }

    async fn player_snapshot(
        &self,
        player_keys: &PlayerKeys,
    ) -> Result<PlayerSnapshot, StoreError> {
        Ok(PlayerSnapshot {
            state: self.player_state(player_keys).await?,
            profile: RankingStore::profile(self, player_keys).await?,
            rewards: RolloverStore::rewards(self, player_keys).await?,
            // A hint for state writes, which here take none (a player's records
            // share one expiry): not looked up.
            profile_deadline: None,
            ban: BanStore::ban(self, player_keys).await?,
        })
    }

    async fn record_state(
        &self,
        player_keys: &PlayerKeys,
        state: &PlayerState,
        ttl_secs: u64,
        trim_before: u64,
    ) -> Result<(), StoreError> {
        let now = self.clock.now().timestamp();
        let mut data = self.data();
        let p = Self::player(&mut data, player_keys, now);
        // Claimed rewards of periods past retention can never be granted again (the
        // rollover never reopens them), and old claim answers are past any retry.
        p.rewards.retain(|source, (done, _)| {
            !*done || source_period(source).is_some_and(|n| n >= trim_before)
        });
        p.claims.retain(|_, (period, _)| *period >= trim_before);
        match &p.state {
            None => p.state = Some(PlayerState::new(state.period, &state.tier, state.bracket)),
            Some(old) if old.period < state.period => {
                let mut new = PlayerState::new(state.period, &state.tier, state.bracket);
                new.previous = Some((old.period, old.tier.clone(), old.bracket));
                p.state = Some(new);
            }
            // The same period: the placement is corrected, the previous one stays.
            Some(old) if old.period == state.period => {
                let mut new = PlayerState::new(state.period, &state.tier, state.bracket);
                new.previous = old.previous.clone();
                p.state = Some(new);
            }
            Some(_) => {}
        }
        // Every placement starts the player's expiry anew (Redis: a new deadline for
        // the state, EXPIRE on the rewards and claims keys).
        let until = now.saturating_add(i64::try_from(ttl_secs).unwrap_or(i64::MAX));
        p.expire_at = Some(until);
        p.rewards_expire_at = Some(until);
        Ok(())
    }
}
