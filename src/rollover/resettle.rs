//! Re-settling a closed bracket: the pure rule, beside the outcome rule it reuses,
//! and the tier credits a re-settlement gives players who had already been placed
//! after the bracket's period.
//!
//! A re-settlement is a pure function of the season, the bracket's outcomes as it
//! closed and the excluded players (all exclusions so far: they accumulate):
//!
//! 1. The players left keep their order and take ranks 1, 2, ...; the excluded
//!    players follow them, in their order (so ranks stay unique in the outcome log).
//! 2. The quotas are those of the bracket as it closed: [`super::outcome`]'s rule step
//!    1 for its `n` players, the excluded ones included (their places are not given
//!    back to the quota), applied to the active players left as rule steps 2 and 3
//!    say (`min_players` counts the active players left).
//! 3. Nobody left loses anything: a player's movement is the better of the one they
//!    had and the new one; their reward is the one of their new rank, or the one they
//!    had when the new rank has none.
//! 4. An excluded player is not promoted (a promotion becomes a stay; a stay or a
//!    demotion is kept) and has no reward.
//!
//! Each growth of the exclusions is a version; version `v`'s outcomes are the rule
//! applied with the exclusions of versions 1 to `v`, and what changed from version
//! `v - 1` to `v` is granted under sources of its own (`period/tier/bracket/c<v>`).

use std::collections::{BTreeMap, BTreeSet};

use super::outcome::{BracketRule, Movement, Outcome, reward_for};
use crate::season::Season;
use crate::season::calendar::PeriodId;
use crate::store::PlayerState;

fn order(m: Movement) -> u8 {
    match m {
        Movement::Demoted => 0,
        Movement::Stayed => 1,
        Movement::Promoted => 2,
    }
}

/// The bracket's outcomes without `excluded`, from its outcomes as it closed
/// (`closed`, in any order), in the order of their new ranks. `tier` is the bracket's
/// tier index; a tier the season no longer has leaves the outcomes as they were.
pub fn resettled(
    season: &Season,
    tier: usize,
    closed: &[Outcome],
    excluded: &BTreeSet<String>,
) -> Vec<Outcome> {
    let mut ranked: Vec<&Outcome> = closed.iter().collect();
    ranked.sort_by(|a, b| (a.rank, &a.player).cmp(&(b.rank, &b.player)));
    let n = ranked.len() as u64;
    let (out, kept): (Vec<&Outcome>, Vec<&Outcome>) = ranked
        .into_iter()
        .partition(|o| excluded.contains(&o.player));
    let active = kept.iter().filter(|o| !o.idle).count() as u64;
    let Some(rule) = BracketRule::new(season, tier, n, active) else {
        return closed.to_vec();
    };
    let name = |i: usize| {
        season
            .tiers
            .get(i)
            .map(|t| t.name.clone())
            .unwrap_or_default()
    };
    let mut active_seen = 0;
    let mut result = Vec::with_capacity(closed.len());
    for (i, o) in kept.into_iter().enumerate() {
        let rank = i as u64 + 1;
        let active_rank = (!o.idle).then(|| {
            active_seen += 1;
            active_seen
        });
        let new = rule.movement(season, active_rank);
        let mut c = o.clone();
        c.rank = rank;
        if order(new) > order(o.outcome) {
            c.outcome = new;
            c.next_tier = name(rule.next_tier(new));
        }
        if !o.idle
            && let Some(r) = reward_for(season, tier, rank)
        {
            c.reward = Some(r.to_owned());
        }
        result.push(c);
    }
    let left = result.len() as u64;
    for (i, o) in out.into_iter().enumerate() {
        let mut c = o.clone();
        c.rank = left + i as u64 + 1;
        c.reward = None;
        if o.outcome == Movement::Promoted {
            c.outcome = Movement::Stayed;
            c.next_tier = name(tier);
        }
        result.push(c);
    }
    result
}

/// The outcomes of every version: index 0 the bracket as it closed (by rank), index
/// `v` the rule applied with the exclusions of versions 1 to `v` (`versions[v - 1]`
/// is what version `v` added).
pub fn every_version(
    season: &Season,
    tier: usize,
    closed: &[Outcome],
    versions: &[Vec<String>],
) -> Vec<Vec<Outcome>> {
    let mut first = closed.to_vec();
    first.sort_by(|a, b| (a.rank, &a.player).cmp(&(b.rank, &b.player)));
    let mut all = vec![first];
    let mut excluded = BTreeSet::new();
    for added in versions {
        excluded.extend(added.iter().cloned());
        all.push(resettled(season, tier, closed, &excluded));
    }
    all
}

/// What one version changed for one player who is not excluded in the end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gain {
    /// The version.
    pub version: u64,
    /// The player's next tier by the version's outcome.
    pub next_tier: String,
    /// The reward the version grants (its rank earns a reward other than the one the
    /// player had).
    pub grant: Option<String>,
    /// Tiers gained by the version's movement.
    pub steps: u64,
}

/// Per player not in `excluded` (the exclusions of every version), what each version
/// changed for them, in version order (versions that changed nothing left out).
pub fn gains(
    season: &Season,
    all: &[Vec<Outcome>],
    excluded: &BTreeSet<String>,
) -> BTreeMap<String, Vec<Gain>> {
    let tier_of = |name: &str| season.tier_by_any_name(name).map_or(0, |(i, _)| i);
    let mut out: BTreeMap<String, Vec<Gain>> = BTreeMap::new();
    for (v, pair) in all.windows(2).enumerate() {
        let before: BTreeMap<&str, &Outcome> =
            pair[0].iter().map(|o| (o.player.as_str(), o)).collect();
        for o in &pair[1] {
            if excluded.contains(&o.player) {
                continue;
            }
            let Some(prev) = before.get(o.player.as_str()) else {
                continue;
            };
            let grant = o.reward.clone().filter(|r| prev.reward.as_ref() != Some(r));
            let steps =
                (tier_of(&o.next_tier) as u64).saturating_sub(tier_of(&prev.next_tier) as u64);
            if grant.is_some() || steps > 0 {
                out.entry(o.player.clone()).or_default().push(Gain {
                    version: v as u64 + 1,
                    next_tier: o.next_tier.clone(),
                    grant,
                    steps,
                });
            }
        }
    }
    out
}

/// The source of what version `version` of bracket `source` (`period/tier/bracket`)
/// grants: `period/tier/bracket/c<version>`.
pub fn corrected_source(source: &str, version: u64) -> String {
    format!("{source}/c{version}")
}

/// A tier credit decision as recorded: `from|steps` (from period `from` on), or `-`
/// (none needed: the player had not been placed after the bracket's period, so their
/// next placement reads the corrected outcome).
pub fn credit_value(credit: Option<(PeriodId, u64)>) -> String {
    match credit {
        Some((from, steps)) => format!("{from}|{steps}"),
        None => "-".to_owned(),
    }
}

/// A recorded decision: `Some((from, steps))`, or `None` for `-` (or a value
/// leaguekit did not write).
pub fn parse_credit(value: &str) -> Option<(PeriodId, u64)> {
    let (from, steps) = value.split_once('|')?;
    Some((from.parse().ok()?, steps.parse().ok()?))
}

/// The tier credit a version's promotion (`steps` tiers, to `next_tier`, in the
/// bracket of period `period`) gives a player whose league state is `state`:
///
/// - not placed after `period` (or no state): none; their next placement reads the
///   corrected outcome;
/// - placed after it, and that first placement (`state`, or the placement before it
///   when that one is after `period` too: then it is not known and counts as not
///   corrected) is in the tier the corrected outcome gives (after the periods skipped
///   in between): none, it read the corrected outcome;
/// - otherwise `steps` from the period after their latest placement.
pub fn credit_for(
    season: &Season,
    period: PeriodId,
    next_tier: &str,
    steps: u64,
    state: Option<&PlayerState>,
) -> Option<(PeriodId, u64)> {
    let s = state.filter(|s| s.period > period)?;
    let first_after = match &s.previous {
        Some((p, _, _)) if *p > period => None,
        _ => Some((s.period, s.tier.as_str())),
    };
    let corrected = first_after.is_some_and(|(placed, tier)| {
        let index = season.tier_by_any_name(next_tier).map(|(i, _)| i);
        let placed_index = season.tier_by_any_name(tier).map(|(i, _)| i);
        index.is_some_and(|i| {
            Some(season.tier_after_skipping(i, placed - period - 1)) == placed_index
        })
    });
    (!corrected).then_some((s.period + 1, steps))
}

/// Tiers a player gains at their placement in `period` from state `last` (the period
/// of their latest placement before it): the credits from a period after `last` and
/// up to `period`. So each credit counts at exactly one placement: the player's first
/// in or after its period.
pub fn credited(credits: &[(String, String)], last: PeriodId, period: PeriodId) -> u64 {
    credits
        .iter()
        .filter_map(|(_, v)| parse_credit(v))
        .filter(|(from, _)| last < *from && *from <= period)
        .map(|(_, steps)| steps)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn season() -> Season {
        Season::from_toml(
            r#"
name = "t"
key_prefix = "t"
[schedule]
timezone = "UTC"
period = "daily"
start = "2026-01-05T00:00:00Z"
[brackets]
size = 10
[scoring]
mode = "best"
max_score = 1000
[[tiers]]
name = "bronze"
promote = "20%"
demote = 0
rewards = [{ ranks = "1", grant = "gold" }, { ranks = "2", grant = "silver" }]
[[tiers]]
name = "silver"
promote = 0
demote = "20%"
"#,
            "t.toml",
        )
        .expect("season")
    }

    fn closed(n: u64) -> Vec<Outcome> {
        let s = season();
        let board: Vec<(String, u64)> = (0..n)
            .map(|i| {
                (
                    format!("p{i}"),
                    s.packing.pack(1000 - i * 10, 1).expect("packs"),
                )
            })
            .collect();
        super::super::outcome::bracket_outcomes(&s, 0, &board)
    }

    #[test]
    fn the_runner_up_takes_the_excluded_winners_place() {
        let s = season();
        let before = closed(10);
        assert_eq!(before[0].outcome, Movement::Promoted);
        assert_eq!(before[2].outcome, Movement::Stayed);
        let ex: BTreeSet<String> = ["p0".to_owned()].into();
        let after = resettled(&s, 0, &before, &ex);
        let by: BTreeMap<&str, &Outcome> = after.iter().map(|o| (o.player.as_str(), o)).collect();
        // The quota stays that of 10 players: two promotions.
        assert_eq!(by["p1"].rank, 1);
        assert_eq!(by["p1"].reward.as_deref(), Some("gold"));
        assert_eq!(by["p2"].outcome, Movement::Promoted);
        assert_eq!(by["p2"].next_tier, "silver");
        assert_eq!(by["p2"].reward.as_deref(), Some("silver"));
        assert_eq!(by["p0"].rank, 10);
        assert_eq!(by["p0"].outcome, Movement::Stayed);
        assert_eq!(by["p0"].next_tier, "bronze");
        assert_eq!(by["p0"].reward, None);
        let ranks: BTreeSet<u64> = after.iter().map(|o| o.rank).collect();
        assert_eq!(ranks.len(), 10);
    }

    #[test]
    fn gains_count_each_change_once_per_version() {
        let s = season();
        let before = closed(10);
        let versions = vec![vec!["p0".to_owned()], vec!["p1".to_owned()]];
        let all = every_version(&s, 0, &before, &versions);
        let ex: BTreeSet<String> = ["p0".to_owned(), "p1".to_owned()].into();
        let g = gains(&s, &all, &ex);
        assert!(
            !g.contains_key("p1"),
            "an excluded player gains nothing: {g:?}"
        );
        // p2: silver and a promotion at version 1, gold at version 2.
        assert_eq!(
            g["p2"],
            vec![
                Gain {
                    version: 1,
                    next_tier: "silver".into(),
                    grant: Some("silver".into()),
                    steps: 1
                },
                Gain {
                    version: 2,
                    next_tier: "silver".into(),
                    grant: Some("gold".into()),
                    steps: 0
                },
            ]
        );
        // p3: promoted and silver at version 2 only.
        assert_eq!(
            g["p3"],
            vec![Gain {
                version: 2,
                next_tier: "silver".into(),
                grant: Some("silver".into()),
                steps: 1
            }]
        );
    }

    #[test]
    fn a_credit_only_for_a_placement_made_without_the_correction() {
        let s = season();
        let state = |period, tier: &str, previous: Option<(u64, &str)>| PlayerState {
            period,
            tier: tier.to_owned(),
            bracket: 1,
            previous: previous.map(|(p, t)| (p, t.to_owned(), 1)),
        };
        // Bracket of period 4: promoted to silver by the correction.
        let credit = |st: Option<&PlayerState>| credit_for(&s, 4, "silver", 1, st);
        assert_eq!(credit(None), None);
        assert_eq!(credit(Some(&state(4, "bronze", None))), None);
        // Placed in period 5 from the outcome as it was: a credit from period 6.
        assert_eq!(
            credit(Some(&state(5, "bronze", Some((4, "bronze"))))),
            Some((6, 1))
        );
        // Placed in period 5 from the corrected outcome: none.
        assert_eq!(credit(Some(&state(5, "silver", Some((4, "bronze"))))), None);
        // Two placements since: the first is not known; the credit counts from 8.
        assert_eq!(
            credit(Some(&state(7, "silver", Some((6, "silver"))))),
            Some((8, 1))
        );
    }

    #[test]
    fn a_credit_counts_at_the_first_placement_in_or_after_its_period() {
        let credits = vec![
            ("t:a".to_owned(), "5|1".to_owned()),
            ("t:b".to_owned(), "-".to_owned()),
        ];
        assert_eq!(credited(&credits, 3, 4), 0);
        assert_eq!(credited(&credits, 4, 5), 1);
        assert_eq!(credited(&credits, 3, 7), 1);
        assert_eq!(credited(&credits, 5, 6), 0);
        assert_eq!(parse_credit(&credit_value(Some((5, 2)))), Some((5, 2)));
        assert_eq!(parse_credit(&credit_value(None)), None);
    }
}
