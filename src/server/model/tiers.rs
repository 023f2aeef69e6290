//! The JSON of tiers as a whole: the counts of players and brackets per tier (and per
//! cohort) and a tier's top, with their query strings.
//!
//! Owns: the JSON shapes of the counts and the top.
//! Must not: talk to the league or the store.

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::league::TierCount;
use crate::ranking::TierTop;

/// `?period=&cohort=` of the counts.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct CountsQuery {
    /// Period id (default: the current period by the league clock).
    pub(crate) period: Option<u64>,
    /// Only this cohort's players and brackets (a label of the season's `[cohorts]`).
    pub(crate) cohort: Option<String>,
}

/// `?period=&limit=&cohort=` of a tier's top.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct TopQuery {
    /// Period id (default: current); a closed period's list is the one frozen at its
    /// rollover.
    pub(crate) period: Option<u64>,
    /// Entries to show, 1-1000 (default 100).
    #[param(minimum = 1, maximum = 1000)]
    pub(crate) limit: Option<u64>,
    /// One cohort's list (a label of the season's `[cohorts]`). Default: the whole
    /// tier, across cohorts.
    pub(crate) cohort: Option<String>,
}

/// Players and brackets of one tier.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct TierCountOut {
    tier: String,
    players: u64,
    brackets: u64,
    /// Per cohort, in label order (absent in a season without cohorts); players
    /// placed without a cohort are under `cohort: null`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    cohorts: Vec<CohortCountOut>,
}

impl From<TierCount> for TierCountOut {
    fn from(t: TierCount) -> Self {
        Self {
            tier: t.tier,
            players: t.players,
            brackets: t.brackets,
            cohorts: t
                .cohorts
                .into_iter()
                .map(|c| CohortCountOut {
                    cohort: c.cohort,
                    players: c.players,
                    brackets: c.brackets,
                })
                .collect(),
        }
    }
}

/// Players and brackets per tier in a period.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct CountsOut {
    pub(crate) period: u64,
    pub(crate) tiers: Vec<TierCountOut>,
}

/// Players and brackets of one cohort of a tier.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct CohortCountOut {
    /// The cohort (`null`: players placed without one).
    cohort: Option<String>,
    players: u64,
    brackets: u64,
}

/// One entry of a tier's top.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct TopEntryOut {
    /// 1-based rank in the tier (or its cohort).
    rank: u64,
    player: String,
    score: u64,
    /// Their cohort (absent without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    cohort: Option<String>,
    /// Their bracket (within their cohort).
    bracket: u32,
    /// Their cached profile (`{}` if none).
    #[schema(value_type = Object)]
    profile: crate::ranking::Profile,
}

/// The best players of a whole tier in a period, across its brackets.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct TopOut {
    period: u64,
    tier: String,
    /// The cohort the list is of (absent: the whole tier, across cohorts).
    #[serde(skip_serializing_if = "Option::is_none")]
    cohort: Option<String>,
    /// Brackets in the tier (or its cohort).
    brackets: u64,
    /// True for a closed period's list, frozen at its rollover.
    frozen: bool,
    /// The entries, best first.
    entries: Vec<TopEntryOut>,
}

impl From<TierTop> for TopOut {
    fn from(t: TierTop) -> Self {
        Self {
            period: t.period,
            tier: t.tier,
            cohort: t.cohort,
            brackets: t.brackets,
            frozen: t.frozen,
            entries: t
                .entries
                .into_iter()
                .map(|e| TopEntryOut {
                    rank: e.rank,
                    player: e.player,
                    score: e.score,
                    cohort: e.cohort,
                    bracket: e.bracket,
                    profile: e.profile,
                })
                .collect(),
        }
    }
}
