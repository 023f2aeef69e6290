//! Adjusting a score: an operator's exact, audited change of a player's score in the
//! running period, on the board of their bracket.
//!
//! The tie rule: an adjusted score keeps the time the player's current score was
//! reached (an adjustment is not a play), except a never-scored entry, which takes the
//! adjustment's time. The season's `[limits]` do not apply to adjustments.

use serde::Serialize;

use super::{Actor, Operator, audit::check_text};
use crate::context::{millis, validate_player};
use crate::error::{Error, InputError, ScoreRangeError};
use crate::events::{Event, Kind};
pub use crate::season::packing::Adjustment;
use crate::store::{Adjust, Adjusted, Store};

/// An adjustment made: where, and the score before and after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct AdjustOutcome {
    /// The player.
    pub player: String,
    /// The running period.
    pub period: u64,
    /// The player's tier.
    pub tier: String,
    /// The player's cohort, in a season with cohorts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cohort: Option<String>,
    /// The player's bracket.
    pub bracket: u32,
    /// The score before.
    pub before: u64,
    /// The score after.
    pub after: u64,
}

impl<S: Store> Operator<S> {
    /// Changes `player`'s score in the running period by or to a number, exactly, and
    /// appends it to the audit log with the score before and after. Refused, with
    /// nothing written, when the player is not placed in the running period
    /// ([`InputError::NotPlaced`]), the result leaves `0..=max_score`
    /// ([`InputError::Score`]) or the bracket is closed ([`InputError::PeriodClosed`]).
    pub async fn adjust(
        &self,
        actor: &Actor,
        player: &str,
        change: Adjustment,
        reason: &str,
    ) -> Result<AdjustOutcome, Error> {
        validate_player(player)?;
        check_text("reason", reason)?;
        let ctx = &self.ctx;
        let now = ctx.now().await?;
        let period = ctx.period_at(Some(now))?;
        let placed = ctx
            .store()
            .placement(&ctx.keys().period(period.id), player)
            .await?;
        let not_placed = || InputError::NotPlaced {
            player: player.to_owned(),
            period: period.id,
        };
        let Some((group, bracket)) = placed else {
            return Err(not_placed().into());
        };
        let keys = ctx.keys().bracket(period.id, &group, bracket);
        let (tier, cohort) = crate::season::split_group(&group);
        let packing = ctx.season().packing;
        let mut adjust = Adjust::new(
            player,
            change,
            (packing.max_score(), packing.span()),
            ctx.tick(&period, now)?,
            ctx.time_check(&period, now),
        );
        if let Some(spec) = ctx.log_spec() {
            let head = Event::new(
                Kind::ScoreAdjusted,
                &ctx.season().name,
                period.id,
                millis(now),
            )
            .player(player)
            .bracket(&group, bracket)
            .head();
            adjust = adjust.logged(spec, head);
        }
        let (before, after) = match ctx.store().adjust(&keys, &adjust).await? {
            Adjusted::Done { before, after } => (packing.unpack(before).0, packing.unpack(after).0),
            Adjusted::OutOfRange { current } => {
                let current = packing.unpack(current).0;
                let (value, result) = match change {
                    Adjustment::By(n) => (n, current as i128 + n as i128),
                    Adjustment::Set(n) => (n, n as i128),
                };
                return Err(InputError::Score(ScoreRangeError::OutOfRange {
                    current,
                    value,
                    result,
                    max: packing.max_score(),
                })
                .into());
            }
            Adjusted::NotPlaced => return Err(not_placed().into()),
            Adjusted::Closed => return Err(InputError::PeriodClosed { period: period.id }.into()),
            Adjusted::Refused(why) => return Err(ctx.time_error(why, &period, now)),
        };
        let (by, set) = match change {
            Adjustment::By(n) => (Some(n), None),
            Adjustment::Set(n) => (None, Some(n)),
        };
        self.record(
            actor,
            "adjust",
            Some(player),
            Some(reason),
            serde_json::json!({
                "period": period.id,
                "tier": tier,
                "cohort": cohort,
                "bracket": bracket,
                "by": by,
                "set": set,
                "before": before,
                "after": after,
                "at_ms": millis(now),
            }),
        )
        .await?;
        Ok(AdjustOutcome {
            player: player.to_owned(),
            period: period.id,
            tier: tier.to_owned(),
            cohort: cohort.map(str::to_owned),
            bracket,
            before,
            after,
        })
    }
}
