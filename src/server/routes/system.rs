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
#[utoipa::path(
    get,
    path = "/healthz",
    tag = "system",
    responses(
        (status = 200, body = HealthOut),
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
    match tokio::time::timeout(STORE_CHECK, app.league.store().now()).await {
        Ok(Ok(_)) => Ok(Json(HealthOut { status: "ok" })),
        Ok(Err(e)) => Err(crate::Error::from(e).into()),
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
