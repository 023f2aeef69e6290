//! The stores: the conformance suite every store passes, property tests of both stores
//! and of score packing, what a period's close records, and the Redis backend under
//! Redis-specific conditions and faults (a real server, a three-master cluster, TLS).
//!
//! One test binary; each module was a test file of its own (`cargo test --test store
//! conformance::` runs one of them).

#[path = "../common/mod.rs"]
mod common;

mod bans;
mod cluster_faults;
mod conformance;
mod delivery;
mod events;
mod hardening;
mod late_seats;
mod limits_adjust;
mod period_record;
mod redis_store;
mod resettle;
mod score_props;
mod staging_clock;
mod store_props;
