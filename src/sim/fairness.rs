//! The fairness section of a report: what late joiners and small brackets meet. The
//! distribution of bracket sizes at the close, and each tier's promotion rate by the
//! player's join time (tenths of the period) and by the size of their bracket.
//!
//! Both run paths count the same integers per closed bracket ([`FairCounts`]), in
//! integers and rates are computed once at the end, so the section is byte-identical
//! on either path with any number of threads.
//!
//! Owns: the buckets, the counts and the section's shape. Must not: run anything.

use serde::Serialize;

/// Tenths of the period a join time falls in.
pub(crate) const DECILES: usize = 10;
/// Bracket size buckets: under 10%, 25%, 50%, 80% of `size`, under `size`, `size`.
pub(crate) const BUCKETS: usize = 6;
/// Lower bounds of the buckets but the last, in percent of `size`.
const BOUNDS: [u64; BUCKETS - 1] = [0, 10, 25, 50, 80];

/// The lowest bracket size of bucket `b` (< `BUCKETS - 1`) for brackets of `size`.
fn low(b: usize, size: u64) -> u64 {
    (size * BOUNDS[b]).div_ceil(100).max(1)
}

/// The bucket of a bracket of `n` players (1..=`size`).
pub(crate) fn bucket(n: u64, size: u64) -> usize {
    if n >= size {
        return BUCKETS - 1;
    }
    (0..BUCKETS - 1)
        .rev()
        .find(|&b| low(b, size) <= n)
        .unwrap_or(0)
}

/// The buckets' labels for brackets of `size`, e.g. `1-9`, ..., `80-99`, `100`; a
/// bucket no size falls in (small brackets) is `-`.
pub(crate) fn labels(size: u64) -> Vec<String> {
    let mut out: Vec<String> = (0..BUCKETS - 1)
        .map(|b| {
            let lo = low(b, size);
            let hi = if b + 2 < BUCKETS {
                low(b + 1, size).min(size)
            } else {
                size
            }
            .saturating_sub(1);
            let taken = (b + 1..BUCKETS - 1).any(|c| low(c, size) == lo);
            match (lo <= hi && !taken, lo == hi) {
                (false, _) => "-".to_owned(),
                (true, true) => lo.to_string(),
                (true, false) => format!("{lo}-{hi}"),
            }
        })
        .collect();
    out.push(size.to_string());
    out
}

/// The tenth of the period (0..=9) a join `at` ms after its start falls in.
pub(crate) fn decile(at: i64, length: i64) -> usize {
    let at = u128::try_from(at.max(0)).unwrap_or(0);
    let length = u128::try_from(length.max(1)).unwrap_or(1);
    ((at * DECILES as u128 / length) as usize).min(DECILES - 1)
}

/// Counts over closed brackets; summed in any order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FairCounts {
    /// Brackets and players per size bucket.
    brackets: [u64; BUCKETS],
    players: [u64; BUCKETS],
    /// Tier × decile, then tier × bucket: (placed, promoted).
    by_join: Vec<[u64; 2]>,
    by_size: Vec<[u64; 2]>,
}

impl FairCounts {
    pub(crate) fn new(tiers: usize) -> FairCounts {
        FairCounts {
            by_join: vec![[0; 2]; tiers * DECILES],
            by_size: vec![[0; 2]; tiers * BUCKETS],
            ..FairCounts::default()
        }
    }

    /// A closed bracket of tier `tier`, of `n` players, `promoted` of them promoted.
    pub(crate) fn bracket(&mut self, tier: usize, b: usize, n: u64, promoted: u64) {
        self.brackets[b] += 1;
        self.players[b] += n;
        if let Some(x) = self.by_size.get_mut(tier * BUCKETS + b) {
            x[0] += n;
            x[1] += promoted;
        }
    }

    /// Players of tier `tier` who joined in tenth `d`, `promoted` of `n` promoted.
    pub(crate) fn joined(&mut self, tier: usize, d: usize, n: u64, promoted: u64) {
        if let Some(x) = self.by_join.get_mut(tier * DECILES + d) {
            x[0] += n;
            x[1] += promoted;
        }
    }

    /// The section's figures, for tiers `tiers` (lowest first).
    pub(crate) fn figures(&self, tiers: &[String]) -> FairnessFigures {
        let rate = |x: &[u64; 2]| Rate::new(x[0], x[1]);
        let tier_figures: Vec<TierFairness> = tiers
            .iter()
            .enumerate()
            .map(|(t, name)| TierFairness {
                tier: name.clone(),
                by_join: (0..DECILES)
                    .map(|d| rate(&self.by_join[t * DECILES + d]))
                    .collect(),
                by_size: (0..BUCKETS)
                    .map(|b| rate(&self.by_size[t * BUCKETS + b]))
                    .collect(),
            })
            .collect();
        // Early and late joiners of every tier that can promote (all but the top).
        let sum = |ds: std::ops::Range<usize>| {
            let mut x = [0u64; 2];
            for t in 0..tiers.len().saturating_sub(1) {
                for d in ds.clone() {
                    x[0] += self.by_join[t * DECILES + d][0];
                    x[1] += self.by_join[t * DECILES + d][1];
                }
            }
            rate(&x)
        };
        let early = sum(0..3);
        let late = sum(DECILES - 3..DECILES);
        let late_vs_early = match (early.promoted, late.players) {
            (0, _) | (_, 0) => None,
            _ => Some(round3(
                (late.promoted as f64 * early.players as f64)
                    / (late.players as f64 * early.promoted as f64),
            )),
        };
        FairnessFigures {
            brackets: self.brackets.to_vec(),
            players: self.players.to_vec(),
            tiers: tier_figures,
            early,
            late,
            late_vs_early,
        }
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Players and how many of them were promoted.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Rate {
    /// Players placed.
    pub players: u64,
    /// Of them, promoted at the close.
    pub promoted: u64,
    /// `promoted / players` in percent, two decimals (`None` without players).
    pub percent: Option<f64>,
}

impl Rate {
    fn new(players: u64, promoted: u64) -> Rate {
        Rate {
            players,
            promoted,
            percent: (players > 0)
                .then(|| (promoted as f64 * 10_000.0 / players as f64).round() / 100.0),
        }
    }
}

/// One tier's promotion rates.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct TierFairness {
    /// The tier.
    pub tier: String,
    /// By the tenth of the period the player joined in (10 entries, earliest first).
    pub by_join: Vec<Rate>,
    /// By the size of the player's bracket at the close (one entry per bucket).
    pub by_size: Vec<Rate>,
}

/// What one placement rule did over a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct FairnessFigures {
    /// Brackets closed per size bucket (players in the bracket at the close).
    pub brackets: Vec<u64>,
    /// Players in those brackets per size bucket.
    pub players: Vec<u64>,
    /// Per tier, lowest first.
    pub tiers: Vec<TierFairness>,
    /// Players who joined in the first three tenths of a period, in every tier but
    /// the top one (which promotes nobody), and how many were promoted.
    pub early: Rate,
    /// The same for the last three tenths.
    pub late: Rate,
    /// Late joiners' promotion rate divided by early joiners' (three decimals; `None`
    /// when either is undefined or early joiners were never promoted).
    pub late_vs_early: Option<f64>,
}

/// The fairness section of a report.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Fairness {
    /// The bracket size buckets, e.g. `1-9` ... `80-99`, `100` for brackets of 100.
    pub buckets: Vec<String>,
    /// Under the season's placement rule.
    pub season_rule: FairnessFigures,
    /// Under today's rule (no reserved late seats), on the same population, when the
    /// season's rule differs from it (see [`super::today_rule`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub today_rule: Option<FairnessFigures>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_by_fractions_of_the_size() {
        assert_eq!(
            labels(100),
            ["1-9", "10-24", "25-49", "50-79", "80-99", "100"]
        );
        assert_eq!(bucket(1, 100), 0);
        assert_eq!(bucket(9, 100), 0);
        assert_eq!(bucket(10, 100), 1);
        assert_eq!(bucket(79, 100), 3);
        assert_eq!(bucket(80, 100), 4);
        assert_eq!(bucket(99, 100), 4);
        assert_eq!(bucket(100, 100), 5);
        assert_eq!(labels(20), ["1", "2-4", "5-9", "10-15", "16-19", "20"]);
        assert_eq!(labels(1), ["-", "-", "-", "-", "-", "1"]);
        assert_eq!(bucket(1, 1), 5);
        assert_eq!(labels(3), ["-", "-", "1", "2", "-", "3"]);
        for size in 1..=120u64 {
            let l = labels(size);
            for n in 1..=size {
                assert_ne!(l[bucket(n, size)], "-", "{n} of {size}");
            }
        }
    }

    #[test]
    fn deciles_of_the_period() {
        assert_eq!(decile(0, 1000), 0);
        assert_eq!(decile(99, 1000), 0);
        assert_eq!(decile(100, 1000), 1);
        assert_eq!(decile(999, 1000), 9);
        assert_eq!(decile(5000, 1000), 9);
    }
}
