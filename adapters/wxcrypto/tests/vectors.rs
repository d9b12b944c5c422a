//! Every WeCom and DingTalk case of the platform vectors: signatures, decryption (every padding
//! value, echostr, empty receive ids) and encryption agree byte for byte with the SDKs, and every
//! invalid case is refused for the reason it gives.

use serde_json::Value;
use workmate_adapter::testing::{bool_field, case_name, str_field, vector_cases};
use workmate_wxcrypto::{Crypto, CryptoError};

fn cases(file: &str) -> Vec<Value> {
    vector_cases(env!("CARGO_MANIFEST_DIR"), file)
}

fn prefix(case: &Value) -> [u8; 16] {
    hex::decode(str_field(case, "random_prefix_hex"))
        .unwrap()
        .try_into()
        .unwrap()
}

fn check(file: &str) {
    for case in cases(file) {
        let name = case_name(&case);
        let crypto = Crypto::new(
            str_field(&case, "token"),
            str_field(&case, "encoding_aes_key"),
            str_field(&case, "receive_id"),
        )
        .unwrap_or_else(|e| panic!("case {name}: {e}"));
        let (timestamp, nonce, sealed, signature) = (
            str_field(&case, "timestamp"),
            str_field(&case, "nonce"),
            str_field(&case, "msg_encrypt"),
            str_field(&case, "msg_signature"),
        );
        let opened = crypto.decrypt(signature, timestamp, nonce, sealed);
        if bool_field(&case, "valid") {
            let plaintext = str_field(&case, "plaintext_xml_or_json");
            assert_eq!(
                crypto.signature(timestamp, nonce, sealed),
                signature,
                "case {name}"
            );
            assert_eq!(opened.as_deref(), Ok(plaintext), "case {name}");
            assert_eq!(
                crypto.encrypt_with(prefix(&case), plaintext),
                sealed,
                "case {name}: encrypt"
            );
        } else {
            match str_field(&case, "error") {
                "signature" => {
                    assert_eq!(opened, Err(CryptoError::SignatureMismatch), "case {name}");
                    assert_eq!(
                        crypto.signature(timestamp, nonce, sealed),
                        str_field(&case, "expected_signature"),
                        "case {name}"
                    );
                }
                "receive_id" => assert_eq!(
                    opened,
                    Err(CryptoError::ReceiveIdMismatch {
                        expected: str_field(&case, "receive_id").to_owned(),
                        found: str_field(&case, "encrypted_with_receive_id").to_owned(),
                    }),
                    "case {name}"
                ),
                other => panic!("case {name}: unknown error kind {other}"),
            }
        }
    }
}

#[test]
fn every_wecom_case_agrees_with_the_sdks() {
    check("wecom_crypto.json");
}

#[test]
fn every_dingtalk_case_agrees_with_the_sdks() {
    check("dingtalk_crypto.json");
}

#[test]
fn every_padding_value_from_1_to_32_is_covered() {
    let mut seen = [false; 33];
    for case in cases("wecom_crypto.json")
        .iter()
        .chain(&cases("dingtalk_crypto.json"))
    {
        if let Some(pad) = case["pad_len"].as_u64() {
            seen[usize::try_from(pad).unwrap()] = true;
        }
    }
    let crypto = Crypto::new(
        "t",
        "jWmYm7qr5nMoAUwZRjGtBxmz3KA1tkAj3ykkR6q2B2C",
        "wx5823bf96d3bd56c7",
    )
    .unwrap();
    // Every message length mod 32 gives another pad value: each must round-trip.
    for len in 0..64 {
        let msg = "x".repeat(len);
        let sealed = crypto.encrypt_with([7; 16], &msg);
        let signature = crypto.signature("1409659813", "1372623149", &sealed);
        assert_eq!(
            crypto
                .decrypt(&signature, "1409659813", "1372623149", &sealed)
                .unwrap(),
            msg
        );
    }
    assert!(seen[32], "the vectors include a full block of padding");
}

#[test]
fn the_official_sample_decrypts() {
    let crypto = Crypto::new(
        "QDG6eK",
        "jWmYm7qr5nMoAUwZRjGtBxmz3KA1tkAj3ykkR6q2B2C",
        "wx5823bf96d3bd56c7",
    )
    .unwrap();
    let echostr =
        "P9nAzCzyDtyTWESHep1vC5X9xho/qYX3Zpb4yKa9SKld1DsH3Iyt3tP3zNdtp+4RPcs8TgAE7OaBO+FZXvnaqQ==";
    assert_eq!(
        crypto
            .decrypt(
                "5c45ff5e21c57e6ad56bac8758b79b1d9ac89fd3",
                "1409659589",
                "263014780",
                echostr
            )
            .unwrap(),
        "1616140317555161061"
    );
    let robot = Crypto::new("QDG6eK", "jWmYm7qr5nMoAUwZRjGtBxmz3KA1tkAj3ykkR6q2B2C", "").unwrap();
    let msg = r#"{"msgid":"MSGID1","aibotid":"AIBOTID","chattype":"group","chatid":"CHATID","from":{"userid":"zhangsan"},"msgtype":"text","text":{"content":"@bot hi"}}"#;
    let sealed = robot.encrypt_with(*b"aaaaaaaaaaaaaaaa", msg);
    assert_eq!(
        sealed,
        "2JaQ0H0H/TuqGM/rDRTva0Fn22ccXg/HLz2SbfDd2rxVWinYwL02dvmitfJSGV0hgRJNP1IL1jjnIMHzRxNttY8anJ6MkJoxfdGRhOyOqOXNxumDzXwE+UdhNB4BTenTELiLv6zEuqLWj21MAljuAhvnyNi379/C+ShQrciLAdIkUM0EHWDwt+tAGgVijq+694cUB+Z2/MNbNGPJWj3t80UpBaddQ9iBgCRp7U2/YWpvV+MfHsRruxVw/72lSuFW"
    );
    assert_eq!(
        robot.signature("1409659813", "1372623149", &sealed),
        "c870751a211d036f7eed3ffdebd1536a1d34af6a"
    );
}
