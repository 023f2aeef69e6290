//! `leaguekit resettle`: settle a closed bracket again without excluded players
//! (docs/operators.md, "Corrections after close").

use clap::Args;
use leaguekit::Season;

use crate::Cli;
use crate::common::{Failure, print, redis_league};

/// Settle a closed bracket again without the excluded players: the players ranked
/// below them take their places, promotions and rewards; what the excluded players
/// were given is revoked where it can be. Prints the report as JSON. Running it again
/// with the same exclusions changes nothing; more exclusions add to the earlier ones.
#[derive(Args, Debug)]
pub(crate) struct ResettleArgs {
    /// The closed period.
    #[arg(long)]
    period: u64,
    /// The bracket's tier (a cohort's brackets: `tier@cohort`).
    #[arg(long)]
    tier: String,
    /// The bracket number.
    #[arg(long)]
    bracket: u32,
    /// The players to exclude (one or more).
    #[arg(long, num_args = 1.., required = true)]
    exclude: Vec<String>,
    /// Why: kept in the audit log and shown with the corrected outcomes.
    #[arg(long)]
    reason: String,
}

pub(crate) async fn run(cli: &Cli, season: Season, args: &ResettleArgs) -> Result<(), Failure> {
    let league = redis_league(cli, season).await?;
    let report = league
        .operator()
        .resettle(
            &crate::common::actor(cli)?,
            args.period,
            &args.tier,
            args.bracket,
            &args.exclude,
            &args.reason,
        )
        .await?;
    print(&report)
}
