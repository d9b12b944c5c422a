//! [`DingTalkConnection`]: the Stream connection for the chat layer, a [`Client`] of the kit.
//!
//! Invariant: a robot message or card click is acknowledged only once the chat layer took it
//! (a message stored, a click run); one it could not take is left unacknowledged, so DingTalk
//! pushes it again. A card click's acknowledgement carries the clicker's card data. Events are
//! acknowledged and not acted on.

use std::sync::Arc;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use workmate_adapter::{BoxFuture, Client, InboundSink};
use workmate_protocol::Surface;

use crate::dispatch;
use crate::stream::open::{TOPIC_CARD, TOPIC_ROBOT};
use crate::stream::{FrameKind, HandlerError, StreamClient, StreamHandler};

/// The DingTalk Stream connection of one app.
#[derive(Debug)]
pub struct DingTalkConnection {
    client: StreamClient,
}

impl DingTalkConnection {
    /// The connection `client` opens.
    pub fn new(client: StreamClient) -> Self {
        Self { client }
    }
}

impl Client for DingTalkConnection {
    const SURFACE: Surface = Surface::Dingtalk;

    /// One per app: two apps' connections are held independently.
    fn app_id(&self) -> Option<&str> {
        Some(self.client.client_id())
    }

    async fn serve(
        self: Arc<Self>,
        sink: Arc<dyn InboundSink>,
        stop: CancellationToken,
    ) -> Result<(), String> {
        let handler = Arc::new(ToChat { sink });
        self.client
            .run(handler, stop)
            .await
            .map_err(|e| e.to_string())
    }
}

/// Hands each robot message and card click to the chat layer.
#[derive(Debug)]
struct ToChat {
    sink: Arc<dyn InboundSink>,
}

impl StreamHandler for ToChat {
    fn handle(
        &self,
        kind: FrameKind,
        topic: &str,
        message_id: &str,
        data: &str,
    ) -> BoxFuture<'_, Result<Value, HandlerError>> {
        let topic = topic.to_owned();
        let message_id = message_id.to_owned();
        let data = data.to_owned();
        Box::pin(async move {
            let sink = self.sink.as_ref();
            let answer = match (kind, topic.as_str()) {
                (FrameKind::Callback, TOPIC_ROBOT) => dispatch::robot_message(&data, sink).await,
                (FrameKind::Callback, TOPIC_CARD) => {
                    dispatch::card_callback(&data, Some(&message_id), sink).await
                }
                (FrameKind::Event, _) => Ok(Value::Null),
                (FrameKind::Callback, _) => {
                    tracing::debug!(%topic, "A DingTalk callback workmate does not subscribe to.");
                    Ok(json!({}))
                }
            };
            answer.map_err(|e| HandlerError(e.0))
        })
    }
}
