//! The interactive cards, by `outTrackId`, as DingTalk keeps them: each card's shared data, each
//! viewer's private data, and for an AI card whether its stream was finalized or failed.
//!
//! Invariants: every stored `cardParamMap` value is a string; a card is created once per
//! `outTrackId` (a second create is the same card delivered again, its data unchanged); a
//! streamed AI card takes no more streaming once finalized, as DingTalk refuses it; at most
//! [`MAX_CARDS`] cards are kept (the oldest go first). The lock is never held across an
//! `.await`.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Mutex, PoisonError};

use serde::Serialize;
use serde_json::{Map, Value, json};

/// Cards kept.
pub(crate) const MAX_CARDS: usize = 1000;

/// Which template a card is drawn from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Kind {
    /// The configured approval template (`templates/approval.json`).
    Approval,
    /// Any other template: the AI answer card, whose streaming variable is `content`.
    Answer,
}

/// One card.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Card {
    pub(crate) kind: Kind,
    /// The chat it was delivered into: the group, or a person's staff id.
    pub(crate) space: String,
    /// How its buttons' clicks come back (`HTTP`, `STREAM`, or empty for none).
    pub(crate) callback_type: String,
    /// The shared data, everyone's view.
    pub(crate) params: Map<String, Value>,
    /// Each viewer's private data (a click's answer), over the shared data.
    pub(crate) private: BTreeMap<String, Map<String, Value>>,
    /// The AI card's stream ended (`isFinalize`).
    pub(crate) finalized: bool,
    /// The AI card's stream ended in failure (`isError`).
    pub(crate) failed: bool,
}

impl Card {
    /// What `viewer` sees: the shared data with their private data over it.
    pub(crate) fn view(&self, viewer: &str) -> Map<String, Value> {
        let mut view = self.params.clone();
        if let Some(private) = self.private.get(viewer) {
            view.extend(private.clone());
        }
        view
    }

    /// Whether `viewer` sees a button for `choice`: the approval is pending and offers it.
    pub(crate) fn offers(&self, viewer: &str, choice: &str) -> bool {
        let view = self.view(viewer);
        let pending = view.get("status").and_then(Value::as_str) == Some("pending");
        let choices: Vec<String> = view
            .get("choices")
            .and_then(Value::as_str)
            .and_then(|c| serde_json::from_str(c).ok())
            .unwrap_or_default();
        self.kind == Kind::Approval && pending && choices.iter().any(|c| c == choice)
    }
}

/// Why a card operation was refused.
pub(crate) type Refused = String;

/// `cardParamMap` as DingTalk takes it: an object of strings.
pub(crate) fn param_map(value: Option<&Value>) -> Result<Map<String, Value>, Refused> {
    let map = match value {
        None | Some(Value::Null) => return Ok(Map::new()),
        Some(Value::Object(map)) => map,
        Some(_) => return Err("cardParamMap is not an object".into()),
    };
    if let Some((key, _)) = map.iter().find(|(_, v)| !v.is_string()) {
        return Err(format!("cardParamMap.{key} is not a string"));
    }
    Ok(map.clone())
}

/// Merges `update` into `params` by key, or replaces them.
fn apply(params: &mut Map<String, Value>, update: Map<String, Value>, by_key: bool) {
    if by_key {
        params.extend(update);
    } else {
        *params = update;
    }
}

/// All cards.
#[derive(Debug, Default)]
pub(crate) struct Cards {
    inner: Mutex<VecDeque<(String, Card)>>,
}

impl Cards {
    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<(String, Card)>> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A card by `outTrackId`.
    pub(crate) fn get(&self, out_track_id: &str) -> Option<Card> {
        self.lock()
            .iter()
            .find(|(id, _)| id == out_track_id)
            .map(|(_, card)| card.clone())
    }

    /// Stores a new card; `false` when `out_track_id` is taken (the card stays as it is).
    pub(crate) fn create(&self, out_track_id: &str, card: Card) -> bool {
        let mut cards = self.lock();
        if cards.iter().any(|(id, _)| id == out_track_id) {
            return false;
        }
        while cards.len() >= MAX_CARDS {
            cards.pop_front();
        }
        cards.push_back((out_track_id.to_owned(), card));
        true
    }

    /// Runs `change` on the card `out_track_id`.
    fn change<T>(
        &self,
        out_track_id: &str,
        change: impl FnOnce(&mut Card) -> Result<T, Refused>,
    ) -> Result<T, Refused> {
        let mut cards = self.lock();
        let card = cards
            .iter_mut()
            .find(|(id, _)| id == out_track_id)
            .map(|(_, card)| card)
            .ok_or_else(|| format!("no card instance {out_track_id:?}"))?;
        change(card)
    }

    /// Sets the shared data (`by_key`: only the keys given).
    pub(crate) fn update(
        &self,
        out_track_id: &str,
        params: Map<String, Value>,
        by_key: bool,
    ) -> Result<(), Refused> {
        self.change(out_track_id, |card| {
            apply(&mut card.params, params, by_key);
            Ok(())
        })
    }

    /// Sets `viewer`'s private data (`by_key`: only the keys given).
    pub(crate) fn update_private(
        &self,
        out_track_id: &str,
        viewer: &str,
        params: Map<String, Value>,
        by_key: bool,
    ) -> Result<(), Refused> {
        self.change(out_track_id, |card| {
            apply(
                card.private.entry(viewer.to_owned()).or_default(),
                params,
                by_key,
            );
            Ok(())
        })
    }

    /// Streams `content` into the AI card's `key` (whole when `full`, else appended).
    pub(crate) fn stream(
        &self,
        out_track_id: &str,
        key: &str,
        content: &str,
        full: bool,
        finalize: bool,
        error: bool,
    ) -> Result<(), Refused> {
        self.change(out_track_id, |card| {
            if card.kind != Kind::Answer {
                return Err("the card is not an AI card: it has no streaming variable".into());
            }
            if key != "content" {
                return Err(format!("the AI card has no streaming variable {key:?}"));
            }
            if card.finalized {
                return Err("the card's stream is finalized".into());
            }
            let text = if full {
                content.to_owned()
            } else {
                let was = card.params.get(key).and_then(Value::as_str).unwrap_or("");
                format!("{was}{content}")
            };
            card.params.insert(key.to_owned(), Value::String(text));
            card.finalized = finalize || error;
            card.failed = error;
            Ok(())
        })
    }

    /// Every card, by `outTrackId`.
    pub(crate) fn snapshot(&self) -> Value {
        let cards: Map<String, Value> = self
            .lock()
            .iter()
            .map(|(id, card)| (id.clone(), json!(card)))
            .collect();
        Value::Object(cards)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn approval() -> Card {
        let params = param_map(Some(
            &json!({"status": "pending", "choices": "[\"once\",\"deny\"]"}),
        ));
        Card {
            kind: Kind::Approval,
            space: "cid".into(),
            callback_type: "HTTP".into(),
            params: params.unwrap(),
            private: BTreeMap::new(),
            finalized: false,
            failed: false,
        }
    }

    #[test]
    fn a_clicker_sees_their_private_data_and_others_the_shared_data() {
        let cards = Cards::default();
        assert!(cards.create("c1", approval()));
        assert!(!cards.create("c1", approval()));
        assert!(cards.get("c1").unwrap().offers("ana", "once"));
        assert!(!cards.get("c1").unwrap().offers("ana", "always_tool"));
        let answer = param_map(Some(&json!({"status": "approved", "approver": "Ana"}))).unwrap();
        cards.update_private("c1", "ana", answer, true).unwrap();
        let card = cards.get("c1").unwrap();
        assert_eq!(card.view("ana")["status"], "approved");
        assert_eq!(card.view("ana")["choices"], "[\"once\",\"deny\"]");
        assert_eq!(card.view("bob")["status"], "pending");
        assert!(!card.offers("ana", "once") && card.offers("bob", "once"));
        assert!(param_map(Some(&json!({"status": 1}))).is_err());
        assert!(cards.update("c2", Map::new(), true).is_err());
    }

    #[test]
    fn an_ai_card_streams_until_finalized() {
        let cards = Cards::default();
        let card = Card {
            kind: Kind::Answer,
            ..approval()
        };
        cards.create("a1", card);
        cards
            .stream("a1", "content", "Hel", true, false, false)
            .unwrap();
        cards
            .stream("a1", "content", "lo", false, false, false)
            .unwrap();
        assert_eq!(cards.get("a1").unwrap().params["content"], "Hello");
        assert!(
            cards
                .stream("a1", "other", "x", true, false, false)
                .is_err()
        );
        cards
            .stream("a1", "content", "Done", true, true, false)
            .unwrap();
        assert!(cards.get("a1").unwrap().finalized);
        assert!(
            cards
                .stream("a1", "content", "more", true, false, false)
                .is_err()
        );
        cards.create("p1", approval());
        assert!(
            cards
                .stream("p1", "content", "x", true, false, false)
                .is_err()
        );
    }
}
