//! Slack as a [`ChatAdapter`]: Block Kit out, `chat.postMessage` and `chat.update` calls.
//!
//! Invariant: a rendered card is `{"blocks": […], "text": "…"}`, so the fallback text travels
//! with the blocks to every post and update.

use std::time::Duration;

use serde_json::{Value, json};
use workmate_adapter::{AdapterError, BoxFuture, ChatAdapter, ChatTarget, PostedCard, SLACK};
use workmate_cards::Card;
use workmate_slack::{SlackWeb, WebError, blocks};

/// `chat.update` is Tier 3; about one update a second per message keeps well inside it.
const MIN_UPDATE_INTERVAL: Duration = Duration::from_secs(1);

/// Slack's side of the card plumbing.
#[derive(Debug)]
pub(crate) struct SlackAdapter {
    web: SlackWeb,
}

impl SlackAdapter {
    pub(crate) fn new(web: SlackWeb) -> Self {
        Self { web }
    }
}

fn parts(rendered: &Value) -> (&Value, &str) {
    (
        rendered.get("blocks").unwrap_or(&Value::Null),
        rendered.get("text").and_then(Value::as_str).unwrap_or(""),
    )
}

/// What a failed Web API call means for a retry. `SlackWeb` already waited out 429s and 5xx as
/// far as its own policy allows, so what reaches here is what is left.
fn classify(error: &WebError) -> AdapterError {
    match error {
        WebError::Http { status: 429, .. } => AdapterError::RateLimited {
            retry_after: Duration::from_secs(1),
        },
        WebError::Api { error, .. } if error == "ratelimited" => AdapterError::RateLimited {
            retry_after: Duration::from_secs(1),
        },
        WebError::Http { status, .. } if *status >= 500 => {
            AdapterError::Transient(error.to_string())
        }
        WebError::Transport { .. } => AdapterError::Transient(error.to_string()),
        _ => AdapterError::Rejected(error.to_string()),
    }
}

impl ChatAdapter for SlackAdapter {
    fn platform(&self) -> &'static str {
        SLACK
    }

    fn render(&self, card: &Card) -> Value {
        json!({ "blocks": blocks::render(card), "text": blocks::fallback_text(card) })
    }

    fn post<'a>(
        &'a self,
        target: &'a ChatTarget,
        rendered: &'a Value,
    ) -> BoxFuture<'a, Result<PostedCard, AdapterError>> {
        Box::pin(async move {
            let (blocks, text) = parts(rendered);
            let posted = self
                .web
                .post_message(&target.chat_id, target.thread_id.as_deref(), blocks, text)
                .await
                .map_err(|e| classify(&e))?;
            Ok(PostedCard {
                chat_id: posted.channel,
                message_id: posted.ts,
            })
        })
    }

    fn update<'a>(
        &'a self,
        posted: &'a PostedCard,
        rendered: &'a Value,
        _version: i64,
    ) -> BoxFuture<'a, Result<(), AdapterError>> {
        Box::pin(async move {
            let (blocks, text) = parts(rendered);
            self.web
                .update_message(&posted.chat_id, &posted.message_id, blocks, text)
                .await
                .map(drop)
                .map_err(|e| classify(&e))
        })
    }

    fn min_update_interval(&self) -> Duration {
        MIN_UPDATE_INTERVAL
    }
}
