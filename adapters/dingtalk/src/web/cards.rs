//! Interactive cards: create one from a template and deliver it into a chat, update its shared
//! data for everyone, and stream an AI card's markdown.
//!
//! Invariants: every `cardParamMap` value is a string (the callers' maps are; DingTalk rejects
//! anything else); a card is addressed only by its `outTrackId`, which the caller chooses; a
//! create whose delivery into the chat failed (HTTP 200 with `deliverResults[].success: false`,
//! e.g. the robot is not in the group) is a failure, not a card.

use reqwest::Method;
use serde_json::{Map, Value, json};

use super::{DingTalkWeb, WebError};

/// Create a card and deliver it.
pub const CREATE_AND_DELIVER_PATH: &str = "/v1.0/card/instances/createAndDeliver";
/// Update a card's data.
pub const INSTANCES_PATH: &str = "/v1.0/card/instances";
/// Stream a card variable's content.
pub const STREAMING_PATH: &str = "/v1.0/card/streaming";
/// The variable of the answer card that streams.
pub const STREAMING_KEY: &str = "content";

/// How DingTalk hands a card's button clicks back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallbackType {
    /// Over the Stream connection (topic `/v1.0/card/instances/callback`).
    Stream,
    /// POSTed to the URL registered under `route_key` (`POST /v1/platforms/dingtalk/card`).
    Http {
        /// The `callbackRouteKey` registered with `/v1.0/card/callbacks/register`.
        route_key: String,
    },
}

/// Who a card is for, beyond everyone in its space.
#[derive(Clone, Copy, Debug, Default)]
pub struct CardAudience<'a> {
    /// User id to `{"cardParamMap": {…}}`, which only that user's client receives; empty for
    /// none.
    pub private_data: Option<&'a Map<String, Value>>,
    /// In a group, the person the card answers (user id): the card @-mentions them.
    pub mention: Option<&'a str>,
}

/// Where a card is delivered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CardSpace<'a> {
    /// A group the robot is in, by its open conversation id (`cid…`).
    Group(&'a str),
    /// A person's one-to-one chat with the robot, by user id.
    Robot(&'a str),
}

impl DingTalkWeb {
    /// Creates a card of `template_id` with `params` and delivers it into `space`, as
    /// `out_track_id`; `callback` for a card with buttons; `audience` for its private data and
    /// whom it mentions.
    pub async fn create_and_deliver(
        &self,
        template_id: &str,
        out_track_id: &str,
        params: &Map<String, Value>,
        audience: CardAudience<'_>,
        space: CardSpace<'_>,
        callback: Option<&CallbackType>,
    ) -> Result<(), WebError> {
        let mut body = json!({
            "cardTemplateId": template_id,
            "outTrackId": out_track_id,
            "cardData": { "cardParamMap": params },
            "userIdType": 1,
        });
        if let Some(private_data) = audience.private_data.filter(|d| !d.is_empty()) {
            body["privateData"] = Value::Object(private_data.clone());
        }
        match callback {
            Some(CallbackType::Stream) => body["callbackType"] = json!("STREAM"),
            Some(CallbackType::Http { route_key }) => {
                body["callbackType"] = json!("HTTP");
                body["callbackRouteKey"] = json!(route_key);
            }
            None => {}
        }
        match space {
            CardSpace::Group(conversation) => {
                body["openSpaceId"] = json!(format!("dtv1.card//IM_GROUP.{conversation}"));
                body["imGroupOpenSpaceModel"] = json!({ "supportForward": true });
                body["imGroupOpenDeliverModel"] = json!({ "robotCode": self.client_id });
                if let Some(person) = audience.mention {
                    body["imGroupOpenDeliverModel"]["atUserIds"] = json!({ person: person });
                }
            }
            CardSpace::Robot(user) => {
                body["openSpaceId"] = json!(format!("dtv1.card//IM_ROBOT.{user}"));
                body["imRobotOpenSpaceModel"] = json!({ "supportForward": true });
                body["imRobotOpenDeliverModel"] =
                    json!({ "spaceType": "IM_ROBOT", "robotCode": self.client_id });
            }
        }
        let answer = self
            .call(Method::POST, CREATE_AND_DELIVER_PATH, &body)
            .await?;
        let failed = answer
            .pointer("/result/deliverResults")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|r| r.get("success") == Some(&Value::Bool(false)));
        if let Some(failed) = failed {
            let message = failed
                .get("errorMsg")
                .and_then(Value::as_str)
                .unwrap_or("the card was not delivered");
            return Err(WebError::Api {
                path: CREATE_AND_DELIVER_PATH.to_owned(),
                status: 200,
                code: "deliverResults".into(),
                message: message.to_owned(),
            });
        }
        Ok(())
    }

    /// Sets the shared data of card `out_track_id` for everyone who sees it: the keys of `params`
    /// change, the others keep their values.
    pub async fn update_card_data(
        &self,
        out_track_id: &str,
        params: &Map<String, Value>,
    ) -> Result<(), WebError> {
        let body = json!({
            "outTrackId": out_track_id,
            "cardData": { "cardParamMap": params },
            "cardUpdateOptions": { "updateCardDataByKey": true },
            "userIdType": 1,
        });
        self.call(Method::PUT, INSTANCES_PATH, &body)
            .await
            .map(drop)
    }

    /// Replaces the whole streamed `content` of AI card `out_track_id` (`isFull`); `finalize`
    /// ends the stream, `error` marks it failed. `guid` is unique per call.
    pub async fn stream_content(
        &self,
        out_track_id: &str,
        guid: &str,
        content: &str,
        finalize: bool,
        error: bool,
    ) -> Result<(), WebError> {
        let body = json!({
            "outTrackId": out_track_id,
            "guid": guid,
            "key": STREAMING_KEY,
            "content": content,
            "isFull": true,
            "isFinalize": finalize,
            "isError": error,
        });
        self.call(Method::PUT, STREAMING_PATH, &body)
            .await
            .map(drop)
    }
}
