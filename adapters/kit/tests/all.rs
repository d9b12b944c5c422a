//! workmate-adapter's integration tests: the work queue acks without waiting, dedupe against a
//! real SQLite store, retry timing, and the coalescer driven by a fake platform in paused time.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod ack;
mod coalesce;
mod dedupe;
mod retry;
mod support;
