//! Typed decoding of what DingTalk sends a robot: the message callback (Stream topic
//! `/v1.0/im/bot/messages/get`, or the robot's HTTP callback, the same JSON).
//!
//! Invariant: decoding works on a body whose signature was checked ([`crate::sign`]) or that came
//! over the Stream connection; a message type workmate does not read decodes with no text rather
//! than failing, so DingTalk still gets its acknowledgement.

mod robot;

pub use robot::{RobotMessage, decode_robot};

/// Why a body could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not a DingTalk robot message: {0}")]
pub struct DecodeError(pub String);
