//! Tier-wide leaderboards: the best of a whole tier across its brackets.
//!
//! A merge of the brackets' tops, in the boards' own order (score, then the time it
//! was reached, then player id: the packed value orders the first two across the
//! brackets of one period, since every bracket of a period packs time from the same
//! start). The merge reads little: first a few entries of every bracket (all brackets
//! at once, pipelined), then more only from brackets whose last entry read could still
//! be in the list. For the running period the result is cached for [`TOP_CACHE`], one
//! computation shared by every concurrent reader; a closed period's lists are computed
//! once at rollover and kept with the period (see `rollover/close.rs`). There the
//! merge starts from the best entries of the boards the rollover froze itself
//! (`top_pool.rs`): it reads only the brackets another process closed, and then the
//! winners' prefixes of the others for their cached profiles (at 1,000,000 players
//! in three tiers, about 1,900 page reads instead of 21,000).

use std::cmp::Reverse;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tracing::instrument;

use crate::error::{Error, InputError, StoreError};
use crate::season::calendar::PeriodId;
use crate::store::keys::BracketKeys;
use crate::store::{RawEntry, Store};

use super::Boards;
use super::top_pool::{PoolList, list_includes};

/// Most entries a tier-wide list has.
pub const MAX_TOP: u64 = 1000;

/// How long a running period's list is reused: a few seconds, so that many readers
/// cost one merge, while a score shows within that time.
pub const TOP_CACHE: Duration = Duration::from_secs(2);

/// One entry of a tier-wide list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TopEntry {
    /// 1-based rank in the tier.
    pub rank: u64,
    /// The player.
    pub player: String,
    /// Their score.
    pub score: u64,
    /// Their cohort (absent without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cohort: Option<String>,
    /// Their bracket (within their cohort).
    pub bracket: u32,
    /// Their cached profile (`{}` if none).
    pub profile: super::Profile,
}

/// The best players of a whole tier in a period ([`crate::League::top`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TierTop {
    /// The period.
    pub period: PeriodId,
    /// The tier.
    pub tier: String,
    /// The cohort the list is of (absent: the whole tier, across cohorts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cohort: Option<String>,
    /// Brackets in the tier (or its cohort).
    pub brackets: u64,
    /// True for a closed period's list, frozen at its rollover.
    pub frozen: bool,
    /// The entries, best first.
    pub entries: Vec<TopEntry>,
}

/// The running periods' cached lists, kept per league: (period, tier, limit) → when
/// made, and the list (set once by the first reader; the others wait for it).
pub(super) type TopCache =
    std::sync::Mutex<std::collections::HashMap<(PeriodId, String, u64), (Instant, TopCell)>>;
type TopCell = Arc<tokio::sync::OnceCell<Arc<TierTop>>>;

/// A candidate of the merge: its order key and where it came from.
struct Candidate {
    packed: u64,
    entry: RawEntry,
    /// Index into the merge's brackets.
    from: usize,
    /// Read from the store with its profile (false: from the pool, profile unread).
    read: bool,
}

/// Sorts candidates in the boards' order and keeps the best `wanted`.
fn sort_and_cut(candidates: &mut Vec<Candidate>, wanted: usize) {
    candidates.sort_unstable_by(|a, b| {
        (Reverse(a.packed), &a.entry.player).cmp(&(Reverse(b.packed), &b.entry.player))
    });
    candidates.truncate(wanted);
}

/// The list's last place, once it has `wanted` entries.
fn last_place(candidates: &[Candidate], wanted: usize) -> Option<(Reverse<u64>, String)> {
    if candidates.len() == wanted {
        candidates
            .last()
            .map(|c| (Reverse(c.packed), c.entry.player.clone()))
    } else {
        None
    }
}

impl<S: Store> Boards<S> {
    /// The best `limit` players (at most [`MAX_TOP`]) of `tier` in `period` (default:
    /// the current one), across its brackets, each with their bracket and profile.
    /// `tier` may name one cohort's boards as `tier@cohort`
    /// ([`crate::season::board_group`]); a tier alone ranks all its cohorts together.
    /// Ties order as inside a bracket: score, then the time it was reached, then
    /// player id. A closed period's list is the one frozen at its rollover; the
    /// running period's is at most [`TOP_CACHE`] old.
    #[instrument(skip(self), err(level = "debug"))]
    pub async fn top(
        &self,
        tier: &str,
        period: Option<PeriodId>,
        limit: u64,
    ) -> Result<TierTop, Error> {
        self.ctx.check_tier(tier)?;
        if limit == 0 || limit > MAX_TOP {
            return Err(InputError::BadLimit {
                limit,
                max: MAX_TOP,
            }
            .into());
        }
        let period = self.ctx.resolve_period(period).await?;
        if let Some(json) = self
            .ctx
            .store()
            .saved_top(&self.ctx.keys().period(period.id), tier)
            .await?
        {
            let mut top: TierTop = serde_json::from_str(&json).map_err(|e| {
                StoreError::Protocol(format!("the saved list of {tier:?} is not readable: {e}"))
            })?;
            top.entries
                .truncate(usize::try_from(limit).unwrap_or(usize::MAX));
            return Ok(top);
        }
        let cell = self.top_cell(period.id, tier, limit);
        let top = cell
            .get_or_try_init(|| async {
                self.merge_top(period.id, tier, limit, None)
                    .await
                    .map(Arc::new)
            })
            .await?;
        Ok(TierTop::clone(top))
    }

    /// The shared cell of a cached list, fresh or new.
    fn top_cell(&self, period: PeriodId, tier: &str, limit: u64) -> TopCell {
        let mut cache = self
            .tops
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = Instant::now();
        cache.retain(|_, (made, _)| now.duration_since(*made) < TOP_CACHE);
        cache
            .entry((period, tier.to_owned(), limit))
            .or_insert_with(|| (now, Arc::default()))
            .1
            .clone()
    }

    /// Merges the brackets' tops into the tier's best `limit`, reading as little of
    /// each bracket as the merge needs. With `pool` (the best entries of boards the
    /// caller already holds: a rollover's frozen boards, see `top_pool.rs`), the
    /// brackets the pool has seen are not read; only the prefixes of them that win a
    /// place are, for their cached profiles.
    pub(crate) async fn merge_top(
        &self,
        period: PeriodId,
        tier: &str,
        limit: u64,
        pool: Option<PoolList>,
    ) -> Result<TierTop, Error> {
        // The board groups of the tier (one per cohort), or of the one cohort asked.
        let caps = self.ctx.season().caps();
        let mut sources: Vec<(String, u32)> = Vec::new();
        for (group, n) in self
            .ctx
            .store()
            .joined(&self.ctx.keys().period(period))
            .await?
        {
            if list_includes(self.ctx.season(), tier, &group) {
                for b in 1..=n.brackets(caps) {
                    sources.push((group.clone(), u32::try_from(b).unwrap_or(u32::MAX)));
                }
            }
        }
        sources.sort();
        let brackets = sources.len() as u64;
        let keys: Vec<_> = sources
            .iter()
            .map(|(group, b)| self.ctx.keys().bracket(period, group, *b))
            .collect();
        let wanted = usize::try_from(limit).unwrap_or(usize::MAX);
        let mut candidates: Vec<Candidate> = Vec::new();
        let pool = pool.unwrap_or_default();
        let index: HashMap<(&str, u32), usize> = sources
            .iter()
            .enumerate()
            .map(|(i, (g, b))| ((g.as_str(), *b), i))
            .collect();
        let mut seen = vec![false; sources.len()];
        for (g, b) in &pool.seen {
            if let Some(&i) = index.get(&(g.as_str(), *b)) {
                seen[i] = true;
            }
        }
        for e in pool.entries {
            // A board the pool saw but the period's counters do not list cannot be;
            // its entries are left out rather than placed on a bracket not in the list.
            if let Some(&from) = index.get(&(e.group.as_str(), e.bracket)) {
                candidates.push(Candidate {
                    packed: e.packed,
                    entry: RawEntry {
                        player: e.player,
                        packed: e.packed,
                        profile: None,
                    },
                    from,
                    read: false,
                });
            }
        }
        sort_and_cut(&mut candidates, wanted);
        // Brackets to read from, with the offset and count of their next read. The
        // first read takes about twice a bracket's fair share of the list.
        let first = (2 * limit).div_ceil(brackets.max(1)).clamp(1, limit);
        let mut next: Vec<(usize, u64, u64)> = (0..sources.len())
            .filter(|&i| !seen[i])
            .map(|i| (i, 0, first))
            .collect();
        while !next.is_empty() {
            let reads: Vec<_> = next.iter().map(|&(i, o, n)| (&keys[i], o, n)).collect();
            let pages = self.ctx.store().standings_many(&reads).await;
            // Brackets that may hold more of the list: their last entry read, if the
            // read was full and the bracket has more.
            let mut open: Vec<(usize, u64, u64, u64, String)> = Vec::new();
            for (&(i, offset, n), page) in next.iter().zip(pages) {
                let page = page?;
                let got = page.entries.len() as u64;
                if let Some(last) = page.entries.last()
                    && got == n
                    && offset + got < page.total
                    && offset + got < limit
                {
                    open.push((i, offset + got, n, last.packed, last.player.clone()));
                }
                for entry in page.entries {
                    candidates.push(Candidate {
                        packed: entry.packed,
                        entry,
                        from: i,
                        read: true,
                    });
                }
            }
            sort_and_cut(&mut candidates, wanted);
            // The list's last place so far; a bracket whose last entry read is below it
            // has nothing more for the list.
            let threshold = last_place(&candidates, wanted);
            next = open
                .into_iter()
                .filter(|(_, _, _, packed, player)| match &threshold {
                    Some(t) => (Reverse(*packed), player.clone()) < *t,
                    None => true,
                })
                .map(|(i, offset, n, _, _)| (i, offset, (n * 2).min(limit - offset)))
                .collect();
        }
        self.read_pool_profiles(&keys, &sources, &mut candidates)
            .await?;
        let entries = candidates
            .into_iter()
            .enumerate()
            .map(|(r, c)| {
                let standing = self.standing(0, r, c.entry);
                let (group, bracket) = &sources[c.from];
                TopEntry {
                    rank: standing.rank,
                    player: standing.player,
                    score: standing.score,
                    cohort: crate::season::split_group(group).1.map(str::to_owned),
                    bracket: *bracket,
                    profile: standing.profile,
                }
            })
            .collect();
        let (tier_name, cohort) = crate::season::split_group(tier);
        Ok(TierTop {
            period,
            tier: tier_name.to_owned(),
            cohort: cohort.map(str::to_owned),
            brackets,
            frozen: false,
            entries,
        })
    }

    /// Reads the cached profiles of the winners that came from the pool: for each
    /// bracket, the prefix of its board they are (a board is sorted in the list's
    /// order, so a bracket's winners are its first entries), all brackets at once.
    async fn read_pool_profiles(
        &self,
        keys: &[BracketKeys],
        sources: &[(String, u32)],
        candidates: &mut [Candidate],
    ) -> Result<(), Error> {
        let mut wins: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for (at, c) in candidates.iter().enumerate() {
            if !c.read {
                wins.entry(c.from).or_default().push(at);
            }
        }
        if wins.is_empty() {
            return Ok(());
        }
        let reads: Vec<_> = wins
            .iter()
            .map(|(&from, at)| (&keys[from], 0, at.len() as u64))
            .collect();
        let pages = self.ctx.store().standings_many(&reads).await;
        for ((from, at), page) in wins.iter().zip(pages) {
            let page = page?;
            let same = page.entries.len() == at.len()
                && page.entries.iter().zip(at).all(|(e, &i)| {
                    e.player == candidates[i].entry.player && e.packed == candidates[i].packed
                });
            if !same {
                let (group, bracket) = &sources[*from];
                return Err(StoreError::Protocol(format!(
                    "bracket {bracket} of {group:?} no longer starts with the board frozen at its close: was it written to since?"
                ))
                .into());
            }
            for (e, &i) in page.entries.into_iter().zip(at) {
                candidates[i].entry = e;
                candidates[i].read = true;
            }
        }
        Ok(())
    }
}
