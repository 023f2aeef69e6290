//! What the rollover could not do and retries on every run: a bracket it cannot close.

/// A bracket the rollover cannot close: one of its keys holds a value of a type
/// leaguekit never writes there (something else wrote it). The rest of its period is
/// closed; every rollover retries it, and closes it once the key is repaired.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct BlockedBracket {
    /// `period/tier/bracket`.
    pub source: String,
    /// The key in the way.
    pub key: String,
    /// Why the bracket cannot close, and what to do.
    pub error: String,
}

impl BlockedBracket {
    /// A blocked bracket.
    pub fn new(
        source: impl Into<String>,
        key: impl Into<String>,
        error: impl Into<String>,
    ) -> Self {
        BlockedBracket {
            source: source.into(),
            key: key.into(),
            error: error.into(),
        }
    }
}
