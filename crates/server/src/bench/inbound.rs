//! The inbound path of every platform, in process: from a request's raw headers and body to its
//! typed event (verify, decrypt, decode), without HTTP, mapping or storage.
//!
//! Invariant: each row runs exactly what the platform's route runs before it maps the event, on
//! a realistic signed (and, on Feishu, encrypted) group-chat mention, and a run whose input fails
//! to verify or decode to that mention stops the bench instead of timing an error path.

use std::hint::black_box;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use workmate_feishu::inbound::{Envelope, Event};
use workmate_feishu::webhook::{Signed, WebhookAuth};

use crate::error::StartupError;

/// The target of every row: the whole inbound path of one event.
pub(super) const TARGET: Duration = Duration::from_micros(3);
/// Events per round, and rounds; a row reports the median round.
const EVENTS: u32 = 20_000;
const ROUNDS: usize = 7;

/// One platform's figure.
#[derive(Debug)]
pub(super) struct InboundRow {
    pub(super) platform: &'static str,
    pub(super) what: &'static str,
    /// The request body's size.
    pub(super) bytes: usize,
    /// Median time per event over the rounds.
    pub(super) per_event: Duration,
    /// Fastest and slowest round, per event.
    pub(super) range: (Duration, Duration),
}

/// Measures every platform's inbound path.
pub(super) fn measure() -> Result<Vec<InboundRow>, StartupError> {
    Ok(vec![slack()?, feishu()?, wecom()?, dingtalk()?])
}

/// Runs `one` `EVENTS` times per round; the median, fastest and slowest per-event time.
fn time(mut one: impl FnMut() -> bool) -> Result<(Duration, (Duration, Duration)), StartupError> {
    if !one() {
        return Err(StartupError::Bench(
            "the inbound bench's event did not verify or decode to a mention".into(),
        ));
    }
    let mut rounds: Vec<Duration> = (0..ROUNDS)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..EVENTS {
                black_box(one());
            }
            start.elapsed() / EVENTS
        })
        .collect();
    rounds.sort_unstable();
    let fastest = rounds.first().copied().unwrap_or_default();
    let slowest = rounds.last().copied().unwrap_or_default();
    Ok((rounds[ROUNDS / 2], (fastest, slowest)))
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Slack: the signature (HMAC-SHA256 over the timestamp and body, within 5 minutes) and the Events
/// API envelope with its `app_mention`.
fn slack() -> Result<InboundRow, StartupError> {
    const SECRET: &[u8] = b"8f742231b10e8888abcd99yyyzzz85a5";
    let body = serde_json::json!({
        "token": "Jhj5dZrVaK7ZwHHjRyZWjbDl", "team_id": "T0123ABCD", "api_app_id": "A0123ABCD",
        "type": "event_callback", "event_id": "Ev0123ABCDEF", "event_time": 1_764_590_000,
        "authorizations": [{"team_id": "T0123ABCD", "user_id": "UBOT", "is_bot": true}],
        "event": {
            "type": "app_mention", "user": "U0123ABCD", "channel": "C0123ABCD",
            "text": "<@UBOT> summarise this week's merged PRs into a brief for the team",
            "ts": "1764590000.000100", "event_ts": "1764590000.000100",
            "blocks": [{"type": "rich_text", "block_id": "b1", "elements": [{"type": "rich_text_section",
                "elements": [{"type": "user", "user_id": "UBOT"},
                             {"type": "text", "text": " summarise this week's merged PRs into a brief for the team"}]}]}]
        }
    })
    .to_string();
    let timestamp = now_secs().to_string();
    let signature = workmate_slack::sign(SECRET, &timestamp, body.as_bytes());
    let now = i64::try_from(now_secs()).unwrap_or(i64::MAX);
    let (per_event, range) = time(|| {
        if workmate_slack::verify_request(SECRET, &timestamp, &signature, body.as_bytes(), now)
            .is_err()
        {
            return false;
        }
        matches!(
            workmate_slack::inbound::decode_event_envelope(body.as_bytes()),
            Ok(workmate_slack::EventEnvelope::EventCallback(callback))
                if matches!(callback.event, workmate_slack::Event::AppMention(_))
        )
    })?;
    Ok(InboundRow {
        platform: "Slack",
        what: "verify, decode an app_mention",
        bytes: body.len(),
        per_event,
        range,
    })
}

/// Feishu: the `X-Lark-Signature` (SHA-256 over timestamp, nonce, key and body), AES-256-CBC
/// decryption, and the v2 envelope with its group mention.
fn feishu() -> Result<InboundRow, StartupError> {
    const ENCRYPT_KEY: &str = "YCCqsvYxC6hhVebgUxS2GBH0xxKyzkTn";
    let plaintext = serde_json::json!({
        "schema": "2.0",
        "header": {
            "event_id": "5e3702a84e847582be8db7fb73283c02", "event_type": "im.message.receive_v1",
            "create_time": "1764590000000", "token": "zTskDsX9sWUpGEpECyv9Q1vMLizp59tC",
            "app_id": "cli_a1b2c3d4e5f6a7b8", "tenant_key": "2ca1d211f64f6438"
        },
        "event": {
            "sender": {
                "sender_id": {"union_id": "on_8ed6aa67826108097d9ee143816345", "user_id": "e33ggbyz",
                              "open_id": "ou_84aad35d084aa403a838cf73ee18467"},
                "sender_type": "user", "tenant_key": "2ca1d211f64f6438"
            },
            "message": {
                "message_id": "om_5ce6d572455d361153b7cb51da133945", "root_id": "", "parent_id": "",
                "create_time": "1764590000000", "update_time": "1764590000000",
                "chat_id": "oc_5ce6d572455d361153b7cb5xxfsdfsdfdsf", "chat_type": "group",
                "message_type": "text",
                "content": "{\"text\":\"@_user_1 summarise this week's merged PRs into a brief for the team\"}",
                "mentions": [{"key": "@_user_1",
                              "id": {"union_id": "on_bot", "user_id": "", "open_id": "ou_bot"},
                              "name": "workmate", "tenant_key": "2ca1d211f64f6438"}]
            }
        }
    })
    .to_string();
    let iv = *b"workmate-bench-i";
    let sealed = workmate_feishu::crypto::encrypt_with(ENCRYPT_KEY, iv, &plaintext);
    let body = serde_json::json!({ "encrypt": sealed }).to_string();
    let timestamp = now_secs().to_string();
    let nonce = "1e6f8a7c0b";
    let signature =
        workmate_feishu::crypto::signature(&timestamp, nonce, ENCRYPT_KEY, body.as_bytes());
    let auth = WebhookAuth::new(Some(ENCRYPT_KEY.to_owned()), None);
    let (per_event, range) = time(|| {
        let signed = Signed {
            timestamp: &timestamp,
            nonce,
            signature: &signature,
        };
        // A fresh buffer per event, as the route has.
        let mut plaintext = String::new();
        matches!(
            auth.open(signed, body.as_bytes(), &mut plaintext),
            Ok(Envelope::Event {
                event: Event::Message(_),
                ..
            })
        )
    })?;
    Ok(InboundRow {
        platform: "Feishu",
        what: "verify, decrypt, decode a mention",
        bytes: body.len(),
        per_event,
        range,
    })
}

/// WeCom's smart robot: the query's `msg_signature` (SHA-1 over the sorted token, timestamp,
/// nonce and ciphertext), AES-256-CBC decryption with the receive-id check, and the JSON message
/// of a group mention.
fn wecom() -> Result<InboundRow, StartupError> {
    use workmate_wecom::callback::{CallbackAuth, Query, open_robot_message};
    use workmate_wecom::inbound::RobotCallback;

    const TOKEN: &str = "CL7cQuamEg1NeI4b526R1kLML7w0v9g0";
    const KEY: &str = "XnwQM8cWKCqSTIMkpYrUG8L41kLx0LHmwuycbnGVfXQ";
    let auth = CallbackAuth::new(TOKEN, KEY, "")
        .map_err(|e| StartupError::Bench(format!("WeCom bench key: {e}")))?;
    let message = serde_json::json!({
        "msgid": "c52d42ea6b77469ca256947a0a04cdcb", "aibotid": "aibPW7YwHsCXtW8D4WHRd89",
        "chatid": "wriE6GhPkV1YXydhPksRtL", "chattype": "group",
        "from": { "userid": "zhangsan" },
        "response_url": "https://qyapi.weixin.qq.com/cgi-bin/aibot/response?response_code=lkTLJvEmyrvjH9qORhwK1OrFwt4tUE19sDtBbYKG",
        "msgtype": "text",
        "text": { "content": "@workmate summarise this week's merged PRs into a brief for the team" }
    })
    .to_string();
    let timestamp = now_secs().to_string();
    let nonce = "1372623149";
    let body = auth.seal_json_with(*b"workmate-bench-w", &message, now_secs(), nonce);
    let sealed: serde_json::Value = serde_json::from_str(&body)
        .map_err(|e| StartupError::Bench(format!("WeCom bench body: {e}")))?;
    let signature = sealed["msgsignature"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let body = serde_json::json!({ "encrypt": sealed["encrypt"] }).to_string();
    let raw_query = format!("msg_signature={signature}&timestamp={timestamp}&nonce={nonce}");
    let (per_event, range) = time(|| {
        let Ok(query) = Query::parse(&raw_query) else {
            return false;
        };
        matches!(
            open_robot_message(&auth, &query, body.as_bytes()),
            Ok(RobotCallback::Message(_))
        )
    })?;
    Ok(InboundRow {
        platform: "WeCom",
        what: "verify, decrypt, decode a robot mention",
        bytes: body.len(),
        per_event,
        range,
    })
}

/// DingTalk's robot HTTP callback: the `timestamp`/`sign` headers (HMAC-SHA256 with the
/// AppSecret, within an hour) and the robot message of a group mention.
fn dingtalk() -> Result<InboundRow, StartupError> {
    use workmate_dingtalk::inbound::decode_robot;
    use workmate_dingtalk::sign::{robot_sign, verify_callback};

    const SECRET: &str = "bopgQrWjJbc_raTuX5e2osrMwKmV7ify5R1VPePnWmTQYU8pGnE8gmmqRbM_UTWL";
    let body = serde_json::json!({
        "conversationId": "cidp2bSpjZmP9Xw0mUbwQ3nBQ==",
        "atUsers": [{ "dingtalkId": "$:LWCP_v1:$bot", "staffId": "" }],
        "chatbotCorpId": "ding9f50b15bccd16741", "chatbotUserId": "$:LWCP_v1:$bot",
        "msgId": "msgDYpE7xPpqwm0xhDZc5vCCg==", "senderNick": "Zhang San", "isAdmin": false,
        "senderStaffId": "manager1234", "sessionWebhookExpiredTime": 1_724_853_600_000_i64,
        "createAt": 1_724_848_200_000_i64, "senderCorpId": "ding9f50b15bccd16741",
        "conversationType": "2", "senderId": "$:LWCP_v1:$zhang", "conversationTitle": "Release crew",
        "isInAtList": true,
        "sessionWebhook": "https://oapi.dingtalk.com/robot/sendBySession?session=abc",
        "text": { "content": " summarise this week's merged PRs into a brief for the team" },
        "robotCode": "dingbotappkey", "msgtype": "text"
    })
    .to_string();
    let now_ms = i64::try_from(now_secs())
        .unwrap_or(i64::MAX)
        .saturating_mul(1_000);
    let timestamp = now_ms.to_string();
    let sign = robot_sign(SECRET, &timestamp);
    let (per_event, range) = time(|| {
        verify_callback(SECRET, &timestamp, &sign, now_ms).is_ok()
            && decode_robot(&body).is_ok_and(|m| m.is_in_at_list)
    })?;
    Ok(InboundRow {
        platform: "DingTalk",
        what: "verify, decode a robot mention",
        bytes: body.len(),
        per_event,
        range,
    })
}
