//! [`WeComPlatform`]: the chat layer's calls, on WeCom's smart robot and self-built app.
//!
//! WeCom answers a message only through that message (ADR 0012). In callback mode the passive
//! reply to a message opens a *stream*, which WeCom then asks for again and again, and the
//! message's `response_url` takes one further answer. Over the long connection, workmate pushes
//! the stream's snapshots itself (`aibot_respond_msg` with the message's `req_id`), and sends
//! further messages to the chat as it likes (`aibot_send_msg`). So:
//! - every answer card of a turn goes into the stream of the message that started it
//!   ([`ReplyHandle`], carried by the chat layer as the target's `reply`), one below the other;
//!   WeCom is shown the stream's content when it asks ([`WeComPlatform::refresh`]) or it is
//!   pushed, at most 20,480 bytes; what does not fit (or comes after the stream was handed over
//!   at 5½ minutes) is sent when the stream is complete: once, through the `response_url`, or,
//!   over the long connection, in as many messages as it takes;
//! - a prompt (a card with answer buttons) is a `button_interaction` template card riding on the
//!   stream (see `prompt`); its `task_id` is the inbox item's id. WeCom cannot edit it later: a
//!   click's answer updates it for everyone ([`crate::dispatch_robot`]), and an answer given
//!   elsewhere leaves it as it is;
//! - notices and private replies (a command's answer) go into the stream too;
//! - a message to the self-built app is answered with app messages (see `to_app`).
//!
//! Streams are kept in this process for an hour (WeCom stops asking after 6 minutes). In callback
//! mode each change of a stream also keeps its answer where every replica reads it
//! ([`WeComPlatform::with_shared`]), so a refresh that reaches another replica (or this one after
//! a restart) shows the stream as it stands; a card riding on the stream is shown by the replica
//! that runs the turn, at its next refresh. After a restart, a card the chat layer updates
//! brings its stream back.
//!
//! Limits of callback mode: a stream carries one card and a message takes one further answer, so
//! a turn with more than two prompts, or an answer longer than two messages, is cut, with a log
//! line saying so. The long connection has no such limit.

mod private;
mod prompt;
mod refresh;
mod render;
mod reply;
mod stream;
mod to_app;

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use secrecy::ExposeSecret as _;
use serde_json::{Value, json};
use workmate_adapter::{
    AdapterError, BoxFuture, ChatAdapter, ChatPlatform, ChatTarget, Downloaded, InboundFile,
    Platform, PostedCard, Posting, Profile, SharedValues,
};
use workmate_cards::Card;

use crate::card::{MAX_STREAM_BYTES, markdown, split_stream};
use crate::ws::{RESPOND_MSG, SEND_MSG, SendError, Sender};

use render::stream_part;
pub use reply::{ReplyHandle, stream_id};
pub use stream::HAND_OVER_AFTER;
use stream::Stream;
pub use to_app::MAX_APP_MARKDOWN_BYTES;

/// Streams are only memory here: updating one costs nothing on the wire.
const MIN_UPDATE_INTERVAL: Duration = Duration::from_millis(300);
/// How long a stream and a used `response_url` are remembered.
const KEPT_FOR: Duration = Duration::from_secs(60 * 60);
/// Streams remembered at most.
const KEPT_STREAMS: u64 = 10_000;
/// How long a `response_url` call may take.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);
/// The message id prefix of a template card.
pub(crate) const CARD_PREFIX: &str = "card:";
/// Why a card without an answer handle cannot be shown.
pub(crate) const NO_HANDLE: &str = "WeCom's smart robot answers a message only through it, and this card \
    has no message to answer (a restart lost it; the next message brings one)";

/// WeCom's smart robot, for the chat layer.
#[derive(Debug)]
pub struct WeComPlatform {
    /// Reaches the links WeCom hands out (`response_url`s, robot file links): the guarded
    /// egress, never the server's own or private addresses unless the operator allowed them.
    links: workmate_adapter::net::Egress,
    /// The long connection's sender, in that mode.
    socket: Option<Sender>,
    /// The self-built app, when one is configured.
    app: Option<crate::app::AppWeb>,
    /// App messages sent (an app message cannot be edited, so it is sent once).
    sent: moka::sync::Cache<String, ()>,
    streams: moka::sync::Cache<String, Arc<Mutex<Stream>>>,
    /// `response_url`s already answered through.
    used: moka::sync::Cache<String, ()>,
    /// The robot's EncodingAESKey: callbacks' files are encrypted with it.
    media_key: Option<secrecy::SecretString>,
    /// Where, in callback mode, each stream's latest answer is kept for the other replicas, any
    /// of which WeCom may ask for it.
    shared: Option<Arc<dyn SharedValues>>,
}

impl WeComPlatform {
    /// The platform, reaching the links WeCom hands out through `links` (see
    /// [`workmate_adapter::net::link_egress`]).
    pub fn new(links: workmate_adapter::net::Egress) -> Self {
        Self {
            links,
            socket: None,
            app: None,
            sent: kept(),
            streams: kept(),
            used: kept(),
            media_key: None,
            shared: None,
        }
    }

    /// The same platform keeping, in callback mode, each stream's latest answer in `shared`,
    /// so a refresh that reaches another replica shows the stream too.
    #[must_use]
    pub fn with_shared(mut self, shared: Arc<dyn SharedValues>) -> Self {
        self.shared = Some(shared);
        self
    }

    /// The same platform decrypting callbacks' files with the robot's EncodingAESKey.
    #[must_use]
    pub fn with_media_key(mut self, encoding_aes_key: secrecy::SecretString) -> Self {
        self.media_key = Some(encoding_aes_key);
        self
    }

    /// The same platform answering over the long connection.
    #[must_use]
    pub fn with_socket(mut self, sender: Sender) -> Self {
        self.socket = Some(sender);
        self
    }

    /// The same platform answering messages to the self-built app through `app`.
    #[must_use]
    pub fn with_app(mut self, app: crate::app::AppWeb) -> Self {
        self.app = Some(app);
        self
    }

    /// Updates, for `user`, the app template card a click's single-use `response_code` belongs
    /// to.
    pub async fn update_app_card(
        &self,
        response_code: &str,
        user: &str,
        card: &Value,
    ) -> Result<(), AdapterError> {
        self.app()?.update_card(response_code, user, card).await
    }

    fn stream(&self, stream_id: &str) -> Arc<Mutex<Stream>> {
        self.streams.get_with(stream_id.to_owned(), || {
            Arc::new(Mutex::new(Stream::new(Instant::now())))
        })
    }

    /// Replaces a card in its stream, then [`WeComPlatform::sync`]s the stream.
    async fn set_part(
        &self,
        message_id: &str,
        markdown: String,
        more: bool,
    ) -> Result<(), AdapterError> {
        let stream_id = message_id.rsplit_once('.').map_or(message_id, |(s, _)| s);
        let stream = self.stream(stream_id);
        lock(&stream).set(message_id, markdown, more);
        self.sync(stream_id, &stream).await
    }

    /// Sends what a stream's change calls for: its rest when it became complete and, over the
    /// long connection, its new snapshot.
    async fn sync(&self, stream_id: &str, stream: &Mutex<Stream>) -> Result<(), AdapterError> {
        let Some(sender) = &self.socket else {
            self.share(stream_id, stream).await;
            let (tail, url) = {
                let mut s = lock(stream);
                (s.take_tail(), s.response_url.clone())
            };
            if let (Some(tail), Some(url)) = (tail, url) {
                self.send_tail(&url, &tail).await;
            }
            return Ok(());
        };
        let (push, tail, req_id, chat_id) = {
            let mut s = lock(stream);
            let push = s.next_push(Instant::now());
            (push, s.take_tail(), s.req_id.clone(), s.chat_id.clone())
        };
        if let (Some(snapshot), Some(req_id)) = (push, req_id) {
            let body = stream_message(stream_id, &snapshot.content, snapshot.finish);
            sender
                .respond(&req_id, RESPOND_MSG, body)
                .await
                .map_err(failed)?;
        }
        for part in tail.iter().flat_map(|t| split_stream(t, MAX_STREAM_BYTES)) {
            let body = json!({ "chatid": chat_id, "msgtype": "markdown", "markdown": { "content": part } });
            sender.send(SEND_MSG, body).await.map_err(failed)?;
        }
        Ok(())
    }

    /// The stream of the message `handle` answers, in `chat_id`, told how to answer it (a card
    /// may reach it before or after another of the same turn).
    pub(super) fn bound(
        &self,
        handle: &ReplyHandle,
        chat_id: &str,
    ) -> Result<(String, Arc<Mutex<Stream>>), AdapterError> {
        let stream_id = handle
            .stream
            .clone()
            .ok_or_else(|| AdapterError::Rejected(NO_HANDLE.into()))?;
        let stream = self.stream(&stream_id);
        {
            let mut s = lock(&stream);
            if s.response_url.is_none() {
                s.response_url.clone_from(&handle.response_url);
            }
            if s.req_id.is_none() && handle.req_id.is_some() {
                s.req_id.clone_from(&handle.req_id);
                if let Some(sender) = &self.socket {
                    let later =
                        hand_over_later(sender.clone(), Arc::clone(&stream), stream_id.clone());
                    tokio::spawn(later);
                }
            }
            chat_id.clone_into(&mut s.chat_id);
        }
        Ok((stream_id, stream))
    }

    /// Adds a card to the stream of `handle`, in `chat_id`; its message id. The id is taken and
    /// the card put in under one lock, so two cards posted at once get two ids.
    async fn add_part(
        &self,
        handle: &ReplyHandle,
        chat_id: &str,
        markdown: String,
        more: bool,
    ) -> Result<String, AdapterError> {
        let (stream_id, stream) = self.bound(handle, chat_id)?;
        let id = {
            let mut s = lock(&stream);
            let id = s.next_part_id(&stream_id);
            s.set(&id, markdown, more);
            id
        };
        self.sync(&stream_id, &stream).await?;
        Ok(id)
    }

    async fn send_tail(&self, url: &str, tail: &str) {
        let parts = split_stream(tail, MAX_STREAM_BYTES);
        if parts.len() > 1 {
            tracing::warn!(
                left_out = parts.len() - 1,
                "A WeCom answer is longer than two messages; its end is cut (use the long connection for long answers)."
            );
        }
        let Some(first) = parts.first() else { return };
        let body = json!({ "msgtype": "markdown", "markdown": { "content": first } });
        if let Err(e) = self.answer_once(url, &body).await {
            tracing::warn!(error = %e, "Cannot send the rest of a WeCom answer.");
        }
    }

    /// Answers through a `response_url`, which takes one answer.
    async fn answer_once(&self, url: &str, body: &Value) -> Result<(), AdapterError> {
        if self.used.contains_key(url) {
            return Err(AdapterError::Rejected(
                "this message's response_url was used already: WeCom takes one further answer \
                 per message"
                    .into(),
            ));
        }
        self.used.insert(url.to_owned(), ());
        let Ok(parsed) = reqwest::Url::parse(url) else {
            return Err(AdapterError::Rejected(format!(
                "the response_url {url:?} is not a web address"
            )));
        };
        let request = self
            .links
            .request(reqwest::Method::POST, parsed)
            .timeout(ANSWER_TIMEOUT)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_string());
        let sent = match self.links.send(request).await {
            Ok(sent) => sent,
            Err(e) if e.is_refused() => {
                return Err(AdapterError::Rejected(format!(
                    "response_url not reached: {e}"
                )));
            }
            Err(e) => {
                // Not answered: the retry may use it.
                self.used.invalidate(url);
                return Err(AdapterError::Transient(format!("response_url: {e}")));
            }
        };
        let status = sent.status();
        let bytes = sent.bytes().await.unwrap_or_default();
        let answer: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        let errcode = answer.get("errcode").and_then(Value::as_i64).unwrap_or(0);
        if status.is_success() && errcode == 0 {
            return Ok(());
        }
        let message = answer.get("errmsg").and_then(Value::as_str).unwrap_or("");
        Err(AdapterError::Rejected(format!(
            "WeCom refused the answer (HTTP {status}, errcode {errcode}: {message})"
        )))
    }

    /// A text or card for one person: into the handle's stream, complete (or an app message).
    pub(super) async fn show(
        &self,
        target: &ChatTarget,
        markdown: String,
    ) -> Result<(), AdapterError> {
        let handle = ReplyHandle::decode(target.reply.as_deref())
            .ok_or_else(|| AdapterError::Rejected(NO_HANDLE.into()))?;
        if handle.app {
            return self.send_app_markdown(&target.chat_id, &markdown).await;
        }
        self.add_part(&handle, &target.chat_id, markdown, false)
            .await
            .map(drop)
    }
}

/// A cache of at most [`KEPT_STREAMS`] entries, each kept for [`KEPT_FOR`] after its last use.
fn kept<V: Clone + Send + Sync + 'static>() -> moka::sync::Cache<String, V> {
    moka::sync::Cache::builder()
        .max_capacity(KEPT_STREAMS)
        .time_to_idle(KEPT_FOR)
        .build()
}

pub(crate) fn lock(stream: &Mutex<Stream>) -> std::sync::MutexGuard<'_, Stream> {
    stream.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Over the long connection nobody asks for a stream again: at [`HAND_OVER_AFTER`] a stream not
/// finished yet is pushed finished ("↓ Continued below"), before WeCom lets it expire; what comes
/// later is sent to the chat when the turn is done.
async fn hand_over_later(sender: Sender, stream: Arc<Mutex<Stream>>, stream_id: String) {
    let opened = lock(&stream).opened();
    tokio::time::sleep_until((opened + HAND_OVER_AFTER).into()).await;
    let push = {
        let mut s = lock(&stream);
        s.next_push(Instant::now()).zip(s.req_id.clone())
    };
    if let Some((snapshot, req_id)) = push {
        let body = stream_message(&stream_id, &snapshot.content, snapshot.finish);
        if let Err(e) = sender.respond(&req_id, RESPOND_MSG, body).await {
            tracing::warn!(error = %e, "Cannot hand a WeCom stream over before it expires.");
        }
    }
}

/// A stream message: the passive reply that opens a stream and the answer to each refresh.
pub fn stream_message(stream_id: &str, content: &str, finish: bool) -> Value {
    json!({
        "msgtype": "stream",
        "stream": { "id": stream_id, "finish": finish, "content": content },
    })
}

impl ChatAdapter for WeComPlatform {
    fn describe(&self) -> &'static ChatPlatform {
        &crate::WECOM
    }

    /// A prompt as `{"template_card": …}`; any other card as `{"markdown": …, "more": …}`,
    /// without its "↓ Continued below" line (what follows comes right below, in the same
    /// stream).
    fn render(&self, card: &Card) -> Value {
        render::rendered(card)
    }

    /// WeCom gives no idempotency key and no way to find a message again: a post cut short
    /// after it reached WeCom is posted again.
    fn post<'a>(
        &'a self,
        target: &'a ChatTarget,
        rendered: &'a Value,
        _posting: &'a Posting,
    ) -> BoxFuture<'a, Result<PostedCard, AdapterError>> {
        Box::pin(async move {
            let handle = ReplyHandle::decode(target.reply.as_deref())
                .ok_or_else(|| AdapterError::Rejected(NO_HANDLE.into()))?;
            if handle.app {
                return self.app_post(target, rendered).await;
            }
            let message_id = if let Some(card) = rendered.get("template_card") {
                self.post_prompt(&handle, target, card).await?
            } else {
                let (markdown, more) = stream_part(rendered);
                self.add_part(&handle, &target.chat_id, markdown, more)
                    .await?
            };
            Ok(PostedCard {
                chat_id: target.chat_id.clone(),
                message_id,
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
            if Self::is_app_card(posted) {
                return self.app_card_settled(posted, rendered).await;
            }
            if posted.message_id.starts_with(CARD_PREFIX) || rendered.get("template_card").is_some()
            {
                // A template card changes only in a click's answer (see the module docs).
                tracing::debug!(message = %posted.message_id, "A WeCom template card is not edited.");
                return Ok(());
            }
            if Self::is_app_message(posted) {
                return self
                    .app_complete(&posted.chat_id, &posted.message_id, rendered)
                    .await;
            }
            let (markdown, more) = stream_part(rendered);
            self.set_part(&posted.message_id, markdown, more).await
        })
    }

    fn min_update_interval(&self) -> Duration {
        MIN_UPDATE_INTERVAL
    }

    /// A WeCom group has no threads: the robot's answer quotes the message it answers.
    fn has_threads(&self) -> bool {
        false
    }

    /// The smart robot cannot start a chat with a person; the self-built app, when configured,
    /// sends them app messages (a prompt as a template card with its buttons, which WeCom does
    /// not let workmate edit later).
    fn direct_target(&self, user: &str) -> Option<ChatTarget> {
        self.app.as_ref()?;
        Some(ChatTarget {
            reply: Some(ReplyHandle::app().encode()),
            ..ChatTarget::chat(user)
        })
    }
}

/// A long-connection send's failure, for the chat layer's retries.
#[allow(
    clippy::needless_pass_by_value,
    reason = "the shape `map_err` hands over"
)]
pub(crate) fn failed(error: SendError) -> AdapterError {
    if error.is_retryable() {
        AdapterError::Transient(error.to_string())
    } else {
        AdapterError::Rejected(error.to_string())
    }
}

impl Platform for WeComPlatform {
    /// A robot message's file: fetched from its short-lived URL (valid about five minutes), then
    /// decrypted with the message's `aeskey` or the robot's EncodingAESKey.
    fn download<'a>(
        &'a self,
        file: &'a InboundFile,
        max_bytes: u64,
    ) -> BoxFuture<'a, Result<Downloaded, AdapterError>> {
        Box::pin(async move {
            if let Some(media_id) = file.handle.strip_prefix(crate::mapping::APP_MEDIA) {
                let Some(app) = &self.app else {
                    return Err(AdapterError::Rejected(format!(
                        "{} was sent to the self-built app, which is not configured",
                        file.name
                    )));
                };
                return app.media(media_id, max_bytes, &file.name).await;
            }
            #[derive(serde::Deserialize)]
            struct Handle {
                url: String,
                #[serde(default)]
                aeskey: Option<String>,
            }
            let handle: Handle = serde_json::from_str(&file.handle).map_err(|_| {
                AdapterError::Rejected(format!("WeCom gave no download link for {}", file.name))
            })?;
            let key = match (&handle.aeskey, &self.media_key) {
                (Some(key), _) if !key.is_empty() => key.clone(),
                (_, Some(key)) => key.expose_secret().to_owned(),
                _ => {
                    return Err(AdapterError::Rejected(format!(
                        "{} came without a key to decrypt it (configure the robot's \
                         encoding_aes_key)",
                        file.name
                    )));
                }
            };
            // The encrypted body is at most one padding block larger.
            let mut downloaded = workmate_adapter::capped_fetch(
                &self.links,
                &handle.url,
                max_bytes + 32,
                &file.name,
                Duration::from_secs(1),
            )
            .await?;
            downloaded.bytes =
                workmate_wxcrypto::decrypt_file(&key, &downloaded.bytes).map_err(|e| {
                    AdapterError::Rejected(format!("{} did not decrypt: {e}", file.name))
                })?;
            Ok(downloaded)
        })
    }

    /// The smart robot cannot look people up: names fall back to user ids.
    /// The name WeCom shows, read through the self-built app when one is configured (a robot
    /// callback carries only the user id); nothing otherwise, or when the lookup fails or is
    /// slow.
    fn profile<'a>(&'a self, user: &'a str) -> BoxFuture<'a, Profile> {
        Box::pin(async move {
            let Some(app) = &self.app else {
                return Profile::default();
            };
            let looked_up =
                tokio::time::timeout(workmate_adapter::PROFILE_LOOKUP, app.user_name(user)).await;
            match looked_up {
                Ok(Ok(name)) => Profile {
                    name,
                    ..Profile::default()
                },
                Ok(Err(e)) => {
                    tracing::debug!(error = %e, "Cannot read a WeCom user's name.");
                    Profile::default()
                }
                Err(_) => Profile::default(),
            }
        })
    }

    fn notice<'a>(
        &'a self,
        target: &'a ChatTarget,
        text: &'a str,
    ) -> BoxFuture<'a, Result<(), AdapterError>> {
        Box::pin(async move {
            let card = Card {
                blocks: workmate_cards::markdown_to_blocks(text),
            };
            self.show(target, markdown(&card)).await
        })
    }

    /// In a group, everyone sees it: the smart robot has no message for one person.
    fn private_notice<'a>(
        &'a self,
        target: &'a ChatTarget,
        user: &'a str,
        card: &'a Card,
    ) -> BoxFuture<'a, Result<(), AdapterError>> {
        Box::pin(async move { self.notice_privately(target, user, card).await })
    }

    fn cached_items(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("wecom_reply_streams", self.streams.entry_count()),
            ("wecom_app_messages_sent", self.sent.entry_count()),
            ("wecom_response_urls_used", self.used.entry_count()),
        ]
    }
}
