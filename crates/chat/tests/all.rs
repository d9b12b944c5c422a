//! The chat layer's conformance suite, driven through a fake platform: every platform gets these
//! behaviours by building on the layer, so they are tested here once. Platforms' own tests keep
//! only their wire format.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    unreachable_pub
)]

mod answers;
mod cards;
mod commands;
mod connections;
mod directory;
mod fifth_platform;
mod intake;
mod isolation;
mod layout;
mod limits;
mod memory;
mod offboarding;
mod private_notices;
mod stop;
mod support;
