//! The stream limits of `leaguekit serve` (see the module's docs): how many live
//! streams one client, and the server in all, hold open at once, from
//! `LEAGUEKIT_STREAMS_PER_TOKEN` and `LEAGUEKIT_STREAMS_MAX`.

/// The variable of the most live streams one server holds open at once.
pub const STREAMS_MAX_ENV: &str = "LEAGUEKIT_STREAMS_MAX";
/// The variable of the most live streams one client holds open at once.
pub const STREAMS_PER_TOKEN_ENV: &str = "LEAGUEKIT_STREAMS_PER_TOKEN";
/// The default of [`STREAMS_MAX_ENV`]: half the 20,000 streams one `serve` is sized
/// for (within 1 GB), so that a server left at its defaults keeps headroom in memory
/// and file descriptors (raise `ulimit -n` with it).
pub const DEFAULT_MAX_STREAMS: usize = 10_000;
/// The default streams per player: a game client needs one or two (its player's
/// stream, its bracket's), a few more for tabs and reconnects that overlap; far below
/// what would let one player matter to the server's limit.
pub const DEFAULT_STREAMS_PER_PLAYER: usize = 8;
/// The default streams per server, viewer or admin token: a quarter of the default
/// server limit, so that a game server relaying its players' streams, or a
/// dashboard token shared by a support team, fits, and one such token (leaked, or in
/// a loop) still leaves three quarters of the server to the others.
pub const DEFAULT_STREAMS_PER_STATIC_TOKEN: usize = 2_500;
/// The largest value either variable takes.
pub const MOST_STREAMS: usize = 1_000_000;
/// The most live streams one client holds open at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct StreamsPerToken {
    /// A player's, whatever the player tokens they are opened with (default 8).
    pub player: usize,
    /// One server, viewer or admin token's (default 2,500).
    pub static_token: usize,
}

impl Default for StreamsPerToken {
    fn default() -> Self {
        StreamsPerToken {
            player: DEFAULT_STREAMS_PER_PLAYER,
            static_token: DEFAULT_STREAMS_PER_STATIC_TOKEN,
        }
    }
}

impl StreamsPerToken {
    /// These limits (each at least 1; a 0 is taken as 1).
    pub fn new(player: usize, static_token: usize) -> Self {
        StreamsPerToken {
            player: player.max(1),
            static_token: static_token.max(1),
        }
    }
}

/// The stream limits of `leaguekit serve`, from its environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct StreamLimits {
    /// [`STREAMS_MAX_ENV`] (default [`DEFAULT_MAX_STREAMS`]).
    pub max: usize,
    /// [`STREAMS_PER_TOKEN_ENV`].
    pub per_token: StreamsPerToken,
}

/// A stream limit that cannot be used (`leaguekit serve` does not start).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StreamLimitError {
    /// `LEAGUEKIT_STREAMS_MAX` is not a number in range.
    #[error(
        "{STREAMS_MAX_ENV}: {0:?} is not a whole number from 1 to {MOST_STREAMS}: set the \
         most live streams this server holds open at once (default {DEFAULT_MAX_STREAMS}; \
         raise the file-descriptor limit with it), or unset the variable"
    )]
    Max(String),
    /// `LEAGUEKIT_STREAMS_PER_TOKEN` cannot be read.
    #[error(
        "{STREAMS_PER_TOKEN_ENV}: {value:?}: {why}; write one whole number from 1 to \
         {MOST_STREAMS} for every token (e.g. 8), or player=N,static=M (the streams of one \
         player, whatever their player tokens; of one server, viewer or admin token), either \
         part optional (default player={DEFAULT_STREAMS_PER_PLAYER},\
         static={DEFAULT_STREAMS_PER_STATIC_TOKEN}), or unset the variable"
    )]
    PerToken {
        /// The value (its first 120 characters).
        value: String,
        /// What is wrong with it.
        why: String,
    },
}

impl StreamLimits {
    /// From the process's environment (unset or empty variables take the defaults).
    pub fn from_env() -> Result<StreamLimits, StreamLimitError> {
        StreamLimits::from_lookup(|k| std::env::var(k).ok())
    }

    /// From variables looked up by `get` (as [`StreamLimits::from_env`]).
    pub fn from_lookup(
        get: impl Fn(&str) -> Option<String>,
    ) -> Result<StreamLimits, StreamLimitError> {
        let count = |v: &str| -> Option<usize> {
            let v = v.trim();
            if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            v.parse::<usize>()
                .ok()
                .filter(|n| (1..=MOST_STREAMS).contains(n))
        };
        let max = match get(STREAMS_MAX_ENV).filter(|v| !v.trim().is_empty()) {
            None => DEFAULT_MAX_STREAMS,
            Some(v) => {
                count(&v).ok_or_else(|| StreamLimitError::Max(v.chars().take(120).collect()))?
            }
        };
        let per_token = match get(STREAMS_PER_TOKEN_ENV).filter(|v| !v.trim().is_empty()) {
            None => StreamsPerToken::default(),
            Some(v) => {
                let bad = |why: &str| StreamLimitError::PerToken {
                    value: v.chars().take(120).collect(),
                    why: why.to_owned(),
                };
                if let Some(n) = count(&v) {
                    StreamsPerToken::new(n, n)
                } else if !v.contains('=') {
                    return Err(bad(&format!("not a whole number from 1 to {MOST_STREAMS}")));
                } else {
                    let (mut player, mut static_token) = (None, None);
                    for part in v.split(',').map(str::trim) {
                        let (key, n) = part
                            .split_once('=')
                            .ok_or_else(|| bad(&format!("{part:?} is not KEY=N")))?;
                        let slot = match key.trim() {
                            "player" => &mut player,
                            "static" => &mut static_token,
                            other => {
                                return Err(bad(&format!(
                                    "{:?} is neither player nor static",
                                    other.chars().take(40).collect::<String>()
                                )));
                            }
                        };
                        if slot.is_some() {
                            return Err(bad(&format!("{} is given twice", key.trim())));
                        }
                        *slot = Some(count(n).ok_or_else(|| {
                            bad(&format!(
                                "{}'s value {:?} is not a whole number from 1 to {MOST_STREAMS}",
                                key.trim(),
                                n.trim().chars().take(40).collect::<String>()
                            ))
                        })?);
                    }
                    let d = StreamsPerToken::default();
                    StreamsPerToken::new(
                        player.unwrap_or(d.player),
                        static_token.unwrap_or(d.static_token),
                    )
                }
            }
        };
        Ok(StreamLimits { max, per_token })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn limits(vars: &[(&str, &str)]) -> Result<StreamLimits, StreamLimitError> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        StreamLimits::from_lookup(|k| map.get(k).cloned())
    }

    #[test]
    fn stream_limits_from_the_environment() {
        let d = limits(&[]).expect("defaults");
        assert_eq!(d.max, DEFAULT_MAX_STREAMS);
        assert_eq!(d.per_token, StreamsPerToken::default());
        assert_eq!(limits(&[(STREAMS_MAX_ENV, " ")]), Ok(d));
        let l = limits(&[(STREAMS_MAX_ENV, "25000"), (STREAMS_PER_TOKEN_ENV, "16")]).expect("ok");
        assert_eq!((l.max, l.per_token), (25_000, StreamsPerToken::new(16, 16)));
        let l = limits(&[(STREAMS_PER_TOKEN_ENV, "static=100")]).expect("ok");
        assert_eq!(l.per_token, StreamsPerToken::new(8, 100));
        let l = limits(&[(STREAMS_PER_TOKEN_ENV, " player = 2 , static=3 ")]).expect("ok");
        assert_eq!(l.per_token, StreamsPerToken::new(2, 3));
        for bad in [
            "0",
            "-1",
            "1e3",
            "lots",
            "1000001",
            "99999999999999999999999",
        ] {
            let e = limits(&[(STREAMS_MAX_ENV, bad)]).expect_err(bad);
            assert!(e.to_string().starts_with(STREAMS_MAX_ENV), "{e}");
        }
        for bad in [
            "0",
            "player=",
            "players=3",
            "player=2,player=3",
            "static=0",
            "player=2,",
            "player:2",
            "=4",
        ] {
            let e = limits(&[(STREAMS_PER_TOKEN_ENV, bad)]).expect_err(bad);
            let text = e.to_string();
            assert!(text.starts_with(STREAMS_PER_TOKEN_ENV), "{text}");
            assert!(text.contains("player=N,static=M"), "{text}");
        }
        let long = "x".repeat(100_000);
        let e = limits(&[(STREAMS_PER_TOKEN_ENV, &long)]).expect_err("long");
        assert!(
            e.to_string().len() < 1_000,
            "the value is not repeated whole"
        );
    }
}
