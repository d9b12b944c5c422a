//! The chat platforms workmate answers on: their routes and connections, wired to the chat
//! layer.
//!
//! Each platform's wire format lives in its adapter crate and everything platform-neutral in
//! `workmate-chat`; this module only mounts routes and starts connections.

pub mod dingtalk;
pub mod feishu;
pub mod slack;
pub mod wecom;
