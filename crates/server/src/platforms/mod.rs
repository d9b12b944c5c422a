//! The chat platforms workmate answers on, wired to the engine.
//!
//! Each platform's wire format lives in its adapter crate; this module only connects verified,
//! decoded requests to the [`workmate_engine::SessionHub`] and the hub's events back to cards.

mod runs;
pub mod slack;

pub use runs::ChatRuns;
