//! Reading what the rollover did: a closed period's report and how far the season is
//! closed, for `leaguekit serve`'s `GET /v1/periods` and anyone else who watches the
//! rollover.
//!
//! Owns: telling a period that is not closed from one that closed empty and from one
//! whose records have expired. Must not: write anything, or close anything.

use super::Rollover;
use crate::error::Error;
use crate::season::calendar::PeriodId;
use crate::store::Store;

use super::PeriodReport;

/// What the store knows of a period's close ([`crate::League::period_record`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PeriodRecord {
    /// Not closed yet (its rollover has not run, or has not finished).
    Open,
    /// Closed: what its rollover did. A period nobody played in is closed with an
    /// empty report (no brackets).
    Closed(PeriodReport),
    /// Closed, but its records are gone: `retention.periods` have passed since it
    /// ended.
    Expired,
}

impl<S: Store> Rollover<S> {
    /// What the store knows of `period`'s close: [`PeriodRecord::Open`],
    /// [`PeriodRecord::Closed`] with its report, or [`PeriodRecord::Expired`]. Two
    /// store reads at most; nothing is written.
    pub async fn period_record(&self, period: PeriodId) -> Result<PeriodRecord, Error> {
        let p = self.ctx.period(period)?;
        // The summary is written when the last bracket closes, before the season's
        // mark moves past the period.
        if let Some(summary) = self
            .ctx
            .store()
            .period_summary(&self.ctx.keys().period(period))
            .await?
        {
            return Ok(PeriodRecord::Closed(
                self.report_from_summary(period, &summary)?,
            ));
        }
        if self.closed_through().await? < period {
            return Ok(PeriodRecord::Open);
        }
        // Closed without a summary: nobody played in it (closed by the mark alone), or
        // its keys expired. They live at least until `retention.periods` periods after
        // it end, so before that the period was empty.
        let keep = u64::from(self.ctx.season().retention.periods);
        let kept_until = self
            .ctx
            .season()
            .calendar
            .period(period + keep)
            .map_or(p.end, |later| later.end);
        if self.ctx.now().await? < kept_until {
            Ok(PeriodRecord::Closed(PeriodReport::empty(period)))
        } else {
            Ok(PeriodRecord::Expired)
        }
    }

    /// The last period the season has closed (0 if none): every period up to it is
    /// closed. One store read.
    pub async fn closed_through(&self) -> Result<PeriodId, Error> {
        Ok(self
            .ctx
            .store()
            .closed_through(&self.ctx.keys().season())
            .await?)
    }
}
