//! The designer's simulator: runs a season on a synthetic population through the real
//! engine (the same joins, updates, rollovers, idle policy and rewards as production)
//! and reports what the ladder does to the players.
//!
//! Deterministic: a seeded generator drives every draw in a fixed order, reports use
//! ordered maps, and no wall-clock time enters a report, so one seed gives one
//! byte-identical report on any store.
//!
//! Owns: the synthetic population, the run loop and the report ([`chart`] draws it).
//! Must not: bypass the [`crate::League`] API for anything the league decides
//! (placement, tie order, outcomes, rewards), so that what it shows is what
//! production would do.

pub mod chart;

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::Duration;
use serde::Serialize;

use crate::clock::ManualClock;
use crate::error::{Error, InputError};
use crate::league::League;
use crate::ranking::{BatchItem, SubmitOptions};
use crate::rollover::RolloverOptions;
use crate::season::packing::ScoreMode;
use crate::season::{JoinPolicy, Season};
use crate::store::Store;

/// What to simulate. Defaults come from the season's `[simulation]` section.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct SimOptions {
    /// Synthetic players.
    pub players: u64,
    /// Periods to run, from the season's first.
    pub periods: u64,
    /// Seed of the generator: same seed, same report.
    pub seed: u64,
    /// Standard deviation of player skill (a normal distribution around 0).
    pub skill_spread: f64,
    /// Chance that a player who has not quit plays in a period.
    pub active_share: f64,
    /// Chance that a player quits after a period.
    pub quit_rate: f64,
    /// Chance per period that a player who quit comes back.
    pub return_rate: f64,
    /// Most matches a player plays in a period (each one is one score update).
    pub matches: u32,
}

impl SimOptions {
    /// The options of a season's `[simulation]` section.
    pub fn from_season(season: &Season) -> SimOptions {
        let s = &season.simulation;
        SimOptions {
            players: s.players,
            periods: u64::from(s.periods),
            seed: s.seed,
            skill_spread: s.skill_spread,
            active_share: s.active_share,
            quit_rate: s.quit_rate,
            return_rate: s.return_rate,
            matches: 3,
        }
    }

    fn check(&self) -> Result<(), InputError> {
        let share = |v: f64, name: &str| {
            if (0.0..=1.0).contains(&v) {
                Ok(())
            } else {
                Err(InputError::Other(format!(
                    "{name} must be within 0..=1, got {v}"
                )))
            }
        };
        share(self.active_share, "active_share")?;
        share(self.quit_rate, "quit_rate")?;
        share(self.return_rate, "return_rate")?;
        if !(self.skill_spread >= 0.0 && self.skill_spread.is_finite()) {
            return Err(InputError::Other(format!(
                "skill_spread must be a finite number >= 0, got {}",
                self.skill_spread
            )));
        }
        if self.players == 0 || self.players > 10_000_000 {
            return Err(InputError::Other(format!(
                "players must be within 1..=10000000, got {}",
                self.players
            )));
        }
        if self.periods == 0 || self.periods > 520 {
            return Err(InputError::Other(format!(
                "periods must be within 1..=520, got {}",
                self.periods
            )));
        }
        if self.matches == 0 || self.matches > 50 {
            return Err(InputError::Other(format!(
                "matches must be within 1..=50, got {}",
                self.matches
            )));
        }
        Ok(())
    }
}

/// One period's figures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PeriodFigures {
    /// The period id.
    pub period: u64,
    /// Players who played (scored at least once).
    pub playing: u64,
    /// Players placed per tier (players who joined, idle ones included).
    pub players: BTreeMap<String, u64>,
    /// Players promoted out of each tier at the close.
    pub promoted: BTreeMap<String, u64>,
    /// Players demoted out of each tier at the close.
    pub demoted: BTreeMap<String, u64>,
    /// Rewards granted at the close.
    pub rewards: u64,
    /// Players placed who never scored.
    pub idle: u64,
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

/// Everything a simulation found.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct SimReport {
    /// The season's name.
    pub season: String,
    /// The options used.
    pub options: SimOptions,
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
}

/// SplitMix64: small, fast, and the same sequence on every platform.
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// Standard normal (Box-Muller).
    fn normal(&mut self) -> f64 {
        let u = self.unit().max(f64::MIN_POSITIVE);
        let v = self.unit();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

struct Player {
    id: String,
    skill: f64,
    quit: bool,
}

/// Periods a player's tier history holds: `NONE` for a period not placed.
const NONE: u8 = u8::MAX;

/// Runs a season on `store` with a synthetic population. `progress` is called after
/// each period with `(periods done, periods total)`.
pub async fn simulate<S: Store>(
    season: Season,
    store: S,
    clock: ManualClock,
    options: &SimOptions,
    mut progress: impl FnMut(u64, u64),
) -> Result<SimReport, Error> {
    options.check()?;
    if season.tiers.len() >= usize::from(NONE) {
        return Err(InputError::Other("the simulator handles at most 254 tiers".into()).into());
    }
    let tiers: Vec<String> = season.tiers.iter().map(|t| t.name.clone()).collect();
    let mode = season.scoring.mode;
    let max_score = season.packing.max_score();
    let explicit = season.brackets.join == JoinPolicy::Explicit;
    let name = season.name.clone();
    let first = season
        .calendar
        .period(1)
        .ok_or(InputError::UnknownPeriod { period: 1 })?;
    clock.set(first.start);
    let league = League::with_clock(season, store, Arc::new(clock.clone()));
    let mut rng = Rng(options.seed);
    let mut players: Vec<Player> = (0..options.players)
        .map(|i| Player {
            id: format!("sim-{i:07}"),
            skill: rng.normal() * options.skill_spread,
            quit: false,
        })
        .collect();
    let n = players.len();
    let mut history: Vec<Vec<u8>> = vec![Vec::with_capacity(options.periods as usize); n];
    // A match's points: 100 on average, skill shifting the mean by 30 per unit.
    // Increment seasons add several matches up, so one match is capped lower.
    let per_match_cap = match mode {
        ScoreMode::Increment => max_score / u64::from(options.matches),
        _ => max_score,
    }
    .max(1);
    let mut figures = Vec::new();
    for k in 0..options.periods {
        let period = league.period(k + 1)?;
        // The period's events are replayed at its last instant: every event time is in
        // the past and the period has not closed, by the league clock.
        clock.set(period.end - Duration::milliseconds(1));
        let length = (period.end - period.start).num_milliseconds().max(1);
        // Who plays this period, and their matches, drawn in player order.
        let mut events: Vec<(i64, usize, i64)> = Vec::new();
        let mut idle_joins: Vec<(i64, usize)> = Vec::new();
        for (i, p) in players.iter_mut().enumerate() {
            let plays = if p.quit {
                if rng.chance(options.return_rate) {
                    p.quit = false;
                    true
                } else {
                    false
                }
            } else {
                rng.chance(options.active_share)
            };
            if plays {
                let matches = 1 + rng.below(u64::from(options.matches));
                for _ in 0..matches {
                    let at = (rng.unit() * (length - 1) as f64) as i64;
                    let performance = p.skill + rng.normal();
                    let points = (100.0 + 30.0 * performance).round().max(0.0) as u64;
                    events.push((at, i, points.min(per_match_cap) as i64));
                }
            } else if explicit && !p.quit && rng.chance(0.5) {
                // Shows up (joins) but never plays: an idle player.
                idle_joins.push(((rng.unit() * (length - 1) as f64) as i64, i));
            }
        }
        // Players are placed in the order they show up, as on a real server.
        events.sort_unstable();
        idle_joins.sort_unstable();
        if explicit {
            let mut joins: Vec<(i64, usize)> = idle_joins.clone();
            let mut seen = vec![false; n];
            for (at, i, _) in &events {
                if !seen[*i] {
                    seen[*i] = true;
                    joins.push((*at, *i));
                }
            }
            joins.sort_unstable();
            for (at, i) in joins {
                league
                    .join(
                        &players[i].id,
                        Some(period.start + Duration::milliseconds(at)),
                    )
                    .await?;
            }
        }
        let mut placed = vec![NONE; n];
        let mut playing = 0u64;
        let items: Vec<BatchItem> = events
            .iter()
            .map(|(at, i, points)| {
                BatchItem::new(players[*i].id.clone(), *points).with_options(
                    SubmitOptions::default().at(period.start + Duration::milliseconds(*at)),
                )
            })
            .collect();
        for (chunk_items, chunk_events) in items.chunks(2000).zip(events.chunks(2000)) {
            let results = league.submit_many(chunk_items).await;
            for (result, (_, i, _)) in results.into_iter().zip(chunk_events) {
                let s = result?;
                if placed[*i] == NONE {
                    playing += 1;
                    placed[*i] = league.season().tier(&s.tier).map_or(0, |(t, _)| t as u8);
                }
            }
        }
        for (_, i) in &idle_joins {
            if placed[*i] == NONE {
                let view = league.player(&players[*i].id, Some(period.id)).await?;
                placed[*i] = league.season().tier(&view.tier).map_or(0, |(t, _)| t as u8);
            }
        }
        for (h, t) in history.iter_mut().zip(&placed) {
            h.push(*t);
        }
        // Close the period as the scheduler would, once the league clock allows it.
        clock.set(league.closes_at(&period));
        let report = league.rollover(None, RolloverOptions::default()).await?;
        let closed = report.closed.iter().find(|p| p.period == period.id);
        let counts = league.counts(Some(period.id)).await?;
        let by_tier =
            |f: &dyn Fn(&crate::rollover::outcome::Tally) -> u64| -> BTreeMap<String, u64> {
                tiers
                    .iter()
                    .map(|t| {
                        let v = closed.and_then(|c| c.tiers.get(t)).map_or(0, f);
                        (t.clone(), v)
                    })
                    .collect()
            };
        figures.push(PeriodFigures {
            period: period.id,
            playing,
            players: counts.into_iter().map(|c| (c.tier, c.players)).collect(),
            promoted: by_tier(&|t| t.promoted),
            demoted: by_tier(&|t| t.demoted),
            rewards: closed.map_or(0, |c| c.totals.rewards),
            idle: closed.map_or(0, |c| c.totals.idle),
        });
        for p in players.iter_mut() {
            if !p.quit && rng.chance(options.quit_rate) {
                p.quit = true;
            }
        }
        progress(k + 1, options.periods);
    }
    // Freeing millions of small objects takes a noticeable share of a large run;
    // the report does not wait for it.
    std::thread::spawn(move || drop(league));
    Ok(summarize(name, options, tiers, figures, &history))
}

fn summarize(
    season: String,
    options: &SimOptions,
    tiers: Vec<String>,
    periods: Vec<PeriodFigures>,
    history: &[Vec<u8>],
) -> SimReport {
    let t = tiers.len();
    let mut reached = vec![0u64; t];
    let mut reach_sum = vec![0u64; t];
    let mut in_tier = vec![0u64; t];
    let mut stuck = vec![0u64; t];
    let mut ever_played = 0u64;
    let mut played_3 = 0u64;
    let mut never_left_bottom = 0u64;
    for h in history {
        let Some(first) = h.iter().position(|&x| x != NONE) else {
            continue;
        };
        ever_played += 1;
        let mut first_in = vec![None; t];
        let mut longest = vec![0u64; t];
        let mut run: (u8, u64) = (NONE, 0);
        let mut played = 0u64;
        for (k, &tier) in h.iter().enumerate() {
            if tier == NONE {
                continue;
            }
            played += 1;
            let ti = usize::from(tier);
            if first_in[ti].is_none() {
                first_in[ti] = Some(k - first);
            }
            // Runs count consecutive periods *played* in one tier.
            run = if run.0 == tier {
                (tier, run.1 + 1)
            } else {
                (tier, 1)
            };
            longest[ti] = longest[ti].max(run.1);
        }
        for ti in 0..t {
            if let Some(d) = first_in[ti] {
                reached[ti] += 1;
                reach_sum[ti] += d as u64;
                in_tier[ti] += 1;
                if longest[ti] >= 3 {
                    stuck[ti] += 1;
                }
            }
        }
        if played >= 3 {
            played_3 += 1;
            if h.iter().all(|&x| x == NONE || x == 0) {
                never_left_bottom += 1;
            }
        }
    }
    SimReport {
        season,
        options: options.clone(),
        reach: tiers
            .iter()
            .enumerate()
            .map(|(i, name)| TierReach {
                tier: name.clone(),
                reached: reached[i],
                never: ever_played - reached[i],
                average_periods: (reached[i] > 0)
                    .then(|| round2(reach_sum[i] as f64 / reached[i] as f64)),
            })
            .collect(),
        stuck: tiers
            .iter()
            .enumerate()
            .map(|(i, name)| TierStuck {
                tier: name.clone(),
                players: in_tier[i],
                stuck_3_or_more: stuck[i],
                share: if in_tier[i] > 0 {
                    round2(stuck[i] as f64 / in_tier[i] as f64)
                } else {
                    0.0
                },
            })
            .collect(),
        tiers,
        periods,
        never_left_bottom,
        played_3_or_more: played_3,
    }
}

/// Two decimals, so reports stay short and byte-stable.
fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

impl SimReport {
    /// The report as the text tables `leaguekit simulate` prints.
    pub fn tables(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let w = self.tiers.iter().map(String::len).max().unwrap_or(6).max(9);
        let _ = writeln!(
            out,
            "season {:?}: {} players, {} periods, seed {}",
            self.season, self.options.players, self.options.periods, self.options.seed
        );
        let _ = writeln!(
            out,
            "\nplayers per tier (placed), and movement at the close (+promoted/-demoted)"
        );
        let _ = write!(
            out,
            "{:>6} {:>8} {:>6} {:>8}",
            "period", "playing", "idle", "rewards"
        );
        for t in &self.tiers {
            let _ = write!(out, " {t:>w$}");
        }
        let _ = writeln!(out);
        for p in &self.periods {
            let _ = write!(
                out,
                "{:>6} {:>8} {:>6} {:>8}",
                p.period, p.playing, p.idle, p.rewards
            );
            for t in &self.tiers {
                let _ = write!(out, " {:>w$}", p.players.get(t).copied().unwrap_or(0));
            }
            let _ = writeln!(out);
            let _ = write!(out, "{:>6} {:>8} {:>6} {:>8}", "", "", "", "");
            for t in &self.tiers {
                let moves = format!(
                    "+{}/-{}",
                    p.promoted.get(t).copied().unwrap_or(0),
                    p.demoted.get(t).copied().unwrap_or(0)
                );
                let _ = write!(out, " {moves:>w$}");
            }
            let _ = writeln!(out);
        }
        let _ = writeln!(
            out,
            "\ntime to reach each tier (periods after a player's first)"
        );
        let _ = writeln!(
            out,
            "{:>w$} {:>9} {:>9} {:>8}",
            "tier", "reached", "never", "average"
        );
        for r in &self.reach {
            let avg = r
                .average_periods
                .map_or("-".to_owned(), |a| format!("{a:.2}"));
            let _ = writeln!(
                out,
                "{:>w$} {:>9} {:>9} {:>8}",
                r.tier, r.reached, r.never, avg
            );
        }
        let _ = writeln!(
            out,
            "\nwhere players get stuck (3+ periods in a row in one tier)"
        );
        let _ = writeln!(
            out,
            "{:>w$} {:>9} {:>9} {:>8}",
            "tier", "players", "stuck", "share"
        );
        for s in &self.stuck {
            let _ = writeln!(
                out,
                "{:>w$} {:>9} {:>9} {:>7.0}%",
                s.tier,
                s.players,
                s.stuck_3_or_more,
                s.share * 100.0
            );
        }
        let _ = writeln!(
            out,
            "\n{} of {} players who played 3+ periods never left {}",
            self.never_left_bottom,
            self.played_3_or_more,
            self.tiers
                .first()
                .map(String::as_str)
                .unwrap_or("the bottom tier")
        );
        out
    }
}
