//! The guarded egress against local servers, and the check that it is the workspace's only
//! HTTP client builder.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod egress;
mod one_builder;
