//! Property tests: nothing panics on any input, and the signer and verifier agree.

use hmac::{KeyInit, Mac};
use proptest::prelude::*;
use serde_json::json;
use workmate_slack::{
    Interaction, MAX_CLOCK_SKEW_SECS, VerifyError, decode_event_envelope, decode_interaction,
    decode_slash_command, sign, verify_request,
};

/// Signature headers that get past the cheap checks as well as ones that do not.
fn signature_header() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "v0=[0-9a-fA-Fg]{0,70}",
        "v0=[0-9a-f]{64}",
        "(v0=)?[0-9a-f]{64}",
    ]
}

fn timestamp_header() -> impl Strategy<Value = String> {
    prop_oneof![any::<String>(), "[0-9]{0,25}", "[+-]?[0-9]{1,12}"]
}

/// Percent-encodes every byte: a valid (if verbose) form encoding that Slack could send.
fn percent_all(s: &str) -> String {
    s.bytes().map(|b| format!("%{b:02X}")).collect()
}

proptest! {
    // No regression files: proptest cannot locate a source root for a `tests/` module, and the
    // failure report already prints the shrunk input to turn into a unit test.
    #![proptest_config(ProptestConfig {
        cases: 512,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn verify_never_panics(
        secret in proptest::collection::vec(any::<u8>(), 0..100),
        timestamp in timestamp_header(),
        signature in signature_header(),
        body in proptest::collection::vec(any::<u8>(), 0..300),
        now in any::<i64>(),
    ) {
        let _ = verify_request(&secret, &timestamp, &signature, &body, now);
    }

    #[test]
    fn own_signature_verifies_within_the_window(
        secret in proptest::collection::vec(any::<u8>(), 0..200),
        timestamp in 0i64..=4_000_000_000,
        skew in -(MAX_CLOCK_SKEW_SECS as i64)..=(MAX_CLOCK_SKEW_SECS as i64),
        body in proptest::collection::vec(any::<u8>(), 0..500),
    ) {
        let ts = timestamp.to_string();
        let signature = sign(&secret, &ts, &body);
        prop_assert_eq!(signature.len(), 67);
        prop_assert_eq!(verify_request(&secret, &ts, &signature, &body, timestamp + skew), Ok(()));
    }

    #[test]
    fn own_signature_is_stale_outside_the_window(
        timestamp in 0i64..=4_000_000_000,
        beyond in 1i64..1_000_000,
        future in any::<bool>(),
    ) {
        let ts = timestamp.to_string();
        let signature = sign(b"secret", &ts, b"{}");
        let offset = MAX_CLOCK_SKEW_SECS as i64 + beyond;
        let now = if future { timestamp - offset } else { timestamp + offset };
        let stale = matches!(
            verify_request(b"secret", &ts, &signature, b"{}", now),
            Err(VerifyError::StaleTimestamp { .. })
        );
        prop_assert!(stale);
    }

    #[test]
    fn any_changed_body_byte_is_a_mismatch(
        secret in proptest::collection::vec(any::<u8>(), 1..80),
        body in proptest::collection::vec(any::<u8>(), 1..300),
        index in any::<prop::sample::Index>(),
        flip in 1u8..=255,
    ) {
        let signature = sign(&secret, "1700000000", &body);
        let mut tampered = body.clone();
        tampered[index.index(body.len())] ^= flip;
        prop_assert_eq!(
            verify_request(&secret, "1700000000", &signature, &tampered, 1_700_000_000),
            Err(VerifyError::SignatureMismatch)
        );
    }

    /// `sign` feeds HMAC a pre-padded key; it must equal HMAC over the raw key of any length.
    #[test]
    fn sign_matches_hmac_over_the_raw_key(
        secret in proptest::collection::vec(any::<u8>(), 0..300),
        timestamp in "[0-9]{1,12}",
        body in proptest::collection::vec(any::<u8>(), 0..200),
    ) {
        let mut reference = <hmac::Hmac<sha2::Sha256> as KeyInit>::new_from_slice(&secret).unwrap();
        reference.update(format!("v0:{timestamp}:").as_bytes());
        reference.update(&body);
        let expected = format!("v0={}", hex::encode(reference.finalize().into_bytes()));
        prop_assert_eq!(sign(&secret, &timestamp, &body), expected);
    }

    #[test]
    fn decoders_never_panic(body in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = decode_event_envelope(&body);
        let _ = decode_interaction(&body);
        let _ = decode_slash_command(&body);
    }

    #[test]
    fn decoders_never_panic_on_near_misses(text in any::<String>()) {
        let _ = decode_interaction(format!("payload={text}").as_bytes());
        let _ = decode_interaction(format!("payload={}", percent_all(&text)).as_bytes());
        let _ = decode_event_envelope(format!(r#"{{"type":"event_callback","event":{text}}}"#).as_bytes());
        let _ = decode_event_envelope(format!(r#"{{"type":{text}}}"#).as_bytes());
        let _ = decode_slash_command(format!("team_id={text}&text={text}").as_bytes());
    }

    /// Any action value survives JSON + form encoding, whether spaces are `+` or `%20`.
    #[test]
    fn action_values_round_trip_through_the_form(value in any::<String>()) {
        let payload = json!({
            "type": "block_actions",
            "user": {"id": "U1"},
            "container": {"type": "message", "message_ts": "1.2", "channel_id": "C1"},
            "actions": [{"action_id": "a", "type": "button", "value": value}],
        })
        .to_string();
        let plus = form_urlencoded::Serializer::new(String::new())
            .append_pair("payload", &payload)
            .finish();
        let percent = format!("payload={}", percent_all(&payload));
        for body in [plus, percent] {
            match decode_interaction(body.as_bytes()) {
                Ok(Interaction::BlockActions(a)) => {
                    prop_assert_eq!(a.actions[0].value.as_deref(), Some(value.as_str()));
                }
                other => prop_assert!(false, "{:?}", other),
            }
        }
    }
}
