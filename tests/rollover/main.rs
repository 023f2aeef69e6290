//! The period lifecycle: the rollover on every store, the pure outcome rule and its
//! zones for brackets that never filled, the scheduler, and the rollover's crash
//! safety (a rollover process killed and run again).
//!
//! One test binary; each module was a test file of its own (`cargo test --test
//! rollover crash::` runs one of them).

#[path = "../common/mod.rs"]
mod common;

mod crash;
mod events;
mod outcome;
mod resettle_crash;
mod rollover;
mod scheduler;
mod zones;
