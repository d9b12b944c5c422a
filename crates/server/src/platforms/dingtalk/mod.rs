//! DingTalk (钉钉): the app's Stream connection, or its robot and card callback routes, and the
//! encrypted event push, wired to the chat layer.
//!
//! Invariants: nothing reaches the chat layer unless it came over the Stream connection opened
//! with the app's credentials or its HTTP callback's signature verified; the robot and card
//! routes serve only in HTTP mode, and the event push only when its `token` and
//! `encoding_aes_key` are configured; a robot message is answered only once the chat layer
//! stored it (5xx otherwise, so DingTalk delivers it again); a click is answered with the
//! clicker's card data within DingTalk's 2 s, and the card is then updated for everyone.

mod routes;

use axum::Router;
use axum::routing::post;
use workmate_adapter::BoxFuture;
use workmate_protocol::Surface;

use std::sync::Arc;

use secrecy::{ExposeSecret, SecretString};
use workmate_adapter::InboundSink;
use workmate_adapter::net::NetworkPolicy;
use workmate_chat::{Chat, HeldConnection, PlatformSettings};
use workmate_dingtalk::card::ClickKeys;
use workmate_dingtalk::stream::StreamClient;
use workmate_dingtalk::web::{CallbackType, DingTalkWeb};
use workmate_dingtalk::{DingTalkConnection, DingTalkPlatform};
use workmate_wxcrypto::Crypto;

use super::Mounted;
use crate::config::{DingTalkConfig, DingTalkMode};
use crate::http::AppState;

use routes::{card, events, robot};

/// The DingTalk surface: request checks, the chat layer, and the Stream connection.
#[derive(Debug)]
pub struct DingTalkSurface {
    mode: DingTalkMode,
    /// Checks the robot's and cards' HTTP callbacks (the app's Client Secret).
    client_secret: SecretString,
    /// In HTTP mode: checks that a card click carries its clicker's own key.
    click_keys: Option<ClickKeys>,
    /// The one organisation served, when configured: HTTP callbacks naming another are refused.
    corp_id: Option<String>,
    /// Opens the event push, when `token` and `encoding_aes_key` are configured; the receive
    /// id is the app's Client ID.
    events: Option<Crypto>,
    sink: Arc<dyn InboundSink>,
    /// The Stream connection, in that mode, open while this replica holds its lease.
    connection: Option<HeldConnection>,
}

impl DingTalkSurface {
    /// Registers DingTalk with the chat layer, and, in Stream mode, holds the Stream connection
    /// (opened through `gateway_base`). Download links DingTalk hands out are reached under
    /// `network`, the operator's policy.
    pub fn new(
        config: &DingTalkConfig,
        chat: &Chat,
        network: &NetworkPolicy,
    ) -> Result<Arc<Self>, String> {
        let events = match (&config.token, &config.encoding_aes_key) {
            (Some(token), Some(key)) => Some(
                Crypto::new(
                    token.expose_secret(),
                    key.expose_secret(),
                    &config.client_id,
                )
                .map_err(|e| format!("encoding_aes_key: {e}"))?,
            ),
            _ => None,
        };
        let web = DingTalkWeb::new(
            &config.api_base,
            &config.client_id,
            config.client_secret.clone(),
        )
        .and_then(|web| web.with_network(network))
        .map_err(|e| e.to_string())?;
        let mut settings = workmate_dingtalk::DingTalkConfig::new(
            &config.card_template_id,
            &config.answer_template_id,
        );
        let mut click_keys = None;
        if config.mode == DingTalkMode::Http {
            settings.callback = CallbackType::Http {
                route_key: config.callback_route_key.clone(),
            };
            // HTTP card callbacks sign no body: each decider's own key goes into the card.
            click_keys = Some(ClickKeys::new(config.client_secret.expose_secret()));
        }
        let mut platform = DingTalkPlatform::new(Arc::new(web), settings);
        if let Some(keys) = &click_keys {
            platform = platform.binding_clicks(keys.clone(), Arc::new(chat.clone()));
        }
        let platform = Arc::new(platform);
        chat.register(
            platform as Arc<dyn workmate_adapter::Platform>,
            PlatformSettings {
                admins: config.admins.clone(),
                admins_in: config.corp_id.clone(),
            },
        );
        let connection = match config.mode {
            DingTalkMode::Stream => {
                let client = StreamClient::new(
                    &config.gateway_base,
                    &config.client_id,
                    config.client_secret.clone(),
                )
                .map_err(|e| e.to_string())?;
                Some(chat.hold(Arc::new(DingTalkConnection::new(client))))
            }
            DingTalkMode::Http => None,
        };
        Ok(Arc::new(Self {
            mode: config.mode,
            client_secret: config.client_secret.clone(),
            click_keys,
            corp_id: config.corp_id.clone(),
            events,
            sink: Arc::new(chat.clone()),
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

impl Mounted for DingTalkSurface {
    fn surface(&self) -> Surface {
        Surface::Dingtalk
    }

    fn routes(&self) -> Router<AppState> {
        Router::new()
            .route("/v1/platforms/dingtalk/robot", post(robot))
            .route("/v1/platforms/dingtalk/card", post(card))
            .route("/v1/platforms/dingtalk/events", post(events))
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(self.shutdown())
    }
}
