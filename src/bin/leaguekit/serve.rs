//! `leaguekit serve`: the league over HTTP/JSON, the dashboard and `/metrics`, with
//! the scheduler, until SIGTERM or Ctrl-C. The service itself is
//! `leaguekit::server`; this file only turns the command line into its options.

use std::net::SocketAddr;

use clap::Args;
use leaguekit::Season;
use leaguekit::server::RunOptions;

use crate::Cli;
use crate::common::{Failure, redis_league};

/// Serve the league over HTTP/JSON, with the dashboard and /metrics, and run the
/// scheduler, until SIGTERM or Ctrl-C.
///
/// Tokens: LEAGUEKIT_SERVER_TOKENS (game servers: read and write) and
/// LEAGUEKIT_VIEWER_TOKENS (dashboard, metrics: read only), comma-separated, or
/// server_tokens / viewer_tokens in the config's [server] section. Make tokens with
/// `openssl rand -hex 32`.
///
/// Player tokens: LEAGUEKIT_PLAYER_TOKEN_SECRET (at least 32 bytes) turns them on;
/// LEAGUEKIT_PLAYER_TOKEN_MAX_TTL is the longest a player token may live, minted here
/// or by a game server, in seconds (60-604800, default 86400).
///
/// Streams: LEAGUEKIT_STREAMS_MAX (all streams, default 10000) and
/// LEAGUEKIT_STREAMS_PER_TOKEN (per client: `player=8,static=2500` by default).
///
/// Webhooks (docs/http.md, "Webhooks"): LEAGUEKIT_WEBHOOK_URLS (comma-separated) and
/// LEAGUEKIT_WEBHOOK_SECRET (whsec_<base64> or at least 32 bytes) turn them on;
/// LEAGUEKIT_WEBHOOK_EVENTS (types sent), LEAGUEKIT_WEBHOOK_ATTEMPTS (default 8),
/// LEAGUEKIT_WEBHOOK_FROM (now or start: where a new URL begins),
/// LEAGUEKIT_WEBHOOK_DEAD_MAX (dead letters per URL, default 10000) and
/// LEAGUEKIT_WEBHOOK_DEAD_KEEP (default 30d).
#[derive(Args, Debug)]
pub(crate) struct ServeArgs {
    /// Address to listen on [default: [server] listen, then 127.0.0.1:8080].
    #[arg(long)]
    listen: Option<SocketAddr>,
    /// Do not run the scheduler (another process turns the periods over).
    #[arg(long)]
    no_scheduler: bool,
}

pub(crate) async fn run(cli: &Cli, season: Season, args: &ServeArgs) -> Result<(), Failure> {
    let league = redis_league(cli, season).await?;
    let options = RunOptions::default()
        .listen(args.listen)
        .no_scheduler(args.no_scheduler);
    leaguekit::server::run(league, options)
        .await
        .map_err(|e| Failure {
            code: e.exit_code(),
            message: e.to_string(),
        })
}
