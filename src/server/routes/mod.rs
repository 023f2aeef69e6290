//! The routes, by area.
//!
//! Owns: the table of routes.
//! Must not: hold handler logic.

pub(super) mod adjust;
pub(super) mod audit;
pub(super) mod bans;
pub(super) mod boards;
pub(super) mod clock;
pub(super) mod events;
pub(super) mod own;
pub(super) mod periods;
pub(super) mod players;
pub(super) mod resettle;
pub(super) mod scores;
pub(super) mod system;
pub(super) mod tokens;
pub(super) mod webhooks;

use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post};

use crate::store::Store;

use super::App;

/// Every route of the service (authentication and limits are layered on by the caller).
pub(super) fn routes<S: Store>() -> Router<Arc<App<S>>> {
    Router::new()
        .route("/v1/players/{player}/join", post(players::join::<S>))
        .route("/v1/players/{player}/scores", post(scores::submit::<S>))
        .route("/v1/scores:batch", post(scores::batch::<S>))
        .route("/v1/players/{player}", get(players::player::<S>))
        .route("/v1/players/{player}/around", get(players::around::<S>))
        .route(
            "/v1/players/{player}/profile",
            get(players::profile::<S>)
                .put(players::set_profile::<S>)
                .patch(players::patch_profile::<S>),
        )
        .route("/v1/players/{player}/rewards", get(players::rewards::<S>))
        .route(
            "/v1/players/{player}/events",
            get(events::player_events::<S>),
        )
        .route("/v1/players/{player}/token", post(tokens::mint::<S>))
        .route("/v1/players/{player}/adjust", post(adjust::adjust::<S>))
        .route(
            "/v1/players/{player}/rewards:claim",
            post(players::claim::<S>),
        )
        .route(
            "/v1/tiers/{tier}/brackets/{bracket}",
            get(boards::standings::<S>),
        )
        .route(
            "/v1/tiers/{tier}/brackets/{bracket}/events",
            get(boards::events::<S>),
        )
        .route("/v1/players/{player}/ban", post(bans::ban::<S>))
        .route("/v1/players/{player}/unban", post(bans::unban::<S>))
        .route("/v1/bans", get(bans::bans::<S>))
        .route("/v1/tiers/{tier}/top", get(boards::top::<S>))
        .route("/v1/counts", get(boards::counts::<S>))
        .route("/v1/season", get(boards::season::<S>))
        .route(
            "/v1/clock",
            get(clock::clock::<S>).post(clock::move_clock::<S>),
        )
        .route("/v1/periods", get(periods::periods::<S>))
        .route("/v1/periods/{period}/export", get(periods::export::<S>))
        .route("/v1/audit", get(audit::audit::<S>))
        .route(
            "/v1/periods/{period}/tiers/{tier}/brackets/{bracket}/resettle",
            post(resettle::resettle::<S>),
        )
        .route("/v1/webhooks/dead", get(webhooks::dead::<S>))
        .route("/v1/webhooks/dead:replay", post(webhooks::replay::<S>))
        .route("/openapi.json", get(super::openapi::json::<S>))
        .route("/metrics", get(super::prometheus::render::<S>))
        .route("/healthz", get(system::healthz::<S>))
        .route("/", get(super::dashboard::index))
        .route("/index.html", get(super::dashboard::index))
        .route("/assets/{file}", get(super::dashboard::asset))
}
