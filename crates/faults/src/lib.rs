//! Kill points: named places in workmate's crash windows where a crash test makes the process
//! die at once, with no destructor run and nothing flushed, as a SIGKILL would. They let a test
//! hit one exact window (after a card is posted but before its id is stored, say) every time,
//! instead of hoping a timed kill lands there.
//!
//! A test names the point in [`ENV`] as `name` (the first time the process reaches it) or
//! `name#n` (the n-th time). Without the `enabled` feature, which only test builds turn on,
//! [`kill_point`] is an empty function and nothing reads the environment.

/// The environment variable that names the point a process dies at.
pub const ENV: &str = "WORKMATE_TEST_KILL_AT";

/// Dies here if this is the point [`ENV`] names (and the hit it names).
#[inline]
pub fn kill_point(name: &str) {
    #[cfg(feature = "enabled")]
    armed::reached(name);
    #[cfg(not(feature = "enabled"))]
    let _ = name;
}

#[cfg(feature = "enabled")]
mod armed {
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicU64, Ordering};

    /// The armed point: its name and the hit that kills.
    static ARMED: OnceLock<Option<(String, u64)>> = OnceLock::new();
    static HITS: AtomicU64 = AtomicU64::new(0);

    pub(super) fn reached(name: &str) {
        let armed = ARMED.get_or_init(|| {
            let value = std::env::var(super::ENV).ok()?;
            Some(match value.split_once('#') {
                Some((point, nth)) => (point.to_owned(), nth.parse().unwrap_or(1)),
                None => (value, 1),
            })
        });
        let Some((point, nth)) = armed else {
            return;
        };
        if point != name {
            return;
        }
        if HITS.fetch_add(1, Ordering::SeqCst) + 1 == *nth {
            #[allow(clippy::print_stderr, reason = "the test reads why the process died")]
            {
                eprintln!("kill point {name} reached (hit {nth}): dying now");
            }
            std::process::abort();
        }
    }
}
