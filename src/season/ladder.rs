//! Reading the ladder and the optional sections of the season file: tiers with their
//! promotion and demotion quotas and reward ranks, profiles, and the simulator's
//! parameters. Part of the season file's validation (see `parse.rs`).

use std::ops::Range;

use toml::Spanned;

use crate::error::ConfigError;

use super::parse::*;
use super::*;

impl Src<'_> {
    pub(super) fn profiles(&self, raw: &RawProfiles) -> Result<Profiles, ConfigError> {
        let mut p = Profiles::default();
        if let Some(fields) = &raw.fields {
            let mut seen: Vec<&Spanned<String>> = Vec::new();
            for f in fields.get_ref() {
                if seen.len() == 16 {
                    return Err(self.at(
                        f.span(),
                        "profiles.fields has more than 16 fields; keep at most 16 (they are \
                         copied into every bracket a player joins)",
                    ));
                }
                let name = f.get_ref();
                let valid = !name.is_empty()
                    && name.len() <= 32
                    && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                if !valid {
                    return Err(self.at(
                        f.span(),
                        format!(
                            "profile field {name:?} is not a valid name; \
                             use 1-32 characters from A-Z, a-z, 0-9 and '_'"
                        ),
                    ));
                }
                if let Some(first) = seen.iter().find(|s| s.get_ref() == name) {
                    let (line, _) = line_col(self.text, first.span().start);
                    return Err(self.at(
                        f.span(),
                        format!(
                            "profile field {name:?} is listed twice (first on line {line}); \
                             remove the repetition"
                        ),
                    ));
                }
                seen.push(f);
            }
            p.fields = seen.iter().map(|s| s.get_ref().clone()).collect();
        }
        if let Some(max) = &raw.max_bytes {
            p.max_bytes = self.int_in(max, "profiles.max_bytes", 1, 65_536)? as usize;
        }
        Ok(p)
    }

    pub(super) fn tiers(
        &self,
        raw: &Spanned<Vec<Spanned<RawTier>>>,
        brackets: &Brackets,
    ) -> Result<Vec<Tier>, ConfigError> {
        let list = raw.get_ref();
        if list.is_empty() {
            return Err(self.at(
                raw.span(),
                "the season has no tiers; add at least one [[tiers]] table \
                 (lowest first, each with name, promote and demote)",
            ));
        }
        let size = brackets.size;
        let mut tiers: Vec<Tier> = Vec::with_capacity(list.len());
        let mut names: Vec<(&str, Range<usize>)> = Vec::new();
        for (i, t) in list.iter().enumerate() {
            let t = t.get_ref();
            let name = self.ident(&t.name, "tier name", 64, NAME_CHARS, "")?;
            if let Some((_, first)) = names.iter().find(|(n, _)| *n == name.as_str()) {
                let (line, _) = line_col(self.text, first.start);
                return Err(self.at(
                    t.name.span(),
                    format!(
                        "tier name {name:?} is used twice (first on line {line}); \
                         give every tier its own name"
                    ),
                ));
            }
            names.push((t.name.get_ref(), t.name.span()));

            let promote = self.quota(&t.promote, "promote", &name, size)?;
            let demote = self.quota(&t.demote, "demote", &name, size)?;
            if i + 1 == list.len() && !promote.is_zero() {
                return Err(self.at(
                    t.promote.span(),
                    format!(
                        "tier {name:?} is the top tier, so nobody can be promoted from it \
                         (promote = {promote}); set promote = 0, or add a tier after it \
                         (tiers are listed lowest first)"
                    ),
                ));
            }
            if i == 0 && !demote.is_zero() {
                return Err(self.at(
                    t.demote.span(),
                    format!(
                        "tier {name:?} is the bottom tier, so nobody can be demoted from it \
                         (demote = {demote}); set demote = 0, or add a tier before it \
                         (tiers are listed lowest first)"
                    ),
                ));
            }
            let key = |k: &str| format!("in tier {name:?}, {k}");
            let zones = self.zones(t.zones.as_ref(), &key("zones"), brackets.zones)?;
            let min_players = self.min_players(
                t.min_players.as_ref(),
                &key("min_players"),
                size,
                brackets.min_players,
            )?;
            // A full bracket: the same count under either zone rule.
            let (up, down) = (promote.of(u64::from(size)), demote.of(u64::from(size)));
            if up + down > u64::from(size) {
                return Err(self.at(
                    t.demote.span(),
                    format!(
                        "in tier {name:?}, promote ({up} of a full bracket) and demote ({down}) \
                         add up to more than brackets.size ({size}), so some players would be \
                         both promoted and demoted; lower promote or demote"
                    ),
                ));
            }

            let mut rewards: Vec<Reward> = Vec::new();
            let mut spans: Vec<Range<usize>> = Vec::new();
            for r in t.rewards.iter().flatten() {
                let r = r.get_ref();
                let (first, last) = self.ranks(&r.ranks, &name, size)?;
                if let Some((prev, span)) = rewards
                    .iter()
                    .zip(&spans)
                    .find(|(p, _)| first <= p.last && p.first <= last)
                {
                    let (line, _) = line_col(self.text, span.start);
                    return Err(self.at(
                        r.ranks.span(),
                        format!(
                            "in tier {name:?}, ranks {:?} overlap ranks \"{}\" (line {line}); \
                             a rank earns one reward, so make the ranges disjoint",
                            r.ranks.get_ref(),
                            fmt_ranks(prev.first, prev.last),
                        ),
                    ));
                }
                let grant = r.grant.get_ref();
                if grant.trim().is_empty() {
                    return Err(self.at(
                        r.grant.span(),
                        format!(
                            "in tier {name:?}, the reward for ranks {:?} has an empty grant; \
                             write what the game should give, e.g. \"gems:100\"",
                            r.ranks.get_ref()
                        ),
                    ));
                }
                rewards.push(Reward {
                    first,
                    last,
                    grant: grant.clone(),
                });
                spans.push(r.ranks.span());
            }
            let renamed_from = match &t.renamed_from {
                None => None,
                Some(old) => {
                    let old_name = self.ident(old, "renamed_from", 64, NAME_CHARS, "")?;
                    if list.iter().any(|o| o.get_ref().name.get_ref() == &old_name) {
                        return Err(self.at(
                            old.span(),
                            format!(
                                "tier {name:?} is renamed_from {old_name:?}, but a tier of the \
                                 season is still called {old_name:?}; a renamed tier's old \
                                 name must be gone from the file"
                            ),
                        ));
                    }
                    if let Some(other) = tiers
                        .iter()
                        .find(|o| o.renamed_from.as_deref() == Some(old_name.as_str()))
                    {
                        return Err(self.at(
                            old.span(),
                            format!(
                                "tiers {:?} and {name:?} are both renamed_from {old_name:?}; \
                                 the old tier's players can go to one of them only",
                                other.name
                            ),
                        ));
                    }
                    Some(old_name)
                }
            };
            tiers.push(Tier {
                name,
                promote,
                demote,
                rewards,
                renamed_from,
                zones,
                min_players,
            });
        }
        Ok(tiers)
    }

    /// `promote` / `demote`: a non-negative count (at most the bracket size) or `"N%"`.
    pub(super) fn quota(
        &self,
        v: &Spanned<toml::Value>,
        key: &str,
        tier: &str,
        size: u32,
    ) -> Result<Quota, ConfigError> {
        let how =
            format!("write a count such as {key} = 10 or a percentage such as {key} = \"20%\"");
        let err = |what: String| self.at(v.span(), format!("in tier {tier:?}, {what}; {how}"));
        match v.get_ref() {
            toml::Value::Integer(n) => {
                if *n < 0 {
                    return Err(err(format!("{key} = {n} is negative")));
                }
                if *n > i64::from(size) {
                    return Err(err(format!(
                        "{key} = {n} is more than brackets.size ({size})"
                    )));
                }
                Ok(Quota::Count(*n as u32))
            }
            toml::Value::String(s) => {
                let digits = s.trim().strip_suffix('%').map(str::trim);
                match digits.map(|d| (d, d.parse::<u32>())) {
                    Some((d, Ok(p))) if p <= 100 && d.chars().all(|c| c.is_ascii_digit()) => {
                        Ok(Quota::Percent(p))
                    }
                    Some((_, Ok(p))) if p > 100 => {
                        Err(err(format!("{key} = {s:?} is more than 100%")))
                    }
                    _ => Err(err(format!(
                        "{key} = {s:?} is not a whole percentage from \"0%\" to \"100%\""
                    ))),
                }
            }
            toml::Value::Float(x) => Err(err(format!(
                "{key} = {x} is a fraction; a percentage is written as a string"
            ))),
            other => Err(err(format!("{key} is a {}", other.type_str()))),
        }
    }

    /// `zones = "players" | "size"` named `key`, or `default` when absent.
    pub(super) fn zones(
        &self,
        v: Option<&Spanned<String>>,
        key: &str,
        default: Zones,
    ) -> Result<Zones, ConfigError> {
        let Some(v) = v else { return Ok(default) };
        match v.get_ref().as_str() {
            "players" => Ok(Zones::Players),
            "size" => Ok(Zones::Size),
            other => Err(self.at(
                v.span(),
                format!(
                    "{key} = {other:?} is not a zone rule; use \"players\" or \"size\" \
                     (percentages of the bracket's actual players, or of brackets.size \
                     however many joined)"
                ),
            )),
        }
    }

    /// `min_players` in `0..=size` named `key`, or `default` when absent.
    pub(super) fn min_players(
        &self,
        v: Option<&Spanned<i64>>,
        key: &str,
        size: u32,
        default: u32,
    ) -> Result<u32, ConfigError> {
        let Some(v) = v else { return Ok(default) };
        let n = *v.get_ref();
        let what = if n < 0 {
            "is negative"
        } else if n > i64::from(size) {
            "is more than brackets.size, so no bracket could ever reach it"
        } else {
            return Ok(n as u32);
        };
        Err(self.at(
            v.span(),
            format!(
                "{key} = {n} {what}; use a whole number from 0 (no minimum) to {size} (the \
                 bracket size): a bracket that closes with fewer active players demotes nobody"
            ),
        ))
    }

    /// `"N"` or `"N-M"` with `1 <= N <= M <= size`.
    pub(super) fn ranks(
        &self,
        v: &Spanned<String>,
        tier: &str,
        size: u32,
    ) -> Result<(u32, u32), ConfigError> {
        let s = v.get_ref().trim();
        let num = |t: &str| -> Option<u32> {
            let t = t.trim();
            if t.is_empty() || !t.chars().all(|c| c.is_ascii_digit()) {
                return None;
            }
            t.parse().ok()
        };
        let parsed = match s.split_once('-') {
            Some((a, b)) => num(a).zip(num(b)),
            None => num(s).map(|n| (n, n)),
        };
        let how = "write ranks as \"N\" or \"N-M\" with 1 <= N <= M, e.g. \"1\" or \"2-10\"";
        match parsed {
            Some((first, last)) if first >= 1 && first <= last => {
                if last > size {
                    return Err(self.at(
                        v.span(),
                        format!(
                            "in tier {tier:?}, ranks {s:?} go past the bracket size ({size}), \
                             so rank {last} can never be reached; use ranks from 1 to {size}"
                        ),
                    ));
                }
                Ok((first, last))
            }
            _ => Err(self.at(
                v.span(),
                format!("in tier {tier:?}, ranks {s:?} is not a rank range; {how}"),
            )),
        }
    }

    pub(super) fn simulation(&self, raw: &RawSimulation) -> Result<SimulationConfig, ConfigError> {
        let mut s = SimulationConfig::default();
        if let Some(v) = &raw.players {
            s.players = self.int_in(v, "simulation.players", 1, 10_000_000)? as u64;
        }
        if let Some(v) = &raw.periods {
            s.periods = self.int_in(v, "simulation.periods", 1, 10_000)? as u32;
        }
        if let Some(v) = &raw.seed {
            s.seed = self.int_in(v, "simulation.seed", 0, i64::MAX)? as u64;
        }
        if let Some(v) = &raw.skill_spread {
            s.skill_spread = self.float_in(v, "simulation.skill_spread", 0.0, f64::INFINITY)?;
        }
        if let Some(v) = &raw.active_share {
            s.active_share = self.float_in(v, "simulation.active_share", 0.0, 1.0)?;
        }
        if let Some(v) = &raw.quit_rate {
            s.quit_rate = self.float_in(v, "simulation.quit_rate", 0.0, 1.0)?;
        }
        if let Some(v) = &raw.return_rate {
            s.return_rate = self.float_in(v, "simulation.return_rate", 0.0, 1.0)?;
        }
        if let Some(v) = &raw.arrival {
            s.arrival = Arrival::parse(v.get_ref()).ok_or_else(|| {
                self.at(
                    v.span(),
                    format!(
                        "simulation.arrival = {:?} is not an arrival model; use \"matches\", \"uniform\" or \"front\"",
                        v.get_ref()
                    ),
                )
            })?;
        }
        Ok(s)
    }
}

/// `"N"` or `"N-M"`.
fn fmt_ranks(first: u32, last: u32) -> String {
    if first == last {
        first.to_string()
    } else {
        format!("{first}-{last}")
    }
}
