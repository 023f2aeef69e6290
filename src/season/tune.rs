//! The `[tune]` section (what the designer's tuner aims for) and the rewrite of a
//! season file with new promotion and demotion quotas, keeping everything else of the
//! file as written. Part of the season file's validation (see `parse.rs`); pure.

use std::collections::BTreeMap;

use toml::Spanned;

use crate::error::ConfigError;

use super::parse::*;
use super::*;

/// A per-tier knob the tuner may move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Knob {
    /// The tier's `promote` quota (not in the top tier).
    Promote,
    /// The tier's `demote` quota (not in the bottom tier).
    Demote,
}

impl Knob {
    /// The key in the season file.
    pub fn as_str(self) -> &'static str {
        match self {
            Knob::Promote => "promote",
            Knob::Demote => "demote",
        }
    }
}

/// `[tune]`: what the tuner aims for.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct TuneConfig {
    /// Periods each trial simulates (1..=520).
    pub after: u32,
    /// Target share (in percent, 0..=100) of the players who scored in period `after`
    /// per tier, in tier order; tiers not named are free.
    pub targets: Vec<(String, f64)>,
    /// Which quotas may move (default: both).
    pub vary: Vec<Knob>,
    /// Most trials the search runs (1..=1000, default 60).
    pub trials: u32,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTune {
    after: Spanned<i64>,
    targets: Spanned<BTreeMap<String, Spanned<toml::Value>>>,
    vary: Option<Spanned<Vec<Spanned<String>>>>,
    trials: Option<Spanned<i64>>,
}

impl Src<'_> {
    pub(super) fn tune(&self, raw: &RawTune, tiers: &[Tier]) -> Result<TuneConfig, ConfigError> {
        let after = self.int_in(&raw.after, "tune.after", 1, 520)? as u32;
        let trials = match &raw.trials {
            Some(t) => self.int_in(t, "tune.trials", 1, 1000)? as u32,
            None => 60,
        };
        let names = tiers
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        let mut targets = Vec::new();
        for (tier, value) in raw.targets.get_ref() {
            if !tiers.iter().any(|t| &t.name == tier) {
                return Err(self.at(
                    raw.targets.span(),
                    format!("tune.targets names tier {tier:?}, which the season does not have; use one of {names}"),
                ));
            }
            let how = "write a share of the active players such as \"4%\" or \"0.5%\"";
            let share = match value.get_ref() {
                toml::Value::String(s) => s
                    .trim()
                    .strip_suffix('%')
                    .and_then(|d| d.trim().parse::<f64>().ok())
                    .filter(|x| x.is_finite() && (0.0..=100.0).contains(x)),
                _ => None,
            };
            let Some(share) = share else {
                return Err(self.at(
                    value.span(),
                    format!(
                        "tune.targets.{tier} is not a percentage from \"0%\" to \"100%\"; {how}"
                    ),
                ));
            };
            targets.push((tier.clone(), share));
        }
        if targets.is_empty() {
            return Err(self.at(
                raw.targets.span(),
                format!("tune.targets is empty; name at least one tier of {names} with its target share, e.g. {{ gold = \"10%\" }}"),
            ));
        }
        let total: f64 = targets.iter().map(|(_, s)| s).sum();
        if total > 100.0 + 1e-9 {
            return Err(self.at(
                raw.targets.span(),
                format!("tune.targets add up to {total}%, more than 100%; lower them"),
            ));
        }
        targets.sort_by_key(|(t, _)| tiers.iter().position(|x| &x.name == t));
        let vary = match &raw.vary {
            None => vec![Knob::Promote, Knob::Demote],
            Some(list) => {
                let mut vary = Vec::new();
                for v in list.get_ref() {
                    let knob = match v.get_ref().as_str() {
                        "promote" => Knob::Promote,
                        "demote" => Knob::Demote,
                        other => {
                            return Err(self.at(
                                v.span(),
                                format!("tune.vary lists {other:?}; the tuner can vary \"promote\" and \"demote\""),
                            ));
                        }
                    };
                    if vary.contains(&knob) {
                        return Err(self.at(
                            v.span(),
                            format!(
                                "tune.vary lists {other:?} twice; remove the repetition",
                                other = knob.as_str()
                            ),
                        ));
                    }
                    vary.push(knob);
                }
                if vary.is_empty() {
                    return Err(self.at(
                        list.span(),
                        "tune.vary is empty; list \"promote\", \"demote\" or both",
                    ));
                }
                vary.sort();
                vary
            }
        };
        Ok(TuneConfig {
            after,
            targets,
            vary,
            trials,
        })
    }
}

/// How a quota is written in the season file.
fn quota_text(q: Quota) -> String {
    match q {
        Quota::Count(n) => n.to_string(),
        Quota::Percent(p) => format!("\"{p}%\""),
    }
}

/// `text` (a season file) with each tier's `promote` and `demote` values replaced by
/// `quotas` (one pair per tier, lowest first), everything else as written. The result
/// is validated as a season: an error means the quotas do not make a valid season.
pub fn rewrite_quotas(
    text: &str,
    file: &str,
    quotas: &[(Quota, Quota)],
) -> Result<String, ConfigError> {
    let src = Src { text, file };
    let raw: RawSeason = toml::from_str(text).map_err(|e| src.toml_error(&e))?;
    let tiers = raw.tiers.get_ref();
    if tiers.len() != quotas.len() {
        return Err(src.at(
            raw.tiers.span(),
            format!(
                "the file has {} tiers but {} quota pairs were given; rewrite the file the season was loaded from",
                tiers.len(),
                quotas.len()
            ),
        ));
    }
    let mut edits: Vec<(std::ops::Range<usize>, String)> = Vec::new();
    for (t, (promote, demote)) in tiers.iter().zip(quotas) {
        let t = t.get_ref();
        edits.push((t.promote.span(), quota_text(*promote)));
        edits.push((t.demote.span(), quota_text(*demote)));
    }
    edits.sort_by_key(|(span, _)| std::cmp::Reverse(span.start));
    let mut out = text.to_owned();
    for (span, value) in edits {
        out.replace_range(span, &value);
    }
    Season::from_toml(&out, file)?;
    Ok(out)
}
