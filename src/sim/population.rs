//! The synthetic population: players with a normally distributed skill who play some
//! periods, quit and come back, drawn from a seeded generator.
//!
//! Every draw comes from a stream of its own, keyed by (seed, player, period): a
//! player's activity in a period does not depend on any other player's, so the
//! population can be drawn on any number of threads and stays the same for a seed.
//!
//! Owns: the generator and the population model. Must not: place, score or rank
//! anybody (the run paths do, by the league's rules).

use crate::season::Season;
use crate::season::calendar::PeriodId;
use crate::season::packing::ScoreMode;
use crate::season::{Arrival, JoinPolicy};

use super::options::SimOptions;
use super::source::{Activity, Event, Source};

/// SplitMix64: small, fast, and the same sequence on every platform.
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

/// SplitMix64's finalizer: a good 64-bit mix.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    /// The stream of `(seed, a, b)`.
    pub(crate) fn stream(seed: u64, a: u64, b: u64) -> Rng {
        Rng(mix(seed
            ^ mix(
                a.wrapping_add(0x9E37_79B9_7F4A_7C15) ^ mix(b.wrapping_mul(0xD1B5_4A32_D192_ED03))
            )))
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }

    /// Uniform in [0, 1).
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    pub(crate) fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// Standard normal (Box-Muller).
    pub(crate) fn normal(&mut self) -> f64 {
        let u = self.unit().max(f64::MIN_POSITIVE);
        let v = self.unit();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// The stream key of a player's skill (no period uses it).
const SKILL: u64 = u64::MAX;

/// A synthetic population over the first `options.periods` periods of a season.
pub(crate) struct Synthetic {
    options: SimOptions,
    skills: Vec<f64>,
    explicit: bool,
    /// Points of one match at most: increment seasons add several matches up.
    per_match_cap: u64,
    /// Each period's length in milliseconds.
    lengths: Vec<i64>,
}

impl Synthetic {
    /// The population of `options` for `season`. The options must have been checked.
    pub(crate) fn new(season: &Season, options: &SimOptions) -> Synthetic {
        let skills = (0..options.players)
            .map(|i| Rng::stream(options.seed, i, SKILL).normal() * options.skill_spread)
            .collect();
        let max_score = season.packing.max_score();
        // A match's points: 100 on average, skill shifting the mean by 30 per unit.
        let per_match_cap = match season.scoring.mode {
            ScoreMode::Increment => max_score / u64::from(options.matches),
            _ => max_score,
        }
        .max(1);
        let lengths = (1..=options.periods)
            .map(|id| {
                season
                    .calendar
                    .period(id)
                    .map_or(1, |p| (p.end - p.start).num_milliseconds().max(1))
            })
            .collect();
        Synthetic {
            options: options.clone(),
            skills,
            explicit: season.brackets.join == JoinPolicy::Explicit,
            per_match_cap,
            lengths,
        }
    }
}

impl Source for Synthetic {
    fn players(&self) -> usize {
        self.skills.len()
    }

    fn player_id(&self, i: usize) -> String {
        format!("sim-{i:07}")
    }

    fn first_period(&self) -> PeriodId {
        1
    }

    fn periods(&self) -> u64 {
        self.options.periods
    }

    fn prepare(&mut self, _k: usize) {}

    fn activity(&self, i: usize, k: usize, quit: &mut bool, out: &mut Vec<Event>) -> Activity {
        out.clear();
        let o = &self.options;
        let mut rng = Rng::stream(o.seed, i as u64, k as u64);
        let length = self.lengths.get(k).copied().unwrap_or(1);
        let at = |rng: &mut Rng| (rng.unit() * (length - 1) as f64) as i64;
        let plays = if *quit {
            if rng.chance(o.return_rate) {
                *quit = false;
                true
            } else {
                false
            }
        } else {
            rng.chance(o.active_share)
        };
        let mut activity = Activity::Absent;
        // The start of the player's play in the period: their first match is at it,
        // the others between it and the end (`matches`: no start, each match anywhere
        // in the period).
        let start = match o.arrival {
            Arrival::Matches => 0,
            Arrival::Uniform => at(&mut rng),
            Arrival::Front => {
                let u = rng.unit();
                (u * u * (length - 1) as f64) as i64
            }
        };
        let at = |rng: &mut Rng| start + (rng.unit() * (length - 1 - start) as f64) as i64;
        if plays {
            let skill = self.skills.get(i).copied().unwrap_or(0.0);
            let matches = 1 + rng.below(u64::from(o.matches));
            for m in 0..matches {
                // The first match of a player with a start is at it: they join then.
                let t = if m == 0 && o.arrival != Arrival::Matches {
                    start
                } else {
                    at(&mut rng)
                };
                let performance = skill + rng.normal();
                let points = (100.0 + 30.0 * performance).round().max(0.0) as u64;
                out.push(Event {
                    at: t,
                    value: points.min(self.per_match_cap) as i64,
                });
            }
            // Canonical order: by time, then as drawn (a stable sort).
            out.sort_by_key(|e| e.at);
            activity = Activity::Scored;
        } else if self.explicit && !*quit && rng.chance(0.5) {
            // Shows up (joins) but never plays: an idle player.
            activity = Activity::Idle {
                at: if o.arrival == Arrival::Matches {
                    at(&mut rng)
                } else {
                    start
                },
            };
        }
        // After the period, the player may quit.
        if !*quit && rng.chance(o.quit_rate) {
            *quit = true;
        }
        activity
    }
}
