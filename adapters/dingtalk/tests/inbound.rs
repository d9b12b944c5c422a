//! Robot messages decode from DingTalk's JSON and map to the chat layer's deliveries.

use proptest::prelude::*;
use serde_json::json;
use workmate_adapter::InboundKind;
use workmate_dingtalk::inbound::decode_robot;
use workmate_dingtalk::mapping::robot_inbound;
use workmate_protocol::Surface;

/// A group text message that @-mentions the robot, as the Stream topic and the HTTP callback
/// carry it.
fn group_text() -> serde_json::Value {
    json!({
        "conversationId": "cidp2bSpjZmP9Xw0mUbwQ3nBQ==",
        "atUsers": [{ "dingtalkId": "$:LWCP_v1:$bot", "staffId": "" }],
        "chatbotCorpId": "ding9f50b15bccd16741",
        "chatbotUserId": "$:LWCP_v1:$bot",
        "msgId": "msgDYpE7xPpqwm0xhDZc5vCCg==",
        "senderNick": "张三",
        "isAdmin": false,
        "senderStaffId": "manager1234",
        "sessionWebhookExpiredTime": 1_724_853_600_000_i64,
        "createAt": 1_724_848_200_000_i64,
        "senderCorpId": "ding9f50b15bccd16741",
        "conversationType": "2",
        "senderId": "$:LWCP_v1:$zhang",
        "conversationTitle": "Release crew",
        "isInAtList": true,
        "sessionWebhook": "https://oapi.dingtalk.com/robot/sendBySession?session=abc",
        "text": { "content": " summarise this week's merged PRs " },
        "robotCode": "dingbotappkey",
        "msgtype": "text"
    })
}

#[test]
fn a_group_mention_is_a_message_of_the_group() {
    let message = decode_robot(&group_text().to_string()).unwrap();
    assert!(!message.is_direct());
    assert!(message.is_in_at_list);
    let inbound = robot_inbound(&message).unwrap();
    assert_eq!(inbound.surface, Surface::Dingtalk);
    assert_eq!(inbound.tenant_key, "ding9f50b15bccd16741");
    assert_eq!(inbound.delivery_id, "msgDYpE7xPpqwm0xhDZc5vCCg==");
    assert_eq!(inbound.user.id, "manager1234");
    assert_eq!(inbound.user.name.as_deref(), Some("张三"));
    assert_eq!(inbound.chat_id, "cidp2bSpjZmP9Xw0mUbwQ3nBQ==");
    assert_eq!(inbound.thread_id, None);
    assert!(!inbound.direct);
    assert_eq!(
        inbound.kind,
        InboundKind::Message {
            text: "summarise this week's merged PRs".into(),
            files: Vec::new(),
        }
    );
}

#[test]
fn a_direct_message_is_direct_and_an_outsider_is_known_by_sender_id() {
    let mut body = group_text();
    body["conversationType"] = json!("1");
    let inbound = robot_inbound(&decode_robot(&body.to_string()).unwrap()).unwrap();
    assert!(inbound.direct);
    assert_eq!(
        inbound.chat_id, "manager1234",
        "a one-to-one chat is addressed by the person's user id"
    );
    body["senderStaffId"] = json!("");
    let inbound = robot_inbound(&decode_robot(&body.to_string()).unwrap()).unwrap();
    assert!(inbound.direct);
    assert_eq!(inbound.user.id, "$:LWCP_v1:$zhang");
    assert_eq!(inbound.chat_id, "$:LWCP_v1:$zhang");
}

#[test]
fn rich_text_and_content_bodies_give_their_text_and_a_bare_picture_is_its_file() {
    let mut body = group_text();
    body.as_object_mut().unwrap().remove("text");
    body["msgtype"] = json!("richText");
    body["content"] =
        json!({ "richText": [{ "text": "first" }, { "downloadCode": "x" }, { "text": "second" }] });
    let message = decode_robot(&body.to_string()).unwrap();
    assert_eq!(message.text().as_deref(), Some("first\nsecond"));

    body["content"] = json!({ "content": "plain" });
    assert_eq!(
        decode_robot(&body.to_string()).unwrap().text().as_deref(),
        Some("plain")
    );

    body["msgtype"] = json!("picture");
    body["content"] = json!({ "downloadCode": "abc" });
    let picture = decode_robot(&body.to_string()).unwrap();
    assert_eq!(picture.text(), None);
    let inbound = robot_inbound(&picture).unwrap();
    let workmate_adapter::InboundKind::Message { text, files } = inbound.kind else {
        panic!("not a message");
    };
    assert_eq!((text.as_str(), files.len()), ("", 1));

    body["msgtype"] = json!("location");
    body["content"] = json!({ "latitude": 1 });
    let location = decode_robot(&body.to_string()).unwrap();
    assert_eq!(robot_inbound(&location), None, "nothing to act on");
}

#[test]
fn a_message_without_a_tenant_or_sender_is_not_a_delivery() {
    let mut body = group_text();
    body["chatbotCorpId"] = json!("");
    body["senderCorpId"] = json!(null);
    assert_eq!(
        robot_inbound(&decode_robot(&body.to_string()).unwrap()),
        None
    );
    let mut body = group_text();
    body["text"] = json!({ "content": "   " });
    assert_eq!(
        robot_inbound(&decode_robot(&body.to_string()).unwrap()),
        None
    );
}

#[test]
fn bad_bodies_are_clear_errors() {
    let err = decode_robot("{}").unwrap_err();
    assert!(err.to_string().contains("msgId"), "{err}");
    assert!(decode_robot("not json").is_err());
}

proptest! {
    #[test]
    fn any_body_decodes_or_fails_without_panicking(body in "\\PC{0,300}") {
        if let Ok(message) = decode_robot(&body) {
            let _ = robot_inbound(&message);
        }
    }
}
