//! Feishu / Lark: the event and card-callback routes (webhook mode) or the long connection,
//! wired to the chat layer.
//!
//! Invariants: nothing reaches the chat layer unless the request verified (signature or
//! Verification Token, and decryption) or came over the long connection opened with the app's
//! credentials; a message is answered 200 only once the chat layer stored it, and 503 (so
//! Feishu delivers it again) when it could not; a click is answered with its toast and card.

mod routes;

use axum::Router;
use axum::routing::post;
use workmate_adapter::BoxFuture;
use workmate_protocol::Surface;

use std::sync::{Arc, OnceLock};

use secrecy::ExposeSecret;
use workmate_adapter::InboundSink;
use workmate_chat::{Chat, HeldConnection, PlatformSettings};
use workmate_feishu::web::{FeishuWeb, WebError};
use workmate_feishu::webhook::WebhookAuth;
use workmate_feishu::ws::LongConnection;
use workmate_feishu::{FeishuConnection, FeishuPlatform};

use super::Mounted;
use crate::config::{FeishuConfig, FeishuMode};
use crate::http::AppState;

use routes::{card, events};

/// The Feishu surface: request checks, the platform, and the bot's identity.
#[derive(Debug)]
pub struct FeishuSurface {
    auth: WebhookAuth,
    platform: Arc<FeishuPlatform>,
    sink: Arc<dyn InboundSink>,
    /// The bot's `open_id`, once known: tells a mention of the bot from other mentions.
    bot: Arc<OnceLock<String>>,
    /// The long connection, in that mode, open while this replica holds its lease.
    connection: OnceLock<HeldConnection>,
}

impl FeishuSurface {
    /// Registers Feishu with the chat layer. Must be called inside a tokio runtime (it asks
    /// Feishu who the bot is).
    pub fn new(config: &FeishuConfig, chat: &Chat) -> Result<Arc<Self>, String> {
        let long_connection = match config.mode {
            FeishuMode::LongConnection => Some(
                LongConnection::new(&config.api_base, &config.app_id, config.app_secret.clone())
                    .map_err(|e| e.to_string())?,
            ),
            FeishuMode::Webhook => None,
        };
        let surface = Self::webhook(config, chat).map_err(|e| e.to_string())?;
        if let Some(client) = long_connection {
            let connection = Arc::new(FeishuConnection::new(
                client,
                Arc::clone(&surface.platform),
                Arc::clone(&surface.bot),
            ));
            let _ = surface.connection.set(chat.hold(connection));
        }
        Ok(surface)
    }

    fn webhook(config: &FeishuConfig, chat: &Chat) -> Result<Arc<Self>, WebError> {
        let web = Arc::new(FeishuWeb::new(
            &config.api_base,
            &config.app_id,
            config.app_secret.clone(),
        )?);
        let platform = Arc::new(FeishuPlatform::new(Arc::clone(&web)));
        chat.register(
            Arc::clone(&platform) as Arc<dyn workmate_adapter::Platform>,
            PlatformSettings {
                admins: config.admins.clone(),
                admins_in: None,
            },
        );
        let bot = Arc::new(OnceLock::new());
        let known = Arc::clone(&bot);
        tokio::spawn(async move {
            match web.bot_open_id().await {
                Ok(id) => {
                    let _ = known.set(id);
                }
                Err(e) => {
                    tracing::warn!(error = %e, "Cannot ask Feishu who the bot is; any mention in a group will be taken to address it.");
                }
            }
        });
        let expose =
            |s: &Option<secrecy::SecretString>| s.as_ref().map(|s| s.expose_secret().to_owned());
        Ok(Arc::new(Self {
            auth: WebhookAuth::new(
                expose(&config.encrypt_key),
                expose(&config.verification_token),
            ),
            platform,
            sink: Arc::new(chat.clone()),
            bot,
            connection: OnceLock::new(),
        }))
    }

    /// The bot's `open_id`, when known.
    fn bot(&self) -> Option<&str> {
        self.bot.get().map(String::as_str)
    }

    /// Closes the long connection, if any, handing it to another replica. The chat layer is
    /// stopped by its owner.
    pub async fn shutdown(&self) {
        if let Some(connection) = self.connection.get() {
            connection.close().await;
        }
    }
}

impl Mounted for FeishuSurface {
    fn surface(&self) -> Surface {
        Surface::Feishu
    }

    fn routes(&self) -> Router<AppState> {
        Router::new()
            .route("/v1/platforms/feishu/events", post(events))
            .route("/v1/platforms/feishu/card", post(card))
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(self.shutdown())
    }
}
