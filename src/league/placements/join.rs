//! Joins: a player is placed in a bracket of their tier, counted by the period's
//! counter (HINCRBY; bracket = ceil(n / size), or the late-seat rule of
//! `season/seats.rs`), entered on the bracket's board and
//! recorded in their league state. Their tier is their last outcome's next tier,
//! with the idle policy for periods skipped.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::Serialize;
use tracing::instrument;

use crate::error::{Error, InputError, StoreError};
use crate::operator::bans::holding;
use crate::rollover::outcome::{LastOutcome, Outcome, RewardGrant};
use crate::season::JoinPolicy;
use crate::season::calendar::{Period, PeriodId};
use crate::store::{Appends, BoardEntry, Entered, JoinRequest, PlayerState, Store};

use super::Placements;
use crate::context::{Placed, normalize_time, validate_player};

/// Where a player is placed for a period.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Placement {
    /// The player.
    pub player: String,
    /// The period id.
    pub period: PeriodId,
    /// The tier name.
    pub tier: String,
    /// The cohort the player is placed in for the period (absent without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cohort: Option<String>,
    /// The bracket number, from 1 (within the tier's cohort).
    pub bracket: u32,
    /// On the reply that placed the player in this period: their result in the last
    /// period they played (`null` for a new player, or if that result has expired).
    /// `null` on every later reply for the period.
    pub last: Option<LastOutcome>,
    /// On the reply that placed the player in this period: their rewards not yet
    /// claimed (so the game can offer them at once). `null` on every later reply.
    pub pending_rewards: Option<Vec<RewardGrant>>,
}

/// Options of [`crate::League::join_with`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct JoinOptions {
    /// The event's time; defaults to now.
    pub at: Option<DateTime<Utc>>,
    /// The cohort to be placed in (a label of the season's `[cohorts]`); defaults to
    /// the cohort of the player's last placement. Ignored once the player is placed
    /// in the period: a player keeps their cohort for the period.
    pub cohort: Option<String>,
}

impl JoinOptions {
    /// Sets the event time.
    pub fn at(mut self, at: DateTime<Utc>) -> Self {
        self.at = Some(at);
        self
    }

    /// Sets the cohort.
    pub fn cohort(mut self, cohort: impl Into<String>) -> Self {
        self.cohort = Some(cohort.into());
        self
    }
}

/// What a player placed in a new period is told once: their previous result and
/// their pending rewards ([`Placement::last`], [`Placement::pending_rewards`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Welcome {
    pub(super) last: Option<LastOutcome>,
    pub(super) pending_rewards: Vec<RewardGrant>,
}

impl Welcome {
    /// The reply fields: both `None` unless this call placed the player.
    pub(crate) fn fields(
        welcome: Option<Welcome>,
    ) -> (Option<LastOutcome>, Option<Vec<RewardGrant>>) {
        match welcome {
            Some(w) => (w.last, Some(w.pending_rewards)),
            None => (None, None),
        }
    }
}

impl<S: Store> Placements<S> {
    /// The tier a player joins in `period`: the lowest for a new player; otherwise
    /// the next tier of their last outcome (computed on the spot if the rollover has
    /// not reached their bracket yet), then the idle policy for each period skipped.
    /// With `close`, an unclosed previous bracket is closed on the spot (refused with
    /// [`InputError::StillClosing`] until its period may close by the league clock).
    pub(crate) async fn next_tier(
        &self,
        player: &str,
        state: Option<&PlayerState>,
        period: PeriodId,
        close: Option<DateTime<Utc>>,
    ) -> Result<String, Error> {
        Ok(self
            .next_tier_and_last(player, state, period, close)
            .await?
            .0)
    }

    /// [`Placements::next_tier`], and the outcome of the last period played when it was
    /// read on the way.
    pub(crate) async fn next_tier_and_last(
        &self,
        player: &str,
        state: Option<&PlayerState>,
        period: PeriodId,
        close: Option<DateTime<Utc>>,
    ) -> Result<(String, Option<LastOutcome>), Error> {
        let Some(s) = state else {
            return Ok((self.ctx.tier_name(0), None));
        };
        let Some((index, _)) = self.ctx.season().tier_by_any_name(&s.tier) else {
            // The tier was removed from the season: start again at the bottom.
            return Ok((self.ctx.tier_name(0), None));
        };
        if s.period >= period {
            let (tier, _) = crate::season::split_group(&s.tier);
            return Ok((tier.to_owned(), None));
        }
        let last = async {
            match close {
                Some(now) => {
                    self.rollover
                        .outcome_in(s.period, &s.tier, s.bracket, player, now)
                        .await
                }
                None => {
                    self.rollover
                        .peek_outcome(s.period, index, &s.tier, s.bracket, player)
                        .await
                }
            }
        };
        // Tier credits of re-settlements made after the player's next placement
        // (docs/operators.md, "Corrections after close"), read beside the outcome.
        let (last, credit) =
            futures::join!(last, self.rollover.tier_credit(player, s.period, period));
        let (last, credit) = (last?, credit?);
        let (base, skipped) = match &last {
            Some(o) => (
                self.ctx
                    .season()
                    .tier_by_any_name(&o.next_tier)
                    .map_or(index, |(i, _)| i),
                period - s.period - 1,
            ),
            // Never reached the board (or its record has expired): the period counts
            // as skipped.
            None => (index, period - s.period),
        };
        let last = last.map(|o: Outcome| LastOutcome {
            period: s.period,
            tier: crate::season::split_group(&s.tier).0.to_owned(),
            cohort: crate::season::split_group(&s.tier).1.map(str::to_owned),
            bracket: s.bracket,
            rank: o.rank,
            score: o.score,
            outcome: o.outcome,
            next_tier: o.next_tier,
            reward: o.reward,
        });
        let tier = self.ctx.season().tier_after_skipping(base, skipped);
        let top = self.ctx.season().tiers.len().saturating_sub(1);
        let tier = tier
            .saturating_add(usize::try_from(credit).unwrap_or(usize::MAX))
            .min(top);
        Ok((self.ctx.tier_name(tier), last))
    }

    /// Refuses to place a player in `period` when their state is of a later period:
    /// their tier there was decided without this one, so an outcome here would be
    /// lost to the ladder (or, if counted, contradict the tier they already play).
    pub(crate) fn check_not_placed_later(
        &self,
        player: &str,
        state: Option<&PlayerState>,
        period: PeriodId,
    ) -> Result<(), Error> {
        match state {
            Some(s) if s.period > period => Err(InputError::PlacedLater {
                player: player.to_owned(),
                period,
                later: s.period,
            }
            .into()),
            _ => Ok(()),
        }
    }

    /// Places `player` in a bracket of their tier for the period of `at` (default now).
    /// Joining again returns the same bracket.
    pub async fn join(&self, player: &str, at: Option<DateTime<Utc>>) -> Result<Placement, Error> {
        self.join_with(player, JoinOptions { at, cohort: None })
            .await
    }

    /// [`crate::League::join`] with options: the time and the cohort.
    #[instrument(skip(self), err(level = "debug"))]
    pub async fn join_with(&self, player: &str, options: JoinOptions) -> Result<Placement, Error> {
        match self.join_once(player, &options).await {
            Err(e) if self.ctx.clock_contradicted(options.at.is_none(), &e) => {
                self.join_once(player, &options).await
            }
            result => result,
        }
    }

    /// [`crate::League::join_with`], stamped once.
    async fn join_once(&self, player: &str, options: &JoinOptions) -> Result<Placement, Error> {
        validate_player(player)?;
        self.ctx.validate_cohort(options.cohort.as_deref())?;
        let now = self.ctx.now().await?;
        let at = normalize_time(options.at.unwrap_or(now));
        let period = self.ctx.period_at(Some(at))?;
        self.ctx.check_time(&period, at, now, false)?;
        self.check_cached_join(player, period.id).await?;
        let (placed, welcome) = self
            .place(player, &period, at, now, options.cohort.as_deref())
            .await
            .map_err(as_join)?;
        let (last, pending_rewards) = Welcome::fields(welcome);
        let (tier, cohort) = crate::season::split_group(placed.tier());
        Ok(Placement {
            player: player.to_owned(),
            period: period.id,
            tier: tier.to_owned(),
            cohort: cohort.map(str::to_owned),
            bracket: placed.bracket(),
            last,
            pending_rewards,
        })
    }

    /// The error of a refused join.
    pub(crate) fn join_error(
        &self,
        e: StoreError,
        player: &str,
        period: &Period,
        at: DateTime<Utc>,
    ) -> Error {
        match e {
            StoreError::Banned { until_ms } => InputError::Banned {
                player: player.to_owned(),
                until: until_ms.map(crate::context::from_millis),
            }
            .into(),
            StoreError::PeriodClosed => InputError::PeriodClosed { period: period.id }.into(),
            StoreError::Time(why) => self.ctx.time_error(why, period, at),
            other => other.into(),
        }
    }

    /// Places the player (or finds their placement) in `period`, alone (see
    /// [`Placements::place`] for the gathered path). The [`Welcome`] is there when this
    /// call placed them: their stored state was of an earlier period.
    pub(crate) async fn place_one(
        &self,
        player: &str,
        period: &Period,
        at: DateTime<Utc>,
        now: DateTime<Utc>,
        cohort: Option<&str>,
    ) -> Result<(Arc<Placed>, Option<Welcome>), Error> {
        if let Some(hit) = self.cached(player, period.id) {
            return Ok((hit, None));
        }
        // Once per process: data of another key layout is refused, nothing written.
        self.ctx.check_layout().await?;
        let pkeys = self.ctx.keys().player(player);
        // State, profile and pending rewards in one round trip (one slot).
        let snapshot = self.ctx.store().player_snapshot(&pkeys).await?;
        if let Some(ban) = holding(snapshot.ban.as_deref(), now)? {
            return Err(ban.refusal());
        }
        let state = snapshot.state;
        self.check_not_placed_later(player, state.as_ref(), period.id)?;
        let profile = self
            .ctx
            .profile_json_of(&snapshot.profile.0, snapshot.profile.1);
        let fresh = state.as_ref().is_none_or(|s| s.period < period.id);
        let (tier, last) = self
            .next_tier_and_last(player, state.as_ref(), period.id, Some(now))
            .await?;
        // The tier's boards of the player's cohort: a counter and brackets of their own.
        let cohort = self
            .ctx
            .cohort_for(cohort, state.as_ref().map(|s| s.tier.as_str()));
        let tier = crate::season::board_group(&tier, cohort.as_deref());
        let size = self.ctx.season().brackets.size;
        let ttl = self.ctx.ttl_secs(period.id);
        let mut replace_full = None;
        let mut skip = 0u32;
        // A bracket is found full only after the store lost data under running game
        // servers (its counter restarted while its board survived); each pass moves
        // the player past a full bracket and twice as many after it as the pass
        // before, so 24 passes get past millions of surviving brackets.
        for _ in 0..24 {
            let request = JoinRequest {
                player,
                tier: &tier,
                size,
                time: self.ctx.time_check(period, at),
                replace_full,
                skip,
                ttl_secs: ttl,
                late: self.ctx.late_join(period),
            };
            let joined = self
                .ctx
                .store()
                .join(&self.period_keys(period.id), &request)
                .await
                .map_err(|e| self.join_error(e, player, period, at))?;
            let placed = self.placed(period.id, &joined.tier, joined.bracket);
            // The board entry (the bracket's slot) and the state record (the player's)
            // go together: one round trip for both. A bracket found full (lost data)
            // is left for the next pass, whose state record, of the same period,
            // replaces this one. Both steps are idempotent, so a join interrupted
            // between them is completed by the next join or score of the player.
            let state = PlayerState::new(period.id, joined.tier.clone(), joined.bracket);
            let placed_event = self.placed_events(
                period.id,
                at,
                std::iter::once((player, joined.tier.as_str(), joined.bracket)),
            );
            let entry = BoardEntry::new(placed.keys(), player, size, ttl)
                .profile(profile.as_ref().map(|(v, json)| (*v, json.as_str())))
                .placed(self.ctx.log_spec().map(|spec| Appends {
                    spec,
                    bodies: &placed_event,
                }));
            let (entered, recorded) = futures::join!(
                self.ctx.store().enter_entry(&entry),
                self.ctx.store().record_state(
                    &pkeys,
                    &state,
                    self.ctx.player_ttl_secs(period, now),
                    // Rewards of periods closed longer ago than the retention can never
                    // be granted again: their claimed entries (and old claim answers)
                    // go.
                    period
                        .id
                        .saturating_sub(u64::from(self.ctx.season().retention.periods) + 1),
                ),
            );
            match entered.map_err(|e| self.join_error(e, player, period, at))? {
                Entered::Ok => {}
                Entered::Banned(marker) => {
                    // The bracket's marker is a hint: the record decides. A ban that
                    // ended or was lifted leaves its marker, deleted here (only if no
                    // newer ban replaced it) before the entry is tried again.
                    self.lift_marker(player, period.id, placed.keys(), &marker, now)
                        .await?;
                    continue;
                }
                _ => {
                    tracing::warn!(
                        player,
                        period = period.id,
                        tier = %joined.tier,
                        bracket = joined.bracket,
                        "bracket found full (the store lost data?); placing the player anew"
                    );
                    // Past it, and past twice as many more each time: after a loss of
                    // the counters under many surviving boards, a few passes suffice.
                    if replace_full.is_some() {
                        skip = skip.saturating_mul(2).saturating_add(1);
                    }
                    replace_full = Some(joined.bracket);
                    continue;
                }
            }
            recorded?;
            if joined.new {
                crate::metrics::joined(&joined.tier);
            }
            let placed = self.remember(player, period.id, &joined.tier, joined.bracket);
            if !fresh {
                return Ok((placed, None));
            }
            // The previous bracket's reward, when it was granted after the snapshot (the
            // bracket was closed on the spot just now), is read again.
            let mut rewards = snapshot.rewards;
            if let Some(l) = &last
                && l.reward.is_some()
            {
                let source = format!("{}/", l.period);
                if !rewards.iter().any(|(s, _)| s.starts_with(&source)) {
                    rewards = self.ctx.store().rewards(&pkeys).await?;
                }
            }
            let pending_rewards = rewards
                .into_iter()
                .map(|(source, grant)| RewardGrant { source, grant })
                .collect();
            return Ok((
                placed,
                Some(Welcome {
                    last,
                    pending_rewards,
                }),
            ));
        }
        Err(StoreError::Protocol(format!(
            "could not place {player:?} in period {}: every bracket tried was full; the \
             join counters disagree with the boards",
            period.id
        ))
        .into())
    }

    /// After the board entry found a ban marker: refused if the player's ban holds
    /// at `now`, else the marker is deleted (only if it is still `marker`).
    pub(crate) async fn lift_marker(
        &self,
        player: &str,
        period: PeriodId,
        bracket: &crate::store::keys::BracketKeys,
        marker: &str,
        now: DateTime<Utc>,
    ) -> Result<(), Error> {
        self.refuse_if_banned(player, now).await?;
        self.ctx
            .store()
            .unmark_ban(
                &self.period_keys(period),
                Some(bracket),
                player,
                Some(marker),
            )
            .await?;
        Ok(())
    }

    /// A join this process would answer from its cache (it placed the player before)
    /// first checks that the player is still on their board: one who is not (banned
    /// since, or unbanned and joining again, or lost by the store) is forgotten, and
    /// the join takes the full path, which refuses a ban that holds and puts anyone
    /// else back on the board.
    pub(crate) async fn check_cached_join(
        &self,
        player: &str,
        period: PeriodId,
    ) -> Result<(), Error> {
        let Some(placed) = self.cached(player, period) else {
            return Ok(());
        };
        if self
            .ctx
            .store()
            .entry(placed.keys(), player)
            .await?
            .is_none()
        {
            self.forget(player);
        }
        Ok(())
    }

    /// Refuses with [`InputError::Banned`] if the player's ban record holds at `now`.
    pub(crate) async fn refuse_if_banned(
        &self,
        player: &str,
        now: DateTime<Utc>,
    ) -> Result<(), Error> {
        let record = self
            .ctx
            .store()
            .ban(&self.ctx.keys().player(player))
            .await?;
        match holding(record.as_deref(), now)? {
            Some(ban) => Err(ban.refusal()),
            None => Ok(()),
        }
    }

    /// Where `player` is in the period, placing them if the season joins on first score.
    /// `first_refusal` is the error of an update that an empty board refuses: a player
    /// not placed yet gets it instead of a placement, so a refused first score writes
    /// nothing.
    pub(crate) async fn placement_for_update(
        &self,
        player: &str,
        period: &Period,
        at: DateTime<Utc>,
        now: DateTime<Utc>,
        cohort: Option<&str>,
        first_refusal: Option<Error>,
    ) -> Result<(Arc<Placed>, Option<Welcome>), Error> {
        if let Some(hit) = self.cached(player, period.id) {
            return Ok((hit, None));
        }
        // Boxed: the steady state above awaits nothing, and the futures below (a join's
        // among them) would otherwise make every submit's future kilobytes larger, to
        // be moved on each call.
        Box::pin(async move {
            if let Some((tier, bracket)) = self
                .ctx
                .store()
                .placement(&self.period_keys(period.id), player)
                .await?
            {
                return Ok((self.remember(player, period.id, &tier, bracket), None));
            }
            match self.ctx.season().brackets.join {
                JoinPolicy::OnFirstScore => {
                    if let Some(refused) = first_refusal {
                        return Err(refused);
                    }
                    // A first score is a join: it must pass the join's time rules even when
                    // it carries a request id.
                    self.ctx.check_time(period, at, now, false)?;
                    self.place(player, period, at, now, cohort).await
                }
                JoinPolicy::Explicit => Err(InputError::NotJoined {
                    player: player.to_owned(),
                    period: period.id,
                }
                .into()),
            }
        })
        .await
    }
}

/// A join's error as its caller should read it: an unknown outcome of any of its
/// steps is the join's, which may simply be sent again (it has no request id).
pub(crate) fn as_join(e: Error) -> Error {
    match e {
        Error::Store(StoreError::Unknown { source, .. }) => StoreError::Unknown {
            op: "join",
            source,
            at: None,
        }
        .into(),
        other => other,
    }
}
