//! `leaguekit check`: the season validated, its tiers, exact score limit, calendar and
//! next periods; with `--against`, what the file would change in the live league.

use chrono::Utc;
use clap::Args;
use leaguekit::Season;
use serde_json::json;

use crate::common::*;

/// Validate the season; print tiers, the exact score limit and the next periods.
#[derive(Args, Debug)]
pub(crate) struct CheckArgs {
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// How many periods to list.
    #[arg(long, default_value_t = 5)]
    periods: usize,
    /// Compare the file with the live league (needs --redis): what changes for whom,
    /// from which period, and what would be refused. Exit code 2 if anything is.
    #[arg(long)]
    against: bool,
}

pub(crate) async fn run(cli: &crate::Cli, season: Season, args: &CheckArgs) -> Result<(), Failure> {
    if season.clock.travel {
        eprintln!("{}", staging_warning(&season));
    }
    if !args.against {
        return validate(&season, args);
    }
    let league = redis_league(cli, season).await?;
    let edits = league.compare_with_live().await?;
    if args.json {
        print(&edits)?;
    } else {
        use std::fmt::Write as _;
        let mut text = format!(
            "against the live league (running period {}):\n",
            edits.running
        );
        for line in &edits.refused {
            let _ = writeln!(text, "  REFUSED: {line}");
        }
        for line in &edits.changes {
            let _ = writeln!(text, "  {line}");
        }
        if edits.refused.is_empty() && edits.changes.is_empty() {
            text.push_str("  no changes\n");
        }
        emit(&text)?;
    }
    if edits.refused.is_empty() {
        Ok(())
    } else {
        Err(usage(format!(
            "{} change(s) would be refused by the live league; see above",
            edits.refused.len()
        )))
    }
}

/// The warning for a season with a staging clock, which no production league has.
pub(crate) fn staging_warning(season: &Season) -> String {
    format!(
        "WARNING: season {:?} has a STAGING CLOCK ([clock] travel = true): operators can \
         move its league clock forward (`leaguekit clock advance`), closing periods early. \
         Never use it for a live league.",
        season.name
    )
}

fn validate(season: &Season, args: &CheckArgs) -> Result<(), Failure> {
    let (json, n) = (args.json, args.periods);
    let now = Utc::now();
    let periods = season.calendar.periods_from(now, n.max(1));
    // Where the calendar ends: 100 years on, or earlier when a fine cron pattern reaches
    // the period cap; events after the last period are refused, so say it plainly.
    let last = season.calendar.last_period();
    let capped = season.calendar.ends_at_period_cap();
    let longest = season.calendar.max_period_millis();
    if json {
        let tiers: Vec<_> = season
            .tiers
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "promote": quota(t.promote),
                    "demote": quota(t.demote),
                    "zones": t.zones.as_str(),
                    "min_players": t.min_players,
                    "rewards": t.rewards.iter().map(|r| json!({"first": r.first, "last": r.last, "grant": r.grant})).collect::<Vec<_>>(),
                })
            })
            .collect();
        let periods: Vec<_> = periods
            .iter()
            .map(|p| json!({"id": p.id, "start": p.start.to_rfc3339(), "end": p.end.to_rfc3339()}))
            .collect();
        return print(&json!({
            "name": season.name,
            "tiers": tiers,
            "max_score": season.packing.max_score(),
            "largest_max_score": leaguekit::season::packing::Packing::largest_max_score(season.packing.ticks()),
            "periods": periods,
            "calendar": {
                "periods": last.id,
                "last_end": last.end.to_rfc3339(),
                "ends_at_period_cap": capped,
                "longest_period_ms": longest,
            },
            "brackets": {
                "size": season.brackets.size,
                "join": season.brackets.join.as_str(),
                "early_cap": season.brackets.late.map(|l| l.early_cap),
                "late_after": season.brackets.late.map(|l| l.after.to_string()),
            },
            "clock": {
                "max_skew_ms": season.clock.max_skew.as_millis() as u64,
                "travel": season.clock.travel,
            },
            "events": season.events.map(|e| json!({
                "keep_secs": e.keep_secs(),
                "max_per_log": e.max_per_log,
                "overtaken": e.overtaken,
            })),
        }));
    }
    // 1000000 -> "1,000,000"
    fn grouped(n: u64) -> String {
        let digits = n.to_string();
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    }
    // 608400000 -> "7 d 1 h"
    fn duration(ms: u64) -> String {
        let parts = [
            (ms / 86_400_000, "d"),
            (ms / 3_600_000 % 24, "h"),
            (ms / 60_000 % 60, "min"),
            (ms / 1000 % 60, "s"),
            (ms % 1000, "ms"),
        ];
        let text: Vec<String> = parts
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, unit)| format!("{n} {unit}"))
            .collect();
        if text.is_empty() {
            "0 ms".into()
        } else {
            text.join(" ")
        }
    }
    use std::fmt::Write as _;
    let mut text = String::new();
    let _ = writeln!(text, "season {:?}: valid", season.name);
    let _ = writeln!(
        text,
        "scores: 0..={} exact (largest this schedule allows at {} resolution: {})",
        season.packing.max_score(),
        match season.scoring.time_resolution {
            leaguekit::season::Resolution::Second => "1s",
            _ => "1ms",
        },
        leaguekit::season::packing::Packing::largest_max_score(season.packing.ticks()).unwrap_or(0)
    );
    if capped {
        let days = (last.end - season.schedule.start).num_days();
        let _ = writeln!(
            text,
            "calendar: ENDS EARLY: {} periods (the most a cron schedule has), the last ends {} \
             ({days} days after the start); events after that are refused. Use a coarser \
             pattern (at most 27 periods a day) to cover 100 years",
            grouped(last.id),
            last.end.to_rfc3339(),
        );
    } else {
        let _ = writeln!(
            text,
            "calendar: {} periods over 100 years, the last ends {}",
            grouped(last.id),
            last.end.to_rfc3339(),
        );
    }
    let _ = writeln!(text, "longest period: {}", duration(longest));
    let _ = match season.brackets.late {
        None => writeln!(
            text,
            "brackets: {} players, join {}",
            season.brackets.size,
            season.brackets.join.as_str()
        ),
        Some(l) => writeln!(
            text,
            "brackets: {} players, join {}; late seats: filled to {} until {} of each period, \
             then topped up by late joiners",
            season.brackets.size,
            season.brackets.join.as_str(),
            l.early_cap,
            l.after
        ),
    };
    let _ = match season.events {
        None => writeln!(
            text,
            "events: none logged (add [events] for webhooks and streams)"
        ),
        Some(e) => writeln!(text, "events: logged ({})", e.describe()),
    };
    let _ = writeln!(text, "tiers (lowest first):");
    for t in &season.tiers {
        let rewards: Vec<String> = t
            .rewards
            .iter()
            .map(|r| {
                if r.first == r.last {
                    format!("{}: {}", r.first, r.grant)
                } else {
                    format!("{}-{}: {}", r.first, r.last, r.grant)
                }
            })
            .collect();
        // The zone rules only when they differ from the default.
        let mut zones = String::new();
        if t.zones != leaguekit::season::Zones::Players {
            zones.push_str(&format!(" zones {:?}", t.zones.as_str()));
        }
        if t.min_players > 0 {
            zones.push_str(&format!(" min_players {}", t.min_players));
        }
        let _ = writeln!(
            text,
            "  {:<12} promote {:<6} demote {:<6}{zones} rewards [{}]",
            t.name,
            quota(t.promote),
            quota(t.demote),
            rewards.join(", ")
        );
    }
    let _ = writeln!(text, "periods ({}):", season.schedule.timezone);
    if periods.is_empty() {
        let _ = writeln!(text, "  none: the calendar ended {}", last.end.to_rfc3339());
    }
    for p in periods {
        let _ = writeln!(
            text,
            "  {:>5}  {}  ->  {}",
            p.id,
            p.start.to_rfc3339(),
            p.end.to_rfc3339()
        );
    }
    emit(&text)
}

pub(crate) fn quota(q: leaguekit::season::Quota) -> String {
    match q {
        leaguekit::season::Quota::Count(n) => n.to_string(),
        leaguekit::season::Quota::Percent(p) => format!("{p}%"),
        _ => "?".into(),
    }
}
