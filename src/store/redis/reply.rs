//! Reply parsing. Nothing Redis returns is unwrapped: a reply of an unexpected shape
//! becomes `StoreError::Protocol` with what was expected and what came.

use std::sync::Arc;

use redis::Value;

use crate::error::StoreError;
use crate::season::packing::EXACT_LIMIT;
use crate::store::{Page, RawEntry, StoredText};

pub(super) fn protocol(what: impl Into<String>) -> StoreError {
    StoreError::Protocol(what.into())
}

/// A nil reply; also RESP3's `false`, which a Lua `false` becomes for RESP3 clients.
pub(super) fn is_nil(v: &Value) -> bool {
    matches!(v, Value::Nil | Value::Boolean(false))
}

pub(super) fn text<'v>(v: &'v Value, what: &str) -> Result<&'v str, StoreError> {
    match v {
        Value::BulkString(bytes) => {
            std::str::from_utf8(bytes).map_err(|_| protocol(format!("{what} is not UTF-8: {v:?}")))
        }
        Value::SimpleString(s) => Ok(s),
        Value::VerbatimString { text, .. } => Ok(text),
        other => Err(protocol(format!(
            "expected {what} as a string, got {other:?}"
        ))),
    }
}

pub(super) fn uint(v: &Value, what: &str) -> Result<u64, StoreError> {
    match v {
        Value::Int(i) => {
            u64::try_from(*i).map_err(|_| protocol(format!("{what} is negative: {i}")))
        }
        other => {
            let s = text(other, what)?;
            s.parse::<u64>()
                .map_err(|_| protocol(format!("{what} is not an unsigned integer: {s:?}")))
        }
    }
}

pub(super) fn bracket_number(s: &str, what: &str) -> Result<u32, StoreError> {
    s.parse::<u32>()
        .map_err(|_| protocol(format!("{what} is not a bracket number: {s:?}")))
}

/// The packed value of a raw board score (minus the packed value). Scores arrive as
/// strings such as `-123` or `-1.2e+17` (or as doubles over RESP3); anything that is
/// not minus an integer in `0..=2^53` was not written by leaguekit.
pub(super) fn packed_from_score(v: &Value, what: &str) -> Result<u64, StoreError> {
    let score = match v {
        Value::Double(d) => *d,
        Value::Int(i) => *i as f64,
        other => return packed_from_text(text(other, what)?, what),
    };
    packed_from_double(score, what)
}

/// [`packed_from_score`] of a score sent as text.
pub(super) fn packed_from_text(s: &str, what: &str) -> Result<u64, StoreError> {
    // Redis writes an integral score below 1e17 as plain digits ("%.17g"), so a board
    // score is nearly always "-" and at most 16 digits: read those as an integer (a
    // page parses 100 of them) and leave everything else to the general path.
    if let Some(digits) = s.strip_prefix('-')
        && (1..=16).contains(&digits.len())
    {
        // One pass: each byte checked and added (16 digits cannot overflow a u64).
        let packed = digits.bytes().try_fold(0u64, |n, b| {
            let d = b.wrapping_sub(b'0');
            (d <= 9).then(|| n * 10 + u64::from(d))
        });
        if let Some(packed) = packed
            && packed <= EXACT_LIMIT
        {
            return Ok(packed);
        }
    }
    let score = s
        .parse::<f64>()
        .map_err(|_| protocol(format!("{what} is not a number: {s:?}")))?;
    packed_from_double(score, what)
}

fn packed_from_double(score: f64, what: &str) -> Result<u64, StoreError> {
    // `-0` and `0` both mean the never-scored value 0.
    let packed = if score == 0.0 { 0.0 } else { -score };
    if !packed.is_finite() || packed.fract() != 0.0 || packed < 0.0 || packed > EXACT_LIMIT as f64 {
        return Err(protocol(format!(
            "{what} {score} is not minus a packed score (an integer in 0..=2^53)"
        )));
    }
    // Exact: an integer in 0..=2^53 converts without rounding.
    Ok(packed as u64)
}

pub(super) fn array(v: Value, what: &str) -> Result<Vec<Value>, StoreError> {
    match v {
        Value::Array(items) => Ok(items),
        other => Err(protocol(format!(
            "expected {what} as an array, got {other:?}"
        ))),
    }
}

/// A batch script's reply: an array of exactly one answer per item (`n`), or an
/// error naming the script (`what`) and both counts.
pub(super) fn answers(v: Value, n: usize, what: &str) -> Result<Vec<Value>, StoreError> {
    let items = array(v, what)?;
    if items.len() != n {
        return Err(protocol(format!(
            "{what}: {} answers for {n} items",
            items.len()
        )));
    }
    Ok(items)
}

/// Field-value pairs from HGETALL: a flat array (RESP2) or a map (RESP3).
pub(super) fn pairs(v: Value, what: &str) -> Result<Vec<(String, String)>, StoreError> {
    let raw: Vec<(Value, Value)> = match v {
        Value::Map(map) => map,
        Value::Array(items) => {
            if items.len() % 2 != 0 {
                return Err(protocol(format!(
                    "{what}: odd number of items in a hash reply"
                )));
            }
            let mut it = items.into_iter();
            let mut out = Vec::new();
            while let (Some(k), Some(v)) = (it.next(), it.next()) {
                out.push((k, v));
            }
            out
        }
        Value::Nil => Vec::new(),
        other => {
            return Err(protocol(format!(
                "expected {what} as a hash, got {other:?}"
            )));
        }
    };
    raw.iter()
        .map(|(k, v)| Ok((text(k, what)?.to_owned(), text(v, what)?.to_owned())))
        .collect()
}

/// A `{total, first rank, (player, score, profile)*}` reply of standings/around.lua.
pub(super) fn page(v: Value, what: &str) -> Result<Page, StoreError> {
    // One string: count, first rank, then (player, score, profile or "") triples,
    // joined by byte 31 (see standings.lua). Its profiles share it (one allocation for
    // the page rather than one a profile: see `StoredText`).
    let flat: Arc<String> = Arc::new(match v {
        Value::BulkString(bytes) => String::from_utf8(bytes)
            .map_err(|e| protocol(format!("{what} is not UTF-8: {:?}", e.as_bytes())))?,
        other => text(&other, what)?.to_owned(),
    });
    let mut items = fields(&flat);
    let (Some(total), Some(offset)) = (items.next(), items.next()) else {
        return Err(protocol(format!(
            "{what}: no count and first rank in {flat:?}"
        )));
    };
    let total = decimal(total, "board size")?;
    let offset = decimal(offset, "first rank")?;
    // Three fields an entry: sized once rather than grown (and copied) six times.
    let mut entries = Vec::with_capacity(separators(&flat).saturating_sub(1) / 3);
    while let Some(player) = items.next() {
        let (Some(score), Some(profile)) = (items.next(), items.next()) else {
            return Err(protocol(format!(
                "{what}: an entry of {player:?} without a score and a profile"
            )));
        };
        entries.push(RawEntry {
            player: player.to_owned(),
            packed: packed_from_text(score, "board score")?,
            profile: if profile.is_empty() {
                None
            } else {
                Some(StoredText::within(&flat, cached_profile(profile)?))
            },
        });
    }
    Ok(Page {
        total,
        offset,
        entries,
    })
}

/// The byte that separates the fields of the strings leaguekit's scripts build and
/// keep (pages, frozen boards, profiles): ASCII 31, the unit separator, which no
/// player id holds (ids are validated) and JSON text escapes.
pub(super) const SEP: char = '\x1f';

/// The fields of `text` between [`SEP`]s, as `text.split('\x1f')` gives them (one
/// field, "", for "", and an empty field after a trailing separator).
///
/// `str::split` on a char searches again from each field's start and compares the
/// char's bytes at each match: on a kept page's 300 short fields that was a third of
/// its parse under `perf`. memchr's iterator finds every separator of the text in one
/// vectorised pass.
pub(super) fn fields(text: &str) -> Fields<'_> {
    Fields {
        text,
        ends: memchr::memchr_iter(SEP as u8, text.as_bytes()),
        start: 0,
        done: false,
    }
}

/// How many [`SEP`]s `text` holds (one fewer than its [`fields`]), to size what is
/// parsed from it.
pub(super) fn separators(text: &str) -> usize {
    memchr::memchr_iter(SEP as u8, text.as_bytes()).count()
}

/// See [`fields`].
pub(super) struct Fields<'a> {
    text: &'a str,
    ends: memchr::Memchr<'a>,
    start: usize,
    done: bool,
}

impl<'a> Iterator for Fields<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.done {
            return None;
        }
        let end = match self.ends.next() {
            Some(end) => end,
            None => {
                self.done = true;
                self.text.len()
            }
        };
        // The separator is ASCII, so both ends are char boundaries and `get` always
        // answers; it is used rather than indexing so that nothing here can panic.
        let field = self.text.get(self.start..end);
        self.start = end + 1;
        field
    }
}

/// A decimal count.
fn decimal(s: &str, what: &str) -> Result<u64, StoreError> {
    s.parse()
        .map_err(|_| protocol(format!("{what} {s:?} is not a count")))
}

/// The JSON of a cached profile `"version json"`.
pub(super) fn cached_profile(cached: &str) -> Result<&str, StoreError> {
    // The version's digits, then a space: not `split_once(' ')`, whose char search
    // costs more than the few digits it passes (5% of a kept page's client
    // instructions under callgrind).
    let digits = cached.bytes().take_while(u8::is_ascii_digit).count();
    match (cached.as_bytes().get(digits), cached.get(digits + 1..)) {
        (Some(b' '), Some(json)) => Ok(json),
        _ => Err(protocol(format!(
            "cached profile {cached:?} is not \"version json\""
        ))),
    }
}

/// A claim answer as `claim_rewards.lua` stores it: a JSON list of strings, source
/// and grant alternating (cjson's encoding, which escapes every string).
pub(super) fn stored_claim(json: &str) -> Result<Vec<(String, String)>, StoreError> {
    let flat: Vec<String> = serde_json::from_str(json).map_err(|e| {
        protocol(format!(
            "stored claim {json:?} is not a JSON list of strings: {e}"
        ))
    })?;
    if !flat.len().is_multiple_of(2) {
        return Err(protocol(format!(
            "stored claim {json:?} has an odd number of items"
        )));
    }
    let mut it = flat.into_iter();
    let mut out = Vec::new();
    while let (Some(source), Some(grant)) = (it.next(), it.next()) {
        out.push((source, grant));
    }
    Ok(out)
}

/// A bulk string reply of `s`, as tests build replies.
#[cfg(test)]
pub(super) fn bulk(s: &str) -> Value {
    Value::BulkString(s.as_bytes().to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// `fields` answers what `str::split` on the separator answers, for any text:
        /// separators anywhere (first, last, doubled), none, multi-byte chars.
        #[test]
        fn fields_are_those_of_split(text in "[a\u{1f}é😀{}\" 0-9]{0,40}") {
            let ours: Vec<&str> = fields(&text).collect();
            let split: Vec<&str> = text.split(SEP).collect();
            proptest::prop_assert_eq!(ours, split);
        }
    }

    #[test]
    fn fields_of_edge_texts() {
        fn f(t: &str) -> Vec<&str> {
            fields(t).collect()
        }
        assert_eq!(f(""), [""]);
        assert_eq!(f("\x1f"), ["", ""]);
        assert_eq!(f("a\x1f\x1fb\x1f"), ["a", "", "b", ""]);
        assert_eq!(f("é\x1f😀"), ["é", "😀"]);
    }

    #[test]
    fn scores_parse_exactly_or_not_at_all() {
        let s = |x: &str| Value::BulkString(x.as_bytes().to_vec());
        assert_eq!(packed_from_score(&s("0"), "t").ok(), Some(0));
        assert_eq!(packed_from_score(&s("-0"), "t").ok(), Some(0));
        assert_eq!(
            packed_from_score(&s("-9007199254740991"), "t").ok(),
            Some(9_007_199_254_740_991)
        );
        assert_eq!(
            packed_from_score(&s("-1.2345678901234e+14"), "t").ok(),
            Some(123_456_789_012_340)
        );
        assert_eq!(packed_from_score(&Value::Double(-42.0), "t").ok(), Some(42));
        // The digits-only path and the general one agree, up to 2^53 and past it.
        assert_eq!(
            packed_from_score(&s("-9007199254740992"), "t").ok(),
            Some(1 << 53)
        );
        for n in [1u64, 9, 10, 123_456_789, 99_999_999_999_999, (1 << 53) - 1] {
            assert_eq!(packed_from_text(&format!("-{n}"), "t").ok(), Some(n));
            assert_eq!(packed_from_text(&format!("-{n}.0"), "t").ok(), Some(n));
        }
        for bad in [
            "1",
            "-1.5",
            "inf",
            "-inf",
            "nan",
            "-1e17",
            "x",
            "",
            "-",
            "-12a",
            "--1",
            "-9999999999999999",
            "-99999999999999999",
        ] {
            assert!(packed_from_score(&s(bad), "t").is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn stored_claims_parse_exactly_or_not_at_all() {
        // cjson escapes '/' as '\/' and control bytes as \u00XX.
        let json = r#"["1\/gold\/1","a\"b\u0000c","2\/gold\/1",""]"#;
        assert_eq!(
            stored_claim(json).ok(),
            Some(vec![
                ("1/gold/1".to_owned(), "a\"b\0c".to_owned()),
                ("2/gold/1".to_owned(), String::new()),
            ])
        );
        assert_eq!(stored_claim("[]").ok(), Some(Vec::new()));
        for bad in ["{}", "[\"odd\"]", "[1,2]", "nope", ""] {
            assert!(
                matches!(stored_claim(bad), Err(StoreError::Protocol(_))),
                "{bad} accepted"
            );
        }
    }
}
