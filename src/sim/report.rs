//! What a run found: [`SimReport`] and its parts, and the summary of every player's
//! tier history (how long players take to reach each tier, where they get stuck).
//!
//! Deterministic: ordered maps, integer counts and two-decimal averages, so one run
//! gives one byte-identical report whatever the path, store or number of threads.
//!
//! Owns: the report's shape and the history summary. Must not: run anything.

use std::collections::BTreeMap;

use rayon::prelude::*;
use serde::Serialize;

use super::engine::Run;
#[cfg(test)]
use super::fairness::FairCounts;
use super::fairness::Fairness;
use super::options::SimOptions;
use super::replay::ReplayInfo;

/// A player's tier history holds this for a period they were not placed in.
pub(crate) const NONE: u8 = u8::MAX;

/// One period's figures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PeriodFigures {
    /// The period id.
    pub period: u64,
    /// Players who played (had at least one score update accepted).
    pub playing: u64,
    /// Players placed per tier (players who joined, idle ones included).
    pub players: BTreeMap<String, u64>,
    /// Players placed per tier who scored (`players` less the idle ones).
    pub active: BTreeMap<String, u64>,
    /// Players promoted out of each tier at the close.
    pub promoted: BTreeMap<String, u64>,
    /// Players demoted out of each tier at the close.
    pub demoted: BTreeMap<String, u64>,
    /// Rewards granted at the close.
    pub rewards: u64,
    /// Players placed who never scored.
    pub idle: u64,
    /// Score updates the league refused (a value outside `0..=max_score`, or a result
    /// that would leave it); they changed nothing.
    pub refused: u64,
}

/// How long players take to reach one tier.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct TierReach {
    /// The tier.
    pub tier: String,
    /// Players who were placed in it at least once.
    pub reached: u64,
    /// Players who never were (of those who played at all).
    pub never: u64,
    /// Average periods from a player's first period to their first in this tier
    /// (0 for the tier everyone starts in), over the players who reached it.
    pub average_periods: Option<f64>,
    /// The median of the same, in whole periods.
    pub median_periods: Option<u64>,
    /// The 90th percentile of the same: 90% of those who reached the tier did so in
    /// at most this many periods.
    pub p90_periods: Option<u64>,
    /// `distribution[d]`: players who first reached the tier `d` periods after their
    /// first period (one entry per period of the run).
    pub distribution: Vec<u64>,
}

/// Where players stay.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct TierStuck {
    /// The tier.
    pub tier: String,
    /// Players who played in it at least once.
    pub players: u64,
    /// Of those, how many played 3 or more periods in a row in it.
    pub stuck_3_or_more: u64,
    /// The same as a share (0-1).
    pub share: f64,
}

/// Everything a simulation or a replay found.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct SimReport {
    /// The season's name.
    pub season: String,
    /// The options of a synthetic population (absent for a replay).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub options: Option<SimOptions>,
    /// What was replayed (absent for a synthetic population).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplayInfo>,
    /// Tier names, lowest first.
    pub tiers: Vec<String>,
    /// Per period.
    pub periods: Vec<PeriodFigures>,
    /// Time to reach each tier.
    pub reach: Vec<TierReach>,
    /// Where players get stuck.
    pub stuck: Vec<TierStuck>,
    /// Players who played 3 or more periods and never left the bottom tier.
    pub never_left_bottom: u64,
    /// Players who played 3 or more periods.
    pub played_3_or_more: u64,
    /// What late joiners and small brackets met.
    pub fairness: Fairness,
}

impl SimReport {
    /// Each tier's share (0-1) of the players who scored in the run's `k`-th period
    /// (0-based); `None` when nobody scored then.
    pub fn active_shares(&self, k: usize) -> Option<BTreeMap<String, f64>> {
        let p = self.periods.get(k)?;
        let total: u64 = p.active.values().sum();
        (total > 0).then(|| {
            p.active
                .iter()
                .map(|(t, n)| (t.clone(), *n as f64 / total as f64))
                .collect()
        })
    }

    /// Puts the fairness figures of `today` (the same population under today's rule,
    /// [`super::today_rule`]) beside this report's.
    pub fn beside_today(&mut self, today: &SimReport) {
        self.fairness.today_rule = Some(today.fairness.season_rule.clone());
    }
}

/// Counts gathered over players' histories; summed over threads in any order.
#[derive(Clone)]
struct Counts {
    reached: Vec<u64>,
    reach_sum: Vec<u64>,
    /// tier × periods: first reached after d periods.
    distribution: Vec<u64>,
    stuck: Vec<u64>,
    ever_played: u64,
    played_3: u64,
    never_left_bottom: u64,
}

impl Counts {
    fn new(tiers: usize, periods: usize) -> Counts {
        Counts {
            reached: vec![0; tiers],
            reach_sum: vec![0; tiers],
            distribution: vec![0; tiers * periods],
            stuck: vec![0; tiers],
            ever_played: 0,
            played_3: 0,
            never_left_bottom: 0,
        }
    }

    fn merge(mut self, o: Counts) -> Counts {
        let add = |a: &mut Vec<u64>, b: &[u64]| a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
        add(&mut self.reached, &o.reached);
        add(&mut self.reach_sum, &o.reach_sum);
        add(&mut self.distribution, &o.distribution);
        add(&mut self.stuck, &o.stuck);
        self.ever_played += o.ever_played;
        self.played_3 += o.played_3;
        self.never_left_bottom += o.never_left_bottom;
        self
    }

    /// One player's history: their tier index per period, [`NONE`] when not placed.
    fn add(&mut self, h: &[u8], periods: usize, scratch: &mut Scratch) {
        let Some(first) = h.iter().position(|&x| x != NONE) else {
            return;
        };
        self.ever_played += 1;
        scratch.first_in.fill(None);
        scratch.longest.fill(0);
        let mut run: (u8, u64) = (NONE, 0);
        let mut played = 0u64;
        let mut left_bottom = false;
        for (k, &tier) in h.iter().enumerate() {
            if tier == NONE {
                continue;
            }
            played += 1;
            left_bottom |= tier != 0;
            let ti = usize::from(tier);
            if ti >= scratch.first_in.len() {
                continue;
            }
            if scratch.first_in[ti].is_none() {
                scratch.first_in[ti] = Some(k - first);
            }
            // Runs count consecutive periods *played* in one tier.
            run = if run.0 == tier {
                (tier, run.1 + 1)
            } else {
                (tier, 1)
            };
            scratch.longest[ti] = scratch.longest[ti].max(run.1);
        }
        for (ti, first_in) in scratch.first_in.iter().enumerate() {
            if let Some(d) = *first_in {
                self.reached[ti] += 1;
                self.reach_sum[ti] += d as u64;
                self.distribution[ti * periods + d] += 1;
                if scratch.longest[ti] >= 3 {
                    self.stuck[ti] += 1;
                }
            }
        }
        if played >= 3 {
            self.played_3 += 1;
            if !left_bottom {
                self.never_left_bottom += 1;
            }
        }
    }
}

struct Scratch {
    first_in: Vec<Option<usize>>,
    longest: Vec<u64>,
}

/// The report of a run: `history` holds one row of `periods` tier indexes per player.
/// Runs on the current rayon pool; the result does not depend on its size.
pub(crate) fn summarize(
    season: String,
    options: Option<SimOptions>,
    replay: Option<ReplayInfo>,
    tiers: Vec<String>,
    run: Run,
    periods: usize,
    size: u64,
) -> SimReport {
    let Run {
        figures,
        history,
        fairness,
    } = run;
    let history = &history[..];
    let t = tiers.len();
    let periods = periods.max(1);
    let c = history
        .par_chunks(periods * 4096)
        .map(|rows| {
            let mut c = Counts::new(t, periods);
            let mut scratch = Scratch {
                first_in: vec![None; t],
                longest: vec![0; t],
            };
            for h in rows.chunks(periods) {
                c.add(h, periods, &mut scratch);
            }
            c
        })
        .reduce(|| Counts::new(t, periods), Counts::merge);
    let reach = tiers
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let distribution = c.distribution[i * periods..(i + 1) * periods].to_vec();
            TierReach {
                tier: name.clone(),
                reached: c.reached[i],
                never: c.ever_played - c.reached[i],
                average_periods: (c.reached[i] > 0)
                    .then(|| round2(c.reach_sum[i] as f64 / c.reached[i] as f64)),
                median_periods: percentile(&distribution, 50),
                p90_periods: percentile(&distribution, 90),
                distribution,
            }
        })
        .collect();
    let stuck = tiers
        .iter()
        .enumerate()
        .map(|(i, name)| TierStuck {
            tier: name.clone(),
            players: c.reached[i],
            stuck_3_or_more: c.stuck[i],
            share: if c.reached[i] > 0 {
                round2(c.stuck[i] as f64 / c.reached[i] as f64)
            } else {
                0.0
            },
        })
        .collect();
    let fairness = Fairness {
        buckets: super::fairness::labels(size),
        season_rule: fairness.figures(&tiers),
        today_rule: None,
    };
    SimReport {
        fairness,
        season,
        options,
        replay,
        reach,
        stuck,
        tiers,
        periods: figures,
        never_left_bottom: c.never_left_bottom,
        played_3_or_more: c.played_3,
    }
}

/// The smallest `d` with at least `pct`% of the distribution at or below it.
fn percentile(distribution: &[u64], pct: u64) -> Option<u64> {
    let total: u64 = distribution.iter().sum();
    if total == 0 {
        return None;
    }
    // ceil(total * pct / 100) players must be at or below d.
    let need = (total * pct).div_ceil(100).max(1);
    let mut seen = 0;
    for (d, n) in distribution.iter().enumerate() {
        seen += n;
        if seen >= need {
            return Some(d as u64);
        }
    }
    None
}

/// Two decimals, so reports stay short and byte-stable.
pub(crate) fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_a_distribution() {
        // 10 players: 5 at 0 periods, 4 at 2, 1 at 5.
        let d = [5, 0, 4, 0, 0, 1];
        assert_eq!(percentile(&d, 50), Some(0));
        assert_eq!(percentile(&d, 60), Some(2));
        assert_eq!(percentile(&d, 90), Some(2));
        assert_eq!(percentile(&d, 91), Some(5));
        assert_eq!(percentile(&[0, 0], 50), None);
    }

    #[test]
    fn history_counts_reach_runs_and_the_bottom() {
        // Two tiers, four periods. Player A: absent, bronze, silver, silver.
        // Player B: bronze x3. Player C: never placed.
        let h = [NONE, 0, 1, 1, 0, 0, 0, NONE, NONE, NONE, NONE, NONE];
        let r = summarize(
            "s".into(),
            None,
            None,
            vec!["bronze".into(), "silver".into()],
            Run {
                figures: Vec::new(),
                history: h.to_vec(),
                fairness: FairCounts::new(2),
            },
            4,
            100,
        );
        assert_eq!(r.reach[0].reached, 2);
        assert_eq!(r.reach[1].reached, 1);
        assert_eq!(r.reach[1].never, 1);
        assert_eq!(r.reach[1].distribution, vec![0, 1, 0, 0]);
        assert_eq!(r.reach[1].average_periods, Some(1.0));
        assert_eq!(r.stuck[0].stuck_3_or_more, 1);
        assert_eq!(r.played_3_or_more, 2);
        assert_eq!(r.never_left_bottom, 1);
    }
}
