//! Template-card task ids from the chat layer's card keys (`approval:ib_01J…`, `turn:tn_1:2`).
//!
//! WeCom accepts a `task_id` of at most [`MAX_TASK_ID_BYTES`] of `[0-9A-Za-z_\-@]`, unique per
//! robot; it comes back with every click. Invariants: the id is valid and depends on the key
//! alone (so an update, which must keep the task id, derives the same one); a key that is already
//! a valid id without `@` is its own id; any other key becomes its valid characters (others as
//! `-`) cut to fit, then `@` and a 64-bit FNV-1a hash of the whole key, so two different keys get
//! different ids unless their hashes collide.

/// Bytes of a template card's `task_id`.
pub const MAX_TASK_ID_BYTES: usize = 128;

/// A valid, stable task id for the card with `card_key` (see the module docs).
pub fn task_id(card_key: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if !card_key.is_empty() && card_key.len() <= MAX_TASK_ID_BYTES && card_key.chars().all(plain) {
        return card_key.to_owned();
    }
    let hash = format!("{:016x}", fnv1a(card_key.as_bytes()));
    let room = MAX_TASK_ID_BYTES - 1 - hash.len();
    let head: String = card_key
        .chars()
        .map(|c| if plain(c) { c } else { '-' })
        .take(room)
        .collect();
    format!("{head}@{hash}")
}

/// Whether WeCom accepts `id` as a task id.
pub fn is_task_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_TASK_ID_BYTES
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '@'))
}

/// 64-bit FNV-1a: small, and the same on every build (unlike `std`'s hasher).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_valid_stable_and_distinct() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(task_id("tn_1-2"), "tn_1-2");
        let approval = task_id("approval:ib_01J");
        assert!(approval.starts_with("approval-ib_01J@"), "{approval}");
        assert_eq!(approval, task_id("approval:ib_01J"));
        assert_ne!(task_id("approval-ib_01J"), approval);
        assert_ne!(task_id("a@b"), "a@b");
        let long = task_id(&"漢".repeat(200));
        assert_eq!(long.len(), MAX_TASK_ID_BYTES);
        for id in [approval, long, task_id(""), task_id("a@b")] {
            assert!(is_task_id(&id), "{id}");
        }
    }
}
