//! The smart robot's long connection ("WebSocket mode"): WeCom pushes the bot's callbacks over
//! a WebSocket the process opens with the bot's Bot ID and Secret, and takes its replies on the
//! same socket, so no public URL, signature or decryption is involved. A protocol client only:
//! it moves frames and JSON bodies and knows no tenant, session or chat layer.
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
mod dial;
mod dispatch;
mod error;
mod frame;
mod handler;
mod outbox;
mod sender;
mod session;
mod status;

pub use client::{LongConnection, Timings, WECOM_WS_URL};
pub use dispatch::{MAX_IN_FLIGHT, MAX_WAITING};
pub use error::{Error, SendError};
pub use frame::{
    DISCONNECTED_EVENT, EVENT_CALLBACK, MSG_CALLBACK, PING, RESPOND_MSG, RESPOND_UPDATE,
    RESPOND_WELCOME, SEND_MSG, SUBSCRIBE,
};
pub use handler::FrameHandler;
pub use sender::{Ack, Sender};
pub use session::MISSED_PINGS;
pub use status::Status;
