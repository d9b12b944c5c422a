//! Sealing and opening: round trips, and every altered or misplaced part refused.

use proptest::prelude::*;
use workmate_vault::{
    Error, ExposeSecret, KeyProvider, Keyring, MasterKey, Sealed, SecretName, SecretRef,
    SecretString, open, rewrap, seal,
};

const PLAINTEXT: &str = "xoxb-very-secret-bot-token-0123456789";

fn keyring() -> Keyring {
    Keyring::new(MasterKey::generate("test").unwrap(), Vec::new())
}

fn name(text: &str) -> SecretName {
    SecretName::parse(text).unwrap()
}

fn place<'a>(name: &'a SecretName) -> SecretRef<'a> {
    SecretRef {
        tenant: "slack-T1",
        owner: Some("slack-U1"),
        name,
    }
}

fn secret() -> SecretString {
    SecretString::from(PLAINTEXT)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn a_sealed_secret_opens_with_its_key_and_place() {
    let keys = keyring();
    let n = name("platform/slack/bot_token");
    let sealed = seal(&keys, &place(&n), &secret()).unwrap();
    assert_eq!(sealed.key_id, keys.key_id());
    assert_eq!(sealed.nonce.len(), 12);
    assert_eq!(sealed.wrapped_key.len(), 12 + 32 + 16);
    assert_eq!(sealed.ciphertext.len(), PLAINTEXT.len() + 16);
    for part in [&sealed.wrapped_key, &sealed.nonce, &sealed.ciphertext] {
        assert!(!contains(part, PLAINTEXT.as_bytes()));
    }
    let opened = open(&keys, &place(&n), &sealed).unwrap();
    assert_eq!(opened.expose_secret(), PLAINTEXT);

    // Every seal has its own data key and nonce.
    let again = seal(&keys, &place(&n), &secret()).unwrap();
    assert_ne!(again.ciphertext, sealed.ciphertext);
    assert_ne!(again.wrapped_key, sealed.wrapped_key);
}

#[test]
fn another_master_key_is_refused() {
    let n = name("connector/github/token");
    let sealed = seal(&keyring(), &place(&n), &secret()).unwrap();
    let err = open(&keyring(), &place(&n), &sealed).unwrap_err();
    assert!(
        matches!(err, Error::UnknownKey { ref key_id } if *key_id == sealed.key_id),
        "{err:?}"
    );

    // Relabelling the row with another key's id does not open it with that key either.
    let other = keyring();
    let forged = Sealed {
        key_id: other.key_id().to_owned(),
        ..sealed
    };
    assert!(matches!(
        open(&other, &place(&n), &forged),
        Err(Error::Decrypt { what: "data key" })
    ));
}

#[test]
fn every_altered_part_is_refused() {
    let keys = keyring();
    let n = name("provider/openai/api_key");
    let sealed = seal(&keys, &place(&n), &secret()).unwrap();
    assert!(
        open(&keys, &place(&n), &sealed).is_ok(),
        "the untouched row opens"
    );

    let flip = |bytes: &[u8], i: usize| {
        let mut out = bytes.to_vec();
        out[i] ^= 0x01;
        out
    };
    let altered = [
        Sealed {
            ciphertext: flip(&sealed.ciphertext, 0),
            ..sealed.clone()
        },
        Sealed {
            ciphertext: flip(&sealed.ciphertext, sealed.ciphertext.len() - 1),
            ..sealed.clone()
        },
        Sealed {
            nonce: flip(&sealed.nonce, 3),
            ..sealed.clone()
        },
        Sealed {
            wrapped_key: flip(&sealed.wrapped_key, 0),
            ..sealed.clone()
        },
        Sealed {
            wrapped_key: flip(&sealed.wrapped_key, 20),
            ..sealed.clone()
        },
        Sealed {
            wrapped_key: sealed.wrapped_key[..30].to_vec(),
            ..sealed.clone()
        },
        Sealed {
            nonce: sealed.nonce[..8].to_vec(),
            ..sealed.clone()
        },
    ];
    for row in &altered {
        let err = open(&keys, &place(&n), row).unwrap_err();
        assert!(
            matches!(err, Error::Decrypt { .. } | Error::Malformed(_)),
            "{err:?}"
        );
        assert!(!err.to_string().contains(PLAINTEXT));
    }

    // Swapping wrapped keys between two secrets of the same place fails too.
    let other = seal(&keys, &place(&n), &SecretString::from("another")).unwrap();
    let swapped = Sealed {
        wrapped_key: other.wrapped_key,
        ..sealed
    };
    assert!(open(&keys, &place(&n), &swapped).is_err());
}

#[test]
fn a_row_moved_to_another_tenant_owner_or_name_does_not_open() {
    let keys = keyring();
    let (n, m) = (name("connector/github/token"), name("connector/jira/token"));
    let here = SecretRef {
        tenant: "t1",
        owner: Some("u1"),
        name: &n,
    };
    let sealed = seal(&keys, &here, &secret()).unwrap();
    let elsewhere = [
        SecretRef {
            tenant: "t2",
            ..here
        },
        SecretRef {
            owner: Some("u2"),
            ..here
        },
        SecretRef {
            owner: None,
            ..here
        },
        SecretRef { name: &m, ..here },
    ];
    for there in &elsewhere {
        let err = open(&keys, there, &sealed).unwrap_err();
        assert!(matches!(err, Error::Decrypt { .. }), "{there:?}: {err:?}");
    }
    assert_eq!(
        open(&keys, &here, &sealed).unwrap().expose_secret(),
        PLAINTEXT
    );
}

#[test]
fn rewrapping_moves_the_data_key_to_the_current_master_key() {
    let dir = tempfile::tempdir().unwrap();
    let (old_file, new_file) = (dir.path().join("old.key"), dir.path().join("new.key"));
    MasterKey::generate("old")
        .unwrap()
        .write_new_file(&old_file)
        .unwrap();
    MasterKey::generate("new")
        .unwrap()
        .write_new_file(&new_file)
        .unwrap();
    let read = |path: &std::path::Path| MasterKey::read_file(path).unwrap();

    let old_only = Keyring::new(read(&old_file), Vec::new());
    let n = name("platform/feishu/app_secret");
    let sealed = seal(&old_only, &place(&n), &secret()).unwrap();
    assert_eq!(sealed.key_id, old_only.key_id());

    // The new keyring holds the new key and, as previous, the old one.
    let both = Keyring::new(read(&new_file), vec![read(&old_file)]);
    let new_id = both.key_id().to_owned();
    let moved = rewrap(&both, &place(&n), &sealed)
        .unwrap()
        .expect("old key id");
    assert_eq!(moved.key_id, new_id);
    assert_eq!(
        moved.ciphertext, sealed.ciphertext,
        "only the data key is re-wrapped"
    );
    assert_eq!(moved.nonce, sealed.nonce);
    assert!(
        rewrap(&both, &place(&n), &moved).unwrap().is_none(),
        "already current"
    );

    // The moved row opens with the new key alone.
    let new_only = Keyring::new(read(&new_file), Vec::new());
    assert_eq!(
        open(&new_only, &place(&n), &moved).unwrap().expose_secret(),
        PLAINTEXT
    );
    assert!(matches!(
        open(&new_only, &place(&n), &sealed),
        Err(Error::UnknownKey { .. })
    ));
}

#[test]
fn debug_output_never_shows_a_secret_or_key() {
    let key = MasterKey::generate("test").unwrap();
    let keys = Keyring::new(key, Vec::new());
    let n = name("platform/slack/bot_token");
    let sealed = seal(&keys, &place(&n), &secret()).unwrap();
    let text = format!(
        "{keys:?} {sealed:?} {:?} {:?}",
        secret(),
        open(&keys, &place(&n), &sealed)
    );
    assert!(!text.contains(PLAINTEXT), "{text}");
    assert!(text.contains(keys.key_id()), "{text}");
}

proptest! {
    #[test]
    fn any_text_round_trips_and_any_flipped_bit_is_refused(
        text in ".{0,300}",
        tenant in "[a-z0-9-]{1,20}",
        owner in proptest::option::of("[a-z0-9-]{0,20}"),
        bit in 0usize..1000,
    ) {
        let keys = keyring();
        let n = name("x/y");
        let here = SecretRef { tenant: &tenant, owner: owner.as_deref(), name: &n };
        let sealed = seal(&keys, &here, &SecretString::from(text.as_str())).unwrap();
        let opened = open(&keys, &here, &sealed).unwrap();
        prop_assert_eq!(opened.expose_secret(), text.as_str());
        let total = (sealed.ciphertext.len() + sealed.wrapped_key.len()) * 8;
        let bit = bit % total;
        let mut damaged = sealed.clone();
        if bit < sealed.ciphertext.len() * 8 {
            damaged.ciphertext[bit / 8] ^= 1 << (bit % 8);
        } else {
            let b = bit - sealed.ciphertext.len() * 8;
            damaged.wrapped_key[b / 8] ^= 1 << (b % 8);
        }
        prop_assert!(open(&keys, &here, &damaged).is_err());
    }
}
