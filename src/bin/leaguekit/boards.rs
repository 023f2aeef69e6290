//! Reading boards from the command line: `standings` of a bracket, `around` a player,
//! `counts` of players and brackets per tier, the `top` of a whole tier.

use clap::Args;
use leaguekit::Season;
use leaguekit::season::board_group;

use crate::Cli;
use crate::common::{Failure, print, redis_league, usage};

/// A page of a bracket's standings with cached profiles.
#[derive(Args, Debug)]
pub(crate) struct StandingsArgs {
    /// Tier name.
    tier: String,
    /// Bracket number (from 1; within the cohort with --cohort).
    bracket: u32,
    /// The cohort's brackets of the tier.
    #[arg(long)]
    cohort: Option<String>,
    /// Period id [default: current].
    #[arg(long)]
    period: Option<u64>,
    /// First rank to show, 0-based.
    #[arg(long, default_value_t = 0)]
    offset: u64,
    /// Entries to show.
    #[arg(long, default_value_t = 100)]
    limit: u64,
}

/// The entries around a player in their bracket, with cached profiles.
#[derive(Args, Debug)]
pub(crate) struct AroundArgs {
    /// Player id.
    player: String,
    /// Entries above and below the player (at most 500).
    #[arg(long, default_value_t = 5)]
    radius: u64,
    /// Period id [default: current].
    #[arg(long)]
    period: Option<u64>,
}

/// The best players of a whole tier, across its brackets.
#[derive(Args, Debug)]
pub(crate) struct TopArgs {
    /// Tier name.
    tier: String,
    /// Period id [default: current]; a closed period's list is the one frozen at its
    /// rollover.
    #[arg(long)]
    period: Option<u64>,
    /// Entries to show (at most 1000).
    #[arg(long, default_value_t = 100)]
    limit: u64,
    /// One cohort's list [default: the whole tier, across cohorts].
    #[arg(long)]
    cohort: Option<String>,
}

/// Players and brackets per tier in a period.
#[derive(Args, Debug)]
pub(crate) struct CountsArgs {
    /// Period id [default: current].
    #[arg(long)]
    period: Option<u64>,
    /// Only this cohort's players and brackets.
    #[arg(long)]
    cohort: Option<String>,
}

pub(crate) async fn standings(
    cli: &Cli,
    season: Season,
    args: &StandingsArgs,
) -> Result<(), Failure> {
    let league = redis_league(cli, season).await?;
    let page = league
        .standings(
            &board_group(&args.tier, args.cohort.as_deref()),
            args.bracket,
            args.period,
            args.offset,
            args.limit,
        )
        .await?;
    print(&page)
}

/// Prints the standings around the player, or `null` (and a note on stderr) when the
/// player is not placed in the period.
pub(crate) async fn around(cli: &Cli, season: Season, args: &AroundArgs) -> Result<(), Failure> {
    let league = redis_league(cli, season).await?;
    let page = league
        .around(&args.player, args.radius, args.period)
        .await?;
    if page.is_none() {
        eprintln!(
            "leaguekit: {:?} is not placed in the period (null printed)",
            args.player
        );
    }
    print(&page)
}

pub(crate) async fn counts(cli: &Cli, season: Season, args: &CountsArgs) -> Result<(), Failure> {
    let league = redis_league(cli, season).await?;
    let mut counts = league.counts(args.period).await?;
    if let Some(want) = &args.cohort {
        let known = match &league.season().cohorts {
            None => Err("this season declares no cohorts".to_owned()),
            Some(c) => c.check(want),
        };
        known.map_err(|why| usage(format!("unknown cohort {want:?}: {why}")))?;
        // One cohort: each tier's numbers are that cohort's.
        for c in &mut counts {
            let mine = c
                .cohorts
                .iter()
                .find(|x| x.cohort.as_deref() == Some(want.as_str()));
            let (players, brackets) = mine.map_or((0, 0), |x| (x.players, x.brackets));
            c.players = players;
            c.brackets = brackets;
            c.cohorts
                .retain(|x| x.cohort.as_deref() == Some(want.as_str()));
        }
    }
    print(&counts)
}

pub(crate) async fn top(cli: &Cli, season: Season, args: &TopArgs) -> Result<(), Failure> {
    let league = redis_league(cli, season).await?;
    let tier = board_group(&args.tier, args.cohort.as_deref());
    print(&league.top(&tier, args.period, args.limit).await?)
}
