//! Long connections held through a lease: one replica at a time, handed over on close, taken over
//! when the holder's lease lapses, closed when another replica holds the lease.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use workmate_adapter::{BoxFuture, Connection, InboundSink};
use workmate_chat::Chat;
use workmate_protocol::Surface;
use workmate_store::Store;

use crate::support::{DONE, PATIENCE, TestChat, eventually_holds};

/// A connection that only counts how often it is open.
#[derive(Debug, Default)]
struct Counted {
    name: String,
    open: AtomicUsize,
    opened: AtomicUsize,
}

impl Counted {
    fn new(name: &str) -> Arc<Self> {
        Arc::new(Self {
            name: name.to_owned(),
            ..Self::default()
        })
    }

    fn is_open(&self) -> bool {
        self.open.load(Ordering::SeqCst) > 0
    }
}

impl Connection for Counted {
    fn surface(&self) -> Surface {
        Surface::Feishu
    }

    fn lease_name(&self) -> String {
        self.name.clone()
    }

    fn run(
        self: Arc<Self>,
        _sink: Arc<dyn InboundSink>,
        stop: CancellationToken,
    ) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            self.opened.fetch_add(1, Ordering::SeqCst);
            self.open.fetch_add(1, Ordering::SeqCst);
            stop.cancelled().await;
            self.open.fetch_sub(1, Ordering::SeqCst);
        })
    }
}

async fn holder(store: &Store, name: &str) -> Option<String> {
    store
        .connection_leases()
        .get(name)
        .await
        .unwrap()
        .filter(|l| l.until_ms > store.clock_ms())
        .map(|l| l.holder)
}

/// Holds the connection `name` on two replicas: `(a, b)` with their connections.
fn two_replicas(t: &TestChat, name: &str) -> (Chat, Arc<Counted>, Chat, Arc<Counted>) {
    let a = t.replica("replica-a", DONE);
    let b = t.replica("replica-b", DONE);
    (a, Counted::new(name), b, Counted::new(name))
}

#[tokio::test]
async fn one_replica_holds_a_long_connection_and_hands_it_over_on_close() {
    let t = TestChat::new(DONE).await;
    let name = "feishu:cli_handover";
    let (a, on_a, b, on_b) = two_replicas(&t, name);
    let held_a = a.hold(on_a.clone());
    eventually_holds("replica a opens the connection", PATIENCE, || async {
        on_a.is_open()
    })
    .await;
    let held_b = b.hold(on_b.clone());

    // Several lease terms pass: b never opens it while a renews.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert!(
        on_a.is_open() && !on_b.is_open(),
        "only the holder's connection is open"
    );
    assert_eq!(
        on_a.opened.load(Ordering::SeqCst),
        1,
        "renewals keep the one connection"
    );
    assert_eq!(holder(&t.store, name).await.as_deref(), Some("replica-a"));

    // a shuts down: it closes and releases, b takes over without waiting out the term.
    held_a.close().await;
    assert!(!on_a.is_open());
    eventually_holds("replica b takes the connection over", PATIENCE, || async {
        on_b.is_open()
    })
    .await;
    assert_eq!(holder(&t.store, name).await.as_deref(), Some("replica-b"));
    held_b.close().await;
    assert!(!on_b.is_open());
    assert_eq!(
        holder(&t.store, name).await,
        None,
        "closing released the lease"
    );
}

#[tokio::test]
async fn a_lease_left_by_a_dead_replica_is_taken_over_once_it_lapses() {
    let t = TestChat::new(DONE).await;
    let name = "feishu:cli_takeover";
    // A replica that died holding the lease: it never renews nor releases it.
    let until = t.store.clock_ms() + 800;
    t.store
        .connection_leases()
        .take(name, "replica-dead", until)
        .await
        .unwrap()
        .unwrap();

    let (a, on_a, b, on_b) = two_replicas(&t, name);
    let held_a = a.hold(on_a.clone());
    let held_b = b.hold(on_b.clone());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !on_a.is_open() && !on_b.is_open(),
        "the dead replica's lease is still live"
    );
    eventually_holds(
        "a live replica takes the connection over",
        PATIENCE,
        || async { on_a.is_open() || on_b.is_open() },
    )
    .await;
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(
        on_a.is_open() != on_b.is_open(),
        "exactly one replica holds it"
    );
    held_a.close().await;
    held_b.close().await;
}

#[tokio::test]
async fn a_replica_closes_its_connection_when_another_holds_the_lease() {
    let t = TestChat::new(DONE).await;
    let name = "feishu:cli_lost";
    let a = t.replica("replica-a", DONE);
    let on_a = Counted::new(name);
    let held_a = a.hold(on_a.clone());
    eventually_holds("replica a opens the connection", PATIENCE, || async {
        on_a.is_open()
    })
    .await;

    // a stalled past its term and another replica took the lease meanwhile.
    let leases = t.store.connection_leases();
    leases.release(name, "replica-a").await.unwrap();
    leases
        .take(name, "replica-b", t.store.clock_ms() + 60_000)
        .await
        .unwrap()
        .unwrap();
    eventually_holds("replica a closes its connection", PATIENCE, || async {
        !on_a.is_open()
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!on_a.is_open(), "it stays closed while b's lease is live");
    held_a.close().await;
}
