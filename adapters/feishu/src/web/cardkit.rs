//! CardKit: card entities that stream.
//!
//! Every update carries a `sequence` that must grow strictly per card; the caller supplies it
//! (the chat layer's card store hands out versions that grow across processes).

use reqwest::Method;
use serde_json::{Value, json};

use super::messages::idempotency_key;
use super::{FeishuWeb, WebError, data_str};

const CARDS: &str = "/open-apis/cardkit/v1/cards";

impl FeishuWeb {
    /// Creates a card entity from Card JSON 2.0; its `card_id`.
    pub async fn create_card(&self, card: &Value) -> Result<String, WebError> {
        let body = json!({ "type": "card_json", "data": card.to_string() });
        let answer = self.call(Method::POST, CARDS, Some(&body)).await?;
        data_str(&answer, CARDS, "card_id")
    }

    /// Replaces a card entity's whole content.
    pub async fn update_card(
        &self,
        card_id: &str,
        card: &Value,
        sequence: i64,
    ) -> Result<(), WebError> {
        let path = format!("{CARDS}/{card_id}");
        let body = json!({
            "card": { "type": "card_json", "data": card.to_string() },
            "sequence": sequence,
            "uuid": idempotency_key(&format!("u{sequence}-{card_id}")),
        });
        self.call(Method::PUT, &path, Some(&body)).await.map(drop)
    }

    /// Sets the full text of one element of a streaming card (the typewriter effect).
    pub async fn stream_element(
        &self,
        card_id: &str,
        element_id: &str,
        content: &str,
        sequence: i64,
    ) -> Result<(), WebError> {
        let path = format!("{CARDS}/{card_id}/elements/{element_id}/content");
        let body = json!({
            "content": content,
            "sequence": sequence,
            "uuid": idempotency_key(&format!("s{sequence}-{card_id}")),
        });
        self.call(Method::PUT, &path, Some(&body)).await.map(drop)
    }

    /// Turns a card's streaming mode on or off.
    pub async fn set_streaming(
        &self,
        card_id: &str,
        streaming: bool,
        sequence: i64,
    ) -> Result<(), WebError> {
        let path = format!("{CARDS}/{card_id}/settings");
        let settings = json!({ "config": { "streaming_mode": streaming } });
        let body = json!({
            "settings": settings.to_string(),
            "sequence": sequence,
            "uuid": idempotency_key(&format!("c{sequence}-{card_id}")),
        });
        self.call(Method::PATCH, &path, Some(&body)).await.map(drop)
    }
}
