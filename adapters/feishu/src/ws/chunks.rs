//! Reassembly of a data payload Feishu split into chunks (`sum` > 1).
//!
//! Invariants: a payload is released once, when its last missing chunk arrives, as the chunks
//! joined in `seq` order; a partial payload is forgotten [`PARTIAL_TTL`] after its first chunk
//! (as the SDKs do) and at most [`MAX_PARTIALS`] are kept, the oldest going first, so chunks
//! that never complete cannot grow memory.

use std::collections::HashMap;
use std::time::Duration;

use tokio::time::Instant;

/// How long the chunks of an incomplete payload are kept.
pub const PARTIAL_TTL: Duration = Duration::from_secs(5);
/// How many incomplete payloads are kept at once.
pub const MAX_PARTIALS: usize = 64;
/// The most chunks one payload may announce; more is not a Feishu frame.
pub(crate) const MAX_CHUNKS: usize = 1024;

#[derive(Debug)]
struct Partial {
    started: Instant,
    chunks: Vec<Option<Vec<u8>>>,
}

/// The incomplete payloads of one client.
#[derive(Debug, Default)]
pub(crate) struct Reassembly {
    partials: HashMap<String, Partial>,
}

/// Why a chunk was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// `sum` is 0 or above [`MAX_CHUNKS`], or `seq` is not below `sum`.
    BadIndex,
}

impl Reassembly {
    /// Adds chunk `seq` of `sum` of message `message_id`, arrived at `now`; returns the whole
    /// payload once every chunk is in.
    pub(crate) fn add(
        &mut self,
        now: Instant,
        message_id: &str,
        sum: usize,
        seq: usize,
        chunk: Vec<u8>,
    ) -> Result<Option<Vec<u8>>, Refused> {
        if sum == 0 || sum > MAX_CHUNKS || seq >= sum {
            return Err(Refused::BadIndex);
        }
        self.partials
            .retain(|_, p| now.saturating_duration_since(p.started) < PARTIAL_TTL);
        if sum == 1 {
            return Ok(Some(chunk));
        }
        if !self.partials.contains_key(message_id) && self.partials.len() >= MAX_PARTIALS {
            let oldest = self
                .partials
                .iter()
                .min_by_key(|(_, p)| p.started)
                .map(|(id, _)| id.clone());
            if let Some(id) = oldest {
                tracing::warn!(message_id = %id, "Feishu chunked payload dropped: too many incomplete.");
                self.partials.remove(&id);
            }
        }
        let partial = self
            .partials
            .entry(message_id.to_owned())
            .or_insert_with(|| Partial {
                started: now,
                chunks: vec![None; sum],
            });
        if partial.chunks.len() != sum {
            // The same id announced another count: start over with this one.
            *partial = Partial {
                started: now,
                chunks: vec![None; sum],
            };
        }
        if let Some(slot) = partial.chunks.get_mut(seq) {
            *slot = Some(chunk);
        }
        if partial.chunks.iter().any(Option::is_none) {
            return Ok(None);
        }
        let whole = self
            .partials
            .remove(message_id)
            .map(|p| p.chunks.into_iter().flatten().flatten().collect());
        Ok(whole)
    }

    /// How many payloads are incomplete.
    #[cfg(test)]
    fn pending(&self) -> usize {
        self.partials.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add(
        r: &mut Reassembly,
        now: Instant,
        id: &str,
        sum: usize,
        seq: usize,
        chunk: &str,
    ) -> Option<String> {
        r.add(now, id, sum, seq, chunk.as_bytes().to_vec())
            .unwrap()
            .map(|b| String::from_utf8(b).unwrap())
    }

    #[test]
    fn chunks_join_in_seq_order_whatever_order_they_arrive_in() {
        let mut r = Reassembly::default();
        let now = Instant::now();
        assert_eq!(add(&mut r, now, "m", 3, 2, "c"), None);
        assert_eq!(add(&mut r, now, "m", 3, 0, "a"), None);
        assert_eq!(add(&mut r, now, "m", 3, 1, "b").as_deref(), Some("abc"));
        assert_eq!(r.pending(), 0);
        // Released once: a late duplicate starts a new partial, not a second payload.
        assert_eq!(add(&mut r, now, "m", 3, 1, "b"), None);
        assert_eq!(add(&mut r, now, "single", 1, 0, "x").as_deref(), Some("x"));
    }

    #[test]
    fn partials_expire_after_five_seconds() {
        let mut r = Reassembly::default();
        let start = Instant::now();
        assert_eq!(add(&mut r, start, "m", 2, 0, "a"), None);
        let late = start + PARTIAL_TTL;
        assert_eq!(
            add(&mut r, late, "m", 2, 1, "b"),
            None,
            "the first chunk is gone"
        );
        assert_eq!(add(&mut r, late, "m", 2, 0, "a").as_deref(), Some("ab"));
    }

    #[test]
    fn the_oldest_partial_goes_when_too_many_are_open() {
        let mut r = Reassembly::default();
        let start = Instant::now();
        for i in 0..MAX_PARTIALS {
            let at = start + Duration::from_millis(u64::try_from(i).unwrap());
            assert_eq!(add(&mut r, at, &format!("m{i}"), 2, 0, "a"), None);
        }
        let now = start + Duration::from_secs(1);
        assert_eq!(add(&mut r, now, "new", 2, 0, "a"), None);
        assert_eq!(r.pending(), MAX_PARTIALS);
        assert_eq!(add(&mut r, now, "m1", 2, 1, "b").as_deref(), Some("ab"));
        assert_eq!(add(&mut r, now, "m0", 2, 1, "b"), None, "m0 was evicted");
    }

    #[test]
    fn bad_indexes_and_changed_counts() {
        let mut r = Reassembly::default();
        let now = Instant::now();
        assert_eq!(r.add(now, "m", 2, 2, vec![]), Err(Refused::BadIndex));
        assert_eq!(r.add(now, "m", 0, 0, vec![]), Err(Refused::BadIndex));
        assert_eq!(
            r.add(now, "m", MAX_CHUNKS + 1, 0, vec![]),
            Err(Refused::BadIndex)
        );
        assert_eq!(add(&mut r, now, "m", 3, 0, "a"), None);
        assert_eq!(add(&mut r, now, "m", 2, 1, "b"), None);
        assert_eq!(add(&mut r, now, "m", 2, 0, "a").as_deref(), Some("ab"));
    }
}
