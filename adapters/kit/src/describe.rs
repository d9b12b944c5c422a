//! [`ChatPlatform`]: what the chat layer knows of a platform beyond its calls, one constant per
//! adapter.
//!
//! Invariant: the chat layer asks the registered platform's descriptor, never matches on the
//! platform's [`Surface`], for anything that differs between platforms and is not a call: the
//! name a person reads, the names `send_message` targets start with and the shape of their chat
//! ids, and how long a delivery is remembered to recognise the platform's redelivery. So a new
//! platform is its adapter, its descriptor and one registration.

use std::time::Duration;

use workmate_protocol::Surface;

/// A platform's fixed facts.
#[derive(Clone, Copy, Debug)]
pub struct ChatPlatform {
    /// The surface its rows are stored under.
    pub surface: Surface,
    /// The name a person reads, e.g. "WeCom".
    pub label: &'static str,
    /// The names a `send_message` target may start with, lower case (`feishu` and `lark`).
    pub target_names: &'static [&'static str],
    /// Whether a chat id of the platform may look like this (`send_message`'s target grammar
    /// after the platform's name): a cheap check of shape, not of existence.
    pub chat_id: fn(&str) -> bool,
    /// How long a delivery is remembered, so a redelivery is recognised: longer than the
    /// platform's whole retry schedule.
    pub dedupe_window: Duration,
}

impl ChatPlatform {
    /// Whether a `send_message` target starting with `name` (any case) is for this platform.
    pub fn is_named(&self, name: &str) -> bool {
        self.target_names
            .iter()
            .any(|known| known.eq_ignore_ascii_case(name))
    }
}

/// A chat id that is one token of printable ASCII without `:`, the shape every platform's ids
/// share; a platform with stricter ids checks more.
pub fn plain_chat_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 128 && id.bytes().all(|b| b.is_ascii_graphic() && b != b':')
}
