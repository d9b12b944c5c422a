//! The platform-neutral chat layer: everything that is the same on Slack, Feishu, WeCom and
//! DingTalk lives here once.
//!
//! A platform maps its verified, decoded deliveries to [`Inbound`]s and hands them to a [`Chat`]
//! (over its HTTP routes, or through a [`workmate_adapter::Connection`]). From there one path
//! serves every platform:
//!
//! ```text
//! durable intake -> dedupe -> identity -> session -> card pump ->
//!     /workmate command | reply token | click | user message (retried while the session is busy)
//! ```
//!
//! Invariants:
//! - **Nothing is acknowledged before it is durable.** [`Chat::accept`] writes the delivery to
//!   the intake table and only then says [`Taken::Stored`]; workers drain the table, and after a
//!   crash the unfinished rows run again. A message's row is marked done in the same
//!   transaction that puts it in the session's history, so it runs exactly once.
//! - **A redelivery is not applied twice.** The intake row's key is the platform's delivery id,
//!   unique per tenant and platform (events, clicks and slash commands alike).
//! - **One authority rule.** Every way of answering (click, reply token) goes through the
//!   engine's resolver checks; every session command checks owner-or-admin; what a person sees
//!   follows the store's one visibility rule ([`workmate_store::Sight`]), as over HTTP.
//! - **The layer decides, platforms render.** Replies are card IR; a platform only renders and
//!   sends them.
//!
//! Layout: [`Chat`] and the state every feature shares live in `handle`, beside plain types
//! (`config`, `error`, `tenants`, `account_links`, `queue`, `text`, `notify`); none imports a
//! feature. Each feature (`intake`, `jobs`, `messages`, `commands`, `directory`, `recall`, …)
//! depends on those and names any other feature it uses; `layer`, the composition root, builds
//! the handle and wires the features, and the intake's workers get the job path as a trait
//! object rather than importing it. `tests/layout.rs` fails when an import circle spans more
//! than two files.

mod account_links;
mod answers;
mod approver_copies;
mod cards_store;
mod clicks;
pub mod commands;
mod config;
mod connect_links;
mod connections;
mod conversations;
mod deciders;
mod directory;
mod error;
mod files;
mod handle;
mod identity;
mod intake;
mod jobs;
mod layer;
mod messages;
mod notify;
mod pump;
mod queue;
mod recall;
mod runs;
mod send_message;
mod session_cards;
mod shared_values;
mod tenants;
mod text;
mod trace;

pub use account_links::{AccountLinks, LinkRequest};
pub use cards_store::StoreCards;
pub use config::{ChatConfig, IntakeObserver, PlatformSettings};
pub use connect_links::{ConnectLink, ConnectLinks, ConnectRequest, MCP_TARGET_PREFIX};
pub use connections::HeldConnection;
pub use error::{ChatError, Result};
pub use handle::Chat;
pub use send_message::{MessageTarget, SEND_MESSAGE, send_message_metadata};
pub use tenants::tenant_of;
pub use workmate_adapter::{
    ClickReply, CommandReply, Inbound, InboundKind, InboundUser, NotTaken, Platform, Taken,
};
