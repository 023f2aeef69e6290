//! The audit log of operator actions (admin only).
//!
//! Owns: the audit handler and its JSON.
//! Must not: record anything (the operator's actions do).

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::operator::{AuditEntry, AuditQuery};
use crate::server::App;
use crate::server::auth::Admin;
use crate::server::error::{ApiError, ErrorBody};
use crate::server::model::{Q, parse_time, rfc3339};
use crate::store::Store;

/// `?player=&since=&limit=` of the audit log.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct AuditQueryIn {
    /// Only actions about this player.
    player: Option<String>,
    /// Only actions recorded at or after this time (RFC 3339, the real clock:
    /// `recorded_at`).
    #[param(format = DateTime)]
    since: Option<String>,
    /// At most this many entries, 1-1000 (default 1000).
    #[param(minimum = 1, maximum = 1000)]
    limit: Option<u64>,
}

/// One operator action.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct AuditEntryOut {
    /// Unique id of the entry.
    id: String,
    /// When, by the league clock (RFC 3339): ahead of `recorded_at` on a staging
    /// league whose clock was moved.
    at: String,
    /// When it was recorded, by the real clock (RFC 3339); the log keeps an entry
    /// `[audit] keep` (400 days) by this clock.
    recorded_at: String,
    /// Who: the admin token's name, or `cli:<user>`.
    actor: String,
    /// What: `ban`, `unban`, `adjust`, `resettle`, `clock`.
    action: String,
    /// The player acted on, if one.
    #[schema(required = false)]
    player: Option<String>,
    /// Why, as the operator said.
    #[schema(required = false)]
    reason: Option<String>,
    /// The action's particulars.
    #[schema(value_type = Object)]
    details: serde_json::Value,
}

impl From<AuditEntry> for AuditEntryOut {
    fn from(e: AuditEntry) -> Self {
        AuditEntryOut {
            id: e.id,
            at: rfc3339(e.at),
            recorded_at: rfc3339(e.recorded_at.unwrap_or(e.at)),
            actor: e.actor,
            action: e.action,
            player: e.player,
            reason: e.reason,
            details: e.details,
        }
    }
}

/// The audit log's entries, oldest first.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct AuditOut {
    entries: Vec<AuditEntryOut>,
}

/// The audit log: every operator action with who, when, what and why, oldest first.
/// Admin tokens only.
#[utoipa::path(
    get,
    path = "/v1/audit",
    tag = "operators",
    params(AuditQueryIn),
    responses(
        (status = 200, body = AuditOut),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 503, body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn audit<S: Store>(
    State(app): State<Arc<App<S>>>,
    _admin: Admin,
    Q(q): Q<AuditQueryIn>,
) -> Result<Json<AuditOut>, ApiError> {
    let mut query = AuditQuery::default();
    if let Some(p) = q.player {
        query = query.player(p);
    }
    if let Some(s) = q.since {
        query = query.since(parse_time(&s)?);
    }
    if let Some(l) = q.limit {
        query = query.limit(l);
    }
    let entries = app.league.operator().audit(&query).await?;
    Ok(Json(AuditOut {
        entries: entries.into_iter().map(AuditEntryOut::from).collect(),
    }))
}
