//! Bracket outcomes: who is promoted, who stays, who is demoted, and who is rewarded.
//!
//! A pure function of the season and a closed bracket's standings, with no I/O, so
//! every process (the scheduler, a rollover started by hand, or a join that needs a
//! player's next tier before the rollover got there) computes the same answer.
//!
//! The rule, for a bracket of `n` players in a tier with quotas `promote`/`demote`:
//!
//! 1. `P = promote.of(b)` and `D = demote.of(b)`, where `b` is `n` under the tier's
//!    `zones = "players"` and `brackets.size` under `zones = "size"` (a percentage of
//!    `b`, rounded down; a count is itself, whatever `b`). `P = 0` in the top tier,
//!    `D = 0` in the bottom tier and in a bracket with fewer active players than the
//!    tier's `min_players`.
//! 2. Players who scored ("active") keep their bracket ranks. The best `min(P, active)`
//!    are promoted; then the worst `min(D, active - promoted)` active players are
//!    demoted: promotion takes the top ranks first, demotion only those left.
//! 3. Idle players (placed but never scored) follow `[idle] policy`: `stay` keeps
//!    their tier; `drop_one_tier` demotes them one tier (not below the bottom). They
//!    are never promoted and never rewarded, and they do not use up demotion places.
//! 4. Rewards go by rank to active players: the tier's `rewards` rule whose range holds
//!    the player's rank.

use std::cmp::Reverse;

use serde::Serialize;

use crate::season::{IdlePolicy, Season};

/// One player's last closed period, for [`crate::League::last_outcome`], and in the reply that places
/// a player in a new period.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct LastOutcome {
    /// The period.
    pub period: crate::season::calendar::PeriodId,
    /// The tier played.
    pub tier: String,
    /// The cohort played in (absent without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cohort: Option<String>,
    /// The bracket played.
    pub bracket: u32,
    /// Final rank.
    pub rank: u64,
    /// Final score.
    pub score: u64,
    /// Promoted, stayed or demoted.
    pub outcome: Movement,
    /// The tier after the period.
    pub next_tier: String,
    /// The reward, if any.
    pub reward: Option<String>,
}

/// A reward of one player.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct RewardGrant {
    /// Where it was earned: `period/tier/bracket`.
    pub source: String,
    /// The grant string.
    pub grant: String,
}

/// Where a player goes after a period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Movement {
    /// Up one tier.
    Promoted,
    /// Same tier.
    Stayed,
    /// Down one tier.
    Demoted,
}

impl Movement {
    /// The name used in JSON and in stored records.
    pub fn as_str(self) -> &'static str {
        match self {
            Movement::Promoted => "promoted",
            Movement::Stayed => "stayed",
            Movement::Demoted => "demoted",
        }
    }

    fn parse(s: &str) -> Option<Movement> {
        match s {
            "promoted" => Some(Movement::Promoted),
            "stayed" => Some(Movement::Stayed),
            "demoted" => Some(Movement::Demoted),
            _ => None,
        }
    }
}

/// One player's result in a closed bracket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Outcome {
    /// The player.
    pub player: String,
    /// Final 1-based rank in the bracket.
    pub rank: u64,
    /// Final score.
    pub score: u64,
    /// True if the player never scored in the period.
    pub idle: bool,
    /// Promoted, stayed or demoted.
    pub outcome: Movement,
    /// The tier the player joins next period.
    pub next_tier: String,
    /// The reward grant, if any.
    pub reward: Option<String>,
}

/// Totals of a set of outcomes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Tally {
    /// Players.
    pub players: u64,
    /// Promoted players.
    pub promoted: u64,
    /// Demoted players.
    pub demoted: u64,
    /// Players who stayed.
    pub stayed: u64,
    /// Rewards granted.
    pub rewards: u64,
    /// Idle players.
    pub idle: u64,
}

impl Tally {
    /// Adds one outcome.
    pub fn add(&mut self, o: &Outcome) {
        self.players += 1;
        match o.outcome {
            Movement::Promoted => self.promoted += 1,
            Movement::Stayed => self.stayed += 1,
            Movement::Demoted => self.demoted += 1,
        }
        self.rewards += u64::from(o.reward.is_some());
        self.idle += u64::from(o.idle);
    }

    /// Adds another tally.
    pub fn merge(&mut self, other: &Tally) {
        self.players += other.players;
        self.promoted += other.promoted;
        self.demoted += other.demoted;
        self.stayed += other.stayed;
        self.rewards += other.rewards;
        self.idle += other.idle;
    }
}

/// The movement rule of one closed bracket: how many of its active players are
/// promoted and demoted (rule steps 1 and 2). [`bracket_outcomes`] applies it to a
/// board; the designer's simulator applies the same rule to its own compact boards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct BracketRule {
    /// The tier index (0 = lowest).
    pub tier: usize,
    /// Whether this is the bottom tier (nobody is demoted from it).
    pub bottom: bool,
    /// Active players (who scored).
    pub active: u64,
    /// Active players promoted: the best `promoted` active ranks.
    pub promoted: u64,
    /// Active players demoted: the worst `demoted` active ranks.
    pub demoted: u64,
}

impl BracketRule {
    /// The rule of a bracket of tier `tier` with `players` players, `active` of whom
    /// scored, by the tier's quotas, `zones` and `min_players` (rule step 1); `None`
    /// for a tier the season does not have.
    pub fn new(season: &Season, tier: usize, players: u64, active: u64) -> Option<BracketRule> {
        let this = season.tiers.get(tier)?;
        let top = tier + 1 == season.tiers.len();
        let bottom = tier == 0;
        let active = active.min(players);
        let base = this.zones.base(season.brackets.size, players);
        let promote = if top { 0 } else { this.promote.of(base) };
        let demote = if bottom || active < u64::from(this.min_players) {
            0
        } else {
            this.demote.of(base)
        };
        let promoted = promote.min(active);
        let demoted = demote.min(active - promoted);
        Some(BracketRule {
            tier,
            bottom,
            active,
            promoted,
            demoted,
        })
    }

    /// The movement of an active player at 1-based `active_rank` among the active
    /// players, or of an idle player (`None`: rule step 3).
    pub fn movement(&self, season: &Season, active_rank: Option<u64>) -> Movement {
        match active_rank {
            None => match season.idle.policy {
                IdlePolicy::DropOneTier if !self.bottom => Movement::Demoted,
                _ => Movement::Stayed,
            },
            Some(a) if a <= self.promoted => Movement::Promoted,
            Some(a) if a > self.active - self.demoted => Movement::Demoted,
            Some(_) => Movement::Stayed,
        }
    }

    /// The tier index after `movement`.
    pub fn next_tier(&self, movement: Movement) -> usize {
        match movement {
            Movement::Promoted => self.tier + 1,
            Movement::Stayed => self.tier,
            Movement::Demoted => self.tier.saturating_sub(1),
        }
    }
}

/// The reward of an active player at 1-based bracket `rank` in tier `tier` (rule step
/// 4); idle players get none.
pub fn reward_for(season: &Season, tier: usize, rank: u64) -> Option<&str> {
    season
        .tiers
        .get(tier)?
        .rewards
        .iter()
        .find(|r| u64::from(r.first) <= rank && rank <= u64::from(r.last))
        .map(|r| r.grant.as_str())
}

/// Computes every outcome of one closed bracket of tier `tier` (index, 0 = lowest).
/// `board` is `(player, packed score)` in any order; the result is in rank order.
pub fn bracket_outcomes(season: &Season, tier: usize, board: &[(String, u64)]) -> Vec<Outcome> {
    let tiers = &season.tiers;
    let mut ranked: Vec<&(String, u64)> = board.iter().collect();
    ranked.sort_by(|a, b| (Reverse(a.1), &a.0).cmp(&(Reverse(b.1), &b.0)));
    let n = ranked.len() as u64;
    let active: u64 = ranked
        .iter()
        .filter(|(_, packed)| season.packing.unpack(*packed).1.is_some())
        .count() as u64;
    let Some(rule) = BracketRule::new(season, tier, n, active) else {
        return Vec::new();
    };
    let name = |i: usize| tiers.get(i).map(|t| t.name.clone()).unwrap_or_default();
    let mut active_seen = 0u64;
    ranked
        .into_iter()
        .enumerate()
        .map(|(i, (player, packed))| {
            let rank = i as u64 + 1;
            let (score, time) = season.packing.unpack(*packed);
            let idle = time.is_none();
            let active_rank = (!idle).then(|| {
                active_seen += 1;
                active_seen
            });
            let movement = rule.movement(season, active_rank);
            let reward = if idle {
                None
            } else {
                reward_for(season, tier, rank).map(str::to_owned)
            };
            Outcome {
                player: player.clone(),
                rank,
                score,
                idle,
                outcome: movement,
                next_tier: name(rule.next_tier(movement)),
                reward,
            }
        })
        .collect()
}

/// The tier index after `skipped` whole periods without playing, from `tier`
/// ([`Season::tier_after_skipping`], the `[idle]` policy).
pub fn after_skipped(season: &Season, tier: usize, skipped: u64) -> usize {
    season.tier_after_skipping(tier, skipped)
}

/// Encodes an outcome (without the player) for storage: `rank|score|idle|outcome|next|+reward`.
/// Tier names cannot contain `|`; a grant may, so it goes last and is taken whole.
pub fn encode(o: &Outcome) -> String {
    let mut out = String::new();
    encode_into(&mut out, o);
    out
}

/// [`encode`], appended to `out` (a rollover encodes a bracket's outcomes into one
/// buffer: one allocation a bracket instead of one a player).
pub fn encode_into(out: &mut String, o: &Outcome) {
    let mut n = itoa::Buffer::new();
    out.reserve(32 + o.next_tier.len() + o.reward.as_ref().map_or(0, |r| r.len() + 1));
    out.push_str(n.format(o.rank));
    out.push('|');
    out.push_str(n.format(o.score));
    out.push('|');
    out.push(if o.idle { '1' } else { '0' });
    out.push('|');
    out.push_str(o.outcome.as_str());
    out.push('|');
    out.push_str(&o.next_tier);
    out.push('|');
    if let Some(r) = &o.reward {
        out.push('+');
        out.push_str(r);
    }
}

/// Decodes [`encode`]'s output for `player`.
pub fn decode(player: &str, s: &str) -> Option<Outcome> {
    let mut it = s.splitn(6, '|');
    let rank = it.next()?.parse().ok()?;
    let score = it.next()?.parse().ok()?;
    let idle = it.next()? == "1";
    let outcome = Movement::parse(it.next()?)?;
    let next_tier = it.next()?.to_owned();
    let reward = it.next()?.strip_prefix('+').map(str::to_owned);
    Some(Outcome {
        player: player.to_owned(),
        rank,
        score,
        idle,
        outcome,
        next_tier,
        reward,
    })
}
