//! Card callbacks: `card.action.trigger` (schema 2.0) and the legacy flat shape.

use serde::Deserialize;
use serde_json::Value;

use super::{DecodeError, UserIds};

/// A click on a card's button.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct CardAction {
    /// Who clicked.
    pub operator: Operator,
    /// The delayed-update token (valid 30 minutes, twice).
    #[serde(default)]
    pub token: Option<String>,
    /// The button's action.
    pub action: ActionValue,
    /// Where the card is.
    #[serde(default)]
    pub context: CardContext,
}

/// The person who clicked.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct Operator {
    /// Their ids (the open id can be missing across tenants; the user id stands in).
    #[serde(flatten)]
    pub ids: UserIds,
    /// Their tenant.
    #[serde(default)]
    pub tenant_key: Option<String>,
}

/// The clicked button's payload.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct ActionValue {
    /// The button's callback value: an object, or a JSON string on old clients.
    #[serde(default)]
    pub value: Value,
    /// The component (`button`, …).
    #[serde(default)]
    pub tag: Option<String>,
}

/// Where the clicked card is.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct CardContext {
    /// The message that carries the card.
    #[serde(default)]
    pub open_message_id: Option<String>,
    /// Its chat.
    #[serde(default)]
    pub open_chat_id: Option<String>,
}

/// A legacy (flat) card callback.
pub(super) fn legacy(plaintext: &str) -> Result<CardAction, DecodeError> {
    #[derive(Deserialize)]
    struct Flat {
        #[serde(flatten)]
        ids: UserIds,
        #[serde(default)]
        tenant_key: Option<String>,
        #[serde(default)]
        token: Option<String>,
        action: ActionValue,
        #[serde(default)]
        open_message_id: Option<String>,
        #[serde(default)]
        open_chat_id: Option<String>,
    }
    let flat = serde_json::from_str::<Flat>(plaintext)
        .map_err(|e| DecodeError(format!("card callback: {e}")))?;
    Ok(CardAction {
        operator: Operator {
            ids: flat.ids,
            tenant_key: flat.tenant_key,
        },
        token: flat.token,
        action: flat.action,
        context: CardContext {
            open_message_id: flat.open_message_id,
            open_chat_id: flat.open_chat_id,
        },
    })
}
