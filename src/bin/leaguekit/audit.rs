//! `leaguekit audit`: the operator actions recorded in the season's audit log.

use clap::Args;
use leaguekit::Season;
use leaguekit::operator::AuditQuery;
use serde_json::json;

use crate::Cli;
use crate::common::{Failure, parse_time, print, redis_league};

/// The audit log: every operator action (bans, adjustments, re-settlements, moves of
/// the staging clock) with who, when, what and why, oldest first.
#[derive(Args, Debug)]
pub(crate) struct AuditArgs {
    /// Only actions about this player.
    #[arg(long)]
    player: Option<String>,
    /// Only actions at or after this time (RFC 3339).
    #[arg(long)]
    since: Option<String>,
    /// At most this many entries (1-1000).
    #[arg(long, default_value_t = 1000)]
    limit: u64,
}

pub(crate) async fn run(cli: &Cli, season: Season, args: &AuditArgs) -> Result<(), Failure> {
    let mut query = AuditQuery::default().limit(args.limit);
    if let Some(p) = &args.player {
        query = query.player(p.clone());
    }
    if let Some(s) = &args.since {
        query = query.since(parse_time(s)?);
    }
    let league = redis_league(cli, season).await?;
    let entries = league.operator().audit(&query).await?;
    print(&json!({ "entries": entries }))
}
