//! Every Feishu case of the platform vectors (made by Feishu's own SDKs): decryption and
//! signatures agree byte for byte, and every invalid case is refused.

use serde_json::Value;
use workmate_adapter::testing::{bool_field, case_name, str_field, vector_cases};
use workmate_feishu::crypto;

fn cases(file: &str) -> Vec<Value> {
    vector_cases(env!("CARGO_MANIFEST_DIR"), file)
}

#[test]
fn every_decrypt_case_agrees_with_the_sdk() {
    for case in cases("feishu_event_decrypt.json") {
        let name = case_name(&case);
        let key = str_field(&case, "encrypt_key");
        let got = crypto::decrypt(key, str_field(&case, "encrypt"));
        if bool_field(&case, "valid") {
            assert_eq!(
                got.as_deref(),
                Ok(str_field(&case, "expected_plaintext")),
                "case {name}"
            );
            // The body as sent decrypts the same way.
            let body: Value = serde_json::from_str(str_field(&case, "body")).unwrap();
            let from_body = crypto::decrypt(key, body["encrypt"].as_str().unwrap());
            assert_eq!(from_body, got, "case {name}: body");
        } else {
            assert!(got.is_err(), "case {name} must be refused, got {got:?}");
        }
    }
}

#[test]
fn every_signature_case_agrees_with_the_sdk() {
    for case in cases("feishu_signature.json") {
        let name = case_name(&case);
        let (timestamp, nonce, key, body) = (
            str_field(&case, "timestamp"),
            str_field(&case, "nonce"),
            str_field(&case, "encrypt_key"),
            str_field(&case, "body").as_bytes(),
        );
        assert_eq!(
            crypto::signature(timestamp, nonce, key, body),
            str_field(&case, "expected_signature"),
            "case {name}"
        );
        let verdict = crypto::verify(timestamp, nonce, key, body, str_field(&case, "signature"));
        assert_eq!(
            verdict.is_ok(),
            bool_field(&case, "valid"),
            "case {name}: {verdict:?}"
        );
    }
}

#[test]
fn signatures_compare_as_exact_strings() {
    let body = br#"{"encrypt":"P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk="}"#;
    let good = crypto::signature("1599360473", "abcdef", "test key", body);
    assert!(crypto::verify("1599360473", "abcdef", "test key", body, &good).is_ok());
    for bad in [
        good.to_uppercase(),
        good[..63].to_owned(),
        String::new(),
        format!("{good} "),
    ] {
        assert!(
            crypto::verify("1599360473", "abcdef", "test key", body, &bad).is_err(),
            "{bad:?}"
        );
    }
}

#[test]
fn malformed_ciphertexts_are_refused_with_a_reason() {
    assert_eq!(
        crypto::decrypt("k", "not base64!"),
        Err(crypto::CryptoError::NotBase64)
    );
    assert_eq!(
        crypto::decrypt("k", "AAAA"),
        Err(crypto::CryptoError::BadLength(3))
    );
    // Only an IV, no block.
    let iv_only = "AAAAAAAAAAAAAAAAAAAAAA==";
    assert_eq!(
        crypto::decrypt("k", iv_only),
        Err(crypto::CryptoError::BadLength(16))
    );
}
