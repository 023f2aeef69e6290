//! `leaguekit serve`: the HTTP API as a game server in another language sees it, and
//! the dashboard in a real browser. `serving` starts the real binary for both.
//!
//! One test binary; each module was a test file of its own (`cargo test --test http
//! browser::` runs one of them).

#[path = "../common/mod.rs"]
mod common;
mod serving;

mod abuse;
mod bans;
mod browser;
mod events;
mod http;
mod limits_adjust;
mod parity;
mod player_tokens;
mod resettle;
mod staging;
mod stream_abuse;
mod webhook_paths;
mod webhooks;
