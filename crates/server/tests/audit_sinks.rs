//! The audit trail streamed to real Redis and NATS servers through the outbox: records arrive in
//! chain order; with the sink cut off (a proxy in front of it, stopped), records wait in the
//! database, and all of them arrive, in order, once it is back; a redelivery adds nothing.

use std::net::SocketAddr;
use std::sync::Arc;

use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;
use workmate_protocol::TenantId;
use workmate_server::audit::{NatsSink, RedisSink, Shipper, Sink};
use workmate_server::config::{NatsSinkConfig, RedisSinkConfig};
use workmate_store::{ConnectOptions, NewAuditRecord, Store};

/// A TCP proxy the test can cut: stopping it closes its port and every connection through it.
struct Proxy {
    addr: SocketAddr,
    target: SocketAddr,
    stop: CancellationToken,
}

impl Proxy {
    async fn start(target: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = CancellationToken::new();
        serve(listener, target, stop.clone());
        Self { addr, target, stop }
    }

    fn cut(&mut self) {
        self.stop.cancel();
    }

    async fn restore(&mut self) {
        self.stop = CancellationToken::new();
        let listener = TcpListener::bind(self.addr).await.unwrap();
        serve(listener, self.target, self.stop.clone());
    }
}

fn serve(listener: TcpListener, target: SocketAddr, stop: CancellationToken) {
    tokio::spawn(async move {
        loop {
            let accepted = tokio::select! {
                () = stop.cancelled() => return,
                accepted = listener.accept() => accepted,
            };
            let Ok((mut inbound, _)) = accepted else {
                return;
            };
            let stop = stop.clone();
            tokio::spawn(async move {
                let Ok(mut outbound) = TcpStream::connect(target).await else {
                    return;
                };
                tokio::select! {
                    () = stop.cancelled() => {}
                    _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                }
            });
        }
    });
}

fn target(url: &str) -> SocketAddr {
    let parsed = url::Url::parse(url).unwrap();
    let host = parsed.host_str().unwrap();
    let port = parsed.port().unwrap();
    format!("{host}:{port}").parse().unwrap()
}

async fn store() -> (Store, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}/audit.db", dir.path().display());
    let store = Store::connect(&url, ConnectOptions::default())
        .await
        .unwrap();
    store.migrate().await.unwrap();
    (store, dir)
}

/// Appends records numbered `from..to` for `tenant` and seals them.
async fn record(store: &Store, tenant: &TenantId, from: u32, to: u32) {
    for n in from..to {
        let record = NewAuditRecord {
            actor: Some("ana".into()),
            stage: "tool_finished".into(),
            detail: json!({"n": n}),
            ..NewAuditRecord::default()
        };
        store.audit().append(tenant, &record).await.unwrap();
    }
    store.audit().seal(100).await.unwrap();
}

/// The test's server URL (the test is declared with `needs!`).
fn server(variable: &str) -> String {
    workmate_test_support::Backend::from_variable(variable).url()
}

/// The outbox story against `sink` behind `proxy`; `stored` reads what the sink holds for
/// `tenant`, as the records' `detail.n` in the order the sink keeps them.
async fn outbox_story<F, Fut>(
    store: &Store,
    sink: Arc<dyn Sink>,
    proxy: &mut Proxy,
    tenant: &TenantId,
    stored: F,
) where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Vec<u64>>,
{
    let shipper = Shipper::new(store.clone(), Arc::clone(&sink));
    record(store, tenant, 0, 3).await;
    assert_eq!(shipper.ship_once().await.unwrap(), 3);
    assert_eq!(stored().await, [0, 1, 2], "in chain order");

    // Cut off: the records wait in the outbox, the sink's place stays.
    proxy.cut();
    record(store, tenant, 3, 6).await;
    assert!(shipper.ship_once().await.is_err());
    let backlog = store.audit().sink_backlog(sink.name()).await.unwrap();
    assert_eq!(backlog.len(), 1);
    assert_eq!((backlog[0].delivered, backlog[0].head), (3, 6));

    // Back: everything held arrives, in order, once.
    proxy.restore().await;
    let mut shipped = 0;
    for _ in 0..20 {
        match shipper.ship_once().await {
            Ok(n) => {
                shipped += n;
                break;
            }
            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(200)).await,
        }
    }
    assert_eq!(shipped, 3);
    assert_eq!(stored().await, [0, 1, 2, 3, 4, 5]);
    assert!(
        store
            .audit()
            .sink_backlog(sink.name())
            .await
            .unwrap()
            .is_empty()
    );

    // A redelivery (a process that died before saving its place) adds nothing.
    let all = store
        .audit()
        .sealed_after(tenant, 0, 0, i64::MAX, 100)
        .await
        .unwrap();
    sink.deliver(tenant, &all).await.unwrap();
    assert_eq!(stored().await, [0, 1, 2, 3, 4, 5]);
}

fn n_of(line: &str) -> u64 {
    let record: Value = serde_json::from_str(line).unwrap();
    record["detail"]["n"].as_u64().unwrap()
}

workmate_test_support::needs! { [redis]
    #[tokio::test]
    async fn redis_streams_get_every_record_in_order_across_an_outage() {
        let url = server("WORKMATE_TEST_REDIS_URL");
        let (store, _dir) = store().await;
        let mut proxy = Proxy::start(target(&url)).await;
        let prefix = format!("workmate-test:{}", uuid::Uuid::new_v4().simple());
        let mut config = RedisSinkConfig::new(&format!("redis://{}", proxy.addr));
        config.stream_prefix = prefix.clone();
        let sink: Arc<dyn Sink> = Arc::new(RedisSink::new(&config).unwrap());
        let tenant = TenantId::from("acme");
        let key = format!("{prefix}:acme");
        let direct = redis::Client::open(url.as_str()).unwrap();
        let stored = || {
            let (direct, key) = (direct.clone(), key.clone());
            async move {
                let mut conn = direct.get_multiplexed_async_connection().await.unwrap();
                let entries: Vec<(String, Vec<(String, String)>)> = redis::cmd("XRANGE")
                    .arg(&key)
                    .arg("-")
                    .arg("+")
                    .query_async(&mut conn)
                    .await
                    .unwrap();
                entries
                    .iter()
                    .enumerate()
                    .map(|(i, (id, fields))| {
                        assert_eq!(id, &format!("{}-0", i + 1), "the entry id is the place");
                        n_of(&fields[0].1)
                    })
                    .collect()
            }
        };
        outbox_story(&store, sink, &mut proxy, &tenant, stored).await;
        let mut conn = direct.get_multiplexed_async_connection().await.unwrap();
        let _: i64 = redis::cmd("DEL")
            .arg(&key)
            .query_async(&mut conn)
            .await
            .unwrap();
    }
}

workmate_test_support::needs! { [nats]
    #[tokio::test]
    async fn nats_jetstream_gets_every_record_in_order_across_an_outage() {
        let url = server("WORKMATE_TEST_NATS_URL");
        let (store, _dir) = store().await;
        let mut proxy = Proxy::start(target(&url)).await;
        let id = uuid::Uuid::new_v4().simple().to_string();
        let mut config = NatsSinkConfig::new(&format!("nats://{}", proxy.addr));
        config.subject_prefix = format!("wmtest.{id}");
        config.stream = format!("WMTEST_{id}");
        let sink: Arc<dyn Sink> = Arc::new(NatsSink::new(&config));
        let tenant = TenantId::from("acme");
        let client = async_nats::connect(url.as_str()).await.unwrap();
        let js = async_nats::jetstream::new(client);
        let stream_name = config.stream.clone();
        let stored = || {
            let (js, stream_name) = (js.clone(), stream_name.clone());
            async move {
                let Ok(mut stream) = js.get_stream(&stream_name).await else {
                    return Vec::new();
                };
                let count = stream.info().await.unwrap().state.messages;
                let mut out = Vec::new();
                for seq in 1..=count {
                    let message = stream.get_raw_message(seq).await.unwrap();
                    let id = message
                        .headers
                        .get("Nats-Msg-Id")
                        .map(|v| v.as_str().to_owned());
                    assert_eq!(id.as_deref(), Some(format!("acme:{seq}").as_str()));
                    out.push(n_of(std::str::from_utf8(&message.payload).unwrap()));
                }
                out
            }
        };
        outbox_story(&store, sink, &mut proxy, &tenant, stored).await;
        js.delete_stream(&stream_name).await.unwrap();
    }
}
