//! Typed errors. Every message says what was wrong and how to fix it.
//!
//! [`Error`] is what the engine returns: a [`ConfigError`] (the season file), an
//! [`InputError`] (the caller's input or the league's state refused it; nothing was
//! written; `input.rs`) or a [`StoreError`] (the store failed; `store.rs`).

mod input;
mod store;

pub use input::*;
pub use store::*;

/// Any error the engine returns.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The season file is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A caller passed something invalid; nothing was written.
    #[error(transparent)]
    Input(#[from] InputError),
    /// The store failed or answered something unexpected.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A season file that cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error(
        "cannot read season file {path}: {source}; check the path (--config or LEAGUEKIT_CONFIG)"
    )]
    Read {
        /// The path that was tried.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The season file does not fit the league's live data: a tier with players in it
    /// is gone, or something that shapes running periods (bracket size, time
    /// resolution, schedule) changed. Nothing was written.
    #[error("the season file does not fit the live league: {message}")]
    LiveMismatch {
        /// What differs, and what to do.
        message: String,
    },
    /// The file is not valid for a season; the message starts with `file:line:col:`.
    #[error("{file}:{line}:{col}: {message}")]
    Invalid {
        /// The file name (or `<string>`).
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        col: usize,
        /// What is wrong and how to fix it.
        message: String,
    },
}

impl Error {
    /// How long to wait before the same call may succeed, when the refusal was only a
    /// matter of time (a period not started yet, a previous period still closing).
    pub fn retry_after(&self) -> Option<std::time::Duration> {
        match self {
            Error::Input(InputError::NotStarted { retry_after_ms, .. })
            | Error::Input(InputError::StillClosing { retry_after_ms, .. })
            | Error::Input(InputError::LimitExceeded {
                retry_after_ms: Some(retry_after_ms),
                ..
            }) => Some(std::time::Duration::from_millis(*retry_after_ms)),
            Error::Store(StoreError::Unreachable { retry_after, .. }) => Some(*retry_after),
            _ => None,
        }
    }

    /// True when a write may or may not have been applied (see [`StoreError::Unknown`]).
    pub fn is_unknown(&self) -> bool {
        matches!(self, Error::Store(StoreError::Unknown { .. }))
    }

    /// True when the request never reached the store and nothing was written (see
    /// [`StoreError::Unreachable`]).
    pub fn is_unreachable(&self) -> bool {
        matches!(self, Error::Store(StoreError::Unreachable { .. }))
    }
}

/// Shorthand for results in this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    /// A backend's error stays reachable as its own type, through `source()` and
    /// `downcast_ref`, and one failure can be cloned to every call it ended.
    #[test]
    fn the_source_is_the_backends_own_error() {
        let e = StoreError::Unknown {
            op: "update",
            source: ErrorSource::new(std::io::Error::other("reset")),
            at: None,
        };
        let copy = e.clone();
        let source = std::error::Error::source(&copy).expect("a source");
        assert!(
            source.downcast_ref::<std::io::Error>().is_some(),
            "{source:?}"
        );
        let StoreError::Unknown { source, .. } = e else {
            unreachable!()
        };
        assert_eq!(
            source
                .downcast_ref::<std::io::Error>()
                .map(|e| e.to_string()),
            Some("reset".to_owned())
        );
    }

    #[test]
    fn an_unknown_outcome_says_what_may_be_resent() {
        let timeout = || ErrorSource::new(std::io::Error::from(std::io::ErrorKind::TimedOut));
        let update = StoreError::Unknown {
            op: "update",
            source: timeout(),
            at: None,
        };
        assert!(
            update.to_string().contains("only with the same request id"),
            "{update}"
        );
        let claim = StoreError::Unknown {
            op: "claim_rewards",
            source: timeout(),
            at: None,
        };
        assert!(
            claim.to_string().contains("only with the same claim id"),
            "{claim}"
        );
        let grant = StoreError::Unknown {
            op: "grant",
            source: timeout(),
            at: None,
        };
        let text = grant.to_string();
        assert!(
            text.contains("running it again") && text.contains("rollover"),
            "{text}"
        );
        assert!(!text.contains("request id"), "{text}");
    }
}
