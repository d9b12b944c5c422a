//! A fake platform that records every call.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;
use workmate_adapter::{
    AdapterError, BoxFuture, CardId, ChatAdapter, ChatPlatform, ChatTarget, PostedCard, Posting,
    RetryPolicy,
};
use workmate_cards::{Block, Card};
use workmate_protocol::Surface;

/// One call the fake platform received.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Call {
    Post {
        at: Duration,
        chat_id: String,
        state: Value,
        ok: bool,
    },
    Update {
        at: Duration,
        message_id: String,
        state: Value,
        version: i64,
        ok: bool,
    },
}

impl Call {
    pub(crate) fn at(&self) -> Duration {
        match self {
            Call::Post { at, .. } | Call::Update { at, .. } => *at,
        }
    }
    pub(crate) fn state(&self) -> i64 {
        match self {
            Call::Post { state, .. } | Call::Update { state, .. } => state.as_i64().unwrap(),
        }
    }
    pub(crate) fn ok(&self) -> bool {
        match self {
            Call::Post { ok, .. } | Call::Update { ok, .. } => *ok,
        }
    }
}

/// A platform whose card is a number; failures are scripted per call.
#[derive(Debug)]
pub(crate) struct FakePlatform {
    epoch: Instant,
    interval: Duration,
    latency: Duration,
    calls: Mutex<Vec<Call>>,
    failures: Mutex<VecDeque<Option<AdapterError>>>,
    ids: AtomicU64,
    /// The messages on the platform by the post key they were posted under, as a platform that
    /// can find a post again keeps them.
    by_key: Mutex<HashMap<String, PostedCard>>,
}

/// The fake's fixed facts.
const SANDBOX: ChatPlatform = ChatPlatform {
    surface: Surface::Sandbox,
    label: "the sandbox",
    target_names: &["sandbox"],
    chat_id: workmate_adapter::plain_chat_id,
    dedupe_window: Duration::from_secs(60 * 60),
};

impl FakePlatform {
    /// Puts a message on the platform as if a post of `card` had been made (by a process that
    /// died before it stored the message's id).
    pub(crate) fn already_posted(&self, card: &CardId, message_id: &str) {
        self.by_key.lock().unwrap().insert(
            card.post_key(),
            PostedCard {
                chat_id: target().chat_id,
                message_id: message_id.to_owned(),
            },
        );
    }

    pub(crate) fn new(interval: Duration) -> Arc<Self> {
        Self::with_latency(interval, Duration::ZERO)
    }

    pub(crate) fn with_latency(interval: Duration, latency: Duration) -> Arc<Self> {
        Arc::new(Self {
            epoch: Instant::now(),
            interval,
            latency,
            calls: Mutex::new(Vec::new()),
            failures: Mutex::new(VecDeque::new()),
            by_key: Mutex::new(HashMap::new()),
            ids: AtomicU64::new(1),
        })
    }

    /// The next calls' outcomes, in order: `None` succeeds, `Some(e)` fails with `e`.
    pub(crate) fn script(&self, outcomes: impl IntoIterator<Item = Option<AdapterError>>) {
        self.failures.lock().unwrap().extend(outcomes);
    }

    pub(crate) fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap().clone()
    }

    async fn call(&self, record: impl FnOnce(Duration, bool) -> Call) -> Result<(), AdapterError> {
        let at = self.epoch.elapsed();
        if !self.latency.is_zero() {
            tokio::time::sleep(self.latency).await;
        }
        let outcome = self.failures.lock().unwrap().pop_front().flatten();
        self.calls
            .lock()
            .unwrap()
            .push(record(at, outcome.is_none()));
        outcome.map_or(Ok(()), Err)
    }
}

impl ChatAdapter for FakePlatform {
    fn describe(&self) -> &'static ChatPlatform {
        &SANDBOX
    }

    fn render(&self, card: &Card) -> Value {
        match card.blocks.first() {
            Some(Block::Heading { text }) => json!(text.parse::<i64>().unwrap()),
            _ => Value::Null,
        }
    }

    fn post<'a>(
        &'a self,
        target: &'a ChatTarget,
        rendered: &'a Value,
        posting: &'a Posting,
    ) -> BoxFuture<'a, Result<PostedCard, AdapterError>> {
        Box::pin(async move {
            self.call(|at, ok| Call::Post {
                at,
                chat_id: target.chat_id.clone(),
                state: rendered.clone(),
                ok,
            })
            .await?;
            let posted = PostedCard {
                chat_id: target.chat_id.clone(),
                message_id: format!("m{}", self.ids.fetch_add(1, Ordering::SeqCst)),
            };
            self.by_key
                .lock()
                .unwrap()
                .insert(posting.key.clone(), posted.clone());
            Ok(posted)
        })
    }

    fn find_posted<'a>(
        &'a self,
        _target: &'a ChatTarget,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<PostedCard>, AdapterError>> {
        let found = self.by_key.lock().unwrap().get(key).cloned();
        Box::pin(async move { Ok(found) })
    }

    fn update<'a>(
        &'a self,
        posted: &'a PostedCard,
        rendered: &'a Value,
        version: i64,
    ) -> BoxFuture<'a, Result<(), AdapterError>> {
        Box::pin(self.call(move |at, ok| Call::Update {
            at,
            message_id: posted.message_id.clone(),
            state: rendered.clone(),
            version,
            ok,
        }))
    }

    fn min_update_interval(&self) -> Duration {
        self.interval
    }
}

/// Card state `n`.
pub(crate) fn state(n: i64) -> Card {
    Card {
        blocks: vec![Block::Heading {
            text: n.to_string(),
        }],
    }
}

pub(crate) fn card(key: &str) -> CardId {
    CardId {
        tenant: "acme".into(),
        session: "s1".into(),
        card_key: key.to_owned(),
    }
}

pub(crate) fn target() -> ChatTarget {
    ChatTarget {
        chat_id: "C1".to_owned(),
        thread_id: Some("1700000000.000100".to_owned()),
        reply: None,
        person: None,
    }
}

/// Deterministic backoff: 500 ms doubling, no jitter.
pub(crate) fn policy() -> RetryPolicy {
    RetryPolicy {
        jitter: false,
        ..RetryPolicy::default()
    }
}
