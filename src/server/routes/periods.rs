//! Periods: the league's time, the rollover's progress and reports, and exports.
//!
//! Owns: the periods and export handlers.
//! Must not: close periods (the scheduler and `rollover` do).

use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

use crate::rollover::PeriodRecord;
use crate::server::App;
use crate::server::error::{ApiError, ErrorBody};
use crate::server::model::{
    BlockedBracketOut, ExportLine, P, PeriodOut, PeriodReportOut, PeriodsOut, PeriodsQuery, Q,
    rfc3339,
};
use crate::store::Store;

/// Records read from the store per round trip of an export.
const EXPORT_PAGE: usize = 1000;

/// The current period (by the league clock) and its boundary, the rollover's backlog
/// and the latest closed periods with their reports.
#[utoipa::path(
    get,
    path = "/v1/periods",
    tag = "periods",
    params(PeriodsQuery),
    responses(
        (status = 200, body = PeriodsOut),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 503, body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn periods<S: Store>(
    State(app): State<Arc<App<S>>>,
    Q(q): Q<PeriodsQuery>,
) -> Result<Json<PeriodsOut>, ApiError> {
    if let Some(limit) = q.limit.filter(|&l| l > 100) {
        return Err(ApiError::bad_request(
            "bad_limit",
            format!("limit {limit} is out of range; use 0..=100"),
        ));
    }
    let league = &app.league;
    let season = league.season();
    let limit = q
        .limit
        .unwrap_or(u64::from(season.retention.periods))
        .min(100);
    let now = league.now().await?;
    let current = season.calendar.period_at(now);
    let closed_through = league.closed_through().await?;
    // Ended periods (by the league clock, with the skew) that are not closed yet.
    let mut pending = Vec::new();
    let mut id = closed_through + 1;
    while let Some(p) = season.calendar.period(id) {
        if league.closes_at(&p) > now || pending.len() >= 100 {
            break;
        }
        pending.push(id);
        id += 1;
    }
    let mut closed = Vec::new();
    let mut id = closed_through;
    while id > 0 && (closed.len() as u64) < limit {
        match league.period_record(id).await? {
            PeriodRecord::Closed(r) => closed.push(PeriodReportOut::from(r)),
            // Expired (retention): older ones have too.
            _ => break,
        }
        id -= 1;
    }
    let blocked = league
        .store()
        .blocked_grants(&league.keys().season())
        .await
        .map_err(crate::Error::from)?;
    let blocked_brackets = league
        .store()
        .blocked_brackets(&league.keys().season())
        .await
        .map_err(crate::Error::from)?
        .into_iter()
        .map(|b| BlockedBracketOut {
            bracket: b.source,
            key: b.key,
            error: b.error,
        })
        .collect();
    let next_boundary = match &current {
        Some(p) => Some(rfc3339(p.end)),
        None if now < season.schedule.start => Some(rfc3339(season.schedule.start)),
        None => None,
    };
    Ok(Json(PeriodsOut {
        season: season.name.clone(),
        now: rfc3339(now),
        current: current.map(|p| PeriodOut::new(&p, league.closes_at(&p))),
        next_boundary,
        closed_through,
        pending,
        closed,
        blocked_rewards: blocked.len() as u64,
        blocked_brackets,
    }))
}

/// Every player's final standing and outcome in a closed period, as JSON lines
/// (`application/x-ndjson`), streamed in a fixed order (tier from lowest, bracket,
/// rank): the same lines as `leaguekit export`. If the store fails midway the body
/// ends early without its last newline; fetch it again.
#[utoipa::path(
    get,
    path = "/v1/periods/{period}/export",
    tag = "periods",
    params(("period" = u64, Path, minimum = 0, description = "A closed period's id")),
    responses(
        (status = 200, description = "JSON lines: one ExportLine per line, each ending with a newline", content_type = "application/x-ndjson", body = ExportLine),
        (status = 400, description = "The period is not a number", body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 404, description = "unknown_period, or expired (older than the retention)", body = ErrorBody),
        (status = 409, description = "period_open: not closed yet", body = ErrorBody),
        (status = 503, body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn export<S: Store>(
    State(app): State<Arc<App<S>>>,
    P(period): P<u64>,
) -> Result<Response, ApiError> {
    match app.league.period_record(period).await? {
        PeriodRecord::Closed(_) => {}
        PeriodRecord::Expired => {
            return Err(ApiError::not_found(
                "expired",
                format!(
                    "period {period}'s records have expired (retention.periods); export \
                     periods while they are kept"
                ),
            ));
        }
        _ => {
            return Err(ApiError::conflict(
                "period_open",
                format!(
                    "period {period} is not closed yet; export it after its rollover (see GET \
                     /v1/periods)"
                ),
            ));
        }
    }
    let league = app.league.clone();
    let lines = futures::stream::try_unfold(
        (league, Some(None::<String>)),
        move |(league, cursor)| async move {
            let Some(cursor) = cursor else {
                return Ok(None);
            };
            let page = league
                .outcomes(period, cursor.as_deref(), EXPORT_PAGE)
                .await
                .map_err(|e| std::io::Error::other(e.to_string()))?;
            let Some(last) = page.last() else {
                return Ok(None);
            };
            let next = (page.len() == EXPORT_PAGE).then(|| Some(last.cursor.clone()));
            let mut chunk = String::new();
            for r in page {
                let line = serde_json::to_string(&ExportLine::from(r))
                    .map_err(|e| std::io::Error::other(e.to_string()))?;
                chunk.push_str(&line);
                chunk.push('\n');
            }
            Ok::<_, std::io::Error>(Some((chunk, (league, next))))
        },
    );
    let mut r = Body::from_stream(lines).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/x-ndjson"),
    );
    Ok(r)
}
