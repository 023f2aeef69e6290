//! What every command shares: failures with their exit codes, times, the season and
//! the league on Redis, and writing to stdout.

use std::io::Write;
use std::path::PathBuf;

use chrono::{DateTime, Utc};
use leaguekit::{Error, League, RedisOptions, RedisStore, Season};

use crate::Cli;

/// A failure with its exit code.
pub(crate) struct Failure {
    pub(crate) code: u8,
    pub(crate) message: String,
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        let code = match e {
            Error::Store(_) => 1,
            _ => 2,
        };
        Failure {
            code,
            message: e.to_string(),
        }
    }
}

pub(crate) fn usage(message: impl Into<String>) -> Failure {
    Failure {
        code: 2,
        message: message.into(),
    }
}

pub(crate) fn parse_time(s: &str) -> Result<DateTime<Utc>, Failure> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| {
            usage(format!(
                "invalid time {s:?}: {e}; use RFC 3339, e.g. 2026-01-05T12:00:00Z"
            ))
        })
}

pub(crate) fn load_season(cli: &Cli) -> Result<Season, Failure> {
    let path = cli
        .config
        .clone()
        .unwrap_or_else(|| PathBuf::from("config/season.toml"));
    Season::load(&path).map_err(|e| usage(e.to_string()))
}

pub(crate) async fn redis_league(cli: &Cli, season: Season) -> Result<League<RedisStore>, Failure> {
    let Some(url) = cli.redis.as_deref() else {
        return Err(usage(
            "this command needs a Redis: pass --redis redis://HOST:PORT/ or set LEAGUEKIT_REDIS",
        ));
    };
    let options = RedisOptions::default().with_allow_evicting_policy(cli.allow_evicting_redis);
    let store = RedisStore::connect(url, options)
        .await
        .map_err(|e| Failure::from(Error::from(e)))?;
    Ok(League::new(season, store))
}

pub(crate) fn print(value: &impl serde::Serialize) -> Result<(), Failure> {
    let text =
        serde_json::to_string(value).map_err(|e| usage(format!("cannot encode output: {e}")))?;
    emit(&(text + "\n"))
}

/// Writes to stdout. A reader that went away (`| head`) is not an error: the
/// output simply stops, as with any Unix tool.
pub(crate) fn emit(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure {
            code: 1,
            message: format!("cannot write output: {e}"),
        }),
    }
}

/// Who acts, for the audit log: `cli:NAME` from `--actor` (or `LEAGUEKIT_ACTOR`), else
/// `cli:$USER`; `cli:unknown` only with a warning on standard error.
pub(crate) fn actor(cli: &Cli) -> Result<leaguekit::operator::Actor, Failure> {
    use leaguekit::operator::Actor;
    match cli.actor.as_deref().map(str::trim) {
        Some(name) if !name.is_empty() => Actor::new(format!("cli:{name}"))
            .map_err(|e| usage(format!("--actor / LEAGUEKIT_ACTOR: {e}"))),
        _ => {
            let actor = Actor::cli();
            if actor.name() == "cli:unknown" {
                eprintln!(
                    "leaguekit: warning: the audit log records this action as cli:unknown \
                     (no $USER): say who acts with --actor NAME or LEAGUEKIT_ACTOR"
                );
            }
            Ok(actor)
        }
    }
}
