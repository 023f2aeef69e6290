//! `leaguekit clock`: the staging clock of a season with `[clock] travel = true`:
//! `show`, `advance DURATION`, `set TIME`. Every move is in the audit log.

use clap::{Args, Subcommand};
use leaguekit::Season;

use crate::Cli;
use crate::common::{Failure, parse_time, print, redis_league, usage};

/// The league clock; move a staging league's clock forward ([clock] travel = true).
#[derive(Args, Debug)]
pub(crate) struct ClockArgs {
    #[command(subcommand)]
    action: ClockAction,
}

#[derive(Subcommand, Debug)]
enum ClockAction {
    /// Print the league clock, the staging offset and whether the season travels.
    Show,
    /// Move the league clock of every process forward by DURATION (90s, 15m, 1h, 3d).
    Advance {
        /// How far: a whole number followed by ms, s, m, h or d.
        duration: String,
        /// Why, for the audit log.
        #[arg(long)]
        reason: Option<String>,
    },
    /// Move the league clock of every process forward to TIME (RFC 3339).
    Set {
        /// The new time, after the league clock's now.
        time: String,
        /// Why, for the audit log.
        #[arg(long)]
        reason: Option<String>,
    },
}

pub(crate) async fn run(cli: &Cli, season: Season, args: &ClockArgs) -> Result<(), Failure> {
    let league = redis_league(cli, season).await?;
    let operator = league.operator();
    let view = match &args.action {
        ClockAction::Show => operator.clock().await?,
        ClockAction::Advance { duration, reason } => {
            let by = leaguekit::season::parse_duration(duration)
                .map_err(|m| usage(format!("invalid duration {duration:?}: {m}")))?;
            operator
                .advance_clock(&crate::common::actor(cli)?, by, reason.as_deref())
                .await?
        }
        ClockAction::Set { time, reason } => {
            let to = parse_time(time)?;
            operator
                .set_clock(&crate::common::actor(cli)?, to, reason.as_deref())
                .await?
        }
    };
    print(&view)
}
