//! The smart robot's long connection ("WebSocket mode"): WeCom pushes the bot's callbacks over
//! a WebSocket the process opens with the bot's Bot ID and Secret, and takes its replies on the
//! same socket, so no public URL, signature or decryption is involved. A protocol client only:
//! it moves frames and JSON bodies and knows no tenant, session or chat layer. The connection
//! runs on the kit's supervisor ([`workmate_adapter::ws`]).
//!
//! - [`LongConnection`]: connects to `wss://openws.work.weixin.qq.com`, subscribes
//!   (`aibot_subscribe`), pings every 30 s, hands each `aibot_msg_callback` and
//!   `aibot_event_callback` to a [`FrameHandler`] on its own task, and reconnects with backoff;
//!   its [`Status`] tells what it is doing.
//! - [`Sender`]: replies to a callback with its `req_id` (`aibot_respond_msg`,
//!   `aibot_respond_welcome_msg`, `aibot_respond_update_msg`) or sends proactively
//!   (`aibot_send_msg`, a new `req_id`), and waits for WeCom's answer.
//!
//! Invariants: WeCom keeps one connection per bot id and a new one kicks the old, so one
//! process runs it (the chat layer's lease) and a `disconnected_event` is reported and waited
//! out, never fought; replies to one `req_id` are written one after another, each after the
//! previous one's answer; the reader never waits for a handler; the secret never reaches a log
//! or an error.

mod client;
mod error;
mod frame;
mod sender;

use serde_json::Value;
use workmate_adapter::BoxFuture;

pub use client::{LongConnection, MAX_IN_FLIGHT, MAX_WAITING, MISSED_PINGS, Timings, WECOM_WS_URL};
pub use error::{Error, SendError};
pub use frame::{
    DISCONNECTED_EVENT, EVENT_CALLBACK, MSG_CALLBACK, PING, RESPOND_MSG, RESPOND_UPDATE,
    RESPOND_WELCOME, SEND_MSG, SUBSCRIBE,
};
pub use sender::{Ack, Sender};

/// Where the long connection is. Watch it with [`LongConnection::status`].
pub type Status = workmate_adapter::ws::Status<Error>;

/// Where the long connection delivers WeCom's callbacks.
pub trait FrameHandler: Send + Sync + std::fmt::Debug {
    /// Handles one callback. `cmd` is [`MSG_CALLBACK`] or [`EVENT_CALLBACK`]; `req_id` is the
    /// frame's, to answer it with [`Sender::respond`]; `body` is the callback's JSON, the same
    /// as the HTTP callback's once decrypted.
    ///
    /// Each call runs on its own task, so a slow turn never holds up reading: at most
    /// [`MAX_IN_FLIGHT`] run at once and up to [`MAX_WAITING`] more wait for a slot; a callback
    /// beyond that is dropped with an error log (the reader never stops, since acks and pings
    /// travel on the same socket). On stop, running calls get [`Timings::drain`] and are then
    /// cut. `disconnected_event` is not handed over: the connection reports it.
    fn handle(&self, cmd: &str, req_id: &str, body: Value) -> BoxFuture<'_, ()>;
}
