//! Card callbacks: `card.action.trigger` (schema 2.0) and the legacy flat shape.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;

use super::{DecodeError, UserIds};

/// A click on a card's button.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct CardAction<'a> {
    /// Who clicked.
    #[serde(borrow)]
    pub operator: Operator<'a>,
    /// The delayed-update token (valid 30 minutes, twice).
    #[serde(default, borrow, deserialize_with = "super::optional")]
    pub token: Option<Cow<'a, str>>,
    /// The button's action.
    #[serde(borrow)]
    pub action: ActionValue<'a>,
    /// Where the card is.
    #[serde(default, borrow)]
    pub context: CardContext<'a>,
}

/// The person who clicked.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct Operator<'a> {
    /// Their ids (the open id can be missing across tenants; the user id stands in).
    #[serde(flatten, borrow)]
    pub ids: UserIds<'a>,
    /// Their tenant.
    #[serde(default, borrow, deserialize_with = "super::optional")]
    pub tenant_key: Option<Cow<'a, str>>,
}

/// The clicked button's payload.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct ActionValue<'a> {
    /// The button's callback value: an object, or a JSON string on old clients.
    #[serde(default)]
    pub value: Value,
    /// The component (`button`, …).
    #[serde(default, borrow, deserialize_with = "super::optional")]
    pub tag: Option<Cow<'a, str>>,
}

/// Where the clicked card is.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct CardContext<'a> {
    /// The message that carries the card.
    #[serde(default, borrow, deserialize_with = "super::optional")]
    pub open_message_id: Option<Cow<'a, str>>,
    /// Its chat.
    #[serde(default, borrow, deserialize_with = "super::optional")]
    pub open_chat_id: Option<Cow<'a, str>>,
}

/// A legacy (flat) card callback.
pub(super) fn legacy(plaintext: &str) -> Result<CardAction<'_>, DecodeError> {
    #[derive(Deserialize)]
    struct Flat<'a> {
        #[serde(flatten, borrow)]
        ids: UserIds<'a>,
        #[serde(default, borrow, deserialize_with = "super::optional")]
        tenant_key: Option<Cow<'a, str>>,
        #[serde(default, borrow, deserialize_with = "super::optional")]
        token: Option<Cow<'a, str>>,
        #[serde(borrow)]
        action: ActionValue<'a>,
        #[serde(default, borrow, deserialize_with = "super::optional")]
        open_message_id: Option<Cow<'a, str>>,
        #[serde(default, borrow, deserialize_with = "super::optional")]
        open_chat_id: Option<Cow<'a, str>>,
    }
    let flat = serde_json::from_str::<Flat<'_>>(plaintext)
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
