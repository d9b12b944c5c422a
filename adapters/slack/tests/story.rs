//! The cards crate's story builder: the same event streams the cards' own tests fold.

pub(crate) use workmate_cards::testing::*;
