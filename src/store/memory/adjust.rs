//! The embedded store's adjustments: [`AdjustStore`] in one critical section.

use super::MemoryStore;
use crate::error::StoreError;
use crate::season::packing::Packing;
use crate::store::keys::BracketKeys;
use crate::store::{Adjust, AdjustStore, Adjusted, Appends, Judgement, adjusted_body};

impl AdjustStore for MemoryStore {
    async fn adjust(&self, bracket: &BracketKeys, a: &Adjust<'_>) -> Result<Adjusted, StoreError> {
        let now_ms = self.now_ms(a.time.now);
        match a.time.judge(now_ms) {
            Ok(()) => {}
            Err(Judgement::Refused(why)) => return Ok(Adjusted::Refused(why)),
            Err(Judgement::Closed) => return Ok(Adjusted::Closed),
        }
        let mut data = self.data();
        let b = Self::bracket(&mut data, bracket);
        if b.meta.contains_key("closed") {
            return Ok(Adjusted::Closed);
        }
        let Some(current) = b.scores.get(a.player).copied() else {
            return Ok(Adjusted::NotPlaced);
        };
        let packing = Packing::new(a.max_score, a.span.saturating_sub(1))
            .map_err(|e| StoreError::Protocol(format!("adjust: {e}")))?;
        match packing.adjust(current, a.change, a.tick) {
            Ok(after) => {
                b.put(a.player, after);
                if let Some((spec, head)) = &a.logged {
                    let body =
                        adjusted_body(head, packing.unpack(current).0, packing.unpack(after).0);
                    let appends = Appends {
                        spec: *spec,
                        bodies: &[body],
                    };
                    self.append_events(&mut data, &bracket.events(), &appends);
                }
                Ok(Adjusted::Done {
                    before: current,
                    after,
                })
            }
            Err(_) => Ok(Adjusted::OutOfRange { current }),
        }
    }
}
