//! WeCom (企业微信): the smart robot's callback route, wired to the chat layer.
//!
//! Invariants: nothing reaches the chat layer unless the callback's signature verified and it
//! decrypted for the smart robot (receive id empty); a message is answered only once the chat
//! layer stored it, and with an error status (so WeCom delivers it again) when it could not; a
//! click is answered with the updated card within WeCom's 5 s.

mod routes;

use std::sync::Arc;

use secrecy::ExposeSecret;
use workmate_adapter::InboundSink;
use workmate_chat::{Chat, PlatformSettings};
use workmate_wecom::WeComPlatform;
use workmate_wecom::callback::CallbackAuth;

use crate::config::WeComConfig;

pub(crate) use routes::{callback, verify};

/// The smart robot's receive id: internal smart robots encrypt for the empty string.
const ROBOT_RECEIVE_ID: &str = "";

/// The WeCom surface: request checks, the platform, and the corp it serves.
#[derive(Debug)]
pub struct WeComSurface {
    auth: CallbackAuth,
    platform: Arc<WeComPlatform>,
    sink: Arc<dyn InboundSink>,
    corp_id: String,
}

impl WeComSurface {
    /// Registers WeCom with the chat layer.
    pub fn new(config: &WeComConfig, chat: &Chat) -> Result<Arc<Self>, String> {
        let (Some(token), Some(key)) = (&config.token, &config.encoding_aes_key) else {
            return Err("callback mode needs token and encoding_aes_key".into());
        };
        let auth = CallbackAuth::new(token.expose_secret(), key.expose_secret(), ROBOT_RECEIVE_ID)
            .map_err(|e| e.to_string())?;
        let http = workmate_adapter::net::http_client()?;
        let platform = Arc::new(WeComPlatform::new(http));
        chat.register(
            Arc::clone(&platform) as Arc<dyn workmate_adapter::Platform>,
            PlatformSettings {
                admins: config.admins.clone(),
            },
        );
        Ok(Arc::new(Self {
            auth,
            platform,
            sink: Arc::new(chat.clone()),
            corp_id: config.corp_id.clone(),
        }))
    }
}
