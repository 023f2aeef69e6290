//! Which bracket a join lands in: the join counters of one tier (or cohort) in one
//! period and the rule that turns them into bracket numbers, with and without
//! reserved late seats (`[brackets] early_cap` and `late_after`). Pure: the embedded
//! store and the simulator call it; `join.lua` is its Redis twin, held to it by the
//! store conformance tests.
//!
//! Without late seats a tier's joins are counted in arrival order and join `n` lands
//! in bracket `ceil(n / size)`.
//!
//! With late seats, joins before the late point (by the league clock) are counted by
//! the *early* counter and fill brackets to `early_cap`: early join `n` lands in
//! bracket `ceil(n / early_cap)`. The first join at or after the late point fixes the
//! number of early brackets, `E = ceil(early / early_cap)`; from then on every join
//! of the tier is late (even if a stepped clock later reads an earlier time), counted
//! by the *late* counter. Late join `l` (from 1):
//!
//! 1. tops up the last early bracket, which may hold fewer than `early_cap`, to
//!    `early_cap`: the first `d = E * early_cap - early` late joins go to bracket `E`;
//! 2. then goes round the early brackets in turn, one seat each, `size - early_cap`
//!    rounds: late join `d + k` goes to bracket `(k - 1) mod E + 1`;
//! 3. once all `E * size - early` free seats are taken, opens new brackets of `size`:
//!    bracket `E + ceil((l - (E * size - early)) / size)`.
//!
//! Every count is at most `size` by construction; the boards refuse a player past
//! `size` anyway (after a data loss that reset the counters while boards survived), and
//! the join is then retried past the full bracket ([`TierJoins::pass`]).

use std::time::Duration;

/// `[brackets] early_cap` and `late_after`: seats held back for late joiners.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct LateSeats {
    /// Players a bracket takes before the late point (`1..size`).
    pub early_cap: u32,
    /// Where in the period the late point is.
    pub after: LatePoint,
}

/// The late point of a period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LatePoint {
    /// A whole percentage (1..=99) of the period's duration after its start.
    Percent(u32),
    /// A time after the period's start (the period's end if the period is shorter).
    Elapsed(Duration),
}

impl std::fmt::Display for LatePoint {
    /// As the season file writes it: `60%`, or a duration such as `4d`, `36h`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LatePoint::Percent(p) => write!(f, "{p}%"),
            LatePoint::Elapsed(d) => {
                let s = d.as_secs();
                match s {
                    _ if s % 86_400 == 0 => write!(f, "{}d", s / 86_400),
                    _ if s % 3_600 == 0 => write!(f, "{}h", s / 3_600),
                    _ if s % 60 == 0 => write!(f, "{}m", s / 60),
                    _ => write!(f, "{s}s"),
                }
            }
        }
    }
}

impl LateSeats {
    /// Brackets fill to `early_cap` until the late point `after`.
    pub fn new(early_cap: u32, after: LatePoint) -> LateSeats {
        LateSeats { early_cap, after }
    }

    /// The first late millisecond of the period `start_ms..end_ms` (unix ms): a join
    /// whose league-clock time is at or after it is late. Percentages round down to
    /// the millisecond.
    pub fn late_from(&self, start_ms: i64, end_ms: i64) -> i64 {
        let length = (end_ms - start_ms).max(0);
        let offset = match self.after {
            LatePoint::Percent(p) => {
                (i128::from(length) * i128::from(p) / 100).clamp(0, i128::from(length)) as i64
            }
            LatePoint::Elapsed(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX).min(length),
        };
        start_ms.saturating_add(offset)
    }
}

/// The bracket sizes a season's join rule fills to: `size`, and `early_cap` before the
/// late point (equal to `size` without late seats).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// Players per bracket, at most.
    pub size: u64,
    /// Players per bracket before the late point.
    pub early_cap: u64,
}

impl Caps {
    /// The caps of brackets of `size` that fill to `early_cap` before the late point
    /// (`None`: no late seats; a cap is kept within `1..=size`).
    pub fn new(size: u32, early_cap: Option<u32>) -> Caps {
        let size = u64::from(size.max(1));
        let early_cap = early_cap.map_or(size, |c| u64::from(c).clamp(1, size));
        Caps { size, early_cap }
    }
}

/// One tier's (or cohort's) join counters in one period.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct TierJoins {
    /// Joins counted before the late point (every join, without late seats).
    pub early: u64,
    /// The number of early brackets, fixed by the first late join (`None`: no late
    /// join yet).
    pub fixed: Option<u64>,
    /// Joins counted at or after the late point.
    pub late: u64,
}

impl TierJoins {
    /// The bracket of early join number `n` (from 1).
    pub fn early_bracket(n: u64, caps: Caps) -> u64 {
        n.div_ceil(caps.early_cap)
    }

    /// The bracket of late join number `l` (from 1), `early` early joins having
    /// filled `fixed` early brackets (the module's rule, steps 1 to 3).
    pub fn late_bracket(early: u64, fixed: u64, l: u64, caps: Caps) -> u64 {
        let top_up = (fixed * caps.early_cap).saturating_sub(early);
        if fixed > 0 && l <= top_up {
            return fixed;
        }
        let k = l - top_up.min(l);
        let rounds = fixed * (caps.size - caps.early_cap);
        if fixed > 0 && k <= rounds {
            return (k - 1) % fixed + 1;
        }
        fixed + (k - rounds).div_ceil(caps.size)
    }

    /// Whether the tier's joins are in the late phase for a join at `now_ms`, the
    /// period turning late at `late_from_ms` (`None`: no late seats). Once fixed, the
    /// late phase stays, whatever the clock says.
    pub fn is_late(&self, now_ms: i64, late_from_ms: Option<i64>) -> bool {
        late_from_ms.is_some()
            && (self.fixed.is_some() || late_from_ms.is_some_and(|l| now_ms >= l))
    }

    /// Counts one new join, late or not, and returns its bracket.
    pub fn count(&mut self, late: bool, caps: Caps) -> u64 {
        if !late {
            self.early += 1;
            return Self::early_bracket(self.early, caps);
        }
        let fixed = *self
            .fixed
            .get_or_insert_with(|| self.early.div_ceil(caps.early_cap));
        self.late += 1;
        Self::late_bracket(self.early, fixed, self.late, caps)
    }

    /// Moves the counters past bracket `full`, found full (the store lost the
    /// counters while the board survived), so the next join lands after it: in the
    /// early phase, the early counter to `full * early_cap`; in the late phase, the
    /// late counter to the first seat of a new bracket after both `full` and the
    /// early brackets.
    pub fn pass(&mut self, full: u64, caps: Caps) {
        match self.fixed {
            None => self.early = self.early.max(full.saturating_mul(caps.early_cap)),
            Some(fixed) => {
                let free = (fixed * caps.size).saturating_sub(self.early);
                let past =
                    free.saturating_add(full.saturating_sub(fixed).saturating_mul(caps.size));
                self.late = self.late.max(past);
            }
        }
    }

    /// The brackets these counters have opened: 1 to this number.
    pub fn brackets(&self, caps: Caps) -> u64 {
        match self.fixed {
            None => self.early.div_ceil(caps.early_cap),
            Some(fixed) => {
                if self.late == 0 {
                    return fixed;
                }
                fixed.max(Self::late_bracket(self.early, fixed, self.late, caps))
            }
        }
    }

    /// Joins counted (an upper bound of the players placed: a pass skips seats).
    pub fn counted(&self) -> u64 {
        self.early + self.late
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(size: u64, early_cap: u64) -> Caps {
        Caps { size, early_cap }
    }

    /// Brackets filled by `early` early joins then `late` late ones: players per bracket.
    fn fill(early: u64, late: u64, c: Caps) -> Vec<u64> {
        let mut j = TierJoins::default();
        let mut sizes = vec![];
        for i in 0..early + late {
            let b = j.count(i >= early, c) as usize;
            if sizes.len() < b {
                sizes.resize(b, 0);
            }
            sizes[b - 1] += 1;
        }
        assert_eq!(j.brackets(c), sizes.len() as u64);
        sizes
    }

    #[test]
    fn without_late_seats_brackets_fill_in_order() {
        assert_eq!(fill(250, 0, caps(100, 100)), vec![100, 100, 50]);
    }

    #[test]
    fn late_joiners_top_up_the_last_then_go_round() {
        // 250 early joiners fill 80, 80, 80, 10; the first 70 late joiners bring the
        // fourth to 80, the next 80 go round (20 each), then new brackets of 100.
        assert_eq!(fill(250, 0, caps(100, 80)), vec![80, 80, 80, 10]);
        assert_eq!(fill(250, 70, caps(100, 80)), vec![80, 80, 80, 80]);
        assert_eq!(fill(250, 72, caps(100, 80)), vec![81, 81, 80, 80]);
        assert_eq!(fill(250, 150, caps(100, 80)), vec![100; 4]);
        assert_eq!(fill(250, 151, caps(100, 80)), vec![100, 100, 100, 100, 1]);
        assert_eq!(fill(0, 201, caps(100, 80)), vec![100, 100, 1]);
    }

    #[test]
    fn never_more_than_size() {
        for size in 1..=12u64 {
            for cap in 1..=size {
                for early in 0..40 {
                    for late in 0..40 {
                        let sizes = fill(early, late, caps(size, cap));
                        assert!(
                            sizes.iter().all(|&s| s <= size),
                            "{size} {cap} {early} {late}"
                        );
                        assert_eq!(sizes.iter().sum::<u64>(), early + late);
                        // Late joiners open a bracket only when every early one
                        // (and every one opened before) is full.
                        if sizes.len() as u64 > early.div_ceil(cap) {
                            let (last, full) = sizes.split_last().expect("a bracket");
                            assert!(
                                full.iter().all(|&s| s == size) && *last >= 1,
                                "{size} {cap} {early} {late}: {sizes:?}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn the_late_point() {
        let l = LateSeats {
            early_cap: 80,
            after: LatePoint::Percent(60),
        };
        assert_eq!(l.late_from(1_000, 2_000), 1_600);
        assert_eq!(l.late_from(0, 7 * 86_400_000), 362_880_000);
        let e = LateSeats {
            early_cap: 80,
            after: LatePoint::Elapsed(Duration::from_secs(5)),
        };
        assert_eq!(e.late_from(1_000, 3_000), 3_000);
        assert_eq!(e.late_from(1_000, 10_000), 6_000);
        assert_eq!(l.after.to_string(), "60%");
        assert_eq!(e.after.to_string(), "5s");
        assert_eq!(
            LatePoint::Elapsed(Duration::from_secs(4 * 86_400)).to_string(),
            "4d"
        );
    }

    #[test]
    fn a_pass_lands_after_the_full_bracket() {
        let c = caps(100, 80);
        let mut j = TierJoins::default();
        j.pass(3, c);
        assert_eq!(j.count(false, c), 4);
        let mut j = TierJoins {
            early: 250,
            fixed: Some(4),
            late: 5,
        };
        j.pass(2, c);
        assert_eq!(j.count(true, c), 5);
        let mut j = TierJoins {
            early: 250,
            fixed: Some(4),
            late: 5,
        };
        j.pass(6, c);
        assert_eq!(j.count(true, c), 7);
    }

    #[test]
    fn once_late_always_late() {
        let j = TierJoins {
            early: 3,
            fixed: Some(1),
            late: 0,
        };
        assert!(j.is_late(0, Some(100)));
        assert!(!TierJoins::default().is_late(99, Some(100)));
        assert!(TierJoins::default().is_late(100, Some(100)));
        assert!(!j.is_late(1_000, None));
    }
}
