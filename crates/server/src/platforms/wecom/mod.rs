//! WeCom (企业微信): the smart robot's callback route or its long connection, wired to the chat
//! layer.
//!
//! Invariants: nothing reaches the chat layer unless the callback's signature verified and it
//! decrypted for the smart robot (receive id empty) or the self-built app (receive id the corp
//! id); a message is answered only once the chat
//! layer stored it, and with an error status (so WeCom delivers it again) when it could not; a
//! click is answered with the updated card within WeCom's 5 s.

mod routes;

use axum::Router;
use axum::routing::get;
use workmate_adapter::BoxFuture;
use workmate_protocol::Surface;

use std::sync::Arc;

use secrecy::ExposeSecret;
use workmate_adapter::InboundSink;
use workmate_adapter::net::NetworkPolicy;
use workmate_chat::{Chat, HeldConnection, PlatformSettings};
use workmate_wecom::app::AppWeb;
use workmate_wecom::callback::CallbackAuth;
use workmate_wecom::ws::{LongConnection, WECOM_WS_URL};
use workmate_wecom::{WeComConnection, WeComPlatform};

use super::Mounted;
use crate::config::{WeComConfig, WeComMode};
use crate::http::AppState;

use routes::{callback, verify};

/// The smart robot's receive id: internal smart robots encrypt for the empty string.
const ROBOT_RECEIVE_ID: &str = "";

/// The WeCom surface: request checks, the platform, and the corp it serves.
#[derive(Debug)]
pub struct WeComSurface {
    /// Callback checks, when `token` and `encoding_aes_key` are configured.
    auth: Option<CallbackAuth>,
    /// The self-built app's callback checks (its receive id is the corp id), when an app is
    /// configured.
    app_auth: Option<CallbackAuth>,
    platform: Arc<WeComPlatform>,
    sink: Arc<dyn InboundSink>,
    corp_id: String,
    /// The long connection, in that mode, open while this replica holds its lease.
    connection: Option<HeldConnection>,
}

impl WeComSurface {
    /// Registers WeCom with the chat layer, and, in long-connection mode, holds the connection
    /// to WeCom's server. Links WeCom hands out (answer URLs, file links) are reached under
    /// `network`, the operator's policy.
    pub fn new(
        config: &WeComConfig,
        chat: &Chat,
        network: &NetworkPolicy,
    ) -> Result<Arc<Self>, String> {
        Self::with_socket_url(config, chat, network, WECOM_WS_URL)
    }

    /// [`WeComSurface::new`] with the long connection opened to `ws_url`.
    pub fn with_socket_url(
        config: &WeComConfig,
        chat: &Chat,
        network: &NetworkPolicy,
        ws_url: &str,
    ) -> Result<Arc<Self>, String> {
        let auth = match (&config.token, &config.encoding_aes_key) {
            (Some(token), Some(key)) => Some(
                CallbackAuth::new(token.expose_secret(), key.expose_secret(), ROBOT_RECEIVE_ID)
                    .map_err(|e| e.to_string())?,
            ),
            _ if config.mode == WeComMode::Callback => {
                return Err("callback mode needs token and encoding_aes_key".into());
            }
            _ => None,
        };
        let client = match (config.mode, &config.bot_id, &config.secret) {
            (WeComMode::LongConnection, Some(bot_id), Some(secret)) => Some(
                LongConnection::new(ws_url, bot_id, secret.clone()).map_err(|e| e.to_string())?,
            ),
            (WeComMode::LongConnection, ..) => {
                return Err("long_connection mode needs bot_id and secret".into());
            }
            _ => None,
        };
        let http = workmate_adapter::net::http_client()?;
        let links = workmate_adapter::net::link_egress(network, &config.api_base)?;
        let mut platform = WeComPlatform::new(links);
        // Callbacks' files are encrypted with the robot's EncodingAESKey.
        if let Some(key) = &config.encoding_aes_key {
            platform = platform.with_media_key(key.clone());
        }
        if let Some(client) = &client {
            platform = platform.with_socket(client.sender());
        } else {
            // WeCom may ask any replica for a stream another one runs.
            platform = platform.with_shared(chat.shared_values());
        }
        // Over the long connection `secret` is the robot's; otherwise, with an `agent_id`, the
        // self-built app's.
        let app = match (config.mode, &config.agent_id, &config.secret) {
            (WeComMode::Callback, Some(agent_id), Some(secret)) => Some(AppWeb::new(
                http,
                &config.api_base,
                &config.corp_id,
                agent_id,
                secret.clone(),
            )),
            _ => None,
        };
        let app_auth = match (&app, &config.token, &config.encoding_aes_key) {
            (Some(_), Some(token), Some(key)) => Some(
                CallbackAuth::new(token.expose_secret(), key.expose_secret(), &config.corp_id)
                    .map_err(|e| e.to_string())?,
            ),
            _ => None,
        };
        if let Some(app) = app {
            platform = platform.with_app(app);
        }
        let platform = Arc::new(platform);
        chat.register(
            Arc::clone(&platform) as Arc<dyn workmate_adapter::Platform>,
            PlatformSettings {
                admins: config.admins.clone(),
                admins_in: None,
            },
        );
        let connection = client.map(|client| {
            let connection = WeComConnection::new(client, Arc::clone(&platform), &config.corp_id);
            chat.hold(Arc::new(connection))
        });
        Ok(Arc::new(Self {
            auth,
            app_auth,
            platform,
            sink: Arc::new(chat.clone()),
            corp_id: config.corp_id.clone(),
            connection,
        }))
    }

    /// Closes the long connection, if any, handing it to another replica. The chat layer is
    /// stopped by its owner.
    pub async fn shutdown(&self) {
        if let Some(connection) = &self.connection {
            connection.close().await;
        }
    }
}

impl Mounted for WeComSurface {
    fn surface(&self) -> Surface {
        Surface::Wecom
    }

    fn routes(&self) -> Router<AppState> {
        Router::new().route("/v1/platforms/wecom/callback", get(verify).post(callback))
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(self.shutdown())
    }
}
