//! The crate's one integration-test binary.
//!
//! Generated files under `docs/contract/` are compared with what the code produces now; run the
//! tests with `WORKMATE_BLESS=1` to rewrite them after an intended change.
// clippy's allow-*-in-tests covers `#[test]` functions only; the helpers here fail tests the same way.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers: a failed expectation is a test failure"
)]

mod contract;
mod event_examples;
mod examples;
mod golden;
