//! The metrics leaguekit emits, through the [`metrics`] facade.
//!
//! The engine, the rollover, the Redis store and `leaguekit serve` record into whatever
//! recorder the process installed: `leaguekit serve` installs a Prometheus recorder and
//! serves it at `GET /metrics`; a game server that embeds the library installs its own
//! (Prometheus, StatsD, OpenTelemetry, ...) and gets the same metrics under the same
//! names. Without a recorder, recording costs next to nothing. Call [`describe`] once
//! after installing a recorder to give every metric its help text.
//!
//! | name | kind | labels | what |
//! |---|---|---|---|
//! | `leaguekit_submits_total` | counter | `result` | score updates: `applied`, `duplicate` (a request id seen before), `refused` (bad input or a closed period: nothing written), `unknown` (the store failed after the update may have been applied), `failed` (the store failed before anything was written) |
//! | `leaguekit_limited_total` | counter | `limit` | score updates refused by a limit of the season's `[limits]`: `max_value`, `rate`, `max_period_score` (also counted as `refused` in `leaguekit_submits_total`) |
//! | `leaguekit_joins_total` | counter | `tier` | players placed in a bracket (by a join or a first score) |
//! | `leaguekit_store_errors_total` | counter | `op` | store operations that failed after their retries |
//! | `leaguekit_store_retries_total` | counter | `op` | store operations retried after a connection failure or timeout |
//! | `leaguekit_brackets_closed_total` | counter | `tier` | brackets closed by a rollover (by any process: each close is counted by the process that did it) |
//! | `leaguekit_periods_closed_total` | counter | | periods closed by a rollover run of this process |
//! | `leaguekit_rollover_duration_seconds` | histogram | | how long a rollover run took |
//! | `leaguekit_players` | gauge | `tier` | players placed in the current period, per tier |
//! | `leaguekit_store_refuses_writes` | gauge | | 1 while the store refuses writes (Redis: used memory above `maxmemory` under `noeviction`, or a read-only replica), else 0; reads keep working |
//! | `leaguekit_http_requests_total` | counter | `method`, `route`, `status` | requests answered by `leaguekit serve` |
//! | `leaguekit_http_request_duration_seconds` | histogram | `method`, `route` | time to the response head (a stream's body is not counted) |
//! | `leaguekit_webhook_deliveries_total` | counter | | webhook events delivered (a 2xx answer) by this process |
//! | `leaguekit_webhook_failed_attempts_total` | counter | | webhook attempts that failed (another status, no answer in time, no connection) |
//! | `leaguekit_webhook_dead_total` | counter | | webhook events given up and recorded as dead letters |
//! | `leaguekit_webhook_dead_dropped_total` | counter | | webhook dead letters dropped because their URL had `LEAGUEKIT_WEBHOOK_DEAD_MAX` |
//! | `leaguekit_webhook_trimmed_total` | counter | | runs of webhook events trimmed from a log (`max_per_log`) before delivery to a URL, each recorded as a dead letter naming the run |
//! | `leaguekit_webhook_lag_seconds` | gauge | | the age of the oldest webhook event not yet delivered to one of this process's URLs (0 when caught up) |
//!
//! Label values are bounded: tiers come from the season, `op` from the code, `route` is
//! the route's template (`/v1/players/{player}`), never a raw path.
//!
//! The gauges are set from the store by
//! [`League::refresh_players_gauge`](crate::League::refresh_players_gauge) and
//! [`League::refresh_write_state`](crate::League::refresh_write_state).
//!
//! Owns: the names, kinds and labels of the library's metrics and the helpers that
//! record them, from plain values (counts, tier names, [`Submit`] results).
//! Must not: import anything else of the crate (it is a leaf: the engine, the store
//! and the server call it, never the other way), install a recorder (the process
//! does), or put unbounded values (player ids) in labels.

use std::time::Instant;

/// `leaguekit_submits_total{result}`.
pub const SUBMITS: &str = "leaguekit_submits_total";
/// `leaguekit_limited_total{limit}`.
pub const LIMITED: &str = "leaguekit_limited_total";
/// `leaguekit_joins_total{tier}`.
pub const JOINS: &str = "leaguekit_joins_total";
/// `leaguekit_store_errors_total{op}`.
pub const STORE_ERRORS: &str = "leaguekit_store_errors_total";
/// `leaguekit_store_retries_total{op}`.
pub const STORE_RETRIES: &str = "leaguekit_store_retries_total";
/// `leaguekit_brackets_closed_total{tier}`.
pub const BRACKETS_CLOSED: &str = "leaguekit_brackets_closed_total";
/// `leaguekit_periods_closed_total`.
pub const PERIODS_CLOSED: &str = "leaguekit_periods_closed_total";
/// `leaguekit_rollover_duration_seconds`.
pub const ROLLOVER_SECONDS: &str = "leaguekit_rollover_duration_seconds";
/// `leaguekit_players{tier}`.
pub const PLAYERS: &str = "leaguekit_players";
/// `leaguekit_store_refuses_writes`.
pub const STORE_REFUSES_WRITES: &str = "leaguekit_store_refuses_writes";
/// `leaguekit_http_requests_total{method,route,status}`.
pub const HTTP_REQUESTS: &str = "leaguekit_http_requests_total";
/// `leaguekit_http_request_duration_seconds{method,route}`.
pub const HTTP_SECONDS: &str = "leaguekit_http_request_duration_seconds";
/// `leaguekit_webhook_deliveries_total`.
pub const WEBHOOK_DELIVERED: &str = "leaguekit_webhook_deliveries_total";
/// `leaguekit_webhook_failed_attempts_total`.
pub const WEBHOOK_FAILED: &str = "leaguekit_webhook_failed_attempts_total";
/// `leaguekit_webhook_dead_total`.
pub const WEBHOOK_DEAD: &str = "leaguekit_webhook_dead_total";
/// `leaguekit_webhook_dead_dropped_total`.
pub const WEBHOOK_DEAD_DROPPED: &str = "leaguekit_webhook_dead_dropped_total";
/// `leaguekit_webhook_trimmed_total`.
pub const WEBHOOK_TRIMMED: &str = "leaguekit_webhook_trimmed_total";
/// `leaguekit_webhook_lag_seconds`.
pub const WEBHOOK_LAG: &str = "leaguekit_webhook_lag_seconds";

/// Registers the help text and unit of every metric with the installed recorder, and
/// starts the counters whose labels are known in advance at zero.
pub fn describe() {
    use ::metrics::{Unit, describe_counter, describe_gauge, describe_histogram};
    describe_counter!(
        SUBMITS,
        "Score updates by result: applied, duplicate, refused, unknown (store failed after a possible write), failed (store failed, nothing written)"
    );
    describe_counter!(JOINS, "Players placed in a bracket, by tier");
    describe_counter!(
        LIMITED,
        "Score updates refused by a limit of the season, by limit: max_value, rate, max_period_score"
    );
    describe_counter!(
        STORE_ERRORS,
        "Store operations that failed after their retries, by operation"
    );
    describe_counter!(
        STORE_RETRIES,
        "Store operations retried after a connection failure or timeout, by operation"
    );
    describe_counter!(BRACKETS_CLOSED, "Brackets closed by this process, by tier");
    describe_counter!(PERIODS_CLOSED, "Periods closed by this process");
    describe_histogram!(
        ROLLOVER_SECONDS,
        Unit::Seconds,
        "Duration of rollover runs in this process"
    );
    describe_gauge!(PLAYERS, "Players placed in the current period, by tier");
    describe_gauge!(
        STORE_REFUSES_WRITES,
        "1 while the store refuses writes (Redis memory full under noeviction, or a read-only replica); reads keep working"
    );
    // Known label values start at zero, so a rate is defined from the first scrape.
    for result in Submit::ALL {
        ::metrics::counter!(SUBMITS, "result" => result.label()).increment(0);
    }
    ::metrics::counter!(PERIODS_CLOSED).increment(0);
    describe_counter!(
        HTTP_REQUESTS,
        "HTTP requests answered, by method, route template and status"
    );
    describe_histogram!(
        HTTP_SECONDS,
        Unit::Seconds,
        "HTTP time to the response head, by method and route template"
    );
}

/// The answer to a score update, as `leaguekit_submits_total` labels it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Submit {
    /// The update was applied.
    Applied,
    /// A request id seen before: answered as the first time, nothing written again.
    Duplicate,
    /// Bad input or a closed period: nothing written.
    Refused,
    /// The store failed after the update may have been applied.
    Unknown,
    /// The store failed before anything was written.
    Failed,
}

impl Submit {
    /// Every result, in the order the table above lists them.
    pub const ALL: [Submit; 5] = [
        Submit::Applied,
        Submit::Duplicate,
        Submit::Refused,
        Submit::Unknown,
        Submit::Failed,
    ];

    /// The `result` label.
    pub fn label(self) -> &'static str {
        match self {
            Submit::Applied => "applied",
            Submit::Duplicate => "duplicate",
            Submit::Refused => "refused",
            Submit::Unknown => "unknown",
            Submit::Failed => "failed",
        }
    }
}

/// Counts one score update's answer.
pub(crate) fn submitted(result: Submit) {
    ::metrics::counter!(SUBMITS, "result" => result.label()).increment(1);
}

/// Counts a score update refused by the season's limit named `limit`.
pub(crate) fn limited(limit: &'static str) {
    ::metrics::counter!(LIMITED, "limit" => limit).increment(1);
}

/// Counts a placement the store just made in `tier` (not a repeated join).
pub(crate) fn joined(tier: &str) {
    ::metrics::counter!(JOINS, "tier" => tier.to_owned()).increment(1);
}

/// Counts a store operation that failed for good, and hands its error back.
#[cfg_attr(not(feature = "redis"), allow(dead_code))] // the Redis store's calls
pub(crate) fn store_failed<E>(op: &'static str, error: E) -> E {
    ::metrics::counter!(STORE_ERRORS, "op" => op).increment(1);
    error
}

/// Counts a store operation that is attempted again.
#[cfg_attr(not(feature = "redis"), allow(dead_code))] // the Redis store's calls
pub(crate) fn store_retry(op: &'static str) {
    ::metrics::counter!(STORE_RETRIES, "op" => op).increment(1);
}

/// Counts a bracket this process closed.
pub(crate) fn bracket_closed(tier: &str) {
    ::metrics::counter!(BRACKETS_CLOSED, "tier" => tier.to_owned()).increment(1);
}

/// Counts a period this process closed (a dry run closes nothing).
pub(crate) fn period_closed(dry_run: bool) {
    if !dry_run {
        ::metrics::counter!(PERIODS_CLOSED).increment(1);
    }
}

/// Records how long a rollover run took when dropped (however the run ended).
#[derive(Debug)]
pub(crate) struct RolloverTimer(Instant);

impl RolloverTimer {
    /// Starts timing.
    pub(crate) fn start() -> Self {
        Self(Instant::now())
    }
}

impl Drop for RolloverTimer {
    fn drop(&mut self) {
        ::metrics::histogram!(ROLLOVER_SECONDS).record(self.0.elapsed().as_secs_f64());
    }
}

/// Sets `leaguekit_players{tier}` to `players`.
pub(crate) fn set_players(tier: &str, players: u64) {
    ::metrics::gauge!(PLAYERS, "tier" => tier.to_owned()).set(players as f64);
}

/// Sets `leaguekit_store_refuses_writes` to 1 or 0.
pub(crate) fn set_store_refuses_writes(refuses: bool) {
    ::metrics::gauge!(STORE_REFUSES_WRITES).set(if refuses { 1.0 } else { 0.0 });
}
