//! The OpenAPI document, generated from the handlers' annotations and the answer
//! types (utoipa), served at `GET /openapi.json`.
//!
//! Owns: the OpenAPI document's list of paths and schemas.
//! Must not: describe anything by hand that the handlers' annotations can say.

use axum::Json;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use super::error::{ErrorBody, ErrorDetail};
use super::model::{
    BatchItemIn, BatchItemOut, BlockedBracketOut, ClaimIn, ClaimOut, CohortCountOut, CountsOut,
    ExportLine, HealthOut, JoinIn, LastOut, PeriodOut, PeriodReportOut, PeriodsOut, PlacementOut,
    PlayerOut, ProfileOut, RewardOut, RewardRuleOut, RewardsOut, SeasonOut, StandingOut,
    StandingsOut, SubmissionOut, SubmitIn, TallyOut, TierCountOut, TierOut, TopOut,
};
use super::routes::{boards, periods, players, scores, system};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "leaguekit",
        description = "Tiered, bracketed leagues over HTTP/JSON. Every answer but /healthz \
                       needs `Authorization: Bearer TOKEN`: a server token reads and writes, a \
                       viewer token only reads. Errors are `{\"error\": {\"code\", \"message\"}}`."
    ),
    paths(
        players::join,
        scores::submit,
        scores::batch,
        players::player,
        players::around,
        players::set_profile,
        players::patch_profile,
        players::profile,
        players::rewards,
        players::claim,
        boards::standings,
        boards::events,
        boards::counts,
        boards::top,
        boards::season,
        periods::periods,
        periods::export,
        super::prometheus::render,
        system::healthz,
    ),
    components(schemas(
        ErrorBody, ErrorDetail, JoinIn, SubmitIn, BatchItemIn, ClaimIn, PlacementOut,
        SubmissionOut, BatchItemOut, StandingOut, StandingsOut, LastOut, PlayerOut, ProfileOut,
        RewardOut, RewardsOut, ClaimOut, TierCountOut, CountsOut, TallyOut, PeriodReportOut,
        PeriodOut, PeriodsOut, BlockedBracketOut, ExportLine, RewardRuleOut, TierOut, SeasonOut,
        HealthOut, CohortCountOut, TopOut
    )),
    modifiers(&Bearer),
    tags(
        (name = "players", description = "Joins, a player's view, profile and rewards"),
        (name = "scores", description = "Score updates"),
        (name = "standings", description = "Brackets, tiers and the season"),
        (name = "periods", description = "The league's time, rollover reports and exports"),
        (name = "system", description = "Health and metrics"),
    )
)]
struct ApiDoc;

/// Declares the bearer scheme the paths refer to.
struct Bearer;

impl Modify for Bearer {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// The service's OpenAPI document.
pub fn openapi() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
}

/// `GET /openapi.json`.
pub(super) async fn json() -> Json<utoipa::openapi::OpenApi> {
    Json(openapi())
}
