//! A fake chat layer: records what a connection hands it, refuses the first deliveries when
//! told to (as a chat layer whose database is down), and answers clicks with a scripted reply.

use std::collections::HashSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use workmate_adapter::{
    BoxFuture, ClickReply, CommandReply, Inbound, InboundSink, NotTaken, Taken,
};

#[derive(Debug, Default)]
pub(crate) struct FakeSink {
    /// Every delivery and click offered, taken or not, in order.
    offered: Mutex<Vec<Inbound>>,
    /// The delivery ids stored.
    stored: Mutex<HashSet<String>>,
    /// How many of the next offers to refuse.
    refuse: AtomicUsize,
    /// What a click answers.
    reply: Mutex<Option<ClickReply>>,
}

impl FakeSink {
    /// A sink that refuses its first `n` offers.
    pub(crate) fn refusing(n: usize) -> Self {
        let sink = Self::default();
        sink.refuse.store(n, Ordering::SeqCst);
        sink
    }

    /// A sink whose clicks answer `reply`.
    pub(crate) fn answering(reply: ClickReply) -> Self {
        let sink = Self::default();
        *sink.reply.lock().unwrap() = Some(reply);
        sink
    }

    /// Every offer so far.
    pub(crate) fn offered(&self) -> Vec<Inbound> {
        self.offered.lock().unwrap().clone()
    }

    /// How many deliveries were stored (each delivery id once).
    pub(crate) fn stored(&self) -> usize {
        self.stored.lock().unwrap().len()
    }

    fn take(&self, inbound: Inbound) -> Result<Taken, NotTaken> {
        self.offered.lock().unwrap().push(inbound.clone());
        let refused = self
            .refuse
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok();
        if refused {
            return Err(NotTaken("the database is down".into()));
        }
        if self.stored.lock().unwrap().insert(inbound.delivery_id) {
            Ok(Taken::Stored)
        } else {
            Ok(Taken::Duplicate)
        }
    }
}

impl InboundSink for FakeSink {
    fn deliver(&self, inbound: Inbound) -> BoxFuture<'_, Result<Taken, NotTaken>> {
        Box::pin(async move { self.take(inbound) })
    }

    fn command(&self, _inbound: Inbound) -> BoxFuture<'_, CommandReply> {
        Box::pin(async {
            CommandReply {
                text: String::new(),
                card: None,
            }
        })
    }

    fn click(&self, inbound: Inbound) -> BoxFuture<'_, Result<ClickReply, NotTaken>> {
        Box::pin(async move {
            self.take(inbound)?;
            let reply = self.reply.lock().unwrap().clone();
            Ok(reply.unwrap_or_else(ClickReply::received))
        })
    }
}
