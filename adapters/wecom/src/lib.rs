//! WeCom (企业微信): its wire format, and nothing else.
//!
//! - [`callback`]: the callback URL's checks: `GET` URL verification (`echostr`) and `POST`
//!   bodies (the smart robot's JSON `{"encrypt": …}`, the self-built app's XML `<Encrypt>`),
//!   verified and decrypted with the crypto WeCom shares with DingTalk (`workmate-wxcrypto`), and
//!   the encrypted passive replies.
//! - [`inbound`]: typed decoding of what WeCom sends (smart-robot messages and events, stream
//!   refreshes, template-card clicks; the self-built app's XML messages and events).
//! - [`mapping`]: those deliveries as the chat layer's neutral [`workmate_adapter::Inbound`]s.
//! - [`card`]: the card IR as WeCom `template_card`s (approvals and questions as
//!   `button_interaction`, outcomes as `text_notice`) and answers as markdown stream content
//!   within the 20,480-byte cap.
//! - [`WeComPlatform`] and [`dispatch_robot`]: the smart robot in callback mode, for the chat
//!   layer: answers streamed into the message that asked, prompts as template cards, clicks
//!   answered with the updated card.
//! - [`ws`]: the smart robot's long connection (WebSocket mode): subscribe, heartbeat,
//!   callbacks to a handler, replies and proactive sends acknowledged by `req_id`, reconnection.
//! - [`config`]: the `[platforms.wecom]` section and its validation.
//!
//! Invariant: nothing here decides authority, sessions or tenants, stores anything or calls the
//! engine (see the chat layer).

pub mod app;
pub mod callback;
pub mod card;
pub mod config;
mod connection;
mod describe;
mod dispatch;
pub mod inbound;
pub mod mapping;
mod platform;
pub mod ws;

pub use connection::WeComConnection;
pub use describe::WECOM;
pub use dispatch::{dispatch_app, dispatch_robot};
pub use platform::{
    HAND_OVER_AFTER, MAX_APP_MARKDOWN_BYTES, ReplyHandle, WeComPlatform, stream_id, stream_message,
};
