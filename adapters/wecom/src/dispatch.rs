//! What to do with one smart-robot callback, verified (callback mode) or received over the long
//! connection: hand it to the chat layer and say what WeCom gets back, as plaintext JSON for the
//! caller to seal or to send with the frame's `req_id` (`None`: no answer).
//!
//! - A message is stored; once it is durable it is answered with an empty stream, which WeCom
//!   then asks for again and again ([`WeComPlatform::refresh`]). A redelivery gets the same
//!   stream (its id depends on the message id). A message workmate cannot read (an image) is
//!   answered at once, saying so.
//! - A stream refresh is answered with the stream's content.
//! - A template-card click runs now, and its answer carries the updated card for everyone
//!   (WeCom takes it within 5 s); a click that changed nothing (a stranger's, a repeat) gets an
//!   empty answer, so the card stays as it is.

use std::sync::Arc;

use serde_json::{Value, json};
use workmate_adapter::{InboundKind, InboundSink, NotTaken};

use crate::card::template_card;
use crate::inbound::{RobotCallback, RobotEventKind};
use crate::mapping::robot_inbound;
use crate::platform::{ReplyHandle, WeComPlatform, stream_id, stream_message};

/// What a message without text is answered.
const TEXT_ONLY: &str = "workmate reads text messages; please write your request.";

/// Handles one decoded smart-robot callback (see the module docs); `req_id` is the long
/// connection's frame, `None` in callback mode.
pub async fn dispatch_robot(
    callback: &RobotCallback,
    sink: &Arc<dyn InboundSink>,
    platform: &Arc<WeComPlatform>,
    corp_id: &str,
    req_id: Option<&str>,
) -> Result<Option<Value>, NotTaken> {
    let bot_name = None;
    match callback {
        RobotCallback::StreamRefresh(refresh) => Ok(Some(platform.refresh(&refresh.stream_id))),
        RobotCallback::Message(message) => {
            let stream = stream_id(&message.msgid);
            let Some(mut inbound) = robot_inbound(callback, corp_id, bot_name) else {
                return Ok(Some(stream_message(&stream, TEXT_ONLY, true)));
            };
            let handle = match req_id {
                Some(req_id) => ReplyHandle::socket(&message.msgid, req_id),
                None => ReplyHandle::callback(&message.msgid, message.response_url.as_deref()),
            };
            inbound.reply = Some(handle.encode());
            sink.deliver(inbound).await?;
            Ok(Some(stream_message(&stream, "", false)))
        }
        RobotCallback::Event(event) => {
            let RobotEventKind::TemplateCard(card_event) = &event.kind else {
                tracing::debug!("A WeCom event workmate does not act on.");
                return Ok(None);
            };
            let Some(inbound) = robot_inbound(callback, corp_id, bot_name) else {
                return Ok(None);
            };
            if !matches!(inbound.kind, InboundKind::Click { .. }) {
                return Ok(None);
            }
            let reply = sink.click(inbound).await?;
            Ok(reply.card.map(|card| {
                json!({
                    "response_type": "update_template_card",
                    "template_card": template_card(&card, &card_event.task_id),
                })
            }))
        }
    }
}
