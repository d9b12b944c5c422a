//! What to do with one delivery that came over the Stream connection or passed its HTTP route's
//! signature check, the same for both: hand it to the chat layer and say what DingTalk gets back.
//!
//! - A robot message is stored; the answer is `{}` once it is durable, and [`NotTaken`] when it
//!   is not (the Stream frame stays unacked, the HTTP route answers 5xx: DingTalk pushes it
//!   again). A message workmate does not act on (a picture, no sender) is answered `{}`.
//! - An approval card click runs now ([`InboundSink::click`]), and its answer is the card data
//!   the clicker sees at once: `status` and `approver` of the decided card. DingTalk shows a
//!   callback's answer to the clicker only; the card pump then updates the card for everyone.
//!   A click on a card that is not an approval card of workmate's, or without a known choice,
//!   is answered `{}` and changes nothing.
//!
//! Invariant: a click's delivery id is the Stream frame's `messageId` (which a redelivery
//! repeats), or, over HTTP, one derived from the card, the clicker and the choice, so the same
//! click is never applied twice.

use serde_json::{Map, Value, json};
use workmate_adapter::{
    ClickReply, Inbound, InboundKind, InboundSink, InboundUser, NotTaken, ToastKind,
};
use workmate_cards::ButtonAction;
use workmate_protocol::{Resolution, Surface};

use crate::card::{Rendered, Template, callback_choice, item_id_of};
use crate::inbound::decode_robot;
use crate::mapping::robot_inbound;

/// Handles a robot message callback's body; the answer for DingTalk.
pub async fn robot_message(body: &str, sink: &dyn InboundSink) -> Result<Value, NotTaken> {
    let message = match decode_robot(body) {
        Ok(message) => message,
        Err(error) => {
            tracing::warn!(%error, "A DingTalk robot message workmate cannot read.");
            return Ok(json!({}));
        }
    };
    let Some(inbound) = robot_inbound(&message) else {
        tracing::debug!(msgtype = %message.msgtype, "A DingTalk robot message workmate does not act on.");
        return Ok(json!({}));
    };
    sink.deliver(inbound).await?;
    Ok(json!({}))
}

/// Handles a card callback's body; the answer for DingTalk (the clicker's card data).
/// `delivery_id` is the Stream frame's `messageId`, `None` over HTTP.
pub async fn card_callback(
    body: &str,
    delivery_id: Option<&str>,
    sink: &dyn InboundSink,
) -> Result<Value, NotTaken> {
    let Ok(callback) = serde_json::from_str::<Value>(body) else {
        tracing::warn!("A DingTalk card callback workmate cannot read.");
        return Ok(json!({}));
    };
    let Some(inbound) = click_inbound(&callback, delivery_id) else {
        tracing::debug!("A DingTalk card callback workmate does not act on.");
        return Ok(json!({}));
    };
    Ok(click_response(&sink.click(inbound).await?))
}

/// The click a card callback stands for: an approval card's (its `outTrackId` names the inbox
/// item) button with a known choice, from a clicker of an organisation.
pub fn click_inbound(callback: &Value, delivery_id: Option<&str>) -> Option<Inbound> {
    let text = |key: &str| {
        callback
            .get(key)
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
    };
    let out_track_id = text("outTrackId")?;
    let item_id = item_id_of(out_track_id)?;
    let choice = callback_choice(callback)?;
    let user = text("userId")?;
    let corp = text("corpId")?;
    let delivery_id = match delivery_id.filter(|id| !id.is_empty()) {
        Some(id) => id.to_owned(),
        None => format!("card:{out_track_id}:{user}:{}", choice.as_str()),
    };
    Some(Inbound {
        surface: Surface::Dingtalk,
        tenant_key: corp.to_owned(),
        delivery_id,
        user: InboundUser {
            id: user.to_owned(),
            name: None,
        },
        chat_id: text("spaceId").unwrap_or(out_track_id).to_owned(),
        thread_id: None,
        direct: text("spaceType") == Some("IM_ROBOT"),
        reply: None,
        message_ref: None,
        kind: InboundKind::Click {
            action: ButtonAction::Resolve {
                item_id,
                resolution: Resolution::Approval { choice },
            },
        },
    })
}

/// A card callback's answer, which DingTalk applies to the clicker's view only: the clicked
/// approval card's `status` and `approver` as it is now; for a refused click, its `detail` with
/// the refusal on top (DingTalk shows no toast for a callback); `{}` (nothing changes) when the
/// click changed no card.
pub fn click_response(reply: &ClickReply) -> Value {
    tracing::debug!(toast = %reply.toast, "DingTalk card click answered.");
    let Some(card) = &reply.card else {
        return json!({});
    };
    let rendered = Rendered::of(card);
    if rendered.template != Template::Approval {
        return json!({});
    }
    let refused = reply.kind == ToastKind::Error;
    let mut params: Map<String, Value> = rendered
        .params
        .into_iter()
        .filter(|(key, _)| {
            if refused {
                key == "detail"
            } else {
                key == "status" || key == "approver"
            }
        })
        .collect();
    if refused {
        let detail = params
            .get("detail")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let shown = format!("**⛔ {}**\n\n{detail}", reply.toast);
        params.insert("detail".into(), Value::String(shown));
    }
    json!({
        "cardData": { "cardParamMap": params },
        "cardUpdateOptions": { "updateCardDataByKey": true },
    })
}
