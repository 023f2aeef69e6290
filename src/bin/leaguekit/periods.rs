//! The turn of periods from the command line: `rollover`, `run` (the scheduler),
//! `rewards`, `claim` and `export` of a closed period.

use std::io::Write;

use clap::Args;
use leaguekit::{RolloverOptions, Scheduler, SchedulerOptions, Season};
use serde_json::json;

use crate::Cli;
use crate::common::{Failure, parse_time, print, redis_league, usage};

/// Close every period that ended before TIME (default now): outcomes, rewards.
#[derive(Args, Debug)]
pub(crate) struct RolloverArgs {
    /// Close periods that ended at or before this time, RFC 3339 [default: now].
    #[arg(long)]
    at: Option<String>,
    /// Compute and print without writing anything.
    #[arg(long)]
    dry_run: bool,
}

/// A player's pending rewards.
#[derive(Args, Debug)]
pub(crate) struct RewardsArgs {
    /// Player id.
    player: String,
}

/// Claim a player's pending rewards; prints what was granted.
#[derive(Args, Debug)]
pub(crate) struct ClaimArgs {
    /// Player id.
    player: String,
    /// Makes the claim idempotent: a repeat returns the same grants.
    #[arg(long)]
    request_id: Option<String>,
}

/// Every bracket's final standings and outcomes of a closed period, as JSON lines.
#[derive(Args, Debug)]
pub(crate) struct ExportArgs {
    /// The closed period.
    #[arg(long)]
    period: u64,
}

pub(crate) async fn rollover(
    cli: &Cli,
    season: Season,
    args: &RolloverArgs,
) -> Result<(), Failure> {
    let at = args.at.as_deref().map(parse_time).transpose()?;
    let league = redis_league(cli, season).await?;
    let options = RolloverOptions::default().dry_run(args.dry_run);
    let report = league.rollover(at, options).await?;
    print(&json!({
        "closed": report.closed,
        "empty": report.empty,
        "closed_through": report.closed_through,
        "blocked": report.blocked,
        "unblocked": report.unblocked,
        "blocked_brackets": report.blocked_brackets,
        "unblocked_brackets": report.unblocked_brackets,
        "dry_run": args.dry_run,
    }))
}

/// `run`: the scheduler until Ctrl-C.
pub(crate) async fn run_scheduler(cli: &Cli, season: Season) -> Result<(), Failure> {
    let failed = |message: String| Failure { code: 1, message };
    if season.clock.travel {
        eprintln!("{}", crate::check::staging_warning(&season));
    }
    let league = std::sync::Arc::new(redis_league(cli, season).await?);
    let (scheduler, caught_up) = Scheduler::start(league, SchedulerOptions::default())
        .await
        .map_err(|e| failed(e.to_string()))?;
    eprintln!(
        "leaguekit: scheduler running ({} period(s) caught up); Ctrl-C stops it",
        caught_up.closed.len()
    );
    tokio::signal::ctrl_c()
        .await
        .map_err(|e| failed(format!("cannot wait for Ctrl-C: {e}")))?;
    eprintln!("leaguekit: stopping");
    scheduler
        .shutdown()
        .await
        .map_err(|e| failed(e.to_string()))
}

pub(crate) async fn rewards(cli: &Cli, season: Season, args: &RewardsArgs) -> Result<(), Failure> {
    let league = redis_league(cli, season).await?;
    let rewards = league.rewards(&args.player).await?;
    print(&json!({"player": args.player, "rewards": rewards}))
}

pub(crate) async fn claim(cli: &Cli, season: Season, args: &ClaimArgs) -> Result<(), Failure> {
    let league = redis_league(cli, season).await?;
    let granted = league
        .claim(&args.player, args.request_id.as_deref())
        .await?;
    print(&json!({"player": args.player, "granted": granted}))
}

pub(crate) async fn export(cli: &Cli, season: Season, args: &ExportArgs) -> Result<(), Failure> {
    let league = redis_league(cli, season).await?;
    let mut cursor: Option<String> = None;
    let mut out = std::io::stdout().lock();
    loop {
        let page = league
            .outcomes(args.period, cursor.as_deref(), 5000)
            .await?;
        let Some(last) = page.last() else { break };
        cursor = Some(last.cursor.clone());
        for r in &page {
            let mut line = json!({
                "period": r.period, "tier": r.tier, "bracket": r.bracket, "rank": r.rank,
                "player": r.player, "score": r.score, "outcome": r.outcome,
                "next_tier": r.next_tier, "reward": r.reward,
            });
            if let Some(c) = &r.cohort {
                line["cohort"] = json!(c);
            }
            if r.corrected {
                line["corrected"] = json!(true);
                line["reason"] = json!(r.reason);
            }
            match writeln!(out, "{line}") {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(()),
                Err(e) => return Err(usage(format!("cannot write output: {e}"))),
            }
        }
    }
    Ok(())
}
