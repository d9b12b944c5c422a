//! Slack in Socket Mode: the envelopes of [`workmate_slack::SocketMode`], fed to the same
//! handling as the HTTP routes after their signature check.
//!
//! Invariants: the client holds only a weak reference to the surface, so dropping the surface is
//! never kept back by its own socket; an event or a click the queue cannot take is logged (it was
//! already acked, as Socket Mode requires); a slash command's reply is the ack's payload.

use std::sync::Weak;

use serde_json::{Value, json};
use tracing::warn;
use workmate_slack::{EventEnvelope, SocketHandler, SocketInbound};

use super::SlackSurface;

/// The surface, as the Socket Mode client's handler.
#[derive(Debug)]
pub(super) struct Inbound(pub(super) Weak<SlackSurface>);

impl SocketHandler for Inbound {
    async fn handle(&self, inbound: SocketInbound) -> Option<Value> {
        let slack = self.0.upgrade()?;
        match inbound {
            SocketInbound::Event(envelope) => {
                if let EventEnvelope::EventCallback(callback) = *envelope
                    && let Err(e) = slack.accept_event(*callback)
                {
                    warn!(error = %e, "Slack Socket Mode event dropped.");
                }
                None
            }
            SocketInbound::Interaction(interaction) => {
                if let Err(e) = slack.accept_interaction(interaction) {
                    warn!(error = %e, "Slack Socket Mode interaction dropped.");
                }
                None
            }
            SocketInbound::SlashCommand(command) => {
                let scheduler = slack.scheduler.get();
                let text = slack
                    .command_reply(&command, scheduler)
                    .await
                    .unwrap_or_else(|e| {
                        warn!(error = %e, "Slack Socket Mode slash command failed.");
                        format!("workmate could not run that command: {e}")
                    });
                Some(json!({"response_type": "ephemeral", "text": text}))
            }
            _ => None,
        }
    }
}
