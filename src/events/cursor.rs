//! Where a player's event stream is: a position in each log it reads.
//!
//! A player's events are in three kinds of log: their bracket's (placed, overtaken,
//! outcomes, corrections), their period's (`period.closed`) and their player bucket's
//! (rewards granted and claimed; the bucket's other players' events are skipped). A
//! stream follows the player's latest two periods (the one they play and the one whose
//! rollover may still be writing their outcome), so the cursor holds a position in
//! the bucket's log and, per period, in its bracket's and period's logs. It is the
//! `id` of each server-sent event: a client that reconnects with it as
//! `Last-Event-ID` misses nothing and gets nothing twice.
//!
//! Text form: `v1.<bucket>` then `.<period>.<bracket>.<period log>` per period, each
//! position `ms-seq` (`v1.0-0.45.1767225600000-0.0-0`). A stream sends the same
//! positions bound to its player ([`PlayerCursor::to_text_for`]): `v2.<tag>.` and the
//! rest as in v1, the tag being [`owner_tag`] of the player, so that an id of one
//! player's stream is refused by another's ([`PlayerCursor::parse_for`]); the untagged
//! v1 form (sent before 0.4) is still read.

use std::fmt;
use std::str::FromStr;

use crate::store::Pos;

/// The longest part of a refused id repeated in an error message, in characters.
const SHOWN: usize = 120;

/// The fingerprint of a stream's owner in its ids (a player, or a bracket): 8 hex
/// digits of the FNV-1a hash of `owner`. Not a secret (a client may compute it): it
/// tells one stream's ids from another's, so that an id sent back to the wrong stream
/// is refused instead of skipping that stream's events.
pub fn owner_tag(owner: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in owner.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{:08x}", (h >> 32) ^ (h & 0xffff_ffff))
}

/// The tag of `player`'s stream ([`owner_tag`]).
pub fn player_tag(player: &str) -> String {
    owner_tag(&format!("player:{player}"))
}

/// `text` cut to its first 120 characters, for an error message.
pub fn shown(text: &str) -> String {
    text.chars().take(SHOWN).collect()
}

/// Why an event id cannot resume a stream.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CursorError {
    /// Not an id of this kind of stream at all.
    #[error(
        "{id:?} is not a player stream's event id ({why}): send back an id this stream \
         sent, or none to start from the oldest event kept"
    )]
    Malformed {
        /// The id (its first 120 characters).
        id: String,
        /// What is wrong with it.
        why: String,
    },
    /// An id of another stream (another player's).
    #[error(
        "{id:?} is an event id of another player's stream, not of {player:?}'s: send back \
         an id this stream sent, or none to start from the oldest event kept"
    )]
    OtherStream {
        /// The id (its first 120 characters).
        id: String,
        /// The stream's player.
        player: String,
    },
}

/// Positions in one period's logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PeriodCursor {
    /// The period.
    pub period: u64,
    /// In the player's bracket's log of that period.
    pub bracket: Pos,
    /// In the period's log.
    pub period_log: Pos,
}

impl PeriodCursor {
    /// Before every event of `period`.
    pub fn start(period: u64) -> Self {
        PeriodCursor {
            period,
            bracket: Pos::START,
            period_log: Pos::START,
        }
    }
}

/// Where a player's stream is.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct PlayerCursor {
    /// In the player bucket's log.
    pub bucket: Pos,
    /// Per period followed, oldest first (at most [`PlayerCursor::PERIODS`]).
    pub periods: Vec<PeriodCursor>,
}

impl PlayerCursor {
    /// How many periods a stream follows at once.
    pub const PERIODS: usize = 2;

    /// The positions in `period`'s logs (the start if the cursor has none yet).
    pub fn period(&self, period: u64) -> PeriodCursor {
        self.periods
            .iter()
            .find(|p| p.period == period)
            .copied()
            .unwrap_or(PeriodCursor::start(period))
    }

    /// Follows exactly `periods` (the player's latest placements, any order): the
    /// positions of periods still followed are kept, new ones start at the start.
    pub fn follow(&mut self, periods: &[u64]) {
        let mut next: Vec<PeriodCursor> = periods.iter().map(|&p| self.period(p)).collect();
        next.sort_by_key(|p| p.period);
        next.dedup_by_key(|p| p.period);
        let skip = next.len().saturating_sub(Self::PERIODS);
        self.periods = next.split_off(skip);
    }

    /// Sets the positions of `period` (followed or not).
    pub fn set(&mut self, at: PeriodCursor) {
        match self.periods.iter_mut().find(|p| p.period == at.period) {
            Some(p) => *p = at,
            None => {
                let mut with: Vec<u64> = self.periods.iter().map(|p| p.period).collect();
                with.push(at.period);
                self.follow(&with);
                if let Some(p) = self.periods.iter_mut().find(|p| p.period == at.period) {
                    *p = at;
                }
            }
        }
    }
}

impl PlayerCursor {
    /// The text form bound to `player`, as their stream sends it: `v2.<tag>.` then the
    /// positions as in the v1 form.
    pub fn to_text_for(&self, player: &str) -> String {
        let v1 = self.to_string();
        format!("v2.{}.{}", player_tag(player), &v1[3..])
    }

    /// An id `player`'s stream sent: the v2 form with `player`'s tag, or the v1 form
    /// (untagged, from before 0.4). An id of another player's stream is refused.
    pub fn parse_for(text: &str, player: &str) -> Result<PlayerCursor, CursorError> {
        let (tag, cursor) = parse(text)?;
        match tag {
            Some(t) if t != player_tag(player) => Err(CursorError::OtherStream {
                id: shown(text),
                player: player.to_owned(),
            }),
            _ => Ok(cursor),
        }
    }
}

/// The head of a stream's event id (a player's or a bracket's): its tag (`v2.<tag>.`,
/// 8 hex digits) or none (`v1.`), and the dot-separated parts after it; or why it is
/// not one.
pub fn versioned(s: &str) -> Result<(Option<&str>, std::str::Split<'_, char>), &'static str> {
    let mut parts = s.split('.');
    let tag = match parts.next() {
        Some("v1") => None,
        Some("v2") => match parts.next() {
            Some(t) if t.len() == 8 && t.bytes().all(|b| b.is_ascii_hexdigit()) => Some(t),
            _ => return Err("its tag is not 8 hex digits"),
        },
        _ => return Err("it does not start with v1 or v2"),
    };
    Ok((tag, parts))
}

/// A cursor in either text form, with its tag (v2) or none (v1).
fn parse(s: &str) -> Result<(Option<&str>, PlayerCursor), CursorError> {
    let bad = |why: &str| CursorError::Malformed {
        id: shown(s),
        why: why.to_owned(),
    };
    let (tag, mut parts) = versioned(s).map_err(bad)?;
    let pos = |t: Option<&str>| -> Result<Pos, CursorError> {
        t.ok_or_else(|| bad("it is cut short"))?
            .parse()
            .map_err(|_| bad("a position is malformed"))
    };
    let bucket = pos(parts.next())?;
    let mut periods = Vec::new();
    while let Some(period) = parts.next() {
        if period.is_empty() || !period.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad("a period is not a number"));
        }
        let period = period.parse().map_err(|_| bad("a period is too large"))?;
        periods.push(PeriodCursor {
            period,
            bracket: pos(parts.next())?,
            period_log: pos(parts.next())?,
        });
        if periods.len() > PlayerCursor::PERIODS {
            return Err(bad("its periods are not two or fewer, in order"));
        }
    }
    if periods.windows(2).any(|w| w[0].period >= w[1].period) {
        return Err(bad("its periods are not two or fewer, in order"));
    }
    Ok((tag, PlayerCursor { bucket, periods }))
}

impl fmt::Display for PlayerCursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v1.{}", self.bucket)?;
        for p in &self.periods {
            write!(f, ".{}.{}.{}", p.period, p.bracket, p.period_log)?;
        }
        Ok(())
    }
}

impl FromStr for PlayerCursor {
    type Err = String;

    /// Either text form; the tag of a v2 id is not checked (see
    /// [`PlayerCursor::parse_for`]).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse(s).map(|(_, c)| c).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(ms: u64, seq: u64) -> Pos {
        Pos { ms, seq }
    }

    #[test]
    fn cursors_print_and_parse_back() {
        let mut c = PlayerCursor::default();
        assert_eq!(c.to_string(), "v1.0-0");
        c.follow(&[45]);
        c.set(PeriodCursor {
            period: 45,
            bracket: p(17, 2),
            period_log: p(0, 0),
        });
        c.bucket = p(9, 0);
        let text = c.to_string();
        assert_eq!(text, "v1.9-0.45.17-2.0-0");
        assert_eq!(text.parse::<PlayerCursor>().unwrap(), c);
        for bad in [
            "",
            "v2.0-0",
            "v1",
            "v1.0-0.45",
            "v1.0-0.x.0-0.0-0",
            "v1.0-0.2.0-0.0-0.1.0-0.0-0",
        ] {
            assert!(bad.parse::<PlayerCursor>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn tagged_ids_belong_to_their_player() {
        let mut c = PlayerCursor {
            bucket: p(9, 0),
            ..PlayerCursor::default()
        };
        c.set(PeriodCursor {
            period: 45,
            bracket: p(17, 2),
            period_log: p(0, 0),
        });
        let text = c.to_text_for("ana");
        assert_eq!(text, format!("v2.{}.9-0.45.17-2.0-0", player_tag("ana")));
        assert_eq!(PlayerCursor::parse_for(&text, "ana"), Ok(c.clone()));
        assert!(matches!(
            PlayerCursor::parse_for(&text, "bo"),
            Err(CursorError::OtherStream { .. })
        ));
        // The v1 form (before 0.4) is read on any player's stream.
        assert_eq!(
            PlayerCursor::parse_for("v1.9-0.45.17-2.0-0", "bo"),
            Ok(c.clone())
        );
        assert_eq!(text.parse::<PlayerCursor>(), Ok(c));
        for bad in [
            "v2.9-0",
            "v2.zzzzzzzz.9-0",
            "v2.0123456.9-0",
            "v3.01234567.9-0",
        ] {
            assert!(PlayerCursor::parse_for(bad, "ana").is_err(), "{bad:?}");
        }
        assert_ne!(player_tag("ana"), player_tag("bo"));
        // Fixed forever: ids sent by one version resume on the next.
        assert_eq!(player_tag("ana"), "af1594d0");
        assert_eq!(player_tag("ana").len(), 8);
        // A long id is not repeated whole.
        let long = format!("v1.{}", "9".repeat(10_000));
        let e = PlayerCursor::parse_for(&long, "ana").expect_err("long");
        assert!(e.to_string().len() < 400, "{e}");
    }

    #[test]
    fn following_keeps_known_positions_and_the_latest_two_periods() {
        let mut c = PlayerCursor::default();
        c.set(PeriodCursor {
            period: 44,
            bracket: p(3, 0),
            period_log: p(4, 0),
        });
        c.follow(&[45, 44]);
        assert_eq!(c.period(44).bracket, p(3, 0));
        assert_eq!(c.period(45), PeriodCursor::start(45));
        c.follow(&[46, 45, 44]);
        assert_eq!(
            c.periods.iter().map(|p| p.period).collect::<Vec<_>>(),
            [45, 46]
        );
    }
}
