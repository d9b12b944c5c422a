//! The vault crate's tests: envelope round trips, refusals of every altered part, key files.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod envelope;
mod keys;
