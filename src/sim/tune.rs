//! The tuner: searches the promotion and demotion quotas for the ladder a designer
//! asks for in the season's `[tune]` section ([`crate::season::TuneConfig`]).
//!
//! **The search** is a compass (pattern) search on whole numbers, deterministic by
//! construction:
//!
//! - the knobs are each tier's `promote` (not the top tier's) and `demote` (not the
//!   bottom tier's), as `vary` allows, lowest tier first, promote before demote; each
//!   moves in its own unit (a count in `0..=brackets.size`, a percentage in
//!   `0..=100`), and a point where a tier would promote and demote more than a full
//!   bracket is skipped, as the season file would refuse it;
//! - a trial simulates `after` periods of the same synthetic population (same seed:
//!   every trial sees the same players, so differences come from the ladder alone) on
//!   the fast path; its **distance** is `sqrt(sum over the target tiers of (share -
//!   target)^2)`, in percentage points, where a tier's share is its part of the players
//!   who scored in period `after`;
//! - trial 1 is the current season. Each knob in turn is moved by `+step`, then
//!   `-step`; the first move that lowers the distance is kept. When a whole sweep
//!   keeps nothing, every step is halved (each starts at an eighth of its knob's
//!   range); the search ends after a fruitless sweep at step 1 (a local optimum), at
//!   distance 0, or after `trials` trials. Points already tried are not run again.
//! - with a fairness target (`late_promotion_within = "20%"`), two more knobs move
//!   last: `[brackets] early_cap` (`1..size`) and `late_after` (a percentage,
//!   `1..=99`; a season without late seats starts from none, and the first move of
//!   either sets both, from `early_cap` = 80% of `size` and `late_after` = 60%); the
//!   distance then adds, as one more squared term, how many percentage points late
//!   joiners' promotion rate is further from early joiners' than the target allows
//!   (`|1 - late_vs_early| * 100 - within`, when positive).
//!
//! No optimisation crate is used: the maintained ones (argmin and the like) search
//! continuous spaces, and rounding their points to whole quotas would waste trials on
//! duplicates. Same season, population and seed: same trials, same result.
//!
//! Owns: the search and its report. Must not: write files (the CLI writes the tuned
//! season, with [`crate::season::rewrite_quotas`]).

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::error::{Error, InputError};
use crate::season::seats::{LatePoint, LateSeats};
use crate::season::{Knob, Quota, Season};

use super::options::SimOptions;
use super::report::{SimReport, round2};
use super::simulate_fast;

/// One tier's quotas, as written in a season file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct TierQuotas {
    /// The tier.
    pub tier: String,
    /// Its promote quota (`20` or `"20%"`).
    pub promote: String,
    /// Its demote quota.
    pub demote: String,
}

/// One trial of the search.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Trial {
    /// 1-based; trial 1 is the current season.
    pub trial: u32,
    /// The quotas tried.
    pub quotas: Vec<TierQuotas>,
    /// Each target tier's share (percent) of the players who scored in period `after`.
    pub shares: BTreeMap<String, f64>,
    /// `[brackets] early_cap` and `late_after` (percent) tried (`None`: no late seats).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub late_seats: Option<(u32, u32)>,
    /// Late joiners' promotion rate over early joiners' (with a fairness target).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub late_vs_early: Option<f64>,
    /// The distance to the targets, in percentage points.
    pub distance: f64,
    /// Whether this trial became the best so far.
    pub best: bool,
}

/// What the tuner did.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct TuneReport {
    /// The season's name.
    pub season: String,
    /// Periods per trial.
    pub after: u32,
    /// The population every trial ran on.
    pub options: SimOptions,
    /// The targets (percent).
    pub targets: BTreeMap<String, f64>,
    /// Every trial, in order.
    pub trials: Vec<Trial>,
    /// The current season's distance.
    pub current_distance: f64,
    /// The best distance found.
    pub best_distance: f64,
    /// The trial that found it.
    pub best_trial: u32,
    /// Its quotas.
    pub best: Vec<TierQuotas>,
    /// Its `[brackets] early_cap` and `late_after` (percent), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best_late_seats: Option<(u32, u32)>,
    /// Why the search stopped.
    pub stopped: String,
}

/// The tuner's result: its report, the best quotas (one pair per tier) and the
/// reports of the current and the tuned ladder on the same population.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Tuned {
    /// The report.
    pub report: TuneReport,
    /// The best (promote, demote) per tier, lowest first.
    pub quotas: Vec<(Quota, Quota)>,
    /// The best `[brackets] early_cap` and `late_after` (percent), `None` for none.
    pub late_seats: Option<(u32, u32)>,
    /// The current season over `after` periods.
    pub current: SimReport,
    /// The tuned season over `after` periods.
    pub tuned: SimReport,
}

/// One knob: a tier and which of its quotas.
struct Dial {
    tier: usize,
    knob: Knob,
    /// Largest value in the quota's unit.
    max: u32,
}

/// A point of the search: the quotas, and the late seats (`early_cap`, percent).
#[derive(Clone)]
struct Point {
    quotas: Vec<(Quota, Quota)>,
    late: Option<(u32, u32)>,
}

/// A point by its values (each quota keeps its unit).
type Key = (Vec<(u32, u32)>, Option<(u32, u32)>);

/// The season's late seats as a point's (`late_after` as a whole percentage of the
/// first period for a duration).
fn late_of(season: &Season) -> Option<(u32, u32)> {
    let l = season.brackets.late?;
    let pct = match l.after {
        LatePoint::Percent(p) => p,
        LatePoint::Elapsed(d) => season.calendar.period(1).map_or(60, |p| {
            let len = (p.end - p.start).num_milliseconds().max(1) as f64;
            ((d.as_millis() as f64 * 100.0 / len).round() as u32).clamp(1, 99)
        }),
    };
    Some((l.early_cap, pct))
}

fn value(q: Quota) -> u32 {
    match q {
        Quota::Count(n) | Quota::Percent(n) => n,
    }
}

fn with_value(q: Quota, v: u32) -> Quota {
    match q {
        Quota::Count(_) => Quota::Count(v),
        Quota::Percent(_) => Quota::Percent(v),
    }
}

fn quota_str(q: Quota) -> String {
    match q {
        Quota::Count(n) => n.to_string(),
        Quota::Percent(p) => format!("{p}%"),
    }
}

/// Runs the search described in the module docs on `options`' population (its
/// `periods` is replaced by `[tune] after`). `progress` gets `(trials run, most
/// trials)` after each trial.
pub fn tune(
    season: &Season,
    options: &SimOptions,
    threads: usize,
    mut progress: impl FnMut(u32, u32),
) -> Result<Tuned, Error> {
    let Some(config) = season.tune.clone() else {
        return Err(InputError::Other(format!(
            "season {:?} has no [tune] section; add one with after, targets and vary \
             (see config/season.toml)",
            season.name
        ))
        .into());
    };
    let mut options = options.clone();
    options.periods = u64::from(config.after);
    options.check()?;
    let size = season.brackets.size;
    let top = season.tiers.len() - 1;
    let mut dials = Vec::new();
    let within = config.late_promotion_within;
    for (i, t) in season.tiers.iter().enumerate() {
        for &knob in &config.vary {
            let (q, allowed) = match knob {
                Knob::Promote => (t.promote, i < top),
                Knob::Demote => (t.demote, i > 0),
                // Not per tier (added below, with a fairness target).
                _ => (t.promote, false),
            };
            if allowed {
                let max = match q {
                    Quota::Count(_) => size,
                    Quota::Percent(_) => 100,
                };
                dials.push(Dial { tier: i, knob, max });
            }
        }
    }
    if within.is_some() && size >= 2 {
        dials.push(Dial {
            tier: 0,
            knob: Knob::EarlyCap,
            max: size - 1,
        });
        dials.push(Dial {
            tier: 0,
            knob: Knob::LateAfter,
            max: 99,
        });
    }
    let anchor = ((size * 4 / 5).clamp(1, size.saturating_sub(1).max(1)), 60);
    let start = Point {
        quotas: season.tiers.iter().map(|t| (t.promote, t.demote)).collect(),
        late: late_of(season),
    };
    let targets: BTreeMap<String, f64> = config.targets.iter().cloned().collect();
    let point = |x: &Point, d: &Dial| match d.knob {
        Knob::Promote => value(x.quotas[d.tier].0),
        Knob::Demote => value(x.quotas[d.tier].1),
        Knob::EarlyCap => x.late.unwrap_or(anchor).0,
        _ => x.late.unwrap_or(anchor).1,
    };
    let moved = |x: &Point, d: &Dial, v: u32| -> Point {
        let mut y = x.clone();
        let q = &mut y.quotas;
        match d.knob {
            Knob::Promote => q[d.tier].0 = with_value(q[d.tier].0, v),
            Knob::Demote => q[d.tier].1 = with_value(q[d.tier].1, v),
            Knob::EarlyCap => y.late = Some((v, x.late.unwrap_or(anchor).1)),
            _ => y.late = Some((x.late.unwrap_or(anchor).0, v)),
        }
        y
    };
    let valid = |x: &Point| {
        x.quotas
            .iter()
            .all(|(p, d)| p.of(u64::from(size)) + d.of(u64::from(size)) <= u64::from(size))
            && x.late
                .is_none_or(|(c, p)| (1..size).contains(&c) && (1..=99).contains(&p))
    };
    let mut trials: Vec<Trial> = Vec::new();
    // Points tried, by their values (each quota keeps its unit).
    let key = |x: &Point| -> Key {
        let q = x.quotas.iter().map(|(p, d)| (value(*p), value(*d)));
        (q.collect(), x.late)
    };
    let mut seen: HashMap<Key, f64> = HashMap::new();
    let run = |x: &Point, trials: &mut Vec<Trial>| -> Result<(f64, SimReport), Error> {
        let mut s = season.clone();
        for (t, (p, d)) in s.tiers.iter_mut().zip(&x.quotas) {
            t.promote = *p;
            t.demote = *d;
        }
        if within.is_some() {
            s.brackets.late = x.late.map(|(early_cap, p)| LateSeats {
                early_cap,
                after: LatePoint::Percent(p),
            });
        }
        let report = simulate_fast(&s, &options, threads, |_, _| {})?;
        let shares = report
            .active_shares(config.after as usize - 1)
            .ok_or_else(|| {
                InputError::Other(format!(
                    "nobody scored in period {} of the simulation; raise the players or \
                     active_share, or lower [tune] after",
                    config.after
                ))
            })?;
        let mut sum = 0.0;
        let mut shown = BTreeMap::new();
        for (tier, target) in &config.targets {
            let share = 100.0 * shares.get(tier).copied().unwrap_or(0.0);
            sum += (share - target) * (share - target);
            shown.insert(tier.clone(), round2(share));
        }
        let ratio = report.fairness.season_rule.late_vs_early;
        if let (Some(w), Some(r)) = (within, ratio) {
            let off = ((1.0 - r).abs() * 100.0 - w).max(0.0);
            sum += off * off;
        }
        let distance = sum.sqrt();
        trials.push(Trial {
            trial: trials.len() as u32 + 1,
            quotas: quotas_of(season, &x.quotas),
            late_seats: x.late.filter(|_| within.is_some()),
            late_vs_early: ratio.filter(|_| within.is_some()),
            shares: shown,
            distance: round2(distance),
            best: false,
        });
        Ok((distance, report))
    };
    let (first, current) = run(&start, &mut trials)?;
    progress(1, config.trials);
    trials[0].best = true;
    seen.insert(key(&start), first);
    let (mut x, mut best, mut tuned) = (start.clone(), first, current.clone());
    let mut level = 3u32;
    let stopped = 'search: loop {
        if best <= 1e-12 {
            break 'search "distance 0: every target met".to_owned();
        }
        let steps: Vec<u32> = dials
            .iter()
            .map(|d| d.max.div_ceil(1u32 << level.min(31)).max(1))
            .collect();
        let mut improved = false;
        for (d, step) in dials.iter().zip(&steps) {
            let now = point(&x, d);
            for v in [
                now.saturating_add(*step).min(d.max),
                now.saturating_sub(*step),
            ] {
                if v == now {
                    continue;
                }
                let y = moved(&x, d, v);
                if !valid(&y) {
                    continue;
                }
                let distance = match seen.get(&key(&y)) {
                    Some(distance) => *distance,
                    None => {
                        if trials.len() as u32 >= config.trials {
                            break 'search format!("the trial budget ({}) ran out", config.trials);
                        }
                        let (distance, report) = run(&y, &mut trials)?;
                        progress(trials.len() as u32, config.trials);
                        seen.insert(key(&y), distance);
                        if distance < best - 1e-12 {
                            tuned = report;
                            if let Some(t) = trials.last_mut() {
                                t.best = true;
                            }
                        }
                        distance
                    }
                };
                if distance < best - 1e-12 {
                    best = distance;
                    x = y;
                    improved = true;
                    break;
                }
            }
        }
        if !improved {
            if steps.iter().all(|s| *s == 1) {
                break 'search "no single step improves: a local optimum".to_owned();
            }
            level += 1;
        }
    };
    let best_trial = trials.iter().rev().find(|t| t.best).map_or(1, |t| t.trial);
    let report = TuneReport {
        season: season.name.clone(),
        after: config.after,
        options,
        targets,
        current_distance: round2(first),
        best_distance: round2(best),
        best_trial,
        best: quotas_of(season, &x.quotas),
        best_late_seats: x.late,
        trials,
        stopped,
    };
    Ok(Tuned {
        report,
        quotas: x.quotas,
        late_seats: x.late,
        current,
        tuned,
    })
}

fn quotas_of(season: &Season, x: &[(Quota, Quota)]) -> Vec<TierQuotas> {
    season
        .tiers
        .iter()
        .zip(x)
        .map(|(t, (p, d))| TierQuotas {
            tier: t.name.clone(),
            promote: quota_str(*p),
            demote: quota_str(*d),
        })
        .collect()
}

impl TuneReport {
    /// The trials and the best ladder as text tables.
    pub fn tables(&self, current: &[TierQuotas]) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let targets: Vec<String> = self
            .targets
            .iter()
            .map(|(t, s)| format!("{t} {s}%"))
            .collect();
        let _ = writeln!(
            out,
            "tuning {:?}: {} players, {} periods a trial, seed {}; targets {}",
            self.season,
            self.options.players,
            self.after,
            self.options.seed,
            targets.join(", ")
        );
        let _ = writeln!(out, "\n{:>5} {:>9}  shares", "trial", "distance");
        for t in &self.trials {
            let shares: Vec<String> = t
                .shares
                .iter()
                .map(|(k, v)| format!("{k} {v:.2}%"))
                .collect();
            let late = match (t.late_seats, t.late_vs_early) {
                (Some((c, p)), r) => format!(
                    "; early_cap {c}, late_after {p}%, late/early {}",
                    r.map_or("-".to_owned(), |r| format!("{r:.2}"))
                ),
                (None, Some(r)) => format!("; no late seats, late/early {r:.2}"),
                (None, None) => String::new(),
            };
            let _ = writeln!(
                out,
                "{:>5} {:>9.2}{} {}{late}",
                t.trial,
                t.distance,
                if t.best { "*" } else { " " },
                shares.join(", ")
            );
        }
        let _ = writeln!(
            out,
            "\nstopped: {}; best: trial {} at {:.2} pp (current season: {:.2} pp)",
            self.stopped, self.best_trial, self.best_distance, self.current_distance
        );
        let _ = writeln!(
            out,
            "\n{:>12} {:>9} {:>9} {:>9} {:>9}",
            "tier", "promote", "-> tuned", "demote", "-> tuned"
        );
        for (c, b) in current.iter().zip(&self.best) {
            let _ = writeln!(
                out,
                "{:>12} {:>9} {:>9} {:>9} {:>9}",
                c.tier, c.promote, b.promote, c.demote, b.demote
            );
        }
        let first = self.trials.first();
        if first.is_some_and(|t| t.late_vs_early.is_some()) {
            let show = |l: Option<(u32, u32)>| {
                l.map_or("none".to_owned(), |(c, p)| {
                    format!("early_cap {c}, late_after {p}%")
                })
            };
            let _ = writeln!(
                out,
                "\nlate seats: {} -> tuned {}",
                show(first.and_then(|t| t.late_seats)),
                show(self.best_late_seats)
            );
        }
        out
    }

    /// The current season's quotas, for [`TuneReport::tables`].
    pub fn current(&self) -> &[TierQuotas] {
        self.trials.first().map_or(&[], |t| &t.quotas)
    }
}
