//! The callback URL's checks against every WeCom case of the platform vectors (made by WeCom's
//! SDKs): the query as WeCom sends it, URL verification, both body envelopes, both passive
//! replies byte for byte, every refusal with the setting it names; and no input panics.

use proptest::prelude::*;
use serde_json::Value;
use workmate_adapter::testing::{bool_field, case_name, str_field, vector_cases};
use workmate_wecom::callback::{
    CallbackAuth, CallbackError, Query, open_app_message, open_robot_message,
};
use workmate_wecom::inbound::{AppCallback, AppEventKind, Chat, RobotCallback, RobotContent};

fn cases() -> Vec<Value> {
    vector_cases(env!("CARGO_MANIFEST_DIR"), "wecom_crypto.json")
}

fn auth(case: &Value) -> CallbackAuth {
    CallbackAuth::new(
        str_field(case, "token"),
        str_field(case, "encoding_aes_key"),
        str_field(case, "receive_id"),
    )
    .unwrap_or_else(|e| panic!("case {}: {e}", case_name(case)))
}

fn prefix(case: &Value) -> [u8; 16] {
    let hex = str_field(case, "random_prefix_hex");
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    bytes.try_into().unwrap()
}

fn timestamp(case: &Value) -> u64 {
    str_field(case, "timestamp").parse().unwrap()
}

/// The query of a case that has none (the invalid ones): its fields, as WeCom would send them.
fn query_of(case: &Value) -> Query {
    Query::parse(&format!(
        "msg_signature={}&timestamp={}&nonce={}",
        str_field(case, "msg_signature"),
        str_field(case, "timestamp"),
        str_field(case, "nonce"),
    ))
    .unwrap()
}

fn is_json(body: &str) -> bool {
    body.starts_with('{')
}

#[test]
fn every_valid_case_opens_from_its_query_and_body() {
    let mut seen = (0, 0, 0);
    for case in cases().iter().filter(|c| bool_field(c, "valid")) {
        let name = case_name(case);
        let auth = auth(case);
        let query = Query::parse(str_field(case, "query")).unwrap();
        assert_eq!(
            query.msg_signature,
            str_field(case, "msg_signature"),
            "{name}"
        );
        assert_eq!(query.timestamp, str_field(case, "timestamp"), "{name}");
        assert_eq!(query.nonce, str_field(case, "nonce"), "{name}");
        let plaintext = str_field(case, "plaintext_xml_or_json");
        if str_field(case, "kind") == "echostr" {
            // `%2B`, `%2F` and `%3D` decode to the ciphertext's `+`, `/` and `=`.
            assert_eq!(
                query.echostr.as_deref(),
                Some(str_field(case, "msg_encrypt"))
            );
            assert_eq!(auth.verify_url(&query).as_deref(), Ok(plaintext), "{name}");
            seen.0 += 1;
            continue;
        }
        assert_eq!(query.echostr, None, "{name}");
        let body = str_field(case, "request_body");
        if is_json(body) {
            assert_eq!(
                auth.open_json(&query, body.as_bytes()).as_deref(),
                Ok(plaintext)
            );
            // The other surface's opener refuses it for its shape, naming what it expected.
            let wrong = auth.open_xml(&query, body.as_bytes()).unwrap_err();
            assert!(wrong.to_string().contains("<Encrypt>"), "{name}: {wrong}");
            seen.1 += 1;
        } else {
            assert_eq!(
                auth.open_xml(&query, body.as_bytes()).as_deref(),
                Ok(plaintext)
            );
            let wrong = auth.open_json(&query, body.as_bytes()).unwrap_err();
            assert!(wrong.to_string().contains("\"encrypt\""), "{name}: {wrong}");
            seen.2 += 1;
        }
    }
    assert!(
        seen.0 >= 1 && seen.1 >= 2 && seen.2 >= 6,
        "cases seen: {seen:?}"
    );
}

#[test]
fn every_passive_xml_reply_matches_the_sdk_byte_for_byte() {
    let mut seen = 0;
    for case in cases().iter().filter(|c| bool_field(c, "valid")) {
        let Some(expected) = case["reply_xml"].as_str() else {
            continue;
        };
        let reply = auth(case).seal_xml_with(
            prefix(case),
            str_field(case, "plaintext_xml_or_json"),
            timestamp(case),
            str_field(case, "nonce"),
        );
        assert_eq!(reply, expected, "case {}", case_name(case));
        seen += 1;
    }
    assert!(seen >= 9, "{seen} replies checked");
}

#[test]
fn the_json_reply_carries_the_sdk_ciphertext_and_a_numeric_timestamp() {
    let mut seen = 0;
    for case in cases().iter().filter(|c| bool_field(c, "valid")) {
        if str_field(case, "kind") != "message" || !is_json(str_field(case, "request_body")) {
            continue;
        }
        let auth = auth(case);
        let plaintext = str_field(case, "plaintext_xml_or_json");
        let reply = auth.seal_json_with(
            prefix(case),
            plaintext,
            timestamp(case),
            str_field(case, "nonce"),
        );
        let json: Value = serde_json::from_str(&reply).unwrap();
        let fields: Vec<&String> = json.as_object().unwrap().keys().collect();
        assert_eq!(fields, ["encrypt", "msgsignature", "timestamp", "nonce"]);
        assert_eq!(json["encrypt"], str_field(case, "msg_encrypt"));
        assert_eq!(json["msgsignature"], str_field(case, "msg_signature"));
        assert_eq!(json["timestamp"].as_u64(), Some(timestamp(case)));
        assert_eq!(json["nonce"], str_field(case, "nonce"));
        seen += 1;
    }
    assert_eq!(seen, 2);
}

#[test]
fn sealed_replies_open_again() {
    let case = &cases()[0];
    let auth = auth(case);
    let plaintext =
        r#"{"msgtype":"stream","stream":{"id":"s1","finish":false,"content":"思考中…"}}"#;

    let json: Value =
        serde_json::from_str(&auth.seal_json(plaintext, 1_722_000_000, "n1")).unwrap();
    let query = Query::parse(&format!(
        "msg_signature={}&timestamp=1722000000&nonce=n1",
        json["msgsignature"].as_str().unwrap()
    ))
    .unwrap();
    let body = serde_json::json!({ "encrypt": json["encrypt"] }).to_string();
    assert_eq!(
        auth.open_json(&query, body.as_bytes()).as_deref(),
        Ok(plaintext)
    );

    let xml = auth.seal_xml(
        "<xml><Content><![CDATA[好]]></Content></xml>",
        1_722_000_001,
        "n2",
    );
    let signature = xml.split("<MsgSignature><![CDATA[").nth(1).unwrap();
    let signature = &signature[..40];
    let query = Query::parse(&format!(
        "msg_signature={signature}&timestamp=1722000001&nonce=n2"
    ))
    .unwrap();
    assert_eq!(
        auth.open_xml(&query, xml.as_bytes()).as_deref(),
        Ok("<xml><Content><![CDATA[好]]></Content></xml>")
    );
    // Each seal has its own random prefix.
    assert_ne!(auth.seal_json("x", 1, "n"), auth.seal_json("x", 1, "n"));
}

#[test]
fn every_invalid_case_is_refused_with_the_setting_to_check() {
    let mut seen = 0;
    for case in cases().iter().filter(|c| !bool_field(c, "valid")) {
        let name = case_name(case);
        let auth = auth(case);
        let query = query_of(case);
        let sealed = str_field(case, "msg_encrypt");
        let xml = format!("<xml><Encrypt><![CDATA[{sealed}]]></Encrypt></xml>");
        let json = format!(r#"{{"encrypt":"{sealed}"}}"#);
        let refusals = [
            auth.open_xml(&query, xml.as_bytes()).unwrap_err(),
            auth.open_json(&query, json.as_bytes()).unwrap_err(),
        ];
        for refusal in refusals {
            match str_field(case, "error") {
                "signature" => {
                    assert_eq!(refusal, CallbackError::SignatureMismatch, "{name}");
                    assert!(refusal.to_string().contains("Token"), "{name}: {refusal}");
                }
                "receive_id" => {
                    assert_eq!(
                        refusal,
                        CallbackError::ReceiveIdMismatch {
                            expected: str_field(case, "receive_id").into(),
                            found: str_field(case, "encrypted_with_receive_id").into(),
                        },
                        "{name}"
                    );
                    assert!(refusal.to_string().contains("corp id"), "{name}: {refusal}");
                }
                other => panic!("case {name}: unknown error kind {other}"),
            }
        }
        // The right signature is accepted where it is the one wrong thing.
        if str_field(case, "error") == "signature" {
            let mut fixed = query.clone();
            fixed.msg_signature = str_field(case, "expected_signature").into();
            assert!(auth.open_xml(&fixed, xml.as_bytes()).is_ok(), "{name}");
        }
        seen += 1;
    }
    assert_eq!(seen, 2);
}

#[test]
fn a_smart_robot_configured_with_a_corp_id_is_told_to_leave_it_empty() {
    let case = cases()
        .into_iter()
        .find(|c| bool_field(c, "valid") && str_field(c, "receive_id").is_empty())
        .unwrap();
    let query = Query::parse(str_field(&case, "query")).unwrap();
    let body = str_field(&case, "request_body").as_bytes();
    let wrong = CallbackAuth::new(
        str_field(&case, "token"),
        str_field(&case, "encoding_aes_key"),
        "ww78369002d0f7bb09",
    )
    .unwrap();
    let refusal = wrong.open_json(&query, body).unwrap_err();
    assert_eq!(
        refusal,
        CallbackError::ReceiveIdMismatch {
            expected: "ww78369002d0f7bb09".into(),
            found: String::new()
        }
    );
    assert!(
        refusal.to_string().contains("smart robot's is empty"),
        "{refusal}"
    );
    assert!(auth(&case).open_json(&query, body).is_ok());
}

#[test]
fn another_encoding_aes_key_or_token_is_named() {
    let case = &cases()[0];
    let query = Query::parse(str_field(case, "query")).unwrap();
    let body = str_field(case, "request_body").as_bytes();
    let token = str_field(case, "token");
    let other_key = CallbackAuth::new(
        token,
        "XnwQM8cWKCqSTIMkpYrUG8L41kLx0LHmwuycbnGVfXQ",
        str_field(case, "receive_id"),
    )
    .unwrap();
    let refusal = other_key.open_xml(&query, body).unwrap_err();
    assert!(
        matches!(refusal, CallbackError::Undecryptable(_)),
        "{refusal:?}"
    );
    assert!(refusal.to_string().contains("EncodingAESKey"), "{refusal}");
    let other_token = CallbackAuth::new(
        "another-token",
        str_field(case, "encoding_aes_key"),
        str_field(case, "receive_id"),
    )
    .unwrap();
    assert_eq!(
        other_token.open_xml(&query, body),
        Err(CallbackError::SignatureMismatch)
    );
    let bad_key = CallbackAuth::new(token, "too-short", "").unwrap_err();
    assert!(matches!(bad_key, CallbackError::BadKey(_)), "{bad_key:?}");
    assert!(bad_key.to_string().contains("43 characters"), "{bad_key}");
}

#[test]
fn url_verification_needs_echostr_and_its_signature() {
    let case = cases()
        .into_iter()
        .find(|c| str_field(c, "kind") == "echostr")
        .unwrap();
    let auth = auth(&case);
    let query = Query::parse(str_field(&case, "query")).unwrap();
    assert_eq!(
        auth.verify_url(&query).as_deref(),
        Ok(str_field(&case, "plaintext_xml_or_json"))
    );
    let mut without = query.clone();
    without.echostr = None;
    let refusal = auth.verify_url(&without).unwrap_err();
    assert!(
        refusal.to_string().contains("echostr is missing"),
        "{refusal}"
    );
    // A `+` read as a space (form decoding) breaks the signature.
    let mut spaced = query.clone();
    spaced.echostr = query.echostr.as_ref().map(|e| e.replace('+', " "));
    assert_eq!(
        auth.verify_url(&spaced),
        Err(CallbackError::SignatureMismatch)
    );
}

#[test]
fn queries_are_percent_decoded_and_nothing_else() {
    let query = Query::parse("?nonce=n&timestamp=1&msg_signature=abc&echostr=a+b%2Bc%2fd%3D&x=%ZZ")
        .unwrap();
    assert_eq!(
        query,
        Query {
            msg_signature: "abc".into(),
            timestamp: "1".into(),
            nonce: "n".into(),
            echostr: Some("a+b+c/d=".into()),
        }
    );
    assert_eq!(
        "msg_signature=a&timestamp=1&nonce=n"
            .parse::<Query>()
            .unwrap()
            .echostr,
        None
    );
    for (raw, says) in [
        ("timestamp=1&nonce=n", "msg_signature is missing"),
        ("msg_signature=a&nonce=n", "timestamp is missing"),
        ("msg_signature=a&timestamp=1&nonce=", "nonce is missing"),
        (
            "msg_signature=a&msg_signature=b&timestamp=1&nonce=n",
            "appears twice",
        ),
        ("msg_signature=%FF&timestamp=1&nonce=n", "not UTF-8"),
        ("", "msg_signature is missing"),
    ] {
        let refusal = Query::parse(raw).unwrap_err();
        assert!(
            matches!(refusal, CallbackError::BadQuery(_)),
            "{raw}: {refusal:?}"
        );
        assert!(refusal.to_string().contains(says), "{raw}: {refusal}");
    }
}

#[test]
fn bodies_of_the_wrong_shape_say_what_was_expected() {
    let case = &cases()[0];
    let auth = auth(case);
    let query = Query::parse(str_field(case, "query")).unwrap();
    for (body, says) in [
        (&b"{}"[..], "no \"encrypt\""),
        (b"{\"encrypt\":\"\"}", "no \"encrypt\""),
        (b"{\"encrypt\":5}", "not JSON"),
        (b"\xff\xfe", "not UTF-8"),
        (b"", "not JSON"),
    ] {
        let refusal = auth.open_json(&query, body).unwrap_err();
        assert!(matches!(refusal, CallbackError::BadBody(_)), "{refusal:?}");
        assert!(refusal.to_string().contains(says), "{body:?}: {refusal}");
    }
    for (body, says) in [
        (
            &b"<xml><ToUserName>a</ToUserName></xml>"[..],
            "no <Encrypt>",
        ),
        (b"<xml><Encrypt></Encrypt></xml>", "no <Encrypt>"),
        (b"<xml><Encrypt>a", "not XML"),
        (b"", "not XML"),
    ] {
        let refusal = auth.open_xml(&query, body).unwrap_err();
        assert!(matches!(refusal, CallbackError::BadBody(_)), "{refusal:?}");
        assert!(refusal.to_string().contains(says), "{body:?}: {refusal}");
    }
}

#[test]
fn the_inbound_paths_verify_decrypt_and_decode() {
    let mut checked = 0;
    for case in cases().iter().filter(|c| bool_field(c, "valid")) {
        let Some(body) = case["request_body"].as_str() else {
            continue;
        };
        let name = case_name(case);
        let (auth, query) = (auth(case), Query::parse(str_field(case, "query")).unwrap());
        match name {
            "JSON smart-robot message" | "JSON smart-robot message with empty receive_id" => {
                let Ok(RobotCallback::Message(message)) =
                    open_robot_message(&auth, &query, body.as_bytes())
                else {
                    panic!("{name}: not a message");
                };
                assert_eq!(message.msgid, "c52d42ea6b77469ca256947a0a04cdcb");
                assert_eq!(message.from.userid, "zhangsan");
                assert_eq!(
                    message.chat,
                    Chat::Group {
                        chatid: "wriE6GhPkV1YXydhPksRtL".into()
                    }
                );
                let RobotContent::Text(text) = &message.content else {
                    panic!("{name}: not text");
                };
                assert!(text.starts_with("@机器人 green"), "{text}");
            }
            "XML text message (Chinese)" => {
                let Ok(AppCallback::Text(text)) = open_app_message(&auth, &query, body.as_bytes())
                else {
                    panic!("{name}: not text");
                };
                assert_eq!(text.meta.from_user, "zhangsan");
                assert_eq!(text.msg_id.as_deref(), Some("6102533897871470703"));
                assert!(
                    text.content.starts_with("明天上午十点开会"),
                    "{}",
                    text.content
                );
            }
            "XML event (enter_agent)" => {
                let Ok(AppCallback::Event(event)) =
                    open_app_message(&auth, &query, body.as_bytes())
                else {
                    panic!("{name}: not an event");
                };
                assert_eq!(event.kind, AppEventKind::EnterAgent);
            }
            // The plaintext is not a callback: verified and decrypted, then refused as such.
            "1-byte message" => {
                let refusal = open_app_message(&auth, &query, body.as_bytes()).unwrap_err();
                assert!(matches!(refusal, CallbackError::Decode(_)), "{refusal:?}");
            }
            _ => continue,
        }
        checked += 1;
    }
    assert_eq!(checked, 5);
}

proptest! {
    #[test]
    fn no_body_or_query_panics(
        raw_query in "[a-z_=&%0-9A-F+/]{0,80}",
        body in proptest::collection::vec(any::<u8>(), 0..300),
    ) {
        let case = &cases()[0];
        let auth = auth(case);
        let _ = Query::parse(&raw_query);
        let query = Query::parse(str_field(case, "query")).unwrap();
        prop_assert!(auth.open_json(&query, &body).is_err());
        prop_assert!(auth.open_xml(&query, &body).is_err());
        prop_assert!(open_robot_message(&auth, &query, &body).is_err());
        prop_assert!(open_app_message(&auth, &query, &body).is_err());
    }

    #[test]
    fn sealed_text_opens_to_itself(plaintext in any::<String>(), timestamp: u64, nonce in "[0-9a-zA-Z]{1,16}") {
        let auth = auth(&cases()[0]);
        let reply = auth.seal_xml(&plaintext, timestamp, &nonce);
        let signature = &reply.split("<MsgSignature><![CDATA[").nth(1).unwrap()[..40];
        let query = Query::parse(&format!(
            "msg_signature={signature}&timestamp={timestamp}&nonce={nonce}"
        )).unwrap();
        prop_assert_eq!(auth.open_xml(&query, reply.as_bytes()), Ok(plaintext));
        // Whatever it says, decoding it as a callback fails cleanly or succeeds, never panics.
        let _ = open_app_message(&auth, &query, reply.as_bytes());
    }
}
