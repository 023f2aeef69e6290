//! Operators' adjustments on Redis: `adjust.lua` on the bracket's slot.

use super::reply::{array, protocol, text, uint};
use super::scripts::SCRIPTS;
use super::{RedisStore, Retry, attempt_token, time_refusal};
use crate::error::StoreError;
use crate::season::packing::{Adjustment, EXACT_LIMIT};
use crate::store::keys::BracketKeys;
use crate::store::{Adjust, AdjustStore, Adjusted};

impl AdjustStore for RedisStore {
    async fn adjust(&self, bracket: &BracketKeys, a: &Adjust<'_>) -> Result<Adjusted, StoreError> {
        // A number beyond ±2^53 takes the score out of range either way.
        let limit = EXACT_LIMIT as i64;
        let (how, n) = match a.change {
            Adjustment::By(n) => ("by", n),
            Adjustment::Set(n) => ("set", n),
        };
        let mut inv = SCRIPTS.adjust.prepare_invoke();
        inv.key(&bracket.board)
            .key(&bracket.meta)
            .key(&bracket.pages)
            .arg(a.player)
            .arg(how)
            .arg(n.clamp(-limit, limit))
            .arg(a.max_score)
            .arg(a.span)
            .arg(a.tick.min(a.span.saturating_sub(2)))
            .arg(super::now_arg(a.time.now))
            .arg(a.time.start_ms)
            .arg(a.time.closes_ms)
            .arg(attempt_token());
        if let Some((spec, head)) = &a.logged {
            inv.key(bracket.events()).arg(spec.arg()).arg(head);
        }
        // Idempotent: a resend finds the first run's answer by its attempt token.
        let reply = self.invoke_write("adjust", Retry::Idempotent, &inv).await?;
        let items = array(reply, "adjust reply")?;
        let number = |i: usize, what: &str| {
            items
                .get(i)
                .ok_or_else(|| protocol(format!("adjust reply without {what}")))
                .and_then(|v| uint(v, what))
        };
        let status = items
            .first()
            .ok_or_else(|| protocol("empty adjust reply"))
            .and_then(|s| text(s, "adjust status"))?;
        Ok(match status {
            "adjusted" => Adjusted::Done {
                before: number(1, "before")?,
                after: number(2, "after")?,
            },
            "out_of_range" => Adjusted::OutOfRange {
                current: number(1, "current")?,
            },
            "not_placed" => Adjusted::NotPlaced,
            "closed" => Adjusted::Closed,
            "not_yet" => match time_refusal(&items)? {
                Some(why) => Adjusted::Refused(why),
                None => return Err(protocol("bad time refusal")),
            },
            "malformed" => {
                let what = items.get(1).map(|v| text(v, "detail")).transpose()?;
                return Err(protocol(format!(
                    "adjust found data it did not write: {}",
                    what.unwrap_or("?")
                )));
            }
            other => return Err(protocol(format!("unknown adjust status {other:?}"))),
        })
    }
}
