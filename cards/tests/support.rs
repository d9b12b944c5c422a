//! The story builder lives in the crate behind the `test-support` feature, so the adapters' tests
//! build the same event streams.

pub(crate) use workmate_cards::testing::*;
