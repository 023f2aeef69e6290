//! What designers and operators run: the command line, the season file and its
//! calendar, the simulator and the tuner.
//!
//! One test binary; each module was a test file of its own (`cargo test --test cli
//! sim::` runs one of them).

#[path = "../common/mod.rs"]
mod common;

mod cli;
mod config;
mod resettle;
mod sim;
mod tune;
