//! The report as the text tables `leaguekit simulate` prints.
//!
//! Owns: the text layout. Must not: compute figures (the report has them all).

use std::fmt::Write;

use super::fairness::{DECILES, FairnessFigures, Rate, TierFairness};
use super::report::SimReport;

impl SimReport {
    /// The report as the text tables `leaguekit simulate` prints.
    pub fn tables(&self) -> String {
        let mut out = String::new();
        let w = self.tiers.iter().map(String::len).max().unwrap_or(6).max(9);
        match (&self.options, &self.replay) {
            (Some(o), _) => {
                let _ = writeln!(
                    out,
                    "season {:?}: {} players, {} periods, seed {}",
                    self.season, o.players, o.periods, o.seed
                );
            }
            (None, Some(r)) => {
                let _ = writeln!(
                    out,
                    "season {:?}: replay of {} ({} updates, {} players, periods {}-{}, {} retries dropped)",
                    self.season,
                    r.file,
                    r.events,
                    r.players,
                    r.first_period,
                    r.last_period,
                    r.duplicates
                );
            }
            (None, None) => {
                let _ = writeln!(out, "season {:?}", self.season);
            }
        }
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
            "{:>w$} {:>9} {:>9} {:>8} {:>7} {:>7}",
            "tier", "reached", "never", "average", "median", "p90"
        );
        let opt = |v: Option<u64>| v.map_or("-".to_owned(), |v| v.to_string());
        for r in &self.reach {
            let avg = r
                .average_periods
                .map_or("-".to_owned(), |a| format!("{a:.2}"));
            let _ = writeln!(
                out,
                "{:>w$} {:>9} {:>9} {:>8} {:>7} {:>7}",
                r.tier,
                r.reached,
                r.never,
                avg,
                opt(r.median_periods),
                opt(r.p90_periods)
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
        out.push_str(&self.fairness_tables());
        let refused: u64 = self.periods.iter().map(|p| p.refused).sum();
        if refused > 0 {
            let _ = writeln!(
                out,
                "{refused} score updates were refused (outside 0..=max_score); they changed nothing"
            );
        }
        out
    }
}

/// A rate as `12.3%`, or `-` without players.
fn pct(r: &Rate) -> String {
    r.percent.map_or("-".to_owned(), |p| format!("{p:.1}%"))
}

/// The one-line fairness figure: late joiners' promotion rate against early joiners'.
pub fn headline(f: &FairnessFigures) -> String {
    match f.late_vs_early {
        Some(x) => format!(
            "late joiners are promoted at {x:.2}x the rate of early joiners ({} vs {})",
            pct(&f.late),
            pct(&f.early)
        ),
        None => format!(
            "late joiners promoted: {}, early joiners: {}",
            pct(&f.late),
            pct(&f.early)
        ),
    }
}

impl SimReport {
    /// The fairness section of the tables: bracket sizes at the close and promotion
    /// rates by join time and bracket size, today's rule beside the season's.
    pub fn fairness_tables(&self) -> String {
        let mut out = String::new();
        let f = &self.fairness;
        let w = self.tiers.iter().map(String::len).max().unwrap_or(6).max(9);
        let rules: Vec<(&str, &FairnessFigures)> = match &f.today_rule {
            Some(t) => vec![("season", &f.season_rule), ("today", t)],
            None => vec![("season", &f.season_rule)],
        };
        let _ = writeln!(
            out,
            "\nfairness (early: joined in the first 3 tenths of a period, late: the last 3; tiers below the top)"
        );
        for (name, r) in &rules {
            let label = if rules.len() > 1 {
                format!("{name}'s rule: ")
            } else {
                String::new()
            };
            let _ = writeln!(out, "{label}{}", headline(r));
        }
        let _ = writeln!(out, "\nbrackets at the close, by players in the bracket");
        let _ = write!(out, "{:>w$}", "players");
        for (name, _) in &rules {
            let _ = write!(
                out,
                " {:>10} {:>10}",
                format!("brackets{}", suffix(name, rules.len())),
                "players"
            );
        }
        let _ = writeln!(out);
        for (b, label) in f.buckets.iter().enumerate() {
            if label == "-" {
                continue;
            }
            let _ = write!(out, "{label:>w$}");
            for (_, r) in &rules {
                let _ = write!(out, " {:>10} {:>10}", r.brackets[b], r.players[b]);
            }
            let _ = writeln!(out);
        }
        let _ = writeln!(
            out,
            "\npromotion rate by join time (tenth of the period){}",
            if rules.len() > 1 {
                "; * today's rule"
            } else {
                ""
            }
        );
        let _ = write!(out, "{:>w$}", "tier");
        for d in 0..DECILES {
            let _ = write!(out, " {:>7}", format!("{}-{}", d * 10, d * 10 + 10));
        }
        let _ = writeln!(out);
        self.rate_rows(&mut out, &rules, w, |t| t.by_join.iter().collect());
        let _ = writeln!(out, "\npromotion rate by players in the bracket");
        let _ = write!(out, "{:>w$}", "tier");
        let shown: Vec<usize> = (0..f.buckets.len())
            .filter(|&b| f.buckets[b] != "-")
            .collect();
        for &b in &shown {
            let _ = write!(out, " {:>7}", f.buckets[b]);
        }
        let _ = writeln!(out);
        self.rate_rows(&mut out, &rules, w, |t| {
            shown.iter().map(|&b| &t.by_size[b]).collect()
        });
        out
    }

    /// One row of rates per tier below the top and rule, `rates` picking the row's
    /// cells from the tier's figures.
    fn rate_rows(
        &self,
        out: &mut String,
        rules: &[(&str, &FairnessFigures)],
        w: usize,
        rates: impl Fn(&TierFairness) -> Vec<&Rate>,
    ) {
        let below_top = self.tiers.len().saturating_sub(1);
        for (t, tier) in self.tiers.iter().enumerate().take(below_top) {
            for (name, r) in rules {
                let label = format!("{tier}{}", suffix(name, rules.len()));
                let _ = write!(out, "{label:>w$}");
                for x in rates(&r.tiers[t]) {
                    let _ = write!(out, " {:>7}", pct(x));
                }
                let _ = writeln!(out);
            }
        }
    }
}

/// `*` marks today's rule when both are shown.
fn suffix(rule: &str, rules: usize) -> &'static str {
    if rules > 1 && rule == "today" {
        "*"
    } else {
        ""
    }
}
