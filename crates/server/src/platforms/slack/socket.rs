//! Slack in Socket Mode: the envelopes of [`workmate_slack::SocketMode`], fed to the same
//! handling as the HTTP routes after their signature check.
//!
//! Invariants: the client holds only a weak reference to the surface, so dropping the surface is
//! never kept back by its own socket; an event or a click is acked only once the work queue took
//! it, and one the full queue refuses is left unacked so Slack delivers it again (the event id
//! dedupe absorbs any double delivery); a slash command's reply is the ack's payload.

use std::sync::Weak;

use serde_json::json;
use tracing::warn;
use workmate_slack::{EventEnvelope, Handled, SocketHandler, SocketInbound};

use super::SlackSurface;

/// The surface, as the Socket Mode client's handler.
#[derive(Debug)]
pub(super) struct Inbound(pub(super) Weak<SlackSurface>);

impl SocketHandler for Inbound {
    async fn handle(&self, inbound: SocketInbound) -> Handled {
        let Some(slack) = self.0.upgrade() else {
            return Handled::Retry;
        };
        match inbound {
            SocketInbound::Event(envelope) => match *envelope {
                EventEnvelope::EventCallback(callback) => taken(slack.accept_event(*callback)),
                _ => Handled::Ack(None),
            },
            SocketInbound::Interaction(interaction) => taken(slack.accept_interaction(interaction)),
            SocketInbound::SlashCommand(command) => {
                let scheduler = slack.scheduler.get();
                let text = slack
                    .command_reply(&command, scheduler)
                    .await
                    .unwrap_or_else(|e| {
                        warn!(error = %e, "Slack Socket Mode slash command failed.");
                        format!("workmate could not run that command: {e}")
                    });
                Handled::Ack(Some(json!({"response_type": "ephemeral", "text": text})))
            }
            _ => Handled::Ack(None),
        }
    }
}

/// Ack what the queue took; leave for redelivery what it refused.
fn taken<E: std::fmt::Display>(accepted: Result<(), E>) -> Handled {
    match accepted {
        Ok(()) => Handled::Ack(None),
        Err(e) => {
            warn!(error = %e, "Slack Socket Mode envelope not taken; Slack will deliver it again.");
            Handled::Retry
        }
    }
}
