//! What replicas share of a platform's short-lived answers: a value per key, for a while (the
//! latest answer to a WeCom callback stream, which WeCom may ask any replica for).
//!
//! Invariant: a value read is the last one put under its key, or nothing once it expired; a
//! value that could not be kept or read is nothing, never an error the platform must handle
//! (the replica that put it still has its own copy).

use std::fmt::Debug;
use std::time::Duration;

use crate::BoxFuture;

/// Values every replica reads.
pub trait SharedValues: Send + Sync + Debug {
    /// Keeps `value` under `key` for `ttl`, replacing what was there.
    fn put<'a>(&'a self, key: &'a str, value: String, ttl: Duration) -> BoxFuture<'a, ()>;

    /// The value under `key`, unless it expired.
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Option<String>>;
}
