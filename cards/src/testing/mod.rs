//! Test support (feature `test-support`), shared by the tests of this crate and of the platform
//! adapters that render its cards:
//! - [`Story`]: a builder for a session's event stream, numbered as the engine numbers it, with
//!   the steps every story is made of (`story`);
//! - the scenarios every renderer's tests set up, as `Story` methods and the data they use
//!   (`scenarios`);
//! - cards and buttons built directly, for renderers' limit tests (`cards`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::missing_panics_doc,
    clippy::new_without_default,
    missing_docs
)]

mod cards;
mod scenarios;
mod story;

pub use cards::*;
pub use scenarios::*;
pub use story::*;
