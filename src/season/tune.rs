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
    /// `[brackets] early_cap` (with a fairness target only).
    EarlyCap,
    /// `[brackets] late_after`, as a percentage (with a fairness target only).
    LateAfter,
}

impl Knob {
    /// The key in the season file.
    pub fn as_str(self) -> &'static str {
        match self {
            Knob::Promote => "promote",
            Knob::Demote => "demote",
            Knob::EarlyCap => "early_cap",
            Knob::LateAfter => "late_after",
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
    /// `late_promotion_within`: how far (percent, 0..=100) late joiners' promotion
    /// rate may be from early joiners' (the simulator's fairness headline). When
    /// set, the search also varies `[brackets] early_cap` and `late_after`.
    pub late_promotion_within: Option<f64>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTune {
    after: Spanned<i64>,
    targets: Spanned<BTreeMap<String, Spanned<toml::Value>>>,
    vary: Option<Spanned<Vec<Spanned<String>>>>,
    trials: Option<Spanned<i64>>,
    late_promotion_within: Option<Spanned<toml::Value>>,
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
            let Some(share) = percent(value.get_ref()) else {
                return Err(self.at(
                    value.span(),
                    format!(
                        "tune.targets.{tier} is not a percentage from \"0%\" to \"100%\"; {how}"
                    ),
                ));
            };
            targets.push((tier.clone(), share));
        }
        let within = match &raw.late_promotion_within {
            None => None,
            Some(v) => Some(percent(v.get_ref()).ok_or_else(|| {
                self.at(
                    v.span(),
                    "tune.late_promotion_within is not a percentage from \"0%\" to \"100%\"; \
                         write how far late joiners' promotion rate may be from early joiners', \
                         e.g. \"20%\"",
                )
            })?),
        };
        if targets.is_empty() && within.is_none() {
            return Err(self.at(
                raw.targets.span(),
                format!("tune.targets is empty; name at least one tier of {names} with its target share, e.g. {{ gold = \"10%\" }}, or set late_promotion_within"),
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
            late_promotion_within: within,
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

/// `text` (a season file) with `[brackets] early_cap` and `late_after` set to
/// `late` (`(early_cap, percent)`), or removed for `None`, everything else as
/// written. The result is validated as a season.
pub fn rewrite_late_seats(
    text: &str,
    file: &str,
    late: Option<(u32, u32)>,
) -> Result<String, ConfigError> {
    let src = Src { text, file };
    let raw: RawSeason = toml::from_str(text).map_err(|e| src.toml_error(&e))?;
    let b = raw.brackets.as_ref();
    let cap = b.and_then(|b| b.early_cap.as_ref()).map(|c| c.span());
    let after = b.and_then(|b| b.late_after.as_ref()).map(|a| a.span());
    let mut out = text.to_owned();
    match (late, cap, after) {
        (Some((c, p)), Some(cap), Some(after)) => {
            let (first, second) = if cap.start > after.start {
                ((cap, c.to_string()), (after, format!("\"{p}%\"")))
            } else {
                ((after, format!("\"{p}%\"")), (cap, c.to_string()))
            };
            out.replace_range(first.0, &first.1);
            out.replace_range(second.0, &second.1);
        }
        (late, _, _) => {
            // Drop the keys' lines, then write the new ones under `[brackets]`.
            let mut lines: Vec<&str> = text
                .lines()
                .filter(|l| {
                    let k = l.trim_start();
                    !(k.starts_with("early_cap") || k.starts_with("late_after"))
                })
                .collect();
            let keys = late.map(|(c, p)| format!("early_cap = {c}\nlate_after = \"{p}%\""));
            if let Some(keys) = &keys {
                match lines
                    .iter()
                    .position(|l| l.trim_start().starts_with("[brackets]"))
                {
                    Some(i) => lines.insert(i + 1, keys),
                    None => {
                        lines.push("[brackets]");
                        lines.push(keys);
                    }
                }
            }
            out = lines.join("\n") + "\n";
        }
    }
    Season::from_toml(&out, file)?;
    Ok(out)
}

/// A percentage from "0%" to "100%" as the `[tune]` keys write it (`None`: not one).
fn percent(value: &toml::Value) -> Option<f64> {
    match value {
        toml::Value::String(s) => s
            .trim()
            .strip_suffix('%')
            .and_then(|d| d.trim().parse::<f64>().ok())
            .filter(|x| x.is_finite() && (0.0..=100.0).contains(x)),
        _ => None,
    }
}
