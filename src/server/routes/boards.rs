//! Tiers and brackets: standings (a page, or live), counts, and the season's rules.
//!
//! Owns: the standings, counts and season handlers.
//! Must not: validate ids or pages itself beyond refusing a stream early (the library
//! decides).

use std::sync::Arc;

use axum::Json;
use axum::extract::{Extension, State};
use axum::http::HeaderMap;
use axum::response::IntoResponse;
use futures::future::Either;

use crate::error::InputError;
use crate::ranking::MAX_PAGE;
use crate::season::{board_group, split_group};
use crate::server::App;
use crate::server::auth::Caller;
use crate::server::error::{ApiError, ErrorBody};
use crate::server::live;
use crate::server::model::{
    CountsOut, CountsQuery, LiveQuery, P, PageQuery, Q, RewardRuleOut, SeasonOut, StandingsOut,
    TierOut, TopOut, TopQuery,
};
use crate::server::routes::own::OwnPeriod;
use crate::server::sse::{self, Watch};
use crate::store::Store;

/// The boards a read of `tier` names: the tier's own, or with `cohort` the cohort's
/// (the bracket numbers count within it). The path may still name a cohort's boards
/// as `tier@cohort` (the form before the `cohort` query). An unknown tier is a 404
/// `unknown_tier` (in a season without cohorts, a name with `@` is one); an unknown
/// cohort a 400 `unknown_cohort`.
fn boards_of<S: Store>(app: &App<S>, tier: &str, cohort: Option<&str>) -> Result<String, ApiError> {
    let season = app.league.season();
    let (name, in_path) = split_group(tier);
    let unknown = || {
        ApiError::from(crate::Error::from(InputError::UnknownTier {
            known: season
                .tiers
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            tier: tier.chars().take(80).collect(),
        }))
    };
    if season.tier_by_any_name(name).is_none() || (in_path.is_some() && season.cohorts.is_none()) {
        return Err(unknown());
    }
    let cohort = match (in_path, cohort) {
        (Some(_), Some(_)) => {
            return Err(ApiError::bad_request(
                "bad_request",
                "the cohort is named twice (tier@cohort and ?cohort=); use ?cohort= only",
            ));
        }
        (a, b) => a.or(b),
    };
    if let Some(c) = cohort {
        check_cohort(app, c)?;
    }
    Ok(board_group(name, cohort))
}

/// A cohort label the season declares, or the 400 `unknown_cohort`.
fn check_cohort<S: Store>(app: &App<S>, cohort: &str) -> Result<(), ApiError> {
    app.league
        .context()
        .validate_cohort(Some(cohort))
        .map_err(|e| ApiError::from(crate::Error::from(e)))
}

/// A page of a bracket's standings, best first, with cached profiles. With `cohort`,
/// the cohort's brackets of the tier.
#[utoipa::path(
    get,
    path = "/v1/tiers/{tier}/brackets/{bracket}",
    tag = "standings",
    params(
        ("tier" = String, Path, description = "Tier name"),
        ("bracket" = u32, Path, minimum = 1, description = "Bracket number, from 1"),
        PageQuery,
    ),
    responses(
        (status = 200, body = StandingsOut),
        (status = 400, description = "bad_bracket, bad_limit, unknown_cohort", body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 404, description = "unknown_tier, unknown_period", body = ErrorBody),
        (status = 503, body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn standings<S: Store>(
    State(app): State<Arc<App<S>>>,
    P((tier, bracket)): P<(String, u32)>,
    Q(q): Q<PageQuery>,
) -> Result<Json<StandingsOut>, ApiError> {
    let group = boards_of(&app, &tier, q.cohort.as_deref())?;
    let s = app
        .league
        .standings(
            &group,
            bracket,
            q.period,
            q.offset.unwrap_or(0),
            q.limit.unwrap_or(100),
        )
        .await?;
    Ok(Json(s.into()))
}

/// The bracket's standings as server-sent events: a `standings` event (the JSON of
/// `GET /v1/tiers/{tier}/brackets/{bracket}`) at once and after every change, within
/// about half a second of a write by any process (at once for writes through this
/// server); an `error` event (`{"error"}`) while the store fails. Without `period` the
/// stream follows the current period across boundaries. It ends when the server
/// shuts down; reconnect then.
///
/// With `[events]` in the season, the stream also carries the bracket's log events
/// (`event: <type>`, `id: <cursor>`, `data: <Event>`): from the oldest kept, or after
/// the id sent back as `Last-Event-ID` (or `?last_event_id=`); without `period`, those
/// of the running period and the one before (whose close comes after the boundary).
/// `standings` and `error` events have no id. A browser's `EventSource` may send its
/// token as `?access_token=`.
///
/// A stream opened with a player token ends when that token expires or its player is
/// banned: an `event: end` (no id, `data`: a `StreamEnd`, `{"reason": "token_expired" |
/// "banned", "message"}`), then the body ends. Each client holds a bounded number of
/// streams (429 `too_many_streams` over it), and so does the server (503
/// `too_many_streams`).
#[utoipa::path(
    get,
    path = "/v1/tiers/{tier}/brackets/{bracket}/events",
    tag = "standings",
    params(
        ("tier" = String, Path, description = "Tier name"),
        ("bracket" = u32, Path, minimum = 1, description = "Bracket number, from 1"),
        ("Last-Event-ID" = Option<String>, Header, description = "Resume the log events after this id (one this stream sent)"),
        LiveQuery,
    ),
    responses(
        (status = 200, description = "Server-sent events: `event: standings` whose `data` is a StandingsOut, `event: error` whose `data` is an ErrorBody, with `[events]` the bracket's log events (`event: <type>`, `id`, `data`: an Event), and on a stream opened with a player token a last `event: end` (no id, `data`: a StreamEnd, reason `token_expired` or `banned`) before the body ends", content_type = "text/event-stream", body = crate::server::model::BracketStreamEvent),
        (status = 400, description = "bad_bracket, bad_limit, unknown_cohort, invalid_event_id (send back an id this stream sent)", body = ErrorBody),
        (status = 401, description = "unauthorized: no token, or one the server does not know; token_expired: a player token past its exp", body = ErrorBody),
        (status = 403, description = "forbidden: a player token for another bracket or period than its own; banned: a player token of a banned player (while the ban holds)", body = ErrorBody),
        (status = 404, description = "unknown_tier, unknown_period", body = ErrorBody),
        (status = 429, description = "too_many_streams: this client (a player, whatever their tokens; or this token) already holds as many live streams as it may (LEAGUEKIT_STREAMS_PER_TOKEN): close one, or wait Retry-After", body = ErrorBody),
        (status = 503, description = "too_many_streams: the server holds as many live streams as it may (LEAGUEKIT_STREAMS_MAX): try again after Retry-After, or another server; store_unavailable, timeout: the store failed or was too slow", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn events<S: Store>(
    State(app): State<Arc<App<S>>>,
    P((tier, bracket)): P<(String, u32)>,
    Q(q): Q<LiveQuery>,
    headers: HeaderMap,
    own: Option<Extension<OwnPeriod>>,
    caller: Option<Extension<Caller>>,
) -> Result<impl IntoResponse, ApiError> {
    // A player token's stream follows the running period only (see routes/own.rs).
    let period = q.period.or(own.map(|Extension(OwnPeriod(p))| p));
    let limit = q.limit.unwrap_or(100);
    // Refuse what would only ever produce errors before opening a stream.
    let tier = boards_of(&app, &tier, q.cohort.as_deref())?;
    if bracket == 0 {
        return Err(ApiError::from(crate::Error::from(InputError::BadBracket {
            bracket,
        })));
    }
    if limit == 0 || limit > MAX_PAGE {
        return Err(ApiError::from(crate::Error::from(InputError::BadLimit {
            limit,
            max: MAX_PAGE,
        })));
    }
    if let Some(p) = period {
        app.league.period(p).map_err(crate::Error::from)?;
    }
    let last = live::resume_from(&headers, q.last_event_id.as_deref())?;
    let follower =
        live::Follower::bracket(&app.league, tier.clone(), bracket, period, last.as_deref())
            .await?;
    let caller = caller.map(|Extension(c)| c);
    let grant = sse::admit(&app, caller.as_ref(), &headers, q.access_token.as_deref()).await?;
    let standings = app.hub.standings(Watch {
        tier,
        bracket,
        period,
        limit,
    });
    let stream = if app.hub.logs.enabled() {
        let logs = app.hub.logs.follow(follower);
        Either::Left(futures::stream::select(standings, logs))
    } else {
        Either::Right(standings)
    };
    Ok(sse::answer(stream, grant))
}

/// Players and brackets per tier in a period (every tier listed), with a breakdown per
/// cohort (`cohorts`) in a season with cohorts. With `cohort`, each tier's numbers are
/// that cohort's.
#[utoipa::path(
    get,
    path = "/v1/counts",
    tag = "standings",
    params(CountsQuery),
    responses(
        (status = 200, body = CountsOut),
        (status = 400, description = "The query string cannot be read (a period that is not a number), or unknown_cohort", body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 404, description = "unknown_period", body = ErrorBody),
        (status = 503, body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn counts<S: Store>(
    State(app): State<Arc<App<S>>>,
    Q(q): Q<CountsQuery>,
) -> Result<Json<CountsOut>, ApiError> {
    if let Some(c) = q.cohort.as_deref() {
        check_cohort(&app, c)?;
    }
    let period = match q.period {
        Some(p) => app.league.period(p).map_err(crate::Error::from)?.id,
        None => {
            let now = app.league.now().await?;
            app.league
                .period_at(Some(now))
                .map_err(crate::Error::from)?
                .id
        }
    };
    let mut tiers = app.league.counts(Some(period)).await?;
    if let Some(want) = q.cohort.as_deref() {
        // One cohort: each tier's numbers are that cohort's (as `leaguekit counts
        // --cohort`).
        for t in &mut tiers {
            let mine = t.cohorts.iter().find(|x| x.cohort.as_deref() == Some(want));
            (t.players, t.brackets) = mine.map_or((0, 0), |x| (x.players, x.brackets));
            t.cohorts.retain(|x| x.cohort.as_deref() == Some(want));
        }
    }
    Ok(Json(CountsOut {
        period,
        tiers: tiers.into_iter().map(Into::into).collect(),
    }))
}

/// The best players of a whole tier in a period, across its brackets (or one
/// cohort's with `cohort`), each with their bracket and cached profile. Ties order as
/// inside a bracket. A closed period's list is the one frozen at its rollover
/// (`frozen: true`); the running period's is at most a few seconds old.
#[utoipa::path(
    get,
    path = "/v1/tiers/{tier}/top",
    tag = "standings",
    params(("tier" = String, Path, description = "Tier name"), TopQuery),
    responses(
        (status = 200, body = TopOut),
        (status = 400, description = "bad_limit, unknown_cohort", body = ErrorBody),
        (status = 401, body = ErrorBody),
        (status = 404, description = "unknown_tier, unknown_period", body = ErrorBody),
        (status = 503, body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn top<S: Store>(
    State(app): State<Arc<App<S>>>,
    P(tier): P<String>,
    Q(q): Q<TopQuery>,
) -> Result<Json<TopOut>, ApiError> {
    let group = boards_of(&app, &tier, q.cohort.as_deref())?;
    let top = app
        .league
        .top(&group, q.period, q.limit.unwrap_or(100))
        .await?;
    Ok(Json(top.into()))
}

/// The season's rules: tiers (lowest first) with their quotas and rewards, bracket
/// size, scoring, profile fields and schedule.
#[utoipa::path(
    get,
    path = "/v1/season",
    tag = "standings",
    responses((status = 200, body = SeasonOut), (status = 401, body = ErrorBody)),
    security(("bearer" = []))
)]
pub(crate) async fn season<S: Store>(State(app): State<Arc<App<S>>>) -> Json<SeasonOut> {
    let s = app.league.season();
    let clock_offset_ms = if s.clock.travel {
        let view = app.league.operator().clock().await;
        view.ok().map(|v| v.offset_ms)
    } else {
        None
    };
    Json(SeasonOut {
        name: s.name.clone(),
        tiers: s
            .tiers
            .iter()
            .map(|t| TierOut {
                name: t.name.clone(),
                promote: quota(t.promote),
                demote: quota(t.demote),
                zones: t.zones.as_str(),
                min_players: t.min_players,
                rewards: t
                    .rewards
                    .iter()
                    .map(|r| RewardRuleOut {
                        first: r.first,
                        last: r.last,
                        grant: r.grant.clone(),
                    })
                    .collect(),
            })
            .collect(),
        bracket_size: s.brackets.size,
        early_cap: s.brackets.late.map(|l| l.early_cap),
        late_after: s.brackets.late.map(|l| l.after.to_string()),
        join: s.brackets.join.as_str(),
        mode: s.scoring.mode.as_str(),
        max_score: s.packing.max_score(),
        profile_fields: s.profiles.fields.clone(),
        max_skew_ms: u64::try_from(s.clock.max_skew.as_millis()).unwrap_or(u64::MAX),
        travel: s.clock.travel,
        clock_offset_ms,
        period: s.schedule.period.as_str().to_owned(),
        timezone: s.schedule.timezone.name().to_owned(),
    })
}

/// A quota as the dashboard shows it: `20` or `10%` (without the TOML quotes).
fn quota(q: crate::season::Quota) -> String {
    q.to_string().trim_matches('"').to_owned()
}
