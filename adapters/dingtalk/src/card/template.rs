//! A card of the IR as the data of one of workmate's two DingTalk templates, which is what the
//! platform's `render` returns and its `post` and `update` read back.
//!
//! - An approval prompt (pending or decided, see [`super::prompt`]) fills the **approval**
//!   template: `{"template": "approval", "itemId": "<inbox item>", "cardParamMap": {…}}`
//!   (`itemId` only while its buttons show it).
//! - Any other card (turn segments, answer pages, questions, notices) fills the **answer**
//!   template, an AI card: `{"template": "answer", "cardParamMap": {"content": "<markdown>",
//!   "flowStatus": "2"|"3"|"5"}}`. Its buttons are left out: the approval template's buttons
//!   carry only approval choices, and the AI card has none.
//!
//! Both carry `fingerprint`, a hash of the whole IR card (its buttons' ids included), from which
//! a card without an item gets its `outTrackId`.
//!
//! Invariants: every `cardParamMap` value is a string; [`Rendered::from_value`] reads back
//! exactly what [`Rendered::to_value`] wrote; a card is `Inputing` exactly while it offers the
//! Stop button (its turn runs and it is the newest card of it), `Failed` when its status line
//! says the turn failed, `Finished` otherwise.

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use workmate_cards::{Block, ButtonAction, Card, Inline};
use workmate_protocol::InboxItemId;

use super::markdown::markdown;
use super::prompt::approval_params_of;

/// Which template a card fills.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Template {
    /// The approval card (`templates/approval.json`), the configured approval template id.
    Approval,
    /// The AI answer card (`templates/answer.json`), the configured answer template id.
    Answer,
}

impl Template {
    /// The word in the rendered JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Approval => "approval",
            Self::Answer => "answer",
        }
    }
}

/// The AI card's `flowStatus` (DingTalk's AI card states).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FlowStatus {
    /// `2`, 输入中: the answer is being written.
    Inputing,
    /// `3`, 执行完成: done.
    Finished,
    /// `5`, 执行失败: failed.
    Failed,
}

impl FlowStatus {
    /// The value DingTalk reads.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Inputing => "2",
            Self::Finished => "3",
            Self::Failed => "5",
        }
    }

    fn parse(value: &str) -> Option<Self> {
        [Self::Inputing, Self::Finished, Self::Failed]
            .into_iter()
            .find(|s| s.as_str() == value)
    }
}

/// A card as template data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rendered {
    /// The template it fills.
    pub template: Template,
    /// Its `cardParamMap`.
    pub params: Map<String, Value>,
    /// The inbox item an approval card's buttons resolve, while they show.
    pub item_id: Option<InboxItemId>,
    /// A hash of the IR card, in hex.
    pub fingerprint: String,
}

impl Rendered {
    /// The template data of `card` (see the module docs).
    pub fn of(card: &Card) -> Self {
        let fingerprint = fingerprint(card);
        if let Some((item_id, params)) = approval_params_of(card) {
            return Self {
                template: Template::Approval,
                params,
                item_id,
                fingerprint,
            };
        }
        let mut params = Map::new();
        params.insert("content".into(), Value::String(markdown(card)));
        params.insert(
            "flowStatus".into(),
            Value::String(flow_status(card).as_str().to_owned()),
        );
        Self {
            template: Template::Answer,
            params,
            item_id: None,
            fingerprint,
        }
    }

    /// The answer card's state; `None` for an approval card.
    pub fn flow_status(&self) -> Option<FlowStatus> {
        match self.template {
            Template::Approval => None,
            Template::Answer => self
                .params
                .get("flowStatus")
                .and_then(Value::as_str)
                .and_then(FlowStatus::parse),
        }
    }

    /// The answer card's markdown (`""` for an approval card).
    pub fn content(&self) -> &str {
        self.params
            .get("content")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// As JSON.
    pub fn to_value(&self) -> Value {
        let mut value = json!({
            "template": self.template.as_str(),
            "cardParamMap": self.params,
            "fingerprint": self.fingerprint,
        });
        if let Some(item) = &self.item_id {
            value["itemId"] = json!(item);
        }
        value
    }

    /// Reads back what [`Rendered::to_value`] wrote; `None` for anything else.
    pub fn from_value(value: &Value) -> Option<Self> {
        let template = match value.get("template")?.as_str()? {
            "approval" => Template::Approval,
            "answer" => Template::Answer,
            _ => return None,
        };
        let params = value.get("cardParamMap")?.as_object()?.clone();
        if !params.values().all(Value::is_string) {
            return None;
        }
        let item_id = value
            .get("itemId")
            .and_then(Value::as_str)
            .map(InboxItemId::from);
        let fingerprint = value
            .get("fingerprint")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        Some(Self {
            template,
            params,
            item_id,
            fingerprint,
        })
    }
}

/// The template data of `card` as JSON: the platform's `render`.
pub fn render(card: &Card) -> Value {
    Rendered::of(card).to_value()
}

/// Where an answer card stands (see the module docs).
fn flow_status(card: &Card) -> FlowStatus {
    let stoppable = card.blocks.iter().any(|block| {
        matches!(block, Block::Actions(buttons)
            if buttons.iter().any(|b| matches!(b.action, ButtonAction::Stop { .. })))
    });
    if stoppable {
        return FlowStatus::Inputing;
    }
    let failed = matches!(card.blocks.first(), Some(Block::Context(inlines))
        if inlines.first().is_some_and(|i| matches!(i, Inline::Text(t) if t.starts_with("❌"))));
    if failed {
        FlowStatus::Failed
    } else {
        FlowStatus::Finished
    }
}

fn fingerprint(card: &Card) -> String {
    let text = serde_json::to_string(card).unwrap_or_default();
    hex::encode(&Sha256::digest(text.as_bytes())[..16])
}
