//! Slack: the Events API, interactivity and slash-command routes (HTTP mode) or a Socket Mode
//! connection (socket mode), wired to the chat layer.
//!
//! Invariants: nothing reaches the chat layer unless its signature verified (HTTP) or it came
//! over the Socket Mode connection opened with the app token; a request is answered only after
//! the chat layer stored it, and is answered 503 (so Slack delivers it again) when it could not.

mod routes;

use axum::Router;
use axum::routing::post;
use workmate_adapter::BoxFuture;
use workmate_protocol::Surface;

use std::sync::{Arc, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

use secrecy::{ExposeSecret, SecretString};
use workmate_chat::{Chat, HeldConnection, PlatformSettings};
use workmate_slack::{SlackConnection, SlackPlatform, SocketMode, verify_request};

use super::Mounted;
use crate::config::{SlackConfig, SlackMode};
use crate::http::AppState;

use routes::{events, interactions, slash_commands};

/// The Slack surface: request verification, the platform, and the Socket Mode connection.
#[derive(Debug)]
pub struct SlackSurface {
    signing_secret: Option<SecretString>,
    platform: Arc<SlackPlatform>,
    chat: Chat,
    /// The Socket Mode connection, in socket mode, open while this replica holds its lease.
    socket: OnceLock<HeldConnection>,
}

impl SlackSurface {
    /// Registers Slack with the chat layer. Must be called inside a tokio runtime (it asks Slack
    /// who the bot is and, in socket mode, opens the Socket Mode connection).
    pub fn new(config: &SlackConfig, chat: &Chat) -> Result<Arc<Self>, workmate_slack::Error> {
        let socket = match (config.mode, &config.app_token) {
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
        let platform = Arc::new(SlackPlatform::new(
            &config.api_base,
            config.bot_token.clone(),
        )?);
        chat.register(
            Arc::clone(&platform) as Arc<dyn workmate_adapter::Platform>,
            PlatformSettings {
                admins: config.admins.clone(),
                admins_in: None,
            },
        );
        // Knowing the bot early lets the routes strip its mention without waiting on Slack.
        let lookup = Arc::clone(&platform);
        tokio::spawn(async move { lookup.bot().await.is_some() });
        let surface = Arc::new(Self {
            signing_secret: config.signing_secret.clone(),
            platform: Arc::clone(&platform),
            chat: chat.clone(),
            socket: OnceLock::new(),
        });
        if let Some(socket) = socket {
            let connection = Arc::new(SlackConnection::new(socket, platform));
            let _ = surface.socket.set(chat.hold(connection));
        }
        Ok(surface)
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

    /// Closes the long connection, if any, handing it to another replica. The chat layer is
    /// stopped by its owner.
    pub async fn shutdown(&self) {
        if let Some(connection) = self.socket.get() {
            connection.close().await;
        }
    }
}

impl Mounted for SlackSurface {
    fn surface(&self) -> Surface {
        Surface::Slack
    }

    fn routes(&self) -> Router<AppState> {
        Router::new()
            .route("/v1/platforms/slack/events", post(events))
            .route("/v1/platforms/slack/interactions", post(interactions))
            .route("/v1/platforms/slack/commands", post(slash_commands))
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(self.shutdown())
    }
}
