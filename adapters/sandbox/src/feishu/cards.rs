//! CardKit card entities, in memory.
//!
//! Invariants: every operation on a card after its creation carries a `sequence` that must
//! exceed the card's last one (Feishu's rule, code 300317), and one that fails changes nothing,
//! neither the card nor its sequence; an operation repeated whole with an idempotency key the
//! card has already taken succeeds without running again (a retry), while another operation
//! under a key already taken is refused as a conflict (code 200770). A card is Card JSON 2.0 of at most
//! [`MAX_CARD_BYTES`]; its streaming text can be set only while `config.streaming_mode` is on
//! (code 300309). At most [`MAX_CARDS`] cards are kept (the oldest go first).

use std::collections::{BTreeMap, VecDeque};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Mutex, MutexGuard, PoisonError};

use serde_json::{Map, Value};

/// Cards kept.
pub(crate) const MAX_CARDS: usize = 1000;
/// Bytes of a card's JSON Feishu takes.
pub(crate) const MAX_CARD_BYTES: usize = 30 * 1024;
/// Idempotency keys remembered per card.
const REMEMBERED_KEYS: usize = 100;

/// Why Feishu refuses a card operation.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum CardError {
    /// No such card (200740).
    #[error("the card entity does not exist")]
    NotFound,
    /// The sequence does not exceed the last one (300317).
    #[error("sequence {got} does not exceed the card's last sequence {last}")]
    Sequence { last: i64, got: i64 },
    /// Streaming text outside streaming mode (300309, the code integrations report for it; the
    /// endpoint's documentation lists none).
    #[error("the card is not in streaming mode")]
    NotStreaming,
    /// Not Card JSON 2.0 (200220).
    #[error("cannot build the card: {0}")]
    BadCard(String),
    /// Larger than Feishu takes (200860).
    #[error("the card is {0} bytes, more than Feishu's 30 KB")]
    TooLarge(usize),
    /// Streaming needs a shared card (300302).
    #[error("a streaming card must set config.update_multi to true")]
    NotShared,
    /// The idempotency key was taken by another operation (200770).
    #[error("uuid {0:?} was used for another operation on this card")]
    KeyConflict(String),
    /// A parameter is wrong (10002).
    #[error("{0}")]
    BadParam(String),
}

impl CardError {
    /// Feishu's code for it.
    pub(crate) fn code(&self) -> i64 {
        match self {
            Self::NotFound => 200_740,
            Self::Sequence { .. } => 300_317,
            Self::NotStreaming => 300_309,
            Self::BadCard(_) => 200_220,
            Self::TooLarge(_) => 200_860,
            Self::NotShared => 300_302,
            Self::KeyConflict(_) => 200_770,
            Self::BadParam(_) => 10_002,
        }
    }
}

#[derive(Debug)]
struct Entity {
    card: Value,
    sequence: i64,
    /// Idempotency keys taken, with a fingerprint of the operation each took.
    keys: VecDeque<(String, u64)>,
    /// The message that shows it: an entity is sent once.
    sent_as: Option<String>,
}

#[derive(Debug, Default)]
struct Inner {
    cards: BTreeMap<String, Entity>,
    order: VecDeque<String>,
    counter: u64,
}

/// All card entities.
#[derive(Debug, Default)]
pub(crate) struct Cards {
    inner: Mutex<Inner>,
}

/// Checks that `card` is Card JSON 2.0 Feishu would take.
pub(crate) fn check(card: &Value) -> Result<(), CardError> {
    if card.get("schema").and_then(Value::as_str) != Some("2.0") {
        return Err(CardError::BadCard(
            "not Card JSON 2.0 (schema \"2.0\")".into(),
        ));
    }
    if !card.pointer("/body/elements").is_some_and(Value::is_array) {
        return Err(CardError::BadCard("no body.elements".into()));
    }
    let size = card.to_string().len();
    if size > MAX_CARD_BYTES {
        return Err(CardError::TooLarge(size));
    }
    if streaming(card) && card.pointer("/config/update_multi") != Some(&Value::Bool(true)) {
        return Err(CardError::NotShared);
    }
    Ok(())
}

fn streaming(card: &Value) -> bool {
    card.pointer("/config/streaming_mode") == Some(&Value::Bool(true))
}

/// A fingerprint of an operation: its kind, its sequence and what it sets.
fn fingerprint(kind: &str, sequence: i64, parts: &[&str]) -> u64 {
    let mut hasher = DefaultHasher::new();
    (kind, sequence, parts).hash(&mut hasher);
    hasher.finish()
}

/// The element with `element_id`, anywhere in the card's body.
pub(crate) fn element_mut<'a>(node: &'a mut Value, element_id: &str) -> Option<&'a mut Value> {
    if node.get("element_id").and_then(Value::as_str) == Some(element_id) {
        return Some(node);
    }
    match node {
        Value::Object(map) => map
            .values_mut()
            .filter(|v| v.is_array() || v.is_object())
            .find_map(|v| element_mut(v, element_id)),
        Value::Array(items) => items.iter_mut().find_map(|v| element_mut(v, element_id)),
        _ => None,
    }
}

impl Cards {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Every change is made whole under the lock, so a poisoned lock holds a usable map.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Creates a card entity; its `card_id` (digits, as Feishu's are).
    pub(crate) fn create(&self, card: Value) -> Result<String, CardError> {
        check(&card)?;
        let mut inner = self.lock();
        inner.counter += 1;
        let id = format!("7{:018}", inner.counter);
        while inner.order.len() >= MAX_CARDS {
            if let Some(old) = inner.order.pop_front() {
                inner.cards.remove(&old);
            }
        }
        inner.order.push_back(id.clone());
        inner.cards.insert(
            id.clone(),
            Entity {
                card,
                sequence: 0,
                keys: VecDeque::new(),
                sent_as: None,
            },
        );
        Ok(id)
    }

    /// Runs `change` on a card as one sequenced operation (see the module docs).
    fn operate(
        &self,
        card_id: &str,
        sequence: i64,
        key: Option<(&str, u64)>,
        change: impl FnOnce(&mut Value) -> Result<(), CardError>,
    ) -> Result<(), CardError> {
        if !(1..=i64::from(i32::MAX)).contains(&sequence) {
            return Err(CardError::BadParam(format!(
                "sequence {sequence} is not a positive int32"
            )));
        }
        let mut inner = self.lock();
        let entity = inner.cards.get_mut(card_id).ok_or(CardError::NotFound)?;
        if let Some((key, print)) = key
            && let Some((_, taken)) = entity.keys.iter().find(|(k, _)| k == key)
        {
            return if *taken == print {
                Ok(())
            } else {
                Err(CardError::KeyConflict(key.to_owned()))
            };
        }
        if sequence <= entity.sequence {
            return Err(CardError::Sequence {
                last: entity.sequence,
                got: sequence,
            });
        }
        let mut next = entity.card.clone();
        change(&mut next)?;
        check(&next)?;
        entity.card = next;
        entity.sequence = sequence;
        if let Some((key, print)) = key {
            while entity.keys.len() >= REMEMBERED_KEYS {
                entity.keys.pop_front();
            }
            entity.keys.push_back((key.to_owned(), print));
        }
        Ok(())
    }

    /// Replaces a card's whole content.
    pub(crate) fn update(
        &self,
        card_id: &str,
        card: Value,
        sequence: i64,
        key: Option<&str>,
    ) -> Result<(), CardError> {
        let key = key.map(|k| (k, fingerprint("update", sequence, &[&card.to_string()])));
        self.operate(card_id, sequence, key, |current| {
            *current = card;
            Ok(())
        })
    }

    /// Sets the text of a streaming card's text element.
    pub(crate) fn stream(
        &self,
        card_id: &str,
        element_id: &str,
        content: &str,
        sequence: i64,
        key: Option<&str>,
    ) -> Result<(), CardError> {
        let key = key.map(|k| (k, fingerprint("stream", sequence, &[element_id, content])));
        self.operate(card_id, sequence, key, |card| {
            if !streaming(card) {
                return Err(CardError::NotStreaming);
            }
            let element = element_mut(card, element_id).ok_or_else(|| {
                CardError::BadParam(format!("the card has no element {element_id:?}"))
            })?;
            match element.get("tag").and_then(Value::as_str) {
                Some("markdown" | "plain_text") => {
                    element["content"] = Value::from(content);
                    Ok(())
                }
                other => Err(CardError::BadParam(format!(
                    "element {element_id:?} is {other:?}, not markdown or plain_text text"
                ))),
            }
        })
    }

    /// Merges `settings.config` into the card's `config`.
    pub(crate) fn settings(
        &self,
        card_id: &str,
        settings: &Value,
        sequence: i64,
        key: Option<&str>,
    ) -> Result<(), CardError> {
        let Some(config) = settings.get("config").and_then(Value::as_object) else {
            return Err(CardError::BadParam("settings has no config object".into()));
        };
        let key = key.map(|k| {
            (
                k,
                fingerprint("settings", sequence, &[&settings.to_string()]),
            )
        });
        self.operate(card_id, sequence, key, |card| {
            let Some(card) = card.as_object_mut() else {
                return Err(CardError::BadCard("the card is not an object".into()));
            };
            let current = card
                .entry("config")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Some(current) = current.as_object_mut() {
                current.extend(config.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            Ok(())
        })
    }

    /// Replaces a card with the one a callback answered with; the sequence stays as it is.
    pub(crate) fn replace(&self, card_id: &str, card: Value) -> Result<(), CardError> {
        check(&card)?;
        let mut inner = self.lock();
        let entity = inner.cards.get_mut(card_id).ok_or(CardError::NotFound)?;
        entity.card = card;
        Ok(())
    }

    /// Marks a card as sent in `message_id`; refused when it was sent already or does not exist.
    pub(crate) fn send(&self, card_id: &str, message_id: &str) -> Result<(), CardError> {
        let mut inner = self.lock();
        let entity = inner.cards.get_mut(card_id).ok_or(CardError::NotFound)?;
        if entity.sent_as.is_some() {
            return Err(CardError::BadParam(format!(
                "card {card_id} was sent already; a card entity is sent once"
            )));
        }
        entity.sent_as = Some(message_id.to_owned());
        Ok(())
    }

    /// A card's content.
    pub(crate) fn get(&self, card_id: &str) -> Option<Value> {
        self.lock().cards.get(card_id).map(|e| e.card.clone())
    }

    /// Every card, by `card_id`.
    pub(crate) fn snapshot(&self) -> Value {
        let inner = self.lock();
        Value::Object(
            inner
                .cards
                .iter()
                .map(|(id, e)| (id.clone(), e.card.clone()))
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn card(streaming: bool, text: &str) -> Value {
        json!({"schema": "2.0", "config": {"update_multi": true, "streaming_mode": streaming},
               "body": {"elements": [{"tag": "markdown", "element_id": "e0", "content": text}]}})
    }

    #[test]
    fn a_sequence_must_grow_across_every_kind_of_operation() {
        let cards = Cards::default();
        let id = cards.create(card(true, "")).unwrap();
        cards.stream(&id, "e0", "Hel", 2, Some("s2")).unwrap();
        let stale = cards.stream(&id, "e0", "Hello", 2, Some("s2-again"));
        assert_eq!(stale, Err(CardError::Sequence { last: 2, got: 2 }));
        assert_eq!(stale.unwrap_err().code(), 300_317);
        assert_eq!(
            cards.update(&id, card(true, "x"), 1, None),
            Err(CardError::Sequence { last: 2, got: 1 })
        );
        let off = json!({"config": {"streaming_mode": false}});
        cards.settings(&id, &off, 3, None).unwrap();
        assert_eq!(
            cards.settings(&id, &off, 3, None),
            Err(CardError::Sequence { last: 3, got: 3 })
        );
        cards.update(&id, card(false, "Hello"), 4, None).unwrap();
        assert_eq!(
            cards.get(&id).unwrap()["body"]["elements"][0]["content"],
            "Hello"
        );
    }

    #[test]
    fn a_failed_operation_changes_nothing_and_a_repeated_key_is_taken_once() {
        let cards = Cards::default();
        let id = cards.create(card(false, "a")).unwrap();
        assert_eq!(
            cards.stream(&id, "e0", "b", 5, None),
            Err(CardError::NotStreaming)
        );
        // The refused call did not use up sequence 5.
        cards.update(&id, card(true, "b"), 5, Some("u5")).unwrap();
        // The same operation again under its key is a retry: a success that changes nothing.
        cards.update(&id, card(true, "b"), 5, Some("u5")).unwrap();
        // Another operation under that key is a conflict.
        assert_eq!(
            cards.update(&id, card(true, "c"), 6, Some("u5")),
            Err(CardError::KeyConflict("u5".into()))
        );
        assert_eq!(
            cards.get(&id).unwrap()["body"]["elements"][0]["content"],
            "b"
        );
        assert_eq!(
            cards.stream(&id, "e9", "x", 6, None).unwrap_err().code(),
            10_002
        );
        assert_eq!(
            cards.update("7000", card(true, "b"), 9, None),
            Err(CardError::NotFound)
        );
        assert_eq!(
            cards
                .update(&id, card(true, "b"), 0, None)
                .unwrap_err()
                .code(),
            10_002
        );
    }

    #[test]
    fn only_shared_card_json_2_within_the_size_limit_is_taken() {
        let cards = Cards::default();
        assert_eq!(
            cards.create(json!({"elements": []})).unwrap_err().code(),
            200_220
        );
        let mut unshared = card(true, "a");
        unshared["config"]["update_multi"] = json!(false);
        assert_eq!(cards.create(unshared), Err(CardError::NotShared));
        let huge = card(false, &"x".repeat(MAX_CARD_BYTES));
        assert_eq!(cards.create(huge).unwrap_err().code(), 200_860);
    }

    #[test]
    fn a_card_is_sent_once() {
        let cards = Cards::default();
        let id = cards.create(card(false, "a")).unwrap();
        cards.send(&id, "om_1").unwrap();
        assert!(cards.send(&id, "om_2").is_err());
        assert_eq!(cards.send("7404", "om_3"), Err(CardError::NotFound));
    }
}
