//! What workmate's tests share, kept small so every crate can take it as a dev-dependency.
//!
//! - [`eventually`] and its twins: the one way a test waits for something, with a deadline and a
//!   failure that says what was awaited and for how long. Under tokio's paused time the waiting
//!   costs no real time.
//! - [`Backend`] and the `needs!` macro: a test that needs a test server (Postgres, MariaDB,
//!   Redis, NATS) is reported as ignored when its variable was unset at build time, and fails,
//!   never skips, when the variable is set but the server cannot be reached.

mod backends;
mod eventually;

pub use backends::Backend;
pub use eventually::{
    POLL_EVERY, eventually, eventually_blocking, eventually_holds, eventually_ok,
};
