//! The toolkit every chat-platform adapter (Slack, Feishu, WeCom, DingTalk) is built from. It
//! knows no store and no engine: a platform built on it is only its wire format.
//!
//! - [`Inbound`]: the neutral shape a platform maps its messages, clicks and commands to.
//! - [`Platform`] (a [`ChatAdapter`] plus profiles and notices): what a platform implements for
//!   the chat layer. [`ChatAdapter`] renders the card IR to the platform's card JSON, posts a
//!   card, updates it in place, and says how often one message may be updated.
//!   [`bounded_profile`] keeps a platform's profile lookup within its time bound.
//! - [`Connection`]: a long-lived connection mode (Socket Mode, long connection, Stream), which
//!   hands deliveries to an [`InboundSink`] and acknowledges only what the sink stored.
//!   [`ws::supervise`] runs every platform's WebSocket: dialing, reconnection, pings, the
//!   handler pool, acks and drain; a platform supplies only a [`ws::Protocol`].
//! - [`Coalescer`]: a live card gets many updates a second while an answer streams; the platform
//!   takes about one per second per message. The coalescer sends the latest state at the
//!   platform's pace, never an older state after a newer one, and records message ids and update
//!   versions through a [`CardStore`] so any replica can update the card after a restart.
//! - [`RetryPolicy`]: the one retry layer for platform calls: backoff on 429/5xx that honours
//!   `Retry-After`, and no retry of what the platform refused.
//! - [`Deciders`]: who may answer a prompt, for a platform that binds its buttons to people.
//! - [`ChatPlatform`]: a platform's fixed facts (its name, `send_message` targets, how long a
//!   delivery is remembered), one constant per adapter.
//! - [`config`]: what every platform's configuration section reads the same way (secrets, `mode`,
//!   `api_base`, `admins`), and [`config::InvalidKey`], the key a section's error is about.

mod adapter;
pub mod backoff;
mod card_store;
mod coalesce;
pub mod config;
mod connection;
mod deciders;
mod dedupe;
mod describe;
mod download;
mod error;
mod inbound;
pub mod net;
mod platform;
mod retry;
mod shared;
#[cfg(feature = "test-support")]
pub mod testing;
pub mod ws;

pub use adapter::{AdapterError, BoxFuture, ChatAdapter, ChatTarget, PostedCard, Posting};
pub use card_store::{CardId, CardStore, MemoryCardStore, StoredCard};
pub use coalesce::Coalescer;
pub use connection::{
    ClickReply, Client, CommandReply, Connection, InboundSink, NotTaken, Taken, ToastKind,
};
pub use deciders::Deciders;
pub use dedupe::FALLBACK_DEDUPE_WINDOW;
pub use describe::{ChatPlatform, plain_chat_id};
pub use download::{Downloaded, capped_fetch, capped_get, disposition_name, is_html_page};
pub use error::{Error, Result};
pub use inbound::{Inbound, InboundFile, InboundKind, InboundUser, menu_command};
pub use platform::{PROFILE_LOOKUP, Platform, Profile, bounded_profile};
pub use retry::{RetryPolicy, with_retry};
pub use shared::SharedValues;
pub use workmate_net::{AccessToken, REFRESH_AHEAD};
