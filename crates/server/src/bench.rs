//! `workmate bench webhooks`: every platform's inbound path in process (verify, decrypt, decode,
//! map; one row per platform), then whether every signed Slack event is answered 200 and gets
//! its turn card, how fast end to end, and how fast the Events API route acknowledges, beside an
//! empty axum handler measured in the same run.
//!
//! Invariant: nothing here fails on a target, and no shortfall is hidden: the figures and the
//! targets are printed side by side, and events not answered 200 or left without a card are
//! counted and said. The load comes from a second process (`workmate bench-client`) over
//! loopback, so the server's CPU figures (from `/proc/self/stat`) contain no client work. The
//! route only stores each delivery in the intake table; the turns run in the background while
//! the client is still posting, so they are part of the server CPU of the run, and the bench
//! waits (bounded) for every acknowledged event's turn card before it reports.

mod client;
mod fake_slack;
mod inbound;
mod report;
mod soak;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::routing::post;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use workmate_chat::{Chat, ChatConfig};
use workmate_engine::permissions::PermissionConfig;
use workmate_engine::{EngineConfig, EngineParts, SessionHub};
use workmate_providers::{ProviderRouter, ScriptedProvider};
use workmate_store::{ConnectOptions, Store, SystemClock};
use workmate_tools::{BuiltinOptions, builtin_registry};

pub use client::{ClientArgs, run as client};
pub use soak::{SoakArgs, soak};

use crate::config::SlackConfig;
use crate::error::StartupError;
use crate::http::api::Auth;
use crate::http::{AppState, router};
use crate::metrics::Metrics;
use crate::platforms::slack::SlackSurface;
use crate::platforms::{Mounted, Platforms};

const SECRET: &str = "bench-signing-secret";
const SCRIPT: &str = r#"{"conversations": [{"when": "*", "turns": [{"text": "Done."}]}]}"#;
/// The most events one run may post, and the longest a client run may take.
const MAX_REQUESTS: usize = 20_000;
const CLIENT_TIMEOUT: Duration = Duration::from_secs(120);
/// How long the bench waits, after the client is done, for the turn cards still missing.
const CARD_TIMEOUT: Duration = Duration::from_secs(120);
/// Clock ticks per second of `/proc/self/stat` (`CLK_TCK`, 100 on Linux).
const TICKS_PER_SECOND: u64 = 100;

/// `workmate bench webhooks` flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::Args)]
pub struct WebhooksArgs {
    /// Signed events to post (at most 20,000).
    #[arg(long, default_value_t = 2_000)]
    pub requests: usize,
    /// Connections posting at once.
    #[arg(long, default_value_t = 16)]
    pub concurrency: usize,
}

/// One client run's figures, parsed from the client's output line.
#[derive(Debug, Default)]
struct Run {
    acked: usize,
    rejected: usize,
    io_errors: usize,
    elapsed: Duration,
    p50: Duration,
    p99: Duration,
    /// Server CPU during the run, if `/proc` is readable.
    cpu: Option<Duration>,
    /// The first answer other than 200, as the client saw it.
    first_rejection: Option<String>,
}

impl Run {
    fn per_second(&self) -> f64 {
        self.acked as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// Runs the benchmark and returns its report.
pub fn webhooks(args: &WebhooksArgs) -> Result<String, StartupError> {
    if args.requests == 0 || args.requests > MAX_REQUESTS {
        return Err(StartupError::Usage(format!(
            "--requests must be between 1 and {MAX_REQUESTS}"
        )));
    }
    if args.concurrency == 0 || args.concurrency > 256 {
        return Err(StartupError::Usage(
            "--concurrency must be between 1 and 256".into(),
        ));
    }
    // In process, while the machine is still idle.
    let inbound = inbound::measure()?;
    let outcome = in_a_runtime(|dir| measure(args, dir))?;
    Ok(format!("{}{}", report::inbound(&inbound), outcome))
}

/// Runs `bench` on a fresh multi-threaded runtime, with a temporary folder for its database.
fn in_a_runtime<F>(bench: impl FnOnce(PathBuf) -> F) -> Result<String, StartupError>
where
    F: std::future::Future<Output = Result<String, StartupError>>,
{
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(StartupError::Runtime)?;
    let dir = TempDir::new()?;
    let outcome = runtime.block_on(bench(dir.0.clone()));
    runtime.shutdown_timeout(Duration::from_secs(2));
    outcome
}

async fn measure(args: &WebhooksArgs, dir: PathBuf) -> Result<String, StartupError> {
    let token = CancellationToken::new();
    let cards = Arc::new(fake_slack::Cards::default());
    let fake = serve(fake_slack::router(Arc::clone(&cards)), token.clone()).await?;
    let baseline_router = Router::new().route(
        "/v1/platforms/slack/events",
        post(|| async { StatusCode::OK }),
    );
    let baseline_addr = serve(baseline_router, token.clone()).await?;

    let first_request = Arc::new(OnceLock::<Instant>::new());
    let app = Service::start(
        &dir,
        fake,
        EngineConfig::default(),
        ChatConfig::default(),
        Arc::clone(&first_request),
        token.clone(),
    )
    .await?;

    // The baseline runs first, while the server is idle; the events run leaves turns behind.
    let baseline = timed_client(baseline_addr, args).await;
    let service = match baseline {
        Ok(_) => timed_client(app.addr, args).await,
        Err(_) => Ok(Run::default()),
    };
    let end_of_run = cpu_time();
    let after = match &service {
        Ok(run) => {
            let client_end = Instant::now();
            let seen = wait_for_cards(&cards, run.acked).await;
            Some(After {
                end_to_end: seen
                    .last_card
                    .zip(first_request.get().copied())
                    .map(|(last, first)| last.saturating_duration_since(first)),
                last_card_after_client: seen
                    .last_card
                    .map(|last| last.saturating_duration_since(client_end)),
                waited: client_end.elapsed(),
                cpu: cpu_time().zip(end_of_run).map(|(e, s)| e.saturating_sub(s)),
                unfinished: app.store.intake().unfinished().await.ok(),
                seen,
            })
        }
        Err(_) => None,
    };
    token.cancel();
    app.stop().await;
    let (baseline, service) = (baseline?, service?);
    Ok(report::report(args, &baseline, &service, after.as_ref()))
}

/// The service under load: the real router over a hub on SQLite, Slack pointed at the fake.
struct Service {
    addr: SocketAddr,
    hub: SessionHub,
    store: Store,
    chat: Chat,
    slack: Arc<SlackSurface>,
}

impl Service {
    /// Serves the application on a loopback port until `token`; `first_request` is set when
    /// the first request reaches it.
    async fn start(
        dir: &std::path::Path,
        fake: SocketAddr,
        engine: EngineConfig,
        chat_config: ChatConfig,
        first_request: Arc<OnceLock<Instant>>,
        token: CancellationToken,
    ) -> Result<Self, StartupError> {
        let (hub, store) = hub(dir, engine).await?;
        let slack_config = SlackConfig::http(
            SECRET.to_owned().into(),
            "xoxb-bench".to_owned().into(),
            &format!("http://{fake}"),
        );
        let chat = Chat::new(hub.clone(), store.clone(), chat_config);
        let slack = SlackSurface::new(&slack_config, &chat)
            .map_err(|e| StartupError::Bench(format!("cannot set up Slack: {e}")))?;
        chat.start();
        let state = AppState {
            store: store.clone(),
            metrics: Arc::new(Metrics::new()),
            hub: hub.clone(),
            auth: Arc::new(Auth::admin(uuid::Uuid::new_v4().to_string().into())),
            scheduler: workmate_engine::Scheduler::new(
                hub.clone(),
                Arc::new(workmate_engine::NoObserver),
                workmate_engine::SchedulerConfig::default(),
            ),
            chat: chat.clone(),
            platforms: Platforms::of([Arc::clone(&slack) as Arc<dyn Mounted>]),
            shutdown: token.clone(),
            personas: Arc::default(),
            streams: Arc::default(),
        };
        let router =
            router(state).layer(middleware::from_fn(move |request: Request, next: Next| {
                first_request.get_or_init(Instant::now);
                next.run(request)
            }));
        let addr = serve(router, token).await?;
        Ok(Self {
            addr,
            hub,
            store,
            chat,
            slack,
        })
    }

    /// Stops the platform, the chat layer and the hub, and closes the store.
    async fn stop(self) {
        self.slack.shutdown().await;
        self.chat.shutdown(Duration::from_secs(1)).await;
        self.hub.shutdown().await;
        self.store.close().await;
    }
}

/// What happened after the client ended, until every turn card was posted or the wait ran out.
#[derive(Debug)]
struct After {
    /// What the fake Slack saw by then.
    seen: fake_slack::Seen,
    /// From the first request reaching the service to the last turn card posted.
    end_to_end: Option<Duration>,
    /// From the client's end to the last turn card posted (zero if it came before).
    last_card_after_client: Option<Duration>,
    /// How long the bench waited after the client.
    waited: Duration,
    /// Server CPU from the client's end until the wait ended.
    cpu: Option<Duration>,
    /// Intake rows still pending or running when the wait ended.
    unfinished: Option<i64>,
}

/// The store, migrated, and a hub whose scripted model answers "Done." at once.
async fn hub(
    dir: &std::path::Path,
    engine: EngineConfig,
) -> Result<(SessionHub, Store), StartupError> {
    let url = format!("sqlite://{}/bench.db", dir.display());
    let failed = |source| StartupError::Database {
        url: url.clone(),
        source,
    };
    let store = Store::connect(&url, ConnectOptions::default())
        .await
        .map_err(failed)?;
    store.migrate().await.map_err(failed)?;
    let scripted =
        ScriptedProvider::from_json(SCRIPT).map_err(|e| StartupError::Script(e.to_string()))?;
    let mut providers = ProviderRouter::new("scripted");
    providers.register("scripted", Arc::new(scripted));
    let hub = SessionHub::new(EngineParts {
        store: store.clone(),
        providers,
        tools: builtin_registry(&BuiltinOptions::default()),
        permissions: PermissionConfig::default(),
        config: EngineConfig {
            workspaces_dir: dir.join("workspaces"),
            ..engine
        },
        clock: Arc::new(SystemClock),
    });
    Ok((hub, store))
}

/// Serves `app` on a fresh loopback port until `token` is cancelled.
async fn serve(app: Router, token: CancellationToken) -> Result<SocketAddr, StartupError> {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(StartupError::Serve)?;
    let addr = listener.local_addr().map_err(StartupError::Serve)?;
    tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(token.cancelled_owned())
            .await;
    });
    Ok(addr)
}

/// Runs the client process against `addr`, reading this process's CPU time around it.
async fn timed_client(addr: SocketAddr, args: &WebhooksArgs) -> Result<Run, StartupError> {
    let exe = std::env::current_exe()
        .map_err(|e| StartupError::Bench(format!("cannot find the workmate binary: {e}")))?;
    let load = Load {
        requests: args.requests,
        concurrency: args.concurrency,
        first: 0,
        rate: 0,
    };
    let before = cpu_time();
    let output = tokio::task::spawn_blocking(move || run_child(exe, addr, load))
        .await
        .map_err(|e| StartupError::Bench(format!("the client runner failed: {e}")))??;
    let after = cpu_time();
    let mut run = parse(&output)?;
    run.cpu = before.zip(after).map(|(b, a)| a.saturating_sub(b));
    Ok(run)
}

/// What one run of the client posts.
#[derive(Clone, Copy, Debug)]
struct Load {
    /// Events posted.
    requests: usize,
    /// Connections posting at once.
    concurrency: usize,
    /// The number of the first event.
    first: usize,
    /// Events per second in all; 0 posts as fast as the connections go.
    rate: u32,
}

fn run_child(exe: PathBuf, addr: SocketAddr, load: Load) -> Result<String, StartupError> {
    let failed = |e: std::io::Error| StartupError::Bench(format!("the bench client failed: {e}"));
    let mut child = Command::new(exe)
        .args([
            "bench-client",
            "--addr",
            &addr.to_string(),
            "--secret",
            SECRET,
        ])
        .args(["--requests", &load.requests.to_string()])
        .args(["--concurrency", &load.concurrency.to_string()])
        .args(["--first", &load.first.to_string()])
        .args(["--rate", &load.rate.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(failed)?;
    let deadline = Instant::now() + CLIENT_TIMEOUT;
    loop {
        if child.try_wait().map_err(failed)?.is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(StartupError::Bench(format!(
                "the bench client took longer than {} s",
                CLIENT_TIMEOUT.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = child.wait_with_output().map_err(failed)?;
    if !output.status.success() {
        return Err(StartupError::Bench(format!(
            "the bench client exited with {}",
            output.status
        )));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

fn parse(line: &str) -> Result<Run, StartupError> {
    let figures = line.lines().next().unwrap_or_default();
    let value = |key: &str| -> Result<u64, StartupError> {
        figures
            .split_whitespace()
            .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| StartupError::Bench(format!("the bench client printed {line:?}")))
    };
    let count = |key: &str| value(key).map(|v| usize::try_from(v).unwrap_or(usize::MAX));
    Ok(Run {
        acked: count("acked")?,
        rejected: count("rejected")?,
        io_errors: count("io_errors")?,
        elapsed: Duration::from_nanos(value("elapsed_ns")?),
        p50: Duration::from_nanos(value("p50_ns")?),
        p99: Duration::from_nanos(value("p99_ns")?),
        cpu: None,
        first_rejection: line
            .lines()
            .find_map(|l| l.strip_prefix("first_rejection: "))
            .map(str::to_owned),
    })
}

/// Waits until every acknowledged event's thread has its turn card, or [`CARD_TIMEOUT`] passes.
/// No stall cut-off: a delivery that failed is retried from the intake table after a backoff.
async fn wait_for_cards(cards: &fake_slack::Cards, acked: usize) -> fake_slack::Seen {
    let started = Instant::now();
    loop {
        let seen = cards.seen();
        if seen.threads >= acked || started.elapsed() >= CARD_TIMEOUT {
            return seen;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// This process's user plus system CPU time, from `/proc/self/stat` (10 ms resolution).
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may contain spaces) start at field 3 (state);
    // utime and stime are fields 14 and 15.
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(Duration::from_millis(
        (utime + stime) * 1000 / TICKS_PER_SECOND,
    ))
}

/// A directory removed when dropped (the bench's SQLite file lives there).
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<Self, StartupError> {
        let path = std::env::temp_dir().join(format!("workmate-bench-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&path).map_err(|e| StartupError::DataDir {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        Ok(Self(path))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
