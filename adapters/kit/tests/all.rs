//! workmate-adapter's integration tests: retry timing, the coalescer driven by a fake platform in
//! paused time, and the neutral inbound types' wire shape.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod coalesce;
mod retry;
mod support;
