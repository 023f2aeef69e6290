//! The `leaguekit` command line: season checks, data commands against Redis, and the
//! designer's tools. Data commands print one JSON object on stdout; errors go to stderr
//! with a non-zero exit code (2 for bad input or config, 1 for store failures).
//!
//! One file per command group: `check.rs`; `play.rs` (join, submit, player, profile)
//! with `batch.rs` (submit --batch); `boards.rs` (standings, around, counts, top);
//! `periods.rs` (rollover, run, rewards, claim, export); `simulate.rs` with `tune.rs`
//! (simulate --tune); `audit.rs` (the operator's audit log); `serve.rs` (the HTTP API, with the `server` feature). What they
//! (simulate --tune); `bans.rs` (ban, unban, bans); `serve.rs` (the HTTP API, with the `server` feature). What they
//! share is in `common.rs`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod adjust;
mod audit;
mod bans;
mod batch;
mod boards;
mod check;
mod clock;
mod common;
mod periods;
mod play;
mod resettle;
#[cfg(feature = "server")]
mod serve;
mod simulate;
mod tune;

use common::{Failure, load_season};

#[derive(Parser, Debug)]
#[command(
    name = "leaguekit",
    version,
    about = "Tiered, bracketed leagues on Redis"
)]
pub(crate) struct Cli {
    /// Season file [default: $LEAGUEKIT_CONFIG, then config/season.toml]
    #[arg(long, global = true, env = "LEAGUEKIT_CONFIG")]
    pub(crate) config: Option<PathBuf>,
    /// Who acts, for the audit log of operator commands (ban, unban, adjust, resettle,
    /// clock): recorded as cli:NAME [default: $LEAGUEKIT_ACTOR, then $USER]
    #[arg(long, global = true, env = "LEAGUEKIT_ACTOR")]
    pub(crate) actor: Option<String>,
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
    pub(crate) redis: Option<String>,
    /// Connect even if Redis's maxmemory-policy evicts keys (anything but noeviction)
    ///
    /// By default leaguekit refuses such a server: when its memory is full it deletes
    /// keys silently, and the league loses closed periods, players' tiers, request ids
    /// and bracket counters. Set maxmemory-policy noeviction instead; use this only
    /// where losing league data is acceptable (a throwaway test server).
    // Boolish: the variable takes 1/0, true/false, yes/no, on/off, as operators write it.
    #[arg(
        long,
        global = true,
        env = "LEAGUEKIT_ALLOW_EVICTING_REDIS",
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    pub(crate) allow_evicting_redis: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    Check(check::CheckArgs),
    Join(play::JoinArgs),
    Submit(play::SubmitArgs),
    Standings(boards::StandingsArgs),
    Around(boards::AroundArgs),
    Counts(boards::CountsArgs),
    Top(boards::TopArgs),
    Player(play::PlayerArgs),
    Rollover(periods::RolloverArgs),
    /// Run the scheduler until Ctrl-C: catch up now, then close periods as they end.
    Run,
    Rewards(periods::RewardsArgs),
    Claim(periods::ClaimArgs),
    Export(periods::ExportArgs),
    Resettle(resettle::ResettleArgs),
    Simulate(simulate::SimulateArgs),
    Profile(play::ProfileArgs),
    Audit(audit::AuditArgs),
    Clock(clock::ClockArgs),
    Ban(bans::BanArgs),
    Unban(bans::UnbanArgs),
    /// List the bans that hold now.
    Bans,
    Adjust(adjust::AdjustArgs),
    #[cfg(feature = "server")]
    Serve(serve::ServeArgs),
}

async fn run(cli: Cli) -> Result<(), Failure> {
    let season = load_season(&cli)?;
    match &cli.command {
        Command::Check(args) => check::run(&cli, season, args).await,
        Command::Join(args) => play::join(&cli, season, args).await,
        Command::Submit(args) => play::submit(&cli, season, args).await,
        Command::Standings(args) => boards::standings(&cli, season, args).await,
        Command::Around(args) => boards::around(&cli, season, args).await,
        Command::Counts(args) => boards::counts(&cli, season, args).await,
        Command::Top(args) => boards::top(&cli, season, args).await,
        Command::Player(args) => play::player(&cli, season, args).await,
        Command::Profile(args) => play::profile(&cli, season, args).await,
        Command::Audit(args) => audit::run(&cli, season, args).await,
        Command::Rollover(args) => periods::rollover(&cli, season, args).await,
        Command::Run => periods::run_scheduler(&cli, season).await,
        Command::Rewards(args) => periods::rewards(&cli, season, args).await,
        Command::Claim(args) => periods::claim(&cli, season, args).await,
        Command::Export(args) => periods::export(&cli, season, args).await,
        Command::Resettle(args) => resettle::run(&cli, season, args).await,
        Command::Simulate(args) => simulate::run(&cli, season, args).await,
        Command::Clock(args) => clock::run(&cli, season, args).await,
        Command::Ban(args) => bans::ban(&cli, season, args).await,
        Command::Unban(args) => bans::unban(&cli, season, args).await,
        Command::Bans => bans::list(&cli, season).await,
        Command::Adjust(args) => adjust::run(&cli, season, args).await,
        #[cfg(feature = "server")]
        Command::Serve(args) => serve::run(&cli, season, args).await,
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
