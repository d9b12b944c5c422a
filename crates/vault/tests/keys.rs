//! Master keys from files and from text: formats, permissions, ids.

use std::os::unix::fs::PermissionsExt as _;

use workmate_vault::{Error, KeyProvider, Keyring, MasterKey, SecretString};

const KEY_B64: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

fn write(dir: &std::path::Path, name: &str, text: &str, mode: u32) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    path
}

#[test]
fn a_key_file_must_be_owner_only() {
    let dir = tempfile::tempdir().unwrap();
    let open = write(dir.path(), "open.key", KEY_B64, 0o644);
    let err = MasterKey::read_file(&open).unwrap_err();
    assert!(matches!(err, Error::KeyFile { .. }), "{err:?}");
    assert!(err.to_string().contains("chmod 600"), "{err}");
    assert!(!err.to_string().contains(KEY_B64));
    let group = write(dir.path(), "group.key", KEY_B64, 0o640);
    assert!(MasterKey::read_file(&group).is_err());

    for mode in [0o600, 0o400] {
        let fine = write(
            dir.path(),
            &format!("{mode:o}.key"),
            &format!("{KEY_B64}\n"),
            mode,
        );
        let key = MasterKey::read_file(&fine).unwrap();
        assert!(
            key.id().starts_with("k1-") && key.id().len() == 19,
            "{}",
            key.id()
        );
    }
}

#[test]
fn the_same_key_has_the_same_id_from_a_file_or_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "k", KEY_B64, 0o600);
    let from_file = MasterKey::read_file(&path).unwrap();
    let from_env =
        MasterKey::from_base64(&SecretString::from(KEY_B64), "WORKMATE_VAULT_KEY").unwrap();
    assert_eq!(from_file.id(), from_env.id());
    let other = MasterKey::generate("x").unwrap();
    assert_ne!(other.id(), from_env.id());
    let debug = format!("{from_env:?}");
    assert!(
        debug.contains("WORKMATE_VAULT_KEY") && !debug.contains(KEY_B64),
        "{debug}"
    );
}

#[test]
fn malformed_keys_are_refused_without_echoing_them() {
    let short = "c2hvcnQta2V5"; // "short-key"
    for text in ["not base64 !!", short, ""] {
        let err =
            MasterKey::from_base64(&SecretString::from(text), "WORKMATE_VAULT_KEY").unwrap_err();
        assert!(matches!(err, Error::KeyFormat { .. }), "{err:?}");
        assert!(err.to_string().contains("WORKMATE_VAULT_KEY"));
        if !text.is_empty() {
            assert!(!err.to_string().contains(text), "{err}");
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "bad", short, 0o600);
    assert!(matches!(
        MasterKey::read_file(&path),
        Err(Error::KeyFile { .. })
    ));
    assert!(MasterKey::read_file(&dir.path().join("missing")).is_err());
}

#[test]
fn generated_key_files_are_owner_only_and_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.key");
    let key = MasterKey::generate("test").unwrap();
    key.write_new_file(&path).unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert_eq!(MasterKey::read_file(&path).unwrap().id(), key.id());
    assert!(
        key.write_new_file(&path).is_err(),
        "an existing file is kept"
    );
}

#[test]
fn a_keyring_wraps_with_the_current_key_and_knows_the_previous_ones() {
    let old = MasterKey::generate("old").unwrap();
    let new = MasterKey::generate("new").unwrap();
    let (old_id, new_id) = (old.id().to_owned(), new.id().to_owned());
    let dup = MasterKey::from_base64(&SecretString::from(KEY_B64), "a").unwrap();
    let dup2 = MasterKey::from_base64(&SecretString::from(KEY_B64), "b").unwrap();
    let ring = Keyring::new(new, vec![old, dup, dup2]);
    assert_eq!(ring.key_id(), new_id);
    assert!(ring.has_key(&old_id) && ring.has_key(&new_id));
    assert!(!ring.has_key("k1-0000000000000000"));
    assert_eq!(ring.keys().count(), 3, "a key listed twice is kept once");
}
