//! Long-connection takeover between replicas, shown with Slack Socket Mode against a fake Slack:
//! two `workmate serve` processes on one Postgres database and one Redis, with a connection lease
//! of [`TERM`]. Exactly one of them holds the Socket Mode connection at any time. When the holder
//! is killed, the other opens the connection once the dead one's lease lapses, within one lease
//! term (plus the other's ask interval); when the holder is stopped with SIGTERM, it releases the
//! lease and says so through Redis, and the other opens the connection at once.
//!
//! The fake tells the replicas apart by their `api_base`: each replica has a path of its own on
//! the fake's Web API, and `apps.connections.open` there hands out the URL of a WebSocket listener
//! of that replica's own. The fake records every connection's opening and closing, with the time.
//! A test's own Redis subscriber records what the replicas signal to each other.

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::crash::prepare;
use crate::support::{Server, fresh_database, test_redis};

/// `[coordinator] connection_lease_ms` of both replicas.
const TERM: Duration = Duration::from_millis(3000);
/// How often a replica asks for a lease it does not hold (and renews one it holds).
const ASK_EVERY: Duration = Duration::from_millis(1000);
const A: &str = "replica-a";
const B: &str = "replica-b";

/// One opening or closing of a WebSocket, as the fake saw it.
#[derive(Clone, Debug)]
struct SocketEvent {
    at: Instant,
    /// The replica whose `apps.connections.open` handed out the URL.
    replica: String,
    /// The connection's number, from 1, in the order the fake accepted them.
    number: usize,
    opened: bool,
}

/// A fake Slack: the Web API (wiremock) and the Socket Mode WebSocket server, on a runtime of
/// their own while the test thread runs the processes.
struct FakeSlack {
    runtime: tokio::runtime::Runtime,
    api: MockServer,
    events: Arc<Mutex<Vec<SocketEvent>>>,
}

impl FakeSlack {
    fn start() -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let events = Arc::new(Mutex::new(Vec::new()));
        let api = runtime.block_on(async {
            let api = MockServer::start().await;
            for replica in [A, B] {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                let port = listener.local_addr().unwrap().port();
                let opened =
                    json!({"ok": true, "url": format!("ws://127.0.0.1:{port}/link/{replica}")});
                Mock::given(method("POST"))
                    .and(path(format!("/{replica}/apps.connections.open")))
                    .respond_with(ResponseTemplate::new(200).set_body_json(opened))
                    .mount(&api)
                    .await;
                let bot = json!({"ok": true, "team_id": "T1", "user_id": "UBOT", "bot_id": "BBOT"});
                Mock::given(method("POST"))
                    .and(path(format!("/{replica}/auth.test")))
                    .respond_with(ResponseTemplate::new(200).set_body_json(bot))
                    .mount(&api)
                    .await;
                let log = Arc::clone(&events);
                tokio::spawn(async move {
                    while let Ok((stream, _)) = listener.accept().await {
                        tokio::spawn(hold_socket(stream, replica, Arc::clone(&log)));
                    }
                });
            }
            api
        });
        Self {
            runtime,
            api,
            events,
        }
    }

    /// The Web API base URL `replica` calls.
    fn api_base(&self, replica: &str) -> String {
        format!("{}/{replica}", self.api.uri())
    }

    fn events(&self) -> Vec<SocketEvent> {
        self.events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The sockets open now: (number, replica).
    fn open(&self) -> Vec<(usize, String)> {
        let events = self.events();
        events
            .iter()
            .filter(|e| e.opened)
            .filter(|e| !events.iter().any(|c| !c.opened && c.number == e.number))
            .map(|e| (e.number, e.replica.clone()))
            .collect()
    }

    /// How many times `replica` called `apps.connections.open`.
    fn dials(&self, replica: &str) -> usize {
        let wanted = format!("/{replica}/apps.connections.open");
        self.runtime
            .block_on(self.api.received_requests())
            .unwrap_or_default()
            .iter()
            .filter(|r| r.url.path() == wanted)
            .count()
    }

    /// The first socket `replica` opened, waiting for it at most `patience`.
    fn wait_for_socket(&self, replica: &str, patience: Duration) -> Option<SocketEvent> {
        let deadline = Instant::now() + patience;
        loop {
            let found = self
                .events()
                .into_iter()
                .find(|e| e.opened && e.replica == replica);
            if found.is_some() || Instant::now() >= deadline {
                return found;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// When socket `number` closed, waiting for it at most `patience`.
    fn wait_for_close(&self, number: usize, patience: Duration) -> Option<Instant> {
        let deadline = Instant::now() + patience;
        loop {
            let found = self
                .events()
                .into_iter()
                .find(|e| !e.opened && e.number == number)
                .map(|e| e.at);
            if found.is_some() || Instant::now() >= deadline {
                return found;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Watches for `span` that socket `number` of `replica` is the only one open, and no other
    /// was opened meanwhile.
    fn assert_only_open(&self, number: usize, replica: &str, span: Duration, logs: &str) {
        let until = Instant::now() + span;
        while Instant::now() < until {
            let open = self.open();
            assert_eq!(
                open,
                [(number, replica.to_owned())],
                "exactly one socket, {replica}'s, is open; the fake saw {:#?}\n{logs}",
                self.events()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The most sockets open at once over the whole run.
    fn most_open_at_once(&self) -> usize {
        let mut open = 0_usize;
        let mut most = 0;
        for event in self.events() {
            if event.opened {
                open += 1;
                most = most.max(open);
            } else {
                open = open.saturating_sub(1);
            }
        }
        most
    }
}

/// What the replicas publish on the coordinator's signals channel, as (when, message): the
/// test's own subscriber, in `fake`'s runtime, subscribed before this returns.
fn watch_signals(fake: &FakeSlack, redis: &str, prefix: &str) -> Arc<Mutex<Vec<(Instant, Value)>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let client = redis::Client::open(redis).unwrap();
    let channel = format!("{prefix}:signals");
    let mut pubsub = fake
        .runtime
        .block_on(async {
            let mut pubsub = client.get_async_pubsub().await?;
            pubsub.subscribe(&channel).await?;
            redis::RedisResult::Ok(pubsub)
        })
        .unwrap();
    let log = Arc::clone(&seen);
    fake.runtime.spawn(async move {
        let mut messages = pubsub.on_message();
        while let Some(message) = messages.next().await {
            let payload: String = message.get_payload().unwrap_or_default();
            let value = serde_json::from_str(&payload).unwrap_or(Value::String(payload));
            log.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((Instant::now(), value));
        }
    });
    seen
}

/// When `replica` published the release of the Slack connection's lease, if the watcher saw it
/// within `patience`.
fn released_by(
    signals: &Mutex<Vec<(Instant, Value)>>,
    replica: &str,
    patience: Duration,
) -> Option<Instant> {
    let deadline = Instant::now() + patience;
    loop {
        let found = signals
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .find(|(_, m)| {
                m["origin"] == replica
                    && m["body"]["type"] == "connection_released"
                    && m["body"]["name"] == "slack"
            })
            .map(|(at, _)| *at);
        if found.is_some() || Instant::now() >= deadline {
            return found;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Accepts one Socket Mode connection of `replica`, says hello and reads it until it ends,
/// recording both.
async fn hold_socket(
    stream: tokio::net::TcpStream,
    replica: &'static str,
    log: Arc<Mutex<Vec<SocketEvent>>>,
) {
    let Ok(mut ws) = tokio_tungstenite::accept_async(stream).await else {
        return;
    };
    let record = |number: Option<usize>, opened: bool| {
        let mut events = log.lock().unwrap_or_else(PoisonError::into_inner);
        let number = number.unwrap_or_else(|| events.iter().filter(|e| e.opened).count() + 1);
        events.push(SocketEvent {
            at: Instant::now(),
            replica: replica.to_owned(),
            number,
            opened,
        });
        number
    };
    let number = record(None, true);
    if ws
        .send(Message::text(json!({"type": "hello"}).to_string()))
        .await
        .is_ok()
    {
        while let Some(Ok(frame)) = ws.next().await {
            if matches!(frame, Message::Close(_)) {
                break;
            }
        }
    }
    record(Some(number), false);
}

/// A replica named `replica` on the shared database and Redis, in Slack Socket Mode against
/// `fake`.
fn start_replica(
    dir: &Path,
    replica: &str,
    database: &str,
    (redis, prefix): (&str, &str),
    fake: &FakeSlack,
) -> Server {
    let mut env = prepare(dir, 0);
    let term = TERM.as_millis().to_string();
    for (key, value) in [
        ("WORKMATE__DATABASE__URL", database),
        ("WORKMATE__COORDINATOR__REDIS_URL", redis),
        ("WORKMATE__COORDINATOR__KEY_PREFIX", prefix),
        ("WORKMATE__COORDINATOR__CONNECTION_LEASE_MS", &term),
        ("WORKMATE__SERVER__REPLICA_ID", replica),
        ("WORKMATE__SERVER__SHUTDOWN_GRACE_MS", "5000"),
        ("WORKMATE__PLATFORMS__SLACK__MODE", "socket"),
        (
            "WORKMATE__PLATFORMS__SLACK__APP_TOKEN",
            "xapp-takeover-test",
        ),
        (
            "WORKMATE__PLATFORMS__SLACK__BOT_TOKEN",
            "xoxb-takeover-test",
        ),
        (
            "WORKMATE__PLATFORMS__SLACK__API_BASE",
            &fake.api_base(replica),
        ),
    ] {
        env.push((key.into(), value.to_owned()));
    }
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    Server::start_with(dir, &[], &env)
}

/// A random duration shorter than `span`.
fn somewhere_within(span: Duration) -> Duration {
    use std::hash::BuildHasher;
    let random = std::collections::hash_map::RandomState::new().hash_one(Instant::now());
    span.mul_f64((random % 1000) as f64 / 1000.0)
}

/// Both replicas' logs, for a failure's message.
fn logs(a: Option<&Server>, b: &Server) -> String {
    let a = a.map_or_else(|| "(gone)".to_owned(), Server::log_text);
    format!("--- {A}:\n{a}\n--- {B}:\n{}", b.log_text())
}

/// Two replicas, `a` holding the connection: the fake, the processes and their folders.
struct Pair {
    fake: FakeSlack,
    a: Server,
    b: Server,
    /// The number of `a`'s socket.
    held: usize,
    /// What the replicas published on the coordinator's signals channel.
    signals: Arc<Mutex<Vec<(Instant, Value)>>>,
    _dirs: [tempfile::TempDir; 2],
}

/// Starts `replica-a`, waits until it holds the connection, then starts `replica-b` (on the test
/// Postgres and Redis).
fn a_holding_b_waiting() -> Pair {
    let redis = test_redis("takeover");
    let database = fresh_database("WORKMATE_TEST_POSTGRES_URL");
    let redis = (redis.0.as_str(), redis.1.as_str());
    let fake = FakeSlack::start();
    let signals = watch_signals(&fake, redis.0, redis.1);
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    // a alone first, so that a, not b, holds the connection.
    let a = start_replica(dirs[0].path(), A, &database, redis, &fake);
    let Some(opened) = fake.wait_for_socket(A, Duration::from_secs(20)) else {
        panic!(
            "{A} never opened the Socket Mode connection:\n{}",
            a.log_text()
        );
    };
    let b = start_replica(dirs[1].path(), B, &database, redis, &fake);
    Pair {
        fake,
        a,
        b,
        held: opened.number,
        signals,
        _dirs: dirs,
    }
}

workmate_test_support::needs! { [postgres, redis]
    #[test]
    #[allow(
        clippy::print_stderr,
        reason = "the test output documents how long the takeover took"
    )]
    fn a_socket_mode_connection_is_back_on_another_replica_within_one_lease_after_a_kill() {
        let Pair {
            fake,
            a,
            b,
            held,
            signals: _,
            _dirs,
        } = a_holding_b_waiting();
        // While both run, a renews its lease and b, asking every third of a term, never gets it:
        // one socket, a's, for three terms, and b never even dials.
        fake.assert_only_open(held, A, 3 * TERM, &logs(Some(&a), &b));
        assert_eq!(
            fake.dials(B),
            0,
            "{B} dialled Slack while {A} held the lease:\n{}",
            logs(Some(&a), &b)
        );

        // b's asks keep the beat they had at its start, and the watch above lasted whole terms: so
        // the kill would always fall at the same point of b's cycle. A random pause spreads it over
        // the cycle, so runs see both the best and the worst case.
        std::thread::sleep(somewhere_within(ASK_EVERY));
        let before = logs(Some(&a), &b);
        let killed = Instant::now();
        a.crash();
        let closed = fake
            .wait_for_close(held, Duration::from_secs(5))
            .unwrap_or_else(|| panic!("{A}'s socket stayed open after SIGKILL"));
        let Some(taken) = fake.wait_for_socket(B, Duration::from_secs(30)) else {
            panic!(
                "{B} never opened the connection after {A} was killed:\n{before}\n{}",
                logs(None, &b)
            );
        };
        let takeover = taken.at.saturating_duration_since(killed);
        eprintln!(
            "after the kill: {A}'s socket closed in {:.3} s; {B} opened the connection {:.3} s after \
             the kill (lease term {:.1} s)",
            closed.saturating_duration_since(killed).as_secs_f64(),
            takeover.as_secs_f64(),
            TERM.as_secs_f64()
        );
        // a's lease lapses at most one term after the kill (a took or renewed it no later than the
        // kill). b, told the lease is a's, asks again just after it would lapse; then it dials the
        // fake (one local HTTP call and a WebSocket handshake, a few ms), which with process
        // scheduling on a busy machine gets half a second.
        let allowance = Duration::from_millis(500);
        assert!(
            takeover <= TERM + allowance,
            "the connection was back {takeover:?} after the kill, more than one lease term \
             ({TERM:?}) plus {allowance:?}:\n{before}\n{}",
            logs(None, &b)
        );
        // And not before a's lease could have lapsed: a renewed it at most a third of a term (and
        // one renewal's round trip) before the kill, so it lasted at least two thirds of a term
        // past it; b taking it within half a term would mean it took a live lease.
        assert!(
            takeover >= TERM / 2,
            "{B} took {A}'s lease {takeover:?} after the kill, before it could have lapsed:\n{}",
            logs(None, &b)
        );
        // b keeps the connection, and it stays the only one.
        fake.assert_only_open(taken.number, B, TERM, &logs(None, &b));
        assert_eq!(fake.most_open_at_once(), 1, "{:#?}", fake.events());
    }
}

workmate_test_support::needs! { [postgres, redis]
    #[test]
    #[allow(
        clippy::print_stderr,
        reason = "the test output documents how long the hand-over took"
    )]
    fn a_socket_mode_connection_moves_to_another_replica_at_once_when_its_holder_drains() {
        let Pair {
            fake,
            a,
            b,
            held,
            signals,
            _dirs,
        } = a_holding_b_waiting();
        // b is up, asking for the lease and listening for its release.
        fake.assert_only_open(held, A, TERM, &logs(Some(&a), &b));
        assert_eq!(fake.dials(B), 0, "{}", logs(Some(&a), &b));

        let before = logs(Some(&a), &b);
        let asked = Instant::now();
        let status = a.terminate(Duration::from_secs(15));
        let exited = asked.elapsed();
        assert_eq!(status.code(), Some(0), "{A} drained cleanly:\n{before}");
        let closed = fake
            .wait_for_close(held, Duration::from_secs(5))
            .unwrap_or_else(|| panic!("{A}'s socket stayed open after it exited:\n{before}"));
        let Some(taken) = fake.wait_for_socket(B, Duration::from_secs(30)) else {
            panic!(
                "{B} never opened the connection after {A} drained:\n{before}\n{}",
                logs(None, &b)
            );
        };
        let takeover = taken.at.saturating_duration_since(asked);
        let gap = taken.at.saturating_duration_since(closed);
        // The release goes out on Redis within moments of the close, if at all.
        let released = released_by(&signals, A, Duration::from_secs(2));
        let published = released.map_or_else(
            || "its release never showed on Redis".to_owned(),
            |at| {
                format!(
                    "its release showed on Redis {:.3} s after the signal",
                    at.saturating_duration_since(asked).as_secs_f64()
                )
            },
        );
        eprintln!(
            "after SIGTERM: {A} closed its socket in {:.3} s, {published} and exited in {:.3} s; \
             {B} opened the connection {:.3} s after the signal, {:.3} s after {A}'s socket closed \
             (lease term {:.1} s)",
            closed.saturating_duration_since(asked).as_secs_f64(),
            exited.as_secs_f64(),
            takeover.as_secs_f64(),
            gap.as_secs_f64(),
            TERM.as_secs_f64()
        );
        assert!(
            takeover < TERM,
            "the connection moved {takeover:?} after SIGTERM, not within one lease term ({TERM:?}):\n\
             {before}\n{}",
            logs(None, &b)
        );
        assert!(
            released.is_some(),
            "{A} released the lease but never said so on Redis ({B} took it {gap:?} after the \
             close, at its own next ask); what the signals channel carried: {:#?}\n{before}\n{}",
            signals.lock().unwrap_or_else(PoisonError::into_inner),
            logs(None, &b)
        );
        // a releases the lease right after closing its socket and publishes the release; b takes
        // it on that news. Without it b would find the lease free at its next ask, up to a third
        // of a term later (later than this half the time).
        assert!(
            gap < ASK_EVERY / 2,
            "{B} opened the connection {gap:?} after {A}'s socket closed: it waited for its next \
             ask rather than taking the released lease at once:\n{before}\n{}",
            logs(None, &b)
        );
        fake.assert_only_open(taken.number, B, TERM, &logs(None, &b));
        assert_eq!(fake.most_open_at_once(), 1, "{:#?}", fake.events());
    }
}
