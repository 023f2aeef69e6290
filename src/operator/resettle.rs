//! Re-settling a closed bracket (`leaguekit resettle`, `POST
//! /v1/periods/{id}/tiers/{tier}/brackets/{n}/resettle`): the bracket is settled again
//! without the excluded players, by the pure rule of [`crate::rollover::resettle`].
//!
//! The steps, each atomic on one slot and idempotent, so a run repeated, concurrent
//! or resumed after a crash ends in the same state and grants every change once:
//!
//! 1. record the exclusions (bracket slot): a new version when they grow, with the
//!    time, actor and reason; the outcomes as closed are copied first, once;
//! 2. from the whole record (every version, whoever began it), record the latest
//!    version's outcomes and marks (bracket slot; never an older version over a newer);
//! 3. grant each version's new rewards under a source of its own (player slots, once
//!    each, never a revoked one); decide each tier credit once (player slots);
//! 4. revoke what the excluded players were given (player slots), report what cannot
//!    be revoked;
//! 5. append one audit entry per excluded player and version, each a deterministic
//!    text (the log keeps one copy of an entry appended twice), then mark the version
//!    done (bracket slot).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use tracing::instrument;

use super::Operator;
use super::audit::{Actor, AuditEntry, check_text};
use crate::context::{from_millis, millis, validate_player};
use crate::error::{Error, InputError, StoreError};
use crate::events::{Event, Kind};
use crate::rollover::RewardGrant;
use crate::rollover::outcome::{self, Movement, Outcome};
use crate::rollover::resettle::{
    corrected_source, credit_for, credit_value, every_version, gains, parse_credit,
};
use crate::season::calendar::PeriodId;
use crate::store::keys::BracketKeys;
use crate::store::{Appends, Begun, CorrectionRecord, CorrectionStart, Revocation, Store};
use serde_json::json;

/// A player's outcome in the bracket, before or after the re-settlement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct OutcomeSummary {
    /// Rank in the bracket.
    pub rank: u64,
    /// Promoted, stayed or demoted.
    pub outcome: Movement,
    /// The tier after the period.
    pub next_tier: String,
    /// The reward of that rank, if any.
    pub reward: Option<String>,
}

impl From<&Outcome> for OutcomeSummary {
    fn from(o: &Outcome) -> Self {
        OutcomeSummary {
            rank: o.rank,
            outcome: o.outcome,
            next_tier: o.next_tier.clone(),
            reward: o.reward.clone(),
        }
    }
}

/// Tiers a player gains from a period on (see docs/operators.md, "Corrections after
/// close").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct TierCredit {
    /// The first period the credit applies to: the player's next placement in or
    /// after it is this many tiers higher.
    pub from_period: PeriodId,
    /// Tiers gained.
    pub steps: u64,
}

/// What a re-settlement changed for one player.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PlayerCorrection {
    /// The player.
    pub player: String,
    /// Whether the player is excluded.
    pub excluded: bool,
    /// Their outcome as the bracket closed.
    pub before: OutcomeSummary,
    /// Their outcome now.
    pub after: OutcomeSummary,
    /// Rewards the corrections grant them (each once, whoever ran it).
    pub granted: Vec<RewardGrant>,
    /// Rewards taken back from them (they were still pending).
    pub revoked: Vec<RewardGrant>,
    /// What they were given and cannot be taken back (a claimed reward, a placement
    /// already made in the tier of a promotion they lose).
    pub not_revocable: Vec<String>,
    /// Tier credits: the promotion reaches them from a later period, because they were
    /// already placed in the next one.
    pub tier_credits: Vec<TierCredit>,
}

/// What [`Operator::resettle`] did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ResettleReport {
    /// The period.
    pub period: PeriodId,
    /// The tier (a cohort's: `tier@cohort`).
    pub tier: String,
    /// The bracket.
    pub bracket: u32,
    /// The bracket's correction version: 1 for its first re-settlement, one more each
    /// time the exclusions grew.
    pub version: u64,
    /// Whether this call excluded a player not excluded before (`false`: the same
    /// exclusions again, which change nothing).
    pub changed: bool,
    /// Every player excluded so far (exclusions accumulate), sorted.
    pub excluded: Vec<String>,
    /// Rewards this call granted (0 when an earlier run had granted them all).
    pub granted_now: u64,
    /// Every player whose outcome differs from the one the bracket closed with, by
    /// their rank now.
    pub players: Vec<PlayerCorrection>,
}

impl<S: Store> Operator<S> {
    /// Settles the closed bracket `bracket` of `tier` in `period` again without the
    /// players of `exclude` (and those of earlier re-settlements of it: exclusions
    /// accumulate), and records the action in the audit log. See the module's
    /// documentation and docs/operators.md, "Corrections after close".
    ///
    /// Refused with a typed error, writing nothing, for an unknown period, tier or
    /// bracket, a bracket not closed yet, no player to exclude, a player not on the
    /// bracket's closed board, or exclusions that would leave nobody.
    #[instrument(skip(self, actor, reason), err(level = "debug"))]
    pub async fn resettle(
        &self,
        actor: &Actor,
        period: PeriodId,
        tier: &str,
        bracket: u32,
        exclude: &[String],
        reason: &str,
    ) -> Result<ResettleReport, Error> {
        check_text("reason", reason)?;
        if exclude.is_empty() {
            return Err(InputError::NoExclusions.into());
        }
        for p in exclude {
            validate_player(p)?;
        }
        self.ctx.period(period)?;
        let Some((tier_index, _)) = self.ctx.season().tier_by_any_name(tier) else {
            return Err(InputError::UnknownTier {
                tier: tier.to_owned(),
                known: self.ctx.tier_names(),
            }
            .into());
        };
        if bracket == 0 {
            return Err(InputError::BadBracket { bracket }.into());
        }
        self.ctx.check_layout().await?;
        let bk = self.ctx.keys().bracket(period, tier, bracket);
        let record = self.ctx.store().correction(&bk).await?;
        let closed = decoded(record.closed_outcomes());
        if !record.closed || closed.is_empty() {
            return Err(self.not_there(period, tier, bracket, record.closed).await);
        }
        for p in exclude {
            if !closed.iter().any(|o| &o.player == p) {
                return Err(InputError::NotInBracket {
                    player: p.clone(),
                    period,
                    tier: tier.to_owned(),
                    bracket,
                }
                .into());
            }
        }
        let players = closed.len() as u64;
        let mut all: BTreeSet<&str> = record
            .versions
            .iter()
            .flat_map(|v| v.excluded.iter().map(String::as_str))
            .collect();
        all.extend(exclude.iter().map(String::as_str));
        if all.len() as u64 >= players {
            return Err(InputError::ExcludesEveryone { players }.into());
        }
        let now = self.ctx.now().await?;
        let start = CorrectionStart {
            exclude,
            players,
            at_ms: millis(now),
            actor: actor.name(),
            reason,
        };
        // The re-settlement logs into a closed period's bracket: webhook delivery must
        // look at it again.
        self.ctx.mark_for_delivery(&[period]).await?;
        let changed = match self.ctx.store().begin_correction(&bk, &start).await? {
            Begun::NotClosed => return Err(self.not_there(period, tier, bracket, false).await),
            Begun::Everyone => return Err(InputError::ExcludesEveryone { players }.into()),
            Begun::Version { created, .. } => created,
        };
        // The whole record, read after this call's step: every version (those of
        // concurrent or crashed runs included) is completed below.
        let record = self.ctx.store().correction(&bk).await?;
        let mut report = self
            .complete(&bk, period, tier, tier_index, bracket, &record)
            .await?;
        report.changed = changed;
        Ok(report)
    }

    /// The error for a bracket that is not closed, or not there at all.
    async fn not_there(&self, period: PeriodId, tier: &str, bracket: u32, closed: bool) -> Error {
        let joined = match self
            .ctx
            .store()
            .joined(&self.ctx.keys().period(period))
            .await
        {
            Ok(j) => j,
            Err(e) => return e.into(),
        };
        let caps = self.ctx.season().caps();
        let brackets = joined
            .iter()
            .find(|(t, _)| t == tier)
            .map_or(0, |(_, j)| j.brackets(caps));
        if closed || u64::from(bracket) > brackets {
            return InputError::UnknownBracket {
                period,
                tier: tier.to_owned(),
                bracket,
                brackets,
            }
            .into();
        }
        InputError::BracketNotClosed {
            period,
            tier: tier.to_owned(),
            bracket,
        }
        .into()
    }

    /// Completes every version of the bracket's correction record; answers what the
    /// latest one changed.
    async fn complete(
        &self,
        bk: &BracketKeys,
        period: PeriodId,
        tier: &str,
        tier_index: usize,
        bracket: u32,
        record: &CorrectionRecord,
    ) -> Result<ResettleReport, Error> {
        let season = self.ctx.season();
        let closed = decoded(record.closed_outcomes());
        let versions: Vec<Vec<String>> =
            record.versions.iter().map(|v| v.excluded.clone()).collect();
        let last = versions.len() as u64;
        let all = every_version(season, tier_index, &closed, &versions);
        let excluded: BTreeSet<String> = versions.iter().flatten().cloned().collect();
        let latest = all.last().map(Vec::as_slice).unwrap_or_default();

        // Step 2: the latest outcomes, and who each version corrected.
        let marks = marks(&all);
        let mut text = String::new();
        let mut spans = Vec::with_capacity(latest.len());
        for o in latest {
            let start = text.len();
            outcome::encode_into(&mut text, o);
            spans.push(start..text.len());
        }
        let encoded: Vec<(&str, &str)> = latest
            .iter()
            .zip(spans)
            .map(|(o, span)| (o.player.as_str(), &text[span]))
            .collect();
        let marked: Vec<(&str, u64)> = marks.iter().map(|(p, v)| (p.as_str(), *v)).collect();
        let spec = self.ctx.log_spec();
        let bodies = match spec {
            Some(_) => resettled_events(
                &season.name,
                (period, tier, bracket),
                last,
                record.versions.last().map_or(0, |v| v.at_ms),
                latest,
                &marks,
            ),
            None => Vec::new(),
        };
        self.ctx
            .store()
            .apply_correction(
                bk,
                last,
                &encoded,
                &marked,
                spec.map(|spec| Appends {
                    spec,
                    bodies: &bodies,
                }),
            )
            .await?;

        // Step 3: each version's new rewards and tier credits.
        let source = format!("{period}/{tier}/{bracket}");
        let ttl = season.retention.player_ttl.as_secs().max(1);
        let original: BTreeMap<&str, &Outcome> =
            all[0].iter().map(|o| (o.player.as_str(), o)).collect();
        let mut players: BTreeMap<String, PlayerCorrection> = BTreeMap::new();
        for o in latest {
            let Some(before) = original.get(o.player.as_str()) else {
                continue;
            };
            if *before != o || excluded.contains(&o.player) {
                players.insert(
                    o.player.clone(),
                    PlayerCorrection {
                        player: o.player.clone(),
                        excluded: excluded.contains(&o.player),
                        before: OutcomeSummary::from(*before),
                        after: OutcomeSummary::from(o),
                        granted: Vec::new(),
                        revoked: Vec::new(),
                        not_revocable: Vec::new(),
                        tier_credits: Vec::new(),
                    },
                );
            }
        }
        let mut granted_now = 0;
        for (player, changes) in gains(season, &all, &excluded) {
            let pk = self.ctx.keys().player(&player);
            for g in changes {
                let from = corrected_source(&source, g.version);
                if let Some(grant) = &g.grant {
                    granted_now += u64::from(
                        self.ctx
                            .store()
                            .grant_corrected(&pk, &from, grant, ttl)
                            .await?,
                    );
                    if let Some(p) = players.get_mut(&player) {
                        p.granted.push(RewardGrant {
                            source: from.clone(),
                            grant: grant.clone(),
                        });
                    }
                }
                if g.steps > 0 {
                    // Decided after the corrected outcomes are recorded: a placement
                    // made since then used them (and gets no credit). A player not
                    // placed after the period needs none (their next placement reads
                    // the corrected outcome) and nothing is recorded: a later run
                    // decides again from their state then.
                    let state = self.ctx.store().player_state(&pk).await?;
                    if state.as_ref().is_some_and(|s| s.period > period) {
                        let credit =
                            credit_for(season, period, &g.next_tier, g.steps, state.as_ref());
                        let decided = self
                            .ctx
                            .store()
                            .decide_credit(&pk, &format!("t:{from}"), &credit_value(credit), ttl)
                            .await?;
                        if let (Some((from_period, steps)), Some(p)) =
                            (parse_credit(&decided), players.get_mut(&player))
                        {
                            p.tier_credits.push(TierCredit { from_period, steps });
                        }
                    }
                }
            }
        }

        // Step 4: what the excluded players were given.
        for (i, v) in record.versions.iter().enumerate() {
            for player in &v.excluded {
                if let Some(p) = players.get_mut(player) {
                    self.take_back(p, &all, i + 1, &source, period, ttl).await?;
                }
            }
        }

        // Step 5: the audit log, then the done mark.
        for (i, v) in record.versions.iter().enumerate() {
            let n = i as u64 + 1;
            // Who this version moved or rewarded differently (ranks below an excluded
            // player all shift; the log says so without listing them).
            let changed: Vec<serde_json::Value> = all[i + 1]
                .iter()
                .filter(|o| {
                    all[i]
                        .iter()
                        .find(|b| b.player == o.player)
                        .is_none_or(|b| {
                            (b.outcome, &b.next_tier, &b.reward)
                                != (o.outcome, &o.next_tier, &o.reward)
                        })
                })
                .map(|o| serde_json::json!({"player": o.player, "after": OutcomeSummary::from(o)}))
                .collect();
            for player in &v.excluded {
                let entry = AuditEntry {
                    id: format!("resettle-{period}-{tier}-{bracket}-v{n}-{player}"),
                    at: from_millis(v.at_ms),
                    actor: v.actor.clone(),
                    action: "resettle".to_owned(),
                    player: Some(player.clone()),
                    reason: Some(v.reason.clone()),
                    details: serde_json::json!({
                        "period": period,
                        "tier": tier,
                        "bracket": bracket,
                        "version": n,
                        "excluded": v.excluded,
                        "changed": changed,
                    }),
                    recorded_at: None,
                };
                self.append_entry(&entry).await?;
            }
        }
        self.ctx.store().finish_correction(bk, last).await?;
        let mut players: Vec<PlayerCorrection> = players.into_values().collect();
        players.sort_by_key(|p| p.after.rank);
        Ok(ResettleReport {
            period,
            tier: tier.to_owned(),
            bracket,
            version: last,
            changed: false,
            excluded: excluded.into_iter().collect(),
            granted_now,
            players,
        })
    }

    /// Revokes what an excluded player was given by the bracket (its reward at the
    /// close, and those of the versions before `excluded_at`, the version that
    /// excluded them), and reports what cannot be revoked.
    async fn take_back(
        &self,
        p: &mut PlayerCorrection,
        all: &[Vec<Outcome>],
        excluded_at: usize,
        source: &str,
        period: PeriodId,
        ttl: u64,
    ) -> Result<(), Error> {
        let pk = self.ctx.keys().player(&p.player);
        let player = p.player.clone();
        let find = |v: usize| all.get(v)?.iter().find(|o| o.player == player);
        let tier_of = |name: &str| {
            self.ctx
                .season()
                .tier_by_any_name(name)
                .map_or(0, |(i, _)| i)
        };
        let mut given: Vec<(String, String)> = Vec::new();
        let mut credited: Vec<String> = Vec::new();
        if let Some(r) = find(0).and_then(|o| o.reward.clone()) {
            given.push((source.to_owned(), r));
        }
        for v in 1..excluded_at {
            let (Some(prev), Some(now)) = (find(v - 1), find(v)) else {
                continue;
            };
            if let Some(r) = &now.reward
                && prev.reward.as_ref() != Some(r)
            {
                given.push((corrected_source(source, v as u64), r.clone()));
            }
            if tier_of(&now.next_tier) > tier_of(&prev.next_tier) {
                credited.push(format!("t:{}", corrected_source(source, v as u64)));
            }
        }
        for (from, grant) in given {
            match self.ctx.store().revoke_reward(&pk, &from, ttl).await? {
                Revocation::Revoked => p.revoked.push(RewardGrant {
                    source: from,
                    grant,
                }),
                Revocation::Claimed => p
                    .not_revocable
                    .push(format!("reward {grant:?} ({from}) was already claimed")),
                _ => {}
            }
        }
        // A credit not decided yet never will be; one decided stays.
        for field in credited {
            let decided = self
                .ctx
                .store()
                .decide_credit(&pk, &field, &credit_value(None), ttl)
                .await?;
            if let Some((from, steps)) = parse_credit(&decided) {
                p.not_revocable.push(format!(
                    "a tier credit of {steps} from period {from} was recorded before the exclusion"
                ));
            }
        }
        if p.before.outcome == Movement::Promoted
            && let Some(state) = self.ctx.store().player_state(&pk).await?
            && state.period > period
        {
            p.not_revocable.push(format!(
                "already placed in period {} in tier {:?} after the promotion",
                state.period,
                crate::season::split_group(&state.tier).0
            ));
        }
        Ok(())
    }

    /// Appends an entry whose text is the same whoever appends it: the log keeps one.
    async fn append_entry(&self, entry: &AuditEntry) -> Result<(), Error> {
        let text = serde_json::to_string(entry)
            .map_err(|e| StoreError::Protocol(format!("cannot encode the audit entry: {e}")))?;
        self.append_text(&text).await?;
        Ok(())
    }
}

/// The outcomes of `(player, encoded)` pairs (those leaguekit did not write left
/// out), by rank.
fn decoded(pairs: &[(String, String)]) -> Vec<Outcome> {
    let mut out: Vec<Outcome> = pairs
        .iter()
        .filter_map(|(p, s)| outcome::decode(p, s))
        .collect();
    out.sort_by(|a, b| (a.rank, &a.player).cmp(&(b.rank, &b.player)));
    out
}

/// Each player whose latest outcome differs from the one at the close, with the last
/// version that changed it.
/// The `player.resettled` event of each marked player (`marks`, in their order): their
/// outcome in the `version` recorded, at the version's time.
fn resettled_events(
    season: &str,
    (period, tier, bracket): (PeriodId, &str, u32),
    version: u64,
    at_ms: i64,
    latest: &[Outcome],
    marks: &[(String, u64)],
) -> Vec<String> {
    marks
        .iter()
        .map(|(player, _)| {
            let o = latest.iter().find(|o| &o.player == player);
            Event::new(Kind::PlayerResettled, season, period, at_ms)
                .player(player)
                .bracket(tier, bracket)
                .data(json!({
                    "version": version,
                    "rank": o.map(|o| o.rank),
                    "outcome": o.map(|o| o.outcome),
                    "next_tier": o.map(|o| o.next_tier.as_str()),
                }))
                .body()
        })
        .collect()
}

fn marks(all: &[Vec<Outcome>]) -> Vec<(String, u64)> {
    let Some(latest) = all.last() else {
        return Vec::new();
    };
    let find = |v: usize, p: &str| all[v].iter().find(|o| o.player == p);
    let mut out = Vec::new();
    for o in latest {
        if find(0, &o.player) == Some(o) {
            continue;
        }
        let changed = (1..all.len())
            .rev()
            .find(|&v| find(v, &o.player) != find(v - 1, &o.player))
            .unwrap_or(all.len() - 1);
        out.push((o.player.clone(), changed as u64));
    }
    out
}
