//! Season edits between periods: what the league last ran with, recorded in the
//! store's season record at each rollover, against the season file now.
//!
//! - The *shape* (bracket size, time resolution and score packing, schedule) decides
//!   which bracket a join lands in, what a packed score means and which period a time
//!   falls in. Changing it under live data would reshuffle running brackets, so a
//!   rollover refuses a file whose shape differs from the recorded one: such a change
//!   is a new season (a new `name`).
//! - The *ladder* (promote and demote quotas, zones, min_players, rewards) is applied
//!   when a period closes: an edit takes effect from the close of the running period.
//!   Tiers may be added anywhere and renamed with `renamed_from`; a tier that still
//!   has players and is gone from the file (not renamed) is refused at the rollover,
//!   because its players' outcomes cannot be computed.
//!
//! [`crate::League::compare_with_live`] (`leaguekit check --against`) says all of this
//! before the file is deployed.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Value, json};

use super::Rollover;
use crate::error::{ConfigError, Error};
use crate::season::calendar::PeriodId;
use crate::store::{Store, TierJoins};

/// What an edited season file would change in the live league
/// ([`crate::League::compare_with_live`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SeasonEdits {
    /// The running period (by the league clock).
    pub running: PeriodId,
    /// Changes the league refuses (the rollover would fail): what and how to fix it.
    pub refused: Vec<String>,
    /// Changes that apply, for whom and from when.
    pub changes: Vec<String>,
}

/// A quota as the season file writes it: a count, or a `"N%"` string.
fn quota(q: crate::season::Quota) -> Value {
    match q {
        crate::season::Quota::Count(n) => json!(n),
        crate::season::Quota::Percent(p) => json!(format!("{p}%")),
    }
}

/// One tier of a recorded ladder.
fn tier_rules(t: &crate::season::Tier) -> Value {
    json!({
        "name": t.name,
        "promote": quota(t.promote),
        "demote": quota(t.demote),
        "rewards": t.rewards.iter().map(|r| json!([r.first, r.last, r.grant])).collect::<Vec<_>>(),
        "zones": t.zones.as_str(),
        "min_players": t.min_players,
    })
}

/// A recorded tier's `field`; a ladder recorded before `zones` and `min_players`
/// existed ran with their defaults.
fn recorded_field(old: &Value, field: &str) -> Value {
    match (field, &old[field]) {
        ("zones", Value::Null) => json!(crate::season::Zones::Players.as_str()),
        ("min_players", Value::Null) => json!(0),
        (_, v) => v.clone(),
    }
}

impl<S: Store> Rollover<S> {
    /// The season's shape: what must not change while the season has data.
    pub(crate) fn shape(&self) -> BTreeMap<&'static str, String> {
        let s = self.ctx.season();
        BTreeMap::from([
            ("brackets.size", s.brackets.size.to_string()),
            (
                "scoring.time_resolution",
                format!("{} ms", s.scoring.time_resolution.millis()),
            ),
            (
                "score packing (ticks per period)",
                s.packing.ticks().to_string(),
            ),
            ("schedule.timezone", s.schedule.timezone.to_string()),
            ("schedule.period", s.schedule.period.as_str().to_owned()),
            ("schedule.start", s.schedule.start.to_rfc3339()),
        ])
    }

    /// The shape's differences from the recorded one, each a sentence.
    fn shape_changes(&self, recorded: &str) -> Vec<String> {
        let recorded: BTreeMap<String, String> = serde_json::from_str(recorded).unwrap_or_default();
        self.shape()
            .into_iter()
            .filter_map(|(k, now)| match recorded.get(k) {
                Some(was) if *was != now => Some(format!(
                    "{k} is {was} in the live league and {now} in the file: it shapes the \
                     running brackets and scores, so it cannot change during a season; put \
                     it back, or start a new season (a new `name`)"
                )),
                _ => None,
            })
            .collect()
    }

    /// Checks the file's shape against the recorded one, and records it the first
    /// time (with `record`).
    pub(crate) async fn check_shape(&self, record: bool) -> Result<(), Error> {
        let keys = self.ctx.keys().season();
        let shape = serde_json::to_string(&self.shape())
            .map_err(|e| crate::StoreError::Protocol(format!("cannot encode the shape: {e}")))?;
        match self.ctx.store().season_field(&keys, "shape").await? {
            Some(recorded) => {
                let changes = self.shape_changes(&recorded);
                if !changes.is_empty() {
                    return Err(ConfigError::LiveMismatch {
                        message: changes.join("; "),
                    }
                    .into());
                }
            }
            None if record => {
                self.ctx
                    .store()
                    .set_season_field(&keys, "shape", &shape, true)
                    .await?;
            }
            None => {}
        }
        Ok(())
    }

    /// Refuses to close `period` if its players sit in a tier the file does not
    /// know (neither by name nor by `renamed_from`).
    pub(crate) fn check_live_tiers(
        &self,
        period: PeriodId,
        joins: &[(String, TierJoins)],
    ) -> Result<(), Error> {
        for (tier, joins) in joins {
            let players = &joins.counted();
            if *players > 0 && self.ctx.season().tier_by_any_name(tier).is_none() {
                return Err(ConfigError::LiveMismatch {
                    message: format!(
                        "tier {tier:?} has {players} player(s) placed in period {period}, \
                         which is closing, but the season file has no such tier; put it \
                         back, or if it was renamed declare renamed_from = {tier:?} on its \
                         new name"
                    ),
                }
                .into());
            }
        }
        Ok(())
    }

    /// Records the ladder the rollover closed with, for later comparisons.
    pub(crate) async fn record_ladder(&self) -> Result<(), Error> {
        let ladder: Vec<Value> = self.ctx.season().tiers.iter().map(tier_rules).collect();
        let text = serde_json::to_string(&ladder)
            .map_err(|e| crate::StoreError::Protocol(format!("cannot encode the ladder: {e}")))?;
        self.ctx
            .store()
            .set_season_field(&self.ctx.keys().season(), "ladder", &text, false)
            .await?;
        Ok(())
    }

    /// What deploying this season file would change in the live league: refused
    /// shape changes, tiers with players that the file lost, renamed and new tiers,
    /// and ladder edits with the period they take effect from. Writes nothing.
    pub async fn compare_with_live(&self) -> Result<SeasonEdits, Error> {
        let now = self.ctx.now().await?;
        let running = self.ctx.period_at(Some(now))?.id;
        let keys = self.ctx.keys().season();
        let mut refused = Vec::new();
        let mut changes = Vec::new();
        match self.ctx.store().season_field(&keys, "shape").await? {
            Some(recorded) => refused.extend(self.shape_changes(&recorded)),
            None => changes.push(
                "no rollover has recorded the season's shape yet: the next one records this \
                 file's"
                    .to_owned(),
            ),
        }
        // Tiers of the running and the previous period's placements.
        let periods = [running.saturating_sub(1), running];
        let live = self
            .ctx
            .store()
            .joined_many(&periods.map(|p| self.ctx.keys().period(p)))
            .await?;
        let mut seen: BTreeMap<String, [u64; 2]> = BTreeMap::new();
        for (i, joins) in live.iter().enumerate() {
            for (tier, n) in joins {
                seen.entry(tier.clone()).or_default()[i] += n.counted();
            }
        }
        for (tier, [before, now]) in &seen {
            match self.ctx.season().tier_by_any_name(tier) {
                // Renames are told with the ladder below.
                Some(_) => {}
                None => refused.push(format!(
                    "tier {tier:?} has {now} player(s) placed in period {running} and {before} \
                     in period {}, and is not in the file: their outcomes cannot be computed \
                     and they would restart at the bottom; put it back, or if it was renamed \
                     declare renamed_from = {tier:?} on its new name",
                    running.saturating_sub(1)
                )),
            }
        }
        for t in &self.ctx.season().tiers {
            if let Some(old) = &t.renamed_from {
                let [before, now] = seen.get(old).copied().unwrap_or_default();
                changes.push(format!(
                    "tier {old:?} is renamed {:?}: players whose tier is {old:?} keep it under \
                     the new name ({now} placed in period {running}, {before} in period {}); \
                     the running period's brackets keep the old name until it closes",
                    t.name,
                    running.saturating_sub(1)
                ));
            }
        }
        // The ladder the last rollover closed with.
        let recorded: Option<Vec<Value>> = self
            .ctx
            .store()
            .season_field(&keys, "ladder")
            .await?
            .and_then(|t| serde_json::from_str(&t).ok());
        match recorded {
            None => changes.push(
                "no rollover has recorded a ladder yet: promote, demote and reward changes \
                 cannot be compared"
                    .to_owned(),
            ),
            Some(recorded) => {
                let by_name: BTreeMap<&str, &Value> = recorded
                    .iter()
                    .filter_map(|t| t["name"].as_str().map(|n| (n, t)))
                    .collect();
                for name in by_name.keys() {
                    let kept = self
                        .ctx
                        .season()
                        .tiers
                        .iter()
                        .any(|t| t.name == *name || t.renamed_from.as_deref() == Some(*name));
                    if !kept && !seen.contains_key(*name) {
                        changes.push(format!(
                            "tier {name:?} is gone from the file; nobody is placed in it \
                             now, and a player whose last tier was {name:?} restarts at the \
                             bottom"
                        ));
                    }
                }
                for t in &self.ctx.season().tiers {
                    let old = by_name
                        .get(t.name.as_str())
                        .or_else(|| t.renamed_from.as_deref().and_then(|n| by_name.get(n)));
                    let now = tier_rules(t);
                    match old {
                        None => changes.push(format!(
                            "new tier {:?}: empty until the close of period {running} \
                             promotes or demotes players into it",
                            t.name
                        )),
                        Some(old) => {
                            for field in ["promote", "demote", "zones", "min_players", "rewards"] {
                                let was = recorded_field(old, field);
                                if was != now[field] {
                                    changes.push(format!(
                                        "tier {:?}: {field} {} -> {}: applies from the close \
                                         of period {running} (running now)",
                                        t.name, was, now[field]
                                    ));
                                }
                            }
                        }
                    }
                }
            }
        }
        Ok(SeasonEdits {
            running,
            refused,
            changes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ladder_recorded_before_zones_ran_with_the_defaults() {
        let old = json!({"name": "silver", "promote": 1, "demote": "20%", "rewards": []});
        assert_eq!(recorded_field(&old, "zones"), json!("players"));
        assert_eq!(recorded_field(&old, "min_players"), json!(0));
        assert_eq!(recorded_field(&old, "demote"), json!("20%"));
        let now = json!({"zones": "size", "min_players": 5});
        assert_eq!(recorded_field(&now, "zones"), json!("size"));
        assert_eq!(recorded_field(&now, "min_players"), json!(5));
    }
}
