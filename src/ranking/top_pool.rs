//! The tier-wide lists' candidates from boards already in hand: what a rollover keeps
//! of each board it froze, so that a closed period's lists need not read every
//! bracket again.
//!
//! Pure: no I/O. For each list it keeps the best [`MAX_TOP`] entries seen, in the
//! boards' own order (packed value descending, then player id), and which brackets
//! it has seen whole. The merge (`top.rs`) reads only the brackets the pool has not
//! seen, and then, for the winners that came from the pool, each winning bracket's
//! prefix (with its cached profiles): a list's winners from one bracket are always
//! that board's first entries, since the board is sorted in the list's order.

use std::cmp::Reverse;
use std::collections::{HashMap, HashSet};

use super::MAX_TOP;
use crate::season::Season;

/// Does tier-wide list `list` (a tier, or `tier@cohort`) rank board group `group`?
/// A tier's list ranks all its cohorts (and brackets opened under a former name);
/// a cohort's list only that cohort's.
pub(crate) fn list_includes(season: &Season, list: &str, group: &str) -> bool {
    let (_, want_cohort) = crate::season::split_group(list);
    let (_, cohort) = crate::season::split_group(group);
    let want_tier = season.tier_by_any_name(list).map(|(i, _)| i);
    let tier = season.tier_by_any_name(group).map(|(i, _)| i);
    want_tier.is_some() && tier == want_tier && (want_cohort.is_none() || cohort == want_cohort)
}

/// One candidate: a board entry and the bracket it is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PoolEntry {
    pub(super) packed: u64,
    pub(super) player: String,
    pub(super) group: String,
    pub(super) bracket: u32,
}

impl PoolEntry {
    fn key(&self) -> (Reverse<u64>, &str) {
        (Reverse(self.packed), &self.player)
    }
}

/// The candidates of one list.
#[derive(Debug, Default)]
pub(crate) struct PoolList {
    /// Brackets whose whole board was offered, as `(group, bracket)`.
    pub(super) seen: HashSet<(String, u32)>,
    /// The best entries offered, unsorted between compactions (which run once
    /// there are twice [`MAX_TOP`]); sorted and at most [`MAX_TOP`] after
    /// [`TopPool::finish`].
    pub(super) entries: Vec<PoolEntry>,
    /// The list's last place once [`MAX_TOP`] entries were kept: nothing at or
    /// below it can enter the list.
    floor: Option<(u64, String)>,
}

impl PoolList {
    fn compact(&mut self) {
        let keep = usize::try_from(MAX_TOP).unwrap_or(usize::MAX);
        self.entries.sort_unstable_by(|a, b| a.key().cmp(&b.key()));
        self.entries.truncate(keep);
        if self.entries.len() == keep {
            self.floor = self.entries.last().map(|e| (e.packed, e.player.clone()));
        }
    }
}

/// The candidates of several lists at once.
#[derive(Debug, Default)]
pub(crate) struct TopPool {
    lists: HashMap<String, PoolList>,
}

impl TopPool {
    /// A pool for `lists` (tier names, or `tier@cohort`).
    pub(crate) fn new<'a>(lists: impl IntoIterator<Item = &'a str>) -> Self {
        Self {
            lists: lists
                .into_iter()
                .map(|l| (l.to_owned(), PoolList::default()))
                .collect(),
        }
    }

    /// Offers a whole frozen board of `group`'s bracket, best first (as the store
    /// answers it: packed value descending, then player id), to every list that
    /// ranks the group.
    pub(crate) fn offer(
        &mut self,
        season: &Season,
        group: &str,
        bracket: u32,
        board: &[(String, u64)],
    ) {
        let keep = usize::try_from(MAX_TOP).unwrap_or(usize::MAX);
        for (name, list) in &mut self.lists {
            if !list_includes(season, name, group) {
                continue;
            }
            list.seen.insert((group.to_owned(), bracket));
            for (player, packed) in board.iter().take(keep) {
                // The board is sorted: once an entry cannot enter, none after it can.
                if let Some((fp, fplayer)) = &list.floor
                    && (Reverse(*packed), player.as_str()) >= (Reverse(*fp), fplayer.as_str())
                {
                    break;
                }
                list.entries.push(PoolEntry {
                    packed: *packed,
                    player: player.clone(),
                    group: group.to_owned(),
                    bracket,
                });
            }
            if list.entries.len() >= 2 * keep {
                list.compact();
            }
        }
    }

    /// The candidates of `list`, its best [`MAX_TOP`] sorted best first; `None` for a
    /// list the pool was not made for.
    pub(crate) fn finish(&mut self, list: &str) -> Option<PoolList> {
        let mut l = self.lists.remove(list)?;
        l.compact();
        Some(l)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example season (`config/season.toml`): the tests need only its tiers'
    /// names.
    fn season() -> Season {
        Season::from_toml(
            include_str!("../../config/season.toml"),
            "config/season.toml",
        )
        .expect("the example season")
    }

    fn board(entries: &[(&str, u64)]) -> Vec<(String, u64)> {
        let mut b: Vec<(String, u64)> =
            entries.iter().map(|(p, v)| ((*p).to_owned(), *v)).collect();
        b.sort_by(|a, b| (Reverse(a.1), &a.0).cmp(&(Reverse(b.1), &b.0)));
        b
    }

    #[test]
    fn keeps_the_best_across_boards_in_board_order() {
        let s = season();
        let mut pool = TopPool::new(["bronze", "silver", "bronze@eu"]);
        // More than 2 * MAX_TOP entries in all, so compaction and the floor run.
        let n = MAX_TOP * 3;
        let mut all = Vec::new();
        for b in 0..(n / 100) {
            let entries: Vec<(String, u64)> = (0..100)
                .map(|i| (format!("p{b:03}-{i:03}"), (i * 7919 + b * 104_729) % 5000))
                .collect();
            let refs: Vec<(&str, u64)> = entries.iter().map(|(p, v)| (p.as_str(), *v)).collect();
            let board = board(&refs);
            let group = if b % 2 == 0 { "bronze" } else { "bronze@eu" };
            let bracket = u32::try_from(b).expect("small");
            pool.offer(&s, group, bracket, &board);
            for (p, v) in &board {
                all.push((Reverse(*v), p.clone(), group));
            }
        }
        // A silver board goes to no bronze list.
        pool.offer(&s, "silver", 1, &board(&[("zed", 1_000_000)]));
        all.sort();
        // A list's entries, and the best MAX_TOP of every board offered (of one
        // group only, for a cohort's list).
        let entries_of = |l: &PoolList| -> Vec<(u64, String)> {
            l.entries
                .iter()
                .map(|e| (e.packed, e.player.clone()))
                .collect()
        };
        let best_of = |only: Option<&str>| -> Vec<(u64, String)> {
            all.iter()
                .filter(|(_, _, g)| only.is_none_or(|o| *g == o))
                .take(MAX_TOP as usize)
                .map(|(v, p, _)| (v.0, p.clone()))
                .collect()
        };
        let tier = pool.finish("bronze").expect("made for bronze");
        assert_eq!(entries_of(&tier), best_of(None));
        assert_eq!(tier.seen.len(), (n / 100) as usize);
        let eu = pool.finish("bronze@eu").expect("made for the cohort");
        assert_eq!(entries_of(&eu), best_of(Some("bronze@eu")));
        assert!(eu.seen.iter().all(|(g, _)| g == "bronze@eu"));
        let silver = pool.finish("silver").expect("made for silver");
        assert_eq!(silver.entries.len(), 1);
        assert!(pool.finish("gold").is_none());
    }

    #[test]
    fn equal_values_order_by_player_id() {
        let s = season();
        let mut pool = TopPool::new(["bronze"]);
        pool.offer(&s, "bronze", 2, &board(&[("b", 5), ("d", 5)]));
        pool.offer(&s, "bronze", 1, &board(&[("a", 5), ("c", 5), ("e", 9)]));
        let got: Vec<_> = pool
            .finish("bronze")
            .expect("made")
            .entries
            .into_iter()
            .map(|e| (e.player, e.bracket))
            .collect();
        let want = [("e", 1), ("a", 1), ("b", 2), ("c", 1), ("d", 2)];
        assert_eq!(got, want.map(|(p, b)| (p.to_owned(), b)).to_vec());
    }

    #[test]
    fn lists_include_their_tier_and_cohorts_only() {
        let s = season();
        assert!(list_includes(&s, "bronze", "bronze"));
        assert!(list_includes(&s, "bronze", "bronze@eu"));
        assert!(list_includes(&s, "bronze@eu", "bronze@eu"));
        assert!(!list_includes(&s, "bronze@eu", "bronze"));
        assert!(!list_includes(&s, "bronze@eu", "bronze@us"));
        assert!(!list_includes(&s, "bronze", "silver"));
        assert!(!list_includes(&s, "nope", "nope"));
    }
}
