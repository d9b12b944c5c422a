//! The toolkit every chat-platform adapter (Slack, Feishu, WeCom, DingTalk) is built from.
//!
//! - [`ChatAdapter`]: what a platform implements: render the card IR to its card JSON, post a
//!   card, update it in place, and say how often one message may be updated.
//! - [`WorkQueue`]: ack first, process after. A webhook handler hands the work to a bounded queue
//!   and answers the platform at once, well inside its 1–5 s deadline, whatever the engine is doing.
//! - [`first_delivery`]: platforms deliver at least once; an event id seen within its TTL is not
//!   processed again. TTLs per platform are in [`dedupe_ttl`].
//! - [`Coalescer`]: a live card gets many updates a second while an answer streams; the platform
//!   takes about one per second per message. The coalescer sends the latest state at the
//!   platform's pace, never an older state after a newer one, and records message ids and update
//!   versions so any replica can update the card after a restart.
//! - [`RetryPolicy`]: backoff on 429/5xx that honours `Retry-After`.
//! - [`parse_command`]: the `/workmate …` text commands, the same on every platform.

mod ack;
mod adapter;
mod card_store;
mod coalesce;
mod commands;
mod dedupe;
mod error;
mod retry;

pub use ack::{Job, QueueFull, WorkQueue};
pub use adapter::{AdapterError, BoxFuture, ChatAdapter, ChatTarget, PostedCard};
pub use card_store::{CardId, CardStore, MemoryCardStore, StoredCard};
pub use coalesce::Coalescer;
pub use commands::{AutomationAction, ChatCommand, CommandError, USAGE, parse_command};
pub use dedupe::{
    DINGTALK, DINGTALK_DEDUPE_TTL, FALLBACK_DEDUPE_TTL, FEISHU, FEISHU_DEDUPE_TTL, SLACK,
    SLACK_DEDUPE_TTL, WECOM, WECOM_DEDUPE_TTL, dedupe_ttl, first_delivery,
};
pub use error::{Error, Result};
pub use retry::{RetryPolicy, with_retry};
