//! The long connection's frames: package `pbbp2` of Feishu's SDKs (proto2), derived by hand.
//!
//! Invariant: an ack is the frame it answers with only `biz_rt` and the payload changed, so
//! Feishu can match it by `SeqID`, `LogID`, `service` and the routing headers it sent; proto2
//! `required` fields are always encoded, zero or not.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::Serialize;

/// Header key: what a frame carries (`ping`, `pong`, `event`, `card`).
pub const TYPE: &str = "type";
/// Header key: the id of a data message, shared by all of its chunks.
pub const MESSAGE_ID: &str = "message_id";
/// Header key: how many chunks the message was split into (1 when it was not).
pub const SUM: &str = "sum";
/// Header key: this chunk's index, from 0.
pub const SEQ: &str = "seq";
/// Header key: Feishu's trace id of the delivery.
pub const TRACE_ID: &str = "trace_id";
/// Header key: how long the handler took, in milliseconds (set on acks).
pub const BIZ_RT: &str = "biz_rt";

/// One header of a [`Frame`].
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct Header {
    /// The header's name.
    #[prost(string, required, tag = "1")]
    pub key: String,
    /// The header's value.
    #[prost(string, required, tag = "2")]
    pub value: String,
}

/// One WebSocket message of the long connection, in either direction.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct Frame {
    /// `SeqID`.
    #[prost(uint64, required, tag = "1")]
    pub seq_id: u64,
    /// `LogID`.
    #[prost(uint64, required, tag = "2")]
    pub log_id: u64,
    /// The service id of the connection (`service_id` of the endpoint URL).
    #[prost(int32, required, tag = "3")]
    pub service: i32,
    /// The [`FrameKind`], as its wire number.
    #[prost(int32, required, tag = "4")]
    pub method: i32,
    /// The headers, in the order they were sent.
    #[prost(message, repeated, tag = "5")]
    pub headers: Vec<Header>,
    /// How the payload is encoded (unused by Feishu today).
    #[prost(string, optional, tag = "6")]
    pub payload_encoding: Option<String>,
    /// What the payload is (unused by Feishu today).
    #[prost(string, optional, tag = "7")]
    pub payload_type: Option<String>,
    /// The payload: event JSON (a chunk of it), a pong's client config, an ack's response.
    #[prost(bytes = "vec", optional, tag = "8")]
    pub payload: Option<Vec<u8>>,
    /// `LogIDNew`.
    #[prost(string, optional, tag = "9")]
    pub log_id_new: Option<String>,
}

/// What a frame is for, from its `method`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameKind {
    /// Pings and pongs.
    Control,
    /// Events and callbacks, and their acks.
    Data,
}

impl FrameKind {
    /// The wire number of this kind.
    pub fn method(self) -> i32 {
        match self {
            Self::Control => 0,
            Self::Data => 1,
        }
    }
}

/// The outcome an ack reports to Feishu.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckCode {
    /// Handled (HTTP-like 200).
    Ok,
    /// The handler failed (HTTP-like 500).
    Failed,
}

/// An ack's payload, as Feishu's SDKs write it.
#[derive(Serialize)]
struct AckPayload {
    code: u16,
    headers: serde_json::Map<String, serde_json::Value>,
    /// The handler's response JSON, base64 (how Go encodes `[]byte`).
    data: Option<String>,
}

impl Frame {
    /// The kind of this frame; `None` for a method this client does not know.
    pub fn kind(&self) -> Option<FrameKind> {
        match self.method {
            0 => Some(FrameKind::Control),
            1 => Some(FrameKind::Data),
            _ => None,
        }
    }

    /// The value of the first header named `key`.
    pub fn header(&self, key: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|h| h.key == key)
            .map(|h| h.value.as_str())
    }

    /// A header read as a number; `None` when absent or not a number.
    pub fn header_number(&self, key: &str) -> Option<u64> {
        self.header(key).and_then(|v| v.trim().parse().ok())
    }

    /// The `type` header (`ping`, `pong`, `event`, `card`), empty when absent.
    pub fn message_type(&self) -> &str {
        self.header(TYPE).unwrap_or_default()
    }

    /// Sets header `key` to `value`, replacing an earlier value or appending it.
    pub fn set_header(&mut self, key: &str, value: String) {
        match self.headers.iter_mut().find(|h| h.key == key) {
            Some(header) => header.value = value,
            None => self.headers.push(Header {
                key: key.to_owned(),
                value,
            }),
        }
    }

    /// The ping a client sends every `PingInterval` on a connection of service `service`.
    pub fn ping(service: i32) -> Self {
        Self {
            service,
            method: FrameKind::Control.method(),
            headers: vec![Header {
                key: TYPE.to_owned(),
                value: "ping".to_owned(),
            }],
            ..Self::default()
        }
    }

    /// The ack of this data frame: the same frame with header `biz_rt` = `elapsed_ms` and the
    /// payload `{"code":…,"headers":{},"data":<base64 of response>}`.
    #[must_use]
    pub fn into_ack(mut self, code: AckCode, response: Option<&[u8]>, elapsed_ms: u64) -> Self {
        self.set_header(BIZ_RT, elapsed_ms.to_string());
        let payload = AckPayload {
            code: match code {
                AckCode::Ok => 200,
                AckCode::Failed => 500,
            },
            headers: serde_json::Map::new(),
            data: response.map(|r| BASE64.encode(r)),
        };
        // A struct of a number, an empty map and a string always serializes.
        self.payload = Some(serde_json::to_vec(&payload).unwrap_or_default());
        self
    }

    /// The frame as bytes for the socket.
    pub fn encode(&self) -> Vec<u8> {
        prost::Message::encode_to_vec(self)
    }

    /// A frame read from the socket.
    pub fn decode(bytes: &[u8]) -> Result<Self, prost::DecodeError> {
        prost::Message::decode(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn required_fields_are_encoded_even_when_zero() {
        let ping = Frame::ping(0).encode();
        // SeqID, LogID, service and method are present as 0 (tags 1..4, varint 0).
        assert_eq!(&ping[..8], &[0x08, 0, 0x10, 0, 0x18, 0, 0x20, 0]);
        let decoded = Frame::decode(&ping).unwrap();
        assert_eq!(decoded.kind(), Some(FrameKind::Control));
        assert_eq!(decoded.message_type(), "ping");
        assert_eq!(decoded.payload, None);
    }

    #[test]
    fn a_ping_carries_the_service_id() {
        let ping = Frame::decode(&Frame::ping(7).encode()).unwrap();
        assert_eq!(ping.service, 7);
        assert_eq!(ping.method, 0);
        assert_eq!(ping.headers.len(), 1);
    }

    #[test]
    fn an_ack_is_the_same_frame_with_biz_rt_and_the_response() {
        let frame = Frame {
            seq_id: 11,
            log_id: 12,
            service: 7,
            method: 1,
            headers: vec![
                Header {
                    key: TYPE.into(),
                    value: "event".into(),
                },
                Header {
                    key: MESSAGE_ID.into(),
                    value: "m1".into(),
                },
            ],
            payload: Some(b"{\"schema\":\"2.0\"}".to_vec()),
            log_id_new: Some("l1".into()),
            ..Frame::default()
        };
        let ack = frame
            .clone()
            .into_ack(AckCode::Ok, Some(b"{\"toast\":{}}"), 3);
        assert_eq!(
            (ack.seq_id, ack.log_id, ack.service, ack.method),
            (11, 12, 7, 1)
        );
        assert_eq!(ack.headers[..2], frame.headers[..]);
        assert_eq!(ack.header(BIZ_RT), Some("3"));
        assert_eq!(ack.log_id_new.as_deref(), Some("l1"));
        let payload: Value = serde_json::from_slice(ack.payload.as_deref().unwrap()).unwrap();
        assert_eq!(
            payload,
            json!({"code": 200, "headers": {}, "data": "eyJ0b2FzdCI6e319"})
        );

        let failed = frame
            .into_ack(AckCode::Failed, None, 5)
            .into_ack(AckCode::Failed, None, 6);
        assert_eq!(
            failed.header(BIZ_RT),
            Some("6"),
            "biz_rt is replaced, not repeated"
        );
        assert_eq!(failed.headers.len(), 3);
        let payload: Value = serde_json::from_slice(failed.payload.as_deref().unwrap()).unwrap();
        assert_eq!(payload, json!({"code": 500, "headers": {}, "data": null}));
    }

    #[test]
    fn headers_read_as_numbers_and_unknown_methods_have_no_kind() {
        let mut frame = Frame {
            method: 9,
            ..Frame::default()
        };
        frame.set_header(SUM, "3".into());
        frame.set_header(SEQ, "x".into());
        assert_eq!(frame.kind(), None);
        assert_eq!(frame.header_number(SUM), Some(3));
        assert_eq!(frame.header_number(SEQ), None);
        assert_eq!(frame.header_number(TRACE_ID), None);
        assert_eq!(frame.message_type(), "");
    }

    #[test]
    fn garbage_is_a_decode_error() {
        assert!(Frame::decode(&[0xff, 0xff, 0xff]).is_err());
        // prost does not check proto2 presence: missing required fields read as zero.
        assert_eq!(Frame::decode(&[]).unwrap(), Frame::default());
    }
}
