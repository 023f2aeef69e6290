//! What game servers do, from the command line: `join`, `submit` (one score; batches
//! are in `batch.rs`), `player` and `profile`.

use clap::Args;
use leaguekit::{Season, SubmitOptions};
use serde_json::json;

use crate::Cli;
use crate::common::{Failure, parse_time, print, redis_league, usage};

/// Place a player in a bracket of their tier for the period of TIME (default now).
#[derive(Args, Debug)]
pub(crate) struct JoinArgs {
    /// Player id.
    player: String,
    /// Event time, RFC 3339.
    #[arg(long)]
    at: Option<String>,
    /// Cohort to be placed in (a label of the season's [cohorts]); defaults to the
    /// player's last cohort.
    #[arg(long)]
    cohort: Option<String>,
}

/// Submit a score value (or a batch of JSON lines with --batch).
#[derive(Args, Debug)]
pub(crate) struct SubmitArgs {
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
    /// Cohort of the placement a first score makes (see join --cohort).
    #[arg(long)]
    cohort: Option<String>,
    /// JSON lines `{"player","value","request_id","at"}` from FILE or - (stdin).
    /// Every line gets one output line: applied, refused or unknown. Only lines
    /// with a request id can be replayed safely.
    #[arg(long, conflicts_with_all = ["player", "value", "request_id", "at", "cohort"])]
    batch: Option<String>,
    /// With --batch: how long to wait for an unreachable store before the rest of
    /// the input is reported as not attempted, in seconds.
    #[arg(long, default_value_t = 300, requires = "batch")]
    wait: u64,
    /// Leave the rank out of the answer ("rank": null; with --batch, of every line's):
    /// saves Redis a scan of the bracket's board per update.
    #[arg(long)]
    no_rank: bool,
}

/// A player's tier, bracket, rank and score.
#[derive(Args, Debug)]
pub(crate) struct PlayerArgs {
    /// Player id.
    player: String,
    /// Period id [default: current].
    #[arg(long)]
    period: Option<u64>,
}

/// Set profile fields: FIELD=VALUE...
#[derive(Args, Debug)]
pub(crate) struct ProfileArgs {
    /// Player id.
    player: String,
    /// FIELD=VALUE pairs.
    #[arg(required = true)]
    fields: Vec<String>,
}

pub(crate) async fn join(cli: &Cli, season: Season, args: &JoinArgs) -> Result<(), Failure> {
    let mut options = leaguekit::league::JoinOptions::default();
    if let Some(at) = &args.at {
        options = options.at(parse_time(at)?);
    }
    if let Some(c) = &args.cohort {
        options = options.cohort(c.clone());
    }
    let league = redis_league(cli, season).await?;
    print(&league.join_with(&args.player, options).await?)
}

pub(crate) async fn submit(cli: &Cli, season: Season, args: &SubmitArgs) -> Result<(), Failure> {
    let league = redis_league(cli, season).await?;
    if let Some(source) = &args.batch {
        return crate::batch::run(&league, source, args.wait, args.no_rank).await;
    }
    let (Some(player), Some(value)) = (&args.player, args.value) else {
        return Err(usage("submit needs PLAYER and VALUE, or --batch FILE"));
    };
    let mut o = SubmitOptions::default();
    if let Some(id) = &args.request_id {
        o = o.request_id(id.clone());
    }
    if let Some(at) = &args.at {
        o = o.at(parse_time(at)?);
    }
    if let Some(c) = &args.cohort {
        o = o.cohort(c.clone());
    }
    if args.no_rank {
        o = o.without_rank();
    }
    print(&league.submit(player, value, o).await?)
}

pub(crate) async fn player(cli: &Cli, season: Season, args: &PlayerArgs) -> Result<(), Failure> {
    let league = redis_league(cli, season).await?;
    let view = league.player(&args.player, args.period).await?;
    let last = league.last_outcome(&args.player).await?;
    let mut value = serde_json::to_value(&view).map_err(|e| usage(e.to_string()))?;
    value["last"] = serde_json::to_value(&last).map_err(|e| usage(e.to_string()))?;
    print(&value)
}

pub(crate) async fn profile(cli: &Cli, season: Season, args: &ProfileArgs) -> Result<(), Failure> {
    let mut pairs = Vec::new();
    for f in &args.fields {
        let Some((k, v)) = f.split_once('=') else {
            return Err(usage(format!("invalid field {f:?}; use FIELD=VALUE")));
        };
        pairs.push((k.to_owned(), v.to_owned()));
    }
    let league = redis_league(cli, season).await?;
    let profile = league.set_profile(&args.player, &pairs).await?;
    print(&json!({"player": args.player, "profile": profile}))
}
