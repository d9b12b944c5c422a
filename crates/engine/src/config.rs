//! Engine settings.

use std::path::PathBuf;
use std::time::Duration;

/// How the engine runs turns.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// Model calls a turn may make before it ends with `max_iterations_exceeded` (`[engine]
    /// max_iterations`).
    pub max_iterations: u32,
    /// The model of sessions a surface creates without naming one (`[engine] default_model`).
    pub default_model: String,
    /// Most low-risk tool calls run at once.
    pub tool_concurrency: usize,
    /// How often a turn parked on the inbox re-reads its item, to notice answers given through
    /// another replica.
    pub inbox_poll: Duration,
    /// Where per-session workspace folders live (`<workspaces_dir>/<tenant>/<session>`); never
    /// inside the data directory, which exec tools must not reach.
    pub workspaces_dir: PathBuf,
    /// Sessions whose history stays in memory between turns, most recently used first; any
    /// other session's next turn reads its history from the store. Bounds that cache however
    /// many sessions are live.
    pub hot_histories: u64,
    /// How long a session's writer lease lasts without renewal: a process that stops renewing
    /// (it died) loses the session to another after this long.
    pub lease_ttl: Duration,
    /// A turn a crash cut short longer ago than this is not taken up again (the model is not
    /// called again); it ends with the restart notice (`[engine] recover_within_seconds`).
    pub recover_within: Duration,
    /// A session's live state (its runtime: counters, cached row and history, subscriptions)
    /// unused for this long is dropped; the next use loads it again from the store.
    pub idle_session: Duration,
    /// This process's name as the holder of session leases. It must differ between processes
    /// that share a database and stay the same across restarts of one, so a restarted process
    /// takes its sessions back at once instead of waiting out its own leases.
    pub replica: String,
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            max_iterations: 150,
            default_model: "scripted:demo".into(),
            tool_concurrency: 8,
            inbox_poll: Duration::from_millis(500),
            workspaces_dir: PathBuf::from("./workspaces"),
            hot_histories: 256,
            lease_ttl: Duration::from_secs(30),
            recover_within: Duration::from_secs(600),
            idle_session: Duration::from_secs(120),
            replica: "local".into(),
        }
    }
}
