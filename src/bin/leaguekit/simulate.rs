//! `leaguekit simulate`: the designer's simulator on synthetic players, its tables,
//! report and charts, and a second season side by side.

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use leaguekit::sim::{self, SimOptions, SimReport, chart};
use leaguekit::{Error, ManualClock, MemoryStore, RedisOptions, RedisStore, Season};
use serde_json::json;

use crate::Cli;
use crate::common::{Failure, emit, print, usage};

/// Simulate the season on synthetic players through the real engine; print tables
/// and write report.json and charts. Runs on the embedded store unless --redis.
#[derive(Args, Debug)]
pub(crate) struct SimulateArgs {
    /// Synthetic players [default: [simulation] players].
    #[arg(long)]
    players: Option<u64>,
    /// Periods to run [default: [simulation] periods].
    #[arg(long)]
    periods: Option<u64>,
    /// Seed: the same seed gives the same report [default: [simulation] seed].
    #[arg(long)]
    seed: Option<u64>,
    /// Most matches a player plays per period.
    #[arg(long)]
    matches: Option<u32>,
    /// Where to write report.json and the charts.
    #[arg(long, default_value = "sim-out")]
    out: PathBuf,
    /// Print report.json on stdout instead of the tables.
    #[arg(long)]
    json: bool,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
    /// Another season file to run on the same population, shown side by side.
    #[arg(long)]
    compare: Option<PathBuf>,
}

pub(crate) async fn run(cli: &Cli, season: Season, args: &SimulateArgs) -> Result<(), Failure> {
    let mut options = SimOptions::from_season(&season);
    if let Some(n) = args.players {
        options.players = n;
    }
    if let Some(n) = args.periods {
        options.periods = n;
    }
    if let Some(n) = args.seed {
        options.seed = n;
    }
    if let Some(n) = args.matches {
        options.matches = n;
    }
    let out = &args.out;
    let other = match &args.compare {
        Some(path) => Some(Season::load(path).map_err(|e| usage(e.to_string()))?),
        None => None,
    };
    std::fs::create_dir_all(out)
        .map_err(|e| usage(format!("cannot create {}: {e}", out.display())))?;
    let report = run_simulation(cli, season, &options, args.quiet).await?;
    write_report(&report, &out.join("report.json"))?;
    chart::write_charts(&report, out).map_err(|e| usage(e.to_string()))?;
    let compared = match other {
        Some(other) => {
            let b = run_simulation(cli, other, &options, args.quiet).await?;
            write_report(&b, &out.join("compare-report.json"))?;
            chart::write_comparison(&report, &b, out).map_err(|e| usage(e.to_string()))?;
            Some(b)
        }
        None => None,
    };
    if args.json {
        return match &compared {
            Some(b) => print(&json!({"config": report, "compare": b})),
            None => print(&report),
        };
    }
    let mut text = report.tables();
    if let Some(b) = &compared {
        text.push_str(&comparison_table(&report, b));
    }
    text.push_str(&format!(
        "\nwrote {}/report.json, tiers.svg/.png, movement.svg/.png{}\n",
        out.display(),
        if compared.is_some() {
            ", compare.svg/.png, compare-report.json"
        } else {
            ""
        }
    ));
    emit(&text)
}

/// Runs one simulation on the embedded store, or on Redis with `--redis` under a key
/// prefix of its own (the season's retention TTLs clean it up).
async fn run_simulation(
    cli: &Cli,
    mut season: Season,
    options: &SimOptions,
    quiet: bool,
) -> Result<SimReport, Failure> {
    let bar = if quiet || !std::io::stderr().is_terminal() {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(options.periods)
    };
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:30}] period {pos}/{len} ({elapsed})")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_message(format!("simulating {}", season.name));
    let clock = ManualClock::new(season.schedule.start);
    let progress = |done, _| bar.set_position(done);
    let report = match cli.redis.as_deref() {
        Some(url) => {
            season.key_prefix = format!(
                "{}.sim.{}.{}",
                season.key_prefix,
                options.seed,
                chrono::Utc::now().timestamp_millis()
            );
            let store = RedisStore::connect(url, RedisOptions::default())
                .await
                .map_err(|e| Failure::from(Error::from(e)))?;
            sim::simulate(season, store, clock, options, progress).await?
        }
        None => {
            let store = MemoryStore::with_clock(std::sync::Arc::new(clock.clone()));
            sim::simulate(season, store, clock, options, progress).await?
        }
    };
    bar.finish_and_clear();
    Ok(report)
}

fn write_report(report: &SimReport, path: &std::path::Path) -> Result<(), Failure> {
    let text = serde_json::to_string_pretty(report)
        .map_err(|e| usage(format!("cannot encode the report: {e}")))?;
    std::fs::write(path, text + "\n")
        .map_err(|e| usage(format!("cannot write {}: {e}", path.display())))
}

/// The two seasons side by side: the last period's population and the time to
/// reach each tier.
fn comparison_table(a: &SimReport, b: &SimReport) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\ncomparison on the same population: {:?} vs {:?}",
        a.season, b.season
    );
    let _ = writeln!(
        out,
        "{:>12} {:>10} {:>10} {:>12} {:>12} {:>9} {:>9}",
        "tier", "last A", "last B", "reach A", "reach B", "stuck A", "stuck B"
    );
    let mut names: Vec<&String> = a.tiers.iter().collect();
    for t in &b.tiers {
        if !names.contains(&t) {
            names.push(t);
        }
    }
    let last = |r: &SimReport, t: &str| {
        r.periods
            .last()
            .and_then(|p| p.players.get(t).copied())
            .map_or("-".to_owned(), |v| v.to_string())
    };
    let reach = |r: &SimReport, t: &str| {
        r.reach
            .iter()
            .find(|x| x.tier == t)
            .and_then(|x| x.average_periods)
            .map_or("-".to_owned(), |v| format!("{v:.2}"))
    };
    let stuck = |r: &SimReport, t: &str| {
        r.stuck
            .iter()
            .find(|x| x.tier == t)
            .map_or("-".to_owned(), |x| format!("{:.0}%", x.share * 100.0))
    };
    for t in names {
        let _ = writeln!(
            out,
            "{:>12} {:>10} {:>10} {:>12} {:>12} {:>9} {:>9}",
            t,
            last(a, t),
            last(b, t),
            reach(a, t),
            reach(b, t),
            stuck(a, t),
            stuck(b, t)
        );
    }
    out
}
