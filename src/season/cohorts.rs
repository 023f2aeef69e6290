//! Cohorts: the labels a join may carry (region, platform, skill band) so that
//! brackets are formed within a cohort. The season file's optional `[cohorts]`
//! section declares them as a list (`values`) or a pattern (`pattern`). Pure: no I/O.

use serde::Deserialize;
use toml::Spanned;

use crate::error::ConfigError;

use super::parse::Src;

/// Longest cohort label, in bytes.
pub const MAX_COHORT_LEN: usize = 32;

/// The cohorts a season's joins may name.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Cohorts {
    /// The declared labels (empty when a pattern declares them).
    pub values: Vec<String>,
    /// A pattern every label must match whole (when declared by `pattern`).
    pub pattern: Option<regex::Regex>,
}

impl Cohorts {
    /// Whether `label` is a declared cohort; `Err` says what labels are.
    pub fn check(&self, label: &str) -> Result<(), String> {
        if !well_formed(label) {
            return Err(format!(
                "cohort labels are 1-{MAX_COHORT_LEN} characters of A-Z, a-z, 0-9, '_' and '-'"
            ));
        }
        match &self.pattern {
            Some(p) if p.is_match(label) => Ok(()),
            Some(p) => Err(format!(
                "the season's cohorts match the pattern {:?}",
                p.as_str().trim_start_matches("^(?:").trim_end_matches(")$")
            )),
            None if self.values.iter().any(|v| v == label) => Ok(()),
            None => Err(format!(
                "the season's cohorts are {}",
                self.values.join(", ")
            )),
        }
    }
}

/// Cohort labels are part of keys: a short, plain alphabet.
fn well_formed(label: &str) -> bool {
    !label.is_empty()
        && label.len() <= MAX_COHORT_LEN
        && label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCohorts {
    values: Option<Spanned<Vec<Spanned<String>>>>,
    pattern: Option<Spanned<String>>,
}

/// Reads `[cohorts]`.
pub(super) fn parse(
    src: &Src<'_>,
    raw: Option<&Spanned<RawCohorts>>,
) -> Result<Option<Cohorts>, ConfigError> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    let r = raw.get_ref();
    match (&r.values, &r.pattern) {
        (Some(values), None) => {
            if values.get_ref().is_empty() {
                return Err(src.at(
                    values.span(),
                    "cohorts.values is empty; list the labels a join may carry, e.g. \
                     [\"eu\", \"na\"], or remove [cohorts]",
                ));
            }
            let mut labels: Vec<String> = Vec::new();
            for v in values.get_ref() {
                let label = v.get_ref();
                if !well_formed(label) {
                    return Err(src.at(
                        v.span(),
                        format!(
                            "cohort {label:?}: labels are 1-{MAX_COHORT_LEN} characters of \
                             A-Z, a-z, 0-9, '_' and '-'"
                        ),
                    ));
                }
                if labels.contains(label) {
                    return Err(src.at(v.span(), format!("cohort {label:?} is listed twice")));
                }
                labels.push(label.clone());
            }
            Ok(Some(Cohorts {
                values: labels,
                pattern: None,
            }))
        }
        (None, Some(pattern)) => {
            let whole = format!("^(?:{})$", pattern.get_ref());
            let regex = regex::Regex::new(&whole).map_err(|e| {
                src.at(
                    pattern.span(),
                    format!("cohorts.pattern is not a valid regular expression: {e}"),
                )
            })?;
            Ok(Some(Cohorts {
                values: Vec::new(),
                pattern: Some(regex),
            }))
        }
        _ => Err(src.at(
            raw.span(),
            "[cohorts] needs exactly one of values = [\"eu\", \"na\"] or \
             pattern = \"^[a-z]{2,8}$\"",
        )),
    }
}
