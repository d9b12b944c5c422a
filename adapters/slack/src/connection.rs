//! Socket Mode for the chat layer, a [`Client`] of the kit: envelopes mapped to neutral
//! deliveries and handed to the chat layer.
//!
//! Invariants: an event or a click is acked only once the sink stored it (or knew it already);
//! one the sink could not store is left unacked, so Slack delivers it again; a slash command's
//! reply is the ack's payload. The client holds the platform only to learn the bot's id.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use workmate_adapter::{Client, Inbound, InboundSink};
use workmate_protocol::Surface;

use crate::inbound::{EventEnvelope, Interaction};
use crate::mapping::{click_inbounds, command_inbound, command_reply, event_inbound};
use crate::platform::SlackPlatform;
use crate::socket::{Handled, SocketHandler, SocketInbound, SocketMode};

/// Slack Socket Mode, feeding the chat layer.
#[derive(Debug)]
pub struct SlackConnection {
    socket: SocketMode,
    platform: Arc<SlackPlatform>,
}

impl SlackConnection {
    /// A connection opened with `socket`'s app token; `platform` names the bot.
    pub fn new(socket: SocketMode, platform: Arc<SlackPlatform>) -> Self {
        Self { socket, platform }
    }
}

impl Client for SlackConnection {
    const SURFACE: Surface = Surface::Slack;

    fn app_id(&self) -> Option<&str> {
        None
    }

    async fn serve(
        self: Arc<Self>,
        sink: Arc<dyn InboundSink>,
        stop: CancellationToken,
    ) -> Result<(), String> {
        let platform = Arc::clone(&self.platform);
        let run = self
            .socket
            .clone()
            .run(Arc::new(Sink { sink, platform }), stop);
        Box::pin(run).await;
        Ok(())
    }
}

#[derive(Debug)]
struct Sink {
    sink: Arc<dyn InboundSink>,
    platform: Arc<SlackPlatform>,
}

impl Sink {
    async fn store_all(&self, inbounds: Vec<Inbound>) -> Handled {
        for inbound in inbounds {
            if let Err(e) = self.sink.deliver(inbound).await {
                tracing::warn!(error = %e, "Slack Socket Mode envelope not stored; Slack will deliver it again.");
                return Handled::Retry;
            }
        }
        Handled::Ack(None)
    }
}

impl SocketHandler for Sink {
    async fn handle(&self, inbound: SocketInbound) -> Handled {
        match inbound {
            SocketInbound::Event(envelope) => match *envelope {
                EventEnvelope::EventCallback(callback) => {
                    let bot = self.platform.bot().await.map(|b| b.user_id.as_str());
                    self.store_all(event_inbound(*callback, bot).into_iter().collect())
                        .await
                }
                _ => Handled::Ack(None),
            },
            SocketInbound::Interaction(Interaction::BlockActions(actions)) => {
                self.store_all(click_inbounds(&actions)).await
            }
            SocketInbound::SlashCommand(command) => {
                let reply = self.sink.command(command_inbound(&command)).await;
                Handled::Ack(Some(command_reply(&reply)))
            }
            _ => Handled::Ack(None),
        }
    }
}
