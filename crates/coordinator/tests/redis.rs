//! Fan-out, shared limits, dedupe and signals between two Redis coordinators.

use std::sync::Arc;
use std::time::Duration;

use workmate_coordinator::{Coordinator, InProcess, RedisCoordinator, RedisSettings, Signal};
use workmate_protocol::{Event, EventKind, SessionId, TenantId};
use workmate_test_support::Backend;

/// Two replicas on the test Redis (`WORKMATE_TEST_REDIS_URL`), under a prefix of their own; the
/// tests calling this are declared with `needs!`.
async fn two_replicas() -> (RedisCoordinator, RedisCoordinator) {
    let url = Backend::Redis.url();
    let prefix = format!("wmtest:{}", uuid_like());
    let replica = |name: &str| RedisSettings {
        url: url.clone(),
        prefix: prefix.clone(),
        replica: name.to_owned(),
    };
    let a = RedisCoordinator::connect(replica("a")).await.unwrap();
    let b = RedisCoordinator::connect(replica("b")).await.unwrap();
    (a, b)
}

fn uuid_like() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{nanos:x}-{}", std::process::id())
}

fn event(session: &SessionId, seq: u64) -> Arc<Event> {
    Arc::new(Event {
        tenant_id: TenantId::from("t1"),
        session_id: session.clone(),
        seq,
        turn_id: None,
        at_ms: 1,
        kind: EventKind::AssistantDelta {
            text: format!("part {seq}"),
        },
    })
}

async fn next<T: Clone>(rx: &mut tokio::sync::broadcast::Receiver<T>) -> T {
    tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("nothing arrived within 5 s")
        .unwrap()
}

workmate_test_support::needs! { [redis]
    #[tokio::test]
    async fn events_published_on_one_replica_reach_subscribers_on_the_other_in_order() {
        let (a, b) = two_replicas().await;
        let tenant = TenantId::from("t1");
        let session = SessionId::from("s1".to_owned());
        let mut on_b = b.subscribe_events(&tenant, &session).await.unwrap();
        let mut on_a = a.subscribe_events(&tenant, &session).await.unwrap();
        for seq in 1..=50 {
            a.publish_event(&event(&session, seq));
        }
        for seq in 1..=50 {
            assert_eq!(next(&mut on_b).await.seq, seq, "in the order published");
        }
        // The publisher's own subscribers had the events directly: nothing comes back to it.
        b.publish_event(&event(&session, 51));
        assert_eq!(next(&mut on_a).await.seq, 51);
        assert!(on_a.try_recv().is_err(), "a's own 1..=50 never came back");
        let other = SessionId::from("s2".to_owned());
        a.publish_event(&event(&other, 1));
        b.publish_event(&event(&session, 52));
        assert_eq!(next(&mut on_a).await.seq, 52, "only the subscribed session");
        assert!(b.stats().events_received >= 50);
    }
}

workmate_test_support::needs! { [redis]
    #[tokio::test]
    async fn a_per_minute_limit_is_counted_once_for_all_replicas() {
        let (a, b) = two_replicas().await;
        let now = 1_000_000;
        assert_eq!(a.try_acquire("tenant:t1", 3, now).await, None);
        assert_eq!(b.try_acquire("tenant:t1", 3, now + 1).await, None);
        assert_eq!(a.try_acquire("tenant:t1", 3, now + 2).await, None);
        let wait = b.try_acquire("tenant:t1", 3, now + 10).await;
        assert_eq!(
            wait,
            Some(Duration::from_millis(59_990)),
            "the fourth use in a minute waits for the first to leave the window"
        );
        assert_eq!(b.try_acquire("tenant:t2", 3, now).await, None, "per key");
        assert_eq!(
            a.try_acquire("tenant:t1", 3, now + 60_000).await,
            None,
            "a minute later"
        );
        // One replica alone would have let all four through.
        let alone = InProcess::default();
        for _ in 0..4 {
            assert_eq!(alone.try_acquire("tenant:t1", 4, now).await, None);
        }
    }
}

workmate_test_support::needs! { [redis]
    #[tokio::test]
    async fn a_delivery_remembered_on_one_replica_is_seen_on_the_other_until_it_expires() {
        let (a, b) = two_replicas().await;
        assert!(!b.seen("slack:T1:Ev1").await, "unknown before");
        a.remember("slack:T1:Ev1", Duration::from_millis(300)).await;
        assert!(b.seen("slack:T1:Ev1").await);
        assert!(!b.seen("slack:T1:Ev2").await);
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert!(!b.seen("slack:T1:Ev1").await, "forgotten after its TTL");
    }
}

workmate_test_support::needs! { [redis]
    #[tokio::test]
    async fn a_value_kept_on_one_replica_is_read_on_the_other_until_it_expires() {
        let (a, b) = two_replicas().await;
        assert_eq!(b.value("wecom:stream:s1").await, None, "unknown before");
        a.put_value("wecom:stream:s1", "first", Duration::from_millis(300))
            .await;
        a.put_value("wecom:stream:s1", "second", Duration::from_millis(300))
            .await;
        assert_eq!(b.value("wecom:stream:s1").await.as_deref(), Some("second"));
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert_eq!(b.value("wecom:stream:s1").await, None, "gone after its TTL");
    }
}

workmate_test_support::needs! { [redis]
    #[tokio::test]
    async fn a_signal_reaches_both_replicas_once() {
        let (a, b) = two_replicas().await;
        let mut on_a = a.signals();
        let mut on_b = b.signals();
        let released = Signal::ConnectionReleased {
            name: "slack:A1".into(),
            by: "a".into(),
        };
        a.signal(released.clone());
        assert_eq!(next(&mut on_b).await, released);
        assert_eq!(next(&mut on_a).await, released, "its own listeners too");
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(on_a.try_recv().is_err(), "once, not again through Redis");
    }
}

#[tokio::test]
async fn a_wrong_url_fails_at_connect_with_a_clear_error() {
    let refused = RedisCoordinator::connect(RedisSettings {
        url: "redis://127.0.0.1:1".into(),
        prefix: "wmtest".into(),
        replica: "a".into(),
    })
    .await
    .unwrap_err();
    assert!(refused.to_string().contains("Redis"), "{refused}");
}

/// A TCP proxy to Redis that the test can cut and restore, to play an outage: while off, it
/// drops every connection and refuses new ones.
struct Proxy {
    port: u16,
    on: Arc<tokio::sync::watch::Sender<bool>>,
}

impl Proxy {
    async fn to(target: &str) -> Self {
        let target = target
            .trim_start_matches("redis://")
            .trim_end_matches('/')
            .to_owned();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let (on, _) = tokio::sync::watch::channel(true);
        let on = Arc::new(on);
        let switch = Arc::clone(&on);
        tokio::spawn(async move {
            loop {
                let Ok((mut client, _)) = listener.accept().await else {
                    return;
                };
                if !*on.borrow() {
                    continue;
                }
                let target = target.clone();
                let mut off = on.subscribe();
                tokio::spawn(async move {
                    let Ok(mut server) = tokio::net::TcpStream::connect(&target).await else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                        _ = off.wait_for(|on| !*on) => {}
                    }
                });
            }
        });
        Self { port, on: switch }
    }

    fn set(&self, on: bool) {
        self.on.send_replace(on);
    }
}

workmate_test_support::needs! { [redis]
    #[tokio::test]
    async fn while_redis_is_away_each_replica_goes_on_alone_and_reconnects_after() {
        let url = Backend::Redis.url();
        let _ = tracing_subscriber::fmt()
            .with_env_filter("workmate_coordinator=debug")
            .with_test_writer()
            .try_init();
        let proxy = Proxy::to(&url).await;
        let prefix = format!("wmtest:{}", uuid_like());
        let settings = |replica: &str, url: String| RedisSettings {
            url,
            prefix: prefix.clone(),
            replica: replica.to_owned(),
        };
        let a = RedisCoordinator::connect(settings("a", format!("redis://127.0.0.1:{}", proxy.port)))
            .await
            .unwrap();
        let b = RedisCoordinator::connect(settings("b", url.clone()))
            .await
            .unwrap();
        let tenant = TenantId::from("t1");
        let session = SessionId::from("s1".to_owned());
        let mut on_a = a.subscribe_events(&tenant, &session).await.unwrap();
        b.publish_event(&event(&session, 1));
        assert_eq!(next(&mut on_a).await.seq, 1);

        proxy.set(false);
        tokio::time::sleep(Duration::from_millis(200)).await;
        // Limits are counted by a alone, unknown deliveries go to the store, nothing hangs.
        let started = std::time::Instant::now();
        assert_eq!(a.try_acquire("tenant:t1", 1, 5_000).await, None);
        assert!(!a.seen("slack:T1:Ev1").await);
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "each call gave up in time"
        );
        assert!(a.stats().fallbacks >= 2, "{:?}", a.stats());

        // Back: a subscribes again by itself and hears b once more.
        proxy.set(true);
        let deadline = std::time::Instant::now() + Duration::from_secs(15);
        let mut seq = 2;
        loop {
            b.publish_event(&event(&session, seq));
            if let Ok(Ok(got)) = tokio::time::timeout(Duration::from_millis(300), on_a.recv()).await {
                assert!(got.seq >= 2);
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "a never heard b again"
            );
            seq += 1;
        }
    }
}
