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
//!   (WeCom takes it within 5 s); a refused click's answer updates only the clicker's copy,
//!   saying why; a click that changed nothing (a repeat) gets an empty answer, so the card
//!   stays as it is.

use std::sync::Arc;

use serde_json::{Value, json};
use workmate_adapter::{InboundKind, InboundSink, NotTaken};

use crate::card::{markdown, template_card};
use crate::inbound::{AppCallback, AppEventKind, RobotCallback, RobotEventKind};
use crate::mapping::{app_inbound, robot_inbound};
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
        RobotCallback::StreamRefresh(refresh) => {
            Ok(Some(platform.refresh(&refresh.stream_id).await))
        }
        RobotCallback::Message(message) => {
            let stream = stream_id(&message.msgid);
            let Some(mut inbound) = robot_inbound(callback, corp_id, bot_name) else {
                return Ok(Some(stream_message(&stream, TEXT_ONLY, true)));
            };
            let handle = match req_id {
                Some(req_id) => ReplyHandle::socket(&message.msgid, req_id),
                None => ReplyHandle::callback(&message.msgid, message.response_url.as_deref()),
            }
            .in_group(!inbound.direct);
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
            let clicker = inbound.user.id.clone();
            let reply = sink.click(inbound).await?;
            // A refusal goes on the clicker's own copy of the card, nobody else's.
            if let Some(card) = reply.refused_card() {
                return Ok(Some(json!({
                    "response_type": "update_template_card",
                    "userids": [clicker],
                    "template_card": template_card(&card, &card_event.task_id),
                })));
            }
            Ok(reply.card.map(|card| {
                json!({
                    "response_type": "update_template_card",
                    "template_card": template_card(&card, &card_event.task_id),
                })
            }))
        }
    }
}

/// Handles one decoded self-built-app callback, which WeCom wants answered with an empty body:
/// a message is stored (`Err` when it could not be, so WeCom delivers it again); a card click
/// runs now and updates the card through the click's single-use `response_code`; a menu item
/// runs its command, whose reply is sent to the person.
pub async fn dispatch_app(
    callback: &AppCallback,
    sink: &Arc<dyn InboundSink>,
    platform: &Arc<WeComPlatform>,
    corp_id: &str,
) -> Result<(), NotTaken> {
    let Some(mut inbound) = app_inbound(callback, corp_id) else {
        tracing::debug!("A WeCom app callback workmate does not act on.");
        return Ok(());
    };
    inbound.reply = Some(ReplyHandle::app().encode());
    let user = inbound.user.id.clone();
    match &inbound.kind {
        InboundKind::Click { .. } => {
            let (code, task) = match callback {
                AppCallback::Event(event) => match &event.kind {
                    AppEventKind::TemplateCard(card) => {
                        (card.response_code.clone(), card.task_id.clone())
                    }
                    _ => (None, String::new()),
                },
                _ => (None, String::new()),
            };
            // The click's answer will show the person how their card was settled: marked
            // before the click is taken, so the card's own update (which may come first) does
            // not tell them again.
            if code.is_some() {
                platform.settled_by_click(&task, &user, true);
            }
            let reply = sink.click(inbound).await?;
            let refused = reply.refused_card();
            let settles = refused.is_none();
            let updated = match (refused.or(reply.card), code) {
                (Some(card), Some(code)) => {
                    let card = template_card(&card, &task);
                    let updated = platform.update_app_card(&code, &user, &card).await;
                    if let Err(e) = &updated {
                        tracing::warn!(error = %e, "Cannot update a WeCom app card.");
                    }
                    updated.is_ok()
                }
                _ => false,
            };
            // A refused click settled nothing: the person is told once someone else answers.
            if !(updated && settles) {
                platform.settled_by_click(&task, &user, false);
            }
        }
        InboundKind::Command { .. } => {
            let reply = sink.command(inbound).await;
            let text = reply.card.as_ref().map_or(reply.text, markdown);
            if let Err(e) = platform.send_app_markdown(&user, &text).await {
                tracing::warn!(error = %e, "Cannot send a menu command's reply.");
            }
        }
        InboundKind::Message { .. } | InboundKind::Reply { .. } | InboundKind::Recall { .. } => {
            sink.deliver(inbound).await?;
        }
    }
    Ok(())
}
