//! Slack as a [`Platform`]: Block Kit out through `chat.postMessage`, `chat.update` and
//! `chat.postEphemeral`; profiles from `users.info`.
//!
//! Invariants: a rendered card is `{"blocks": […], "text": "…"}`, so the fallback text travels
//! with the blocks to every post and update; the Web API client makes one attempt per call, so
//! the chat layer's retry policy is the only one, and a 429 reaches it with Slack's
//! `Retry-After`.

use std::time::Duration;

use secrecy::SecretString;
use serde_json::{Value, json};
use tokio::sync::OnceCell;
use workmate_adapter::{
    AdapterError, BoxFuture, ChatAdapter, ChatPlatform, ChatTarget, Downloaded, InboundFile,
    Platform, PostedCard, Posting, Profile, bounded_profile,
};
use workmate_cards::Card;

use crate::blocks;
use crate::web::{AuthInfo, RetryPolicy, SlackWeb, WebError};

/// `chat.update` is Tier 3; about one update a second per message keeps well inside it.
const MIN_UPDATE_INTERVAL: Duration = Duration::from_secs(1);
/// The longest wait for Slack to say who a user is: tighter than the kit's
/// [`workmate_adapter::PROFILE_LOOKUP`], because a slash command can read the caller's profile
/// (their time zone) before it answers, and Slack wants that answer within 3 s.
const PROFILE_LOOKUP: Duration = Duration::from_millis(800);
/// A 429 without a readable `Retry-After`: Slack's documented default wait.
const DEFAULT_RETRY_AFTER: Duration = Duration::from_secs(1);

/// Slack's side of the chat layer.
#[derive(Debug)]
pub struct SlackPlatform {
    web: SlackWeb,
    bot: OnceCell<Option<AuthInfo>>,
}

impl SlackPlatform {
    /// Slack's Web API at `api_base`, called with `bot_token`.
    pub fn new(api_base: &str, bot_token: SecretString) -> Result<Self, WebError> {
        Ok(Self {
            web: SlackWeb::new(api_base, bot_token)?.with_retry_policy(RetryPolicy::none()),
            bot: OnceCell::new(),
        })
    }

    /// The bot's own identity (`auth.test`), asked once; `None` if Slack would not say.
    pub async fn bot(&self) -> Option<&AuthInfo> {
        self.bot
            .get_or_init(|| async {
                self.web
                    .auth_test()
                    .await
                    .inspect_err(|e| tracing::warn!(error = %e, "Slack auth.test failed."))
                    .ok()
            })
            .await
            .as_ref()
    }

    /// The bot's identity if it was asked already (never waits).
    pub fn known_bot(&self) -> Option<&AuthInfo> {
        self.bot.get().and_then(Option::as_ref)
    }
}

fn parts(rendered: &Value) -> (&Value, &str) {
    (
        rendered.get("blocks").unwrap_or(&Value::Null),
        rendered.get("text").and_then(Value::as_str).unwrap_or(""),
    )
}

/// What a failed Web API call means for a retry.
fn classify(error: &WebError) -> AdapterError {
    match error {
        WebError::Http {
            status: 429,
            retry_after,
            ..
        } => AdapterError::RateLimited {
            retry_after: retry_after.unwrap_or(DEFAULT_RETRY_AFTER),
        },
        WebError::Api { error, .. } if error == "ratelimited" => AdapterError::RateLimited {
            retry_after: DEFAULT_RETRY_AFTER,
        },
        WebError::Http { status, .. } if *status >= 500 => {
            AdapterError::Transient(error.to_string())
        }
        WebError::Transport { .. } => AdapterError::Transient(error.to_string()),
        _ => AdapterError::Rejected(error.to_string()),
    }
}

impl ChatAdapter for SlackPlatform {
    fn describe(&self) -> &'static ChatPlatform {
        &crate::SLACK
    }

    fn render(&self, card: &Card) -> Value {
        json!({ "blocks": blocks::render(card), "text": blocks::fallback_text(card) })
    }

    /// The post key rides as the message's metadata, so a post cut short is found again.
    fn post<'a>(
        &'a self,
        target: &'a ChatTarget,
        rendered: &'a Value,
        posting: &'a Posting,
    ) -> BoxFuture<'a, Result<PostedCard, AdapterError>> {
        Box::pin(async move {
            let (blocks, text) = parts(rendered);
            let posted = self
                .web
                .post_keyed(
                    &target.chat_id,
                    target.thread_id.as_deref(),
                    blocks,
                    text,
                    Some(&posting.key),
                )
                .await
                .map_err(|e| classify(&e))?;
            Ok(PostedCard {
                chat_id: posted.channel,
                message_id: posted.ts,
            })
        })
    }

    /// Looks through the thread (or the channel's newest messages) for the post's metadata.
    fn find_posted<'a>(
        &'a self,
        target: &'a ChatTarget,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<PostedCard>, AdapterError>> {
        Box::pin(async move {
            let found = self
                .web
                .find_keyed(&target.chat_id, target.thread_id.as_deref(), key)
                .await
                .map_err(|e| classify(&e))?;
            Ok(found.map(|m| PostedCard {
                chat_id: m.channel,
                message_id: m.ts,
            }))
        })
    }

    /// Posting to a user id posts into the person's direct chat with the app; the answer names
    /// that chat, which updates use.
    fn direct_target(&self, user: &str) -> Option<ChatTarget> {
        Some(ChatTarget::chat(user))
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

impl Platform for SlackPlatform {
    fn download<'a>(
        &'a self,
        file: &'a InboundFile,
        max_bytes: u64,
    ) -> BoxFuture<'a, Result<Downloaded, AdapterError>> {
        Box::pin(async move {
            if file.handle.is_empty() {
                return Err(AdapterError::Rejected(format!(
                    "Slack did not share a download link for {} (a file hidden by a free \
                     workspace's limit, or shared from another organisation)",
                    file.name
                )));
            }
            let downloaded = self
                .web
                .download(&file.handle, max_bytes, &file.name)
                .await?;
            let html_expected = file.mime.as_deref() == Some("text/html");
            if !html_expected && workmate_adapter::is_html_page(&downloaded) {
                return Err(AdapterError::Rejected(format!(
                    "Slack answered with a sign-in page instead of {}: the app needs the \
                     files:read scope (reinstall it after adding the scope)",
                    file.name
                )));
            }
            Ok(downloaded)
        })
    }

    fn profile<'a>(&'a self, user: &'a str) -> BoxFuture<'a, Profile> {
        Box::pin(async move {
            let lookup = async {
                let info = self.web.user_info(user).await?;
                Ok::<_, WebError>(Profile {
                    name: info.name,
                    time_zone: info.tz,
                    email: info.email,
                })
            };
            bounded_profile(PROFILE_LOOKUP, lookup, "users.info").await
        })
    }

    fn notice<'a>(
        &'a self,
        target: &'a ChatTarget,
        text: &'a str,
    ) -> BoxFuture<'a, Result<(), AdapterError>> {
        Box::pin(async move {
            let blocks = json!([{"type": "section", "text": {"type": "mrkdwn", "text": text}}]);
            self.web
                .post_message(&target.chat_id, target.thread_id.as_deref(), &blocks, text)
                .await
                .map(drop)
                .map_err(|e| classify(&e))
        })
    }

    fn private_notice<'a>(
        &'a self,
        target: &'a ChatTarget,
        user: &'a str,
        card: &'a Card,
    ) -> BoxFuture<'a, Result<(), AdapterError>> {
        Box::pin(async move {
            let blocks = blocks::render(card);
            let text = blocks::fallback_text(card);
            self.web
                .post_ephemeral(
                    &target.chat_id,
                    target.thread_id.as_deref(),
                    user,
                    Some(&blocks),
                    &text,
                )
                .await
                .map_err(|e| classify(&e))
        })
    }
}
