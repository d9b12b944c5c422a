//! workmate-cards' integration tests: a recorded session folded into the view and every card
//! state snapshotted, replay idempotence, turn segments and card keys, and the markdown conversion (examples and properties).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod cards;
mod fold;
mod markdown;
mod pages;
mod people;
mod properties;
mod quorum;
mod segments;
mod support;
