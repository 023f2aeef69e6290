//! Reading boards: a page of a bracket's standings and the window around a player,
//! each with the cached profiles, as one atomic snapshot of the board.

use tracing::instrument;

use crate::error::{Error, InputError};
use crate::season::calendar::PeriodId;
use crate::store::{RawEntry, Store};

use super::{Boards, MAX_PAGE, Profile, Standing, Standings};
use crate::context::validate_player;

impl<S: Store> Boards<S> {
    pub(crate) fn standing(&self, offset: u64, i: usize, e: RawEntry) -> Standing {
        let (score, _) = self.ctx.season().packing.unpack(e.packed);
        let profile = e.profile.map(Profile::from_store).unwrap_or_default();
        Standing {
            rank: offset + i as u64 + 1,
            player: e.player,
            score,
            profile,
        }
    }

    /// A page of a bracket's standings (best first) with cached profiles.
    /// `period` defaults to the current one.
    ///
    /// On Redis a page read recently and not changed since is one round trip (a
    /// kept page); another is built from one atomic read and then kept, two or
    /// three round trips (see `RedisOptions::page_cache`).
    #[instrument(skip(self), err(level = "debug"))]
    pub async fn standings(
        &self,
        tier: &str,
        bracket: u32,
        period: Option<PeriodId>,
        offset: u64,
        limit: u64,
    ) -> Result<Standings, Error> {
        self.ctx.check_tier(tier)?;
        if bracket == 0 {
            return Err(InputError::BadBracket { bracket }.into());
        }
        if limit == 0 || limit > MAX_PAGE {
            return Err(InputError::BadLimit {
                limit,
                max: MAX_PAGE,
            }
            .into());
        }
        let period = self.ctx.resolve_period(period).await?;
        let page = self
            .ctx
            .store()
            .standings(
                &self.ctx.keys().bracket(period.id, tier, bracket),
                offset,
                limit,
            )
            .await?;
        let offset = page.offset;
        let (tier, cohort) = crate::season::split_group(tier);
        Ok(Standings {
            period: period.id,
            tier: tier.to_owned(),
            cohort: cohort.map(str::to_owned),
            bracket,
            players: page.total,
            entries: page
                .entries
                .into_iter()
                .enumerate()
                .map(|(i, e)| self.standing(offset, i, e))
                .collect(),
        })
    }

    /// The entries around `player` in their bracket: up to `radius` above and below.
    /// `None` if the player is not placed in the period.
    #[instrument(skip(self), err(level = "debug"))]
    pub async fn around(
        &self,
        player: &str,
        radius: u64,
        period: Option<PeriodId>,
    ) -> Result<Option<Standings>, Error> {
        validate_player(player)?;
        if radius > MAX_PAGE / 2 {
            return Err(InputError::BadLimit {
                limit: radius,
                max: MAX_PAGE / 2,
            }
            .into());
        }
        let period = self.ctx.resolve_period(period).await?;
        let Some((tier, bracket)) = self
            .ctx
            .store()
            .placement(&self.ctx.keys().period(period.id), player)
            .await?
        else {
            return Ok(None);
        };
        let Some(page) = self
            .ctx
            .store()
            .around(
                &self.ctx.keys().bracket(period.id, &tier, bracket),
                player,
                radius,
                radius,
            )
            .await?
        else {
            return Ok(None);
        };
        let offset = page.offset;
        let (tier_name, cohort) = crate::season::split_group(&tier);
        Ok(Some(Standings {
            period: period.id,
            tier: tier_name.to_owned(),
            cohort: cohort.map(str::to_owned),
            bracket,
            players: page.total,
            entries: page
                .entries
                .into_iter()
                .enumerate()
                .map(|(i, e)| self.standing(offset, i, e))
                .collect(),
        }))
    }
}
