//! The embedded store's rollover steps, rewards and claims: [`RolloverStore`] in one
//! critical section each.

use super::{MemoryStore, time_error};
use crate::error::StoreError;
use crate::store::keys::{BracketKeys, LAYOUT, PeriodKeys, PlayerKeys, SeasonKeys};
use crate::store::*;

impl RolloverStore for MemoryStore {
    async fn closed_through(&self, season: &SeasonKeys) -> Result<u64, StoreError> {
        Ok(self.data().seasons.get(&season.base).copied().unwrap_or(0))
    }

    async fn set_closed_through(&self, season: &SeasonKeys, period: u64) -> Result<(), StoreError> {
        let mut data = self.data();
        let mark = data.seasons.entry(season.base.clone()).or_insert(0);
        *mark = (*mark).max(period);
        // The layout goes with every write of the meta, as on Redis.
        data.season_fields
            .entry(season.base.clone())
            .or_default()
            .entry("layout".to_owned())
            .or_insert_with(|| LAYOUT.to_owned());
        Ok(())
    }

    async fn season_field(
        &self,
        season: &SeasonKeys,
        field: &str,
    ) -> Result<Option<String>, StoreError> {
        let data = self.data();
        Ok(data
            .season_fields
            .get(&season.base)
            .and_then(|f| f.get(field).cloned()))
    }

    async fn set_season_field(
        &self,
        season: &SeasonKeys,
        field: &str,
        value: &str,
        keep: bool,
    ) -> Result<(), StoreError> {
        let mut data = self.data();
        let fields = data.season_fields.entry(season.base.clone()).or_default();
        if !(keep && fields.contains_key(field)) {
            fields.insert(field.to_owned(), value.to_owned());
        }
        fields
            .entry("layout".to_owned())
            .or_insert_with(|| LAYOUT.to_owned());
        Ok(())
    }

    async fn begin_close(
        &self,
        period: &PeriodKeys,
        check: CloseCheck,
    ) -> Result<ClosingPeriod, StoreError> {
        check.judge(self.now_ms(check.now)).map_err(time_error)?;
        let now = self.clock.now().timestamp();
        let mut data = self.data();
        let p = data.periods.entry(period.base.clone()).or_default();
        p.meta.insert("closing".into(), "1".into());
        // A period nobody joined has no expiry yet: its marker lives as its data would.
        if p.expire_at.is_none() && check.keep_secs > 0 {
            p.expire_at =
                Some(now.saturating_add(i64::try_from(check.keep_secs).unwrap_or(i64::MAX)));
        }
        let mut joins: Vec<(String, TierJoins)> =
            p.joins.iter().map(|(t, j)| (t.clone(), *j)).collect();
        joins.sort();
        Ok((p.meta.get("closed").cloned(), joins))
    }

    async fn period_summary(&self, period: &PeriodKeys) -> Result<Option<String>, StoreError> {
        Ok(self
            .data()
            .periods
            .get(&period.base)
            .and_then(|p| p.meta.get("closed").cloned()))
    }

    async fn save_tops(
        &self,
        period: &PeriodKeys,
        tops: &[(String, String)],
    ) -> Result<(), StoreError> {
        let mut data = self.data();
        let p = data.periods.entry(period.base.clone()).or_default();
        for (tier, json) in tops {
            p.meta.insert(format!("top:{tier}"), json.clone());
        }
        Ok(())
    }

    async fn saved_top(
        &self,
        period: &PeriodKeys,
        tier: &str,
    ) -> Result<Option<String>, StoreError> {
        let data = self.data();
        Ok(data
            .periods
            .get(&period.base)
            .and_then(|p| p.meta.get(&format!("top:{tier}")).cloned()))
    }

    async fn finish_period_logged(
        &self,
        period: &PeriodKeys,
        summary: &str,
        ttl_secs: u64,
        events: Option<Appends<'_>>,
    ) -> Result<(), StoreError> {
        let now = self.clock.now().timestamp();
        let expire_at = now.saturating_add(i64::try_from(ttl_secs).unwrap_or(i64::MAX));
        let mut data = self.data();
        let p = data.periods.entry(period.base.clone()).or_default();
        let fresh = !p.meta.contains_key("closed");
        p.meta
            .entry("closed".into())
            .or_insert_with(|| summary.to_owned());
        p.expire_at = Some(expire_at);
        if fresh && let Some(events) = events {
            self.append_events(&mut data, &period.events(), &events);
        }
        // Redis expires closed periods and idle players by TTL; here they are dropped
        // when a period closes, which is when their retention can first run out.
        data.periods
            .retain(|_, p| p.expire_at.is_none_or(|e| e > now));
        data.brackets
            .retain(|_, b| b.expire_at.is_none_or(|e| e > now));
        data.logs.retain(|_, log| log.live(now * 1000));
        data.players.retain(|_, p| !p.expired(now));
        Ok(())
    }

    async fn claim_bracket(
        &self,
        bracket: &BracketKeys,
        owner: &str,
        lease_ms: u64,
        check: CloseCheck,
    ) -> Result<BracketClaim, StoreError> {
        check.judge(self.now_ms(check.now)).map_err(time_error)?;
        let now = self.clock.now().timestamp_millis();
        let mut data = self.data();
        let b = data.brackets.entry(bracket.base.clone()).or_default();
        if let Some(tally) = b.meta.get("done") {
            return Ok(BracketClaim::Done(tally.clone()));
        }
        match &b.lease {
            Some((holder, until)) if holder != owner && *until > now => Ok(BracketClaim::Busy),
            _ => {
                let until = now.saturating_add(i64::try_from(lease_ms).unwrap_or(i64::MAX));
                b.lease = Some((owner.to_owned(), until));
                Ok(BracketClaim::Mine)
            }
        }
    }

    async fn freeze(
        &self,
        bracket: &BracketKeys,
        check: CloseCheck,
    ) -> Result<Vec<(String, u64)>, StoreError> {
        check.judge(self.now_ms(check.now)).map_err(time_error)?;
        let mut data = self.data();
        let b = data.brackets.entry(bracket.base.clone()).or_default();
        b.meta.insert("closed".into(), "1".into());
        Ok(b.order
            .iter()
            .map(|(neg, player)| (player.to_string(), (-*neg) as u64))
            .collect())
    }

    async fn record_outcomes(
        &self,
        bracket: &BracketKeys,
        outcomes: &[(&str, &str)],
        ttl_secs: u64,
    ) -> Result<(), StoreError> {
        let now = self.clock.now().timestamp();
        let expire_at = now.saturating_add(i64::try_from(ttl_secs).unwrap_or(i64::MAX));
        let mut data = self.data();
        let b = data.brackets.entry(bracket.base.clone()).or_default();
        if !b.meta.contains_key("recorded") {
            b.outcomes = outcomes
                .iter()
                .map(|(p, o)| ((*p).to_owned(), (*o).to_owned()))
                .collect();
            b.meta.insert("recorded".into(), "1".into());
        }
        b.expire_at = Some(expire_at);
        Ok(())
    }

    async fn grant_logged(
        &self,
        grants: &[Grant],
        ttl_secs: u64,
        events: Option<Appends<'_>>,
    ) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        let now = self.clock.now().timestamp();
        let mut data = self.data();
        let mut out = Vec::with_capacity(grants.len());
        for (i, (keys, source, grant)) in grants.iter().enumerate() {
            let p = Self::player(&mut data, keys, now);
            let mut granted = false;
            p.rewards.entry(source.clone()).or_insert_with(|| {
                granted = true;
                (false, grant.clone())
            });
            p.keep_rewards_at_least(now, ttl_secs);
            if granted
                && let Some(e) = events
                && let Some(body) = e.bodies.get(i)
            {
                let one = Appends {
                    spec: e.spec,
                    bodies: std::slice::from_ref(body),
                };
                self.append_events(&mut data, &keys.events(), &one);
            }
            out.push(Ok(()));
        }
        Ok(out)
    }

    async fn block_grants(
        &self,
        season: &SeasonKeys,
        blocked: &[BlockedGrant],
    ) -> Result<(), StoreError> {
        let mut data = self.data();
        let set = data.blocked.entry(season.base.clone()).or_default();
        for b in blocked {
            set.insert((b.source.clone(), b.player.clone()), b.clone());
        }
        Ok(())
    }

    async fn block_bracket(
        &self,
        season: &SeasonKeys,
        blocked: &BlockedBracket,
    ) -> Result<(), StoreError> {
        self.data()
            .stuck
            .entry(season.base.clone())
            .or_default()
            .insert(blocked.source.clone(), blocked.clone());
        Ok(())
    }

    async fn blocked_brackets(
        &self,
        season: &SeasonKeys,
    ) -> Result<Vec<BlockedBracket>, StoreError> {
        Ok(self
            .data()
            .stuck
            .get(&season.base)
            .map(|m| m.values().cloned().collect())
            .unwrap_or_default())
    }

    async fn unblock_bracket(&self, season: &SeasonKeys, source: &str) -> Result<(), StoreError> {
        if let Some(m) = self.data().stuck.get_mut(&season.base) {
            m.remove(source);
        }
        Ok(())
    }

    async fn blocked_grants(&self, season: &SeasonKeys) -> Result<Vec<BlockedGrant>, StoreError> {
        Ok(self
            .data()
            .blocked
            .get(&season.base)
            .map(|set| set.values().cloned().collect())
            .unwrap_or_default())
    }

    async fn unblock_grant(
        &self,
        season: &SeasonKeys,
        source: &str,
        player: &str,
    ) -> Result<(), StoreError> {
        if let Some(set) = self.data().blocked.get_mut(&season.base) {
            set.remove(&(source.to_owned(), player.to_owned()));
        }
        Ok(())
    }

    async fn finish_bracket(&self, bracket: &BracketKeys, tally: &str) -> Result<(), StoreError> {
        let mut data = self.data();
        let b = data.brackets.entry(bracket.base.clone()).or_default();
        b.meta
            .entry("done".into())
            .or_insert_with(|| tally.to_owned());
        b.lease = None;
        Ok(())
    }

    async fn finish_with_outcomes(
        &self,
        bracket: &BracketKeys,
        outcomes: &[(&str, &str)],
        ttl_secs: u64,
        tally: &str,
        events: Option<Appends<'_>>,
    ) -> Result<(), StoreError> {
        let now = self.clock.now().timestamp();
        let expire_at = now.saturating_add(i64::try_from(ttl_secs).unwrap_or(i64::MAX));
        let mut data = self.data();
        let b = data.brackets.entry(bracket.base.clone()).or_default();
        let fresh = !b.meta.contains_key("recorded");
        if fresh {
            b.outcomes = outcomes
                .iter()
                .map(|(p, o)| ((*p).to_owned(), (*o).to_owned()))
                .collect();
            b.meta.insert("recorded".into(), "1".into());
        }
        b.expire_at = Some(expire_at);
        b.meta
            .entry("done".into())
            .or_insert_with(|| tally.to_owned());
        b.lease = None;
        if fresh && let Some(events) = events {
            self.append_events(&mut data, &bracket.events(), &events);
        }
        Ok(())
    }

    async fn outcome(
        &self,
        bracket: &BracketKeys,
        player: &str,
    ) -> Result<Option<String>, StoreError> {
        Ok(self
            .data()
            .brackets
            .get(&bracket.base)
            .and_then(|b| b.outcomes.get(player).cloned()))
    }

    async fn outcomes(&self, bracket: &BracketKeys) -> Result<Vec<(String, String)>, StoreError> {
        Ok(self
            .data()
            .brackets
            .get(&bracket.base)
            .map(|b| {
                b.outcomes
                    .iter()
                    .map(|(p, o)| (p.clone(), o.clone()))
                    .collect()
            })
            .unwrap_or_default())
    }

    async fn rewards(&self, player_keys: &PlayerKeys) -> Result<Vec<(String, String)>, StoreError> {
        let now = self.clock.now().timestamp();
        let data = self.data();
        Ok(Self::live_player(&data, player_keys, now)
            .filter(|p| p.rewards_live(now))
            .map(|p| {
                p.rewards
                    .iter()
                    .filter(|(_, (claimed, _))| !claimed)
                    .map(|(s, (_, g))| (s.clone(), g.clone()))
                    .collect()
            })
            .unwrap_or_default())
    }

    async fn claim_rewards(
        &self,
        player_keys: &PlayerKeys,
        claim: &Claim<'_>,
    ) -> Result<Vec<(String, String)>, StoreError> {
        let now = self.clock.now().timestamp();
        let mut data = self.data();
        let p = Self::player(&mut data, player_keys, now);
        if let Some(id) = claim.claim_id
            && let Some((_, answer)) = p.claims.get(id)
        {
            return Ok(answer.clone());
        }
        let mut claimed = Vec::new();
        for (source, (done, grant)) in p.rewards.iter_mut() {
            if !*done {
                *done = true;
                claimed.push((source.clone(), grant.clone()));
            }
        }
        if let Some(id) = claim.claim_id {
            p.claims
                .insert(id.to_owned(), (claim.period, claimed.clone()));
        }
        p.keep_rewards_at_least(now, claim.ttl_secs);
        if let Some((spec, head)) = claim.logged
            && !claimed.is_empty()
        {
            let rewards: Vec<_> = claimed
                .iter()
                .map(|(source, grant)| serde_json::json!({"source": source, "grant": grant}))
                .collect();
            let body = [format!(
                "{head}{}}}",
                serde_json::json!({"rewards": rewards})
            )];
            let appends = Appends {
                spec,
                bodies: &body,
            };
            self.append_events(&mut data, &player_keys.events(), &appends);
        }
        Ok(claimed)
    }
}
