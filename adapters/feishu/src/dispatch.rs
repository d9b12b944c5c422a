//! What to do with one verified delivery, the same for the webhook routes and the long
//! connection: hand it to the chat layer and say what Feishu gets back.
//!
//! - The URL verification handshake is echoed.
//! - A message is stored; the answer is `{}` once it is durable, and [`NotTaken`] when it is not
//!   (no 200: Feishu delivers it again).
//! - A click runs now, and its answer carries the toast and the updated card (Feishu shows an
//!   error when a callback is not answered within 3 s, and rolls the click back when the answer
//!   has no card).
//! - A bot-menu command runs now; its reply is sent to the person as a direct message, after
//!   the acknowledgement.

use std::sync::Arc;

use serde_json::{Value, json};
use workmate_adapter::{ClickReply, InboundKind, InboundSink, NotTaken, ToastKind};

use crate::FeishuPlatform;
use crate::card;
use crate::inbound::Envelope;
use crate::mapping::event_inbound;

/// Handles one decoded delivery; the JSON answer for Feishu.
pub async fn dispatch(
    envelope: Envelope<'_>,
    sink: &Arc<dyn InboundSink>,
    platform: &Arc<FeishuPlatform>,
    bot: Option<&str>,
) -> Result<Value, NotTaken> {
    let (meta, event) = match envelope {
        Envelope::Challenge { challenge, .. } => return Ok(json!({ "challenge": challenge })),
        Envelope::Event { meta, event } => (meta, event),
    };
    let Some(inbound) = event_inbound(&meta, &event, bot) else {
        tracing::debug!(event_type = %meta.event_type, "A Feishu event workmate does not act on.");
        return Ok(json!({}));
    };
    match &inbound.kind {
        InboundKind::Click { .. } => Ok(click_response(&sink.click(inbound).await?)),
        InboundKind::Command { .. } => {
            let user = inbound.user.id.clone();
            let reply = sink.command(inbound).await;
            let platform = Arc::clone(platform);
            tokio::spawn(async move {
                let card = reply.card.unwrap_or_else(|| workmate_cards::Card {
                    blocks: workmate_cards::markdown_to_blocks(&reply.text),
                });
                if let Err(e) = platform.direct_card(&user, &card).await {
                    tracing::warn!(error = %e, "Cannot send a menu command's reply.");
                }
            });
            Ok(json!({}))
        }
        InboundKind::Message { .. } | InboundKind::Reply { .. } | InboundKind::Recall { .. } => {
            sink.deliver(inbound).await?;
            Ok(json!({}))
        }
    }
}

/// A card callback's answer: the toast, and the card when it changed (a refused click changed
/// nothing: its toast says why, to the clicker alone).
pub fn click_response(reply: &ClickReply) -> Value {
    let kind = match reply.kind {
        ToastKind::Info => "info",
        ToastKind::Success => "success",
        ToastKind::Warning => "warning",
        ToastKind::Error => "error",
    };
    let mut answer = json!({ "toast": { "type": kind, "content": reply.toast } });
    if let Some(changed) = reply
        .card
        .as_ref()
        .filter(|_| reply.kind != ToastKind::Error)
    {
        answer["card"] = json!({ "type": "raw", "data": card::render(changed) });
    }
    answer
}
