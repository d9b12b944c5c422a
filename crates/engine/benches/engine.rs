//! Engine overhead per turn with a model that answers instantly, throughput with many sessions
//! at once, and resident memory per live session. Run with `cargo bench -p workmate-engine`; docs/benchmarks.md explains the figures.
//!
//! Invariant: figures are printed, never asserted. The targets are printed next to them and a miss
//! does not fail the run; only a turn that did not do its scripted work (wrong number of deltas or
//! tool results, an error event) stops the bench, because its timing would then be meaningless.

// A bench is a reporting binary, not library code: it prints its table, and a broken setup (no
// database, a turn that failed) should stop it at once with the reason rather than be handled.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

#[path = "engine/long_history.rs"]
mod long_history;
#[path = "engine/memory.rs"]
mod memory;
#[path = "engine/throughput.rs"]
mod throughput;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::broadcast::{self, error::RecvError};
use workmate_engine::permissions::PermissionConfig;
use workmate_engine::{Accepted, EngineConfig, EngineParts, SessionHub};
use workmate_protocol::{
    Actor, Command, Event, EventKind, PermissionMode, SessionId, Surface, TenantId, ToolSpec,
    ToolStatus,
};
use workmate_providers::{ProviderRouter, ScriptedProvider};
use workmate_store::{ConnectOptions, NewSession, SessionKey, StepWrite, Store, SystemClock};
use workmate_tools::{Tool, ToolContext, ToolFuture, ToolMetadata, ToolRegistry};

/// User turns played in one session before the next session starts: the history a turn reads
/// and sends to the model grows with it, as in a real conversation.
const TURNS_PER_SESSION: usize = 10;
/// State-event writes timed for the baseline row.
const BASELINE_WRITES: usize = 2000;
/// The argument that makes this binary measure session memory in a fresh process.
const MEMORY_CHILD: &str = "--session-memory";
/// The scripted answer: 20 words, streamed as 20 deltas.
const ANSWER: &str = "one two three four five six seven eight nine ten \
                      eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty";

/// One measured workload: the tag in the user message selects its scripted conversation.
struct Scenario {
    label: &'static str,
    tag: &'static str,
    warmup: usize,
    turns: usize,
    /// Tool results per user turn (every turn ends in the 20-delta answer).
    tool_results: usize,
    /// The target to print next to the figure, in µs per turn on the SQLite file.
    target_us: Option<f64>,
}

const SCENARIOS: [Scenario; 3] = [
    Scenario {
        label: "(a) plain answer, 20 deltas",
        tag: "[plain]",
        warmup: 100,
        turns: 1000,
        tool_results: 0,
        target_us: Some(250.0),
    },
    Scenario {
        label: "(b) 8 parallel tools + answer",
        tag: "[batch]",
        warmup: 20,
        turns: 300,
        tool_results: 8,
        target_us: Some(1_200.0),
    },
    Scenario {
        label: "(c) 10 x 1 tool + answer",
        tag: "[chain]",
        warmup: 10,
        turns: 200,
        tool_results: 10,
        target_us: Some(3_500.0),
    },
];

#[derive(Clone, Copy, Debug, PartialEq)]
enum Backend {
    SqliteFile,
    Memory,
    /// Only when `WORKMATE_TEST_POSTGRES_URL` names a server (throughput row only).
    Postgres,
}

/// The server the Postgres rows run on.
const POSTGRES_VARIABLE: &str = "WORKMATE_TEST_POSTGRES_URL";

impl Backend {
    const ALL: [Self; 2] = [Self::SqliteFile, Self::Memory];

    fn name(self) -> &'static str {
        match self {
            Self::SqliteFile => "sqlite-file",
            Self::Memory => "memory",
            Self::Postgres => "postgres",
        }
    }

    fn parse(name: &str) -> Self {
        Self::ALL
            .into_iter()
            .find(|b| b.name() == name)
            .unwrap_or_else(|| panic!("unknown backend {name:?}"))
    }
}

/// A read-only tool that answers at once: low risk, so the default permission policy runs it unasked.
#[derive(Debug)]
struct EchoTool;

impl Tool for EchoTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "bench_echo".into(),
            description: "returns its arguments".into(),
            parameters: serde_json::json!({"type": "object"}),
        }
    }

    fn metadata(&self) -> Option<ToolMetadata> {
        Some(ToolMetadata::read("bench"))
    }

    fn call<'a>(&'a self, _ctx: &'a ToolContext, arguments: serde_json::Value) -> ToolFuture<'a> {
        Box::pin(async move { Ok(serde_json::json!({ "echo": arguments })) })
    }
}

/// The script: one conversation per scenario (plus a short one for the memory run), each long
/// enough for `TURNS_PER_SESSION` user turns.
fn script() -> String {
    let answer = serde_json::json!({ "text": ANSWER });
    let call = |n: usize| serde_json::json!({"name": "bench_echo", "arguments": {"n": n}});
    let repeat = |turn: Vec<serde_json::Value>| -> Vec<serde_json::Value> {
        turn.iter()
            .cycle()
            .take(turn.len() * TURNS_PER_SESSION)
            .cloned()
            .collect()
    };
    let batch = serde_json::json!({ "tool_calls": (0..8).map(call).collect::<Vec<_>>() });
    let mut chain: Vec<_> = (0..10)
        .map(|n| serde_json::json!({ "tool_calls": [call(n)] }))
        .collect();
    chain.push(answer.clone());
    let long: Vec<_> = std::iter::repeat_n(
        answer.clone(),
        long_history::HISTORY_TURNS + long_history::TIMED_TURNS,
    )
    .collect();
    let summary = serde_json::json!({"text": "Goal: count to twenty, again and again."});
    serde_json::json!({"conversations": [
        {"when": long_history::SUMMARY_WHEN, "turns": [summary]},
        {"when": long_history::LONG_TAG, "turns": long},
        {"when": "[plain]", "turns": repeat(vec![answer.clone()])},
        {"when": "[batch]", "turns": repeat(vec![batch, answer])},
        {"when": "[chain]", "turns": repeat(chain)},
        {"when": "[short]", "turns": [{"text": "Hello there."}]},
    ]})
    .to_string()
}

/// A hub over a fresh store with the scripted model and the echo tool.
struct Fixture {
    hub: SessionHub,
    store: Store,
    tenant: TenantId,
    dir: PathBuf,
    sessions: usize,
}

impl Fixture {
    async fn new(backend: Backend) -> Self {
        let dir = std::env::temp_dir().join(format!("workmate-bench-{}", uuid::Uuid::now_v7()));
        std::fs::create_dir_all(&dir).unwrap();
        let url = match backend {
            Backend::SqliteFile => format!("sqlite://{}", dir.join("engine.db").display()),
            // The in-memory store: one SQLite connection that lives as long as the store.
            Backend::Memory => "sqlite::memory:".to_owned(),
            Backend::Postgres => {
                let server = std::env::var(POSTGRES_VARIABLE).unwrap();
                workmate_store::test_support::fresh_database(&server)
                    .await
                    .unwrap()
            }
        };
        let store = Store::connect(&url, ConnectOptions::default())
            .await
            .unwrap_or_else(|e| panic!("cannot open {url}: {e}"));
        store.migrate().await.unwrap();
        let mut providers = ProviderRouter::new("scripted");
        providers.register(
            "scripted",
            Arc::new(ScriptedProvider::from_json(&script()).unwrap()),
        );
        let mut tools = ToolRegistry::new();
        tools.register(Arc::new(EchoTool));
        let tenant = TenantId::from("t_bench");
        store.tenants().ensure(&tenant, "Bench").await.unwrap();
        let hub = SessionHub::new(EngineParts {
            store: store.clone(),
            providers,
            tools,
            permissions: PermissionConfig::default(),
            config: EngineConfig {
                default_model: "scripted:bench".into(),
                workspaces_dir: dir.join("workspaces"),
                ..EngineConfig::default()
            },
            clock: Arc::new(SystemClock),
        });
        Self {
            hub,
            store,
            tenant,
            dir,
            sessions: 0,
        }
    }

    /// A new session (its live runtime is created with it).
    async fn create(&mut self) -> SessionId {
        self.sessions += 1;
        let new = NewSession {
            key: SessionKey {
                surface: Surface::Http,
                chat_id: format!("bench-{}", self.sessions),
                thread_id: String::new(),
            },
            owner: "u_bench".into(),
            title: None,
            persona: "cowork".into(),
            model: "scripted:bench".into(),
            mode: PermissionMode::Interactive,
            unattended: false,
        };
        self.hub
            .create_session(&self.tenant, &new)
            .await
            .unwrap()
            .id
    }

    /// Waits until every step the sessions queued is stored.
    async fn flush_all(&self, sessions: &[SessionId]) {
        for id in sessions {
            self.hub.flushed(&self.tenant, id).await.unwrap();
        }
    }

    /// A new session and a live subscription to it.
    async fn session(&mut self) -> (SessionId, broadcast::Receiver<Arc<Event>>) {
        let id = self.create().await;
        let events = self.hub.subscribe(&self.tenant, &id).await.unwrap();
        (id, events)
    }

    /// One user turn: submit, read events up to the terminal one, wait until the turn is over
    /// (its last steps may still be on their way to the store, as in production: nothing waits
    /// for them but the next read).
    async fn turn(
        &self,
        session: &SessionId,
        events: &mut broadcast::Receiver<Arc<Event>>,
        text: &str,
    ) -> Counts {
        let command = Command::UserMessage {
            author: Actor::named("u_bench", "Bench"),
            text: text.to_owned(),
            attachments: vec![],
        };
        let accepted = self.hub.submit(&self.tenant, session, command).await;
        assert!(
            matches!(accepted, Ok(Accepted::TurnStarted(_))),
            "{accepted:?}"
        );
        let mut counts = Counts::default();
        loop {
            let event = match events.recv().await {
                Ok(event) => event,
                // The turn outran this reader (events are published as their step is queued);
                // the tally is then checked against the store below.
                Err(RecvError::Lagged(n)) => {
                    counts.lagged += usize::try_from(n).unwrap_or(usize::MAX);
                    continue;
                }
                Err(RecvError::Closed) => panic!("the event stream closed"),
            };
            counts.state += usize::from(event.kind.is_state());
            match &event.kind {
                EventKind::AssistantDelta { .. } => counts.deltas += 1,
                EventKind::ToolFinished { status, .. } => {
                    assert_eq!(*status, ToolStatus::Ok, "a bench tool call failed");
                    counts.tools += 1;
                }
                EventKind::TurnEnd { .. } => {
                    self.hub.wait_turn(&self.tenant, session).await.unwrap();
                    break;
                }
                kind if kind.is_terminal() => panic!("the turn did not complete: {kind:?}"),
                _ => {}
            }
        }
        if counts.lagged > 0 {
            self.hub.wait_idle(&self.tenant, session).await.unwrap();
            self.recount_from_store(session, &mut counts).await;
        }
        counts
    }

    /// Counts the last turn's state events and tool results from the store, for a reader that
    /// lagged; deltas are not stored, so the missed ones are assumed streamed.
    async fn recount_from_store(&self, session: &SessionId, counts: &mut Counts) {
        let stored = self
            .store
            .events()
            .list_after(&self.tenant, session, 0, u32::MAX)
            .await
            .unwrap();
        let start = stored
            .iter()
            .rposition(|e| matches!(e.kind, EventKind::TurnStart { .. }))
            .expect("the turn's start is stored");
        let turn = &stored[start..];
        counts.state = turn.len();
        counts.tools = 0;
        for event in turn {
            if let EventKind::ToolFinished { status, .. } = &event.kind {
                assert_eq!(*status, ToolStatus::Ok, "a bench tool call failed");
                counts.tools += 1;
            }
        }
        assert!(
            matches!(
                turn.last().map(|e| &e.kind),
                Some(EventKind::TurnEnd { .. })
            ),
            "the turn did not complete"
        );
        counts.deltas = 20.min(counts.deltas + counts.lagged);
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// What one turn did, checked so a timing never describes a turn that went wrong.
#[derive(Debug, Default)]
struct Counts {
    deltas: usize,
    tools: usize,
    state: usize,
    /// Events the reader missed because the turn outran it.
    lagged: usize,
}

/// Timings of the measured turns of one scenario on one backend.
struct Measured {
    micros: Vec<f64>,
    state_events: usize,
}

async fn measure(fixture: &mut Fixture, scenario: &Scenario) -> Measured {
    let mut micros = Vec::with_capacity(scenario.turns);
    let mut state_events = 0;
    let total = scenario.warmup + scenario.turns;
    let mut current = None;
    for n in 0..total {
        if n % TURNS_PER_SESSION == 0 {
            current = Some(fixture.session().await);
        }
        let (session, events) = current.as_mut().unwrap();
        let text = format!("{} turn {n}", scenario.tag);
        let started = Instant::now();
        let counts = fixture.turn(session, events, &text).await;
        let elapsed = started.elapsed();
        assert_eq!(counts.deltas, 20, "{counts:?}");
        assert_eq!(counts.tools, scenario.tool_results, "{counts:?}");
        if n >= scenario.warmup {
            micros.push(elapsed.as_secs_f64() * 1e6);
            state_events = counts.state;
        }
    }
    Measured {
        micros,
        state_events,
    }
}

/// The baseline: one state event written the way the emitter writes it (one transaction).
async fn baseline(fixture: &mut Fixture) -> Measured {
    let session = fixture.create().await;
    fixture
        .hub
        .flushed(&fixture.tenant, &session)
        .await
        .unwrap();
    let record = fixture
        .store
        .sessions()
        .get(&fixture.tenant, &session)
        .await
        .unwrap()
        .unwrap();
    let mut counters = record.counters();
    // The hub took the session's lease when it created it (as the default replica, "local").
    let until = fixture.store.clock_ms() + 3_600_000;
    let lease = fixture
        .store
        .leases()
        .take(&fixture.tenant, &session, "local", until)
        .await
        .unwrap()
        .expect("the bench's own lease");
    let writer = fixture.store.writer();
    let mut micros = Vec::with_capacity(BASELINE_WRITES);
    for n in 0..BASELINE_WRITES + 200 {
        let started = Instant::now();
        let mut step = StepWrite::new(fixture.tenant.clone(), session.clone(), None);
        step.base = counters;
        step.lease = lease;
        step.events.push(Event {
            tenant_id: fixture.tenant.clone(),
            session_id: session.clone(),
            seq: counters.last_seq + 1,
            turn_id: None,
            at_ms: 0,
            kind: EventKind::IterationEnd { iteration: 0 },
        });
        counters = step.end();
        let (tx, rx) = tokio::sync::oneshot::channel();
        writer.submit(
            step,
            Box::new(move |outcome| {
                let _ = tx.send(outcome);
            }),
        );
        rx.await
            .unwrap()
            .unwrap_or_else(|e| panic!("write {n}: {e}"));
        if n >= 200 {
            micros.push(started.elapsed().as_secs_f64() * 1e6);
        }
    }
    Measured {
        micros,
        state_events: 1,
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Mean, p50 and p95 in µs.
fn summary(measured: &Measured) -> (f64, f64, f64) {
    let mut sorted = measured.micros.clone();
    sorted.sort_by(f64::total_cmp);
    let mean = sorted.iter().sum::<f64>() / sorted.len() as f64;
    (mean, percentile(&sorted, 50.0), percentile(&sorted, 95.0))
}

/// One table row; `baseline` is the mean µs of one state-event write on the same store.
fn row(label: &str, backend: Backend, measured: &Measured, baseline: f64, target_us: Option<f64>) {
    let (mean, p50, p95) = summary(measured);
    let target = match target_us {
        Some(t) if backend == Backend::SqliteFile => {
            let verdict = if mean <= t { "met" } else { "missed" };
            format!("< {t:.0} µs ({verdict}, x{:.1})", mean / t)
        }
        _ => "-".to_owned(),
    };
    println!(
        "{label:<31} {:<14} {mean:>8.1} µs (p50 {p50:>7.1}, p95 {p95:>7.1})  n={:<5} {:>3} {:>6.1}  {target}",
        backend.name(),
        measured.micros.len(),
        measured.state_events,
        mean / baseline,
    );
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == MEMORY_CHILD) {
        let backend = Backend::parse(args.get(at + 1).map_or("", String::as_str));
        runtime().block_on(memory::memory_child(backend));
        return;
    }
    let started = Instant::now();
    println!(
        "workmate-engine bench: zero-latency scripted model, {} worker threads, {TURNS_PER_SESSION} turns per session",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!(
        "{:<31} {:<14} {:>11} {:<26} {:<7} {:>3} {:>6}  target (on sqlite-file)",
        "workload (per turn)", "store", "mean", "", "samples", "st.ev", "x(0)"
    );
    let runtime = runtime();
    let mut baselines = Vec::new();
    for backend in Backend::ALL {
        let measured = runtime.block_on(async {
            let mut fixture = Fixture::new(backend).await;
            baseline(&mut fixture).await
        });
        let mean = summary(&measured).0;
        row(
            "(0) 1 step, 1 event, stored",
            backend,
            &measured,
            mean,
            None,
        );
        baselines.push(mean);
    }
    let mut plain = None;
    for scenario in &SCENARIOS {
        for (backend, &base) in Backend::ALL.iter().zip(&baselines) {
            let measured = runtime.block_on(async {
                let mut fixture = Fixture::new(*backend).await;
                measure(&mut fixture, scenario).await
            });
            if scenario.tag == "[plain]" && *backend == Backend::SqliteFile {
                plain = Some(summary(&measured).0);
            }
            row(
                scenario.label,
                *backend,
                &measured,
                base,
                scenario.target_us,
            );
        }
    }
    // Row (f): compaction's cost, against twice the plain turn (a) on the SQLite file.
    for (label, compacted) in [
        ("(f) (a) on 200 msgs", false),
        ("(f) (a) on 200 msgs, compacted", true),
    ] {
        for (backend, &base) in Backend::ALL.iter().zip(&baselines) {
            let measured = runtime.block_on(async {
                let mut fixture = Fixture::new(*backend).await;
                long_history::measure(&mut fixture, compacted).await
            });
            let target = plain.filter(|_| compacted).map(|mean| 2.0 * mean);
            row(label, *backend, &measured, base, target);
        }
    }
    for backend in Backend::ALL {
        runtime.block_on(throughput::row(backend));
    }
    if std::env::var(POSTGRES_VARIABLE).is_ok() {
        runtime.block_on(throughput::row(Backend::Postgres));
    } else {
        println!("(e) on postgres: skipped, {POSTGRES_VARIABLE} is not set");
    }
    drop(runtime);
    for backend in Backend::ALL {
        memory::memory_row(backend);
    }
    println!(
        "size_of::<Event>() = {} B; live subscribers share each event (Arc), 64 buffered per session",
        std::mem::size_of::<Event>()
    );
    println!("done in {:.1} s", started.elapsed().as_secs_f64());
}
