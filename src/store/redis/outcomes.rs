//! How a closed bracket's outcomes are kept on Redis: one string per bracket
//! (`finish_bracket.lua` sets it once, `outcome.lua` finds one player's entry in it).
//!
//! The format: for each player, byte 30 (record separator), the player id, byte 31
//! (unit separator), the encoded outcome ([`crate::rollover::outcome`]'s format).
//! Both texts are escaped first so that neither separator occurs inside them: byte 27
//! (escape) becomes `ESC 0`, byte 30 `ESC 1`, byte 31 `ESC 2`. Player ids never hold
//! control bytes (the league refuses them), but grants are the season file's free
//! text, and the store takes whatever its caller gives: escaping keeps every entry
//! exact whatever it holds.
//!
//! Why a string and not a hash of a field per player: writing 100 new fields into a
//! listpack-encoded hash scans it once per field, about 54 µs of Redis per bracket of
//! 100 (redis-benchmark, Redis 7.0), more than half of what recording cost; a string
//! is set in well under a microsecond. Readers are few (a returning player's join
//! reads one entry, through `outcome.lua`, which answers that entry alone).

use crate::error::StoreError;

const RS: char = '\x1e';
const US: char = '\x1f';
const ESC: char = '\x1b';

/// `text` with escape, record and unit separators escaped (see the module's doc).
pub(super) fn escape_into(out: &mut String, text: &str) {
    // The three are ASCII, so they are found byte by byte, and the text between them
    // is copied whole (a char at a time was 4% of the rollover's client time).
    let mut rest = text;
    while let Some(at) = rest.find([ESC, RS, US]) {
        out.push_str(&rest[..at]);
        out.push_str(match rest.as_bytes()[at] {
            0x1b => "\x1b0",
            0x1e => "\x1b1",
            _ => "\x1b2",
        });
        rest = &rest[at + 1..];
    }
    out.push_str(rest);
}

/// The inverse of [`escape_into`]; `None` for text [`escape_into`] cannot produce.
pub(super) fn unescape(text: &str) -> Option<String> {
    if !text.contains(ESC) {
        return Some(text.to_owned());
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != ESC {
            out.push(c);
            continue;
        }
        out.push(match chars.next()? {
            '0' => ESC,
            '1' => RS,
            '2' => US,
            _ => return None,
        });
    }
    Some(out)
}

/// The string `finish_bracket.lua` keeps for `outcomes` (`(player, outcome)`).
pub(super) fn encode(outcomes: &[(&str, &str)]) -> String {
    let len: usize = outcomes.iter().map(|(p, o)| p.len() + o.len() + 2).sum();
    let mut out = String::with_capacity(len);
    for (player, outcome) in outcomes {
        out.push(RS);
        escape_into(&mut out, player);
        out.push(US);
        escape_into(&mut out, outcome);
    }
    out
}

/// What starts `player`'s entry in [`encode`]'s string (`outcome.lua`'s needle).
pub(super) fn needle(player: &str) -> String {
    let mut out = String::with_capacity(player.len() + 2);
    out.push(RS);
    escape_into(&mut out, player);
    out.push(US);
    out
}

/// Every `(player, outcome)` of [`encode`]'s string, in the order recorded.
pub(super) fn decode(all: &str) -> Result<Vec<(String, String)>, StoreError> {
    let bad = || StoreError::Protocol(format!("malformed bracket outcomes: {all:?}"));
    let Some(rest) = all.strip_prefix(RS) else {
        return if all.is_empty() {
            Ok(Vec::new())
        } else {
            Err(bad())
        };
    };
    rest.split(RS)
        .map(|entry| {
            let (player, outcome) = entry.split_once(US).ok_or_else(bad)?;
            Ok((
                unescape(player).ok_or_else(bad)?,
                unescape(outcome).ok_or_else(bad)?,
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_whatever_they_hold() {
        let outcomes = vec![
            (
                "p1".to_owned(),
                "1|40|0|promoted|silver|+gems:100".to_owned(),
            ),
            (
                "p\u{1b}2".to_owned(),
                "2|30|0|stay|bronze|+a\u{1e}b\u{1f}c\u{1b}".to_owned(),
            ),
            ("".to_owned(), "".to_owned()),
            ("ü 3".to_owned(), "3|0|1|demoted|bronze|".to_owned()),
        ];
        let pairs: Vec<(&str, &str)> = outcomes
            .iter()
            .map(|(p, o)| (p.as_str(), o.as_str()))
            .collect();
        let all = encode(&pairs);
        assert_eq!(decode(&all).expect("decodes"), outcomes);
        assert_eq!(decode("").expect("empty"), Vec::new());
    }

    #[test]
    fn a_needle_matches_its_own_entry_only() {
        // An outcome that reads like another player's id cannot be taken for it: the
        // needle starts at a record separator and ends at the first unit separator.
        let all = encode(&[("a", "b"), ("b", "x\u{1e}b\u{1f}y")]);
        let at = |p: &str| all.match_indices(&needle(p)).count();
        assert_eq!((at("a"), at("b")), (1, 1));
        assert_eq!(at("x"), 0);
    }

    #[test]
    fn text_escape_cannot_produce_is_refused() {
        assert_eq!(unescape("a\u{1b}9"), None);
        assert_eq!(unescape("a\u{1b}"), None);
        assert!(decode("no separator").is_err());
        assert!(decode("\u{1e}no unit separator").is_err());
    }
}
