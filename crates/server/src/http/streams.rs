//! How many event streams one address may hold open at once.
//!
//! Invariant: a stream counts from when it is answered until its body is dropped (the client
//! left, or the server stops), so an address holding `max` streams gets `429` for another until
//! one of them ends; requests whose address is unknown (in-process tests) are not counted.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};

/// Open event streams by client address.
#[derive(Debug)]
pub struct StreamCaps {
    max_per_client: usize,
    open: Mutex<HashMap<IpAddr, usize>>,
}

impl Default for StreamCaps {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_STREAMS_PER_CLIENT)
    }
}

/// Event streams one address may hold open by default.
pub const DEFAULT_MAX_STREAMS_PER_CLIENT: usize = 64;

impl StreamCaps {
    /// At most `max_per_client` streams per address.
    pub fn new(max_per_client: usize) -> Self {
        Self {
            max_per_client: max_per_client.max(1),
            open: Mutex::default(),
        }
    }

    /// A slot for one more stream of `client`, held until the returned guard is dropped; `None`
    /// when the address holds its share already.
    pub(crate) fn admit(self: &Arc<Self>, client: IpAddr) -> Option<StreamSlot> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let count = open.entry(client).or_insert(0);
        if *count >= self.max_per_client {
            return None;
        }
        *count += 1;
        Some(StreamSlot {
            caps: Arc::clone(self),
            client,
        })
    }

    /// The share of one address.
    pub(crate) fn max_per_client(&self) -> usize {
        self.max_per_client
    }
}

/// One open stream's place in its address's share.
#[derive(Debug)]
pub(crate) struct StreamSlot {
    caps: Arc<StreamCaps>,
    client: IpAddr,
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut open = self
            .caps
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = open.get_mut(&self.client) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                open.remove(&self.client);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_holds_its_share_and_gets_a_slot_back_when_a_stream_ends() {
        let caps = Arc::new(StreamCaps::new(2));
        let ana: IpAddr = "10.0.0.1".parse().unwrap();
        let bob: IpAddr = "10.0.0.2".parse().unwrap();
        let first = caps.admit(ana).unwrap();
        let _second = caps.admit(ana).unwrap();
        assert!(caps.admit(ana).is_none());
        assert!(
            caps.admit(bob).is_some(),
            "another address has its own share"
        );
        drop(first);
        assert!(caps.admit(ana).is_some());
    }
}
