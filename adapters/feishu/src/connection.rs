//! [`FeishuConnection`]: the long connection for the chat layer, a [`Client`] of the kit.
//!
//! Invariant: a payload is acknowledged only once the chat layer took it (a message stored, a
//! click run, a command run); one the chat layer could not take is left unacknowledged, so
//! Feishu pushes it again. A card callback's acknowledgement carries its toast and card.

use std::sync::{Arc, OnceLock};

use tokio_util::sync::CancellationToken;
use workmate_adapter::{BoxFuture, Client, InboundSink};
use workmate_protocol::Surface;

use crate::FeishuPlatform;
use crate::ws::{FrameHandler, HandlerError, LongConnection};

/// The Feishu long connection of one app.
#[derive(Debug)]
pub struct FeishuConnection {
    client: LongConnection,
    platform: Arc<FeishuPlatform>,
    bot: Arc<OnceLock<String>>,
}

impl FeishuConnection {
    /// The connection `client` opens, delivering through `platform`'s chat layer; `bot` is the
    /// bot's `open_id` once known.
    pub fn new(
        client: LongConnection,
        platform: Arc<FeishuPlatform>,
        bot: Arc<OnceLock<String>>,
    ) -> Self {
        Self {
            client,
            platform,
            bot,
        }
    }
}

impl Client for FeishuConnection {
    const SURFACE: Surface = Surface::Feishu;

    /// One per app: two apps' connections are held independently.
    fn app_id(&self) -> Option<&str> {
        Some(self.client.app_id())
    }

    async fn serve(
        self: Arc<Self>,
        sink: Arc<dyn InboundSink>,
        stop: CancellationToken,
    ) -> Result<(), String> {
        let (platform, bot) = (Arc::clone(&self.platform), Arc::clone(&self.bot));
        let handler = Arc::new(ToChat {
            sink,
            platform,
            bot,
        });
        self.client
            .run(handler, stop)
            .await
            .map_err(|e| e.to_string())
    }
}

/// Hands each payload to the chat layer.
#[derive(Debug)]
struct ToChat {
    sink: Arc<dyn InboundSink>,
    platform: Arc<FeishuPlatform>,
    bot: Arc<OnceLock<String>>,
}

impl FrameHandler for ToChat {
    fn handle(&self, kind: &str, payload: Vec<u8>) -> BoxFuture<'_, Result<Vec<u8>, HandlerError>> {
        let kind = kind.to_owned();
        Box::pin(async move {
            let envelope = crate::inbound::decode(&payload).map_err(|e| {
                tracing::warn!(kind, error = %e, "A long-connection payload workmate cannot read.");
                HandlerError::Failed(e.to_string())
            })?;
            let bot = self.bot.get().map(String::as_str);
            let answer = crate::dispatch(envelope, &self.sink, &self.platform, bot)
                .await
                .map_err(|_| HandlerError::Retry)?;
            Ok(answer.to_string().into_bytes())
        })
    }
}
