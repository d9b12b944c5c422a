//! Feishu / Lark: the event and card-callback routes (webhook mode) or the long connection,
//! wired to the chat layer.
//!
//! Invariants: nothing reaches the chat layer unless the request verified (signature or
//! Verification Token, and decryption) or came over the long connection opened with the app's
//! credentials; a message is answered 200 only once the chat layer stored it, and 503 (so
//! Feishu delivers it again) when it could not; a click is answered with its toast and card.

mod routes;

use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use secrecy::ExposeSecret;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use workmate_adapter::{Connection, InboundSink};
use workmate_chat::{Chat, PlatformSettings};
use workmate_feishu::web::{FeishuWeb, WebError};
use workmate_feishu::webhook::WebhookAuth;
use workmate_feishu::ws::LongConnection;
use workmate_feishu::{FeishuConnection, FeishuPlatform};

use crate::config::{FeishuConfig, FeishuMode};

pub(crate) use routes::{card, events};

/// The Feishu surface: request checks, the platform, and the bot's identity.
#[derive(Debug)]
pub struct FeishuSurface {
    auth: WebhookAuth,
    platform: Arc<FeishuPlatform>,
    sink: Arc<dyn InboundSink>,
    /// The bot's `open_id`, once known: tells a mention of the bot from other mentions.
    bot: Arc<OnceLock<String>>,
    /// The long connection, in that mode: its stop signal and its task.
    connection: Mutex<Option<(CancellationToken, JoinHandle<()>)>>,
}

impl FeishuSurface {
    /// Registers Feishu with the chat layer. Must be called inside a tokio runtime (it asks
    /// Feishu who the bot is).
    pub fn new(config: &FeishuConfig, chat: Chat) -> Result<Arc<Self>, String> {
        let long_connection = match config.mode {
            FeishuMode::LongConnection => Some(
                LongConnection::new(&config.api_base, &config.app_id, config.app_secret.clone())
                    .map_err(|e| e.to_string())?,
            ),
            _ => None,
        };
        let surface = Self::webhook(config, chat).map_err(|e| e.to_string())?;
        if let Some(client) = long_connection {
            let connection = Arc::new(FeishuConnection::new(
                client,
                Arc::clone(&surface.platform),
                Arc::clone(&surface.bot),
            ));
            let stop = CancellationToken::new();
            let task = tokio::spawn(connection.run(Arc::clone(&surface.sink), stop.clone()));
            *surface
                .connection
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some((stop, task));
        }
        Ok(surface)
    }

    /// Closes the long connection, if any. The chat layer is stopped by its owner.
    pub async fn shutdown(&self) {
        let connection = self
            .connection
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some((stop, task)) = connection {
            stop.cancel();
            if let Err(e) = task.await {
                tracing::warn!(error = %e, "The Feishu long connection failed.");
            }
        }
    }

    fn webhook(config: &FeishuConfig, chat: Chat) -> Result<Arc<Self>, WebError> {
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
            sink: Arc::new(chat),
            bot,
            connection: Mutex::new(None),
        }))
    }

    /// The bot's `open_id`, when known.
    fn bot(&self) -> Option<&str> {
        self.bot.get().map(String::as_str)
    }
}
