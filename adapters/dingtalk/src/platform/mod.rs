//! [`DingTalkPlatform`]: the chat layer's calls, on DingTalk.
//!
//! - Every card is an interactive card from a template ([`crate::card::Rendered`]): approval
//!   prompts fill the approval template, everything else the AI answer card. `render` returns
//!   the template data; `post` creates and delivers the card
//!   (`/v1.0/card/instances/createAndDeliver`), and [`PostedCard::message_id`] is its
//!   `outTrackId`.
//! - Chats: a `ChatTarget::chat_id` starting with `cid` is a group's open conversation id;
//!   anything else is a user id, the person's one-to-one chat with the robot (that is what
//!   [`crate::mapping::robot_inbound`] gives a one-to-one chat). DingTalk has no threads:
//!   `thread_id` is ignored.
//! - `outTrackId`: an approval card's is [`crate::card::out_track_id`] of its item in a group,
//!   and [`crate::card::personal_out_track_id`] in a person's chat with the robot (an approver's
//!   copy is a card of its own), so a click names its item. Any other card's is `wm_` and the
//!   card's post key (see `workmate_adapter::Posting`): the same for every attempt to post that
//!   card, in any process, so the id is stored before the card is delivered and a post cut short
//!   is finished in the same card (it is updated if it is there, else created).
//! - Updates (see `update.rs`): an approval card's shared data is set for everyone; an answer
//!   card streams its whole markdown while it runs and is finalized when it stops. The last
//!   state sent of recent cards is remembered, so a state already shown costs no call.
//! - In HTTP callback mode ([`DingTalkPlatform::binding_clicks`]) an approval card's private
//!   data gives each person who may decide it their own click key, which its buttons send back
//!   (see [`crate::card::ClickKeys`]).
//! - Notices are robot messages; a private notice is a one-to-one robot message in markdown.
//! - Profiles: [`Profile::default`]. DingTalk's user lookup lives on the legacy host with another
//!   token, and a robot message already carries the sender's name (`senderNick`).

mod update;

use std::sync::Arc;
use std::time::Duration;

use serde_json::Map;
use serde_json::Value;
use sha2::{Digest, Sha256};
use workmate_adapter::{
    AdapterError, BoxFuture, ChatAdapter, ChatPlatform, ChatTarget, Deciders, Downloaded,
    InboundFile, Platform, PostedCard, Posting, Profile,
};
use workmate_cards::Card;
use workmate_protocol::Surface;

use crate::card::{self, ClickKeys, Rendered, Template};
use crate::web::{CallbackType, CardAudience, CardSpace, DingTalkWeb, MsgKey, Recipient};

/// The default least time between two updates of one card: every update is an API call, counted
/// against the app's QPS and a standard organisation's 5,000 calls a month.
pub const MIN_UPDATE_INTERVAL: Duration = Duration::from_secs(1);
/// The default most answer text one card shows, in bytes: DingTalk recommends keeping a streamed
/// AI card within about 3 KB; a longer answer goes on in the next card. The status line and the
/// steps come on top of it.
pub const ANSWER_BUDGET: usize = 3_000;
/// Cards whose last state sent is remembered.
const REMEMBERED_CARDS: u64 = 4_096;
/// The title of a private notice in the chat list.
const NOTICE_TITLE: &str = "workmate";

/// What the platform needs besides the client (whose Client ID is the robot code).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DingTalkConfig {
    /// The approval template's id (`templates/approval.json`, imported in the card platform).
    pub approval_template_id: String,
    /// The answer template's id: an AI card whose streaming markdown variable is `content`
    /// (`templates/answer.json`).
    pub answer_template_id: String,
    /// How the approval card's clicks come back.
    pub callback: CallbackType,
    /// The least time between two updates of one card.
    pub min_update_interval: Duration,
    /// The most answer text, in bytes, one card shows.
    pub answer_budget: usize,
}

impl DingTalkConfig {
    /// The two templates, clicks over the Stream connection, and the default pace and budget.
    pub fn new(approval_template_id: &str, answer_template_id: &str) -> Self {
        Self {
            approval_template_id: approval_template_id.to_owned(),
            answer_template_id: answer_template_id.to_owned(),
            callback: CallbackType::Stream,
            min_update_interval: MIN_UPDATE_INTERVAL,
            answer_budget: ANSWER_BUDGET,
        }
    }
}

/// DingTalk, for the chat layer.
#[derive(Debug)]
pub struct DingTalkPlatform {
    web: Arc<DingTalkWeb>,
    config: DingTalkConfig,
    /// The last state sent of recent cards, by `outTrackId`.
    last: moka::sync::Cache<String, Arc<Rendered>>,
    /// In HTTP callback mode: each decider's click key, put in an approval card's private data.
    binding: Option<ClickBinding>,
}

/// What binds approval buttons to their deciders (see [`crate::card::ClickKeys`]).
#[derive(Debug)]
struct ClickBinding {
    keys: ClickKeys,
    deciders: Arc<dyn Deciders>,
}

impl DingTalkPlatform {
    /// The platform over a client.
    pub fn new(web: Arc<DingTalkWeb>, config: DingTalkConfig) -> Self {
        Self {
            web,
            config,
            last: moka::sync::Cache::new(REMEMBERED_CARDS),
            binding: None,
        }
    }

    /// The same platform binding each approval card's buttons to the people who may decide it:
    /// each gets their own key from `keys` in the card's private data, which an HTTP card
    /// callback must carry back. Needed when clicks come as HTTP callbacks.
    #[must_use]
    pub fn binding_clicks(mut self, keys: ClickKeys, deciders: Arc<dyn Deciders>) -> Self {
        self.binding = Some(ClickBinding { keys, deciders });
        self
    }

    /// The private data of approval card `out_track_id` for `item`: each decider's click key,
    /// when clicks are bound; empty otherwise.
    async fn private_data(
        &self,
        out_track_id: &str,
        item: &workmate_protocol::InboxItemId,
    ) -> Result<Map<String, serde_json::Value>, AdapterError> {
        let Some(binding) = &self.binding else {
            return Ok(Map::new());
        };
        let deciders = binding.deciders.deciders(Surface::Dingtalk, item).await?;
        Ok(binding.keys.private_data(out_track_id, &deciders))
    }

    /// The client.
    pub fn web(&self) -> &Arc<DingTalkWeb> {
        &self.web
    }

    /// The configuration.
    pub fn config(&self) -> &DingTalkConfig {
        &self.config
    }
}

/// A card's `outTrackId` (see the module docs): an approval card's names its item, any other's
/// is its post key's.
fn out_track_id(target: &ChatTarget, next: &Rendered, key: &str) -> String {
    match &next.item_id {
        Some(item) if next.template == Template::Approval => {
            if is_group(&target.chat_id) {
                card::out_track_id(item)
            } else {
                card::personal_out_track_id(item, &target.chat_id)
            }
        }
        _ => format!("wm_{key}"),
    }
}

/// Where a chat is, for cards (see the module docs).
pub(crate) fn card_space(chat_id: &str) -> CardSpace<'_> {
    if is_group(chat_id) {
        CardSpace::Group(chat_id)
    } else {
        CardSpace::Robot(chat_id)
    }
}

/// Where a chat is, for robot messages.
fn recipient(chat_id: &str) -> Recipient<'_> {
    if is_group(chat_id) {
        Recipient::Group(chat_id)
    } else {
        Recipient::User(chat_id)
    }
}

fn is_group(chat_id: &str) -> bool {
    chat_id.starts_with("cid")
}

/// A stable hex key of `parts`.
pub(crate) fn key_of(parts: &[&str]) -> String {
    let mut hash = Sha256::new();
    for part in parts {
        hash.update(part.as_bytes());
        hash.update([0]);
    }
    hex::encode(&hash.finalize()[..16])
}

fn unreadable() -> AdapterError {
    AdapterError::Rejected("not a DingTalk card rendering".into())
}

impl ChatAdapter for DingTalkPlatform {
    fn describe(&self) -> &'static ChatPlatform {
        &crate::DINGTALK
    }

    fn render(&self, card: &Card) -> Value {
        card::render(card)
    }

    /// The `outTrackId` is chosen by workmate: known before the card is delivered.
    fn reserve<'a>(
        &'a self,
        target: &'a ChatTarget,
        rendered: &'a Value,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<PostedCard>, AdapterError>> {
        Box::pin(async move {
            let next = Rendered::from_value(rendered).ok_or_else(unreadable)?;
            Ok(Some(PostedCard {
                chat_id: target.chat_id.clone(),
                message_id: out_track_id(target, &next, key),
            }))
        })
    }

    /// Creates and delivers the card under its `outTrackId`; a post that may have been made
    /// before (`again`) first tries to update that card, and creates it only if that fails.
    fn post<'a>(
        &'a self,
        target: &'a ChatTarget,
        rendered: &'a Value,
        posting: &'a Posting,
    ) -> BoxFuture<'a, Result<PostedCard, AdapterError>> {
        Box::pin(async move {
            let next = Rendered::from_value(rendered).ok_or_else(unreadable)?;
            let out_track_id = match &posting.reserved {
                Some(reserved) => reserved.message_id.clone(),
                None => out_track_id(target, &next, &posting.key),
            };
            let posted = PostedCard {
                chat_id: target.chat_id.clone(),
                message_id: out_track_id.clone(),
            };
            if posting.again
                && self
                    .web
                    .update_card_data(&out_track_id, &next.params)
                    .await
                    .is_ok()
            {
                tracing::debug!(card = %out_track_id, "The card an earlier attempt posted is there; updated it.");
                self.last.insert(out_track_id, Arc::new(next));
                return Ok(posted);
            }
            let (template_id, callback) = match next.template {
                Template::Approval => (
                    &self.config.approval_template_id,
                    Some(&self.config.callback),
                ),
                Template::Answer => (&self.config.answer_template_id, None),
            };
            let private_data = match &next.item_id {
                Some(item) if next.template == Template::Approval => {
                    self.private_data(&out_track_id, item).await?
                }
                _ => Map::new(),
            };
            self.web
                .create_and_deliver(
                    template_id,
                    &out_track_id,
                    &next.params,
                    CardAudience {
                        private_data: Some(&private_data),
                        mention: target.person.as_deref(),
                    },
                    card_space(&target.chat_id),
                    callback,
                )
                .await?;
            self.last.insert(out_track_id, Arc::new(next));
            Ok(posted)
        })
    }

    /// A user id as the chat is the person's one-to-one chat with the robot.
    fn direct_target(&self, user: &str) -> Option<ChatTarget> {
        Some(ChatTarget::chat(user))
    }

    fn update<'a>(
        &'a self,
        posted: &'a PostedCard,
        rendered: &'a Value,
        version: i64,
    ) -> BoxFuture<'a, Result<(), AdapterError>> {
        Box::pin(async move {
            let next = Rendered::from_value(rendered).ok_or_else(unreadable)?;
            Ok(self.apply(&posted.message_id, next, version).await?)
        })
    }

    fn min_update_interval(&self) -> Duration {
        self.config.min_update_interval
    }

    fn answer_budget(&self) -> usize {
        self.config.answer_budget
    }

    fn has_threads(&self) -> bool {
        false
    }
}

impl Platform for DingTalkPlatform {
    fn download<'a>(
        &'a self,
        file: &'a InboundFile,
        max_bytes: u64,
    ) -> BoxFuture<'a, Result<Downloaded, AdapterError>> {
        Box::pin(self.web.message_file(&file.handle, max_bytes, &file.name))
    }

    fn profile<'a>(&'a self, _user: &'a str) -> BoxFuture<'a, Profile> {
        Box::pin(async { Profile::default() })
    }

    fn notice<'a>(
        &'a self,
        target: &'a ChatTarget,
        text: &'a str,
    ) -> BoxFuture<'a, Result<(), AdapterError>> {
        Box::pin(async move {
            self.web
                .send_robot(recipient(&target.chat_id), MsgKey::Text(text))
                .await?;
            Ok(())
        })
    }

    fn private_notice<'a>(
        &'a self,
        _target: &'a ChatTarget,
        user: &'a str,
        card: &'a Card,
    ) -> BoxFuture<'a, Result<(), AdapterError>> {
        Box::pin(async move {
            let text = card::markdown(card);
            let message = MsgKey::Markdown {
                title: NOTICE_TITLE,
                text: &text,
            };
            self.web.send_robot(Recipient::User(user), message).await?;
            Ok(())
        })
    }

    fn cached_items(&self) -> Vec<(&'static str, u64)> {
        vec![("dingtalk_card_states", self.last.entry_count())]
    }
}
