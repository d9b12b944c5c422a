//! How the chat layer is configured: the operator's settings of the layer and of each platform,
//! and the observer the server counts deliveries with.
//!
//! Invariant: plain data and one trait; nothing here depends on the rest of the chat layer, so
//! every module may read its settings without importing a feature.

use std::time::Duration;

use workmate_adapter::RetryPolicy;
use workmate_protocol::Surface;

/// How the chat layer runs.
#[derive(Clone, Debug)]
pub struct ChatConfig {
    /// Deliveries processed at once.
    pub workers: usize,
    /// How long a worker holds a claimed delivery before another may take it over (renewed
    /// while a message waits to join a running turn).
    pub lease: Duration,
    /// How often the intake table is swept for deliveries nobody is running (after a restart,
    /// or left by a replica that died).
    pub sweep_every: Duration,
    /// Attempts at a delivery before it is given up (and the thread told).
    pub max_attempts: i64,
    /// The wait after a delivery's first failed attempt; it doubles with each further one, up to
    /// 30 s.
    pub backoff: Duration,
    /// A card pump without events for this long stops; the next delivery restarts it.
    pub pump_idle: Duration,
    /// How long a replica's hold on a long connection lasts without renewal (see
    /// [`crate::Chat::hold`]): a replica that died loses the connection to another after this long.
    pub connection_lease: Duration,
    /// The most deliveries one tenant's installation of a platform may hand over in any
    /// minute, counted through the coordinator (for all replicas when it is shared); more are
    /// refused unacknowledged. `None`: no limit.
    pub deliveries_per_minute: Option<u32>,
    /// The one retry policy of platform calls.
    pub retry: RetryPolicy,
}

impl Default for ChatConfig {
    fn default() -> Self {
        Self {
            workers: 16,
            lease: Duration::from_secs(15),
            sweep_every: Duration::from_secs(1),
            max_attempts: 5,
            backoff: Duration::from_secs(1),
            pump_idle: Duration::from_secs(300),
            connection_lease: Duration::from_secs(15),
            deliveries_per_minute: None,
            retry: RetryPolicy::default(),
        }
    }
}

/// Sees every delivery a platform hands over, and what became of it, before the platform is
/// answered (an HTTP response, a long connection's ack).
pub trait IntakeObserver: Send + Sync + std::fmt::Debug {
    /// A delivery from `platform` was `stored`, a `duplicate`, or `not_stored` (the platform
    /// will send it again), after `elapsed`.
    fn delivery(&self, platform: Surface, outcome: &'static str, elapsed: Duration);
}

/// What an operator configured for one platform.
#[derive(Clone, Debug, Default)]
pub struct PlatformSettings {
    /// Platform user ids made tenant admins the first time workmate sees them.
    pub admins: Vec<String>,
    /// The one installation (a DingTalk organisation's corp id, …) in which `admins` are
    /// admins; `None`: in every installation. A configured id seen first in another
    /// installation is a member there.
    pub admins_in: Option<String>,
}
