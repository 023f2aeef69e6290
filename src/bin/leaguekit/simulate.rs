//! `leaguekit simulate`: the designer's simulator on synthetic players or replayed
//! history, its tables, report and charts, a second season side by side, and the
//! tuner (`--tune`, in `tune.rs`).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use leaguekit::sim::{self, History, SimOptions, SimReport, chart};
use leaguekit::{Error, ManualClock, MemoryStore, RedisOptions, RedisStore, Season};
use serde_json::json;

use crate::Cli;
use crate::common::{Failure, emit, print, usage};

/// Simulate the season on synthetic players (or replay real history) through the
/// league's rules; print tables and write report.json and charts. Runs on the
/// embedded store, on every core, unless --redis.
#[derive(Args, Debug)]
pub(crate) struct SimulateArgs {
    /// Synthetic players [default: [simulation] players].
    #[arg(long)]
    pub(crate) players: Option<u64>,
    /// Periods to run [default: [simulation] periods].
    #[arg(long)]
    pub(crate) periods: Option<u64>,
    /// Seed: the same seed gives the same report [default: [simulation] seed].
    #[arg(long)]
    pub(crate) seed: Option<u64>,
    /// Most matches a player plays per period.
    #[arg(long)]
    pub(crate) matches: Option<u32>,
    /// When players start their period's play: `matches` (each match at a uniform
    /// time, joining at the first), `uniform` (a start uniform over the period, the
    /// matches after it) or `front` (most players early) [default: [simulation]
    /// arrival, else matches].
    #[arg(long, value_enum)]
    pub(crate) arrival: Option<ArrivalArg>,
    /// Where to write report.json and the charts.
    #[arg(long, default_value = "sim-out")]
    pub(crate) out: PathBuf,
    /// Print report.json on stdout instead of the tables.
    #[arg(long)]
    pub(crate) json: bool,
    /// No progress bar and no timing line.
    #[arg(long)]
    pub(crate) quiet: bool,
    /// Another season file to run on the same population (or history), side by side.
    #[arg(long)]
    compare: Option<PathBuf>,
    /// Replay real history instead of a synthetic population: JSON lines of updates
    /// ({"player","value","at"}, as `submit --batch` reads them) or `export` rows.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["players", "seed", "matches", "periods", "arrival"])]
    replay: Option<PathBuf>,
    /// Search the promote/demote quotas for the [tune] section's targets; writes the
    /// best season to OUT/tuned.toml.
    #[arg(long, conflicts_with_all = ["replay", "compare"])]
    tune: bool,
    /// Threads on the embedded store [default: one per core]; results do not depend
    /// on it.
    #[arg(long)]
    pub(crate) threads: Option<usize>,
    /// Run every event through the full engine (League on the embedded store, one
    /// thread) instead of the fast path; the report is the same, slower.
    #[arg(long)]
    full_engine: bool,
}

/// `--arrival`.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub(crate) enum ArrivalArg {
    Matches,
    Uniform,
    Front,
}

impl From<ArrivalArg> for sim::Arrival {
    fn from(a: ArrivalArg) -> sim::Arrival {
        match a {
            ArrivalArg::Matches => sim::Arrival::Matches,
            ArrivalArg::Uniform => sim::Arrival::Uniform,
            ArrivalArg::Front => sim::Arrival::Front,
        }
    }
}

/// What one run reads: a synthetic population or a history.
enum Input<'a> {
    Synthetic(&'a SimOptions),
    Replay(&'a History),
}

pub(crate) fn options(season: &Season, args: &SimulateArgs) -> SimOptions {
    let mut options = SimOptions::from_season(season);
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
    if let Some(a) = args.arrival {
        options.arrival = a.into();
    }
    options
}

pub(crate) async fn run(cli: &Cli, season: Season, args: &SimulateArgs) -> Result<(), Failure> {
    if args.tune {
        return crate::tune::run(cli, season, args).await;
    }
    let options = options(&season, args);
    let history = match &args.replay {
        Some(path) => Some(History::load(path).map_err(|e| usage(e.to_string()))?),
        None => None,
    };
    let input = match &history {
        Some(h) => Input::Replay(h),
        None => Input::Synthetic(&options),
    };
    let out = &args.out;
    let other = match &args.compare {
        Some(path) => Some(Season::load(path).map_err(|e| usage(e.to_string()))?),
        None => None,
    };
    std::fs::create_dir_all(out)
        .map_err(|e| usage(format!("cannot create {}: {e}", out.display())))?;
    let report = with_today(cli, season, &input, args).await?;
    write_report(&report, &out.join("report.json"))?;
    chart::write_charts(&report, out).map_err(|e| usage(e.to_string()))?;
    let compared = match other {
        Some(other) => {
            let b = with_today(cli, other, &input, args).await?;
            write_report(&b, &out.join("compare-report.json"))?;
            chart::write_comparison(&report, &b, out).map_err(|e| usage(e.to_string()))?;
            chart::write_fairness_comparison(&report, &b, out).map_err(|e| usage(e.to_string()))?;
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
    if let (Some(b), Some(path)) = (&compared, &args.compare) {
        let config = cli
            .config
            .clone()
            .unwrap_or_else(|| PathBuf::from("config/season.toml"));
        let labels = (config.display().to_string(), path.display().to_string());
        text.push_str(&comparison_table(&report, b, &labels));
    }
    text.push_str(&format!(
        "\nwrote {}/report.json, tiers.svg/.png, movement.svg/.png, reach.svg/.png, fairness.svg/.png{}\n",
        out.display(),
        if compared.is_some() {
            ", compare.svg/.png, compare-fairness.svg/.png, compare-report.json"
        } else {
            ""
        }
    ));
    emit(&text)
}

/// Runs one season on the input and, when its placement rule differs from today's
/// (reserved late seats), the same input under today's rule, whose fairness figures
/// go beside the season's.
async fn with_today(
    cli: &Cli,
    season: Season,
    input: &Input<'_>,
    args: &SimulateArgs,
) -> Result<SimReport, Failure> {
    let today = sim::today_rule(&season);
    let mut report = run_one(cli, season, input, args).await?;
    if let Some(today) = today {
        let t = run_one(cli, today, input, args).await?;
        report.beside_today(&t);
    }
    Ok(report)
}

/// A progress bar on stderr when it is a terminal (and not --quiet).
pub(crate) fn bar(quiet: bool, len: u64, what: &str, unit: &str) -> ProgressBar {
    let bar = if quiet || !std::io::stderr().is_terminal() {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(len)
    };
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "{{msg}} [{{bar:30}}] {unit} {{pos}}/{{len}} ({{elapsed}})"
        ))
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar.set_message(what.to_owned());
    bar
}

/// The process's resident high-water mark in MiB (Linux), for the timing line.
pub(crate) fn peak_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// Runs one season on the input: the fast path on the embedded store, the full
/// engine with --full-engine, or Redis with --redis (under a key prefix of its own,
/// which the season's retention TTLs clean up).
async fn run_one(
    cli: &Cli,
    mut season: Season,
    input: &Input<'_>,
    args: &SimulateArgs,
) -> Result<SimReport, Failure> {
    let replay = match input {
        Input::Replay(h) => Some(h.bind(&season).map_err(|e| usage(e.to_string()))?),
        Input::Synthetic(_) => None,
    };
    let periods = match (input, &replay) {
        (Input::Synthetic(o), _) => o.periods,
        (_, Some(r)) => r.info().last_period - r.info().first_period + 1,
        _ => 0,
    };
    let bar = bar(
        args.quiet,
        periods,
        &format!("simulating {}", season.name),
        "period",
    );
    let progress = |done, _| bar.set_position(done);
    let clock = ManualClock::new(season.schedule.start);
    let threads = args.threads.unwrap_or(0);
    let started = Instant::now();
    let (report, path) = match cli.redis.as_deref() {
        Some(url) => {
            season.key_prefix = format!(
                "{}.sim.{}",
                season.key_prefix,
                chrono::Utc::now().timestamp_millis()
            );
            // Records expire by the league clock, as on the embedded store: Redis's
            // own clock would keep a simulated season's expired records for weeks.
            let store = RedisStore::connect(url, RedisOptions::default())
                .await
                .map_err(|e| Failure::from(Error::from(e)))?
                .with_clock(std::sync::Arc::new(clock.clone()));
            let r = match (input, replay) {
                (Input::Synthetic(o), _) => {
                    sim::simulate(season, store, clock, o, progress).await?
                }
                (_, Some(r)) => sim::replay(season, store, clock, r, progress).await?,
                _ => return Err(usage("nothing to simulate")),
            };
            (r, "full engine on Redis".to_owned())
        }
        None if args.full_engine => {
            let store = MemoryStore::with_clock(std::sync::Arc::new(clock.clone()));
            let r = match (input, replay) {
                (Input::Synthetic(o), _) => {
                    sim::simulate(season, store, clock, o, progress).await?
                }
                (_, Some(r)) => sim::replay(season, store, clock, r, progress).await?,
                _ => return Err(usage("nothing to simulate")),
            };
            (r, "full engine on the embedded store".to_owned())
        }
        None => {
            let r = match (input, replay) {
                (Input::Synthetic(o), _) => sim::simulate_fast(&season, o, threads, progress)?,
                (_, Some(r)) => sim::replay_fast(&season, r, threads, progress)?,
                _ => return Err(usage("nothing to simulate")),
            };
            let n = if threads == 0 {
                std::thread::available_parallelism().map_or(1, |n| n.get())
            } else {
                threads
            };
            (r, format!("fast path on the embedded store, {n} threads"))
        }
    };
    bar.finish_and_clear();
    if !args.quiet {
        eprintln!(
            "simulated {} periods in {:.2} s ({path}; peak memory {})",
            report.periods.len(),
            started.elapsed().as_secs_f64(),
            peak_mib().map_or("unknown".to_owned(), |m| format!("{m:.0} MiB"))
        );
    }
    Ok(report)
}

pub(crate) fn write_report(report: &impl serde::Serialize, path: &Path) -> Result<(), Failure> {
    let text = serde_json::to_string_pretty(report)
        .map_err(|e| usage(format!("cannot encode the report: {e}")))?;
    std::fs::write(path, text + "\n")
        .map_err(|e| usage(format!("cannot write {}: {e}", path.display())))
}

/// The two seasons side by side: the last period's population and the time to
/// reach each tier.
fn comparison_table(a: &SimReport, b: &SimReport, files: &(String, String)) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\ncomparison on the same {}: A = {:?} ({}), B = {:?} ({})",
        if a.replay.is_some() {
            "history"
        } else {
            "population"
        },
        a.season,
        files.0,
        b.season,
        files.1
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
    let (fa, fb) = (&a.fairness.season_rule, &b.fairness.season_rule);
    let _ = writeln!(
        out,
        "\nfairness on the same {}:",
        if a.replay.is_some() {
            "history"
        } else {
            "population"
        }
    );
    let _ = writeln!(out, "A: {}", sim::fairness_headline(fa));
    let _ = writeln!(out, "B: {}", sim::fairness_headline(fb));
    let _ = writeln!(
        out,
        "{:>12} {:>10} {:>10} {:>12} {:>12}",
        "players", "brackets A", "brackets B", "players A", "players B"
    );
    for (k, label) in a.fairness.buckets.iter().enumerate() {
        if label == "-" || b.fairness.buckets.get(k) != Some(label) {
            continue;
        }
        let _ = writeln!(
            out,
            "{:>12} {:>10} {:>10} {:>12} {:>12}",
            label, fa.brackets[k], fb.brackets[k], fa.players[k], fb.players[k]
        );
    }
    out
}
