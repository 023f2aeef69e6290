//! Bans from the command line: `ban`, `unban`, and the list of current `bans`. Each
//! action is recorded in the audit log as `cli:NAME` (`--actor`, `LEAGUEKIT_ACTOR`, else `$USER`).

use clap::Args;
use leaguekit::Season;

use crate::Cli;
use crate::common::{Failure, parse_time, print, redis_league};

/// Bans a player: their joins and score updates are refused, and they leave their
/// running bracket's board at once.
#[derive(Args, Debug)]
pub(crate) struct BanArgs {
    /// Player id.
    player: String,
    /// Why (recorded in the audit log).
    #[arg(long)]
    reason: String,
    /// When the ban ends (RFC 3339, league clock) [default: when lifted with `unban`].
    #[arg(long)]
    until: Option<String>,
}

/// Lifts a player's ban: they may join again.
#[derive(Args, Debug)]
pub(crate) struct UnbanArgs {
    /// Player id.
    player: String,
    /// Why (recorded in the audit log).
    #[arg(long)]
    reason: Option<String>,
}

/// Prints the ban.
pub(crate) async fn ban(cli: &Cli, season: Season, args: &BanArgs) -> Result<(), Failure> {
    let until = args.until.as_deref().map(parse_time).transpose()?;
    let league = redis_league(cli, season).await?;
    let ban = league
        .operator()
        .ban(
            &crate::common::actor(cli)?,
            &args.player,
            &args.reason,
            until,
        )
        .await?;
    print(&ban)
}

/// Prints `{"player", "lifted"}`: the ban lifted, `null` if there was none.
pub(crate) async fn unban(cli: &Cli, season: Season, args: &UnbanArgs) -> Result<(), Failure> {
    let league = redis_league(cli, season).await?;
    let lifted = league
        .operator()
        .unban(
            &crate::common::actor(cli)?,
            &args.player,
            args.reason.as_deref(),
        )
        .await?;
    print(&serde_json::json!({ "player": args.player, "lifted": lifted }))
}

/// Prints `{"bans": [...]}`: the bans that hold now, by player.
pub(crate) async fn list(cli: &Cli, season: Season) -> Result<(), Failure> {
    let league = redis_league(cli, season).await?;
    let bans = league.operator().bans().await?;
    print(&serde_json::json!({ "bans": bans }))
}
