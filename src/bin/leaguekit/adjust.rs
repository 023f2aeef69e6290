//! `leaguekit adjust`: an operator's exact, audited change of a player's score in the
//! running period.

use clap::Args;
use leaguekit::Season;
use leaguekit::operator::Adjustment;

use crate::Cli;
use crate::common::{Failure, print, redis_league};

/// Change a player's score in the running period by or to N (audited; the season's
/// limits do not apply). The adjusted score keeps the time its current score was
/// reached.
#[derive(Args, Debug)]
pub(crate) struct AdjustArgs {
    /// Player id.
    player: String,
    /// Add N (may be negative) to the score.
    #[arg(
        long,
        allow_negative_numbers = true,
        conflicts_with = "set",
        required_unless_present = "set"
    )]
    by: Option<i64>,
    /// Set the score to N.
    #[arg(long, allow_negative_numbers = true)]
    set: Option<i64>,
    /// Why, for the audit log (required).
    #[arg(long)]
    reason: String,
}

pub(crate) async fn run(cli: &Cli, season: Season, args: &AdjustArgs) -> Result<(), Failure> {
    let change = match (args.by, args.set) {
        (Some(n), _) => Adjustment::By(n),
        (None, Some(n)) => Adjustment::Set(n),
        (None, None) => return Err(crate::common::usage("adjust needs --by N or --set N")),
    };
    let league = redis_league(cli, season).await?;
    let done = league
        .operator()
        .adjust(
            &crate::common::actor(cli)?,
            &args.player,
            change,
            &args.reason,
        )
        .await?;
    print(&done)
}
