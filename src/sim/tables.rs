//! The report as the text tables `leaguekit simulate` prints.
//!
//! Owns: the text layout. Must not: compute figures (the report has them all).

use std::fmt::Write;

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
