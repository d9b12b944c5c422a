//! Events API envelopes: the signed fixture bodies, and the shapes Slack sends around them.

use serde_json::{Value, json};
use workmate_slack::{
    DecodeError, Event, EventEnvelope, MessageEvent, decode_event_envelope, decode_slash_command,
};

use crate::fixtures::{self, bool_field, name, str_field};

fn message_of(envelope: &EventEnvelope) -> &MessageEvent {
    match envelope {
        EventEnvelope::EventCallback(cb) => match &cb.event {
            Event::AppMention(m) | Event::Message(m) => m,
            other => panic!("not a message event: {other:?}"),
        },
        other => panic!("not an event_callback: {other:?}"),
    }
}

/// Every valid body in slack_signature.json decodes with the decoder for its kind, and the
/// typed fields agree with an untyped parse of the same bytes.
#[test]
fn signed_fixture_bodies_decode() {
    let mut json_bodies = 0;
    for case in fixtures::cases("slack_signature.json")
        .iter()
        .filter(|c| bool_field(c, "valid"))
    {
        let body = str_field(case, "body");
        let case_name = name(case);
        if body.is_empty() {
            assert!(
                matches!(decode_event_envelope(b""), Err(DecodeError::Json { .. })),
                "{case_name}"
            );
            continue;
        }
        if !body.starts_with('{') {
            let command = decode_slash_command(body.as_bytes())
                .unwrap_or_else(|e| panic!("{case_name}: {e}"));
            assert!(command.command.starts_with('/'), "{case_name}: {command:?}");
            continue;
        }
        json_bodies += 1;
        let raw: Value = serde_json::from_str(body).unwrap();
        let envelope =
            decode_event_envelope(body.as_bytes()).unwrap_or_else(|e| panic!("{case_name}: {e}"));
        match raw["type"].as_str() {
            Some("url_verification") => assert_eq!(
                envelope,
                EventEnvelope::UrlVerification {
                    challenge: raw["challenge"].as_str().unwrap().to_owned()
                },
                "{case_name}"
            ),
            Some("event_callback") => {
                let EventEnvelope::EventCallback(cb) = &envelope else {
                    panic!("{case_name}: {envelope:?}")
                };
                assert_eq!(
                    cb.team_id.as_deref(),
                    raw["team_id"].as_str(),
                    "{case_name}"
                );
                assert_eq!(
                    cb.event_id.as_deref(),
                    raw["event_id"].as_str(),
                    "{case_name}"
                );
                assert_eq!(cb.event_time, raw["event_time"].as_i64(), "{case_name}");
                let event = &raw["event"];
                let m = message_of(&envelope);
                match (&cb.event, event["type"].as_str()) {
                    (Event::AppMention(_), Some("app_mention"))
                    | (Event::Message(_), Some("message")) => {}
                    (got, want) => panic!("{case_name}: {got:?} for type {want:?}"),
                }
                assert_eq!(Some(m.text.as_str()), event["text"].as_str(), "{case_name}");
                assert_eq!(m.user.as_deref(), event["user"].as_str(), "{case_name}");
                assert_eq!(Some(m.ts.as_str()), event["ts"].as_str(), "{case_name}");
                assert_eq!(
                    m.channel.as_deref(),
                    event["channel"].as_str(),
                    "{case_name}"
                );
            }
            other => panic!("{case_name}: unexpected envelope type {other:?}"),
        }
    }
    assert!(json_bodies > 0);
}

/// `\u`-escaped and raw UTF-8 JSON are different bytes (different signatures) but the same event.
#[test]
fn escaped_and_raw_utf8_decode_to_the_same_mention() {
    let raw = r#"{"type":"event_callback","team_id":"T1","event_id":"Ev1","event_time":1,"event":{"type":"app_mention","user":"U1","text":"<@B1> 机器人 😀","ts":"1.1","channel":"C1"}}"#;
    let escaped = r#"{"type":"event_callback","team_id":"T1","event_id":"Ev1","event_time":1,"event":{"type":"app_mention","user":"U1","text":"<@B1> \u673a\u5668\u4eba \ud83d\ude00","ts":"1.1","channel":"C1"}}"#;
    let a = decode_event_envelope(raw.as_bytes()).unwrap();
    let b = decode_event_envelope(escaped.as_bytes()).unwrap();
    assert_eq!(a, b);
    assert_eq!(message_of(&a).text, "<@B1> 机器人 😀");
}

fn callback(event: &Value) -> EventEnvelope {
    let body = json!({
        "token": "ignored", "team_id": "T1", "api_app_id": "A1", "type": "event_callback",
        "event_id": "Ev1", "event_time": 1_700_000_000, "authorizations": [{"user_id": "UB"}],
        "event": event,
    });
    decode_event_envelope(body.to_string().as_bytes()).unwrap()
}

#[test]
fn direct_message_in_a_thread() {
    let env = callback(&json!({
        "type": "message", "channel_type": "im", "channel": "D1", "user": "U1",
        "text": "hi", "ts": "2.2", "thread_ts": "1.1", "event_ts": "2.2", "blocks": []
    }));
    let m = message_of(&env);
    assert!(m.is_direct_message());
    assert!(m.is_user_post());
    assert!(!m.is_from_bot());
    assert_eq!(m.thread_root_ts(), "1.1");
    let EventEnvelope::EventCallback(cb) = &env else {
        unreachable!()
    };
    assert_eq!(cb.api_app_id.as_deref(), Some("A1"));
    assert_eq!(cb.event_time, Some(1_700_000_000));
}

#[test]
fn a_top_level_message_starts_its_own_thread() {
    let env = callback(
        &json!({"type": "app_mention", "user": "U1", "text": "<@UB> go", "ts": "3.3", "channel": "C1"}),
    );
    let m = message_of(&env);
    assert_eq!(m.thread_root_ts(), "3.3");
    assert!(!m.is_direct_message());
}

#[test]
fn bot_messages_are_recognised() {
    // Our own post echoed back (bot_id + subtype) and another app's post (bot_id only).
    let own = callback(&json!({
        "type": "message", "subtype": "bot_message", "bot_id": "B_SELF", "text": "done",
        "ts": "4.4", "channel": "C1", "channel_type": "channel"
    }));
    let m = message_of(&own);
    assert!(m.is_from_bot() && m.is_from_bot_id("B_SELF") && !m.is_user_post());
    assert_eq!(m.user, None);

    let other_app = callback(&json!({
        "type": "message", "bot_id": "B_OTHER", "user": "U_BOTUSER", "text": "ping",
        "ts": "5.5", "channel": "C1", "channel_type": "channel"
    }));
    let m = message_of(&other_app);
    assert!(m.is_from_bot() && !m.is_from_bot_id("B_SELF") && !m.is_user_post());
}

#[test]
fn edits_and_deletions_decode_but_are_not_posts() {
    let edited = callback(&json!({
        "type": "message", "subtype": "message_changed", "channel": "C1", "ts": "6.6",
        "message": {"type": "message", "user": "U1", "text": "new", "ts": "1.1"},
        "previous_message": {"type": "message", "user": "U1", "text": "old", "ts": "1.1"}
    }));
    let m = message_of(&edited);
    assert_eq!(m.subtype.as_deref(), Some("message_changed"));
    assert_eq!(m.text, "");
    assert!(!m.is_user_post());

    let broadcast = callback(&json!({
        "type": "message", "subtype": "thread_broadcast", "user": "U1", "text": "fyi",
        "ts": "7.7", "thread_ts": "1.1", "channel": "C1"
    }));
    assert!(message_of(&broadcast).is_user_post());
}

#[test]
fn unknown_types_are_kept_not_rejected() {
    match callback(&json!({"type": "reaction_added", "user": "U1", "item": {}})) {
        EventEnvelope::EventCallback(cb) => {
            assert_eq!(
                cb.event,
                Event::Other {
                    event_type: "reaction_added".to_owned()
                }
            );
        }
        other => panic!("{other:?}"),
    }
    let rate_limited = br#"{"token":"t","type":"app_rate_limited","team_id":"T1","minute_rate_limited":1518467820,"api_app_id":"A1"}"#;
    assert_eq!(
        decode_event_envelope(rate_limited).unwrap(),
        EventEnvelope::Other {
            envelope_type: "app_rate_limited".to_owned()
        }
    );
}

#[test]
fn malformed_envelopes_are_errors() {
    let bad: &[&[u8]] = &[
        b"",
        b"not json",
        b"[]",
        b"{}",
        br#"{"type":7}"#,
        br#"{"type":"url_verification"}"#,
        br#"{"type":"url_verification","challenge":5}"#,
        br#"{"type":"event_callback","team_id":"T1"}"#,
        br#"{"type":"event_callback","event":{"text":"no type"}}"#,
        br#"{"type":"event_callback","event":{"type":"message","text":"no ts"}}"#,
        br#"{"type":"event_callback","event":{"type":"app_mention","ts":"1.1","user":5}}"#,
        b"{\"type\":\"url_verification\",\"challenge\":\"\xff\"}",
        br#"{"type":"url_verification","challenge":"x"} trailing"#,
    ];
    for body in bad {
        match decode_event_envelope(body) {
            Err(DecodeError::Json { what, .. }) => assert_eq!(what, "Events API envelope"),
            other => panic!("{:?}: {other:?}", String::from_utf8_lossy(body)),
        }
    }
}

#[test]
fn url_verification_echoes_the_challenge() {
    let body = br#"{"token":"Jhj5dZrVaK7ZwHHjRyZWjbDl","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}"#;
    assert_eq!(
        decode_event_envelope(body).unwrap(),
        EventEnvelope::UrlVerification {
            challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P".to_owned()
        }
    );
}

#[test]
fn shared_files_travel_with_the_message_and_a_withheld_one_has_no_link() {
    let env = callback(&json!({
        "type": "message", "subtype": "file_share", "channel_type": "im", "channel": "D1",
        "user": "U1", "text": "", "ts": "2.2", "event_ts": "2.2",
        "files": [
            {"id": "F1", "name": "q3.pdf", "mimetype": "application/pdf", "size": 1200,
             "url_private": "https://files.slack.com/files-pri/T1-F1/q3.pdf",
             "url_private_download": "https://files.slack.com/files-pri/T1-F1/download/q3.pdf"},
            {"id": "F2", "title": "Screenshot", "url_private": "https://files.slack.com/files-pri/T1-F2/s.png"},
            {"id": "F3", "mode": "hidden_by_limit"}
        ]
    }));
    let EventEnvelope::EventCallback(cb) = env else {
        unreachable!()
    };
    let inbound = workmate_slack::mapping::event_inbound(*cb, Some("UB")).unwrap();
    let workmate_adapter::InboundKind::Message { text, files } = inbound.kind else {
        panic!("not a message: {:?}", inbound.kind);
    };
    assert_eq!(text, "");
    let shown: Vec<_> = files
        .iter()
        .map(|f| (f.name.as_str(), f.mime.as_deref(), f.handle.as_str()))
        .collect();
    assert_eq!(
        shown,
        [
            (
                "q3.pdf",
                Some("application/pdf"),
                "https://files.slack.com/files-pri/T1-F1/download/q3.pdf"
            ),
            (
                "Screenshot",
                None,
                "https://files.slack.com/files-pri/T1-F2/s.png"
            ),
            ("file F3", None, ""),
        ]
    );
    assert_eq!(files[0].size, Some(1200));
}
