//! `/healthz`.
//!
//! Owns: `/healthz`.
//! Must not: need a token or wait long for the store.

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::State;

use crate::server::App;
use crate::server::error::{ApiError, ErrorBody};
use crate::server::model::HealthOut;
use crate::store::Store;

/// How long the health check waits for the store.
const STORE_CHECK: Duration = Duration::from_secs(1);

/// Whether this server can serve: 200 when the store answers (its clock), 503 when it
/// does not. Needs no token.
///
/// A store that answers but refuses writes (Redis's memory full under `noeviction`) is
/// still 200, with `"status": "degraded"`, `"code": "store_refuses_writes"` and a
/// message: reads keep working, and every server of the league shares the store, so a
/// load balancer that took them out of rotation would end the reads too and fix
/// nothing. Alerting reads the status (or the `leaguekit_store_refuses_writes` gauge).
#[utoipa::path(
    get,
    path = "/healthz",
    tag = "system",
    responses(
        (status = 200, description = "ok, or degraded: the store refuses writes, reads work", body = HealthOut),
        (status = 503, description = "store_unavailable", body = ErrorBody),
    )
)]
pub(crate) async fn healthz<S: Store>(
    State(app): State<Arc<App<S>>>,
) -> Result<Json<HealthOut>, ApiError> {
    if app.shutdown.is_cancelled() {
        return Err(ApiError::new(
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            "shutting_down",
            "this server is shutting down; use another one",
        ));
    }
    let check = async {
        app.league.store().now().await?;
        app.league.refresh_write_state().await
    };
    match tokio::time::timeout(STORE_CHECK, check).await {
        Ok(Ok(None)) => Ok(Json(HealthOut {
            status: "ok",
            code: None,
            message: None,
        })),
        Ok(Ok(Some(why))) => Ok(Json(HealthOut {
            status: "degraded",
            code: Some("store_refuses_writes"),
            message: Some(why),
        })),
        Ok(Err(e)) => Err(e.into()),
        Err(_) => Err(ApiError::new(
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            "store_unavailable",
            format!(
                "the store did not answer within {} s",
                STORE_CHECK.as_secs()
            ),
        )),
    }
}
