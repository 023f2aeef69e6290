//! The guard of player tokens: a player token reads only its own player, and only
//! its own bracket in the running period.
//!
//! `auth.rs` has already let a player token through to one of its routes only
//! (`auth::PLAYER_ROUTES`); here the path's `{player}` must be the token's `sub`, and a
//! bracket's `{tier}` (with its cohort) and `{bracket}` must be the player's placement
//! in the running period (read from the league), with no other `period`. A live
//! stream opened with a player token follows that period only (not the next one: a
//! client reconnects after a rollover, and is checked again).
//!
//! Owns: what "own" means for a player token.
//! Must not: check tokens (auth.rs does), or answer anything but 403 or the error of
//! the read it needs.

use std::sync::Arc;

use axum::extract::{FromRequestParts, Query, RawPathParams, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use crate::season::split_group;
use crate::server::App;
use crate::server::auth::AsPlayer;
use crate::server::error::ApiError;
use crate::store::Store;

/// The running period of the bracket a player token reads (in the request's
/// extensions, for the live stream to follow that period only).
#[derive(Debug, Clone, Copy)]
pub(in crate::server) struct OwnPeriod(pub(in crate::server) u64);

/// The query fields that choose a bracket (the handler reads and checks the rest).
#[derive(Debug, Deserialize)]
struct Choice {
    period: Option<u64>,
    cohort: Option<String>,
}

/// The middleware: requests without a player token pass untouched.
pub(in crate::server) async fn guard<S: Store>(
    State(app): State<Arc<App<S>>>,
    request: Request,
    next: Next,
) -> Response {
    let Some(AsPlayer(me)) = request.extensions().get::<AsPlayer>().cloned() else {
        return next.run(request).await;
    };
    match own(&app, &me, request).await {
        Ok(request) => next.run(request).await,
        Err(e) => e.into_response(),
    }
}

/// The request, if everything it names is the player's own.
async fn own<S: Store>(app: &App<S>, me: &str, request: Request) -> Result<Request, ApiError> {
    let (mut parts, body) = request.into_parts();
    let params = RawPathParams::from_request_parts(&mut parts, &())
        .await
        .map_err(|_| ApiError::player_forbidden())?;
    let param = |name: &str| {
        params
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.to_owned())
    };
    if param("player").is_some_and(|p| p != me) {
        return Err(ApiError::player_forbidden());
    }
    if let (Some(tier), Some(bracket)) = (param("tier"), param("bracket")) {
        let Query(choice) = Query::<Choice>::try_from_uri(&parts.uri).map_err(|r| {
            ApiError::bad_request(
                "bad_request",
                format!("invalid query string: {}", r.body_text()),
            )
        })?;
        let view = app.league.player(me, None).await?;
        let season = app.league.season();
        let (name, in_path) = split_group(&tier);
        let cohort = in_path.or(choice.cohort.as_deref());
        let mine = choice.period.is_none_or(|p| p == view.period)
            && view.bracket.is_some()
            && view.bracket == bracket.parse::<u32>().ok()
            && season
                .tier_by_any_name(name)
                .is_some_and(|(_, t)| t.name == view.tier)
            && cohort == view.cohort.as_deref()
            && !(in_path.is_some() && choice.cohort.is_some());
        if !mine {
            return Err(ApiError::player_forbidden());
        }
        parts.extensions.insert(OwnPeriod(view.period));
    }
    Ok(Request::from_parts(parts, body))
}
