//! The bulk path of joins: many players placed in pipelined stages, one store call
//! per stage for the whole batch (which the Redis store sends as one pipeline per
//! hash-slot group), instead of a few round trips per player.
//!
//! The stages are those of a single join ([`crate::League::join_with`]): the players'
//! snapshots (state, profile, rewards), their tiers, the period's counter (join.lua),
//! then their board entries and state records together. Each stage is idempotent, so a batch
//! interrupted between stages is completed by any later join or score of its players,
//! exactly as a single join is. A player whose bracket is found full (possible only
//! after the store lost data) is placed again by the single path.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use futures::StreamExt;

use crate::error::{Error, StoreError};
use crate::operator::bans::holding;
use crate::season::calendar::Period;
use crate::store::{Appends, BoardEntry, Entered, JoinRequest, PlayerState, StateWrite, Store};

use super::Placements;
use super::join::{JoinOptions, Placement, Welcome};
use crate::context::{Placed, copy_error, normalize_time, validate_player};

/// Players whose previous bracket is looked at (their last outcome, a close on the
/// spot) at once during a bulk placement.
const OUTCOMES_AT_ONCE: usize = 64;

/// One join of [`crate::League::join_many`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct JoinItem {
    /// The player.
    pub player: String,
    /// The join's options (time, cohort).
    pub options: JoinOptions,
}

impl JoinItem {
    /// A join of `player` now, in their usual cohort.
    pub fn new(player: impl Into<String>) -> Self {
        JoinItem {
            player: player.into(),
            options: JoinOptions::default(),
        }
    }

    /// With these options.
    pub fn with_options(mut self, options: JoinOptions) -> Self {
        self.options = options;
        self
    }
}

/// A placement the bulk path is asked for (validated, time checked).
pub(crate) struct PlaceWant<'a> {
    player: &'a str,
    period: Period,
    at: DateTime<Utc>,
    cohort: Option<&'a str>,
}

impl<'a> PlaceWant<'a> {
    /// `player`'s placement in `period`, for an event at `at` (validated, time
    /// checked), in `cohort` if given.
    pub(crate) fn new(
        player: &'a str,
        period: Period,
        at: DateTime<Utc>,
        cohort: Option<&'a str>,
    ) -> Self {
        PlaceWant {
            player,
            period,
            at,
            cohort,
        }
    }
}

/// A placement's result: where, and the welcome when this call placed the player.
pub(crate) type PlaceResult = Result<(Arc<Placed>, Option<Welcome>), Error>;

/// One player's progress through the stages.
struct Going {
    /// Index into the wants.
    want: usize,
    keys: crate::store::keys::PlayerKeys,
    snapshot: crate::store::PlayerSnapshot,
    profile: Option<(u64, String)>,
    /// Their stored state was of an earlier period (or there was none).
    fresh: bool,
    tier: String,
    last: Option<crate::rollover::outcome::LastOutcome>,
    joined: Option<crate::store::Joined>,
}

impl<S: Store> Placements<S> {
    /// Places many players in a few pipelined stages for the whole batch, one result
    /// per item, in order: the rules and an example are [`crate::League::join_many`]'s.
    pub async fn join_many(&self, items: &[JoinItem]) -> Vec<Result<Placement, Error>> {
        self.ctx
            .league_clock()
            .restamping(
                self,
                items,
                |item| item.options.at.is_none(),
                |places, items| Box::pin(places.join_many_once(items)),
            )
            .await
    }

    /// [`crate::League::join_many`], stamped once.
    async fn join_many_once(&self, items: &[JoinItem]) -> Vec<Result<Placement, Error>> {
        let now = match self.ctx.now().await {
            Ok(now) => now,
            Err(e) => return items.iter().map(|_| Err(copy_error(&e))).collect(),
        };
        let mut results: Vec<Option<Result<Placement, Error>>> = Vec::with_capacity(items.len());
        let mut wants = Vec::new();
        let mut asked = Vec::new();
        let checked: Vec<Result<PlaceWant<'_>, Error>> = items
            .iter()
            .map(|item| -> Result<PlaceWant<'_>, Error> {
                validate_player(&item.player)?;
                self.ctx.validate_cohort(item.options.cohort.as_deref())?;
                let at = normalize_time(item.options.at.unwrap_or(now));
                let period = self.ctx.period_at(Some(at))?;
                self.ctx.check_time(&period, at, now, false)?;
                Ok(PlaceWant {
                    player: &item.player,
                    period,
                    at,
                    cohort: item.options.cohort.as_deref(),
                })
            })
            .collect();
        // Players this process placed before are checked to be still on their boards
        // (a ban elsewhere removes them), all at once: on Redis, one pipelined round
        // trip rather than one per player.
        let checked = futures::future::join_all(checked.into_iter().map(|c| async move {
            let want = c?;
            self.check_cached_join(want.player, want.period.id).await?;
            Ok(want)
        }))
        .await;
        for (i, checked) in checked.into_iter().enumerate() {
            match checked {
                Ok(want) => {
                    results.push(None);
                    wants.push(want);
                    asked.push(i);
                }
                Err(e) => results.push(Some(Err(e))),
            }
        }
        let placed = self.place_many(&wants, now).await;
        for ((i, want), result) in asked.into_iter().zip(&wants).zip(placed) {
            results[i] = Some(
                result
                    .map_err(super::join::as_join)
                    .map(|(placed, welcome)| {
                        let (last, pending_rewards) = Welcome::fields(welcome);
                        let (tier, cohort) = crate::season::split_group(placed.tier());
                        Placement {
                            player: want.player.to_owned(),
                            period: want.period.id,
                            tier: tier.to_owned(),
                            cohort: cohort.map(str::to_owned),
                            bracket: placed.bracket(),
                            last,
                            pending_rewards,
                        }
                    }),
            );
        }
        results
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err(internal("a join got no result"))))
            .collect()
    }

    /// Places (or finds the placement of) each wanted player, in stages for the whole
    /// batch. One result per want, in order.
    pub(crate) async fn place_many(
        &self,
        wants: &[PlaceWant<'_>],
        now: DateTime<Utc>,
    ) -> Vec<PlaceResult> {
        let mut results: Vec<Option<PlaceResult>> = wants.iter().map(|_| None).collect();
        // Wants the staged path does not take: a player already wanted earlier in the
        // batch (placed by the first, then found in the cache), or whose bracket was
        // found full. They go through the single path afterwards.
        let mut later = Vec::new();
        let mut seen = HashSet::new();
        let mut going = Vec::new();
        for (w, want) in wants.iter().enumerate() {
            if let Some(hit) = self.cached(want.player, want.period.id) {
                results[w] = Some(Ok((hit, None)));
            } else if !seen.insert((want.player, want.period.id)) {
                later.push(w);
            } else {
                going.push(w);
            }
        }

        // Once per process: data of another key layout is refused, nothing written.
        if !going.is_empty()
            && let Err(e) = self.ctx.check_layout().await
        {
            for &w in &going {
                results[w] = Some(Err(copy_error(&e)));
            }
            going.clear();
        }

        // Stage 1: state, profile and pending rewards of every player.
        let keys: Vec<_> = going
            .iter()
            .map(|&w| self.ctx.keys().player(wants[w].player))
            .collect();
        let key_refs: Vec<_> = keys.iter().collect();
        let snapshots = self.ctx.store().player_snapshots(&key_refs).await;
        let mut stage = Vec::with_capacity(going.len());
        for ((w, keys), snapshot) in going.into_iter().zip(keys).zip(snapshots) {
            let snapshot = snapshot.map_err(Error::from).and_then(|snapshot| {
                let want = &wants[w];
                if let Some(ban) = holding(snapshot.ban.as_deref(), now)? {
                    return Err(ban.refusal());
                }
                self.check_not_placed_later(want.player, snapshot.state.as_ref(), want.period.id)
                    .map(|()| snapshot)
            });
            match snapshot {
                Ok(snapshot) => {
                    let profile = self
                        .ctx
                        .profile_json_of(&snapshot.profile.0, snapshot.profile.1);
                    let fresh = snapshot
                        .state
                        .as_ref()
                        .is_none_or(|s| s.period < wants[w].period.id);
                    stage.push(Going {
                        want: w,
                        keys,
                        snapshot,
                        profile,
                        fresh,
                        tier: String::new(),
                        last: None,
                        joined: None,
                    });
                }
                Err(e) => results[w] = Some(Err(e)),
            }
        }

        // Stage 2: their tiers. New players need no I/O; returning ones read (or close
        // on the spot) their previous bracket, a bounded number at once.
        let stage_ref = &stage;
        let tiers: Vec<_> = futures::stream::iter(0..stage.len())
            .map(|k| async move {
                let g = &stage_ref[k];
                self.next_tier_and_last(
                    wants[g.want].player,
                    g.snapshot.state.as_ref(),
                    wants[g.want].period.id,
                    Some(now),
                )
                .await
            })
            .buffered(OUTCOMES_AT_ONCE)
            .collect()
            .await;
        let mut ready = Vec::with_capacity(stage.len());
        for (mut g, tier) in stage.into_iter().zip(tiers) {
            match tier {
                Ok((tier, last)) => {
                    let want = &wants[g.want];
                    let cohort = self.ctx.cohort_for(
                        want.cohort,
                        g.snapshot.state.as_ref().map(|s| s.tier.as_str()),
                    );
                    g.tier = crate::season::board_group(&tier, cohort.as_deref());
                    g.last = last;
                    ready.push(g);
                }
                Err(e) => results[g.want] = Some(Err(e)),
            }
        }

        // Stage 3: the period's counter, one batch per period.
        let size = self.ctx.season().brackets.size;
        let mut by_period: HashMap<u64, Vec<usize>> = HashMap::new();
        for (k, g) in ready.iter().enumerate() {
            by_period
                .entry(wants[g.want].period.id)
                .or_default()
                .push(k);
        }
        let mut by_period: Vec<_> = by_period.into_iter().collect();
        by_period.sort_unstable();
        for (period_id, members) in by_period {
            let ttl = self.ctx.ttl_secs(period_id);
            let requests: Vec<JoinRequest<'_>> = members
                .iter()
                .map(|&k| {
                    let want = &wants[ready[k].want];
                    JoinRequest {
                        player: want.player,
                        tier: &ready[k].tier,
                        size,
                        time: self.ctx.time_check(&want.period, want.at),
                        replace_full: None,
                        skip: 0,
                        ttl_secs: ttl,
                        late: self.ctx.late_join(&want.period),
                    }
                })
                .collect();
            let joined = self
                .ctx
                .store()
                .join_many(&self.period_keys(period_id), &requests)
                .await;
            drop(requests);
            for (&k, joined) in members.iter().zip(joined) {
                let want = &wants[ready[k].want];
                match joined {
                    Ok(j) => ready[k].joined = Some(j),
                    Err(e) => {
                        results[ready[k].want] =
                            Some(Err(self.join_error(e, want.player, &want.period, want.at)))
                    }
                }
            }
        }
        let ready: Vec<Going> = ready.into_iter().filter(|g| g.joined.is_some()).collect();
        // Where a ready player joined (every one of them has).
        fn joined(g: &Going) -> (&str, u32) {
            g.joined
                .as_ref()
                .map_or(("", 0), |j| (j.tier.as_str(), j.bracket))
        }

        // Stage 4: the board entries.
        let brackets: Vec<Arc<Placed>> = ready
            .iter()
            .map(|g| {
                let (tier, bracket) = joined(g);
                self.placed(wants[g.want].period.id, tier, bracket)
            })
            .collect();
        // Board TTLs, worked out once per period (a batch is nearly always one).
        let mut ttls: HashMap<u64, u64> = HashMap::new();
        // With `[events]`, each entry's player.placed event (appended only if the
        // entry places the player).
        let placed_events: Vec<Vec<String>> = match self.ctx.log_spec() {
            Some(_) => ready
                .iter()
                .map(|g| {
                    let (tier, bracket) = joined(g);
                    let want = &wants[g.want];
                    self.placed_events(
                        want.period.id,
                        want.at,
                        std::iter::once((want.player, tier, bracket)),
                    )
                })
                .collect(),
            None => Vec::new(),
        };
        let spec = self.ctx.log_spec();
        let entries: Vec<BoardEntry<'_>> = ready
            .iter()
            .zip(&brackets)
            .enumerate()
            .map(|(i, (g, placed))| {
                let period = wants[g.want].period.id;
                let ttl = *ttls
                    .entry(period)
                    .or_insert_with(|| self.ctx.ttl_secs(period));
                BoardEntry::new(placed.keys(), wants[g.want].player, size, ttl)
                    .profile(g.profile.as_ref().map(|(v, json)| (*v, json.as_str())))
                    .placed(
                        spec.zip(placed_events.get(i))
                            .map(|(spec, bodies)| Appends { spec, bodies }),
                    )
            })
            .collect();
        // Stage 5, with stage 4 (one round trip for both): the players' state records.
        // A bracket found full leaves its player to the single path, whose state
        // record (of the same period) replaces this one.
        let states: Vec<PlayerState> = ready
            .iter()
            .map(|g| {
                let (tier, bracket) = joined(g);
                PlayerState::new(wants[g.want].period.id, tier.to_owned(), bracket)
            })
            .collect();
        let writes: Vec<StateWrite<'_>> = ready
            .iter()
            .zip(&states)
            .map(|(g, state)| {
                let period = &wants[g.want].period;
                StateWrite::new(
                    &g.keys,
                    state,
                    self.ctx.player_ttl_secs(period, now),
                    period
                        .id
                        .saturating_sub(u64::from(self.ctx.season().retention.periods) + 1),
                )
                // What stage 1 read: a new player's state is created without being
                // read again, and a profile-less player's profile is left alone, as
                // is one that already lives as long as this placement (set in this
                // period).
                .found(g.snapshot.state.is_some(), g.snapshot.profile.1 != 0)
                .profile_lives_until(g.snapshot.profile_deadline)
            })
            .collect();
        let (entered, recorded) = futures::join!(
            self.ctx.store().enter_many(&entries),
            self.ctx.store().record_states(&writes)
        );
        drop(entries);
        drop(writes);
        let mut on_board = Vec::with_capacity(ready.len());
        for (((g, entered), recorded), state) in
            ready.into_iter().zip(entered).zip(recorded).zip(states)
        {
            let want = &wants[g.want];
            match entered {
                Ok(Entered::Ok) => on_board.push(((g, state), recorded)),
                Ok(_) => later.push(g.want),
                Err(e) => {
                    results[g.want] =
                        Some(Err(self.join_error(e, want.player, &want.period, want.at)))
                }
            }
        }

        for ((g, state), recorded) in on_board {
            let want = &wants[g.want];
            if let Err(e) = recorded {
                results[g.want] = Some(Err(e.into()));
                continue;
            }
            if let Some(j) = g.joined.as_ref().filter(|j| j.new) {
                crate::metrics::joined(&j.tier);
            }
            let placed = self.remember(want.player, want.period.id, &state.tier, state.bracket);
            if !g.fresh {
                results[g.want] = Some(Ok((placed, None)));
                continue;
            }
            // The previous bracket's reward, when it was granted after the snapshot
            // (the bracket was closed on the spot just now), is read again.
            let mut rewards = g.snapshot.rewards;
            if let Some(l) = &g.last
                && l.reward.is_some()
            {
                let source = format!("{}/", l.period);
                if !rewards.iter().any(|(s, _)| s.starts_with(&source)) {
                    match self.ctx.store().rewards(&g.keys).await {
                        Ok(r) => rewards = r,
                        Err(e) => {
                            results[g.want] = Some(Err(e.into()));
                            continue;
                        }
                    }
                }
            }
            let pending_rewards = rewards
                .into_iter()
                .map(|(source, grant)| crate::rollover::outcome::RewardGrant { source, grant })
                .collect();
            results[g.want] = Some(Ok((
                placed,
                Some(Welcome {
                    last: g.last,
                    pending_rewards,
                }),
            )));
        }

        // The rest, one by one: repeats of a player (now cached) and full brackets.
        later.sort_unstable();
        for w in later {
            let want = &wants[w];
            results[w] = Some(
                self.place_one(want.player, &want.period, want.at, now, want.cohort)
                    .await,
            );
        }
        results
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err(internal("a placement got no result"))))
            .collect()
    }
}

/// An error for an item a batch failed to answer (a bug, never input).
fn internal(what: &str) -> Error {
    StoreError::Protocol(format!("internal: {what}")).into()
}
