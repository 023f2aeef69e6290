//! `leaguekit serve`: the league over HTTP/JSON for game servers in any language, a
//! live dashboard for operators, and Prometheus metrics.
//!
//! [`router`] builds the whole service (API, dashboard, `/metrics`, `/openapi.json`,
//! `/healthz`) as an axum [`Router`] for any [`Store`], so a Rust game server can also
//! mount it in its own axum app; [`serve`] runs a router with graceful shutdown, and
//! [`run`] is the `leaguekit serve` command (Redis, the scheduler, signals).
//!
//! Behaviour every handler shares:
//! - answers have the command line's JSON shapes; errors are
//!   `{"error": {"code", "message"}}` with the status of [`ApiError`];
//! - bearer tokens with a role ([`auth`]): without a valid token only `/healthz`
//!   answers, a `viewer` token only reads, a player token (a short-lived JWT, with
//!   `LEAGUEKIT_PLAYER_TOKEN_SECRET`) reads only its own player and bracket;
//! - an HTTP/1 answer sent before its request's body was read (a 401, a 404, a 413)
//!   closes the connection and says so (`keep_alive.rs`);
//! - a connection that sends no whole request head within
//!   [`ServerOptions::idle_timeout`] (idle, or slow) is closed;
//! - request bodies are limited ([`ServerOptions::body_limit`]), a request that takes
//!   longer than [`ServerOptions::request_timeout`] is answered 503 (for a write:
//!   `unknown`, resend only with its request id);
//! - ids are validated by the library itself, exactly as for embedded use.
//!
//! Owns: the router, its layers and limits, and the `serve` command's set-up (the
//! connections themselves, their idle timeout and graceful shutdown: `connections.rs`).
//! Must not: hold league rules: every handler calls the library, which validates and
//! decides.

pub mod auth;
mod connections;
mod dashboard;
mod error;
mod extract;
mod keep_alive;
mod live;
mod model;
mod openapi;
pub mod player_tokens;
mod prometheus;
mod routes;
mod sse;
pub mod webhooks;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use tokio::net::TcpListener;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::compression::CompressionLayer;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

pub use auth::{Role, TokenError, Tokens};
pub use error::{ApiError, ErrorBody, ErrorDetail};
pub use openapi::openapi;
pub use player_tokens::{PlayerSecret, SecretError};
pub use sse::{
    DEFAULT_MAX_STREAMS, DEFAULT_STREAMS_PER_PLAYER, DEFAULT_STREAMS_PER_STATIC_TOKEN,
    MOST_STREAMS, STREAMS_MAX_ENV, STREAMS_PER_TOKEN_ENV, StreamLimitError, StreamLimits,
    StreamsPerToken,
};
pub use tokio_util::sync::CancellationToken;

use crate::league::League;
use crate::rollover::scheduler::{Scheduler, SchedulerError, SchedulerOptions};
use crate::store::Store;
use crate::store::redis::RedisStore;

/// The address `leaguekit serve` listens on by default.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";
/// The default request body limit, in bytes.
pub const DEFAULT_BODY_LIMIT: usize = 256 * 1024;
/// How long a connection may go without sending a whole request head, by default.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(120);

/// Settings of the HTTP service.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServerOptions {
    /// Who may call the API.
    pub tokens: Tokens,
    /// The largest request body, in bytes (default 256 KiB): larger ones get 413.
    pub body_limit: usize,
    /// The most items one `POST /v1/scores:batch` may carry (default 1000).
    pub max_batch: usize,
    /// How long a request may take to its response head before it is answered 503
    /// (default 10 s): a game server learns quickly that the store is unreachable
    /// (the Redis store itself rides out a restart of a few seconds, and keeps trying
    /// for about 6 s per attempt). A write that times out is answered `unknown`.
    pub request_timeout: Duration,
    /// How often a watched bracket is read for its live stream (default 500 ms).
    pub live_poll: Duration,
    /// The most live streams open at once (default 10,000; `LEAGUEKIT_STREAMS_MAX`).
    pub max_streams: usize,
    /// The most live streams one client holds open at once: a player (whatever their
    /// tokens), one other token (default 8 and 2,500; `LEAGUEKIT_STREAMS_PER_TOKEN`).
    pub streams_per_token: StreamsPerToken,
    /// How long shutdown waits for requests in flight (default 30 s).
    pub shutdown_grace: Duration,
    /// How long a connection may take to send a whole request head, counted from
    /// when it was accepted or from its last answer (default 120 s): a connection
    /// idle for longer, or sending its head that slowly, is closed. The default is
    /// longer than common clients keep an idle connection (reqwest and Go: 90 s), so
    /// that the client, not the server, ends it: a request sent just as the server
    /// closes a connection fails half-sent, and a write's outcome is then unknown.
    pub idle_timeout: Duration,
    /// The secret player tokens are signed with; without one, player tokens are
    /// refused and `POST /v1/players/{player}/token` answers 404
    /// `player_tokens_disabled` (default: none).
    pub player_secret: Option<PlayerSecret>,
}

impl ServerOptions {
    /// Defaults with these tokens.
    pub fn new(tokens: Tokens) -> Self {
        Self {
            tokens,
            body_limit: DEFAULT_BODY_LIMIT,
            max_batch: 1000,
            request_timeout: Duration::from_secs(10),
            live_poll: Duration::from_millis(500),
            max_streams: sse::DEFAULT_MAX_STREAMS,
            streams_per_token: StreamsPerToken::default(),
            shutdown_grace: Duration::from_secs(30),
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            player_secret: None,
        }
    }

    /// Sets [`ServerOptions::body_limit`].
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.body_limit = bytes;
        self
    }

    /// Sets [`ServerOptions::max_batch`].
    pub fn max_batch(mut self, items: usize) -> Self {
        self.max_batch = items;
        self
    }

    /// Sets [`ServerOptions::request_timeout`].
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Sets [`ServerOptions::live_poll`].
    pub fn live_poll(mut self, every: Duration) -> Self {
        self.live_poll = every;
        self
    }

    /// Sets [`ServerOptions::shutdown_grace`].
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// Sets [`ServerOptions::player_secret`].
    pub fn player_secret(mut self, secret: Option<PlayerSecret>) -> Self {
        self.player_secret = secret;
        self
    }

    /// Sets [`ServerOptions::idle_timeout`].
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }
}

/// What every handler shares.
pub(crate) struct App<S: Store> {
    league: Arc<League<S>>,
    tokens: Tokens,
    players: Option<player_tokens::PlayerKeys>,
    max_batch: usize,
    hub: sse::Hub<S>,
    shutdown: CancellationToken,
}

/// The whole service as an axum router: the API, the dashboard, `/metrics`,
/// `/openapi.json` and `/healthz`. Cancelling `shutdown` ends every live stream (so a
/// graceful shutdown does not wait for them).
///
/// `/metrics` renders the Prometheus recorder this function installs as the process's
/// global `metrics` recorder on first use; if the process already has another
/// recorder, `/metrics` answers 404 and the metrics go to that recorder.
pub fn router<S: Store>(
    league: Arc<League<S>>,
    options: &ServerOptions,
    shutdown: CancellationToken,
) -> Router {
    prometheus::install();
    let players = options
        .player_secret
        .as_ref()
        .map(|secret| player_tokens::PlayerKeys::new(secret, &league.season().name));
    let app = Arc::new(App {
        players,
        hub: sse::Hub::new(
            league.clone(),
            options.live_poll,
            options.max_streams,
            options.streams_per_token,
            shutdown.clone(),
        ),
        league,
        tokens: options.tokens.clone(),
        max_batch: options.max_batch,
        shutdown,
    });
    // Layers run outside in: the last added sees the request first.
    routes::routes::<S>()
        .layer(axum::middleware::from_fn_with_state(
            app.clone(),
            routes::own::guard::<S>,
        ))
        .layer(axum::middleware::from_fn_with_state(
            app.clone(),
            auth::require::<S>,
        ))
        .layer(RequestBodyLimitLayer::new(options.body_limit))
        .layer(DefaultBodyLimit::disable())
        .layer(TimeoutLayer::with_status_code(
            StatusCode::SERVICE_UNAVAILABLE,
            options.request_timeout,
        ))
        .layer(CatchPanicLayer::new())
        .layer(CompressionLayer::new())
        .layer(axum::middleware::from_fn(error::json_errors))
        .layer(axum::middleware::from_fn(prometheus::track))
        .layer(axum::middleware::from_fn(keep_alive::close_if_body_unread))
        .layer(TraceLayer::new_for_http().make_span_with(request_span))
        .with_state(app)
}

/// The trace span of a request: its method and path, never its query (a live
/// stream's may hold `?access_token=`) or headers.
fn request_span<B>(request: &axum::http::Request<B>) -> tracing::Span {
    // tower-http's own target, so that `LEAGUEKIT_LOG=tower_http=debug` shows it.
    tracing::debug_span!(
        target: "tower_http::trace::make_span",
        "request",
        method = %request.method(),
        path = %request.uri().path(),
        version = ?request.version(),
    )
}

/// Serves `router` on `listener` until `shutdown` is cancelled, then stops accepting
/// connections, ends live streams, and waits up to `grace` for requests in flight.
/// Connections are closed after [`DEFAULT_IDLE_TIMEOUT`] without a request head (see
/// [`serve_with`] to set it).
pub async fn serve(
    listener: TcpListener,
    router: Router,
    shutdown: CancellationToken,
    grace: Duration,
) -> std::io::Result<()> {
    connections::serve(listener, router, shutdown, grace, DEFAULT_IDLE_TIMEOUT).await
}

/// [`serve`] with the grace ([`ServerOptions::shutdown_grace`]) and the idle timeout
/// ([`ServerOptions::idle_timeout`]) of `options`.
pub async fn serve_with(
    listener: TcpListener,
    router: Router,
    shutdown: CancellationToken,
    options: &ServerOptions,
) -> std::io::Result<()> {
    connections::serve(
        listener,
        router,
        shutdown,
        options.shutdown_grace,
        options.idle_timeout,
    )
    .await
}

/// What `leaguekit serve` was told on the command line.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct RunOptions {
    /// `--listen` (else `[server] listen`, else [`DEFAULT_LISTEN`]).
    pub listen: Option<SocketAddr>,
    /// `--no-scheduler`: leave rollovers to other processes.
    pub no_scheduler: bool,
}

impl RunOptions {
    /// With this listen address.
    pub fn listen(mut self, addr: Option<SocketAddr>) -> Self {
        self.listen = addr;
        self
    }

    /// With or without the scheduler.
    pub fn no_scheduler(mut self, yes: bool) -> Self {
        self.no_scheduler = yes;
        self
    }
}

/// Why `leaguekit serve` could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// No token at all: nothing but `/healthz` could ever answer.
    #[error(
        "no API tokens: set LEAGUEKIT_SERVER_TOKENS (game servers: read and write) and/or \
         LEAGUEKIT_VIEWER_TOKENS (dashboard, metrics: read only), comma-separated, or \
         server_tokens / viewer_tokens in the config's [server] section; make tokens with \
         `openssl rand -hex 32`"
    )]
    NoTokens,
    /// A token is not usable.
    #[error("{0}")]
    Token(#[from] TokenError),
    /// A player token setting is refused: the secret is too short, or
    /// `LEAGUEKIT_PLAYER_TOKEN_MAX_TTL` is out of range.
    #[error("{0}")]
    PlayerSecret(#[from] SecretError),
    /// A stream limit (`LEAGUEKIT_STREAMS_MAX`, `LEAGUEKIT_STREAMS_PER_TOKEN`) is refused.
    #[error("{0}")]
    Streams(#[from] StreamLimitError),
    /// The webhooks' configuration is refused.
    #[error("{0}")]
    Webhooks(#[from] webhooks::WebhookConfigError),
    /// The league refuses this season file: a staging file against a production
    /// league or the reverse, or data of another key layout.
    #[error("{0}")]
    League(crate::error::Error),
    /// The address could not be bound.
    #[error(
        "cannot listen on {addr}: {source}; choose another address with --listen or [server] listen"
    )]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The scheduler could not start or stop.
    #[error(transparent)]
    Scheduler(#[from] SchedulerError),
    /// Serving failed.
    #[error("serving failed: {0}")]
    Io(#[from] std::io::Error),
}

impl ServeError {
    /// The command line's exit code: 2 for bad configuration, 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            ServeError::NoTokens
            | ServeError::Token(_)
            | ServeError::PlayerSecret(_)
            | ServeError::Streams(_)
            | ServeError::Webhooks(_)
            | ServeError::League(crate::error::Error::Input(_)) => 2,
            _ => 1,
        }
    }
}

/// `leaguekit serve`: serves `league` until SIGTERM or Ctrl-C, running the scheduler
/// unless `args.no_scheduler`. Prints `leaguekit: serving on http://ADDR` on stderr
/// once it listens. On a signal it stops accepting connections, ends live streams,
/// lets requests in flight finish (up to 30 s), then stops the scheduler.
///
/// The `[server]` section of the season file sets the listen address, tokens, body
/// limit and request timeout; `LEAGUEKIT_SERVER_TOKENS` / `LEAGUEKIT_VIEWER_TOKENS`
/// replace its tokens and `args.listen` its address. `LEAGUEKIT_PLAYER_TOKEN_SECRET`
/// (at least 32 bytes) turns player tokens on. `LEAGUEKIT_WEBHOOK_URLS` and
/// `LEAGUEKIT_WEBHOOK_SECRET` turn webhook delivery on ([`webhooks`]); it stops with
/// the server.
pub async fn run(league: League<RedisStore>, args: RunOptions) -> Result<(), ServeError> {
    // First, so the scheduler's catch-up at start is counted too.
    prometheus::install();
    let config = league.season().server.clone();
    let tokens = Tokens::from_env(&config)?;
    if tokens.is_empty() {
        return Err(ServeError::NoTokens);
    }
    let mut options = ServerOptions::new(tokens).player_secret(PlayerSecret::from_env()?);
    let streams = StreamLimits::from_env()?;
    (options.max_streams, options.streams_per_token) = (streams.max, streams.per_token);
    let hooks = webhooks::WebhookConfig::from_env()?;
    // Before anything is served or scheduled: a staging file against a production
    // league (or the reverse), or data of another layout, stops serve here.
    league
        .context()
        .check_layout()
        .await
        .map_err(ServeError::League)?;
    if hooks.is_some() && league.context().log_spec().is_none() {
        return Err(webhooks::WebhookConfigError::NoEventLog(league.season().name.clone()).into());
    }
    if let Some(limit) = config.body_limit {
        options = options.body_limit(limit);
    }
    if let Some(timeout) = config.request_timeout {
        options = options.request_timeout(timeout);
    }
    if let Some(timeout) = config.idle_timeout {
        options = options.idle_timeout(timeout);
    }
    let addr = args
        .listen
        .or(config.listen)
        .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 8080)));
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError::Bind { addr, source })?;
    let local = listener.local_addr()?;
    if league.season().clock.travel {
        tracing::warn!(
            season = %league.season().name,
            "STAGING CLOCK: the season declares [clock] travel = true, so admins can move \
             its league clock forward (POST /v1/clock, `leaguekit clock advance`); never \
             use it for a live league"
        );
        eprintln!(
            "leaguekit: WARNING: season {:?} has a STAGING CLOCK ([clock] travel = true); \
             never use it for a live league",
            league.season().name
        );
    }
    let league = Arc::new(league);
    let scheduler = if args.no_scheduler {
        None
    } else {
        let (scheduler, caught_up) =
            Scheduler::start(league.clone(), SchedulerOptions::default()).await?;
        if !caught_up.closed.is_empty() {
            tracing::info!(
                periods = caught_up.closed.len(),
                "scheduler caught up missed periods"
            );
        }
        Some(scheduler)
    };
    let shutdown = CancellationToken::new();
    let router = router(league.clone(), &options, shutdown.clone());
    let deliverer = match hooks {
        Some(config) => {
            eprintln!(
                "leaguekit: delivering webhooks to {} URL(s): {}",
                config.urls.len(),
                config.urls.join(", ")
            );
            Some(webhooks::start(league.clone(), config, shutdown.clone()).await?)
        }
        None => None,
    };
    eprintln!(
        "leaguekit: serving season {:?} on http://{local} ({}); SIGTERM or Ctrl-C stops it",
        league.season().name,
        if scheduler.is_some() {
            "with the scheduler"
        } else {
            "without the scheduler"
        }
    );
    let signal = shutdown.clone();
    tokio::spawn(async move {
        stop_signal().await;
        eprintln!("leaguekit: stopping: finishing requests in flight");
        signal.cancel();
    });
    let served = serve_with(listener, router, shutdown.clone(), &options).await;
    // The deliverer finishes its POSTs in flight and records them.
    shutdown.cancel();
    if let Some(d) = deliverer {
        let _ = d.await;
    }
    if let Some(s) = scheduler {
        s.shutdown().await?;
    }
    served?;
    eprintln!("leaguekit: stopped");
    Ok(())
}

/// Resolves on SIGTERM or Ctrl-C (SIGINT).
async fn stop_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
}
