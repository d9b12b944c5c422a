//! Every robot-signature case of the platform vectors: outgoing webhook signs and URLs agree with
//! the SDKs byte for byte, and callbacks are accepted or refused as DingTalk documents.

use proptest::prelude::*;
use serde_json::Value;
use workmate_adapter::testing::{bool_field, case_name, i64_field, str_field, vector_cases};
use workmate_dingtalk::sign::{
    MAX_SKEW_MS, SignError, card_callback_sign, robot_sign, signed_webhook_url, verify_callback,
    verify_card_callback,
};

fn cases() -> Vec<Value> {
    vector_cases(env!("CARGO_MANIFEST_DIR"), "dingtalk_robot_sign.json")
}

#[test]
fn every_case_agrees_with_the_sdks() {
    let mut webhooks = 0;
    let mut callbacks = 0;
    for case in cases() {
        let name = case_name(&case);
        let (secret, timestamp) = (str_field(&case, "secret"), str_field(&case, "timestamp"));
        match str_field(&case, "kind") {
            "custom_robot_webhook" => {
                webhooks += 1;
                assert_eq!(
                    robot_sign(secret, timestamp),
                    str_field(&case, "sign"),
                    "case {name}"
                );
                if let Some(url) = case["webhook_url"].as_str() {
                    let base = url.split("&timestamp=").next().unwrap();
                    assert_eq!(
                        signed_webhook_url(base, secret, timestamp),
                        url,
                        "case {name}"
                    );
                }
                assert!(
                    signed_webhook_url(
                        "https://oapi.dingtalk.com/robot/send?access_token=x",
                        secret,
                        timestamp
                    )
                    .ends_with(str_field(&case, "sign_urlencoded")),
                    "case {name}"
                );
            }
            "robot_callback" => {
                callbacks += 1;
                assert_eq!(
                    robot_sign(secret, timestamp),
                    str_field(&case, "expected_sign"),
                    "case {name}"
                );
                let verdict = verify_callback(
                    secret,
                    timestamp,
                    str_field(&case, "sign"),
                    i64_field(&case, "now"),
                );
                assert_eq!(
                    verdict.is_ok(),
                    bool_field(&case, "valid"),
                    "case {name}: {verdict:?}"
                );
            }
            other => panic!("case {name}: unknown kind {other}"),
        }
    }
    assert!(webhooks > 0 && callbacks > 0);
}

#[test]
fn callbacks_are_refused_for_the_reason_that_applies() {
    let secret = "app-secret";
    let now = 1_724_848_063_323;
    let ts = now.to_string();
    let sign = robot_sign(secret, &ts);
    assert_eq!(verify_callback(secret, &ts, &sign, now), Ok(()));
    assert_eq!(
        verify_callback(secret, &ts, "", now),
        Err(SignError::Missing)
    );
    assert_eq!(
        verify_callback(secret, "soon", &sign, now),
        Err(SignError::BadTimestamp("soon".into()))
    );
    assert_eq!(
        verify_callback("other", &ts, &sign, now),
        Err(SignError::Mismatch)
    );
    // The header is the plain base64, not its URL-encoded form.
    let encoded = sign
        .replace('+', "%2B")
        .replace('/', "%2F")
        .replace('=', "%3D");
    if encoded != sign {
        assert_eq!(
            verify_callback(secret, &ts, &encoded, now),
            Err(SignError::Mismatch)
        );
    }
    // An hour either way is the limit.
    for skew in [MAX_SKEW_MS, -MAX_SKEW_MS] {
        let then = (now - skew).to_string();
        assert_eq!(
            verify_callback(secret, &then, &robot_sign(secret, &then), now),
            Ok(())
        );
    }
    for skew in [MAX_SKEW_MS + 1, -MAX_SKEW_MS - 1] {
        let then = (now - skew).to_string();
        assert!(matches!(
            verify_callback(secret, &then, &robot_sign(secret, &then), now),
            Err(SignError::Stale { .. })
        ));
    }
    assert!(SignError::Mismatch.to_string().contains("AppSecret"));
}

proptest! {
    #[test]
    fn any_header_is_checked_without_panicking(secret in "\\PC{0,40}", ts in "\\PC{0,20}", sign in "\\PC{0,60}", now in any::<i64>()) {
        let _ = verify_callback(&secret, &ts, &sign, now);
    }

    #[test]
    fn a_fresh_signature_always_verifies(secret in "[ -~]{1,64}", ts in 0i64..4_000_000_000_000) {
        let stamp = ts.to_string();
        prop_assert_eq!(verify_callback(&secret, &stamp, &robot_sign(&secret, &stamp), ts), Ok(()));
    }
}

#[test]
fn the_documented_examples_sign_as_computed() {
    assert_eq!(
        robot_sign("this is a secret", "1577262236757"),
        "DJrE6qdyVGCQz9z5r2MDuNcNAhwYnuAkyj13cx169CA="
    );
    assert_eq!(
        robot_sign("SEC_this_is_secret", "1577262236757"),
        "pevvF5ezyDVuiQ9rnKKiQky7roT0sSa2UDuZ/2Ltwo0="
    );
    assert!(
        signed_webhook_url(
            "https://oapi.dingtalk.com/robot/send?access_token=x",
            "SEC_this_is_secret",
            "1577262236757"
        )
        .ends_with(
            "&timestamp=1577262236757&sign=pevvF5ezyDVuiQ9rnKKiQky7roT0sSa2UDuZ%2F2Ltwo0%3D"
        )
    );
    let sign = card_callback_sign("mySecret", "1700000000000");
    assert_eq!(sign, "t3jqwt0WBVsvNpgD+ncljxce56XsNOeEYafngX/BHjc=");
    assert_eq!(
        verify_card_callback("mySecret", "1700000000000", &sign),
        Ok(())
    );
    assert_eq!(
        verify_card_callback("other", "1700000000000", &sign),
        Err(SignError::Mismatch)
    );
    assert_eq!(
        verify_card_callback("mySecret", "1700000000000", ""),
        Err(SignError::Missing)
    );
}
