//! What holds for any input: a message round-trips under any prefix; a ciphertext made for
//! another key, receive id or token, or altered anywhere, is refused; bad keys are refused with
//! a clear error; nothing panics.

use proptest::prelude::*;
use workmate_wxcrypto::{Crypto, CryptoError};

const KEY: &str = "jWmYm7qr5nMoAUwZRjGtBxmz3KA1tkAj3ykkR6q2B2C";

#[test]
fn a_key_that_is_not_32_bytes_is_refused_with_a_clear_error() {
    for key in [
        "",
        "short",
        "jWmYm7qr5nMoAUwZRjGtBxmz3KA1tkAj3ykkR6q2B2",
        "not base64 at all, not even close, nope!!!!",
    ] {
        let err = Crypto::new("t", key, "").unwrap_err();
        assert!(matches!(err, CryptoError::BadKey(_)), "{key}: {err}");
        assert!(err.to_string().contains("43 characters"));
    }
}

#[test]
fn a_random_prefix_differs_between_calls_and_still_decrypts() {
    let crypto = Crypto::new("t", KEY, "ww1").unwrap();
    let (a, b) = (crypto.encrypt("hello"), crypto.encrypt("hello"));
    assert_ne!(a, b);
    for sealed in [a, b] {
        let signature = crypto.signature("1", "2", &sealed);
        assert_eq!(
            crypto.decrypt(&signature, "1", "2", &sealed).unwrap(),
            "hello"
        );
    }
}

#[test]
fn another_receive_id_or_token_is_refused() {
    let ours = Crypto::new("t", KEY, "ww1").unwrap();
    let theirs = Crypto::new("t", KEY, "ww2").unwrap();
    let sealed = theirs.encrypt("hi");
    let signature = ours.signature("1", "2", &sealed);
    assert!(matches!(
        ours.decrypt(&signature, "1", "2", &sealed),
        Err(CryptoError::ReceiveIdMismatch { .. })
    ));
    let other_token = Crypto::new("u", KEY, "ww1").unwrap();
    let sealed = ours.encrypt("hi");
    let signature = other_token.signature("1", "2", &sealed);
    assert_eq!(
        ours.decrypt(&signature, "1", "2", &sealed),
        Err(CryptoError::SignatureMismatch)
    );
    // Upper-case hex is not the signature.
    let signature = ours.signature("1", "2", &sealed).to_uppercase();
    assert_eq!(
        ours.decrypt(&signature, "1", "2", &sealed),
        Err(CryptoError::SignatureMismatch)
    );
}

proptest! {
    #[test]
    fn any_message_round_trips(msg in "\\PC{0,300}", prefix in any::<[u8; 16]>(), receive_id in "[a-z0-9]{0,20}") {
        let crypto = Crypto::new("token", KEY, &receive_id).unwrap();
        let sealed = crypto.encrypt_with(prefix, &msg);
        let signature = crypto.signature("1700000000", "nonce", &sealed);
        prop_assert_eq!(crypto.decrypt(&signature, "1700000000", "nonce", &sealed), Ok(msg));
    }

    #[test]
    fn a_signed_but_altered_ciphertext_never_opens_as_another_message(
        msg in "[a-z]{0,80}",
        at in any::<prop::sample::Index>(),
        bit in 0u8..8,
    ) {
        let crypto = Crypto::new("token", KEY, "ww1").unwrap();
        let sealed = crypto.encrypt_with([1; 16], &msg);
        let mut raw = base64_decode(&sealed);
        let i = at.index(raw.len());
        raw[i] ^= 1 << bit;
        let altered = base64_encode(&raw);
        let signature = crypto.signature("1", "2", &altered);
        // CBC without a MAC: flipping a bit of block n garbles block n and flips the same bit
        // of block n+1, so an altered message may still open, but never as the original text.
        if let Ok(opened) = crypto.decrypt(&signature, "1", "2", &altered) {
            prop_assert_ne!(opened, msg);
        }
    }

    #[test]
    fn garbage_never_panics(sealed in "\\PC{0,200}", signature in "[0-9a-f]{0,40}") {
        let crypto = Crypto::new("token", KEY, "").unwrap();
        let _ = crypto.decrypt(&signature, "1", "2", &sealed);
        let signature = crypto.signature("1", "2", &sealed);
        let _ = crypto.decrypt(&signature, "1", "2", &sealed);
    }
}

fn base64_decode(s: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.decode(s).unwrap()
}

fn base64_encode(b: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(b)
}

proptest! {
    /// A robot's file round-trips under its key (with or without the trailing `=`), and does
    /// not decrypt under another.
    #[test]
    fn a_file_round_trips_and_another_key_does_not_open_it(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let sealed = workmate_wxcrypto::encrypt_file(KEY, &bytes).unwrap();
        prop_assert_eq!(sealed.len() % 32, 0);
        prop_assert_eq!(&workmate_wxcrypto::decrypt_file(KEY, &sealed).unwrap(), &bytes);
        prop_assert_eq!(&workmate_wxcrypto::decrypt_file(&format!("{KEY}="), &sealed).unwrap(), &bytes);
        let other = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG";
        if let Ok(opened) = workmate_wxcrypto::decrypt_file(other, &sealed) {
            prop_assert_ne!(opened, bytes);
        }
    }
}

#[test]
fn a_file_of_bad_length_or_key_is_refused() {
    assert!(matches!(
        workmate_wxcrypto::decrypt_file(KEY, &[1, 2, 3]),
        Err(CryptoError::BadLength(3))
    ));
    assert!(matches!(
        workmate_wxcrypto::decrypt_file("short", &[0; 32]),
        Err(CryptoError::BadKey(_))
    ));
}
