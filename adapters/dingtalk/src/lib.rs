//! DingTalk (钉钉): its wire format, and nothing else.
//!
//! - [`card`]: the interactive-card templates' variables (the approval card's `cardParamMap`), the
//!   choice a button click carries, and the answer card's markdown.
//! - [`inbound`]: typed decoding of the robot's message callback (Stream or HTTP, the same JSON).
//! - [`mapping`]: those messages as the chat layer's neutral [`workmate_adapter::Inbound`]s.
//! - [`sign`]: the robot signature, `base64(HMAC-SHA256(secret, timestamp_ms + "\n" + secret))`,
//!   which signs a custom robot's webhook URL and the `timestamp`/`sign` headers DingTalk puts on
//!   a robot's HTTP callback.
//! - [`stream`]: the Stream mode client: a WebSocket the app opens, over which DingTalk pushes
//!   events, robot messages and card callbacks, each acked with its handler's answer.
//!
//! The encrypted event push uses the crypto DingTalk shares with WeCom (`workmate-wxcrypto`).
//!
//! Invariant: nothing here decides authority, sessions or tenants, stores anything or calls the
//! engine (see the chat layer).

pub mod card;
pub mod inbound;
pub mod mapping;
pub mod sign;
pub mod stream;
