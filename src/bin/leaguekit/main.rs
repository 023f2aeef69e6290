//! The `leaguekit` command line: season checks, data commands against Redis, and the
//! designer's tools. Data commands print one JSON object on stdout; errors go to stderr
//! with a non-zero exit code (2 for bad input or config, 1 for store failures).

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use chrono::{DateTime, Utc};
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use leaguekit::sim::{self, SimOptions, SimReport, chart};
use leaguekit::{BatchItem, SubmitOptions};
use leaguekit::{
    Error, League, ManualClock, MemoryStore, RedisOptions, RedisStore, RolloverOptions, Scheduler,
    SchedulerOptions, Season,
};
use serde::Deserialize;
use serde_json::json;

#[derive(Parser, Debug)]
#[command(
    name = "leaguekit",
    version,
    about = "Tiered, bracketed leagues on Redis"
)]
struct Cli {
    /// Season file [default: $LEAGUEKIT_CONFIG, then config/season.toml]
    #[arg(long, global = true, env = "LEAGUEKIT_CONFIG")]
    config: Option<PathBuf>,
    /// Redis URL [default: $LEAGUEKIT_REDIS]: redis://[user:password@]host[:port][/db],
    /// rediss://... (TLS), redis+cluster://[user:password@]host:port,host:port,...,
    /// rediss+cluster://... (Redis Cluster over TLS), or unix:///path/to/redis.sock
    ///
    /// One server: redis://127.0.0.1:6379/ (port 6379 and database 0 by default).
    /// A Redis Cluster: redis+cluster://10.0.0.1:6379,10.0.0.2:6379 (the hosts are seed
    /// nodes, one reachable seed is enough; no database). rediss:// and
    /// rediss+cluster:// use TLS. user:password@ logs in as an ACL user, :password@ as
    /// the default user; percent-encode both (@ is %40, : is %3A, / is %2F, % is %25, #
    /// is %23). ?protocol=resp3 selects RESP3. TLS certificates are always verified
    /// against the system's root certificates; for a private CA, set SSL_CERT_FILE to a
    /// PEM file that holds it.
    // hide_env_values: the URL may carry a password, which --help must not print.
    #[arg(long, global = true, env = "LEAGUEKIT_REDIS", hide_env_values = true)]
    redis: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Validate the season; print tiers, the exact score limit and the next periods.
    Check {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// How many periods to list.
        #[arg(long, default_value_t = 5)]
        periods: usize,
    },
    /// Place a player in a bracket of their tier for the period of TIME (default now).
    Join {
        /// Player id.
        player: String,
        /// Event time, RFC 3339.
        #[arg(long)]
        at: Option<String>,
    },
    /// Submit a score value (or a batch of JSON lines with --batch).
    Submit {
        /// Player id (not with --batch).
        #[arg(required_unless_present = "batch")]
        player: Option<String>,
        /// Value: a delta, a best or a new score, by the season's mode.
        #[arg(required_unless_present = "batch", allow_negative_numbers = true)]
        value: Option<i64>,
        /// Idempotency key: the same id within the window changes nothing.
        #[arg(long)]
        request_id: Option<String>,
        /// Event time, RFC 3339.
        #[arg(long)]
        at: Option<String>,
        /// JSON lines `{"player","value","request_id","at"}` from FILE or - (stdin).
        /// Every line gets one output line: applied, refused or unknown. Only lines
        /// with a request id can be replayed safely.
        #[arg(long, conflicts_with_all = ["player", "value", "request_id", "at"])]
        batch: Option<String>,
        /// With --batch: how long to wait for an unreachable store before the rest of
        /// the input is reported as not attempted, in seconds.
        #[arg(long, default_value_t = 300, requires = "batch")]
        wait: u64,
    },
    /// A page of a bracket's standings with cached profiles.
    Standings {
        /// Tier name.
        tier: String,
        /// Bracket number (from 1).
        bracket: u32,
        /// Period id [default: current].
        #[arg(long)]
        period: Option<u64>,
        /// First rank to show, 0-based.
        #[arg(long, default_value_t = 0)]
        offset: u64,
        /// Entries to show.
        #[arg(long, default_value_t = 100)]
        limit: u64,
    },
    /// A player's tier, bracket, rank and score.
    Player {
        /// Player id.
        player: String,
        /// Period id [default: current].
        #[arg(long)]
        period: Option<u64>,
    },
    /// Close every period that ended before TIME (default now): outcomes, rewards.
    Rollover {
        /// Close periods that ended at or before this time, RFC 3339 [default: now].
        #[arg(long)]
        at: Option<String>,
        /// Compute and print without writing anything.
        #[arg(long)]
        dry_run: bool,
    },
    /// Run the scheduler until Ctrl-C: catch up now, then close periods as they end.
    Run,
    /// A player's pending rewards.
    Rewards {
        /// Player id.
        player: String,
    },
    /// Claim a player's pending rewards; prints what was granted.
    Claim {
        /// Player id.
        player: String,
        /// Makes the claim idempotent: a repeat returns the same grants.
        #[arg(long)]
        request_id: Option<String>,
    },
    /// Every bracket's final standings and outcomes of a closed period, as JSON lines.
    Export {
        /// The closed period.
        #[arg(long)]
        period: u64,
    },
    /// Simulate the season on synthetic players through the real engine; print tables
    /// and write report.json and charts. Runs on the embedded store unless --redis.
    Simulate {
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
    },
    /// Set profile fields: FIELD=VALUE...
    Profile {
        /// Player id.
        player: String,
        /// FIELD=VALUE pairs.
        #[arg(required = true)]
        fields: Vec<String>,
    },
}

/// A failure with its exit code.
struct Failure {
    code: u8,
    message: String,
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        let code = match e {
            Error::Store(_) => 1,
            _ => 2,
        };
        Failure {
            code,
            message: e.to_string(),
        }
    }
}

fn usage(message: impl Into<String>) -> Failure {
    Failure {
        code: 2,
        message: message.into(),
    }
}

fn parse_time(s: &str) -> Result<DateTime<Utc>, Failure> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| {
            usage(format!(
                "invalid time {s:?}: {e}; use RFC 3339, e.g. 2026-01-05T12:00:00Z"
            ))
        })
}

fn load_season(cli: &Cli) -> Result<Season, Failure> {
    let path = cli
        .config
        .clone()
        .unwrap_or_else(|| PathBuf::from("config/season.toml"));
    Season::load(&path).map_err(|e| usage(e.to_string()))
}

async fn redis_league(cli: &Cli, season: Season) -> Result<League<RedisStore>, Failure> {
    let Some(url) = cli.redis.as_deref() else {
        return Err(usage(
            "this command needs a Redis: pass --redis redis://HOST:PORT/ or set LEAGUEKIT_REDIS",
        ));
    };
    let store = RedisStore::connect(url, RedisOptions::default())
        .await
        .map_err(|e| Failure::from(Error::from(e)))?;
    Ok(League::new(season, store))
}

fn print(value: &impl serde::Serialize) -> Result<(), Failure> {
    let text =
        serde_json::to_string(value).map_err(|e| usage(format!("cannot encode output: {e}")))?;
    emit(&(text + "\n"))
}

/// Writes to stdout. A reader that went away (`| head`) is not an error: the
/// output simply stops, as with any Unix tool.
fn emit(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure {
            code: 1,
            message: format!("cannot write output: {e}"),
        }),
    }
}

fn check(season: &Season, json: bool, n: usize) -> Result<(), Failure> {
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
        let _ = writeln!(
            text,
            "  {:<12} promote {:<6} demote {:<6} rewards [{}]",
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

fn quota(q: leaguekit::season::Quota) -> String {
    match q {
        leaguekit::season::Quota::Count(n) => n.to_string(),
        leaguekit::season::Quota::Percent(p) => format!("{p}%"),
        _ => "?".into(),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BatchLine {
    player: String,
    value: i64,
    request_id: Option<String>,
    at: Option<String>,
}

/// Batch lines go to the store in chunks of this many, one pipelined round trip each.
const BATCH_CHUNK: usize = 1000;

/// What happened to the lines of a batch.
#[derive(Default)]
struct BatchCounts {
    applied: u64,
    duplicates: u64,
    refused: u64,
    unknown: u64,
}

/// Waits until the store answers (its clock), for at most `limit`. True if it did.
async fn store_answers(league: &League<RedisStore>, limit: std::time::Duration) -> bool {
    use leaguekit::store::LeagueStore as _;
    let deadline = std::time::Instant::now() + limit;
    let mut delay = std::time::Duration::from_millis(100);
    loop {
        if league.store().now().await.is_ok() {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(std::time::Duration::from_secs(5));
    }
}

/// `submit --batch`: every input line gets exactly one output line, in order:
/// `{"line", "status": "applied" | "duplicate", ...the submission}`,
/// `{"line", "status": "refused", "error"}` (nothing was written), or
/// `{"line", "status": "unknown", "error"}` (the store failed after the update may have
/// been applied). After a store failure the run waits for the store to answer again
/// and goes on with the next chunk; lines it cannot try are refused as not attempted.
/// A summary goes to stderr; the exit code is 1 if any line is unknown, 2 if any was
/// refused, else 0.
async fn batch(league: &League<RedisStore>, source: &str, wait: u64) -> Result<(), Failure> {
    let reader: Box<dyn BufRead> = if source == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        let file = std::fs::File::open(source)
            .map_err(|e| usage(format!("cannot open batch file {source:?}: {e}")))?;
        Box::new(std::io::BufReader::new(file))
    };
    let mut counts = BatchCounts::default();
    let mut chunk: Vec<(usize, Result<BatchItem, String>)> = Vec::new();
    let mut lines = reader.lines().enumerate().peekable();
    // Set when the store failed: the next chunk first waits for it.
    let mut troubled = false;
    // Set when the store stayed away longer than `wait`: the rest is not attempted.
    let mut gave_up = false;
    while lines.peek().is_some() {
        chunk.clear();
        for (i, line) in lines.by_ref().take(BATCH_CHUNK) {
            let item = line
                .map_err(|e| format!("cannot read: {e}"))
                .and_then(|l| serde_json::from_str::<BatchLine>(&l).map_err(|e| format!("invalid JSON line: {e}; expected {{\"player\",\"value\",\"request_id\"?,\"at\"?}}")))
                .and_then(|l| {
                    let mut o = SubmitOptions::default();
                    if let Some(id) = l.request_id {
                        o = o.request_id(id);
                    }
                    if let Some(at) = l.at {
                        o = o.at(parse_time(&at).map_err(|f| f.message)?);
                    }
                    Ok(BatchItem::new(l.player, l.value).with_options(o))
                });
            chunk.push((i + 1, item));
        }
        if troubled && !gave_up {
            eprintln!("leaguekit: the store failed; waiting up to {wait} s for it to answer");
            if store_answers(league, std::time::Duration::from_secs(wait)).await {
                eprintln!("leaguekit: the store answers again; going on");
                troubled = false;
            } else {
                gave_up = true;
            }
        }
        let items: Vec<BatchItem> = chunk
            .iter()
            .filter_map(|(_, r)| r.as_ref().ok().cloned())
            .collect();
        let mut results = if gave_up {
            Vec::new().into_iter()
        } else {
            league.submit_many(&items).await.into_iter()
        };
        let mut out = std::io::stdout().lock();
        for (line, parsed) in &chunk {
            let value = match parsed {
                Err(e) => {
                    counts.refused += 1;
                    json!({"line": line, "status": "refused", "error": e})
                }
                Ok(_) if gave_up => {
                    counts.refused += 1;
                    json!({"line": line, "status": "refused",
                           "error": format!("not attempted: the store did not answer for {wait} s; nothing was written, resend this line")})
                }
                Ok(_) => match results.next() {
                    Some(Ok(s)) => {
                        let status = if s.applied {
                            counts.applied += 1;
                            "applied"
                        } else {
                            counts.duplicates += 1;
                            "duplicate"
                        };
                        let mut v = serde_json::to_value(&s).map_err(|e| usage(e.to_string()))?;
                        v["line"] = json!(line);
                        v["status"] = json!(status);
                        v
                    }
                    Some(Err(e)) if e.is_unknown() => {
                        counts.unknown += 1;
                        troubled = true;
                        json!({"line": line, "status": "unknown", "error": e.to_string()})
                    }
                    Some(Err(e)) => {
                        counts.refused += 1;
                        if matches!(e, Error::Store(_)) {
                            troubled = true;
                        }
                        json!({"line": line, "status": "refused", "error": e.to_string()})
                    }
                    None => {
                        counts.unknown += 1;
                        json!({"line": line, "status": "unknown", "error": "internal: missing result"})
                    }
                },
            };
            match writeln!(out, "{value}") {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(()),
                Err(e) => return Err(usage(format!("cannot write output: {e}"))),
            }
        }
    }
    let total = counts.applied + counts.duplicates + counts.refused + counts.unknown;
    eprintln!(
        "batch: {total} line(s): {} applied, {} duplicate(s), {} refused, {} unknown",
        counts.applied, counts.duplicates, counts.refused, counts.unknown
    );
    if counts.unknown > 0 {
        return Err(Failure {
            code: 1,
            message: format!(
                "{} line(s) have an unknown outcome: the store failed after they may have \
                 been applied; resend only those with a request id (a resend without one \
                 may count twice)",
                counts.unknown
            ),
        });
    }
    if counts.refused > 0 {
        return Err(Failure {
            code: 2,
            message: format!(
                "{} line(s) were refused and changed nothing; see their error lines",
                counts.refused
            ),
        });
    }
    Ok(())
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

async fn run(cli: Cli) -> Result<(), Failure> {
    let season = load_season(&cli)?;
    match &cli.command {
        Command::Check { json, periods } => check(&season, *json, *periods),
        Command::Join { player, at } => {
            let at = at.as_deref().map(parse_time).transpose()?;
            let league = redis_league(&cli, season).await?;
            print(&league.join(player, at).await?)
        }
        Command::Submit {
            player,
            value,
            request_id,
            at,
            batch: source,
            wait,
        } => {
            let league = redis_league(&cli, season).await?;
            if let Some(source) = source {
                return batch(&league, source, *wait).await;
            }
            let (Some(player), Some(value)) = (player, value) else {
                return Err(usage("submit needs PLAYER and VALUE, or --batch FILE"));
            };
            let mut o = SubmitOptions::default();
            if let Some(id) = request_id {
                o = o.request_id(id.clone());
            }
            if let Some(at) = at {
                o = o.at(parse_time(at)?);
            }
            print(&league.submit(player, *value, o).await?)
        }
        Command::Standings {
            tier,
            bracket,
            period,
            offset,
            limit,
        } => {
            let league = redis_league(&cli, season).await?;
            print(
                &league
                    .standings(tier, *bracket, *period, *offset, *limit)
                    .await?,
            )
        }
        Command::Player { player, period } => {
            let league = redis_league(&cli, season).await?;
            let view = league.player(player, *period).await?;
            let last = league.last_outcome(player).await?;
            let mut value = serde_json::to_value(&view).map_err(|e| usage(e.to_string()))?;
            value["last"] = serde_json::to_value(&last).map_err(|e| usage(e.to_string()))?;
            print(&value)
        }
        Command::Rollover { at, dry_run } => {
            let at = at.as_deref().map(parse_time).transpose()?;
            let league = redis_league(&cli, season).await?;
            let options = RolloverOptions::default().dry_run(*dry_run);
            let report = league.rollover(at, options).await?;
            print(&json!({
                "closed": report.closed,
                "empty": report.empty,
                "closed_through": report.closed_through,
                "blocked": report.blocked,
                "unblocked": report.unblocked,
                "dry_run": dry_run,
            }))
        }
        Command::Run => {
            let league = std::sync::Arc::new(redis_league(&cli, season).await?);
            let (scheduler, caught_up) = Scheduler::start(league, SchedulerOptions::default())
                .await
                .map_err(|e| Failure {
                    code: 1,
                    message: e.to_string(),
                })?;
            eprintln!(
                "leaguekit: scheduler running ({} period(s) caught up); Ctrl-C stops it",
                caught_up.closed.len()
            );
            tokio::signal::ctrl_c().await.map_err(|e| Failure {
                code: 1,
                message: format!("cannot wait for Ctrl-C: {e}"),
            })?;
            eprintln!("leaguekit: stopping");
            scheduler.shutdown().await.map_err(|e| Failure {
                code: 1,
                message: e.to_string(),
            })
        }
        Command::Rewards { player } => {
            let league = redis_league(&cli, season).await?;
            let rewards = league.rewards(player).await?;
            print(&json!({"player": player, "rewards": rewards}))
        }
        Command::Claim { player, request_id } => {
            let league = redis_league(&cli, season).await?;
            let granted = league.claim(player, request_id.as_deref()).await?;
            print(&json!({"player": player, "granted": granted}))
        }
        Command::Export { period } => {
            let league = redis_league(&cli, season).await?;
            let mut cursor: Option<String> = None;
            let mut out = std::io::stdout().lock();
            loop {
                let page = league.outcomes(*period, cursor.as_deref(), 5000).await?;
                let Some(last) = page.last() else { break };
                cursor = Some(last.cursor.clone());
                for r in &page {
                    let line = json!({
                        "period": r.period, "tier": r.tier, "bracket": r.bracket, "rank": r.rank,
                        "player": r.player, "score": r.score, "outcome": r.outcome,
                        "next_tier": r.next_tier, "reward": r.reward,
                    });
                    match writeln!(out, "{line}") {
                        Ok(()) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(()),
                        Err(e) => return Err(usage(format!("cannot write output: {e}"))),
                    }
                }
            }
            Ok(())
        }
        Command::Simulate {
            players,
            periods,
            seed,
            matches,
            out,
            json,
            quiet,
            compare,
        } => {
            let mut options = SimOptions::from_season(&season);
            if let Some(n) = players {
                options.players = *n;
            }
            if let Some(n) = periods {
                options.periods = *n;
            }
            if let Some(n) = seed {
                options.seed = *n;
            }
            if let Some(n) = matches {
                options.matches = *n;
            }
            let other = match compare {
                Some(path) => Some(Season::load(path).map_err(|e| usage(e.to_string()))?),
                None => None,
            };
            std::fs::create_dir_all(out)
                .map_err(|e| usage(format!("cannot create {}: {e}", out.display())))?;
            let report = run_simulation(&cli, season, &options, *quiet).await?;
            write_report(&report, &out.join("report.json"))?;
            chart::write_charts(&report, out).map_err(|e| usage(e.to_string()))?;
            let compared = match other {
                Some(other) => {
                    let b = run_simulation(&cli, other, &options, *quiet).await?;
                    write_report(&b, &out.join("compare-report.json"))?;
                    chart::write_comparison(&report, &b, out).map_err(|e| usage(e.to_string()))?;
                    Some(b)
                }
                None => None,
            };
            if *json {
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
        Command::Profile { player, fields } => {
            let mut pairs = Vec::new();
            for f in fields {
                let Some((k, v)) = f.split_once('=') else {
                    return Err(usage(format!("invalid field {f:?}; use FIELD=VALUE")));
                };
                pairs.push((k.to_owned(), v.to_owned()));
            }
            let league = redis_league(&cli, season).await?;
            let profile = league.set_profile(player, &pairs).await?;
            print(&json!({"player": player, "profile": profile}))
        }
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("LEAGUEKIT_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    match run(cli).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("error: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}
