//! Slack: the Events API, interactivity and slash-command routes (HTTP mode) or a Socket Mode
//! client (socket mode), wired to the hub.
//!
//! Invariants: nothing reaches the engine unless its signature verified (HTTP) or it came over
//! the Socket Mode connection opened with the app token; the handler only
//! verifies, decodes and queues, so Slack gets its answer at once whatever the engine does; an
//! event id is processed once however often Slack delivers it; a workspace (team id) is tenant
//! `slack-<team>`, a Slack user is tenant user `slack-<user>`, and a thread is a session owned by
//! whoever started it.

mod adapter;
mod automations;
mod commands;
mod jobs;
mod pump;
mod routes;
mod runs;
mod settings;
mod socket;

use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use secrecy::{ExposeSecret, SecretString};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use workmate_adapter::{CardStore, Coalescer, RetryPolicy, WorkQueue};
use workmate_engine::{Scheduler, SessionHub};
use workmate_slack::{AuthInfo, SlackWeb, SocketMode, verify_request};

use crate::config::{SlackConfig, SlackMode};

pub(crate) use commands::slash_commands;
pub use jobs::tenant_of;
pub(crate) use routes::{events, interactions};

/// Jobs run at once; more wait in the queue.
const WORKERS: usize = 16;
/// Jobs that may wait before Slack is told to come back later (503).
const QUEUE: usize = 1024;
/// A card pump without events for this long stops; the next message or click restarts it.
const PUMP_IDLE: Duration = Duration::from_secs(300);

/// What a Slack job can fail with (logged; Slack was already answered).
#[derive(Debug, thiserror::Error)]
pub(crate) enum SlackError {
    #[error(transparent)]
    Store(#[from] workmate_store::Error),
    #[error(transparent)]
    Engine(#[from] workmate_engine::Error),
    #[error(transparent)]
    Web(#[from] workmate_slack::WebError),
}

/// The Slack surface: verification, the work queue, the card pipeline.
#[derive(Debug)]
pub struct SlackSurface {
    signing_secret: Option<SecretString>,
    web: SlackWeb,
    hub: SessionHub,
    coalescer: Arc<Coalescer>,
    queue: WorkQueue,
    pumps: Arc<pump::Pumps>,
    bot: tokio::sync::OnceCell<Option<AuthInfo>>,
    /// The Socket Mode client, in socket mode: its stop signal and its task.
    socket: Mutex<Option<(CancellationToken, JoinHandle<()>)>>,
    /// Starts runs by hand for slash commands that arrive over Socket Mode (the HTTP route
    /// passes the app state's own).
    scheduler: OnceLock<Scheduler>,
}

impl SlackSurface {
    /// Sets Slack up over `hub`. Must be called inside a tokio runtime (it starts the queue and,
    /// in socket mode, the Socket Mode client).
    pub fn new(config: &SlackConfig, hub: SessionHub) -> Result<Arc<Self>, workmate_slack::Error> {
        let client = match (config.mode, &config.app_token) {
            (SlackMode::Socket, Some(app_token)) => {
                Some(SocketMode::new(&config.api_base, app_token.clone())?)
            }
            (SlackMode::Socket, None) => {
                return Err(workmate_slack::WebError::Config(
                    "Socket Mode needs an app_token".into(),
                )
                .into());
            }
            _ => None,
        };
        let web = SlackWeb::new(&config.api_base, config.bot_token.clone())?;
        let store: Arc<dyn CardStore> = Arc::new(hub.store().clone());
        let coalescer = Arc::new(Coalescer::new(
            Arc::new(adapter::SlackAdapter::new(web.clone())),
            store,
            RetryPolicy::default(),
        ));
        let pumps = Arc::new(pump::Pumps::new(
            hub.clone(),
            Arc::clone(&coalescer),
            PUMP_IDLE,
        ));
        let surface = Arc::new(Self {
            signing_secret: config.signing_secret.clone(),
            web,
            hub,
            coalescer,
            queue: WorkQueue::new(WORKERS, QUEUE),
            pumps,
            bot: tokio::sync::OnceCell::new(),
            socket: Mutex::new(None),
            scheduler: OnceLock::new(),
        });
        if let Some(client) = client {
            let cancel = CancellationToken::new();
            let handler = Arc::new(socket::Inbound(Arc::downgrade(&surface)));
            let task = tokio::spawn(client.run(handler, cancel.clone()));
            *surface
                .socket
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some((cancel, task));
        }
        Ok(surface)
    }

    /// Gives Socket Mode slash commands the scheduler, so `/workmate automations run` works there
    /// as over HTTP; a second call changes nothing. The scheduler's run observer usually holds
    /// this surface, so the two then keep each other alive: both are meant to live as long as
    /// the server.
    pub fn attach_scheduler(&self, scheduler: Scheduler) {
        if self.scheduler.set(scheduler).is_err() {
            tracing::debug!("The Slack surface already has a scheduler.");
        }
    }

    /// How many sessions have a live card pump.
    pub fn active_pumps(&self) -> usize {
        self.pumps.active()
    }

    /// Runs the accepted jobs, stops the pumps, and sends pending card updates for at most
    /// `grace`.
    pub async fn shutdown(&self, grace: Duration) {
        let socket = self
            .socket
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some((cancel, task)) = socket {
            cancel.cancel();
            if let Err(e) = task.await {
                tracing::warn!(error = %e, "The Slack Socket Mode client failed.");
            }
        }
        self.queue.shutdown().await;
        self.pumps.shutdown().await;
        self.coalescer.shutdown(grace).await;
    }

    /// Checks Slack's signature over the raw body, against the system clock.
    fn verify(&self, timestamp: &str, signature: &str, body: &[u8]) -> Result<(), String> {
        let Some(signing_secret) = &self.signing_secret else {
            return Err("no signing_secret is configured (Slack runs in Socket Mode)".into());
        };
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
            .unwrap_or(0);
        verify_request(
            signing_secret.expose_secret().as_bytes(),
            timestamp,
            signature,
            body,
            now,
        )
        .map_err(|e| e.to_string())
    }

    /// The bot's own identity (`auth.test`), asked once; `None` if Slack would not say.
    async fn bot(&self) -> Option<&AuthInfo> {
        self.bot
            .get_or_init(|| async {
                self.web
                    .auth_test()
                    .await
                    .inspect_err(|e| tracing::warn!(error = %e, "Slack auth.test failed."))
                    .ok()
            })
            .await
            .as_ref()
    }
}
