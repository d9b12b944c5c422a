//! The shared callback crypto against the vectors WeCom's and DingTalk's SDKs made, and its
//! properties. One test binary.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests fail loudly on a broken expectation"
)]

mod properties;
mod vectors;
