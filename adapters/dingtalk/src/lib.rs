//! DingTalk (钉钉): its wire format, and nothing else.
//!
//! - [`sign`]: the robot signature, `base64(HMAC-SHA256(secret, timestamp_ms + "\n" + secret))`,
//!   which signs a custom robot's webhook URL and the `timestamp`/`sign` headers DingTalk puts on
//!   a robot's HTTP callback.
//!
//! The encrypted event push uses the crypto DingTalk shares with WeCom (`workmate-wxcrypto`).
//!
//! Invariant: nothing here decides authority, sessions or tenants, stores anything or calls the
//! engine (see the chat layer).

pub mod sign;
