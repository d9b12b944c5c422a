//! A fake chat platform: renders a card as its plain text and records every call.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use workmate_adapter::{
    AdapterError, BoxFuture, ChatAdapter, ChatPlatform, ChatTarget, Platform, PostedCard, Profile,
};
use workmate_cards::{Block, ButtonAction, Card};

use super::SURFACE;

/// One thing the chat layer sent.
#[derive(Clone, Debug, PartialEq)]
pub enum Sent {
    /// A card posted (its rendering) into a thread.
    Post { thread: Option<String>, card: Value },
    /// A posted card changed.
    Update { message: String, card: Value },
    /// A notice to a whole thread.
    Notice {
        thread: Option<String>,
        text: String,
    },
    /// A card only `user` sees.
    Private { user: String, card: Value },
}

/// The fake's answer budget: a longer answer is shown as several cards.
pub const ANSWER_BUDGET: usize = 2_000;

#[derive(Debug)]
pub struct FakePlatform {
    described: &'static ChatPlatform,
    sent: Mutex<Vec<Sent>>,
    ids: AtomicU64,
}

/// The fake's fixed facts: it plays [`SURFACE`] under that platform's own name.
pub const FAKE: ChatPlatform = ChatPlatform {
    surface: SURFACE,
    label: "Feishu",
    target_names: &["feishu"],
    chat_id: workmate_adapter::plain_chat_id,
    dedupe_window: Duration::from_secs(12 * 60 * 60),
};

impl Default for FakePlatform {
    fn default() -> Self {
        Self {
            described: &FAKE,
            sent: Mutex::default(),
            ids: AtomicU64::default(),
        }
    }
}

impl FakePlatform {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// A fake that is the platform `described` says.
    pub fn describing(described: &'static ChatPlatform) -> Arc<Self> {
        Arc::new(Self {
            described,
            ..Self::default()
        })
    }

    pub fn sent(&self) -> Vec<Sent> {
        self.sent.lock().unwrap().clone()
    }

    /// The private notices `user` got, as text.
    pub fn private_to(&self, user: &str) -> Vec<String> {
        self.sent()
            .into_iter()
            .filter_map(|s| match s {
                Sent::Private { user: to, card } if to == user => {
                    Some(card["text"].as_str().unwrap_or_default().to_owned())
                }
                _ => None,
            })
            .collect()
    }

    /// The cards posted into `thread`, as text, in order.
    pub fn posted_in(&self, thread: &str) -> Vec<String> {
        self.sent()
            .into_iter()
            .filter_map(|s| match s {
                Sent::Post {
                    thread: Some(t),
                    card,
                } if t == thread => Some(card["text"].as_str().unwrap_or_default().to_owned()),
                _ => None,
            })
            .collect()
    }

    /// Every card text posted or updated, in order.
    pub fn card_texts(&self) -> Vec<String> {
        self.sent()
            .into_iter()
            .filter_map(|s| match s {
                Sent::Post { card, .. } | Sent::Update { card, .. } => {
                    Some(card["text"].as_str().unwrap_or_default().to_owned())
                }
                _ => None,
            })
            .collect()
    }

    /// The button actions of every card sent so far.
    pub fn buttons(&self) -> Vec<ButtonAction> {
        self.sent()
            .into_iter()
            .filter_map(|s| match s {
                Sent::Post { card, .. }
                | Sent::Update { card, .. }
                | Sent::Private { card, .. } => Some(card),
                Sent::Notice { .. } => None,
            })
            .flat_map(|card| {
                card["buttons"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
                    .into_iter()
                    .map(|b| serde_json::from_value(b).unwrap())
            })
            .collect()
    }

    fn record(&self, sent: Sent) {
        self.sent.lock().unwrap().push(sent);
    }
}

/// A card as its text and its buttons' actions.
fn render_card(card: &Card) -> Value {
    let mut text = Vec::new();
    let mut buttons = Vec::new();
    for block in &card.blocks {
        match block {
            Block::Heading { text: t } => text.push(t.clone()),
            Block::Text(rich) | Block::Quote(rich) => text.push(rich.plain()),
            Block::Context(inlines) => {
                text.push(inlines.iter().map(|i| i.text()).collect::<String>());
            }
            Block::Code { text: t, .. } => text.push(t.clone()),
            Block::Fields(fields) => {
                for (k, v) in fields {
                    text.push(format!("{k}: {v}"));
                }
            }
            Block::List { items, .. } => {
                for item in items {
                    text.push(item.plain());
                }
            }
            Block::Actions(row) => {
                for button in row {
                    text.push(format!("[{}]", button.label));
                    buttons.push(serde_json::to_value(&button.action).unwrap());
                }
            }
            Block::Table { .. } | Block::Divider => {}
        }
    }
    json!({"text": text.join("\n"), "buttons": buttons})
}

impl ChatAdapter for FakePlatform {
    fn describe(&self) -> &'static ChatPlatform {
        self.described
    }

    fn render(&self, card: &Card) -> Value {
        render_card(card)
    }

    fn post<'a>(
        &'a self,
        target: &'a ChatTarget,
        rendered: &'a Value,
        _posting: &'a workmate_adapter::Posting,
    ) -> BoxFuture<'a, Result<PostedCard, AdapterError>> {
        let id = self.ids.fetch_add(1, Ordering::SeqCst);
        self.record(Sent::Post {
            thread: target.thread_id.clone(),
            card: rendered.clone(),
        });
        Box::pin(async move {
            Ok(PostedCard {
                chat_id: target.chat_id.clone(),
                message_id: format!("m{id}"),
            })
        })
    }

    fn update<'a>(
        &'a self,
        posted: &'a PostedCard,
        rendered: &'a Value,
        _version: i64,
    ) -> BoxFuture<'a, Result<(), AdapterError>> {
        self.record(Sent::Update {
            message: posted.message_id.clone(),
            card: rendered.clone(),
        });
        Box::pin(async { Ok(()) })
    }

    fn min_update_interval(&self) -> Duration {
        Duration::from_millis(10)
    }

    fn answer_budget(&self) -> usize {
        ANSWER_BUDGET
    }
}

impl Platform for FakePlatform {
    fn profile<'a>(&'a self, user: &'a str) -> BoxFuture<'a, Profile> {
        let name = match user {
            "U1" => Some("Alice".to_owned()),
            "U2" => Some("Bob".to_owned()),
            _ => None,
        };
        Box::pin(async move {
            Profile {
                name,
                time_zone: Some("Asia/Shanghai".into()),
                email: None,
            }
        })
    }

    fn notice<'a>(
        &'a self,
        target: &'a ChatTarget,
        text: &'a str,
    ) -> BoxFuture<'a, Result<(), AdapterError>> {
        self.record(Sent::Notice {
            thread: target.thread_id.clone(),
            text: text.to_owned(),
        });
        Box::pin(async { Ok(()) })
    }

    fn private_notice<'a>(
        &'a self,
        _target: &'a ChatTarget,
        user: &'a str,
        card: &'a Card,
    ) -> BoxFuture<'a, Result<(), AdapterError>> {
        self.record(Sent::Private {
            user: user.to_owned(),
            card: render_card(card),
        });
        Box::pin(async { Ok(()) })
    }
}
